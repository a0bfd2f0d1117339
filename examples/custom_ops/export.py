#!/usr/bin/env python3
"""Export the custom-operator example: a model that calls my_ops::scaled_add, an operator
PyTorch and ExecuTorch do not have, whose firmware kernel is kernels/op_scaled_add.cpp.

    python examples/custom_ops/export.py [--out DIR]

writes scaled_add.pte and scaled_add.json (inputs, the outputs eager PyTorch computes for
them, the program's operators; the form of examples/models/*.json) into DIR (default: this
directory). Needs the `export` extra (torch + executorch; `./setup.sh --export`). The export
is deterministic: a second run writes the same bytes.

The operator is defined here with torch.library, in both forms ExecuTorch needs:

    my_ops::scaled_add(Tensor x, Tensor y, float alpha) -> Tensor
    my_ops::scaled_add.out(Tensor x, Tensor y, float alpha, *, Tensor(a!) out) -> Tensor(a!)

The model calls the functional form; to_executorch() replaces it with the out form, which is
what the program names and what kernels/custom_ops.yaml registers for the firmware.
"""

import argparse
import importlib.util
import random
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
NAME = "scaled_add"

# ------------------------------------------------------------------ the operator
# Defined once per process (importing this module twice, e.g. from tests, must not
# redefine it).
if not hasattr(torch.ops.my_ops, "scaled_add"):
    _lib = torch.library.Library("my_ops", "DEF")
    _lib.define("scaled_add(Tensor x, Tensor y, float alpha) -> Tensor")
    _lib.define("scaled_add.out(Tensor x, Tensor y, float alpha, *, Tensor(a!) out) "
                "-> Tensor(a!)")

    def _check(x, y):
        torch._check(x.dtype == torch.float32 and y.dtype == torch.float32,
                     lambda: "my_ops::scaled_add: float32 tensors only")
        torch._check(x.shape == y.shape, lambda: "my_ops::scaled_add: x and y differ in shape")

    def _scaled_add_cpu(x, y, alpha):
        _check(x, y)
        return torch.add(x, y, alpha=alpha)

    def _scaled_add_out_cpu(x, y, alpha, *, out):
        _check(x, y)
        out.resize_(x.shape)
        return torch.add(x, y, alpha=alpha, out=out)

    def _scaled_add_fake(x, y, alpha):
        _check(x, y)
        return torch.empty_like(x)

    def _scaled_add_out_fake(x, y, alpha, *, out):
        _check(x, y)
        out.resize_(x.shape)
        return out

    _lib.impl("scaled_add", _scaled_add_cpu, "CPU")
    _lib.impl("scaled_add.out", _scaled_add_out_cpu, "CPU")
    torch.library.register_fake("my_ops::scaled_add", _scaled_add_fake, lib=_lib)
    torch.library.register_fake("my_ops::scaled_add.out", _scaled_add_out_fake, lib=_lib)


# ------------------------------------------------------------------ the model
class ScaledAddRelu(torch.nn.Module):
    """relu(x + 0.5 * y): the custom operator, then a portable one."""

    def forward(self, x, y):
        return torch.relu(torch.ops.my_ops.scaled_add(x, y, 0.5))


def example_inputs():
    """Two float32[2,4]: multiples of 1/4, so every result is exact in float32; two of the
    sums are negative, so relu has something to do."""
    x = torch.tensor([[-1.0, -0.5, 0.0, 0.5], [1.0, 1.5, -2.0, 0.25]])
    y = torch.tensor([[5.0, 2.0, -1.0, 0.5], [-4.0, 3.0, 8.0, 1.5]])
    return x, y


def export():
    """Returns (pte bytes, description dict)."""
    from executorch.exir import EdgeCompileConfig, to_edge

    random.seed(0)
    torch.manual_seed(0)
    module = ScaledAddRelu().eval()
    inputs = example_inputs()
    with torch.no_grad():
        expected = module(*inputs)

    exported = torch.export.export(module, inputs)
    # The edge dialect's operator check knows only ATen's core operators.
    edge = to_edge(exported, compile_config=EdgeCompileConfig(_check_ir_validity=False))
    program = edge.to_executorch()

    return bytes(program.buffer), _model_export().describe(program, inputs, [expected])


def write(out_dir):
    """Exports into out_dir as scaled_add.pte and scaled_add.json; returns the two paths."""
    pte, description = export()
    return _model_export().write_files(NAME, pte, description, out_dir)


def _model_export():
    """examples/models/export.py, whose file layout (and JSON form) this example shares."""
    spec = importlib.util.spec_from_file_location("model_export", HERE.parent / "models" / "export.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE,
                        help="output directory (default: examples/custom_ops)")
    args = parser.parse_args(argv)
    pte_path, json_path = write(args.out)
    print(f"{NAME}: {pte_path} ({pte_path.stat().st_size} bytes), {json_path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
