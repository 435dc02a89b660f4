#!/usr/bin/python3
"""Prediction accuracy: the step time the service predicts on a calibrated host against the step time PyTorch
measures on it, per architecture, batch, thread count, for inference and for a training step with Adam.

    /usr/bin/python3 bench/fidelity/fidelity.py --placectl build/client/placectl [--models resnet50,...]
        [--fit_models resnet18,...] [--batches 1,8] [--threads 1,2] [--modes inference,training] [--out DIR]

For each thread count, in one run, so that all of it is measured in the same conditions:
1. in --repeats rounds, each round times placectl calibrate's LibTorch benchmarks (measured_Nt_rK.json),
   profiles the --fit_models with scripts/profile_model.py (batch 1 and 8, inference and a training step) and
   then times each of the --models (none of them fitted) in torch on that many threads: the median of repeated
   steps after warm-up, in a process of its own (with glibc's malloc keeping freed memory, as
   placement_client.torch runs stages and scripts/profile_model.py profiles). A shared host's speed moves by
   15-30% over minutes; timing, profiling and measuring in the same rounds lets the calibration and the
   measurements see the same spells, where calibrating first fitted one spell and measured another;
2. runs `placectl calibrate --measurements (each round's) --profiles (all rounds')`: each benchmark figure the
   median of the rounds', refit on the profiles (the medians are kept as measured_Nt.json, to refit later with
   `--measurements`);
3. exports the graph PyTorch runs for each of the --models (BatchNorm as its own operator) and asks `placectl
   place --algorithm single_device` for the predicted step time on the calibrated device; a case's measured time
   is the median over the rounds.
Prints one row per case, the median and worst relative error per mode, and the host's speed by round (the fitted
models' unprofiled steps against the first round's); writes results.tsv.

With --measured FILE (a results.tsv of step times measured elsewhere, e.g. by bench/fidelity/gpu_steps.py on a
GPU) and --topology FILE (that device calibrated: placectl calibrate --measurements), it measures nothing and
compares the predictions on that topology with the file's times; `--topology DIR/refit_{t}t.json` takes each
case's thread count, e.g. to compare a run's own measurements with its calibration refit (`placectl calibrate
--measurements DIR/measured_{t}t.json --profiles ...`).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import torch
import torchvision

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import profile_model  # noqa: E402  (one export for profiles and for the benchmark)

DEFAULT_MODELS = ("resnet50,efficientnet_b0,convnext_tiny,regnet_y_400mf,shufflenet_v2_x1_0,mobilenet_v3_large,"
                  "squeezenet1_1,googlenet,mnasnet1_0,resnext50_32x4d,alexnet,vit_b_16")
# One of each kind of block the measured models are built of: plain 3x3 convolutions (vgg11_bn), basic and bottleneck
# residual blocks (resnet18, resnet101), dense blocks (densenet121), inverted residuals (mobilenet_v2). Fitted on the
# first four alone, resnet50's convolutions came out 1.23x slow on two threads (docs/BENCHMARKS.md, fifth run).
DEFAULT_FIT_MODELS = "resnet18,mobilenet_v2,vgg11_bn,densenet121,resnet101"

# The profiles recorded of each fitted model: (batch, training, warm-up steps, profiled steps).
FIT_PROFILES = ((8, False, 1, 2), (1, False, 2, 3), (1, True, 1, 2), (8, True, 1, 2))


def build(name, batch):
    model = torchvision.models.get_model(name, weights=None, **({"aux_logits": False, "init_weights": True}
                                                                   if name in ("googlenet", "inception_v3") else {}))
    size = 299 if name == "inception_v3" else 224
    return model, torch.randn(batch, 3, size, size)


def export(model, x, path):
    """The graph eager PyTorch runs, exported as scripts/profile_model.py exports it: BatchNorm kept as an operator
    (PRESERVE), not folded into the convolution. Exported in eval mode for training too (a training export refuses
    stochastic depth's Bernoulli); the service's --training builds the backward and the optimizer from it."""
    profile_model.export(model.eval(), (x,), path, 17)


def measure(model, x, training, budget, sync=lambda: None):
    """Median seconds per step after two warm-up steps, repeated for at least `budget` seconds (3 steps); `sync`
    (torch.cuda.synchronize on a GPU) ends every step, so that a step's time is the device's work."""
    model.train(training)
    optimizer = torch.optim.Adam(model.parameters()) if training else None

    def step():
        if not training:
            with torch.no_grad():
                model(x)
        else:
            optimizer.zero_grad()
            out = model(x)
            out = out.logits if hasattr(out, "logits") else out
            out.sum().backward()
            optimizer.step()
        sync()

    return profile_model.median_step_seconds(step, warmup=2, min_steps=3, budget=budget)


def measure_in_fresh_process(name, batch, training, threads, budget):
    """measure() in a process of its own, as profiles are recorded and a training job runs: what earlier cases
    left in the allocator (freed pages kept, or returned to the kernel and faulted in again) does not carry over."""
    command = [sys.executable, os.path.abspath(__file__), "--measure_one",
               f"{name},{batch},{int(training)},{threads},{budget}"]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return float(out.split()[-1])


def measure_in_rounds(cases, threads, budget, repeats, before_round=lambda r: None):
    """Each case's step time in `repeats` processes of its own, measured in rounds over all the cases rather than
    back to back: a spell of a slower host (another tenant, memory being reclaimed) then costs one of a case's
    measurements rather than all of them. `before_round(r)` runs at the start of round r. Returns each case's
    times in round order."""
    times = [[] for _ in cases]
    for r in range(repeats):
        before_round(r)
        for i, (name, batch, training) in enumerate(cases):
            times[i].append(measure_in_fresh_process(name, batch, training, threads, budget))
    return times


def record_profiles(models, threads, out, round_index):
    """scripts/profile_model.py's folders for each fitted model, recorded now on `threads` threads."""
    folders = []
    for name in models:
        for batch, training, warmup, steps in FIT_PROFILES:
            folder = os.path.join(out, "profiles", f"{name}_{'train' if training else 'infer'}_b{batch}_t{threads}"
                                                   f"_r{round_index}")
            command = [sys.executable, os.path.join(ROOT, "scripts", "profile_model.py"), name, "--batch",
                       str(batch), "--threads", str(threads), "--warmup", str(warmup), "--steps", str(steps),
                       "--out", folder] + (["--training"] if training else [])
            subprocess.run(command, check=True, capture_output=True, text=True)
            folders.append(folder)
    return folders


def print_host_speed(folders, threads):
    """The fitted models' unprofiled steps, as their profiles recorded them, in each round against the first."""
    by_round = {}
    for folder in folders:
        name, round_index = os.path.basename(folder).rsplit("_r", 1)
        with open(os.path.join(folder, "meta.json")) as f:
            by_round.setdefault(int(round_index), {})[name] = json.load(f)["unprofiled_step_seconds"]
    first = by_round[0]
    speeds = [statistics.median(t / first[name] for name, t in steps.items()) for _, steps in sorted(by_round.items())]
    print(f"host speed, {threads} thread(s): the fitted models' unprofiled steps by round took "
          f"{', '.join(f'{s:.2f}' for s in speeds)} of the first round's time", flush=True)


def time_benchmarks(args, threads, out, round_index):
    """placectl calibrate's LibTorch benchmarks timed now on `threads` threads: the measurements file's path."""
    path = os.path.join(out, f"measured_{threads}t_r{round_index}.json")
    subprocess.run([args.placectl, "calibrate", "--threads", str(threads), "--output", os.devnull,
                    "--save_measurements", path], check=True, capture_output=True, text=True)
    return path


def calibrate(args, threads, out, profiles, measurements):
    """The host calibrated on `threads` threads from `measurements` (files, comma-separated: each figure the median
    of theirs), refit on `profiles` (folders, comma-separated): the topology's path."""
    topology = os.path.join(out, f"calibrated_{threads}t.json")
    command = [args.placectl, "calibrate", "--measurements", measurements, "--output", topology,
               "--save_measurements", os.path.join(out, f"measured_{threads}t.json")]
    if profiles:
        command += ["--profiles", profiles]
    report = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    kept = ("this host", "efficiency", "fitted", "training")
    print("".join(line + "\n" for line in report.splitlines() if line.startswith(kept)), end="", flush=True)
    return topology


def measure_one(spec):
    name, batch, training, threads, budget = spec.split(",")
    torch.set_num_threads(int(threads))
    torch.manual_seed(0)
    model, x = build(name, int(batch))
    print(measure(model, x, training == "1", float(budget)))


def predict(placectl, onnx_path, topology, training):
    args = [placectl, "place", onnx_path, "--topology", topology, "--algorithm", "single_device",
            "--output", "json", "--policy_device=none"]
    if training:
        args += ["--training", "--optimizer", "adam"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["value"]


def exported(name, batch, out):
    """The model's ONNX file in `out`, exported once."""
    path = os.path.join(out, f"{name}_b{batch}.onnx")
    if not os.path.exists(path):
        torch.manual_seed(0)
        model, x = build(name, batch)
        export(model, x, path)
    return path


def print_row(row):
    name, batch, threads, mode, measured, predicted = row[:6]
    print(f"{name:22s} {batch:5d} {threads!s:>3s} {mode:9s} {measured * 1e3:9.2f}ms {predicted * 1e3:9.2f}ms "
          f"{predicted / measured:6.2f}", flush=True)


def write_rows(rows, path):
    """results.tsv: one case a line; measured_s is the median of the times measured_runs_s lists, where given."""
    with open(path, "w") as f:
        f.write("model\tbatch\tthreads\tmode\tmeasured_s\tpredicted_s\tmeasured_runs_s\n")
        for r in rows:
            f.write("\t".join(str(v) for v in r) + ("\t\n" if len(r) == 6 else "\n"))


def mode_name(training):
    return "training" if training else "inference"


def runs_text(times):
    """A case's times by round, as results.tsv and steps_Nt.tsv write them (measured_runs_s)."""
    return ",".join(f"{t:.6g}" for t in times)


def write_steps(cases, times, path):
    """The step times measured for one thread count, before the calibration and the predictions that follow."""
    with open(path, "w") as f:
        f.write("model\tbatch\tmode\tmeasured_runs_s\n")
        for (name, batch, training), t_s in zip(cases, times):
            f.write(f"{name}\t{batch}\t{mode_name(training)}\t{runs_text(t_s)}\n")


def summarize(rows, modes):
    for mode in modes:
        errors = [abs(r[5] / r[4] - 1) for r in rows if r[3] == mode]
        if errors:
            print(f"{mode}: {len(errors)} cases, median error {statistics.median(errors) * 100:.1f}%, "
                  f"worst {max(errors) * 100:.1f}%")


def compare_measured(args, out):
    """Predictions on --topology against the step times of --measured, case by case."""
    rows = []
    with open(args.measured) as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            case = dict(zip(header, line.rstrip("\n").split("\t")))
            name, batch, mode = case["model"], int(case["batch"]), case["mode"]
            topology = args.topology.replace("{t}", case["threads"])
            try:
                predicted = predict(args.placectl, exported(name, batch, out), topology, mode == "training")
            except subprocess.CalledProcessError as e:  # e.g. the step does not fit the device: the others go on
                print(f"{name} batch {batch} {mode}: not predicted: {e.stderr.strip()}", file=sys.stderr, flush=True)
                continue
            rows.append((name, batch, case["threads"], mode, float(case["measured_s"]), predicted))
            print_row(rows[-1])
    write_rows(rows, os.path.join(out, "compared.tsv"))
    summarize(rows, ("inference", "training"))
    print(f"results in {out}")


def main():
    from placement_client.torch._pipeline import rerun_with_allocator_environment
    rerun_with_allocator_environment()  # timed as profiles are recorded and pipeline() runs stages
    if len(sys.argv) == 3 and sys.argv[1] == "--measure_one":
        return measure_one(sys.argv[2])
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--placectl", required=True)
    p.add_argument("--models", default=DEFAULT_MODELS)
    p.add_argument("--batches", default="1,8")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--modes", default="inference,training")
    p.add_argument("--budget", type=float, default=2.0, help="seconds of measured steps per case")
    p.add_argument("--out", default=None, help="folder for results.tsv and the calibrated topologies")
    p.add_argument("--fit_models", default=DEFAULT_FIT_MODELS,
                   help="models profiled in the run, whose profiles refit the calibration (empty: none)")
    p.add_argument("--profiles", default="",
                   help="instead of --fit_models: profile folders recorded before, per thread count, {t} for it "
                        "(e.g. /tmp/prof/resnet18_t{t},...), passed to placectl calibrate --profiles")
    p.add_argument("--repeats", type=int, default=5,
                   help="rounds: each times the host's benchmarks, profiles the fitted models, then times each case "
                        "in a process of its own; each figure and each case's time is the median of its rounds'")
    p.add_argument("--measured", default="", help="a results.tsv measured elsewhere: compare with it, measure nothing")
    p.add_argument("--topology", default="",
                   help="with --measured: the calibrated topology of that device, {t} for each case's threads "
                        "(e.g. DIR/calibrated_{t}t.json)")
    args = p.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="fidelity_")
    os.makedirs(out, exist_ok=True)
    fitted = set(args.fit_models.split(",")) & set(args.models.split(",")) if not args.profiles else set()
    if fitted:
        p.error(f"{','.join(sorted(fitted))}: fitted and measured; a model is either (see --fit_models)")
    if args.measured:
        if not args.topology:
            p.error("--measured needs --topology")
        return compare_measured(args, out)
    rows = []
    print(f"{'model':22s} {'batch':>5s} {'thr':>3s} {'mode':9s} {'measured':>10s} {'predicted':>10s} {'ratio':>6s}",
          flush=True)
    fit_models = [m for m in args.fit_models.split(",") if m and not args.profiles]
    for threads in [int(t) for t in args.threads.split(",")]:
        cases = [(name, int(batch), mode == "training") for name in args.models.split(",")
                 for batch in args.batches.split(",") for mode in args.modes.split(",")]
        folders, benchmarks = [], []

        def before_round(r):
            benchmarks.append(time_benchmarks(args, threads, out, r))
            folders.extend(record_profiles(fit_models, threads, out, r))

        times = measure_in_rounds(cases, threads, args.budget, args.repeats, before_round)
        write_steps(cases, times, os.path.join(out, f"steps_{threads}t.tsv"))  # kept should what follows fail
        if folders:
            print_host_speed(folders, threads)
        topology = calibrate(args, threads, out, ",".join(folders) or args.profiles.replace("{t}", str(threads)),
                             ",".join(benchmarks))
        predicted = [predict(args.placectl, exported(name, batch, out), topology, training)
                     for name, batch, training in cases]
        for (name, batch, training), p_s, t_s in zip(cases, predicted, times):
            rows.append((name, batch, threads, mode_name(training), statistics.median(t_s), p_s, runs_text(t_s)))
            print_row(rows[-1])
        write_rows(rows, os.path.join(out, "results.tsv"))  # each thread count's, as soon as it is done
    summarize(rows, args.modes.split(","))
    print(f"results in {out}")


if __name__ == "__main__":
    sys.exit(main())
