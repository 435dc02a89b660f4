"""The module -> device map of a placement answer, in any form a user holds it."""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Mapping, Tuple


class AnswerMismatch(ValueError):
    """The answer does not fit the model: a module it places that the model lacks, a module of the model it leaves
    unplaced, or a device mapping it does not use. The message names which."""


def module_devices(answer: Any) -> List[Tuple[str, str]]:
    """(module path, device name) pairs, in the answer's order, from a PlaceResponse or SimulateResponse (`modules`),
    the JSON placectl prints (a dict with "modules"), a plain {module: device} mapping, or (module, device) pairs."""
    if hasattr(answer, "modules") and not isinstance(answer, Mapping):
        pairs = [(m.module, m.device) for m in answer.modules]
    elif isinstance(answer, Mapping) and isinstance(answer.get("modules"), Mapping):
        pairs = list(answer["modules"].items())
    elif isinstance(answer, Mapping) and all(isinstance(v, str) for v in answer.values()):
        pairs = list(answer.items())
    elif isinstance(answer, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in answer):
        pairs = [(p[0], p[1]) for p in answer]
    else:
        raise AnswerMismatch("the answer has no module map: give a PlaceResponse, placectl's JSON output or a "
                             "{module: device} dict (answers for graphs exported from PyTorch carry `modules`)")
    if not pairs:
        raise AnswerMismatch("the answer's module map is empty: was the graph exported from PyTorch (torch.onnx)?")
    for module, device in pairs:
        if not isinstance(module, str) or not isinstance(device, str) or not device:
            raise AnswerMismatch(f"malformed module map entry {module!r}: {device!r}")
    return pairs


def segments(path: str) -> Tuple[str, ...]:
    return tuple(path.split(".")) if path else ()


class ModuleMap:
    """Longest-prefix lookup of module paths (segment by segment) in an answer's module -> device map."""

    def __init__(self, pairs: Iterable[Tuple[str, str]]) -> None:
        self.device: Dict[Tuple[str, ...], str] = {segments(m): d for m, d in pairs}
        # Keys with an entry strictly below them: their own entry covers only their own operators.
        self.has_children: Dict[Tuple[str, ...], bool] = {}
        for key in self.device:
            for i in range(len(key)):
                self.has_children[key[:i]] = True

    def covering(self, path: str) -> Tuple[str, ...] | None:
        """The entry that places `path`: its deepest listed ancestor-or-self (an entry places its module and
        every descendant not listed itself)."""
        key = segments(path)
        for i in range(len(key), -1, -1):
            if key[:i] in self.device:
                return key[:i]
        return None

    def is_exact_or_undivided(self, entry: Tuple[str, ...], path: str) -> bool:
        """Whether `entry` (from covering) names `path` itself or a module the answer does not divide."""
        return entry == segments(path) or not self.has_children.get(entry, False)

    def is_divided_here(self, entry: Tuple[str, ...], path: str) -> bool:
        """Whether `entry` (from covering) names `path` itself and the answer lists modules below it: an operation
        in `path`'s own scope, between children the answer may put on different devices."""
        return entry == segments(path) and self.has_children.get(entry, False)

    def first_within(self, path: str) -> str | None:
        """The device of the first entry at or below `path`, in the answer's (the model's running) order."""
        key = segments(path)
        for entry, device in self.device.items():
            if entry[:len(key)] == key:
                return device
        return None

    def splits(self, path: str) -> bool:
        """Whether the entries at or below `path` name more than one device."""
        key = segments(path)
        return len({d for entry, d in self.device.items() if entry[:len(key)] == key}) > 1

    def devices(self) -> List[str]:
        return sorted(set(self.device.values()))
