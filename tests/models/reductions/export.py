#!/usr/bin/env python3
"""Export the reduction-operator test models: every reduction of ExecuTorch's portable
library that shares its helper (kernels/portable/cpu/util/reduce_util.cpp) with a
kernel the CORE-V library takes over (`_softmax.out`), so the firmware links kernels
from two libraries that need the same helper.

    python tests/models/reductions/export.py [--out DIR] [names...]

Files as tests/models/ops/export.py writes them (NAME.pte, NAME.inputs.json,
NAME.expected.json: eager PyTorch's outputs); the same requirements (the `export` extra).
"""

import importlib.util
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("ops_export", HERE.parent / "ops" / "export.py")
ops_export = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ops_export)
_rand = ops_export._rand


class Reductions(torch.nn.Module):
    """mean, sum, prod, amax, amin, argmax, argmin, max.dim, min.dim, any, var (two corrections),
    log_softmax and softmax (CORE-V) over different dimensions of one input."""

    def forward(self, x):
        values_max, index_max = torch.max(x, dim=1)
        values_min, index_min = torch.min(x, dim=0, keepdim=True)
        return (torch.softmax(x, dim=-1), x.mean(dim=-1, keepdim=True), x.sum(dim=(0, 2)),
                x.prod(dim=1), torch.amax(x, dim=0), torch.amin(x, dim=(1, 2)),
                torch.argmax(x, dim=2), torch.argmin(x, dim=1), values_max, index_max,
                values_min, index_min, (x > 0.5).any(dim=2), x.var(dim=1), x.var(dim=2, correction=0),
                torch.log_softmax(x, dim=1))


class LayerNorm(torch.nn.Module):
    """native_layer_norm (a transformer block's normalisation) beside softmax."""

    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(6)

    def forward(self, x):
        return torch.softmax(self.norm(x), dim=-1), self.norm(x)


MODELS = {
    "reductions": (Reductions, lambda: (_rand(3, 4, 5),)),
    "layer_norm": (LayerNorm, lambda: (_rand(2, 3, 6),)),
}


if __name__ == "__main__":
    ops_export.MODELS = MODELS
    sys.exit(ops_export.main(["--out", str(HERE)] + sys.argv[1:]
                             if "--out" not in sys.argv else sys.argv[1:]))
