"""pte.py reads .pte files with a hand-written copy of the program schema. These tests
tie that copy to the tree's schema/program.fbs: flatc writes the schema as JSON Schema
(tables with their fields in declaration order, which is vtable order), and every table,
field, type and union member must agree. A new ExecuTorch version that changes the schema
fails here, loudly, instead of misreading models."""

import json
import re
import shutil
import subprocess

import pytest

from etcorev.pte import program as pte_program

FLATC = shutil.which("flatc")
pytestmark = [pytest.mark.quick, pytest.mark.skipif(not FLATC, reason="flatc missing (./setup.sh installs it)")]

PREFIX = "executorch_flatbuffer_"
INTEGER_RANGES = {(-2**7, 2**7 - 1): "i8", (0, 2**8 - 1): "u8", (-2**15, 2**15 - 1): "i16",
                  (0, 2**16 - 1): "u16", (-2**31, 2**31 - 1): "i32", (0, 2**32 - 1): "u32",
                  (-2**63, 2**63 - 1): "i64", (0, 2**64 - 1): "u64"}
ENUM_TYPES = {"byte": "i8", "ubyte": "u8", "short": "i16", "ushort": "u16", "int": "i32",
              "uint": "u32", "long": "i64", "ulong": "u64"}


def json_schema(schema_dir, out_dir):
    subprocess.run([FLATC, "--jsonschema", "-o", str(out_dir), "-I", str(schema_dir),
                    str(schema_dir / "program.fbs")], check=True, capture_output=True)
    return json.loads((out_dir / "program.schema.json").read_text())["definitions"]


def enum_types(schema_dir):
    """enum name -> scalar kind, from the .fbs files (JSON Schema drops the base type)."""
    text = "".join(p.read_text() for p in schema_dir.glob("*.fbs"))
    return {name: ENUM_TYPES[base] for name, base in re.findall(r"enum (\w+)\s*:\s*(\w+)", text)}


def tables_and_unions(definitions, enums):
    """The schema as etcorev.pte.program spells it: ({table: ((field, kind), ...)}, {union: members})."""
    def name(ref):
        return ref["$ref"].rsplit("/", 1)[-1][len(PREFIX):]

    def kind(spec, properties, field):
        if "anyOf" in spec:                                   # a union value
            return "union:" + name(properties[field + "_type"])
        if "$ref" in spec:
            target = name(spec)
            return enums.get(target, target)
        if spec.get("type") == "array":
            return "[%s]" % kind(spec["items"], properties, field)
        if spec.get("type") == "integer":
            return INTEGER_RANGES[(spec["minimum"], spec["maximum"])]
        return {"boolean": "bool", "string": "string", "number": "f64"}[spec["type"]]

    tables, unions = {}, {}
    for definition, spec in definitions.items():
        if spec.get("type") != "object":
            continue
        properties = spec.get("properties", {})
        fields = []
        for field, field_spec in properties.items():
            if field.endswith("_type") and "anyOf" in properties.get(field[:-5], {}):
                continue                                      # the union's tag
            fields.append((field, kind(field_spec, properties, field)))
            if "anyOf" in field_spec:
                union = name(properties[field + "_type"])
                unions[union] = (None,) + tuple(name(m) for m in field_spec["anyOf"])
        tables[definition[len(PREFIX):]] = tuple(fields)
    return tables, unions


def differences(tables, unions):
    found = []
    for table in sorted(set(tables) | set(pte_program._TABLES)):
        ours, theirs = pte_program._TABLES.get(table), tables.get(table)
        if ours is None or theirs is None:
            found.append("%s: only in %s" % (table, "program.fbs" if ours is None else "etcorev.pte.program"))
            continue
        for i in range(max(len(ours), len(theirs))):
            mine = ours[i] if i < len(ours) else None
            fbs = theirs[i] if i < len(theirs) else None
            if mine != fbs:
                found.append("%s field %d: etcorev.pte.program has %s, program.fbs %s" % (table, i, mine, fbs))
    for union in sorted(set(unions) | set(pte_program._UNIONS)):
        if unions.get(union) != pte_program._UNIONS.get(union):
            found.append("union %s: etcorev.pte.program has %s, program.fbs %s"
                         % (union, pte_program._UNIONS.get(union), unions.get(union)))
    return found


def test_pte_schema_matches_the_trees_program_fbs(et_root, tmp_path):
    schema_dir = et_root / "schema"
    tables, unions = tables_and_unions(json_schema(schema_dir, tmp_path), enum_types(schema_dir))
    assert differences(tables, unions) == []


@pytest.mark.parametrize("change, expected", [
    # A field added in the middle moves the ones after it to other vtable slots.
    (lambda t: t.replace("  requires_grad: bool;", "  is_view: bool;\n  requires_grad: bool;", 1),
     "Tensor field 4: etcorev.pte.program has ('requires_grad', 'bool'), program.fbs ('is_view', 'bool')"),
    # A wider type.
    (lambda t: re.sub(r"(table KernelCall \{[^}]*?op_index: )int;", r"\1long;", t, count=1),
     "KernelCall field 0: etcorev.pte.program has ('op_index', 'i32'), program.fbs ('op_index', 'i64')"),
    # A new member of a union.
    (lambda t: re.sub(r"(union InstructionArguments \{[^}]*FreeCall,?)", r"\1\n  Null,", t,
                      count=1),
     "union InstructionArguments"),
])
def test_a_changed_schema_is_reported(et_root, tmp_path, change, expected):
    schema_dir = tmp_path / "schema"
    shutil.copytree(et_root / "schema", schema_dir)
    fbs = schema_dir / "program.fbs"
    changed = change(fbs.read_text())
    assert changed != fbs.read_text()
    fbs.write_text(changed)
    out = tmp_path / "out"
    out.mkdir()
    found = differences(*tables_and_unions(json_schema(schema_dir, out), enum_types(schema_dir)))
    assert any(expected in line for line in found), found
