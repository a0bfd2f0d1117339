"""Planned memory read in another order than it was written: views of another tensor's
memory, and portable kernels that assume the contiguous layout.

Views.

ExecuTorch's memory planning makes a reshape (a flatten, a view) of a tensor an alias of
that tensor's memory: no kernel runs, the new tensor simply starts where the old one does.
That gives the same values only when both walk memory in their logical order, or have
one shape and one layout. ExecuTorch v1.4.1 also aliases a channels-last tensor (dim
order 0, 2, 3, 1: a Cortex-M convolution's output) as a contiguous one of another shape:
flatten(2) of an (N, C, H, W) activation becomes an (N, C, H*W) tensor over memory laid
out as (N, H, W, C). Every runtime then reads those values in the wrong order, and the
program's outputs are wrong with nothing failing. The build refuses such a program.

A view is recognised as a planned tensor that a kernel reads before any kernel has
written it (method inputs are never in memory another tensor used before them), of the
dtype and number of elements of the last tensor a kernel call had at the same place: the
tensor it views.

Portable kernels. ExecuTorch's portable aten::cat checks that its tensors share one dim
order and then copies blocks of memory as if that order were the contiguous one: two
channels-last activations concatenated along the channels come out interleaved wrong.
The build refuses such a call too (PORTABLE_CONTIGUOUS).

Moved results. torch.cond hands its branch's result on with a MoveCall: the destination
value then uses the source tensor's memory. ExecuTorch v1.4.1's memory planning treats
that memory as free after the move, so a later kernel (another torch.cond's branch, say)
may be given it while the destination is still to be read: the two results come out
equal, wrong, on every runtime. The build follows the control flow (a jump on a constant
bool always or never jumps) and refuses such a program (overwritten_moves); .clone() of
the result in the model avoids it.
"""

import itertools
import math

from etcorev.errors import BuildSetupError
from etcorev.pte.program import call_tensors, spans_overlap, written_tensors


def dims_in_memory(tensor, dim_order=None):
    """The order of a tensor's dimensions in memory (its own dim order, or dim_order),
    without those of size 1 (which are anywhere: two tensors of one shape are laid out
    alike when these agree)."""
    order = tensor.dim_order if dim_order is None else dim_order
    return tuple(d for d in order if tensor.sizes[d] != 1)


def in_logical_order(tensor):
    """Is the tensor laid out as the contiguous one (whatever its size-1 dimensions)?"""
    order = dims_in_memory(tensor)
    return order == tuple(sorted(order))


def _logical_at_memory(tensor):
    """The logical (row-major) index of the element at each memory position."""
    strides, stride = {}, 1
    for d in reversed(tensor.dim_order):
        strides[d] = stride
        stride *= tensor.sizes[d]
    at = [0] * stride
    for flat, index in enumerate(itertools.product(*map(range, tensor.sizes))):
        at[sum(i * strides[d] for d, i in enumerate(index))] = flat
    return at


def same_values(source, view):
    """Does view read source's elements in their logical order, as a reshape must?"""
    if tuple(source.sizes) == tuple(view.sizes):
        return dims_in_memory(source) == dims_in_memory(view)
    if in_logical_order(source) and in_logical_order(view):
        return True
    # other orders: element by element (only for these rare candidates)
    return _logical_at_memory(source) == _logical_at_memory(view)


def misread_views(method):
    """[(call index, operator, view, the call index and tensor it views)] of a method's
    views that read another order than their source's."""
    seen, last_at, found = set(), {}, []
    for index, call in enumerate(method.calls):
        tensors = [t for t in call_tensors(call.args) if t.memory is not None and not t.constant]
        written = {t.value for t in written_tensors(tensors)}
        for tensor in tensors:
            if tensor.value in seen or tensor.value in written:
                continue
            source = last_at.get(tensor.memory)
            # a reshape keeps the dtype and the number of elements (a scratch buffer a
            # kernel is handed, uint8 of its own size, is no view of what was there)
            if source is not None and source[1].value != tensor.value and \
                    source[1].dtype == tensor.dtype and \
                    math.prod(source[1].sizes) == math.prod(tensor.sizes) and \
                    not same_values(source[1], tensor):
                found.append((index, call.op, tensor) + source)
        for tensor in tensors:
            seen.add(tensor.value)
            last_at[tensor.memory] = (index, tensor)
    return found


def _describe(tensor):
    return "%s[%s] in dim order (%s)" % (tensor.dtype, ",".join(map(str, tensor.sizes)),
                                       ", ".join(map(str, tensor.dim_order)))


# Portable kernels that walk memory as the contiguous layout, whatever the dim order.
PORTABLE_CONTIGUOUS = {
    "aten::cat.out": "copies blocks of its tensors' memory in logical order",
}


def contiguous_only_calls(method):
    """[(call index, operator, what it does, the first tensor not in logical order)]."""
    found = []
    for index, call in enumerate(method.calls):
        what = PORTABLE_CONTIGUOUS.get(call.op)
        if what is None:
            continue
        for tensor in call_tensors(call.args):
            if not in_logical_order(tensor):
                found.append((index, call.op, what, tensor))
                break
    return found


def _successors(method, index):
    """The instructions that may run after instruction index of the first chain."""
    instruction = method.instructions[index]
    if instruction[0] != "jump":
        return [index + 1]
    condition, destination = instruction[1], instruction[2]
    if condition in method.constant_bools:        # else-skipping jumps: never or always
        return [index + 1] if method.constant_bools[condition] else [destination]
    return [index + 1, destination]


def _reachable(method, start):
    """Instruction indices reachable from start (inclusive), in no particular order."""
    seen, todo = set(), [start]
    while todo:
        index = todo.pop()
        if index in seen or not 0 <= index < len(method.instructions):
            continue
        seen.add(index)
        todo.extend(_successors(method, index))
    return seen


def _used(method, value, instructions):
    """Is value read by one of these instructions, or a method output (read at the end)?"""
    if value in method.output_values:
        return True
    for index in instructions:
        instruction = method.instructions[index]
        if instruction[0] == "move" and instruction[1] == value:
            return True
        if instruction[0] == "kernel" and any(
                t.value == value for t in call_tensors(method.calls[instruction[1]].args)):
            return True
    return False


def overwritten_moves(method):
    """[(instruction, moved value, destination value, call index, operator)]: a MoveCall
    (torch.cond hands a branch's result on with one) makes its destination use the
    source's memory; a kernel call that may run after it writes memory overlapping it
    while the destination is still to be read."""
    found = []
    for index, instruction in enumerate(method.instructions):
        if instruction[0] != "move" or instruction[1] not in method.value_memory:
            continue
        source, destination = instruction[1], instruction[2]
        memory = method.value_memory[source]
        for later in sorted(_reachable(method, index + 1)):
            if method.instructions[later][0] != "kernel":
                continue
            call_index = method.instructions[later][1]
            call = method.calls[call_index]
            tensors = [t for t in call_tensors(call.args) if t.memory is not None]
            written = [t for t in written_tensors(tensors) if t.value != destination
                       and spans_overlap(t.memory + (t.nbytes,), memory)]
            if written and _used(method, destination, _reachable(method, later + 1)):
                found.append((index, source, destination, call_index, call.op))
                break
    return found


def check(program, path):
    """Refuses, in one sentence, a program whose method to run overwrites a moved
    control-flow result before reading it, reads a view of a tensor in another order
    than the tensor's, or hands a portable kernel that walks memory as the contiguous
    layout a tensor in another."""
    method = program.method
    for index, source, destination, call_index, op in overwritten_moves(method)[:1]:
        raise BuildSetupError(
            "The model '%s' cannot run as exported: instruction %d of its method '%s' "
            "hands a control-flow result (value %d, as torch.cond does) on to value %d "
            "by reference, and ExecuTorch v1.4.1's memory planning gives the same memory "
            "to kernel call %d (%s) while value %d is still to be read: on any runtime "
            "that value would be overwritten, and the program's outputs wrong. Call "
            ".clone() on torch.cond's result in the model (the copy gets planned "
            "memory of its own) and export again."
            % (path, index, method.name, source, destination, call_index, op,
               destination))
    for index, op, what, tensor in contiguous_only_calls(method)[:1]:
        raise BuildSetupError(
            "The model '%s' cannot run as exported: kernel call %d of its method '%s' "
            "(%s, ExecuTorch's portable kernel) gets %s, but %s: its values would land "
            "in the wrong places. Call .contiguous() on its inputs in the model (the "
            "export then copies them to the contiguous layout) and export again."
            % (path, index, method.name, op, _describe(tensor), what))
    for index, op, view, source_index, source in misread_views(method)[:1]:
        raise BuildSetupError(
            "The model '%s' cannot run as exported: kernel call %d of its method '%s' "
            "(%s) reads %s, which ExecuTorch's memory planning made a view of the "
            "memory of kernel call %d's %s (a reshape or flatten of it): the view "
            "walks that memory in another order, so every runtime would read its "
            "values in the wrong places. Call .contiguous() on the tensor before "
            "the reshape in the model (the export then copies it to the contiguous "
            "layout) and export again."
            % (path, index, method.name, op, _describe(view), source_index,
               _describe(source)))
