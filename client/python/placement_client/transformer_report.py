"""A transformer's training plan (PlaceResponse.transformer, the answer to a Hugging Face config.json) as
placement-place prints it: the lines `placectl submit` prints for the same answer, but for the model's layers and
heads, which placectl reads from the config itself (the answer carries its parameter count)."""

from __future__ import annotations

from typing import List

from placement_client.proto import placement_pb2 as pb
from placement_client.units import format_bytes, format_seconds, three_figures


def _count(n: int) -> str:
    """1650000000 -> "1.65B"."""
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{three_figures(n / scale)}{suffix}"
    return str(n)


def _time_line(t: pb.TransformerTimeParts) -> str:
    parts = (("forward", t.forward), ("backward", t.backward), ("recompute", t.recompute),
             ("tensor parallel", t.tensor_parallel), ("pipeline sends", t.pipeline_send),
             ("bubble", t.pipeline_bubble), ("data parallel (exposed)", t.data_parallel), ("optimizer", t.optimizer))
    return ", ".join(f"{name} {format_seconds(seconds)}" for name, seconds in parts)


def _memory_line(m: pb.TransformerMemory) -> str:
    held = ", ".join(f"{kind} {format_bytes(getattr(m, kind))}"
                     for kind in ("parameters", "gradients", "optimizer", "activations", "workspace"))
    fits = "fits" if m.fits else "DOES NOT FIT"
    return f"{format_bytes(m.total)} per GPU of {format_bytes(m.capacity)} ({fits}): {held}"


def transformer_table(answer: pb.PlaceResponse) -> str:
    """The plan, its iteration and where its time and memory go, the search, and the server's notes."""
    t = answer.transformer
    lines: List[str] = [
        f"model       {_count(t.parameters)} parameters; seq {t.seq}, global batch {t.global_batch} sequences, "
        f"{t.precision or 'fp32'}",
        f"cluster     {t.cluster} ({t.gpus} GPUs, {t.gpus_per_host} per host, {t.device_kind})",
        f"plan        {t.plan} ({t.micro_batches} micro-batches per pipeline)",
        f"iteration   {format_seconds(t.iteration_seconds)}   {t.samples_per_second:.1f} samples/s   "
        f"{t.tokens_per_second:.0f} tokens/s   MFU {100 * t.mfu:.1f}%   HFU {100 * t.hfu:.1f}%",
        f"time        {_time_line(t.time)}",
        f"memory      {_memory_line(t.memory)}",
    ]
    lines += [f"comm        {c.kind} over {c.link}: {format_bytes(c.bytes)} per GPU, {format_seconds(c.seconds)}"
              for c in t.communication]
    stopped = "" if t.search_complete else " (stopped by the deadline)"
    lines.append(f"search      {t.plans_evaluated} plans scored, {t.plans_fitting} fit, in "
                 f"{format_seconds(answer.compute_seconds)}{stopped}")
    if t.reason:
        lines.append(f"reason      {t.reason}")
    lines += [f"note        {n}" for n in list(answer.notes) + list(answer.warnings)]
    if answer.cache_hit:
        lines.append("note        from the server's cache (the search time is the first answer's)")
    return "".join(line + "\n" for line in lines)
