"""Planned memory read in another order than written (etcorev.executorch.memory_order).

ExecuTorch v1.4.1 makes flatten(2) of a channels-last (N, C, H, W) activation an alias of
its memory as a contiguous (N, C, H*W) tensor: a network exported through the Cortex-M
route with a flatten before a batch matmul (found with random networks) ran to wrong
outputs. The build refuses such a program; a reshape that keeps the order, a scratch
buffer in reused memory and a copy made with .contiguous() are no such view. Likewise
ExecuTorch's portable cat of two channels-last activations (it copies memory blocks as if
contiguous: wrong outputs, also found with random networks).
"""

import pytest

from etcorev.errors import BuildSetupError
from etcorev.executorch import memory_order
from etcorev.pte.program import KernelCall, Method, Program, TensorArg

CHANNELS_LAST = (0, 2, 3, 1)


def _tensor(value, sizes, dim_order, memory=(1, 0), dtype="Char"):
    count = 1
    for size in sizes:
        count *= size
    return TensorArg(dtype, sizes, dim_order, False, count, value, memory)


def _method(*calls):
    return Method("forward", [], {}, [0, 4096], 1, 1, [],
                  calls=[KernelCall(op, args) for op, args in calls])


def _conv_then(reader):
    """A convolution writing value 1 (channels-last 1x8x6x5 at offset 0), then a kernel
    reading `reader` (value 2) and writing value 3 elsewhere."""
    conv_out = _tensor(1, (1, 8, 6, 5), CHANNELS_LAST)
    out = _tensor(3, (1, 30, 8), (0, 1, 2), memory=(1, 2048))
    return _method(("cortex_m::quantized_conv2d.out", (conv_out, conv_out)),
                   ("cortex_m::transpose.out", (reader, [0, 2, 1], out, out)))


@pytest.mark.quick
def test_a_flatten_of_a_channels_last_tensor_aliased_as_contiguous_is_refused():
    method = _conv_then(_tensor(2, (1, 8, 30), (0, 1, 2)))
    (found,) = memory_order.misread_views(method)
    assert found[:2] == (1, "cortex_m::transpose.out") and found[3] == 0
    program = Program("flat.pte", 0, 0, 0, 0, False, 0, [method])
    with pytest.raises(BuildSetupError, match=r"kernel call 1 .* made a view of the memory of "
                                              r"kernel call 0's Char\[1,8,6,5\] in dim order "
                                              r"\(0, 2, 3, 1\).*\.contiguous\(\)"):
        memory_order.check(program, "flat.pte")


@pytest.mark.quick
@pytest.mark.parametrize("reader", [
    _tensor(2, (1, 8, 6, 5), CHANNELS_LAST),                  # the same tensor's layout
    _tensor(2, (1, 8, 30, 1), (0, 2, 3, 1)),                  # H*W and C: one order
    _tensor(2, (1024,), (0,), dtype="Byte"),                  # a scratch buffer there
    _tensor(2, (1, 8, 30), (0, 1, 2), memory=(1, 4096)),      # somewhere else
], ids=["same-layout", "same-order", "scratch", "elsewhere"])
def test_what_reads_the_memory_in_its_order_is_no_misread_view(reader):
    assert memory_order.misread_views(_conv_then(reader)) == []


@pytest.mark.quick
def test_a_contiguous_source_may_be_reshaped():
    source = _tensor(1, (1, 8, 6, 5), (0, 1, 2, 3))
    view = _tensor(2, (1, 8, 30), (0, 1, 2))
    out = _tensor(3, (1, 30, 8), (0, 1, 2), memory=(1, 2048))
    method = _method(("aten::relu.out", (source, source)),
                     ("cortex_m::transpose.out", (view, [0, 2, 1], out, out)))
    assert memory_order.misread_views(method) == []


@pytest.mark.quick
def test_a_portable_cat_of_channels_last_tensors_is_refused_and_of_contiguous_ones_not():
    def cat_of(order):
        a, b = _tensor(1, (1, 4, 4, 7), order), _tensor(2, (1, 4, 4, 7), order, (1, 112))
        out = _tensor(3, (1, 8, 4, 7), order, (1, 224))
        return _method(("aten::cat.out", ([a, b], 1, out, out)))
    assert memory_order.contiguous_only_calls(cat_of((0, 1, 2, 3))) == []
    program = Program("cat.pte", 0, 0, 0, 0, False, 0, [cat_of(CHANNELS_LAST)])
    with pytest.raises(BuildSetupError, match=r"kernel call 0 .*aten::cat.out.* gets "
                                              r"Char\[1,4,4,7\] in dim order \(0, 2, 3, 1\)"):
        memory_order.check(program, "cat.pte")
