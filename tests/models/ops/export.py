#!/usr/bin/env python3
"""Export the per-operator test models of the CORE-V kernels (kernels/corev).

    python tests/models/ops/export.py [--out DIR] [names...]

Each model exercises one operator in several cases (odd sizes, size-1 dimensions,
broadcasting, strides, padding, groups, ...), one output per case, and is written as
three files:

- NAME.pte: the ExecuTorch program (torch.export.export, then
  to_edge_transform_and_lower(...).to_executorch(); float32 unless noted; no delegation);
- NAME.inputs.json: its inputs, a JSON list of {"dtype", "shape", "values"} (what the
  build's inputs= option takes);
- NAME.expected.json: the outputs eager PyTorch computes for them, in the same form.

Needs torch 2.13.0 and executorch 1.4.1 (the `export` extra: ./setup.sh --export). The
export is deterministic (fixed seeds): a second run writes the same bytes.
"""

import argparse
import copy
import json
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent


def _rand(*shape, scale=1.0):
    """Uniform in [-scale, scale), float32."""
    return (torch.rand(*shape) * 2.0 - 1.0) * scale


class Addmm(torch.nn.Module):
    """addmm.out (and the permute_copy.out of nn.Linear's weight): a bias broadcast
    along rows, odd sizes, an output of size 1, a bias of the output's shape, and
    alpha/beta != 1 (the portable fallback)."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(7, 5)
        self.narrow = torch.nn.Linear(13, 1)
        self.bias = torch.nn.Parameter(_rand(4, 6))
        self.weight = torch.nn.Parameter(_rand(5, 6))

    def forward(self, x, y, a):
        return (self.linear(x), self.narrow(y), torch.addmm(self.bias, a, self.weight),
                torch.addmm(self.bias, a, self.weight, beta=0.5, alpha=2.0))


class Permute(torch.nn.Module):
    """permute_copy.out: 3-D and 4-D permutations, size-1 dimensions, int32."""

    def forward(self, x, y, z, w):
        return (x.permute(2, 0, 1), y.permute(0, 2, 3, 1), y.permute(3, 1, 0, 2),
                z.permute(3, 2, 1, 0), w.permute(1, 0))


class Conv(torch.nn.Module):
    """convolution.out: stride and padding, groups without bias, a rectangular kernel
    with dilation, depthwise with wide padding, 1x1."""

    def __init__(self):
        super().__init__()
        self.strided = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.grouped = torch.nn.Conv2d(4, 4, 3, groups=2, padding=(1, 0), bias=False)
        self.dilated = torch.nn.Conv2d(2, 6, (2, 3), stride=(1, 2), dilation=(2, 1))
        self.depthwise = torch.nn.Conv2d(3, 3, 3, groups=3, padding=2)
        self.pointwise = torch.nn.Conv2d(3, 2, 1)

    def forward(self, x, y, z):
        return (self.strided(x), self.grouped(y), self.dilated(z), self.depthwise(x),
                self.pointwise(x))


class Conv1d(torch.nn.Module):
    """convolution.out on a 3-D input (a 1-D convolution): the portable fallback."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv1d(2, 3, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


class MaxPool(torch.nn.Module):
    """max_pool2d_with_indices.out: odd sizes, stride with padding, a rectangular
    kernel with ceil_mode, dilation (with the indices as an output), a 3-D input."""

    def __init__(self):
        super().__init__()
        self.plain = torch.nn.MaxPool2d(2)
        self.padded = torch.nn.MaxPool2d(3, stride=2, padding=1)
        self.ceil = torch.nn.MaxPool2d((2, 3), stride=(1, 2), ceil_mode=True)
        self.dilated = torch.nn.MaxPool2d(3, stride=1, padding=1, dilation=2,
                                          return_indices=True)

    def forward(self, x, y, z, w, c):
        values, indices = self.dilated(w)
        return self.plain(x), self.padded(y), self.ceil(z), values, indices, self.plain(c)


class Relu(torch.nn.Module):
    """relu.out, with zeros and negative values."""

    def forward(self, x):
        return torch.relu(x)


class Softmax(torch.nn.Module):
    """_softmax.out over the last, a middle and the first dimension, and over one
    element."""

    def forward(self, x, y, s):
        return (torch.softmax(x, dim=-1), torch.softmax(x, dim=1), torch.softmax(y, dim=0),
                torch.softmax(s, dim=0))


class Add(torch.nn.Module):
    """add.out: one shape, a row broadcast, a two-sided broadcast (portable fallback),
    alpha = 2 (portable fallback)."""

    def forward(self, x, y, b, p, q):
        return x + y, x + b, p + q, torch.add(x, y, alpha=2)


class Mul(torch.nn.Module):
    """mul.out: one shape, a row broadcast, a two-sided broadcast (portable fallback),
    a one-element tensor."""

    def forward(self, x, y, b, p, q, s):
        return x * y, b * x, p * q, x * s


class Quantize(torch.nn.Module):
    """quantized_decomposed::quantize_per_tensor.out / dequantize_per_tensor.out, int8
    and uint8, with clamping (values beyond the range) and a nonzero zero point."""

    def forward(self, x):
        ops = torch.ops.quantized_decomposed
        q8 = ops.quantize_per_tensor(x, 0.03125, 3, -128, 127, torch.int8)
        u8 = ops.quantize_per_tensor(x, 0.0625, 100, 0, 255, torch.uint8)
        return (q8, ops.dequantize_per_tensor(q8, 0.03125, 3, -128, 127, torch.int8),
                u8, ops.dequantize_per_tensor(u8, 0.0625, 100, 0, 255, torch.uint8))


class HalfArith(torch.nn.Module):
    """add.out, mul.out, relu.out and sub.out on float16 or bfloat16 tensors (the CORE-V
    kernels take float32 only: each falls back to the portable kernel), with a row
    broadcast and alpha = 2. Each element is computed in float and rounded once, on the
    target as in eager PyTorch."""

    def forward(self, x, y, b):
        return x + y, b * x, torch.relu(x - y), torch.add(x, y, alpha=2)


def _relu_input():
    x = _rand(3, 5, 7)
    x.view(-1)[::6] = 0.0
    return (x,)


# name -> (module factory, example inputs factory)
MODELS = {
    "addmm": (Addmm, lambda: (_rand(3, 7), _rand(1, 13), _rand(4, 5))),
    "permute": (Permute, lambda: (_rand(3, 4, 5), _rand(2, 3, 4, 5), _rand(1, 5, 1, 3),
                                  torch.arange(-3, 3, dtype=torch.int32).reshape(2, 3))),
    "conv": (Conv, lambda: (_rand(1, 3, 9, 7), _rand(2, 4, 6, 5), _rand(1, 2, 8, 9))),
    "conv1d": (Conv1d, lambda: (_rand(1, 2, 10),)),
    "maxpool": (MaxPool, lambda: (_rand(1, 3, 7, 9), _rand(2, 2, 9, 8), _rand(1, 1, 7, 10),
                                  _rand(1, 2, 8, 8), _rand(2, 5, 5))),
    "relu": (Relu, _relu_input),
    "softmax": (Softmax, lambda: (_rand(2, 3, 5, scale=4.0), _rand(4, 3, scale=4.0),
                                  _rand(1))),
    "add": (Add, lambda: (_rand(3, 5), _rand(3, 5), _rand(5), _rand(2, 1, 4), _rand(3, 1))),
    "mul": (Mul, lambda: (_rand(3, 5), _rand(3, 5), _rand(5), _rand(2, 1, 4), _rand(3, 1),
                          _rand(1))),
    "quantize": (Quantize, lambda: (_rand(2, 33, scale=6.0),)),
    "half": (HalfArith, lambda: tuple(t.half() for t in (_rand(3, 5), _rand(3, 5), _rand(5)))),
    "bfloat16": (HalfArith, lambda: tuple(t.bfloat16()
                                          for t in (_rand(3, 5), _rand(3, 5), _rand(5)))),
}


# ExecutorchBackendConfig of the models not exported with ExecuTorch's defaults: name ->
# a function that makes it (other export scripts add theirs).
BACKEND_CONFIGS = {}


def _tensor_entry(tensor):
    return {
        "dtype": str(tensor.dtype).removeprefix("torch."),
        "shape": list(tensor.shape),
        "values": tensor.flatten().tolist(),
    }


def _flat(outputs):
    return [outputs] if isinstance(outputs, torch.Tensor) else list(outputs)


def export_model(name):
    """(pte bytes, inputs list, expected outputs list) of the model called `name`."""
    import torch.ao.quantization.fx._decomposed  # noqa: F401  (quantized_decomposed ops)
    import executorch.kernels.quantized  # noqa: F401  (their out variants)
    from executorch.exir import to_edge_transform_and_lower

    make_module, make_inputs = MODELS[name]
    torch.manual_seed(0)
    module = make_module().eval()
    inputs = make_inputs()
    with torch.no_grad():
        # on a copy: a model with state (a mutable buffer) would export its updated value
        expected = _flat(copy.deepcopy(module)(*inputs))
    config = BACKEND_CONFIGS[name]() if name in BACKEND_CONFIGS else None
    program = to_edge_transform_and_lower(torch.export.export(module, inputs)).to_executorch(config)
    return (bytes(program.buffer), [_tensor_entry(t) for t in inputs],
            [_tensor_entry(t) for t in expected])


def _json_text(tensors):
    """One tensor per line group; the values on one line."""
    items = []
    for t in tensors:
        items.append(" {\n  \"dtype\": %s,\n  \"shape\": %s,\n  \"values\": %s\n }"
                     % (json.dumps(t["dtype"]), json.dumps(t["shape"]), json.dumps(t["values"])))
    return "[\n" + ",\n".join(items) + "\n]\n"


def write_model(name, out_dir):
    """NAME.pte, NAME.inputs.json, NAME.expected.json in out_dir; returns their paths."""
    pte, inputs, expected = export_model(name)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = (out_dir / f"{name}.pte", out_dir / f"{name}.inputs.json",
             out_dir / f"{name}.expected.json")
    paths[0].write_bytes(pte)
    paths[1].write_text(_json_text(inputs))
    paths[2].write_text(_json_text(expected))
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE,
                        help="output directory (default: tests/models/ops)")
    parser.add_argument("names", nargs="*", metavar="name",
                        help=f"models to export (default: all of {', '.join(MODELS)})")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    for name in args.names or MODELS:
        pte_path, _, _ = write_model(name, args.out)
        print(f"{name}: {pte_path.name} ({pte_path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
