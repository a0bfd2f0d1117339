"""The forms of ExecuTorch's Cortex-M operators in a program, and what this build makes of
them.

ExecuTorch's Cortex-M passes (backends/cortex_m/passes) fill some arguments of the
`cortex_m::` operators for the CMSIS-NN backend of the target a program is exported for
(`CortexMPassManager(..., target_config=CortexMTargetConfig(cpu=...))`): SCALAR for
Cortex-M0, M0+, M3 and M23, DSP for M4, M7, M33 and M35P, MVE for M55 and M85, which is
the pass manager's default. Two things depend on it:

- `quantized_linear`: for MVE it carries a precomputed `kernel_sum` (input offset times
  each output's weight sum, plus the bias) and no bias; for the others the bias, and no
  kernel sum. The dialect's Python reference computes either; so does the firmware
  (kernels/cortex_m/op_quantized_linear.cpp: the kernel sum goes in as the bias, with an
  input offset of 0).
- the `scratch` tensors of `quantized_conv2d`, `quantized_depthwise_conv2d`,
  `quantized_transpose_conv2d`, `quantized_avg_pool2d` and `quantized_batch_matmul`: each
  is planned as large as that backend's `arm_*_get_buffer_size` asks for these shapes.
  The firmware runs CMSIS-NN's C paths (those of the SCALAR backend; the CORE-V versions
  in kernels/corev/cmsis_nn need the same buffers), which may need more: an MVE 1xN
  convolution plans less than the C path's im2col. The firmware then takes the
  difference from the runner's temp pool (kernels/cortex_m/op_quantized_conv2d.cpp),
  which the build sizes for it (temp_pool_bytes).

A scratch buffer smaller than the C path needs and of a size no backend plans for those
shapes is not something ExecuTorch's flow makes (an edited program, another exporter): the
build refuses it (check). Everything else about the operators is the same for every
target (kernels/cortex_m/README.md goes through all of them).

The buffer sizes are CMSIS-NN's (at the commit ExecuTorch v1.4.1 pins:
Source/*/arm_*_get_buffer_sizes_s8.c) for int8 activations and weights, written out here
the way ExecuTorch's scratch_buffer_sizes.py calls them; tests compare them with CMSIS-NN's
own Python binding where the export extra is installed.
"""

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from etcorev.errors import BuildSetupError
from etcorev.executorch.memory_order import dims_in_memory
from etcorev.pte import TensorArg

BACKENDS = ("scalar", "dsp", "mve")
# The cores whose programs take each backend's forms (target_config.py's table).
CORES = {"scalar": "Cortex-M0, M0+, M3, M23", "dsp": "Cortex-M4, M7, M33, M35P",
         "mve": "Cortex-M55, M85: the pass manager's default"}
# The backend the firmware's kernels are: CMSIS-NN's C paths.
RUNS = "scalar"

# Argument names of the Cortex-M operators, in schema order (backends/cortex_m/ops/
# operators.yaml of ExecuTorch v1.4.1; a test compares them with the tree's). A kernel
# call's arguments are these, then its returns.
SCHEMAS = {
    "cortex_m::quantize_per_tensor.out": (
        "input", "scale", "zero_point", "quant_min", "quant_max", "dtype", "out"),
    "cortex_m::dequantize_per_tensor.out": (
        "input", "scale", "zero_point", "quant_min", "quant_max", "dtype", "out"),
    "cortex_m::quantized_add.out": (
        "self", "self_zero_point", "self_multiplier", "self_shift", "other",
        "other_zero_point", "other_multiplier", "other_shift", "output_zero_point",
        "output_multiplier", "output_shift", "activation_min", "activation_max", "out"),
    "cortex_m::quantized_mul.out": (
        "self", "self_zero_point", "other", "other_zero_point", "output_zero_point",
        "output_multiplier", "output_shift", "out"),
    "cortex_m::quantized_activation.out": ("input", "lut", "out"),
    "cortex_m::minimum.out": ("self", "other", "out"),
    "cortex_m::maximum.out": ("self", "other", "out"),
    "cortex_m::quantized_linear.out": (
        "input", "weights", "bias", "kernel_sum", "input_offset", "filter_offset",
        "output_offset", "requantize_multipliers", "requantize_shifts", "activation_max",
        "activation_min", "out"),
    "cortex_m::softmax.out": (
        "input", "dim", "input_zero_point", "output_zero_point", "input_multiplier",
        "input_shift", "diff_min", "out"),
    "cortex_m::transpose.out": ("input", "perm", "out"),
    "cortex_m::pad.out": ("input", "pre_pad", "post_pad", "pad_value", "out"),
    "cortex_m::quantized_conv2d.out": (
        "input", "weight", "bias", "stride", "padding", "dilation", "input_offset",
        "output_offset", "requantize_multipliers", "requantize_shifts", "activation_min",
        "activation_max", "scratch", "out"),
    "cortex_m::quantized_depthwise_conv2d.out": (
        "input", "weight", "bias", "stride", "padding", "dilation", "depth_multiplier",
        "input_offset", "output_offset", "requantize_multipliers", "requantize_shifts",
        "activation_min", "activation_max", "scratch", "out"),
    "cortex_m::quantized_transpose_conv2d.out": (
        "input", "weight", "bias", "stride", "padding", "output_padding", "dilation",
        "input_offset", "output_offset", "requantize_multipliers", "requantize_shifts",
        "activation_min", "activation_max", "scratch", "output_scratch", "out"),
    "cortex_m::quantized_avg_pool2d.out": (
        "input", "kernel_size", "stride", "padding", "zero_point", "multiplier", "shift",
        "scratch", "out"),
    "cortex_m::quantized_max_pool2d.out": (
        "input", "kernel_size", "stride", "padding", "dilation", "ceil_mode",
        "input_zero_point", "output_zero_point", "activation_min", "activation_max", "out"),
    "cortex_m::quantized_batch_matmul.out": (
        "lhs", "lhs_zero_point", "rhs_transposed", "rhs_zero_point", "output_zero_point",
        "output_multiplier", "output_shift", "scratch", "out"),
}

# CMSIS-NN's constants (Include/arm_nnsupportfunctions.h; the threshold as GCC and Clang
# build it, which is how ExecuTorch's binding is built).
CH_IN_BLOCK_MVE = 124
REVERSE_TCOL_EFFICIENT_THRESHOLD = 16
DW_ONE_INPUT_CH_THRESHOLD = 1
# What the runner's temp allocator may lose to aligning an allocation (MemoryAllocator
# aligns to 16 by default).
TEMP_ALIGNMENT = 16


# ---------------------------------------------------------------- CMSIS-NN's buffer sizes
# Dims are (n, h, w, c) tuples as cmsis_nn_dims; hw pairs are (h, w).

def _align4(x):
    return x + (4 - x % 4) % 4


def _conv_s8(input_nhwc, filter_nhwc):
    """arm_convolve_s8_get_buffer_size, the C path: 2 int16 columns."""
    return 2 * _align4(filter_nhwc[2] * filter_nhwc[1] * input_nhwc[3]) * 2


def _conv_s8_mve(input_nhwc, filter_nhwc):
    """arm_convolve_s8_get_buffer_size_mve: 4 int8 columns of whole 16-byte lanes."""
    return 4 * ((input_nhwc[3] * filter_nhwc[2] * filter_nhwc[1] + 15) // 16) * 16


def _is_1x1(input_nhwc, filter_nhwc, padding, dilation):
    return (padding == (0, 0) and filter_nhwc[1] == filter_nhwc[2] == 1
            and dilation == (1, 1) and input_nhwc[3] == filter_nhwc[3])


def _is_1xn(input_nhwc, filter_nhwc, stride, dilation):
    return (input_nhwc[1] == 1 and dilation[1] == 1 and filter_nhwc[1] == 1
            and (stride[1] * input_nhwc[3]) % 4 == 0 and input_nhwc[3] == filter_nhwc[3])


def _conv_1xn_mve(input_nhwc, filter_nhwc, output_nhwc, padding, stride):
    input_x, kernel_x, output_x = input_nhwc[2], filter_nhwc[2], output_nhwc[2]
    pad_x, stride_x, channels = padding[1], stride[1], input_nhwc[3]
    total_pad = (output_x - 1) * stride_x + kernel_x - input_x
    asym_pad = _c_mod(total_pad, 2)
    right_pad_num = (max(1, _c_div(pad_x + asym_pad + stride_x - 1, stride_x))
                     if pad_x + asym_pad != 0 else 0)
    left_pad_num = max(1, _c_div(pad_x + stride_x - 1, stride_x)) if pad_x != 0 else 0
    no_pad_num = max(output_x - (right_pad_num + left_pad_num), 0)
    if right_pad_num + no_pad_num + left_pad_num != output_x:
        return _conv_s8_mve(input_nhwc, filter_nhwc)
    pad_size_left = pad_x * channels
    pad_size_right = right_pad_num * channels if asym_pad else pad_size_left
    num_elem_left = kernel_x * channels
    num_elem_right = num_elem_left - channels
    return max(num_elem_left + pad_size_left, num_elem_right + pad_size_right)


def _c_div(a, b):
    """C's integer division (towards zero)."""
    return int(a / b) if (a < 0) != (b < 0) else a // b


def _c_mod(a, b):
    return a - _c_div(a, b) * b


def conv_wrapper(backend, input_nhwc, filter_nhwc, output_nhwc, padding, stride, dilation):
    """arm_convolve_wrapper_s8_get_buffer_size for a backend."""
    if _is_1x1(input_nhwc, filter_nhwc, padding, dilation):
        return 0        # 1x1: no buffer (the DSP's fast path asks for one only with ARMCC)
    if _is_1xn(input_nhwc, filter_nhwc, stride, dilation):
        if backend == "mve":
            return _conv_1xn_mve(input_nhwc, filter_nhwc, output_nhwc, padding, stride)
        return _conv_s8(input_nhwc, filter_nhwc)
    if backend == "mve":
        return _conv_s8_mve(input_nhwc, filter_nhwc)
    return _conv_s8(input_nhwc, filter_nhwc)


def depthwise_wrapper(backend, input_nhwc, filter_nhwc, output_nhwc, padding, stride,
                      dilation):
    """arm_depthwise_conv_wrapper_s8_get_buffer_size for a backend; filter_nhwc as
    ExecuTorch passes it: (output channels, kernel h, kernel w, 1)."""
    optimizable = (input_nhwc[3] == output_nhwc[3] and input_nhwc[0] == 1
                   and dilation == (1, 1))
    kernel_h, kernel_w = filter_nhwc[1], filter_nhwc[2]
    if backend == "mve":
        size = 4 * CH_IN_BLOCK_MVE * kernel_w * kernel_h if optimizable else 0
        if input_nhwc[3] == 1 and output_nhwc[3] > DW_ONE_INPUT_CH_THRESHOLD:
            # Converted to a convolution: its buffer, then the transposed filter.
            conv_filter = (filter_nhwc[3], kernel_h, kernel_w, filter_nhwc[0])
            to_conv = (conv_wrapper("mve", input_nhwc, conv_filter, output_nhwc, padding,
                                    stride, dilation) + math.prod(filter_nhwc))
            size = max(size, to_conv)
        return size
    if not optimizable or (kernel_w == kernel_h == 3 and padding[0] <= 1 and padding[1] <= 1):
        return 0
    return input_nhwc[3] * kernel_w * kernel_h * 2 if backend == "dsp" else 0


def avgpool(backend, output_width, channels):
    """arm_avgpool_s8_get_buffer_size for a backend."""
    return channels * 4 if backend == "dsp" else 0


def fully_connected(backend, output_features):
    """arm_fully_connected_s8_get_buffer_size for a backend (the MVE kernel sums)."""
    return output_features * 4 if backend == "mve" else 0


def _reverse_conv(input_nhwc, stride):
    return stride[0] <= 2 and stride[1] <= 2 and input_nhwc[3] > REVERSE_TCOL_EFFICIENT_THRESHOLD


def transpose_conv(backend, input_nhwc, filter_nhwc, output_nhwc, stride):
    """arm_transpose_conv_s8_get_buffer_size for a backend (DSP: the C path's)."""
    if _reverse_conv(input_nhwc, stride):
        reversed_input = (input_nhwc[0], input_nhwc[1] * stride[0], input_nhwc[2] * stride[1],
                          input_nhwc[3])
        return (_conv_s8_mve if backend == "mve" else _conv_s8)(reversed_input, filter_nhwc)
    buf_x = ((input_nhwc[2] - 1) * stride[1] + max(filter_nhwc[2], stride[0])) * output_nhwc[3]
    return buf_x * max(filter_nhwc[1], stride[0]) * 4


def transpose_conv_reverse(input_nhwc, filter_nhwc, stride):
    """arm_transpose_conv_s8_get_reverse_conv_buffer_size (every backend)."""
    return math.prod(filter_nhwc[:3]) * input_nhwc[3] if _reverse_conv(input_nhwc, stride) else 0


# ---------------------------------------------------------------- layouts

CHANNELS_LAST = (0, 2, 3, 1)


def _laid_out(tensor, dim_order):
    return len(tensor.sizes) == len(dim_order) and \
        dims_in_memory(tensor) == dims_in_memory(tensor, dim_order)


def _order(tensor):
    return "(%s)" % ", ".join(map(str, tensor.dim_order))


def _same_layout(a, *names):
    first = a[names[0]]
    for name in names[1:]:
        if tuple(a[name].sizes) == tuple(first.sizes) and \
                dims_in_memory(a[name]) != dims_in_memory(first):
            return "its %s is in dim order %s and its %s in %s" % (
                names[0], _order(first), name, _order(a[name]))
    return None


def _channels_last(a, *names):
    for name in names:
        tensor = a[name]
        if len(tensor.sizes) == 4 and not _laid_out(tensor, CHANNELS_LAST):
            return "its %s is in dim order %s, not channels-last (0, 2, 3, 1)" % (
                name, _order(tensor))
    return None


def _contiguous(a, *names):
    for name in names:
        tensor = a[name]
        if not _laid_out(tensor, tuple(range(len(tensor.sizes)))):
            return "its %s is in dim order %s, not contiguous" % (name, _order(tensor))
    return None


def _pad(a):
    problem = _same_layout(a, "input", "out")
    if problem is None and not (_laid_out(a["input"], tuple(range(len(a["input"].sizes))))
                                or _laid_out(a["input"], CHANNELS_LAST)):
        problem = "its input is in dim order %s, neither contiguous nor channels-last" % (
            _order(a["input"]),)
    return problem


# What each operator's kernel (ExecuTorch's, or ours in kernels/cortex_m) assumes of its
# tensors' dim orders; None: any (ours look at the dim orders: minimum, maximum,
# transpose, softmax, quantized_add, quantized_mul).
LAYOUTS = {
    "cortex_m::quantize_per_tensor.out": lambda a: _same_layout(a, "input", "out"),
    "cortex_m::dequantize_per_tensor.out": lambda a: _same_layout(a, "input", "out"),
    "cortex_m::quantized_activation.out": lambda a: _same_layout(a, "input", "out"),
    "cortex_m::pad.out": _pad,
    "cortex_m::quantized_conv2d.out": lambda a: _channels_last(a, "input", "out"),
    "cortex_m::quantized_depthwise_conv2d.out": lambda a: _channels_last(a, "input", "out"),
    "cortex_m::quantized_transpose_conv2d.out": lambda a: _channels_last(a, "input", "out"),
    "cortex_m::quantized_avg_pool2d.out": lambda a: _channels_last(a, "input", "out"),
    "cortex_m::quantized_max_pool2d.out": lambda a: _channels_last(a, "input", "out"),
    "cortex_m::quantized_linear.out": lambda a: _contiguous(a, "input", "out"),
    "cortex_m::quantized_batch_matmul.out": lambda a: _contiguous(a, "lhs", "rhs_transposed",
                                                                  "out"),
}


# ---------------------------------------------------------------- a program's calls

@dataclass
class Scratch:
    """One scratch argument of a call: its planned bytes, what each backend plans for the
    call's shapes, and what the firmware's C path needs."""
    name: str
    planned: int
    planned_by: Dict[str, int]
    needs: int

    @property
    def backends(self):
        """The backends that plan exactly this size."""
        return {b for b, size in self.planned_by.items() if size == self.planned}

    @property
    def short(self):
        """Bytes the firmware takes from its temp pool for this buffer."""
        return self.needs if self.planned < self.needs else 0


@dataclass
class CallForm:
    """What of one kernel call of a Cortex-M operator depends on the exporting target,
    and what the firmware makes of it."""
    index: int                      # the kernel call's place in the method, from 0
    op: str
    backends: set                   # the backends whose form it has
    what: str = ""                  # in words, for the build's report
    scratch: List[Scratch] = field(default_factory=list)
    temp: int = 0                   # bytes its kernel takes from the temp pool
    problem: Optional[str] = None   # why the firmware cannot compute it
    # whether the passes never make such a call (the program was edited): false for a
    # layout no kernel here walks, which a float operator in the graph can bring about
    edited: bool = True


def _nhwc(tensor):
    n, c, h, w = tensor.sizes
    return (n, h, w, c)


def _pair(values):
    return (int(values[0]), int(values[1]))


def _scratch(name, tensor, planned_by):
    planned = tensor.nbytes if isinstance(tensor, TensorArg) else 0
    return Scratch(name, planned, planned_by, planned_by[RUNS])


def _linear(form, a):
    kernel_sum, out_features = a["kernel_sum"], a["weights"].sizes[0]
    if kernel_sum is None:
        form.backends = {"scalar", "dsp"}
        form.what = "bias" if a["bias"] is not None else "no bias"
        return
    form.backends, form.what = {"mve"}, "kernel sums in place of the bias"
    if math.prod(kernel_sum.sizes) != out_features or kernel_sum.dtype != "Int":
        form.problem = ("its kernel_sum is %s[%s], not int32 with one value per output "
                        "feature (%d)" % (kernel_sum.dtype, ",".join(map(str, kernel_sum.sizes)),
                                          out_features))


def _conv(a):
    args = (_nhwc(a["input"]), tuple(a["weight"].sizes), _nhwc(a["out"]), _pair(a["padding"]),
            _pair(a["stride"]), _pair(a["dilation"]))
    return [_scratch("scratch", a["scratch"], {b: conv_wrapper(b, *args) for b in BACKENDS})]


def _depthwise(a):
    _, kernel_h, kernel_w, out_channels = a["weight"].sizes
    args = (_nhwc(a["input"]), (out_channels, kernel_h, kernel_w, 1), _nhwc(a["out"]),
            _pair(a["padding"]), _pair(a["stride"]), _pair(a["dilation"]))
    return [_scratch("scratch", a["scratch"], {b: depthwise_wrapper(b, *args) for b in BACKENDS})]


def _transpose_conv(a):
    input_nhwc, filter_nhwc, stride = _nhwc(a["input"]), tuple(a["weight"].sizes), _pair(a["stride"])
    reverse = transpose_conv_reverse(input_nhwc, filter_nhwc, stride)
    return [_scratch("scratch", a["scratch"], {
                b: transpose_conv(b, input_nhwc, filter_nhwc, _nhwc(a["out"]), stride)
                for b in BACKENDS}),
            _scratch("output_scratch", a["output_scratch"], {b: reverse for b in BACKENDS})]


def _avgpool(a):
    channels, output_width = a["input"].sizes[1], a["out"].sizes[3]
    return [_scratch("scratch", a["scratch"], {b: avgpool(b, output_width, channels)
                                               for b in BACKENDS})]


def _batch_matmul(a):
    rhs_cols = a["rhs_transposed"].sizes[-2]
    return [_scratch("scratch", a["scratch"], {b: fully_connected(b, rhs_cols) for b in BACKENDS})]


_SCRATCH_OF = {
    "cortex_m::quantized_conv2d.out": _conv,
    "cortex_m::quantized_depthwise_conv2d.out": _depthwise,
    "cortex_m::quantized_transpose_conv2d.out": _transpose_conv,
    "cortex_m::quantized_avg_pool2d.out": _avgpool,
    "cortex_m::quantized_batch_matmul.out": _batch_matmul,
}


def _temp_of_softmax(a):
    """kernels/cortex_m/op_softmax.cpp: a row in and a row out when the dimension is not
    innermost in memory (or the tensors' layouts differ)."""
    tensor = a["input"]
    dim = a["dim"] + len(tensor.sizes) if a["dim"] < 0 else a["dim"]
    innermost = tensor.dim_order and tensor.dim_order[-1] == dim
    if innermost and tuple(tensor.dim_order) == tuple(a["out"].dim_order):
        return 0
    return 2 * tensor.sizes[dim]


def _temp_of_transpose_conv(a):
    """kernels/cortex_m/op_quantized_transpose_conv2d.cpp: the whole unpadded output of a
    padded layer on CMSIS-NN's column path."""
    input_nhwc, stride, padding = _nhwc(a["input"]), _pair(a["stride"]), _pair(a["padding"])
    if _reverse_conv(input_nhwc, stride) or padding == (0, 0):
        return 0
    n, h, w, _ = input_nhwc
    _, kernel_h, kernel_w, _ = a["weight"].sizes
    full_h = (h - 1) * stride[0] + max(kernel_h, stride[0])
    full_w = (w - 1) * stride[1] + max(kernel_w, stride[1])
    return n * full_h * full_w * a["out"].sizes[1]


def _temp_of_conv(a, scratch_short):
    """kernels/cortex_m/op_quantized_conv2d.cpp: one allocation with a bias of zeros for a
    grouped convolution without bias (CMSIS-NN's C path steps a NULL bias pointer from
    group to group), then the scratch on a 16-byte boundary when the tensor is short."""
    groups = a["input"].sizes[1] // a["weight"].sizes[3]
    zero_bias = 4 * a["out"].sizes[1] if a["bias"] is None and groups > 1 else 0
    if not scratch_short:
        return zero_bias
    return -(-zero_bias // TEMP_ALIGNMENT) * TEMP_ALIGNMENT + scratch_short


def call_forms(method) -> List[CallForm]:
    """The backend-dependent form, temp memory and layout of each Cortex-M operator call
    of a method."""
    forms = []
    for index, call in enumerate(method.calls):
        names = SCHEMAS.get(call.op)
        if names is None:
            continue
        a = dict(zip(names, call.args))
        form = CallForm(index, call.op, set(BACKENDS))
        if call.op == "cortex_m::quantized_linear.out":
            _linear(form, a)
        elif call.op in _SCRATCH_OF:
            form.scratch = _SCRATCH_OF[call.op](a)
            for buffer in form.scratch:
                form.backends &= buffer.backends
                if buffer.planned < buffer.needs and not buffer.backends:
                    form.problem = (
                        "its %s buffer holds %d bytes, less than the %d bytes CMSIS-NN's C "
                        "path needs for these shapes, and no CMSIS-NN backend plans that "
                        "size (%s)" % (buffer.name, buffer.planned, buffer.needs, ", ".join(
                            "%s %d" % (b, buffer.planned_by[b]) for b in BACKENDS)))
            form.what = "scratch %s" % " + ".join(
                "%d B (C path %d B%s)" % (s.planned, s.needs, ", the rest from the temp pool"
                                          if s.short else "") for s in form.scratch)
            form.temp = max((s.short for s in form.scratch), default=0)
        if call.op == "cortex_m::softmax.out":
            form.temp = _temp_of_softmax(a)
        elif call.op == "cortex_m::quantized_transpose_conv2d.out":
            form.temp = max(form.temp, _temp_of_transpose_conv(a))
        elif call.op == "cortex_m::quantized_conv2d.out":
            form.temp = _temp_of_conv(a, form.temp)
        layout = LAYOUTS.get(call.op)
        if form.problem is None and layout is not None:
            problem = layout(a)
            if problem:
                form.problem = ("%s: the kernel walks its tensors as one layout and would put "
                                "the values in the wrong places" % problem)
                form.edited = False
        forms.append(form)
    return forms


def temp_pool_bytes(method) -> int:
    """The temp pool the firmware's Cortex-M operators need for a method (0: none): the
    most a kernel call takes from it (the runtime empties the pool after each
    instruction), with room for its alignment."""
    largest = max((f.temp for f in call_forms(method)), default=0)
    return largest + TEMP_ALIGNMENT if largest else 0


def targets(forms) -> set:
    """The backends every call's form agrees with (empty: a mix, or none)."""
    backends = set(BACKENDS)
    for form in forms:
        backends &= form.backends
    return backends


def summary(program) -> Optional[str]:
    """One line on the targets a program's Cortex-M operators were exported for, or None
    for a program without them."""
    if not program.methods:
        return None
    forms = call_forms(program.method)
    if not forms:
        return None
    backends = targets(forms)
    if backends == set(BACKENDS):
        where = "any target (no argument of theirs depends on it)"
    elif backends:
        where = " or ".join("%s (%s)" % (b if b == "scalar" else b.upper(), CORES[b])
                            for b in BACKENDS if b in backends)
    else:
        where = "no single CMSIS-NN backend (%s)" % ", ".join(
            "call %d %s" % (f.index, "/".join(sorted(f.backends)) or "none") for f in forms
            if f.backends != set(BACKENDS))
    sums = sum(1 for f in forms if "kernel sums" in f.what)
    short = [s for f in forms for s in f.scratch if s.short]
    notes = []
    if sums:
        notes.append("%d quantized_linear with kernel sums" % sums)
    if short:
        notes.append("%d scratch buffer%s below the C path's, topped up from the temp pool"
                     % (len(short), "s" if len(short) > 1 else ""))
    temp = temp_pool_bytes(program.method)
    if temp:
        notes.append("the kernels take up to %d bytes of temp pool" % temp)
    return "%s%s" % (where, "; " + "; ".join(notes) if notes else "")


def check(program, path, temp_pool=None):
    """Refuses, in one sentence, a program with a Cortex-M operator call the firmware
    cannot compute as the dialect's reference does, and a temp pool (temp_pool=, when
    given) too small for what its calls take from it."""
    method = program.method
    for form in call_forms(method):
        if form.problem:
            raise BuildSetupError(
                "The model '%s' cannot run as exported: kernel call %d of its method '%s' "
                "(%s): %s. %s"
                % (path, form.index, method.name, form.op, form.problem,
                   "ExecuTorch's Cortex-M passes do not make such a call from any "
                   "target (was the program edited?); export it again with "
                   "CortexMPassManager, with or without a CortexMTargetConfig."
                   if form.edited else
                   "No kernel of this build computes such a call as the cortex_m "
                   "dialect's reference does; please report it with the model."))
    needed = temp_pool_bytes(method)
    if temp_pool and temp_pool < needed:
        raise BuildSetupError(
            "$RUNNER_TEMP_POOL=%d is too small for the model '%s': its Cortex-M operators take "
            "up to %d bytes from the temp pool (scratch buffers planned for another "
            "CMSIS-NN backend than the C path, rows of a softmax across memory, a padded "
            "transposed convolution). Give $RUNNER_TEMP_POOL=%d or more, or leave it out: the "
            "build sizes it." % (temp_pool, path, needed, needed))
