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

The header, the program schema, the program model (:class:`Program`, :class:`Method`,
:class:`ValueSpec`, :class:`DataSegment`) and the parsing are in
:mod:`etcorev.pte.program`; the semantic checks of ``validate_pte()`` in
:mod:`etcorev.pte.check`. This package puts the two together and is what the rest of
the build imports.

A bundled program (``.bpte``, ExecuTorch's ``devtools/bundled_program``: schema
``bundled_program_schema.fbs``, file identifier ``BP08``) holds a ``.pte`` in its
``program`` field and test cases (inputs, expected outputs) for its methods. Both
functions recognise it by its identifier and read the program inside it: the result
is that program's :class:`Program`, with ``size`` the whole file's and ``bundle`` (a
:class:`Bundle`) saying where the program is and what the test cases hold.

Command line: ``python -m etcorev.pte FILE`` prints operators, kernel keys and buffer
sizes as JSON.
"""

from __future__ import annotations

import json
import os
import sys
from typing import List, Optional, Union

from etcorev.pte.check import check_program
from etcorev.pte.program import (  # noqa: F401  (the package's public names)
    BUNDLE_IDENTIFIER, DTYPE_NAMES, EXTENDED_HEADER_MAGIC, FILE_IDENTIFIER, IA_DELEGATE_CALL,
    IA_FREE_CALL, IA_JUMP_FALSE_CALL, IA_KERNEL_CALL, IA_MOVE_CALL, KT_NULL,
    KT_OPTIONAL_TENSOR_LIST, KT_TENSOR, KT_TENSOR_LIST, SCALAR_TYPES, Bundle, DataSegment,
    KernelCall, Method, Program, PteError, TensorArg, TestCase, ValueSpec, parse)

__all__ = [
    "PteError",
    "Program",
    "Method",
    "DataSegment",
    "ValueSpec",
    "Bundle",
    "TestCase",
    "DTYPE_NAMES",
    "SCALAR_TYPES",
    "read_pte",
    "validate_pte",
    "main",
]


def read_pte(path_or_bytes: Union[str, os.PathLike, bytes, bytearray, memoryview]) -> Program:
    """Reads the methods, operators, kernel keys and buffer sizes of a .pte
    file (path or its bytes).  Raises PteError if it cannot be read."""
    return parse(path_or_bytes)


def validate_pte(path: Union[str, os.PathLike, bytes, bytearray, memoryview]) -> Program:
    """Like read_pte(), but verifies the whole file: every FlatBuffer
    reference, the indices between tables, tensors against their buffers and
    the data segments against the file size.  Raises PteError."""
    return parse(path, check=check_program)


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
