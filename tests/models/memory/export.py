#!/usr/bin/env python3
"""Export the memory-planning test model: `wide_add`, x + y over 1,200,000 float32 values
each, whose planned activations (about 14 MB) fit QEMU's 64 MiB but not the CV32E40P
testbench's 4 MiB. Exported as tests/models/ops/export.py exports its models (the same
requirements: the `export` extra); only the .pte is written (its inputs would be 12 MB
of JSON, and the tests run it with all ones).

    python tests/models/memory/export.py [--out DIR]
"""

import importlib.util
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("ops_export", HERE.parent / "ops" / "export.py")
ops_export = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ops_export)


class WideAdd(torch.nn.Module):
    def forward(self, x, y):
        return x + y


MODELS = {"wide_add": (WideAdd, lambda: (torch.ones(1, 1_200_000), torch.ones(1, 1_200_000)))}


def main(argv):
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else HERE
    ops_export.MODELS = MODELS
    for name in MODELS:
        pte, _, _ = ops_export.export_model(name)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.pte").write_bytes(pte)
        print(f"{name}: {name}.pte ({len(pte)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
