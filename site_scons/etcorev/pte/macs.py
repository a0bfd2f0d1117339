"""Multiply-accumulates of a program: what its convolutions, linear layers and matrix
products compute, from the operators' tensor arguments (etcorev.pte's kernel calls).
For the figures of benchmarks and reports (MACs per cycle), of both routes int8 networks
take: ExecuTorch's Cortex-M operators and the decomposed float ones."""

import math


def _numel(sizes):
    return math.prod(sizes) if sizes is not None else 0


def call_macs(op, sizes):
    """MACs of one kernel call: op, the sizes of its tensor arguments (out last)."""
    out = sizes[-1] if sizes else None
    if op in ("cortex_m::quantized_conv2d.out",):          # weight OHWI: O, kH, kW, I/g
        _, kh, kw, cin = sizes[1]
        return _numel(out) * kh * kw * cin
    if op == "cortex_m::quantized_depthwise_conv2d.out":   # weight IHWO: 1, kH, kW, O
        return _numel(out) * sizes[1][1] * sizes[1][2]
    if op == "cortex_m::quantized_linear.out":             # weight: out, in
        return _numel(out) * sizes[1][-1]
    if op == "cortex_m::quantized_batch_matmul.out":       # rhs transposed: B, N, K
        return _numel(out) * sizes[1][-1]
    if op == "aten::convolution.out":                      # weight OIHW: O, I/g, kH, kW
        return _numel(out) * math.prod(sizes[1][1:])
    if op == "aten::addmm.out":                            # self, mat1, mat2 (K, N)
        return _numel(out) * sizes[2][0]
    if op in ("aten::mm.out", "aten::bmm.out"):            # self, mat2 ([B,] K, N)
        return _numel(out) * sizes[1][-2]
    if op == "aten::linear.out":
        return _numel(out) * sizes[1][-1]
    return 0


def program_macs(program):
    """MACs of one execution of the method the runner runs (Program.method)."""
    return sum(call_macs(op, sizes) for op, sizes in program.method.kernel_calls)
