"""A PlaceResponse as placement-place prints it: the table `placectl submit` prints (times and memory with units,
a plan's global batch, step time and samples per second, its stages, each device's load and memory), or the
answer as JSON with the proto's field names."""

from __future__ import annotations

import collections
from typing import Dict, List, Sequence

from google.protobuf import json_format

from placement_client.proto import placement_pb2 as pb
from placement_client.transformer_report import transformer_table
from placement_client.units import format_bytes, format_seconds

MAX_MODULE_ROWS = 40  # more are in --output json

_OBJECTIVE_NAMES = {pb.OBJECTIVE_THROUGHPUT: "throughput", pb.OBJECTIVE_LATENCY: "latency"}


def answer_json(answer: pb.PlaceResponse) -> str:
    """The answer as JSON, fields named as in placement.proto (a field at its default value is left out)."""
    return str(json_format.MessageToJson(answer, preserving_proto_field_name=True, indent=2)) + "\n"


def _time(t: float, unit: str) -> str:
    # Times in seconds read best with a unit; times in an input's own unit are printed as plain numbers.
    return format_seconds(t) if unit == "s" else f"{t:.2f}"


def _first_to_last(names: Sequence[str]) -> str:
    """"gpu0 .. gpu5" for a group, or its one device; "conv1 .. layer2.1" for a stage's modules."""
    if not names:
        return ""
    return names[0] if len(names) == 1 else f"{names[0]} .. {names[-1]}"


def _costs_line(c: pb.CostSources) -> str:
    if c.measured_operators == 0:
        return f"all {c.modelled_operators} operators modelled (no measured times)"
    if c.modelled_operators == 0:
        return f"all {c.measured_operators} operators measured"
    return (f"{c.measured_operators} of {c.measured_operators + c.modelled_operators} operators measured "
            f"({100 * c.measured_flops_share:.1f}% of the FLOPs), {c.modelled_operators} modelled")


def _summary(answer: pb.PlaceResponse) -> str:
    s, unit = answer.score, answer.score.time_unit
    lines = [f"algorithm    {answer.algorithm}{' (proven optimal)' if answer.proven_optimal else ''}",
             f"objective    {_OBJECTIVE_NAMES.get(s.objective, 'step_time')}",
             f"value        {_time(s.value, unit)}{'' if unit == 's' else ' (input time units)'}",
             f"lower bound  {_time(s.lower_bound, unit)}  (ratio {s.ratio:.3f})",
             f"memory       {'fits' if s.fits_memory else 'OUT OF MEMORY on at least one device'}"]
    if answer.best_bound > s.lower_bound:
        lines.append(f"best bound   {_time(answer.best_bound, unit)}  (the placer's bound)")
    lines.append(f"operators    {answer.num_operators}, graph {answer.graph_hash[:16]}")
    lines.append(f"costs        {_costs_line(answer.cost_sources)}")
    if answer.precision:
        lines.append(f"precision    {answer.precision}")
    if answer.device_figures:
        lines.append(f"figures      {answer.device_figures}")
    computed = "from the server's cache" if answer.cache_hit else f"computed in {format_seconds(answer.compute_seconds)}"
    lines.append(f"answer       {computed}, request {answer.request_id}")
    return "".join(line + "\n" for line in lines)


def _plan_lines(answer: pb.PlaceResponse) -> str:
    """The plan: its stages, schedule and options, the global batch in samples, the step and samples per second."""
    unit, micro = answer.score.time_unit, max(answer.micro_batch_size, 1)
    sharding, recompute = answer.sharding or "none", answer.recompute or "none"
    batch = ""
    if answer.global_batch > 0:
        batch = (f", global batch {answer.global_batch * micro} samples ({answer.global_batch} micro-batches of "
                 f"{micro})")
    stages = f"{len(answer.stages)} stage{'' if len(answer.stages) == 1 else 's'}"
    out = (f"plan         {stages}, {answer.schedule} schedule{'' if sharding == 'none' else f', {sharding} sharding'}"
           f"{'' if recompute == 'none' else f', {recompute} recompute'}, {answer.cost_model} cost model{batch}\n")
    if answer.step_time > 0:
        per_second = answer.samples_per_second or answer.global_batch * micro / answer.step_time
        out += f"step         {_time(answer.step_time, unit)}"
        out += f" ({per_second:.4g} samples/s)\n" if unit == "s" else "\n"
    if answer.bottleneck:
        out += f"bottleneck   {answer.bottleneck}\n"
    if answer.simulated_value > 0:
        per = f" per micro-batch of {micro} samples" if micro > 1 else " per micro-batch"
        out += f"simulated    {_time(answer.simulated_value, unit)}{per}\n"
    return out + _stage_rows(answer.stages, unit)


def _stage_rows(stages: Sequence[pb.Stage], unit: str) -> str:
    def time(t: float) -> str:
        return format_seconds(t) if unit == "s" else f"{t:.4g}"

    has_modules = any(s.modules for s in stages)
    out = (f"\n{'stage':<6} {'replicas':>8} {'devices':<30} {'ops':>6} {'compute':>11} {'allreduce':>11} "
           f"{'period':>11} {'mem/device':>11} {'in flight':>9}{'  modules' if has_modules else ''}\n")
    for i, s in enumerate(stages, start=1):
        allreduce = time(s.allreduce_seconds) if s.allreduce_seconds > 0 else "-"
        out += (f"{i:<6} {len(s.devices):>8} {_first_to_last(s.devices):<30} {len(s.operators):>6} "
                f"{time(s.compute_seconds):>11} {allreduce:>11} {time(s.period_seconds):>11} "
                f"{format_bytes(s.memory_bytes):>11} {s.in_flight:>9}"
                f"{'  ' + _first_to_last(s.modules) if has_modules else ''}\n")
    return out


def _device_rows(score: pb.Score, ops_on: Dict[str, int]) -> str:
    unit, throughput = score.time_unit, score.objective == pb.OBJECTIVE_THROUGHPUT
    out = (f"{'device':<14} {'ops':>6} {'busy':>12} {'load' if throughput else '':>12} {'peak mem':>12} "
           f"{'capacity':>12} {'util':>6}  \n")
    for d in score.devices:
        ops = str(ops_on.get(d.device, 0)) if ops_on else ""
        load = _time(d.load_seconds, unit) if throughput else ""
        capacity = format_bytes(d.capacity_bytes) if d.capacity_bytes > 0 else "unlimited"
        out += (f"{d.device:<14} {ops:>6} {_time(d.busy_seconds, unit):>12} {load:>12} "
                f"{format_bytes(d.peak_memory_bytes):>12} {capacity:>12} {100 * d.utilization:5.0f}%  "
                f"{'OOM' if d.out_of_memory else ''}\n")
    return out


def _memory_rows(devices: Sequence[pb.DeviceScore]) -> str:
    kinds = ("parameters", "gradients", "optimizer", "activations", "workspace")
    out = f"\n{'memory':<14}" + "".join(f" {k:>12}" for k in kinds) + "\n"
    for d in devices:
        held = [getattr(d.memory, f"{k}_bytes") for k in kinds]
        out += f"{d.device:<14}" + "".join(f" {format_bytes(b):>12}" for b in held) + "\n"
    return out


def _module_rows(modules: Sequence[pb.ModulePlacement]) -> str:
    if not modules:
        return ""
    out = f"\n{'module':<48} device\n"
    for m in modules[:MAX_MODULE_ROWS]:
        out += f"{m.module or '(the model)':<48} {m.device}\n"
    if len(modules) > MAX_MODULE_ROWS:
        out += f"... and {len(modules) - MAX_MODULE_ROWS} more modules (--output json lists all)\n"
    return out


def answer_table(answer: pb.PlaceResponse) -> str:
    """The answer as `placectl submit` prints it; a transformer's training plan (the answer to a config.json) as
    transformer_table prints it."""
    if answer.HasField("transformer"):
        return transformer_table(answer)
    ops_on = collections.Counter(a.device for a in answer.assignment)
    parts: List[str] = [_summary(answer)]
    if answer.stages:
        parts.append(_plan_lines(answer))
    parts += ["\n", _device_rows(answer.score, ops_on), _memory_rows(answer.score.devices),
              _module_rows(answer.modules)]
    parts += [f"note: {n}\n" for n in answer.notes] + [f"warning: {w}\n" for w in answer.warnings]
    return "".join(parts)
