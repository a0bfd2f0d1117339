#!/usr/bin/env python3
"""Export the per-operator test models of ExecuTorch's Cortex-M operators (cortex_m::).

    python tests/models/cortex_m/export.py [--out DIR] [--targets T,...] [names...]

Each model exercises one cortex_m operator (the CMSIS-NN kernels of ExecuTorch's
backends/cortex_m) in several cases (odd sizes, channel counts that are not multiples of
4, padding, strides, dilation, rectangular kernels, batches, fused ReLU, ...), one output
per case. The models go through ExecuTorch's Cortex-M route with the MLPerf Tiny
example's own code, which this script loads from examples/models/tiny/export.py
(lower_cortex_m, to_executorch, and the writing of the files): channels-last 4-D inputs,
CortexMQuantizer, calibration on seeded data, to_edge, CortexMPassManager, the constants
no operator reads dropped, to_executorch. Like the networks, each is exported for
ExecuTorch's default target (Cortex-M55: CMSIS-NN's MVE forms) into --out, and for
Cortex-M3 (scalar) and Cortex-M4 (DSP) into --out/m3 and --out/m4 where the program
differs from an earlier target's (--targets). Each is written as:

- NAME.pte: the program, float32 in and out: a cortex_m::quantize_per_tensor per input,
  the operator under test, a cortex_m::dequantize_per_tensor per output (plus a
  cortex_m::transpose of the right operand of each batch matmul, a cortex_m::pad before
  the average pool that counts its padding, and a requantization after each softmax,
  whose own output has the fixed scale 1/256);
- NAME.inputs.json: its inputs, a JSON list of {"dtype", "shape", "values"}, the values in
  logical row-major order (4-D inputs are channels-last in the program: dim order
  (0, 2, 3, 1));
- NAME.expected.json: the outputs of the lowered program's Python reference (the cortex_m
  dialect's implementations), in logical row-major order; 4-D outputs are channels-last in
  the program too (but the transpose to NHWC's). They are dequantized int8: a firmware
  matches them to within a step of each output's scale (the scale of its dequantize,
  which the script prints).

The export fails if a case falls back to other operators than cortex_m:: (but for
mixed_layouts, whose float pool is what it is about). Cases that do
not lower are left out: two-sided broadcasting in add and mul (the quantizer leaves it in
float), max pooling with dilation or ceil_mode and average pooling with ceil_mode (left to
the portable kernels), softmax over another dimension than the last (stays
aten::_softmax, in float), SiLU and hardswish (the passes fail without them in
preserve_ops), a standalone ReLU (an int8 aten::clamp, portable), and add with alpha != 1
(lowers to a quantized_add that ignores alpha: wrong results in executorch 1.4.1).

Needs torch 2.13.0, executorch 1.4.1 and tosa-tools 2026.5.0. Deterministic: a second
run writes the same bytes.
"""

import argparse
import importlib.util
import sys
from collections import Counter
from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent
# The MLPerf Tiny example holds the Cortex-M lowering (lower_cortex_m with its
# drop_unused_constants and CMSIS-NN's plain C target, to_executorch), io_dim_orders and
# the writing of the files (_write): this script uses its code.
_spec = importlib.util.spec_from_file_location(
    "tiny_export", HERE.parents[2] / "examples" / "models" / "tiny" / "export.py")
tiny = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny)

# Input values are multiples of this: exact in float32.
STEP = 1.0 / 256.0
CALIBRATION_SETS = 4


def _rand(*shape, scale=1.0):
    """Uniform in [-scale, scale], multiples of STEP, channels-last if 4-D."""
    x = torch.round((torch.rand(*shape) * 2.0 - 1.0) * scale / STEP) * STEP
    return x.to(memory_format=torch.channels_last) if x.dim() == 4 else x


class Conv(nn.Module):
    """quantized_conv2d, one case per CMSIS-NN path and parameter: a plain 3x3 with odd
    sizes; stride 2 with padding 1; a rectangular kernel with asymmetric stride and
    padding; dilation 2; 1x1 with stride 1 (the 1x1 fast path, no bias); 1x1 with
    stride 2; a 1xN kernel on a one-row input (the 1xN path); a batch of 2; groups of 2;
    a fused ReLU; a depthwise kernel on a batch of 2 (the depthwise operator takes one
    image, so this is a grouped quantized_conv2d); both grouped forms again without bias
    (CMSIS-NN's C path steps a NULL bias pointer from group to group). Channel counts 3,
    5, 6, 7 (not multiples of 4)."""

    def __init__(self):
        super().__init__()
        self.plain = nn.Conv2d(3, 5, 3)
        self.strided = nn.Conv2d(3, 6, 3, stride=2, padding=1)
        self.rectangular = nn.Conv2d(5, 7, (2, 3), stride=(1, 2), padding=(1, 0))
        self.dilated = nn.Conv2d(4, 3, 3, padding=2, dilation=2)
        self.pointwise = nn.Conv2d(7, 5, 1, bias=False)
        self.pointwise_strided = nn.Conv2d(6, 3, 1, stride=2)
        self.row = nn.Conv2d(4, 6, (1, 3), padding=(0, 1))
        self.batched = nn.Conv2d(3, 4, 3, padding=1)
        self.grouped = nn.Conv2d(4, 6, 3, padding=1, groups=2)
        self.fused = nn.Conv2d(3, 5, 3, padding=1)
        self.depthwise_batched = nn.Conv2d(3, 3, 3, padding=1, groups=3)
        # Last, so the cases above keep their weights.
        self.grouped_unbiased = nn.Conv2d(4, 6, 3, padding=1, groups=2, bias=False)
        self.depthwise_batched_unbiased = nn.Conv2d(3, 3, 3, padding=1, groups=3, bias=False)

    def forward(self, a, b, c, d, e, f, g, h, i):
        return (self.plain(a), self.strided(b), self.rectangular(c), self.dilated(d),
                self.pointwise(e), self.pointwise_strided(f), self.row(g), self.batched(h),
                self.grouped(i), torch.relu(self.fused(a)), self.depthwise_batched(h),
                self.grouped_unbiased(i), self.depthwise_batched_unbiased(h))


class Depthwise(nn.Module):
    """quantized_depthwise_conv2d (batch 1, groups == input channels): 3x3 with padding 1
    on 5 channels; stride 2; depth multiplier 2; one input channel with multiplier 8 and a
    rectangular kernel (DS-CNN's first layer); a 5x3 kernel; dilation 2; a fused ReLU."""

    def __init__(self):
        super().__init__()
        self.plain = nn.Conv2d(5, 5, 3, padding=1, groups=5)
        self.strided = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)
        self.multiplier = nn.Conv2d(3, 6, 3, padding=1, groups=3)
        self.single = nn.Conv2d(1, 8, (4, 3), stride=2, padding=(2, 1))
        self.tall = nn.Conv2d(6, 6, (5, 3), padding=(2, 1), groups=6, bias=False)
        self.dilated = nn.Conv2d(4, 4, 3, padding=2, dilation=2, groups=4)
        self.fused = nn.Conv2d(5, 5, 3, padding=1, groups=5)

    def forward(self, a, b, c, d, e, f):
        return (self.plain(a), self.strided(b), self.multiplier(c), self.single(d),
                self.tall(e), self.dilated(f), torch.relu(self.fused(a)))


class Linear(nn.Module):
    """quantized_linear: odd in and out features; a batch of 4; one output feature
    without bias; a fused ReLU; a 3-D input (rows over the first two dimensions)."""

    def __init__(self):
        super().__init__()
        self.odd = nn.Linear(7, 5)
        self.batched = nn.Linear(13, 3)
        self.single = nn.Linear(16, 1, bias=False)
        self.fused = nn.Linear(9, 11)
        self.rows = nn.Linear(6, 4)

    def forward(self, a, b, c, d, e):
        return (self.odd(a), self.batched(b), self.single(c), torch.relu(self.fused(d)),
                self.rows(e))


class Add(nn.Module):
    """quantized_add: one shape (4-D channels-last and 2-D), inputs of different ranges,
    a per-channel broadcast (channels-last), a fused ReLU."""

    def forward(self, a, b, c, d, p, q):
        return a + b, c + d, a + p, torch.relu(a + q)


class Mul(nn.Module):
    """quantized_mul: one shape (4-D channels-last and 2-D), a per-channel broadcast
    (channels-last)."""

    def forward(self, a, b, c, d, p):
        return a * b, c * d, a * p


class MixedLayouts(nn.Module):
    """quantized_add and quantized_mul of tensors in different layouts: one operand comes
    back from a float adaptive average pool (which the quantizer leaves in float) through
    a dim-order copy, and the passes give the addition a channels-last input and a
    contiguous output. ExecuTorch v1.4.1's kernels walk them as flat memory."""

    def __init__(self):
        super().__init__()
        self.main = nn.Conv2d(3, 4, 3, stride=2)
        self.side = nn.Conv2d(3, 4, 1)

    def forward(self, x):
        y = self.main(x)
        z = nn.functional.adaptive_avg_pool2d(self.side(x), y.shape[2:])
        return y + z, y * z


class AvgPool(nn.Module):
    """quantized_avg_pool2d: 2x2; 3x3 stride 2 padding 1 without the padding in the count
    (the kernel's own padding); the same with count_include_pad (a cortex_m::pad with the
    zero point first, then the pool without padding); a rectangular kernel and stride; a
    global average (adaptive, 1x1 output); a batch of 2. count_include_pad=False where
    there is no padding: with PyTorch's default (True) the pass puts a cortex_m::pad of
    zero width (a copy) before every pool."""

    def __init__(self):
        super().__init__()
        self.square = nn.AvgPool2d(2, count_include_pad=False)
        self.padded = nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False)
        self.counted = nn.AvgPool2d(3, stride=2, padding=1)
        self.rectangular = nn.AvgPool2d((2, 3), stride=(1, 2), count_include_pad=False)
        self.pooled = nn.AdaptiveAvgPool2d(1)

    def forward(self, a, b, c, d):
        return (self.square(a), self.padded(b), self.counted(b), self.rectangular(c),
                self.pooled(a), self.square(d))


class MaxPool(nn.Module):
    """quantized_max_pool2d: 2x2; 3x3 stride 2 padding 1; a rectangular kernel and
    stride; a batch of 2."""

    def __init__(self):
        super().__init__()
        self.square = nn.MaxPool2d(2)
        self.padded = nn.MaxPool2d(3, stride=2, padding=1)
        self.rectangular = nn.MaxPool2d((2, 3), stride=(1, 2))

    def forward(self, a, b, c, d):
        return self.square(a), self.padded(b), self.rectangular(c), self.square(d)


class BatchMatmul(nn.Module):
    """quantized_batch_matmul of two activations (the right one transposed by a
    cortex_m::transpose first): a batch of 2, and odd sizes."""

    def forward(self, a, b, c, d):
        return torch.bmm(a, b), torch.bmm(c, d)


class Transpose(nn.Module):
    """transpose (int8 permute_copy): 2-D and 3-D; 4-D channels-last inputs (their
    outputs are contiguous: the operator's shape function makes them so) permuted to
    NHWC (the same bytes), with the last two dimensions swapped, and with C and H
    swapped."""

    def forward(self, a, b, c, d, e):
        return (a.t(), b.permute(2, 0, 1), c.permute(1, 2, 0), d.permute(0, 2, 3, 1),
                e.permute(0, 1, 3, 2), d.transpose(1, 2))


class TransposeConv(nn.Module):
    """quantized_transpose_conv2d: 4 input channels, 3x3, stride 2, padding 1 (CMSIS-NN's
    column buffer path); 17 input channels, 3x3, stride 2 (more than 16 channels: its
    reverse-convolution path, with the second scratch buffer); 3 input channels, a
    rectangular kernel and stride. (Output padding, groups and dilation stay in float:
    the quantizer rejects them.)"""

    def __init__(self):
        super().__init__()
        self.columns = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1)
        self.reverse = nn.ConvTranspose2d(17, 5, 3, stride=2, padding=1)
        self.rectangular = nn.ConvTranspose2d(3, 5, (2, 3), stride=(1, 2))

    def forward(self, a, b, c):
        return self.columns(a), self.reverse(b), self.rectangular(c)


class MinMax(nn.Module):
    """minimum and maximum of two int8 tensors of one quantization (the quantizer shares
    it): 4-D channels-last with a contiguous output (the operator's shape function makes
    it so), 2-D, and against a per-channel tensor, broadcast either way."""

    def forward(self, a, b, c, d, p):
        return (torch.minimum(a, b), torch.maximum(c, d), torch.maximum(a, b),
                torch.maximum(a, p), torch.minimum(p, a))


class Pad(nn.Module):
    """pad (int8 constant_pad_nd): 2-D, 3-D with a nonzero value, 4-D channels-last on
    H and W."""

    def forward(self, a, b, c):
        return (nn.functional.pad(a, (2, 1)), nn.functional.pad(b, (1, 0, 0, 2), value=0.5),
                nn.functional.pad(c, (1, 2, 0, 1)))


class Activation(nn.Module):
    """quantized_activation (a 256-entry table): sigmoid and tanh, 2-D and 4-D."""

    def forward(self, a, b):
        return torch.sigmoid(a), torch.tanh(a), torch.sigmoid(b), torch.tanh(b)


class Softmax(nn.Module):
    """softmax over the last dimension, 2-D, 3-D and 4-D channels-last (whose last
    dimension, W, is not the innermost in memory), output scale 1/256, zero point -128."""

    def forward(self, a, b, c):
        return torch.softmax(a, dim=-1), torch.softmax(b, dim=-1), torch.softmax(c, dim=-1)


# name -> (module factory, example inputs factory, the operator under test, its count[,
# the other operators than cortex_m:: the program may hold])
MODELS = {
    "conv": (Conv, lambda: (_rand(1, 3, 7, 9), _rand(1, 3, 9, 7), _rand(1, 5, 8, 9),
                            _rand(1, 4, 9, 9), _rand(1, 7, 5, 6), _rand(1, 6, 7, 7),
                            _rand(1, 4, 1, 16), _rand(2, 3, 6, 5), _rand(1, 4, 6, 6)),
             "quantized_conv2d", 13),
    "depthwise": (Depthwise, lambda: (_rand(1, 5, 7, 9), _rand(1, 8, 9, 9), _rand(1, 3, 6, 7),
                                      _rand(1, 1, 11, 8), _rand(1, 6, 8, 7),
                                      _rand(1, 4, 8, 8)),
                  "quantized_depthwise_conv2d", 7),
    "linear": (Linear, lambda: (_rand(1, 7), _rand(4, 13), _rand(3, 16), _rand(2, 9),
                                _rand(2, 3, 6)),
               "quantized_linear", 5),
    "add": (Add, lambda: (_rand(1, 5, 6, 7), _rand(1, 5, 6, 7, scale=4.0), _rand(3, 5),
                          _rand(3, 5, scale=0.5), _rand(1, 5, 1, 1, scale=2.0),
                          _rand(1, 5, 6, 7)),
            "quantized_add", 4),
    "mul": (Mul, lambda: (_rand(1, 5, 6, 7), _rand(1, 5, 6, 7, scale=4.0), _rand(3, 5),
                          _rand(3, 5, scale=0.5), _rand(1, 5, 1, 1, scale=2.0)),
            "quantized_mul", 3),
    "mixed_layouts": (MixedLayouts, lambda: (_rand(1, 3, 7, 9),), "quantized_add", 1,
                      ("aten::_adaptive_avg_pool2d.out", "dim_order_ops::_to_dim_order_copy.out")),
    "avgpool": (AvgPool, lambda: (_rand(1, 5, 8, 9), _rand(1, 6, 9, 9), _rand(1, 4, 7, 10),
                                  _rand(2, 3, 6, 6)),
                "quantized_avg_pool2d", 6),
    "maxpool": (MaxPool, lambda: (_rand(1, 5, 8, 9), _rand(1, 6, 9, 9), _rand(1, 4, 7, 10),
                                  _rand(2, 3, 6, 6)),
                "quantized_max_pool2d", 4),
    "batch_matmul": (BatchMatmul, lambda: (_rand(2, 3, 4), _rand(2, 4, 5), _rand(1, 5, 7),
                                           _rand(1, 7, 3)),
                     "quantized_batch_matmul", 2),
    "transpose": (Transpose, lambda: (_rand(3, 5), _rand(2, 3, 4), _rand(5, 1, 7),
                                      _rand(1, 3, 4, 5), _rand(2, 3, 4, 5)),
                  "transpose", 6),
    "transpose_conv": (TransposeConv, lambda: (_rand(1, 4, 5, 5), _rand(1, 17, 3, 4),
                                               _rand(1, 3, 4, 3)),
                       "quantized_transpose_conv2d", 3),
    "minmax": (MinMax, lambda: (_rand(1, 3, 4, 5), _rand(1, 3, 4, 5), _rand(2, 5),
                                _rand(2, 5), _rand(1, 3, 1, 1)),
               "maximum", 3),
    "pad": (Pad, lambda: (_rand(3, 5), _rand(2, 3, 4), _rand(1, 3, 4, 5)), "pad", 3),
    "activation": (Activation, lambda: (_rand(3, 7, scale=4.0), _rand(1, 5, 4, 3, scale=4.0)),
                   "quantized_activation", 4),
    "softmax": (Softmax, lambda: (_rand(3, 10, scale=4.0), _rand(2, 3, 5, scale=4.0),
                                  _rand(1, 3, 4, 5, scale=4.0)),
                "softmax", 3),
}


def _undilate(weight, dilation, spatial):
    """The kernel with dilation written out: zeros between the taps."""
    shape = list(weight.shape)
    for axis, d in zip(spatial, dilation):
        shape[axis] = (shape[axis] - 1) * d + 1
    wide = weight.new_zeros(shape)
    index = [slice(None)] * weight.dim()
    for axis, d in zip(spatial, dilation):
        index[axis] = slice(None, None, d)
    wide[tuple(index)] = weight
    return wide


def reference(edge, inputs):
    """The lowered program's Python reference on inputs. torch has no integer dilated
    convolution, which the cortex_m reference uses, so a dilated convolution runs as the
    same operator with the kernel's dilation written out (zeros between the taps):
    the same sums."""
    from executorch.exir.dialects._ops import ops as exir_ops

    conv = exir_ops.edge.cortex_m.quantized_conv2d.default
    depthwise = exir_ops.edge.cortex_m.quantized_depthwise_conv2d.default

    class Interpreter(torch.fx.Interpreter):
        def call_function(self, target, args, kwargs):
            if target in (conv, depthwise) and list(args[5]) != [1, 1]:
                args = list(args)
                # weights: OHWI (conv) or IHWO (depthwise), spatial dims 1 and 2 either way
                args[1] = _undilate(args[1], args[5], (1, 2))
                args[5] = [1, 1]
            return super().call_function(target, tuple(args), kwargs)

    with torch.no_grad():
        return tiny._flat(Interpreter(edge.exported_program().module()).run(*inputs))


def output_scales(edge):
    """(scale, zero point) of the dequantize of each output."""
    graph = edge.exported_program().graph
    output = next(n for n in graph.nodes if n.op == "output")
    return [(float(n.args[1]), int(n.args[2])) for n in output.args[0]]


def operator_counts(program):
    """Kernel calls per operator of the program's plan."""
    plan = program.executorch_program.execution_plan[0]
    counts = Counter()
    for chain in plan.chains:
        for instruction in chain.instructions:
            index = getattr(instruction.instr_args, "op_index", None)
            if index is not None:
                op = plan.operators[index]
                counts[f"{op.name}.{op.overload}" if op.overload else op.name] += 1
    return counts


def export_model(name, target="default"):
    """(pte bytes, inputs, expected outputs, operator counts, output scales, the largest
    difference from the float module of each output in steps of its scale, the dim
    orders of the inputs and outputs), exported for target (tiny.target_config)."""
    make_module, make_inputs, operator, count, *allowed = MODELS[name]
    allowed = set(allowed[0]) if allowed else set()
    torch.manual_seed(0)
    module = make_module().eval()
    inputs = make_inputs()
    calibration = [inputs] + [make_inputs() for _ in range(CALIBRATION_SETS - 1)]
    edge = tiny.lower_cortex_m(module, inputs, calibration, target)
    expected = reference(edge, inputs)
    scales = output_scales(edge)
    with torch.no_grad():
        floats = tiny._flat(module(*inputs))
    steps = [((e - f).abs().max() / s).item() for e, f, (s, _) in zip(expected, floats, scales)]
    program = tiny.to_executorch(edge)
    counts = operator_counts(program)
    foreign = sorted(op for op in counts if not op.startswith("cortex_m::") and op not in allowed)
    if foreign or counts[f"cortex_m::{operator}.out"] != count:
        raise RuntimeError(f"{name}: expected {count} cortex_m::{operator}, got the "
                           f"operators {dict(counts)}")
    return (bytes(program.buffer), inputs, expected, counts, scales, steps,
            tiny.io_dim_orders(program))


def write_model(name, out_dir, target="default"):
    """NAME.pte, NAME.inputs.json, NAME.expected.json in out_dir; returns the .pte path,
    the operator counts, the output scales, the differences from float and the dim
    orders."""
    pte, inputs, expected, counts, scales, steps, orders = export_model(name, target)
    path = tiny._write(out_dir, name, pte, inputs, expected, [scale for scale, _ in scales])
    return path, counts, scales, steps, orders


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE,
                        help="output directory (default: tests/models/cortex_m)")
    parser.add_argument("--targets", default=",".join(tiny.SHIPPED_TARGETS),
                        type=lambda v: [tiny.target_name(t.strip()) for t in v.split(",")
                                        if t.strip()],
                        help="the Cortex-M targets to export for (default: %(default)s), as "
                             "examples/models/tiny/export.py takes them: the default into "
                             "--out, others into --out/TARGET where they differ")
    parser.add_argument("names", nargs="*", metavar="name",
                        help=f"models to export (default: all of {', '.join(MODELS)})")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    for i, target in enumerate(args.targets):
        for name in args.names or MODELS:
            pte_path, counts, scales, steps, orders = write_model(
                name, tiny.target_dir(args.out, target), target)
            same = tiny.drop_if_exported(args.out, target, name, args.targets[:i])
            if same:
                print(f"{name} for {target}: the same program as for {same}")
                continue
            print(f"{name} for {target}: {pte_path} ({pte_path.stat().st_size} bytes): "
                  + ", ".join(f"{op} x{n}" for op, n in counts.items()))
            print("  output scales: " + ", ".join(f"{s:.6g} (zp {z})" for s, z in scales))
            print("  vs float, in output steps: " + ", ".join(f"{d:.2f}" for d in steps))
            print("  dim orders: inputs %s; outputs %s" % tuple(
                " ".join("".join(map(str, o)) for o in group) for group in orders))
    return 0


if __name__ == "__main__":
    sys.exit(main())
