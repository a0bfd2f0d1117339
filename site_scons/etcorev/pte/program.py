"""The program model of an ExecuTorch program file (.pte, or the program inside a
bundled program, .bpte) and its parsing: the header, the program schema (as tables for
:mod:`etcorev.pte.flatbuf`, the bounds-checked FlatBuffer reader), the results
(:class:`Program`, :class:`Method`, :class:`ValueSpec`, ...) and :func:`parse`. The
package (:mod:`etcorev.pte`) is its public face: read_pte() and validate_pte().
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from etcorev.pte import flatbuf

# What validate_pte() runs on each program read: (program, root table, reader) -> None.
Checker = Callable[["Program", flatbuf.Table, flatbuf.Reader], None]

FILE_IDENTIFIER = b"ET12"
BUNDLE_IDENTIFIER = b"BP08"     # devtools/bundled_program/schema/bundled_program_schema.fbs
EXTENDED_HEADER_MAGIC = b"eh00"
_HEADER_OFFSET = 8  # root offset (4) + file identifier (4)
_MIN_HEADER_LENGTH = 24  # magic, length, program_size, segment_base_offset
_HEADER_LENGTH_WITH_DATA_SIZE = 32  # ... + segment_data_size

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
# Schema (schema/program.fbs), in flatbuf's terms.  Field order defines the vtable
# slots; a union field takes two slots (<name>_type: u8, then <name>: offset).
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

# KernelTypes / InstructionArguments union tags used here and in pte_check.
KT_NULL = 1
KT_BOOL = 3
KT_TENSOR = 5
KT_TENSOR_LIST = 10
KT_OPTIONAL_TENSOR_LIST = 11
IA_KERNEL_CALL = 1
IA_DELEGATE_CALL = 2
IA_MOVE_CALL = 3
IA_JUMP_FALSE_CALL = 4
IA_FREE_CALL = 5
# ExtraTensorInfo.location: TensorDataLocation.EXTERNAL (the data is in a .ptd file)
TENSOR_DATA_EXTERNAL = 1

_SCHEMA = flatbuf.Schema(_TABLES, _UNIONS)

# devtools/bundled_program/schema/bundled_program_schema.fbs (root BundledProgram).
_BUNDLE_SCHEMA = flatbuf.Schema({
    "Int": (("int_val", "i64"),),
    "Bool": (("bool_val", "bool"),),
    "Double": (("double_val", "f64"),),
    "Tensor": (("scalar_type", "i8"), ("sizes", "[i32]"), ("data", "[u8]"),
               ("dim_order", "[u8]")),
    "Value": (("val", "union:ValueUnion"),),
    "BundledMethodTestCase": (("inputs", "[Value]"), ("expected_outputs", "[Value]")),
    "BundledMethodTestSuite": (("method_name", "string"),
                               ("test_cases", "[BundledMethodTestCase]")),
    "BundledProgram": (("version", "u32"),
                       ("method_test_suites", "[BundledMethodTestSuite]"),
                       ("program", "[u8]")),
}, {"ValueUnion": (None, "Tensor", "Int", "Bool", "Double")})
_BUNDLE_VALUE_KINDS = {1: "tensor", 2: "int", 3: "bool", 4: "double"}
# Program::load wants its data at alignof(max_align_t), 16 on RV32; the bundle's schema
# aligns the program to 32 inside the file, which the build places at 16 or more.
_PROGRAM_ALIGNMENT = 16


class _Reader(flatbuf.Reader):
    """The FlatBuffer part of a .pte file: bytes [0, end), read with the program schema;
    what is wrong with it is a PteError."""

    what = "the program data"

    def __init__(self, data: memoryview, end: int, name: str, schema=_SCHEMA):
        super().__init__(data, end, name, schema)

    def error(self, message: str) -> PteError:
        return PteError(message, self.name)


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
    # The order of the dimensions in memory, outermost first: (0, 1, 2, 3) contiguous,
    # (0, 2, 3, 1) channels-last. Sizes are in logical order either way.
    dim_order: Tuple[int, ...] = ()
    # A dynamic shape (exported with torch.export.Dim): shape is its upper bound.
    dynamic: bool = False
    # Whether the program plans the tensor's memory (a method's inputs and outputs unless
    # exported with MemoryPlanningPass(alloc_graph_input/alloc_graph_output=False): then
    # the caller provides nbytes for it).
    planned: bool = True
    nbytes: int = 0

    def describe(self) -> str:
        if self.kind != "tensor":
            return self.kind
        return "%s[%s]" % (self.dtype, ",".join(map(str, self.shape)))


@dataclass(frozen=True)
class TensorArg:
    """A tensor argument of a kernel call: its ScalarType name, logical sizes, dim order,
    whether its data is in the program (a constant: weights, biases) and its bytes."""
    dtype: str
    sizes: Tuple[int, ...]
    dim_order: Tuple[int, ...]
    constant: bool
    nbytes: int
    value: int = -1  # its index in the method's values
    # (planned buffer id, offset) of a memory-planned tensor, else None
    memory: Optional[Tuple[int, int]] = None


@dataclass(frozen=True)
class KernelCall:
    """One kernel call of a method, in execution order: the operator and the value of
    each argument, in the operator's schema order, then its returns (an out variant's
    out tensor appears twice: its argument and its return): a TensorArg, an
    int, a float, a bool, a list of those (int, double and bool lists; a tensor list as a
    list of TensorArg), a str, or None (a None of an optional argument)."""
    op: str
    args: Tuple[Any, ...]


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
    # Each kernel call in execution order: (operator, the sizes of each argument that
    # is a tensor, None for the others).
    kernel_calls: List[Tuple[str, List[Optional[Tuple[int, ...]]]]] = field(
        default_factory=list)
    # The same calls with every argument's value (KernelCall).
    calls: List[KernelCall] = field(default_factory=list)
    # The fully qualified names of the tensors whose data is outside the program (in a
    # .ptd file: exported with ExecutorchBackendConfig(external_constants=True)).
    external_data: List[str] = field(default_factory=list)
    # The names of the tensors besides inputs and outputs whose memory (and initial state)
    # the program leaves to the application: mutable buffers exported with
    # MemoryPlanningPass(alloc_mutable_buffers=False) (the runtime gives them a null pointer).
    unplanned_state: List[str] = field(default_factory=list)
    # The first chain's instructions in order, for control flow: ("kernel", index in
    # calls), ("move", from value, to value), ("jump", condition value, destination),
    # ("other",) (delegate and free calls).
    instructions: List[Tuple] = field(default_factory=list)
    # The values that are constant Bools (a JumpFalseCall on one always or never jumps).
    constant_bools: Dict[int, bool] = field(default_factory=dict)
    # Each planned tensor value's memory: value -> (buffer id, offset, bytes).
    value_memory: Dict[int, Tuple[int, int, int]] = field(default_factory=dict)
    # The values of its inputs and outputs, in order.
    input_values: List[int] = field(default_factory=list)
    output_values: List[int] = field(default_factory=list)

    @property
    def state_memory(self) -> List[Tuple[int, int, int]]:
        """(buffer id, offset, bytes) of the planned tensors a kernel reads before any
        kernel has written them or memory under them: mutable buffers, which ExecuTorch
        plans without an initial value unless the program carries one (its runners start
        them from zeroed memory). Inputs are not among them; nor are views (a reshape
        aliasing a written tensor's memory). Scratch buffers and control-flow results
        (written by their kernel as an argument, or by a move) come along: zeroing them
        before the method loads changes nothing."""
        inputs = set(self.input_values)
        written, found, seen = [], [], set()
        for call in self.calls:
            tensors = [t for t in call_tensors(call.args)
                       if t.memory is not None and not t.constant]
            outs = written_tensors(tensors)
            for t in tensors:
                span = t.memory + (t.nbytes,)
                if t in outs or t.value in seen or t.value in inputs or not t.nbytes:
                    continue
                seen.add(t.value)
                if not any(spans_overlap(span, w) for w in written):
                    found.append(span)
            written += [t.memory + (t.nbytes,) for t in outs]
        return found

    @property
    def planned_buffer_sizes(self) -> List[int]:
        """Sizes of the memory-planned buffers the runtime asks for."""
        return list(self.non_const_buffer_sizes[1:])


@dataclass(frozen=True)
class TestCase:
    """One test case of a bundled program: its inputs and expected outputs (kind,
    dtype and shape of each, as ValueSpec; the values stay in the file)."""
    inputs: Tuple[ValueSpec, ...]
    expected: Tuple[ValueSpec, ...]


@dataclass
class Bundle:
    """What a bundled program (.bpte) holds besides its program."""
    program_offset: int  # where the program's bytes start in the file
    program_size: int  # and how many there are
    version: int
    test_suites: Dict[str, List[TestCase]]  # method name -> its test cases


@dataclass
class Program:
    path: str  # file name, or "<bytes>"
    size: int  # file size in bytes (of the whole .bpte for a bundled program)
    program_size: int  # from the extended header; 0 without one
    segment_base_offset: int  # 0 without extended header
    segment_data_size: int  # 0 without extended header (or pre-1.0 header)
    has_extended_header: bool
    version: int
    methods: List[Method]
    segments: List[DataSegment] = field(default_factory=list)
    bundle: Optional[Bundle] = None  # a bundled program: the test cases
    method_index: int = 0  # the method the runner runs (select_method)

    @property
    def is_bundled(self) -> bool:
        return self.bundle is not None

    @property
    def method(self) -> Method:
        """The method the runner runs: the first, as ExecuTorch's executor_runner without
        --method_name, unless select_method chose another."""
        return self.methods[self.method_index]

    def select_method(self, name: str) -> Method:
        """Run the method called `name` (one of method_names)."""
        self.method_index = self.method_names.index(name)
        return self.method

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
        """Memory-planned buffer sizes of the method the runner runs."""
        return self.method.planned_buffer_sizes if self.methods else []

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
            **({"bundle": {
                "program_offset": self.bundle.program_offset,
                "program_size": self.bundle.program_size,
                "test_cases": {method: len(cases)
                               for method, cases in self.bundle.test_suites.items()},
            }} if self.bundle else {}),
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
                       f"'{_printable(ident)}', expected 'ET12' (or 'BP08', a bundled "
                       f"program, .bpte).", name)
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


def _io_meta_for_value(values: flatbuf.TableVector, index: int, where: str, r: _Reader
                       ) -> Tuple[Any, ...]:
    """IOMetaData of a KernelCall argument, as selective_build.cpp builds it:
    (5, dtype, dim_order) for tensors (lists use their first tensor), else
    (kernel_type,)."""

    def value(i: int, what: str) -> flatbuf.Table:
        if not 0 <= i < len(values):
            raise r.corrupt(where, f"{what} refers to value {i} but the method has "
                                   f"{len(values)} values")
        return values[i]

    def tensor_meta(t: Optional[flatbuf.Table], what: str) -> Tuple[Any, ...]:
        if t is None:
            raise r.corrupt(where, f"{what} is a Tensor without data")
        dim_order = t.scalars("dim_order")
        if dim_order is None:
            raise r.corrupt(t.where, "tensor has no dim_order")
        return (KT_TENSOR, t.scalar("scalar_type"), tuple(dim_order))

    what = f"argument value {index}"
    tag, val = value(index, what).union("val")
    if tag == KT_TENSOR:
        return tensor_meta(val, what)
    if tag == KT_TENSOR_LIST:
        items = val.scalars("items") if val is not None else None
        if items is None:
            raise r.corrupt(where, f"{what} is a TensorList without items")
        if not items:
            return (KT_NULL,)
        first_tag, first = value(items[0], f"TensorList {what}").union("val")
        if first_tag != KT_TENSOR:
            raise r.corrupt(where, f"TensorList {what} contains value {items[0]}, "
                                   "which is not a Tensor")
        return tensor_meta(first, f"TensorList {what}")
    if tag == KT_OPTIONAL_TENSOR_LIST:
        items = val.scalars("items") if val is not None else None
        if items is None:
            raise r.corrupt(where, f"{what} is an OptionalTensorList without items")
        for item in items:
            if item == -1:
                continue
            item_tag, item_val = value(item, f"OptionalTensorList {what}").union("val")
            if item_tag == KT_TENSOR:
                return tensor_meta(item_val, f"OptionalTensorList {what}")
        return (KT_NULL,)
    return (tag,)


def _kernel_key(metas: Tuple[Tuple[Any, ...], ...]) -> str:
    # codegen/tools/gen_oplist.py: "v1/" + "dtype;dim,order|" per tensor, last
    # character dropped (so a kernel without tensors gives "v1").
    key = "v1/"
    for meta in metas:
        if meta[0] == KT_TENSOR:
            key += f"{meta[1]};{','.join(map(str, meta[2]))}|"
    return key[:-1]


def _op_name(op: flatbuf.Table, r: _Reader) -> str:
    name = op.string("name")
    if name is None:
        raise r.corrupt(op.where, "operator has no name")
    overload = op.string("overload") or ""
    return f"{name}.{overload}" if overload else name


def _read_method(plan: flatbuf.Table, r: _Reader) -> Method:
    name = plan.string("name") or ""
    op_tables = plan.tables("operators")
    operators = [_op_name(op, r) for op in op_tables] if op_tables is not None else []
    values = plan.tables("values")
    if values is None:
        values = flatbuf.TableVector(r, 0, 0, "EValue", plan.where + ".values")

    metadata: Dict[str, set] = {}
    kernel_calls = []
    calls = []
    num_instructions = 0
    chains = plan.tables("chains")
    stream = []
    for chain_index, chain in enumerate(chains if chains is not None else ()):
        instructions = chain.tables("instructions")
        for inst in instructions if instructions is not None else ():
            num_instructions += 1
            tag, call = inst.union("instr_args")
            if chain_index == 0 and call is not None and tag != IA_KERNEL_CALL:
                stream.append(
                    ("move", call.scalar("move_from"), call.scalar("move_to"))
                    if tag == IA_MOVE_CALL else
                    ("jump", call.scalar("cond_value_index"),
                     call.scalar("destination_instruction"))
                    if tag == IA_JUMP_FALSE_CALL else ("other",))
            if tag != IA_KERNEL_CALL:
                continue
            if chain_index == 0:
                stream.append(("kernel", len(calls)))
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
            kernel_calls.append((operators[op_index], [_tensor_sizes(values, a) for a in args]))
            calls.append(KernelCall(operators[op_index],
                                    tuple(_argument(values, a, call.where, r) for a in args)))

    kernel_keys = {op: sorted({_kernel_key(m) for m in metadata[op]})
                   for op in sorted(metadata)}
    def specs(field_name: str) -> List[ValueSpec]:
        out = []
        for index in plan.scalars(field_name) or []:
            if not 0 <= index < len(values):
                raise r.corrupt(plan.where, f"method {field_name} refer to value {index} "
                                            f"but the method has {len(values)} values")
            tag, val = values[index].union("val")
            if tag == KT_TENSOR and val is not None:
                arg = _tensor_arg(val, index)
                out.append(ValueSpec("tensor", DTYPE_NAMES.get(arg.dtype, arg.dtype),
                                     arg.sizes, arg.dim_order,
                                     dynamic=bool(val.scalar("shape_dynamism")),
                                     planned=arg.memory is not None, nbytes=arg.nbytes))
            else:
                out.append(ValueSpec(_KT_NAMES.get(tag, "other")))
        return out

    external_data = []
    unplanned_state = []
    constant_bools = {}
    value_memory = {}
    input_values = list(plan.scalars("inputs") or [])
    output_values = list(plan.scalars("outputs") or [])
    io = set(input_values) | set(output_values)
    for index in range(len(values)):
        tag, val = values[index].union("val")
        if tag == KT_BOOL and val is not None:
            constant_bools[index] = bool(val.scalar("bool_val"))
        if tag != KT_TENSOR or val is None:
            continue
        extra = val.table("extra_tensor_info")
        fqn = extra.string("fully_qualified_name") if extra is not None else None
        if extra is not None and extra.scalar("location") == TENSOR_DATA_EXTERNAL:
            external_data.append(fqn or "")
            continue
        arg = _tensor_arg(val, index)
        if arg.memory is not None:
            value_memory[index] = arg.memory + (arg.nbytes,)
        if not arg.constant and arg.memory is None and arg.nbytes and index not in io:
            unplanned_state.append(fqn or "value %d" % index)

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
        kernel_calls=kernel_calls,
        calls=calls,
        external_data=external_data,
        unplanned_state=unplanned_state,
        instructions=stream,
        output_values=output_values,
        input_values=input_values,
        constant_bools=constant_bools,
        value_memory=value_memory,
    )


def call_tensors(args):
    """The TensorArgs of a kernel call's arguments, tensor lists' items too."""
    for arg in args:
        items = arg if isinstance(arg, list) else [arg]
        yield from (a for a in items if isinstance(a, TensorArg))


def written_tensors(tensors):
    """The out tensors among a kernel call's TensorArgs: an out variant's out tensor comes
    twice, as its argument and its return."""
    return [t for t in tensors if sum(u.value == t.value for u in tensors) > 1]


def spans_overlap(a, b):
    """Do two (buffer id, offset, bytes) spans share a byte?"""
    return a[0] == b[0] and a[1] < b[1] + b[2] and b[1] < a[1] + a[2]


def _tensor_arg(val: flatbuf.Table, index: int) -> TensorArg:
    code = val.scalar("scalar_type")
    name, element_size = SCALAR_TYPES.get(code, (str(code), 0))
    sizes = tuple(val.scalars("sizes") or ())
    count = 1
    for d in sizes:
        count *= d
    alloc = val.table("allocation_info")
    memory = None if alloc is None else (
        alloc.scalar("memory_id"),
        alloc.scalar("memory_offset_low") | (alloc.scalar("memory_offset_high") << 32))
    return TensorArg(name, sizes, tuple(val.scalars("dim_order") or ()),
                     bool(val.scalar("data_buffer_idx")), count * element_size,
                     index, memory)


def _argument(values: flatbuf.TableVector, index: int, where: str, r: _Reader) -> Any:
    """The value of a kernel call's argument (KernelCall.args)."""
    if not 0 <= index < len(values):
        raise r.corrupt(where, f"argument value {index} is outside the method's "
                               f"{len(values)} values")
    tag, val = values[index].union("val")
    if val is None or tag == KT_NULL:
        return None
    if tag == KT_TENSOR:
        return _tensor_arg(val, index)
    if tag in (KT_TENSOR_LIST, KT_OPTIONAL_TENSOR_LIST):
        return [None if i == -1 else _argument(values, i, where, r)
                for i in val.scalars("items") or ()]
    kind = _UNIONS["KernelTypes"][tag] if 0 <= tag < len(_UNIONS["KernelTypes"]) else None
    field_name = _TABLES.get(kind, ((None, None),))[0][0] if kind else None
    if kind in ("Int", "Bool", "Double"):
        return val.scalar(field_name)
    if kind == "IntList":       # its items are values (Int), as the runtime boxes them
        return [_argument(values, i, where, r) for i in val.scalars("items") or ()]
    if kind in ("DoubleList", "BoolList"):
        return list(val.scalars("items") or ())
    if kind == "String":
        return val.string("string_val")
    raise r.corrupt(where, f"argument value {index} is of unknown kind {tag}")


def _tensor_sizes(values: flatbuf.TableVector, index: int) -> Optional[Tuple[int, ...]]:
    if not 0 <= index < len(values):
        return None
    tag, val = values[index].union("val")
    return tuple(val.scalars("sizes") or ()) if tag == KT_TENSOR and val is not None else None


def parse(path_or_bytes: Any, check: Optional[Checker] = None) -> Program:
    """The program of a .pte or .bpte (path or bytes). check: called with each program
    read (the Program, its root table and the reader) before it is returned: the
    semantic checks of validate_pte(), which live in etcorev.pte.check (a module of
    their own that imports this one, not the other way round); with a check, the whole
    FlatBuffer is verified first."""
    data, name = _load(path_or_bytes)
    if len(data) >= _HEADER_OFFSET and bytes(data[4:8]) == BUNDLE_IDENTIFIER:
        return _parse_bundle(data, name, check)
    return _parse_program(data, name, check)


def _bundle_values(values: Optional[flatbuf.TableVector], r: _Reader) -> Tuple[ValueSpec, ...]:
    """A test case's inputs or expected outputs as ValueSpecs; a tensor's data must hold
    its elements (the runtime copies or compares that many bytes)."""
    out = []
    for value in values if values is not None else ():
        tag, val = value.union("val")
        kind = _BUNDLE_VALUE_KINDS.get(tag)
        if kind is None or val is None:
            raise r.corrupt(value.where, f"value of unknown kind {tag}")
        if kind != "tensor":
            out.append(ValueSpec(kind))
            continue
        code = val.scalar("scalar_type")
        if code not in SCALAR_TYPES:
            raise r.corrupt(val.where, f"tensor has unknown scalar type {code}")
        type_name, element_size = SCALAR_TYPES[code]
        sizes = tuple(val.scalars("sizes") or ())
        dim_order = tuple(val.scalars("dim_order") or ())
        if any(d < 0 for d in sizes) or sorted(dim_order) != list(range(len(sizes))):
            raise r.corrupt(val.where, f"tensor has sizes {list(sizes)} and dim order "
                                       f"{list(dim_order)}, which do not match")
        count = 1
        for d in sizes:
            count *= d
        data_size = val.vector_size("data") or 0
        if data_size < count * element_size:
            raise r.corrupt(val.where, f"tensor of {count} {type_name} elements has "
                                       f"{data_size} bytes of data")
        out.append(ValueSpec("tensor", DTYPE_NAMES.get(type_name, type_name), sizes, dim_order))
    return tuple(out)


def _parse_bundle(data: memoryview, name: str, check: Optional[Checker]) -> Program:
    """A bundled program: its test cases, and the program in its `program` field."""
    size = len(data)
    r = _Reader(data, size, name, _BUNDLE_SCHEMA)
    r.what = "the bundled program"
    root = struct.unpack_from("<I", data, 0)[0]
    if root < _HEADER_OFFSET or root + 4 > size:
        raise PteError(f"{name} is truncated or corrupt: the root table offset {root} is "
                       f"outside the {size}-byte bundled program.", name)
    bundle = flatbuf.Table(r, root, "BundledProgram", "BundledProgram")
    if check is not None:
        flatbuf.verify_table(bundle, set())
    vector = bundle._vector("program")
    if vector is None or vector[1] == 0:
        raise PteError(f"{name} is a bundled program (.bpte) without a program in it.", name)
    start, length = vector[0], vector[1]
    if start % _PROGRAM_ALIGNMENT:
        raise PteError(f"{name} is a bundled program whose program starts at offset "
                       f"{start}, not a multiple of {_PROGRAM_ALIGNMENT}: the runtime "
                       f"cannot load it in place.", name)
    suites: Dict[str, List[TestCase]] = {}
    for suite in bundle.tables("method_test_suites") or ():
        method_name = suite.string("method_name")
        if method_name is None:
            raise r.corrupt(suite.where, "test suite has no method name")
        suites[method_name] = [
            TestCase(_bundle_values(case.tables("inputs"), r),
                     _bundle_values(case.tables("expected_outputs"), r))
            for case in suite.tables("test_cases") or ()]
    inner = memoryview(bytes(data[start:start + length]))
    program = _parse_program(inner, f"{name} (the program in it)", check)
    unknown = sorted(set(suites) - set(program.method_names))
    if check is not None and unknown:
        raise PteError(f"{name} has test cases for method '{unknown[0]}', which its "
                       f"program does not have (it has {', '.join(program.method_names)}).",
                       name)
    program.path = name
    program.size = size
    program.bundle = Bundle(start, length, bundle.scalar("version"), suites)
    return program


def _parse_program(data: memoryview, name: str, check: Optional[Checker]) -> Program:
    hdr = _read_header(data, name)
    size = len(data)
    end = hdr.program_size if hdr.present else size
    r = _Reader(data, end, name)
    root = struct.unpack_from("<I", data, 0)[0]
    if root < _HEADER_OFFSET or root + 4 > end:
        raise PteError(f"{name} is truncated or corrupt: the root table offset {root} is "
                       f"outside the {end}-byte program data.", name)
    prog = flatbuf.Table(r, root, "Program", "Program")
    if check is not None:
        flatbuf.verify_table(prog, set())

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
    if check is not None:
        check(program, prog, r)
    return program
