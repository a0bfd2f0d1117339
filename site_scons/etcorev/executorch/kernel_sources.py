"""ExecuTorch's kernel libraries: which operators each provides, which source file
implements each operator, and which helper sources that file needs.

- The operators of a library are the entries of its kernel YAML.
- An operator's source is `op_<base>.cpp` when that file defines the YAML's
  `kernel_name` function, otherwise whichever `.cpp` of the library defines it.
- The helpers (`util/*.cpp`, `pattern/*.cpp`, ...) are the sources of the transitive
  Buck dependencies of the target that builds the operator's file (etcorev.executorch.buck); an op
  file that no target builds depends on the targets exporting the headers it includes.

TREE_LIBRARIES is the one place that names the tree's libraries: adding one of
ExecuTorch's kernel libraries is one entry there.
"""

import os
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Tuple

from etcorev.executorch.et_tree import ETSourceError, TreeReader

FUNCTIONS_YAML_FLAG = "--functions-yaml-path"
CUSTOM_OPS_YAML_FLAG = "--custom-ops-yaml-path"


@dataclass(frozen=True)
class TreeLibrary:
    name: str
    yaml: str                  # its kernel YAML, relative to the root
    yaml_flag: str             # how codegen takes it
    src_dir: str               # where its op_*.cpp files are
    packages: Tuple[str, ...]  # Buck packages defining its op and helper targets
    all_globs: Tuple[str, ...] = ()   # ops=all: every .cpp under these (CMake's glob)
    optional: bool = False     # left out when the tree lacks its YAML


# Search order: an operator comes from the first library that has it.
TREE_LIBRARIES: Tuple[TreeLibrary, ...] = (
    TreeLibrary("portable", "kernels/portable/functions.yaml", FUNCTIONS_YAML_FLAG,
                "kernels/portable/cpu",
                ("kernels/portable/cpu", "kernels/portable/cpu/util",
                 "kernels/portable/cpu/pattern"),
                all_globs=("kernels/portable/cpu",)),
    TreeLibrary("quantized", "kernels/quantized/quantized.yaml", CUSTOM_OPS_YAML_FLAG,
                "kernels/quantized/cpu", ("kernels/quantized/cpu",), optional=True),
    # The Cortex-M backend's int8 operators (cortex_m::...), over CMSIS-NN (cmsis_nn.py).
    TreeLibrary("cortex_m", "backends/cortex_m/ops/operators.yaml", CUSTOM_OPS_YAML_FLAG,
                "backends/cortex_m/ops", ("backends/cortex_m/ops",), optional=True),
)

# Buck dependencies are followed only inside this part of the tree; anything else is
# core runtime or headers, which the build has anyway.
KERNEL_PACKAGE_PREFIX = "kernels/"


def normalize_op(op: str) -> str:
    op = str(op).strip()
    return op if "::" in op else "aten::" + op


def entry_op_name(entry) -> Optional[str]:
    """The operator of a functions.yaml (`op:`) or custom_ops.yaml (`func:`) entry."""
    if not isinstance(entry, dict):
        return None
    name = entry.get("op") or str(entry.get("func") or "").split("(", 1)[0].strip()
    return normalize_op(name) if name else None


def read_yaml(text: str, where: str):
    import yaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader) or []
    except yaml.YAMLError as error:
        raise ETSourceError("Could not read the kernel YAML %s: %s"
                            % (where, yaml_problem(error))) from error


def yaml_problem(error) -> str:
    """A YAMLError in one line, where and what: "line 2, column 1: expected ',' or ']',
    but got '<stream end>' (parsing a flow sequence from line 1)" (PyYAML's own text
    spreads it over five, with the line quoted)."""
    problem = " ".join(str(getattr(error, "problem", None) or error).split())
    mark = getattr(error, "problem_mark", None)
    if mark is not None:
        problem = "line %d, column %d: %s" % (mark.line + 1, mark.column + 1, problem)
    context, context_mark = getattr(error, "context", None), getattr(error, "context_mark", None)
    if context and context_mark is not None:
        problem += " (%s from line %d)" % (" ".join(context.replace("while ", "").split()),
                                           context_mark.line + 1)
    return problem


# ---- which file defines a kernel function

def _find_matching_paren(text: str, i: int) -> int:
    depth = 1
    while i < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return i


_AFTER_PARAMS = re.compile(r"\s*(?:const\b\s*)?(?:noexcept\b\s*)?(?:override\b\s*)?\{")


def defines_function(text: str, fn: str) -> bool:
    """Does this C++ source define function fn, directly or through a macro?"""
    if fn not in text:
        return False
    name = re.escape(fn)
    for m in re.finditer(r"(?<![\w.>:])" + name + r"\s*\(", text):
        if _AFTER_PARAMS.match(text, _find_matching_paren(text, m.end())):
            return True
    # DEFINE_UNARY_UFUNC_...(acos_out, std::acos)
    return bool(re.search(r"\b[A-Z][A-Z0-9_]*\s*\(\s*" + name + r"\s*[,)]", text))


def _cmake_excluded(rel: str) -> bool:
    # kernels/portable/CMakeLists.txt: EXCLUDE REGEX "test/*.cpp" and "codegen".
    return bool(re.search(r"test/*.cpp", rel)) or "codegen" in rel


def index_library(reader: TreeReader, lib: TreeLibrary, notes: List[str]) -> dict:
    """{"ops": {op: [files]}, "all_op_sources": [...], "all_glob_sources": [...]}."""
    if not reader.exists(lib.yaml):
        raise ETSourceError(
            "The ExecuTorch tree %s has no %s, which the %s kernel library needs; this "
            "ExecuTorch version is not supported by these build rules."
            % (reader.root, lib.yaml, lib.name))
    src_files = reader.glob_cpp(lib.src_dir, recursive=False)
    search_order = sorted(src_files, key=lambda p: (not os.path.basename(p).startswith("op_"), p))
    texts: Dict[str, str] = {}

    def text(rel):
        if rel not in texts:
            texts[rel] = reader.text(rel)
        return texts[rel]

    ops: Dict[str, List[str]] = {}
    # op -> (its file by the naming rule, the kernel function) for an op no source
    # defines: that file missing names what to restore.
    undefined: Dict[str, Tuple[str, str]] = {}
    entries = read_yaml(reader.text(lib.yaml), "%s/%s" % (reader.root, lib.yaml))
    for entry in entries:
        op = entry_op_name(entry)
        if op is None or op in ops:
            continue
        files: List[str] = []
        base = op.split("::")[-1].split(".")[0]
        for kernel in entry.get("kernels") or []:
            fn = str((kernel or {}).get("kernel_name") or "").split("::")[-1]
            if not fn:
                continue
            candidate = "%s/op_%s.cpp" % (lib.src_dir, base)
            if candidate in src_files and defines_function(text(candidate), fn):
                found = candidate
            else:
                found = next((p for p in search_order if defines_function(text(p), fn)), None)
                notes.append("%s: kernel %s %s" % (op, fn, "found in " + found if found
                                                    else "defined by no source"))
            if found and found not in files:
                files.append(found)
            elif not found:
                undefined[op] = (candidate, fn)
        ops[op] = files
    all_op_sources = sorted({f for fs in ops.values() for f in fs}
                            | {f for f in src_files if os.path.basename(f).startswith("op_")})
    globbed = {f for g in lib.all_globs for f in reader.glob_cpp(g, recursive=True)
               if not _cmake_excluded(f)}
    return {"ops": ops, "undefined": {op: list(v) for op, v in undefined.items()},
            "all_op_sources": all_op_sources,
            "all_glob_sources": sorted(globbed - set(all_op_sources))}


def helper_sources(targets: Dict[str, dict], file_targets: Dict[str, List[str]],
                   files: Iterable[str]) -> List[str]:
    """Sources of the transitive dependencies of the targets that build files, without
    files themselves."""
    todo = [d for f in files for label in file_targets.get(f, ()) for d in targets[label]["deps"]]
    seen, out = set(), set()
    while todo:
        label = todo.pop()
        if label in seen or label not in targets:
            continue
        seen.add(label)
        out.update(targets[label]["srcs"])
        todo.extend(targets[label]["deps"])
    return sorted(out - set(files))


def unknown_ops_message(unknown: List[str], searched: List[Tuple[str, str]],
                        known: Iterable[str], root, version: Optional[str]) -> str:
    """searched: (library name, yaml) in search order."""
    import difflib
    known = list(known)
    hints = []
    for op in unknown:
        close = difflib.get_close_matches(op, known, n=3, cutoff=0.75)
        hints.append("%s (did you mean %s?)" % (op, " or ".join(close)) if close else op)
    return ("Operator%s %s %s not in any kernel library searched (%s) of the ExecuTorch %s "
            "tree at %s. Check the operator names (as the model lists them, e.g. "
            "aten::add.out), or give kernels of your own with $KERNEL_DIRS=DIR (a directory with "
            "one .yaml in functions.yaml or custom_ops.yaml format and the C++ sources)."
            % ("s" if len(unknown) > 1 else "", ", ".join(hints),
               "are" if len(unknown) > 1 else "is",
               "; ".join("%s: %s" % s for s in searched), version or "(unknown version)", root))
