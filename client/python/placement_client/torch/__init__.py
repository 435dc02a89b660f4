"""Placements people can run: a PyTorch model split by a placement answer, checked and run.

    import torch, torchvision
    from placement_client.torch import split

    model = torchvision.models.resnet50()
    parts = split(model, answer, (torch.randn(8, 3, 224, 224),))      # answer: a PlaceResponse for its export
    parts.parts         # [("gpu0", submodule), ("gpu1", submodule)], in the order they run
    parts.place({"gpu0": "cuda:0", "gpu1": "cuda:1"})                # each part on its GPU, transfers inserted
    y = parts(x)        # the original model's outputs

The answer's module map (`modules`, which the service returns for graphs exported from PyTorch) decides the device
of every torch.fx node: a module's entry, or for a module the exporter folded away (a BatchNorm folded into its
convolution) the device of the operator it was folded into. pipeline() runs the parts as one process per stage.
Importable only where torch is installed.
"""

from placement_client.torch._answer import AnswerMismatch, module_devices
from placement_client.torch._pipeline import PipelineRun, pipeline
from placement_client.torch._split import Crossing, SplitModule, split

__all__ = ["AnswerMismatch", "Crossing", "PipelineRun", "SplitModule", "module_devices", "pipeline", "place", "split"]


def place(model, answer, devices, example_inputs=()):  # type: ignore[no-untyped-def]
    """split(model, answer, example_inputs) with every part moved to devices[its answer device]."""
    return split(model, answer, example_inputs, devices=devices)
