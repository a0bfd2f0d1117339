"""Bounds-checked reading and verification of FlatBuffers, driven by a schema table.

Pure Python (standard library only); knows no particular schema.  A schema is given
as two dictionaries (see :class:`Schema`)::

    tables = {"Root": (("version", "u32"), ("items", "[Item]"), ("value", "union:Value")),
              "Item": (("name", "string"), ("data", "[u8]")), ...}
    unions = {"Value": (None, "Int", "Item")}     # tag -> member table (0: NONE)

Field kinds: a scalar (bool, u8, i8, u16, i32, u32, i64, u64, f64), ``string``, a
table name, ``[elem]`` for a vector of scalars or tables, and ``union:Name``.  Field
order defines the vtable slots, as in the ``.fbs`` file; a union field takes two
slots (``<name>_type``: u8, then ``<name>``: offset).

Every access checks its bounds and alignment against the buffer and raises
``Reader.corrupt(...)`` instead of reading past the end: a :class:`FlatBufferError`,
or the error of a format whose reader subclass overrides ``Reader.error``.
:func:`verify_table` visits every field of a table and of everything it references,
like the FlatBuffers verifier.  An absent scalar reads as 0 (False, 0.0), an absent
string, table or vector as None (so schemas with non-zero defaults are not covered).
"""

from __future__ import annotations

import struct
from typing import Any, Dict, Iterator, List, Optional, Tuple

__all__ = ["FlatBufferError", "Schema", "Reader", "Table", "TableVector", "verify_table"]

_SCALARS: Dict[str, struct.Struct] = {
    "bool": struct.Struct("<B"), "u8": struct.Struct("<B"), "i8": struct.Struct("<b"),
    "u16": struct.Struct("<H"), "i32": struct.Struct("<i"), "u32": struct.Struct("<I"),
    "i64": struct.Struct("<q"), "u64": struct.Struct("<Q"), "f64": struct.Struct("<d"),
}
_VECTOR_CODES = {"bool": "B", "u8": "B", "i8": "b", "i32": "i", "u32": "I",
                 "i64": "q", "u64": "Q", "f64": "d"}


class FlatBufferError(Exception):
    """A buffer is truncated or corrupt (the message says where)."""


class Schema:
    """tables: table -> ((field, kind), ...) in schema order; unions: union ->
    member table per tag (tag 0, NONE, is None)."""

    def __init__(self, tables: Dict[str, Tuple[Tuple[str, str], ...]],
                 unions: Dict[str, Tuple[Optional[str], ...]]):
        self.tables = tables
        self.unions = unions
        # table -> field name -> (vtable slot, kind)
        self.layouts: Dict[str, Dict[str, Tuple[int, str]]] = {}
        for table, fields in tables.items():
            slot = 0
            layout: Dict[str, Tuple[int, str]] = {}
            for name, kind in fields:
                if kind.startswith("union:"):
                    layout[name + "_type"] = (slot, "u8")
                    slot += 1
                layout[name] = (slot, kind)
                slot += 1
            self.layouts[table] = layout


class Reader:
    """A FlatBuffer: bytes [0, end) of data, read with schema.  name is what messages
    call the buffer (a file name), ``what`` what they call its bytes."""

    what = "the buffer"

    def __init__(self, data: memoryview, end: int, name: str, schema: Schema):
        self.data = data
        self.end = end
        self.name = name
        self.schema = schema

    def corrupt(self, where: str, detail: str) -> Exception:
        """The error to raise for a malformed buffer: where names the field
        (Root.field[i].field), detail says what is wrong."""
        return self.error(f"{self.name} is truncated or corrupt: {where}: {detail} "
                          f"({self.what} is {self.end} bytes).")

    def error(self, message: str) -> Exception:
        """The exception for message; a format's reader overrides it to raise its own."""
        return FlatBufferError(message)

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
                                      f"outside {self.what}")
        return pos + o

    def vector_header(self, pos: int, elem_size: int, where: str) -> Tuple[int, int]:
        """Returns (first element position, length) of the vector at pos."""
        if pos % 4 or pos + 4 > self.end:
            raise self.corrupt(where, f"vector at offset {pos} is out of range or misaligned")
        n = _SCALARS["u32"].unpack_from(self.data, pos)[0]
        if pos + 4 + n * elem_size > self.end:
            raise self.corrupt(where, f"vector at offset {pos} with {n} elements "
                                      f"extends past the end of {self.what}")
        return pos + 4, n

    def string_bytes(self, pos: int, where: str) -> bytes:
        start, n = self.vector_header(pos, 1, where)
        if start + n + 1 > self.end or self.data[start + n] != 0:
            raise self.corrupt(where, f"string at offset {pos} is not terminated")
        return bytes(self.data[start:start + n])

    def table(self, pos: int, type_name: str, where: str) -> "Table":
        return Table(self, pos, type_name, where)


class Table:
    """The table of type type_name at offset pos; where names it in messages."""

    __slots__ = ("r", "pos", "type", "where", "_vt", "_vtsize")

    def __init__(self, r: Reader, pos: int, type_name: str, where: str):
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
        slot, kind = self.r.schema.layouts[self.type][name]
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

    def table(self, name: str) -> Optional["Table"]:
        pos, kind = self._field(name)
        if not pos:
            return None
        where = self._where(name)
        return Table(self.r, self.r.deref(pos, where), kind, where)

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

    def tables(self, name: str) -> Optional["TableVector"]:
        vec = self._vector(name)
        if vec is None:
            return None
        start, n, elem, where = vec
        return TableVector(self.r, start, n, elem, where)

    def union(self, name: str) -> Tuple[int, Optional["Table"]]:
        """(tag, value table or None).  Unknown tags give (tag, None)."""
        tag = self.scalar(name + "_type")
        pos, kind = self._field(name)
        if tag == 0 or not pos:
            return tag, None
        members = self.r.schema.unions[kind[len("union:"):]]
        if tag >= len(members):
            return tag, None
        where = self._where(name)
        return tag, Table(self.r, self.r.deref(pos, where), members[tag], where)


class TableVector:
    """A lazily decoded vector of tables."""

    __slots__ = ("r", "start", "n", "type", "where")

    def __init__(self, r: Reader, start: int, n: int, type_name: str, where: str):
        self.r, self.start, self.n, self.type, self.where = r, start, n, type_name, where

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> Table:
        if not 0 <= i < self.n:
            raise IndexError(i)
        where = f"{self.where}[{i}]"
        return Table(self.r, self.r.deref(self.start + 4 * i, where), self.type, where)

    def __iter__(self) -> Iterator[Table]:
        for i in range(self.n):
            yield self[i]


def verify_table(t: Table, seen: set) -> None:
    """Bounds-checks every field of t and of everything it references,
    like the FlatBuffers verifier (flatbuffers::Verifier)."""
    key = (t.pos, t.type)
    if key in seen:
        return
    seen.add(key)
    r = t.r
    for name, kind in r.schema.tables[t.type]:
        if kind.startswith("union:"):
            pos, _ = t._field(name)
            if pos:
                r.deref(pos, t._where(name))
            tag, member = t.union(name)
            if member is not None:
                verify_table(member, seen)
        elif kind in _SCALARS:
            t.scalar(name)
        elif kind == "string":
            pos, _ = t._field(name)
            if pos:
                where = t._where(name)
                r.string_bytes(r.deref(pos, where), where)
        elif kind.startswith("["):
            elem = kind[1:-1]
            if elem in r.schema.tables:
                vec = t.tables(name)
                if vec is not None:
                    for child in vec:
                        verify_table(child, seen)
            else:
                t._vector(name)
        else:
            child = t.table(name)
            if child is not None:
                verify_table(child, seen)
