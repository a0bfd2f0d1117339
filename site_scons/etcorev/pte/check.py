"""Semantic checks of an ExecuTorch program: what runtime/executor relies on.

:func:`check_program` is the second half of ``pte.validate_pte()``: after the
FlatBuffer itself has been verified (every reference inside the buffer), it checks
the cross references the runtime follows without checking them again: value,
operator, delegate and instruction indices, data segments inside the file,
constant and mutable data references, and tensors (rank, dim order, scalar type,
size) inside their planned buffers.  Every problem is a ``PteError``.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from etcorev.pte.flatbuf import Reader, Table
from etcorev.pte.program import (
    IA_DELEGATE_CALL, IA_FREE_CALL, IA_JUMP_FALSE_CALL, IA_KERNEL_CALL, IA_MOVE_CALL,
    KT_OPTIONAL_TENSOR_LIST, KT_TENSOR, KT_TENSOR_LIST, SCALAR_TYPES, TENSOR_DATA_EXTERNAL,
    Method, Program, PteError)

__all__ = ["check_program", "TENSOR_DIMENSION_LIMIT"]

TENSOR_DIMENSION_LIMIT = 16  # runtime/core/exec_aten/util/tensor_dimension_limit.h


def check_program(program: Program, root: Table, reader: Reader) -> None:
    """Raises PteError where program (read from root, the Program table of reader's
    buffer) breaks a rule the runtime relies on."""
    _Validator(program, root, reader).run()


class _Validator:
    def __init__(self, program: Program, prog: Table, r: Reader):
        self.p = program
        self.prog = prog
        self.r = r
        self.name = r.name

    def fail(self, msg: str) -> PteError:
        return PteError(f"{self.name} is not a valid ExecuTorch program: {msg}.", self.name)

    def run(self) -> None:
        p = self.p
        if not p.methods:
            raise self.fail("it contains no methods")
        names = [m.name for m in p.methods]
        for i, n in enumerate(names):
            if not n:
                raise self.fail(f"method {i} has no name")
            if names.index(n) != i:
                raise self.fail(f"method name '{n}' is used twice")
        self.segment_sizes = self.check_segments()
        self.check_constants()
        for i, plan in enumerate(self.prog.tables("execution_plan")):
            self.check_plan(plan, p.methods[i])

    # -- program level -------------------------------------------------------
    def check_segments(self) -> List[int]:
        p = self.p
        used = [seg for seg in p.segments if seg.size]
        if used and not p.segment_base_offset:
            raise self.fail(f"it declares {len(used)} non-empty data segment(s) but has no "
                            "extended header giving their location")
        for i, seg in enumerate(p.segments):
            start = p.segment_base_offset + seg.offset
            if start + seg.size > p.size:
                raise PteError(
                    f"{self.name} is truncated: data segment {i} ({seg.size} bytes at "
                    f"offset {start}) extends past the end of the file ({p.size} bytes).",
                    self.name)
            if p.segment_data_size and seg.offset + seg.size > p.segment_data_size:
                raise self.fail(f"data segment {i} ({seg.size} bytes at segment offset "
                                f"{seg.offset}) extends past the segment data "
                                f"({p.segment_data_size} bytes)")
        return [seg.size for seg in p.segments]

    def check_subsegments(self, t: Table, what: str) -> Tuple[int, List[int]]:
        index = t.scalar("segment_index")
        offsets = t.scalars("offsets") or []
        if index >= len(self.segment_sizes):
            raise self.fail(f"{what} refers to data segment {index} but the program has "
                            f"{len(self.segment_sizes)}")
        for off in offsets:
            if off > self.segment_sizes[index]:
                raise self.fail(f"{what} has offset {off} beyond the end of data segment "
                                f"{index} ({self.segment_sizes[index]} bytes)")
        return index, offsets

    def check_constants(self) -> None:
        prog = self.prog
        self.constant_offsets: Optional[List[int]] = None
        self.constant_segment_size = 0
        cs = prog.table("constant_segment")
        offsets = cs.scalars("offsets") if cs is not None else None
        n_buffers = prog.vector_size("constant_buffer") or 0
        if offsets:
            if len(offsets) > 1:
                if n_buffers:
                    raise self.fail(f"constant_buffer contains {n_buffers} items and "
                                    f"constant_segment {len(offsets)} offsets; only one "
                                    "may be used")
                index, offsets = self.check_subsegments(cs, "the constant segment")
                self.constant_segment_size = self.segment_sizes[index]
            self.constant_offsets = offsets
        self.constant_buffer_sizes: List[int] = []
        buffers = prog.tables("constant_buffer")
        for b in buffers if buffers is not None else ():
            self.constant_buffer_sizes.append(b.vector_size("storage") or 0)
        self.mutable_offsets: Optional[List[int]] = None
        mds = prog.tables("mutable_data_segments")
        for i, t in enumerate(mds if mds is not None else ()):
            _, offs = self.check_subsegments(t, f"mutable data segment {i}")
            if i == 0:
                self.mutable_offsets = offs
        nd = prog.tables("named_data")
        for i, t in enumerate(nd if nd is not None else ()):
            if t.string("key") is None:
                raise self.fail(f"named data entry {i} has no key")
            index = t.scalar("segment_index")
            if index >= len(self.segment_sizes):
                raise self.fail(f"named data entry {i} refers to data segment {index} but "
                                f"the program has {len(self.segment_sizes)}")
        self.num_inline_delegate_data = prog.vector_size("backend_delegate_data") or 0

    # -- per method ------------------------------------------------------------
    def check_plan(self, plan: Table, method: Method) -> None:
        where = f"method '{method.name}'"
        values = plan.tables("values")
        if values is None:
            raise self.fail(f"{where} has no values table")
        nvalues = len(values)
        buffers = method.non_const_buffer_sizes
        for i, s in enumerate(buffers):
            if s < 0:
                raise self.fail(f"{where} has a negative planned buffer size ({s}) at index {i}")

        def check_index(i: int, what: str) -> None:
            if not 0 <= i < nvalues:
                raise self.fail(f"{where}: {what} refers to value {i} but the method has "
                                f"{nvalues} values")

        for field_name in ("inputs", "outputs"):
            for i in plan.scalars(field_name) or []:
                check_index(i, f"{field_name[:-1]}")

        ops = plan.tables("operators")
        nops = len(ops) if ops is not None else 0
        delegates = plan.tables("delegates")
        ndelegates = len(delegates) if delegates is not None else 0
        for i, d in enumerate(delegates if delegates is not None else ()):
            if d.string("id") is None:
                raise self.fail(f"{where}: delegate {i} has no backend id")
            ref = d.table("processed")
            if ref is None:
                raise self.fail(f"{where}: delegate {i} has no processed data reference")
            loc, index = ref.scalar("location"), ref.scalar("index")
            if loc == 0:
                limit, kind = self.num_inline_delegate_data, "inline delegate data entries"
            elif loc == 1:
                limit, kind = len(self.segment_sizes), "data segments"
            else:
                raise self.fail(f"{where}: delegate {i} has unknown data location {loc}")
            if index >= limit:
                raise self.fail(f"{where}: delegate {i} refers to entry {index} of the "
                                f"{kind} but there are {limit}")

        for i, dev in enumerate(plan.tables("non_const_buffer_device") or ()):
            bi = dev.scalar("buffer_idx")
            if not 0 <= bi < len(buffers):
                raise self.fail(f"{where}: buffer device entry {i} refers to planned buffer "
                                f"{bi} but there are {len(buffers)}")

        for vi, v in enumerate(values):
            tag, val = v.union("val")
            what = f"{where}, value {vi}"
            if tag == KT_TENSOR:
                if val is None:
                    raise self.fail(f"{what}: tensor has no data")
                self.check_tensor(val, what, buffers)
            elif tag in (KT_TENSOR_LIST, KT_OPTIONAL_TENSOR_LIST):
                items = val.scalars("items") if val is not None else None
                if items is None:
                    raise self.fail(f"{what}: tensor list has no items")
                for item in items:
                    if tag == KT_OPTIONAL_TENSOR_LIST and item == -1:
                        continue
                    check_index(item, f"tensor list value {vi}")
                    if tag == KT_TENSOR_LIST and values[item].scalar("val_type") != KT_TENSOR:
                        raise self.fail(f"{what}: tensor list item {item} is not a tensor")

        chains = plan.tables("chains")
        for ci, chain in enumerate(chains if chains is not None else ()):
            for field_name in ("inputs", "outputs"):
                for i in chain.scalars(field_name) or []:
                    check_index(i, f"chain {ci} {field_name[:-1]}")
            instructions = chain.tables("instructions")
            ninstr = len(instructions) if instructions is not None else 0
            for ii, inst in enumerate(instructions if instructions is not None else ()):
                what = f"chain {ci}, instruction {ii}"
                tag, call = inst.union("instr_args")
                if call is None:
                    raise self.fail(f"{where}, {what}: unknown or empty instruction "
                                    f"(type {tag})")
                if tag == IA_KERNEL_CALL:
                    op = call.scalar("op_index")
                    if not 0 <= op < nops:
                        raise self.fail(f"{where}, {what}: operator index {op} is out of "
                                        f"range ({nops} operators)")
                    for a in call.scalars("args") or []:
                        check_index(a, what)
                elif tag == IA_DELEGATE_CALL:
                    di = call.scalar("delegate_index")
                    if not 0 <= di < ndelegates:
                        raise self.fail(f"{where}, {what}: delegate index {di} is out of "
                                        f"range ({ndelegates} delegates)")
                    for a in call.scalars("args") or []:
                        check_index(a, what)
                elif tag == IA_MOVE_CALL:
                    check_index(call.scalar("move_from"), what)
                    check_index(call.scalar("move_to"), what)
                elif tag == IA_JUMP_FALSE_CALL:
                    check_index(call.scalar("cond_value_index"), what)
                    dest = call.scalar("destination_instruction")
                    # The instruction count itself is the end of the chain (Method::execute
                    # runs while the index is below it): torch.cond's false branch jumps there.
                    if not 0 <= dest <= ninstr:
                        raise self.fail(f"{where}, {what}: jump destination {dest} is out "
                                        f"of range ({ninstr} instructions)")
                elif tag == IA_FREE_CALL:
                    check_index(call.scalar("value_index"), what)

    def check_tensor(self, t: Table, what: str, buffers: List[int]) -> None:
        sizes = t.scalars("sizes")
        if sizes is None:
            raise self.fail(f"{what}: tensor has no sizes")
        if len(sizes) > TENSOR_DIMENSION_LIMIT:
            raise self.fail(f"{what}: tensor rank {len(sizes)} exceeds the limit of "
                            f"{TENSOR_DIMENSION_LIMIT}")
        if any(s < 0 for s in sizes):
            raise self.fail(f"{what}: tensor has a negative size {sizes}")
        dim_order = t.scalars("dim_order")
        if dim_order is None:
            raise self.fail(f"{what}: tensor has no dim_order")
        if sorted(dim_order) != list(range(len(sizes))):
            raise self.fail(f"{what}: tensor dim_order {dim_order} does not match its "
                            f"sizes {sizes}")
        dtype = t.scalar("scalar_type")
        if dtype not in SCALAR_TYPES:
            raise self.fail(f"{what}: tensor has invalid scalar type {dtype}")
        if t.scalar("storage_offset") != 0:
            raise self.fail(f"{what}: tensor has a non-zero storage offset, which the "
                            "runtime does not support")
        dynamism = t.scalar("shape_dynamism")
        if dynamism not in (0, 1):
            raise self.fail(f"{what}: tensor shape dynamism {dynamism} is not supported "
                            "by the runtime")
        nbytes = SCALAR_TYPES[dtype][1]
        for s in sizes:
            nbytes *= s
        alloc = t.table("allocation_info")
        extra = t.table("extra_tensor_info")
        external = extra is not None and extra.scalar("location") == TENSOR_DATA_EXTERNAL
        if external and extra.string("fully_qualified_name") is None:
            raise self.fail(f"{what}: external tensor has no fully qualified name")
        data_idx = t.scalar("data_buffer_idx")
        if alloc is not None:
            mem_id = alloc.scalar("memory_id")
            offset = alloc.scalar("memory_offset_low") | (alloc.scalar("memory_offset_high") << 32)
            if not 1 <= mem_id < len(buffers):
                raise self.fail(f"{what}: tensor is planned into buffer {mem_id} but the "
                                f"method has {max(len(buffers) - 1, 0)} planned buffer(s) "
                                "(ids start at 1)")
            if offset + nbytes > buffers[mem_id]:
                raise self.fail(f"{what}: tensor ({nbytes} bytes at offset {offset}) does not "
                                f"fit in planned buffer {mem_id} ({buffers[mem_id]} bytes)")
            if data_idx > 0 and not external:
                if self.mutable_offsets is None or data_idx >= len(self.mutable_offsets):
                    raise self.fail(f"{what}: tensor refers to mutable data {data_idx}, "
                                    "which the program does not contain")
        elif data_idx > 0 and not external:
            if self.constant_offsets is not None and len(self.constant_offsets) > 1:
                if data_idx >= len(self.constant_offsets):
                    raise self.fail(f"{what}: tensor refers to constant {data_idx} but the "
                                    f"constant segment has {len(self.constant_offsets)} entries")
                off = self.constant_offsets[data_idx]
                if off + nbytes > self.constant_segment_size:
                    raise self.fail(f"{what}: constant tensor ({nbytes} bytes at offset {off}) "
                                    "extends past the end of the constant segment "
                                    f"({self.constant_segment_size} bytes)")
            elif data_idx >= len(self.constant_buffer_sizes):
                raise self.fail(f"{what}: tensor refers to constant buffer {data_idx} but the "
                                f"program has {len(self.constant_buffer_sizes)}")
