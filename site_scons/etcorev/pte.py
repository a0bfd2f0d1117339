#!/usr/bin/env python3
"""Reader and validator for ExecuTorch program files (``.pte``).

Pure Python (standard library only).  A ``.pte`` file is a FlatBuffer whose
schema is ``schema/program.fbs`` (with ``schema/scalar_type.fbs``) of the
ExecuTorch source tree, file identifier ``ET12``.  When the program has data
segments (e.g. constant weights), an extended header follows the identifier
at offset 8::

    "eh00"  u32 header_length  u64 program_size  u64 segment_base_offset
            u64 segment_data_size (only when header_length >= 32)

and the segments live after the FlatBuffer data, at ``segment_base_offset``.

``read_pte()`` extracts what a firmware build needs: the methods, their
operators, the kernel keys that ExecuTorch's ``codegen/tools/gen_oplist.py``
reports for selective builds (same algorithm as ``selective_build.cpp``'s
``_get_io_metadata_for_program_operators``), and the memory-planned buffer
sizes.  ``validate_pte()`` additionally verifies the whole FlatBuffer (like
the FlatBuffers verifier the runtime uses) and the cross references the
runtime relies on (indices, segments inside the file, tensors inside their
buffers).  Every problem with the input is reported as ``PteError``.

Command line: ``python pte.py FILE`` prints operators, kernel keys and buffer
sizes as JSON.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

__all__ = [
    "PteError",
    "Program",
    "Method",
    "DataSegment",
    "ValueSpec",
    "DTYPE_NAMES",
    "read_pte",
    "validate_pte",
    "main",
]

FILE_IDENTIFIER = b"ET12"
EXTENDED_HEADER_MAGIC = b"eh00"
_HEADER_OFFSET = 8  # root offset (4) + file identifier (4)
_MIN_HEADER_LENGTH = 24  # magic, length, program_size, segment_base_offset
_HEADER_LENGTH_WITH_DATA_SIZE = 32  # ... + segment_data_size
TENSOR_DIMENSION_LIMIT = 16  # runtime/core/exec_aten/util/tensor_dimension_limit.h

# ExecuTorch ScalarType values (runtime/core/portable_type/scalar_type.h):
# value -> (name, element size in bytes).  The runtime accepts 0..29.
SCALAR_TYPES: Dict[int, Tuple[str, int]] = {
    0: ("Byte", 1), 1: ("Char", 1), 2: ("Short", 2), 3: ("Int", 4),
    4: ("Long", 8), 5: ("Half", 2), 6: ("Float", 4), 7: ("Double", 8),
    8: ("ComplexHalf", 4), 9: ("ComplexFloat", 8), 10: ("ComplexDouble", 16),
    11: ("Bool", 1), 12: ("QInt8", 1), 13: ("QUInt8", 1), 14: ("QInt32", 4),
    15: ("BFloat16", 2), 16: ("QUInt4x2", 1), 17: ("QUInt2x4", 1),
    18: ("Bits1x8", 1), 19: ("Bits2x4", 1), 20: ("Bits4x2", 1),
    21: ("Bits8", 1), 22: ("Bits16", 2), 23: ("Float8_e5m2", 1),
    24: ("Float8_e4m3fn", 1), 25: ("Float8_e5m2fnuz", 1),
    26: ("Float8_e4m3fnuz", 1), 27: ("UInt16", 2), 28: ("UInt32", 4),
    29: ("UInt64", 8),
}


# The names inputs and outputs go by (the manifest's, torch's): ScalarType name -> name.
DTYPE_NAMES = {"Float": "float32", "Double": "float64", "Half": "float16",
               "BFloat16": "bfloat16", "Int": "int32", "Long": "int64", "Short": "int16",
               "Char": "int8", "Byte": "uint8", "Bool": "bool"}
_KT_NAMES = {1: "none", 2: "int", 3: "bool", 4: "double", 5: "tensor", 6: "string",
             7: "int list", 8: "double list", 9: "bool list", 10: "tensor list",
             11: "optional tensor list"}


class PteError(Exception):
    """A .pte file is missing, unreadable, malformed or inconsistent.

    ``str(err)`` is a user-facing message naming the file; ``err.path`` is
    the file name (or ``"<bytes>"``).
    """

    def __init__(self, message: str, path: Optional[str] = None):
        super().__init__(message)
        self.path = path


# --------------------------------------------------------------------------
# Schema (schema/program.fbs).  Field order defines the vtable slots; a union
# field takes two slots (<name>_type: u8, then <name>: offset).
# --------------------------------------------------------------------------

_TABLES: Dict[str, Tuple[Tuple[str, str], ...]] = {
    "ContainerMetadata": (("encoded_inp_str", "string"), ("encoded_out_str", "string")),
    "Null": (),
    "AllocationDetails": (
        ("memory_id", "u32"), ("memory_offset_low", "u32"), ("memory_offset_high", "u32")),
    "ExtraTensorInfo": (
        ("mutable_data_segments_idx", "u64"), ("fully_qualified_name", "string"),
        ("location", "i8"), ("device_type", "i8"), ("device_index", "i8")),
    "Tensor": (
        ("scalar_type", "i8"), ("storage_offset", "i32"), ("sizes", "[i32]"),
        ("dim_order", "[u8]"), ("requires_grad", "bool"), ("data_buffer_idx", "u32"),
        ("allocation_info", "AllocationDetails"), ("layout", "i8"),
        ("shape_dynamism", "i8"), ("extra_tensor_info", "ExtraTensorInfo")),
    "Int": (("int_val", "i64"),),
    "Bool": (("bool_val", "bool"),),
    "Double": (("double_val", "f64"),),
    "String": (("string_val", "string"),),
    "IntList": (("items", "[i64]"),),
    "DoubleList": (("items", "[f64]"),),
    "BoolList": (("items", "[bool]"),),
    "TensorList": (("items", "[i32]"),),
    "OptionalTensorList": (("items", "[i32]"),),
    "EValue": (("val", "union:KernelTypes"),),
    "Operator": (("name", "string"), ("overload", "string")),
    "KernelCall": (("op_index", "i32"), ("args", "[i32]")),
    "DelegateCall": (("delegate_index", "i32"), ("args", "[i32]")),
    "MoveCall": (("move_from", "i32"), ("move_to", "i32")),
    "JumpFalseCall": (("cond_value_index", "i32"), ("destination_instruction", "i32")),
    "FreeCall": (("value_index", "i32"),),
    "Instruction": (("instr_args", "union:InstructionArguments"),),
    "Frame": (("filename", "string"), ("lineno", "i32"), ("name", "string"),
              ("context", "string")),
    "FrameList": (("items", "[Frame]"),),
    "BackendDelegateDataReference": (("location", "i8"), ("index", "u32")),
    "CompileSpec": (("key", "string"), ("value", "[u8]")),
    "BackendDelegate": (("id", "string"), ("processed", "BackendDelegateDataReference"),
                        ("compile_specs", "[CompileSpec]")),
    "Chain": (("inputs", "[i32]"), ("outputs", "[i32]"),
              ("instructions", "[Instruction]"), ("stacktrace", "[FrameList]")),
    "ExecutionPlan": (
        ("name", "string"), ("container_meta_type", "ContainerMetadata"),
        ("values", "[EValue]"), ("inputs", "[i32]"), ("outputs", "[i32]"),
        ("chains", "[Chain]"), ("operators", "[Operator]"),
        ("delegates", "[BackendDelegate]"), ("non_const_buffer_sizes", "[i64]"),
        ("non_const_buffer_device", "[NonConstBufferDevice]")),
    "NonConstBufferDevice": (("buffer_idx", "i32"), ("device_type", "i8"),
                             ("device_index", "i8")),
    "Buffer": (("storage", "[u8]"),),
    "BackendDelegateInlineData": (("data", "[u8]"),),
    "DataSegment": (("offset", "u64"), ("size", "u64")),
    "SubsegmentOffsets": (("segment_index", "u32"), ("offsets", "[u64]")),
    "NamedData": (("key", "string"), ("segment_index", "u32")),
    "Program": (
        ("version", "u32"), ("execution_plan", "[ExecutionPlan]"),
        ("constant_buffer", "[Buffer]"),
        ("backend_delegate_data", "[BackendDelegateInlineData]"),
        ("segments", "[DataSegment]"), ("constant_segment", "SubsegmentOffsets"),
        ("mutable_data_segments", "[SubsegmentOffsets]"), ("named_data", "[NamedData]")),
}

_UNIONS: Dict[str, Tuple[Optional[str], ...]] = {
    "KernelTypes": (None, "Null", "Int", "Bool", "Double", "Tensor", "String",
                    "IntList", "DoubleList", "BoolList", "TensorList",
                    "OptionalTensorList"),
    "InstructionArguments": (None, "KernelCall", "DelegateCall", "MoveCall",
                             "JumpFalseCall", "FreeCall"),
}

# KernelTypes / InstructionArguments union tags used below.
_KT_NULL = 1
_KT_TENSOR = 5
_KT_TENSOR_LIST = 10
_KT_OPTIONAL_TENSOR_LIST = 11
_IA_KERNEL_CALL = 1
_IA_DELEGATE_CALL = 2
_IA_MOVE_CALL = 3
_IA_JUMP_FALSE_CALL = 4
_IA_FREE_CALL = 5

_SCALARS: Dict[str, struct.Struct] = {
    "bool": struct.Struct("<B"), "u8": struct.Struct("<B"), "i8": struct.Struct("<b"),
    "u16": struct.Struct("<H"), "i32": struct.Struct("<i"), "u32": struct.Struct("<I"),
    "i64": struct.Struct("<q"), "u64": struct.Struct("<Q"), "f64": struct.Struct("<d"),
}
_VECTOR_CODES = {"bool": "B", "u8": "B", "i8": "b", "i32": "i", "u32": "I",
                 "i64": "q", "u64": "Q", "f64": "d"}


def _build_layouts() -> Dict[str, Dict[str, Tuple[int, str]]]:
    """table -> field name -> (vtable slot, kind)."""
    layouts: Dict[str, Dict[str, Tuple[int, str]]] = {}
    for table, fields in _TABLES.items():
        slot = 0
        layout: Dict[str, Tuple[int, str]] = {}
        for name, kind in fields:
            if kind.startswith("union:"):
                layout[name + "_type"] = (slot, "u8")
                slot += 1
            layout[name] = (slot, kind)
            slot += 1
        layouts[table] = layout
    return layouts


_LAYOUTS = _build_layouts()


# --------------------------------------------------------------------------
# Bounds-checked FlatBuffer access.
# --------------------------------------------------------------------------

class _Reader:
    """The FlatBuffer part of a .pte file: bytes [0, end)."""

    def __init__(self, data: memoryview, end: int, name: str):
        self.data = data
        self.end = end
        self.name = name

    def corrupt(self, where: str, detail: str) -> PteError:
        return PteError(
            f"{self.name} is truncated or corrupt: {where}: {detail} "
            f"(the program data is {self.end} bytes).", self.name)

    def scalar(self, kind: str, pos: int, where: str) -> Any:
        st = _SCALARS[kind]
        if pos < 0 or pos + st.size > self.end:
            raise self.corrupt(where, f"{st.size}-byte value at offset {pos} is out of range")
        if pos % st.size:
            raise self.corrupt(where, f"value at offset {pos} is misaligned")
        value = st.unpack_from(self.data, pos)[0]
        return bool(value) if kind == "bool" else value

    def deref(self, pos: int, where: str) -> int:
        """Follows the uoffset stored at pos (like flatbuffers VerifyOffset)."""
        if pos < 0 or pos + 4 > self.end or pos % 4:
            raise self.corrupt(where, f"reference at offset {pos} is out of range or misaligned")
        o = _SCALARS["u32"].unpack_from(self.data, pos)[0]
        if o == 0 or o >= 0x80000000 or pos + o >= self.end:
            raise self.corrupt(where, f"reference at offset {pos} points to {pos + o}, "
                                      "outside the program data")
        return pos + o

    def vector_header(self, pos: int, elem_size: int, where: str) -> Tuple[int, int]:
        """Returns (first element position, length) of the vector at pos."""
        if pos % 4 or pos + 4 > self.end:
            raise self.corrupt(where, f"vector at offset {pos} is out of range or misaligned")
        n = _SCALARS["u32"].unpack_from(self.data, pos)[0]
        if pos + 4 + n * elem_size > self.end:
            raise self.corrupt(where, f"vector at offset {pos} with {n} elements "
                                      "extends past the end of the program data")
        return pos + 4, n

    def string_bytes(self, pos: int, where: str) -> bytes:
        start, n = self.vector_header(pos, 1, where)
        if start + n + 1 > self.end or self.data[start + n] != 0:
            raise self.corrupt(where, f"string at offset {pos} is not terminated")
        return bytes(self.data[start:start + n])

    def table(self, pos: int, type_name: str, where: str) -> "_Table":
        return _Table(self, pos, type_name, where)


class _Table:
    __slots__ = ("r", "pos", "type", "where", "_vt", "_vtsize")

    def __init__(self, r: _Reader, pos: int, type_name: str, where: str):
        self.r = r
        self.pos = pos
        self.type = type_name
        self.where = where
        if pos < 0 or pos + 4 > r.end or pos % 4:
            raise r.corrupt(where, f"{type_name} table at offset {pos} is out of range "
                                   "or misaligned")
        vt = pos - _SCALARS["i32"].unpack_from(r.data, pos)[0]
        if vt < 0 or vt + 2 > r.end or vt % 2:
            raise r.corrupt(where, f"{type_name} table at offset {pos} has an invalid "
                                   f"vtable offset ({vt})")
        vtsize = _SCALARS["u16"].unpack_from(r.data, vt)[0]
        if vtsize % 2 or vt + vtsize > r.end:
            raise r.corrupt(where, f"vtable of the {type_name} table at offset {pos} is "
                                   "out of range")
        self._vt = vt
        self._vtsize = vtsize

    def _field(self, name: str) -> Tuple[int, str]:
        slot, kind = _LAYOUTS[self.type][name]
        voff = 4 + 2 * slot
        if voff + 2 > self._vtsize:
            return 0, kind
        fo = _SCALARS["u16"].unpack_from(self.r.data, self._vt + voff)[0]
        return (self.pos + fo if fo else 0), kind

    def _where(self, name: str) -> str:
        return f"{self.where}.{name}"

    def has(self, name: str) -> bool:
        return self._field(name)[0] != 0

    def scalar(self, name: str) -> Any:
        pos, kind = self._field(name)
        if not pos:
            return False if kind == "bool" else (0.0 if kind == "f64" else 0)
        return self.r.scalar(kind, pos, self._where(name))

    def table(self, name: str) -> Optional["_Table"]:
        pos, kind = self._field(name)
        if not pos:
            return None
        where = self._where(name)
        return _Table(self.r, self.r.deref(pos, where), kind, where)

    def string(self, name: str) -> Optional[str]:
        pos, _ = self._field(name)
        if not pos:
            return None
        where = self._where(name)
        raw = self.r.string_bytes(self.r.deref(pos, where), where)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise self.r.corrupt(where, f"string {raw!r} is not valid UTF-8") from None

    def _vector(self, name: str) -> Optional[Tuple[int, int, str, str]]:
        pos, kind = self._field(name)
        if not pos:
            return None
        where = self._where(name)
        elem = kind[1:-1]
        elem_size = _SCALARS[elem].size if elem in _SCALARS else 4
        start, n = self.r.vector_header(self.r.deref(pos, where), elem_size, where)
        return start, n, elem, where

    def scalars(self, name: str) -> Optional[List[Any]]:
        """A vector of scalars as a list, or None when the field is absent."""
        vec = self._vector(name)
        if vec is None:
            return None
        start, n, elem, _ = vec
        values = list(struct.unpack_from(f"<{n}{_VECTOR_CODES[elem]}", self.r.data, start))
        return [bool(v) for v in values] if elem == "bool" else values

    def vector_size(self, name: str) -> Optional[int]:
        vec = self._vector(name)
        return None if vec is None else vec[1]

    def tables(self, name: str) -> Optional["_TableVector"]:
        vec = self._vector(name)
        if vec is None:
            return None
        start, n, elem, where = vec
        return _TableVector(self.r, start, n, elem, where)

    def union(self, name: str) -> Tuple[int, Optional["_Table"]]:
        """(tag, value table or None).  Unknown tags give (tag, None)."""
        tag = self.scalar(name + "_type")
        pos, kind = self._field(name)
        if tag == 0 or not pos:
            return tag, None
        members = _UNIONS[kind[len("union:"):]]
        if tag >= len(members):
            return tag, None
        where = self._where(name)
        return tag, _Table(self.r, self.r.deref(pos, where), members[tag], where)


class _TableVector:
    """A lazily decoded vector of tables."""

    __slots__ = ("r", "start", "n", "type", "where")

    def __init__(self, r: _Reader, start: int, n: int, type_name: str, where: str):
        self.r, self.start, self.n, self.type, self.where = r, start, n, type_name, where

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> _Table:
        if not 0 <= i < self.n:
            raise IndexError(i)
        where = f"{self.where}[{i}]"
        return _Table(self.r, self.r.deref(self.start + 4 * i, where), self.type, where)

    def __iter__(self) -> Iterator[_Table]:
        for i in range(self.n):
            yield self[i]


def _verify_table(t: _Table, seen: set) -> None:
    """Bounds-checks every field of t and of everything it references,
    like the FlatBuffers verifier (flatbuffers::Verifier)."""
    key = (t.pos, t.type)
    if key in seen:
        return
    seen.add(key)
    r = t.r
    for name, kind in _TABLES[t.type]:
        if kind.startswith("union:"):
            pos, _ = t._field(name)
            if pos:
                r.deref(pos, t._where(name))
            tag, member = t.union(name)
            if member is not None:
                _verify_table(member, seen)
        elif kind in _SCALARS:
            t.scalar(name)
        elif kind == "string":
            pos, _ = t._field(name)
            if pos:
                where = t._where(name)
                r.string_bytes(r.deref(pos, where), where)
        elif kind.startswith("["):
            elem = kind[1:-1]
            if elem in _TABLES:
                vec = t.tables(name)
                if vec is not None:
                    for child in vec:
                        _verify_table(child, seen)
            else:
                t._vector(name)
        else:
            child = t.table(name)
            if child is not None:
                _verify_table(child, seen)


# --------------------------------------------------------------------------
# Results.
# --------------------------------------------------------------------------

@dataclass
class DataSegment:
    offset: int  # relative to Program.segment_base_offset
    size: int


@dataclass(frozen=True)
class ValueSpec:
    """A method input or output: kind ("tensor", "int", ...), and for tensors the dtype
    (DTYPE_NAMES, else the ScalarType name) and the shape."""
    kind: str
    dtype: Optional[str] = None
    shape: Tuple[int, ...] = ()

    def describe(self) -> str:
        if self.kind != "tensor":
            return self.kind
        return "%s[%s]" % (self.dtype, ",".join(map(str, self.shape)))


@dataclass
class Method:
    name: str
    operators: List[str]  # operator table order
    kernel_keys: Dict[str, List[str]]  # op -> sorted kernel keys (gen_oplist)
    non_const_buffer_sizes: List[int]  # entry 0 is reserved by the runtime
    num_inputs: int
    num_outputs: int
    delegates: List[str]  # backend ids
    num_values: int = 0
    num_instructions: int = 0
    num_chains: int = 0
    inputs: List[ValueSpec] = field(default_factory=list)
    outputs: List[ValueSpec] = field(default_factory=list)

    @property
    def planned_buffer_sizes(self) -> List[int]:
        """Sizes of the memory-planned buffers the runtime asks for."""
        return list(self.non_const_buffer_sizes[1:])


@dataclass
class Program:
    path: str  # file name, or "<bytes>"
    size: int  # file size in bytes
    program_size: int  # from the extended header; 0 without one
    segment_base_offset: int  # 0 without extended header
    segment_data_size: int  # 0 without extended header (or pre-1.0 header)
    has_extended_header: bool
    version: int
    methods: List[Method]
    segments: List[DataSegment] = field(default_factory=list)

    @property
    def flatbuffer_size(self) -> int:
        """Bytes of FlatBuffer data (the whole file without extended header)."""
        return self.program_size if self.has_extended_header else self.size

    @property
    def method_names(self) -> List[str]:
        return [m.name for m in self.methods]

    @property
    def operators(self) -> List[str]:
        """Sorted union of all methods' operators (gen_oplist's 'operators')."""
        return sorted({op for m in self.methods for op in m.operators})

    @property
    def kernel_keys(self) -> Dict[str, List[str]]:
        """op -> sorted kernel keys over all methods (gen_oplist's
        'et_kernel_metadata')."""
        merged: Dict[str, set] = {}
        for m in self.methods:
            for op, keys in m.kernel_keys.items():
                merged.setdefault(op, set()).update(keys)
        return {op: sorted(merged[op]) for op in sorted(merged)}

    @property
    def planned_buffer_sizes(self) -> List[int]:
        """Memory-planned buffer sizes of the first method."""
        return self.methods[0].planned_buffer_sizes if self.methods else []

    def op_signature(self) -> str:
        """Canonical JSON of operators and kernel keys only (independent of
        weights, names and buffer sizes)."""
        return json.dumps({"operators": self.operators, "kernel_keys": self.kernel_keys},
                          sort_keys=True, separators=(",", ":"))

    def to_dict(self) -> Dict[str, Any]:
        return {
            "file": self.path,
            "size": self.size,
            "program_size": self.program_size,
            "segment_base_offset": self.segment_base_offset,
            "segment_data_size": self.segment_data_size,
            "operators": self.operators,
            "kernel_keys": self.kernel_keys,
            "planned_buffer_sizes": self.planned_buffer_sizes,
            "methods": [
                {
                    "name": m.name,
                    "operators": m.operators,
                    "kernel_keys": m.kernel_keys,
                    "non_const_buffer_sizes": m.non_const_buffer_sizes,
                    "planned_buffer_sizes": m.planned_buffer_sizes,
                    "num_inputs": m.num_inputs,
                    "num_outputs": m.num_outputs,
                    "delegates": m.delegates,
                }
                for m in self.methods
            ],
        }


# --------------------------------------------------------------------------
# Parsing.
# --------------------------------------------------------------------------

def _printable(raw: bytes) -> str:
    return "".join(chr(b) if 0x20 <= b < 0x7F and b not in (0x27, 0x5C) else f"\\x{b:02x}"
                   for b in raw)


def _load(path_or_bytes: Union[str, os.PathLike, bytes, bytearray, memoryview]
          ) -> Tuple[memoryview, str]:
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return memoryview(bytes(path_or_bytes)), "<bytes>"
    name = os.fspath(path_or_bytes)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    try:
        with open(name, "rb") as f:
            data = f.read()
    except OSError as e:
        reason = e.strerror or str(e)
        raise PteError(f"cannot read ExecuTorch program {name}: {reason}.", name) from e
    return memoryview(data), name


@dataclass
class _Header:
    present: bool = False
    program_size: int = 0
    segment_base_offset: int = 0
    segment_data_size: int = 0


def _read_header(data: memoryview, name: str) -> _Header:
    size = len(data)
    if size == 0:
        raise PteError(f"{name} is empty; expected an ExecuTorch program (.pte).", name)
    if size < _HEADER_OFFSET:
        raise PteError(f"{name} is too small to be an ExecuTorch program (.pte): "
                       f"{size} bytes, at least {_HEADER_OFFSET} needed.", name)
    ident = bytes(data[4:8])
    if ident != FILE_IDENTIFIER:
        raise PteError(f"{name} is not an ExecuTorch program (.pte): identifier is "
                       f"'{_printable(ident)}', expected 'ET12'.", name)
    hdr = _Header()
    if bytes(data[8:12]) != EXTENDED_HEADER_MAGIC:
        return hdr
    if size < _HEADER_OFFSET + 8:
        raise PteError(f"{name} is truncated: it ends inside the extended header "
                       f"({size} bytes).", name)
    length = struct.unpack_from("<I", data, 12)[0]
    if length < _MIN_HEADER_LENGTH:
        raise PteError(f"{name} is corrupt: the extended header length is {length}, "
                       f"at least {_MIN_HEADER_LENGTH} expected.", name)
    needed = _HEADER_OFFSET + min(length, _HEADER_LENGTH_WITH_DATA_SIZE)
    if size < needed:
        raise PteError(f"{name} is truncated: it ends inside the extended header "
                       f"({size} bytes, {needed} needed).", name)
    hdr.present = True
    hdr.program_size, hdr.segment_base_offset = struct.unpack_from("<QQ", data, 16)
    if length >= _HEADER_LENGTH_WITH_DATA_SIZE:
        hdr.segment_data_size = struct.unpack_from("<Q", data, 32)[0]
    if hdr.program_size > size:
        raise PteError(f"{name} is truncated: its extended header says the program data "
                       f"is {hdr.program_size} bytes but the file has only {size} bytes.",
                       name)
    if hdr.program_size < _HEADER_OFFSET + length:
        raise PteError(f"{name} is corrupt: the extended header's program size "
                       f"({hdr.program_size}) is smaller than the header itself.", name)
    if hdr.segment_base_offset and hdr.segment_base_offset < hdr.program_size:
        raise PteError(f"{name} is corrupt: the data segments start at offset "
                       f"{hdr.segment_base_offset}, inside the program data "
                       f"({hdr.program_size} bytes).", name)
    # Same rule as Program::load() in runtime/executor/program.cpp.
    if hdr.segment_data_size > 0 or hdr.segment_base_offset == 0:
        expected = (hdr.segment_base_offset + hdr.segment_data_size
                    if hdr.segment_base_offset else hdr.program_size)
        if expected > size:
            raise PteError(f"{name} is truncated: its extended header says the file is "
                           f"{expected} bytes (program {hdr.program_size} bytes, segments "
                           f"{hdr.segment_data_size} bytes at offset "
                           f"{hdr.segment_base_offset}) but it has only {size} bytes.",
                           name)
    return hdr


def _io_meta_for_value(values: _TableVector, index: int, where: str, r: _Reader
                       ) -> Tuple[Any, ...]:
    """IOMetaData of a KernelCall argument, as selective_build.cpp builds it:
    (5, dtype, dim_order) for tensors (lists use their first tensor), else
    (kernel_type,)."""

    def value(i: int, what: str) -> _Table:
        if not 0 <= i < len(values):
            raise r.corrupt(where, f"{what} refers to value {i} but the method has "
                                   f"{len(values)} values")
        return values[i]

    def tensor_meta(t: Optional[_Table], what: str) -> Tuple[Any, ...]:
        if t is None:
            raise r.corrupt(where, f"{what} is a Tensor without data")
        dim_order = t.scalars("dim_order")
        if dim_order is None:
            raise r.corrupt(t.where, "tensor has no dim_order")
        return (_KT_TENSOR, t.scalar("scalar_type"), tuple(dim_order))

    what = f"argument value {index}"
    tag, val = value(index, what).union("val")
    if tag == _KT_TENSOR:
        return tensor_meta(val, what)
    if tag == _KT_TENSOR_LIST:
        items = val.scalars("items") if val is not None else None
        if items is None:
            raise r.corrupt(where, f"{what} is a TensorList without items")
        if not items:
            return (_KT_NULL,)
        first_tag, first = value(items[0], f"TensorList {what}").union("val")
        if first_tag != _KT_TENSOR:
            raise r.corrupt(where, f"TensorList {what} contains value {items[0]}, "
                                   "which is not a Tensor")
        return tensor_meta(first, f"TensorList {what}")
    if tag == _KT_OPTIONAL_TENSOR_LIST:
        items = val.scalars("items") if val is not None else None
        if items is None:
            raise r.corrupt(where, f"{what} is an OptionalTensorList without items")
        for item in items:
            if item == -1:
                continue
            item_tag, item_val = value(item, f"OptionalTensorList {what}").union("val")
            if item_tag == _KT_TENSOR:
                return tensor_meta(item_val, f"OptionalTensorList {what}")
        return (_KT_NULL,)
    return (tag,)


def _kernel_key(metas: Tuple[Tuple[Any, ...], ...]) -> str:
    # codegen/tools/gen_oplist.py: "v1/" + "dtype;dim,order|" per tensor, last
    # character dropped (so a kernel without tensors gives "v1").
    key = "v1/"
    for meta in metas:
        if meta[0] == _KT_TENSOR:
            key += f"{meta[1]};{','.join(map(str, meta[2]))}|"
    return key[:-1]


def _op_name(op: _Table, r: _Reader) -> str:
    name = op.string("name")
    if name is None:
        raise r.corrupt(op.where, "operator has no name")
    overload = op.string("overload") or ""
    return f"{name}.{overload}" if overload else name


def _read_method(plan: _Table, r: _Reader) -> Method:
    name = plan.string("name") or ""
    op_tables = plan.tables("operators")
    operators = [_op_name(op, r) for op in op_tables] if op_tables is not None else []
    values = plan.tables("values")
    if values is None:
        values = _TableVector(r, 0, 0, "EValue", plan.where + ".values")

    metadata: Dict[str, set] = {}
    num_instructions = 0
    chains = plan.tables("chains")
    for chain in chains if chains is not None else ():
        instructions = chain.tables("instructions")
        for inst in instructions if instructions is not None else ():
            num_instructions += 1
            tag, call = inst.union("instr_args")
            if tag != _IA_KERNEL_CALL:
                continue
            if call is None:
                raise r.corrupt(inst.where, "KernelCall instruction has no arguments")
            op_index = call.scalar("op_index")
            if not 0 <= op_index < len(operators):
                raise r.corrupt(call.where, f"KernelCall refers to operator {op_index} "
                                            f"but the method has {len(operators)} operators")
            args = call.scalars("args")
            if args is None:
                raise r.corrupt(call.where, "KernelCall has no argument list")
            metas = tuple(_io_meta_for_value(values, a, call.where, r) for a in args)
            metadata.setdefault(operators[op_index], set()).add(metas)

    kernel_keys = {op: sorted({_kernel_key(m) for m in metadata[op]})
                   for op in sorted(metadata)}
    def specs(field_name: str) -> List[ValueSpec]:
        out = []
        for index in plan.scalars(field_name) or []:
            if not 0 <= index < len(values):
                raise r.corrupt(plan.where, f"method {field_name} refer to value {index} "
                                            f"but the method has {len(values)} values")
            tag, val = values[index].union("val")
            if tag == _KT_TENSOR and val is not None:
                code = val.scalar("scalar_type")
                name = SCALAR_TYPES.get(code, (str(code), 0))[0]
                out.append(ValueSpec("tensor", DTYPE_NAMES.get(name, name),
                                     tuple(val.scalars("sizes") or ())))
            else:
                out.append(ValueSpec(_KT_NAMES.get(tag, "other")))
        return out

    delegates = []
    delegate_tables = plan.tables("delegates")
    for d in delegate_tables if delegate_tables is not None else ():
        delegates.append(d.string("id") or "")
    return Method(
        name=name,
        operators=operators,
        kernel_keys=kernel_keys,
        non_const_buffer_sizes=plan.scalars("non_const_buffer_sizes") or [],
        num_inputs=plan.vector_size("inputs") or 0,
        num_outputs=plan.vector_size("outputs") or 0,
        delegates=delegates,
        num_values=len(values),
        num_instructions=num_instructions,
        num_chains=len(chains) if chains is not None else 0,
        inputs=specs("inputs"),
        outputs=specs("outputs"),
    )


def _parse(path_or_bytes: Any, validate: bool) -> Program:
    data, name = _load(path_or_bytes)
    hdr = _read_header(data, name)
    size = len(data)
    end = hdr.program_size if hdr.present else size
    r = _Reader(data, end, name)
    root = struct.unpack_from("<I", data, 0)[0]
    if root < _HEADER_OFFSET or root + 4 > end:
        raise PteError(f"{name} is truncated or corrupt: the root table offset {root} is "
                       f"outside the {end}-byte program data.", name)
    prog = _Table(r, root, "Program", "Program")
    if validate:
        _verify_table(prog, set())

    segments = []
    seg_tables = prog.tables("segments")
    for seg in seg_tables if seg_tables is not None else ():
        segments.append(DataSegment(seg.scalar("offset"), seg.scalar("size")))

    plans = prog.tables("execution_plan")
    methods = [_read_method(p, r) for p in plans] if plans is not None else []
    program = Program(
        path=name,
        size=size,
        program_size=hdr.program_size,
        segment_base_offset=hdr.segment_base_offset,
        segment_data_size=hdr.segment_data_size,
        has_extended_header=hdr.present,
        version=prog.scalar("version"),
        methods=methods,
        segments=segments,
    )
    if validate:
        _Validator(program, prog, r).run()
    return program


# --------------------------------------------------------------------------
# Semantic validation (what runtime/executor relies on).
# --------------------------------------------------------------------------

class _Validator:
    def __init__(self, program: Program, prog: _Table, r: _Reader):
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

    def check_subsegments(self, t: _Table, what: str) -> Tuple[int, List[int]]:
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
    def check_plan(self, plan: _Table, method: Method) -> None:
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
            if tag == _KT_TENSOR:
                if val is None:
                    raise self.fail(f"{what}: tensor has no data")
                self.check_tensor(val, what, buffers)
            elif tag in (_KT_TENSOR_LIST, _KT_OPTIONAL_TENSOR_LIST):
                items = val.scalars("items") if val is not None else None
                if items is None:
                    raise self.fail(f"{what}: tensor list has no items")
                for item in items:
                    if tag == _KT_OPTIONAL_TENSOR_LIST and item == -1:
                        continue
                    check_index(item, f"tensor list value {vi}")
                    if tag == _KT_TENSOR_LIST and values[item].scalar("val_type") != _KT_TENSOR:
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
                if tag == _IA_KERNEL_CALL:
                    op = call.scalar("op_index")
                    if not 0 <= op < nops:
                        raise self.fail(f"{where}, {what}: operator index {op} is out of "
                                        f"range ({nops} operators)")
                    for a in call.scalars("args") or []:
                        check_index(a, what)
                elif tag == _IA_DELEGATE_CALL:
                    di = call.scalar("delegate_index")
                    if not 0 <= di < ndelegates:
                        raise self.fail(f"{where}, {what}: delegate index {di} is out of "
                                        f"range ({ndelegates} delegates)")
                    for a in call.scalars("args") or []:
                        check_index(a, what)
                elif tag == _IA_MOVE_CALL:
                    check_index(call.scalar("move_from"), what)
                    check_index(call.scalar("move_to"), what)
                elif tag == _IA_JUMP_FALSE_CALL:
                    check_index(call.scalar("cond_value_index"), what)
                    dest = call.scalar("destination_instruction")
                    if not 0 <= dest < ninstr:
                        raise self.fail(f"{where}, {what}: jump destination {dest} is out "
                                        f"of range ({ninstr} instructions)")
                elif tag == _IA_FREE_CALL:
                    check_index(call.scalar("value_index"), what)

    def check_tensor(self, t: _Table, what: str, buffers: List[int]) -> None:
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
        external = extra is not None and extra.scalar("location") == 1
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


# --------------------------------------------------------------------------
# Public API.
# --------------------------------------------------------------------------

def read_pte(path_or_bytes: Union[str, os.PathLike, bytes, bytearray, memoryview]) -> Program:
    """Reads the methods, operators, kernel keys and buffer sizes of a .pte
    file (path or its bytes).  Raises PteError if it cannot be read."""
    return _parse(path_or_bytes, validate=False)


def validate_pte(path: Union[str, os.PathLike, bytes, bytearray, memoryview]) -> Program:
    """Like read_pte(), but verifies the whole file: every FlatBuffer
    reference, the indices between tables, tensors against their buffers and
    the data segments against the file size.  Raises PteError."""
    return _parse(path, validate=True)


def main(argv: Optional[List[str]] = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        description="Print the operators, kernel keys and buffer sizes of an "
                    "ExecuTorch program (.pte) as JSON.")
    parser.add_argument("file", help="the .pte file")
    parser.add_argument("--no-validate", action="store_true",
                        help="only read what is printed, skip the full validation")
    args = parser.parse_args(argv)
    try:
        program = read_pte(args.file) if args.no_validate else validate_pte(args.file)
    except PteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    json.dump(program.to_dict(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
