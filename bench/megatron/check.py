#!/usr/bin/env python3
"""Published Megatron-LM iteration times against `placectl simulate --plan` (the layer-level plan model).

Each row of runs.tsv is simulated with the run's own plan, its GPT-2 style config.json, its cluster (DGX A100 nodes)
and its global batch; the script prints predicted and published times, their ratio, whether the plan fits 80 GB
and the model's activations next to Korthikanti et al.'s formula. Rows are grouped as the model's one constant was
set: "fitted" (Korthikanti et al. 2022, Table 4/5) and "held out" (everything else).

    /usr/bin/python3 bench/megatron/check.py [--placectl build/client/placectl] [--search]

With --search, each Megatron-LM run's model, cluster and global batch also goes to `placectl place` (the plan
search, flash attention and overlapped reduction held off as in those runs): the plan it finds is compared with the
published plan in the same model, with the command's wall time.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FITTED_SOURCES = {"korthikanti2022_table4", "korthikanti2022_table5"}


def group_of(row):
    """The fitted runs, then the held-out ones by what ran them."""
    if row["source"] in FITTED_SOURCES:
        return "fitted (Megatron-LM)"
    if row["zero"] == "3":
        return "held out (DeepSpeed ZeRO-3)"
    if row["confirmed"] != "yes":
        return "held out (MT-NLG, unconfirmed figures)"
    return "held out (Megatron-LM)"


def rows():
    with open(os.path.join(HERE, "runs.tsv")) as f:
        lines = [line for line in f if not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def simulate(placectl, row):
    config = os.path.join(HERE, "configs", row["model"] + ".json")
    # The published runs predate flash attention and reduced gradients after the backward.
    plan = row["plan"] + ",flash=0,overlap=0"
    cmd = [placectl, "simulate", config, "--devices", f"{row['nodes']}x8xDGXA100", "--seq", row["seq"],
           "--batch", row["global_batch"], "--precision", "amp_bf16", "--plan", plan, "--output", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{row['id']}: placectl exited {out.returncode}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def search(placectl, row):
    """The planner's own choice for the run's model, cluster and global batch (the era's attention held fixed)."""
    config = os.path.join(HERE, "configs", row["model"] + ".json")
    cmd = [placectl, "place", config, "--training", "--devices", f"{row['nodes']}x8xDGXA100", "--seq", row["seq"],
           "--batch", row["global_batch"], "--precision", "amp_bf16", "--plan", "flash=0,overlap=0",
           "--deadline", "10s", "--output", "json"]
    started = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if out.returncode != 0:
        return None, seconds, out.stderr.strip()
    return json.loads(out.stdout), seconds, ""


def compare_searches(placectl, answers):
    print(f"\n{'run':28} {'published plan':>14} {'found':>9} {'ratio':>6} {'fits':>5} {'command':>8}  plan found")
    ratios, worst_seconds = [], 0
    for row, answer in answers:
        if row["zero"] == "3" or row["confirmed"] != "yes":
            continue
        found, seconds, error = search(placectl, row)
        worst_seconds = max(worst_seconds, seconds)
        if found is None:
            print(f"{row['id']:28} {answer['step_time']:14.2f} {'-':>9} {'-':>6} {'-':>5} {seconds:7.2f}s  {error}")
            continue
        ratio = found["step_time"] / answer["step_time"]
        ratios.append(ratio)
        print(f"{row['id']:28} {answer['step_time']:14.2f} {found['step_time']:9.2f} {ratio:6.3f} "
              f"{'yes' if found['memory']['fits'] else 'NO':>5} {seconds:7.2f}s  {found['plan']['text']}")
    print(f"searches: {len(ratios)} runs, found/published worst {max(ratios):.3f}, median {statistics.median(ratios):.3f}, "
          f"slowest command {worst_seconds:.2f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--placectl", default=os.path.join(HERE, "..", "..", "build", "client", "placectl"))
    parser.add_argument("--search", action="store_true",
                        help="also run the planner on each Megatron-LM run and compare with the published plan")
    args = parser.parse_args()
    groups = {}
    answers = []
    print(f"{'run':28} {'group':40} {'published':>10} {'predicted':>10} {'ratio':>6} {'fits':>5} "
          f"{'act GiB':>8} {'formula':>8} {'MFU':>6}")
    for row in rows():
        answer = simulate(args.placectl, row)
        answers.append((row, answer))
        published = float(row["iteration_s"])
        predicted = answer["step_time"]
        group = group_of(row)
        groups.setdefault(group, []).append((row["id"], predicted / published, answer["memory"]["fits"]))
        formula = float(row["act_layers_gib"] or 0) + float(row["act_extra_gib"] or 0)
        activations = answer["memory"]["activations"] / 2**30
        print(f"{row['id']:28} {group:40} {published:10.2f} {predicted:10.2f} {predicted / published:6.3f} "
              f"{'yes' if answer['memory']['fits'] else 'NO':>5} {activations:8.2f} {formula:8.2f} "
              f"{100 * answer['mfu']:5.1f}%")
    for name, results in groups.items():
        errors = [abs(r - 1) for _, r, _ in results]
        worst = max(results, key=lambda x: abs(x[1] - 1))
        fits = sum(1 for *_, f in results if f)
        print(f"{name}: {len(results)} runs, median error {100 * statistics.median(errors):.1f}%, "
              f"worst {100 * abs(worst[1] - 1):.1f}% ({worst[0]}), {fits}/{len(results)} fit 80 GB")
    if args.search:
        compare_searches(args.placectl, answers)


if __name__ == "__main__":
    sys.exit(main())
