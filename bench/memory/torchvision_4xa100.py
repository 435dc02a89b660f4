#!/usr/bin/python3
"""Every torchvision classification model on 4xA100 at batch 8: placed, fits, one placement agrees in every view.

The promise checked: each classification architecture of torchvision.models.list_models(module=torchvision.models)
(the video, detection, segmentation, optical-flow and quantized namespaces are left out) that exports to ONNX
trains at batch 8 on 4xA100 (PyTorch fits every one of them on a single 80 GB A100 at batch 8 and 224x224), and one
placement shows the same per-device memory and the same verdict (fits or not) under every objective and in every
view (JSON and table).

Each model is exported with weights=None in eval mode, a batch-8 224x224 example and a dynamic batch axis (so
--batch 8 binds it), opset 17; models over 2 GB get external data (torch writes it beside the model). Exports
are cached under --cache (one folder a model, with export.json); failures are cached too, with their reason.
For each exported model:

  1. place MODEL --training --batch 8 --devices 4xA100 --deadline 20s --output json     (the default plan)
  2. the same with --objective throughput, with --objective step_time --parallelism operator, and with the table
     output; then the answer of 1 (a placement file) is scored by
     simulate MODEL --training --batch 8 --devices 4xA100 --placement answer.json --objective O --output V
     for O in step_time, throughput, latency and V in json, table: the per-device peak memory and the verdict must
     be those of the answer of 1 in all of them (table figures to their three printed digits)
  3. memory MODEL --training --batch 8 --devices 1xA100 --output json (one device's step, for reference)

    /usr/bin/python3 bench/memory/torchvision_4xa100.py --placectl /tmp/sweep_bin/placectl \
        [--cache /tmp/tv_onnx] [--out bench/memory/torchvision_4xa100.tsv] [--models resnet18,vit_h_14]

--placectl should be a copy (with placectl-torch beside it) when the build tree may be rebuilt during the run.
"""

import argparse
import inspect
import json
import os
import re
import subprocess
import sys
import time

BATCH = 8
IMAGE = 224
DEVICES = "4xA100"
GIB = 2**30
SKIPPED_NAMESPACES = ("video", "detection", "segmentation", "optical_flow", "quantization")
BYTE_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "PiB": 2**50}


# ----------------------------------------------------------------------------------------------------- export

def export_one(name, folder):
    """Runs in a child process: exports `name` into `folder` and writes folder/export.json."""
    import warnings

    import torch
    import torchvision

    warnings.filterwarnings("ignore")
    torch.set_num_threads(2)
    started = time.time()
    record = {"model": name, "input": f"{BATCH}x3x{IMAGE}x{IMAGE}"}
    try:
        model = torchvision.models.get_model(name, weights=None).eval()
        record["params"] = sum(p.numel() for p in model.parameters())
        kwargs = dict(opset_version=17, input_names=["input"], output_names=["output"],
                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}})
        if "dynamo" in inspect.signature(torch.onnx.export).parameters:
            kwargs["dynamo"] = False
        path = os.path.join(folder, f"{name}.onnx")
        # Not under torch.no_grad(): without autograd, eval-mode attention takes PyTorch's fused inference path
        # (aten::_native_multi_head_attention), which has no ONNX export. Over 2 GB of parameters the exporter
        # writes each one as external data beside the model file.
        torch.onnx.export(model, torch.randn(BATCH, 3, IMAGE, IMAGE), path, **kwargs)
        record["status"] = "ok"
        record["onnx_bytes"] = os.path.getsize(path)
        record["folder_bytes"] = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
    except Exception as e:  # noqa: BLE001 - every failure is a recorded reason
        record["status"] = "failed"
        record["reason"] = f"{type(e).__name__}: {e}".splitlines()[0][:300]
    record["seconds"] = round(time.time() - started, 1)
    with open(os.path.join(folder, "export.json"), "w") as f:
        json.dump(record, f)


def export(name, cache, timeout):
    folder = os.path.join(cache, name)
    record_file = os.path.join(folder, "export.json")
    if os.path.exists(record_file):
        with open(record_file) as f:
            record = json.load(f)
        if record["status"] != "ok" or os.path.exists(os.path.join(folder, f"{name}.onnx")):
            record["cached"] = True
            return record
    os.makedirs(folder, exist_ok=True)
    for leftover in os.listdir(folder):
        os.remove(os.path.join(folder, leftover))
    try:
        result = subprocess.run([sys.executable, os.path.abspath(__file__), "--export_one", name, "--cache", cache],
                                capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        record = {"model": name, "status": "failed", "reason": f"export ran past {timeout} s", "seconds": timeout}
        with open(record_file, "w") as f:
            json.dump(record, f)
        return record
    if not os.path.exists(record_file):
        tail = (result.stderr.strip().splitlines() or ["no output"])[-1]
        record = {"model": name, "status": "failed", "reason": f"exporter exit {result.returncode}: {tail[:300]}",
                  "seconds": 0}
        with open(record_file, "w") as f:
            json.dump(record, f)
        return record
    with open(record_file) as f:
        return json.load(f)


# ----------------------------------------------------------------------------------------------------- placectl

class Run:
    def __init__(self, command, timeout):
        self.command = command
        started = time.time()
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
            self.rc, self.stdout, self.stderr = result.returncode, result.stdout, result.stderr
        except subprocess.TimeoutExpired as e:
            self.rc, self.stdout = "timeout", ""
            self.stderr = f"ran past {timeout} s " + (e.stderr.decode() if isinstance(e.stderr, bytes) else "")
        self.seconds = time.time() - started
        self.json = None
        if self.rc == 0 and self.stdout.lstrip().startswith("{"):
            try:
                self.json = json.loads(self.stdout)
            except json.JSONDecodeError:
                pass

    def text(self):
        return " ".join(self.command)

    def message(self):
        lines = [l for l in self.stderr.strip().splitlines() if l.strip()]
        return (lines[-1] if lines else f"exit {self.rc}, no message")[:500]


def json_view(answer):
    """(peak bytes by device, capacity by device, oom by device, fits) from a place or simulate JSON answer."""
    devices = answer.get("devices", [])
    return ({d["name"]: d["peak_memory"] for d in devices}, {d["name"]: d["capacity"] for d in devices},
            {d["name"]: bool(d.get("oom")) for d in devices}, bool(answer.get("fits_memory")))


def table_view(text):
    """The same from a table: the "memory" line and the rows under the "device" header."""
    fits = None
    peaks, capacities, ooms = {}, {}, {}
    lines = text.splitlines()
    for line in lines:
        if line.startswith("memory ") and fits is None:
            rest = line[len("memory"):].strip()
            fits = True if rest == "fits" else False if rest.startswith("OUT OF MEMORY") else None
    for i, line in enumerate(lines):
        if re.match(r"^device\s+kind\s", line) or re.match(r"^device\s+ops\s", line):
            for row in lines[i + 1:]:
                if not row.strip():
                    break
                sizes = re.findall(r"(\d+(?:\.\d+)?) (B|KiB|MiB|GiB|TiB|PiB)\b", row)
                name = row.split()[0]
                if sizes:
                    peaks[name] = float(sizes[0][0]) * BYTE_UNITS[sizes[0][1]]
                    capacities[name] = float(sizes[1][0]) * BYTE_UNITS[sizes[1][1]] if len(sizes) > 1 else None
                ooms[name] = row.rstrip().endswith("OOM")
            break
    return peaks, capacities, ooms, fits


def printed_match(printed, exact):
    """Whether a figure printed to three significant digits is `exact` bytes."""
    if exact == 0:
        return printed == 0
    scale = 1
    while exact / scale >= 1023.5 and scale < 2**50:
        scale *= 1024
    value = exact / scale
    digits = 2 if value < 10 else 1 if value < 100 else 0
    return abs(printed / scale - value) <= 0.5 * 10**-digits + 1e-9


def plan_kind(answer):
    kind = answer.get("algorithm", "?")
    stages = answer.get("stages") or []
    if stages:
        replicas = sorted({s.get("replicas", len(s.get("devices", []))) for s in stages})
        kind += f" [{len(stages)} stage{'s' if len(stages) > 1 else ''} x{'/'.join(map(str, replicas))}"
        if answer.get("sharding") not in (None, "none"):
            kind += f" {answer['sharding']}"
        if answer.get("recompute") not in (None, "none"):
            kind += f" recompute={answer['recompute']}"
        kind += f" mb={answer.get('micro_batch_size', '?')}]"
    else:
        used = {d for d in (answer.get("assignment") or {}).values()}
        kind += f" [operators on {len(used)} devices]"
    return kind


def step_seconds(answer):
    return answer["step_time"] if "step_time" in answer else answer.get("value")


def summarize_answer(run):
    a = run.json
    peaks, capacities, ooms, fits = json_view(a)
    return {"kind": plan_kind(a), "fits": fits, "peak": max(peaks.values()) if peaks else None,
            "capacity": min(capacities.values()) if capacities else None, "step": step_seconds(a),
            "oom_devices": sorted(d for d, o in ooms.items() if o), "seconds": run.seconds}


def check_model(placectl, path, work, timeout, deadline):
    """Runs every placectl command for one model; returns the row's figures and its problems."""
    base = [placectl]
    common = [path, "--training", "--batch", str(BATCH), "--devices", DEVICES]
    out, problems = {}, []

    def refused(label, run):
        problems.append(f"{label} refused (exit {run.rc}): {run.text()}\n      {run.message()}")

    answers = {}
    for label, extra in (("default", []), ("throughput", ["--objective", "throughput"]),
                         ("operator", ["--objective", "step_time", "--parallelism", "operator"])):
        run = Run(base + ["place"] + common + ["--deadline", deadline, "--output", "json"] + extra, timeout)
        if run.json is None:
            refused(f"place {label}", run)
            out[label] = None
            continue
        answers[label] = run
        with open(os.path.join(work, f"place_{label}.json"), "w") as f:
            f.write(run.stdout)
        out[label] = summarize_answer(run)
        if not out[label]["fits"]:
            problems.append(f"place {label} does not fit: peak {out[label]['peak'] / GIB:.2f} GiB on "
                            f"{', '.join(out[label]['oom_devices']) or '?'}: {run.text()}")
        if label == "default":
            with open(os.path.join(work, "answer.json"), "w") as f:
                f.write(run.stdout)

    table = Run(base + ["place"] + common + ["--deadline", deadline], timeout)
    out["table_place"] = None
    with open(os.path.join(work, "place_default.table"), "w") as f:
        f.write(table.stdout + table.stderr)
    if table.rc != 0:
        refused("place (table)", table)
    else:
        peaks, _, _, fits = table_view(table.stdout)
        out["table_place"] = fits
        if "default" in answers and fits != out["default"]["fits"]:
            problems.append(f"place table verdict {fits} but place json {out['default']['fits']}: {table.text()}")

    # One placement, every objective and view.
    agreement, notes = [], []
    if "default" in answers:
        ref_peaks, ref_caps, ref_ooms, ref_fits = json_view(answers["default"].json)
        views = {"place json": (ref_peaks, ref_caps, ref_ooms, ref_fits)}
        for objective in ("step_time", "throughput", "latency"):
            for view in ("json", "table"):
                run = Run(base + ["simulate"] + common + ["--placement", os.path.join(work, "answer.json"),
                                                          "--objective", objective, "--output", view], timeout)
                label = f"simulate {objective} {view}"
                with open(os.path.join(work, f"simulate_{objective}.{view}"), "w") as f:
                    f.write(run.stdout + run.stderr)
                if run.rc != 0 or (view == "json" and run.json is None):
                    refused(label, run)
                    agreement.append(f"{label}: refused")
                    continue
                views[label] = json_view(run.json) if view == "json" else table_view(run.stdout)
                if view == "json" and run.json.get("objective") != objective:
                    notes.append(f"{label}: answers objective '{run.json.get('objective')}'")
        for label, (peaks, caps, ooms, fits) in views.items():
            exact = "table" not in label
            issues = []
            if set(peaks) != set(ref_peaks):
                issues.append(f"devices {sorted(peaks)} vs {sorted(ref_peaks)}")
            for d in sorted(set(peaks) & set(ref_peaks)):
                same = peaks[d] == ref_peaks[d] if exact else printed_match(peaks[d], ref_peaks[d])
                if not same:
                    issues.append(f"{d} peak {peaks[d]:.0f} B vs {ref_peaks[d]} B")
                if caps.get(d) is not None and not (caps[d] == ref_caps[d] if exact
                                                    else printed_match(caps[d], ref_caps[d])):
                    issues.append(f"{d} capacity {caps[d]:.0f} B vs {ref_caps[d]} B")
                if ooms.get(d) != ref_ooms[d]:
                    issues.append(f"{d} oom {ooms.get(d)} vs {ref_ooms[d]}")
                if exact and ooms.get(d) != (peaks[d] > caps[d] > 0):
                    issues.append(f"{d} oom {ooms.get(d)} but peak {peaks[d]} B, capacity {caps[d]} B")
            if fits != ref_fits:
                issues.append(f"verdict {'fits' if fits else 'does not fit' if fits is not None else 'missing'}"
                              f" vs {'fits' if ref_fits else 'does not fit'}")
            if fits is not None and fits != (not any(ooms.values())):
                issues.append(f"verdict {fits} but oom on {sorted(d for d, o in ooms.items() if o)}")
            if issues:
                agreement.append(f"{label}: " + "; ".join(issues))
    out["agreement"] = "ok" if "default" in answers and not agreement else (
        "; ".join(agreement) if agreement else "no placement")
    out["notes"] = notes
    if agreement:
        problems.append(f"disagreement for one placement ({path}, answer of place default):\n      "
                        + "\n      ".join(agreement))

    memory = Run(base + ["memory", path, "--training", "--batch", str(BATCH), "--devices", "1xA100",
                         "--output", "json"], timeout)
    out["memory"] = None
    if memory.json is None:
        refused("memory", memory)
    else:
        out["memory"] = memory.json
    if "default" in answers:
        out["warnings"] = answers["default"].json.get("warnings", [])
    return out, problems


# ----------------------------------------------------------------------------------------------------- report

def cell(x, fmt="{}"):
    return "-" if x is None else fmt.format(x)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--placectl", default=os.path.join(os.path.dirname(__file__), "..", "..", "build", "client",
                                                           "placectl"))
    parser.add_argument("--cache", default="/tmp/tv_onnx")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "torchvision_4xa100.tsv"))
    parser.add_argument("--models", default="", help="comma-separated names (default: every classification model)")
    parser.add_argument("--timeout", type=int, default=120, help="seconds for each placectl command")
    parser.add_argument("--export_timeout", type=int, default=1800)
    parser.add_argument("--deadline", default="20s")
    parser.add_argument("--export_one", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.export_one:
        export_one(args.export_one, os.path.join(args.cache, args.export_one))
        return 0

    import torchvision  # only the list; models are built in the exporting child

    names = torchvision.models.list_models(module=torchvision.models)
    names = [n for n in names if not any(n.startswith(ns) for ns in SKIPPED_NAMESPACES)]
    if args.models:
        names = [n for n in args.models.split(",") if n]
    os.makedirs(args.cache, exist_ok=True)
    placectl = os.path.abspath(args.placectl)
    rows, all_problems, warnings_seen, notes_seen = [], [], {}, {}
    started = time.time()
    header = ["model", "params", "export", "default_kind", "fits", "peak_gib_max", "capacity_gib", "step_ms",
              "throughput_kind", "throughput_fits", "throughput_step_ms", "operator_kind", "operator_fits",
              "operator_step_ms", "table_fits", "one_gpu_peak_gib", "one_gpu_fits", "agreement", "notes", "seconds"]
    for name in names:
        t0 = time.time()
        record = export(name, args.cache, args.export_timeout)
        row = {"model": name, "params": record.get("params")}
        if record["status"] != "ok":
            row["export"] = f"skipped: {record.get('reason', '?')}"
            all_problems.append((name, [f"export failed: {record.get('reason')}"]))
            row["seconds"] = round(time.time() - t0, 1)
            rows.append(row)
            print(f"{name:20s} export failed: {record.get('reason')}", flush=True)
            continue
        row["export"] = "ok (external data)" if record.get("folder_bytes", 0) > record.get("onnx_bytes", 0) else "ok"
        work = os.path.join(args.cache, name, "answers")
        os.makedirs(work, exist_ok=True)
        out, problems = check_model(placectl, os.path.join(args.cache, name, f"{name}.onnx"), work, args.timeout,
                                    args.deadline)
        for w in out.get("warnings", []):
            warnings_seen.setdefault(re.sub(r"\d+", "N", w)[:160], []).append(name)
        d = out.get("default")
        if d:
            row.update(default_kind=d["kind"], fits=d["fits"], peak_gib_max=f"{d['peak'] / GIB:.3f}",
                       capacity_gib=f"{d['capacity'] / GIB:.2f}",
                       step_ms="-" if d["step"] is None else f"{d['step'] * 1e3:.3f}")
        for label in ("throughput", "operator"):
            x = out.get(label)
            if x:
                row[f"{label}_kind"] = x["kind"]
                row[f"{label}_fits"] = x["fits"]
                row[f"{label}_step_ms"] = "-" if x["step"] is None else f"{x['step'] * 1e3:.3f}"
        row["table_fits"] = out.get("table_place")
        if out.get("memory"):
            row["one_gpu_peak_gib"] = f"{out['memory']['peak_memory'] / GIB:.3f}"
            row["one_gpu_fits"] = out["memory"].get("fits")
        row["agreement"] = out["agreement"]
        row["notes"] = "; ".join(out["notes"]) or "-"
        for n in out["notes"]:
            notes_seen.setdefault(n, []).append(name)
        row["seconds"] = round(time.time() - t0, 1)
        rows.append(row)
        if problems:
            all_problems.append((name, problems))
        print(f"{name:20s} {cell(row.get('params'), '{:,}'):>13s}  {row.get('default_kind', 'REFUSED')}  "
              f"fits={row.get('fits')} peak={row.get('peak_gib_max')} GiB step={row.get('step_ms')} ms  "
              f"agreement={'ok' if row['agreement'] == 'ok' else 'NO'}  {row['seconds']} s", flush=True)
        with open(args.out, "w") as f:  # rewritten after each model, so a stopped run keeps what it did
            f.write("\t".join(header) + "\n")
            for r in rows:
                f.write("\t".join(str(r.get(h, "-")).replace("\t", " ").replace("\n", " ") for h in header) + "\n")

    with open(args.out, "w") as f:
        f.write("\t".join(header) + "\n")
        for r in rows:
            f.write("\t".join(str(r.get(h, "-")).replace("\t", " ").replace("\n", " ") for h in header) + "\n")

    exported = [r for r in rows if r["export"].startswith("ok")]
    placed = [r for r in exported if r.get("default_kind")]
    fit = [r for r in placed if r.get("fits") is True]
    all_fit = [r for r in placed if r.get("fits") is True and r.get("throughput_fits") is True
               and r.get("operator_fits") is True]
    agree = [r for r in exported if r.get("agreement") == "ok"]
    print(f"\n{len(rows)} models, {len(exported)} exported ({sum('external' in r['export'] for r in exported)} with "
          f"external data), {len(placed)} placed by default, {len(fit)} fit by default, {len(all_fit)} fit under "
          f"all three placements, {len(agree)} agree in every view; {time.time() - started:.0f} s")
    if warnings_seen:
        print("warnings of the default answers:")
        for w, models in sorted(warnings_seen.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(models)} models: {w}")
    if notes_seen:
        print("notes (not counted as disagreements: the memory and verdict are compared):")
        for n, models in sorted(notes_seen.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(models)} models: {n}")
    for name, problems in all_problems:
        print(f"{name}:")
        for p in problems:
            print(f"  - {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
