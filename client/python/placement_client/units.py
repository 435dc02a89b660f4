"""Quantities with units as placectl reads and writes them: times as "724 us", "11.6 ms", "1.2 s", memory as
"512 KiB", "74.5 GiB" (three significant figures, binary prefixes), and durations given on the command line as
"500ms", "2s", "1m" or "1h30m" (the syntax of placectl's --deadline)."""

from __future__ import annotations

import math
import re
from typing import Sequence

_SECONDS_PER_UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|ms|s|m|h)")


def three_figures(v: float) -> str:
    """v (non-negative) to three significant figures, without trailing zeros: 11.6, 724, 1.2."""
    text = f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _format_up(v: float, base: float, units: Sequence[str]) -> str:
    # The largest prefix that keeps the figure at least 1, one more when rounding would print "1000".
    if not math.isfinite(v):
        return f"{v} {units[0]}"
    sign = "-" if v < 0 else ""
    v, i = abs(v), 0
    while v >= base and i + 1 < len(units):
        v, i = v / base, i + 1
    if v >= base - 0.5 and i + 1 < len(units):
        v, i = v / base, i + 1
    return f"{sign}{three_figures(v)} {units[i]}"


def format_bytes(n: float) -> str:
    """80e9 -> "74.5 GiB"."""
    return _format_up(n, 1024, ("B", "KiB", "MiB", "GiB", "TiB", "PiB"))


def format_seconds(seconds: float) -> str:
    """0.0123 -> "12.3 ms", 2e-6 -> "2 us"."""
    units = ("s", "ms", "us", "ns")
    if not math.isfinite(seconds):
        return f"{seconds} s"
    sign = "-" if seconds < 0 else ""
    v, i = abs(seconds), 0
    if v > 0:
        while v < 1 and i + 1 < len(units):
            v, i = v * 1000, i + 1
        if v >= 999.5 and i > 0:
            v, i = v / 1000, i - 1
    return f"{sign}{three_figures(v)} {units[i]}"


def parse_duration(text: str) -> float:
    """Seconds in a duration written as placectl's flags take it: numbers each with a unit (ns, us, ms, s, m, h),
    "1m30s", "2.5s". Raises ValueError for anything else."""
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        raise ValueError(f"'{text}' is not a duration such as 500ms, 2s or 1m")
    return sum(float(number) * _SECONDS_PER_UNIT[unit] for number, unit in parts)
