"""Which kernel libraries build which of a model's operators.

Libraries are searched in order: the user's own kernel directories (kernels=DIR,...),
then ExecuTorch's portable library, then its quantized library. Each library that
provides an operator gets its own codegen run (its yaml, its selected operators) and
its own registration, as ExecuTorch's CMake builds portable_ops_lib and
quantized_ops_lib.

A user kernel directory holds one yaml in ExecuTorch's functions.yaml format
(`- op: name.overload`) or custom_ops.yaml format (`- func: ns::name.overload(...)`)
and the C++ sources implementing it.
"""

import glob
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple, Union

from etcorev import etsources
from etcorev.errors import BuildSetupError


@dataclass
class KernelSet:
    name: str                      # "portable", "quantized" or the directory's name
    selection: Union[Dict[str, List[str]], str]   # gen_oplist ops_dict, or "all"
    yaml: str                      # absolute path of the library's yaml
    yaml_flag: str                 # --functions-yaml-path or --custom-ops-yaml-path
    op_sources: List[str]          # absolute paths
    util_sources: List[str] = field(default_factory=list)
    include_dirs: List[str] = field(default_factory=list)
    from_tree: bool = True         # sources relative to the ExecuTorch root

    @property
    def dtype_selective(self):
        return self.selection != "all" and any(
            key != "default" for keys in self.selection.values() for key in keys)


@dataclass
class Plan:
    kernel_sets: List[KernelSet]
    prim_ops: Tuple[str, ...]

    @property
    def sources(self):
        return [s for k in self.kernel_sets for s in k.op_sources + k.util_sources]


def _yaml_ops(path):
    import yaml
    with open(path) as f:
        entries = yaml.safe_load(f) or []
    ops, kinds = set(), set()
    for entry in entries:
        if "func" in entry:
            name, kind = entry["func"].split("(", 1)[0].strip(), "custom"
        elif "op" in entry:
            name, kind = entry["op"].strip(), "functions"
        else:
            continue
        ops.add(name if "::" in name else "aten::" + name)
        kinds.add(kind)
    return ops, kinds


def user_library(directory):
    """The yaml, its operators and the sources of a kernels=DIR directory."""
    yamls = sorted(glob.glob(os.path.join(directory, "*.yaml")))
    if len(yamls) != 1:
        raise BuildSetupError(
            "Kernel directory '%s' must hold exactly one .yaml (functions.yaml or "
            "custom_ops.yaml format) beside its C++ sources; it has %d." % (directory, len(yamls)))
    try:
        ops, kinds = _yaml_ops(yamls[0])
    except Exception as error:   # yaml errors, wrong structure
        raise BuildSetupError("Cannot read kernel yaml '%s': %s" % (yamls[0], error))
    if len(kinds) != 1:
        raise BuildSetupError(
            "Kernel yaml '%s' must use either `op:` (functions.yaml) or `func:` "
            "(custom_ops.yaml) entries, not both or neither." % yamls[0])
    flag = "--custom-ops-yaml-path" if kinds == {"custom"} else "--functions-yaml-path"
    sources = sorted(glob.glob(os.path.join(directory, "*.cpp")))
    if not sources:
        raise BuildSetupError(
            "Kernel directory '%s' has no C++ sources (*.cpp) implementing the kernels "
            "of '%s'." % (directory, os.path.basename(yamls[0])))
    return os.path.basename(os.path.normpath(directory)), yamls[0], flag, ops, sources


def _unique_name(name, taken):
    """name, or name_2, name_3, ...: the first not in taken (which it joins). A library's
    name names its codegen and object directories, so no two may share one."""
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = "%s_%d" % (name, n)
    taken.add(candidate)
    return candidate


def plan(root, selection, kernel_dirs=()):
    """selection: op -> kernel keys (from the model or ops=a,b), or "all"."""
    root = str(root)
    sets = []
    remaining = None if selection == "all" else {
        (op if "::" in op else "aten::" + op): keys for op, keys in selection.items()}
    taken = set()
    if kernel_dirs:
        try:   # a directory named like one of ExecuTorch's libraries ("portable") is renamed
            taken = {lib.name for lib in etsources.kernel_libraries(root)}
        except etsources.ETSourceError as error:
            raise BuildSetupError(str(error))
    for directory in kernel_dirs:
        name, yaml_path, flag, ops, sources = user_library(directory)
        chosen = ops if remaining is None else ops & set(remaining)
        if not chosen:
            continue
        sets.append(KernelSet(
            name=_unique_name(name, taken), selection="all" if remaining is None else {op: remaining.pop(op) for op in sorted(chosen)},
            yaml=yaml_path, yaml_flag=flag, op_sources=sources,
            include_dirs=[os.path.abspath(directory)], from_tree=False))
    if remaining is not None and not remaining:
        return Plan(sets, ())
    try:
        selected = etsources.select_kernel_sources(
            root, "all" if remaining is None else sorted(remaining),
            libraries=None if remaining is not None else ["portable"])
    except etsources.ETSourceError as error:
        searched = ", ".join(kernel_dirs)
        raise BuildSetupError(str(error) + (
            " Also searched the kernel directories: %s." % searched if searched else
            " For an operator of your own, give its kernels with kernels=DIR (a directory "
            "with one .yaml in functions.yaml or custom_ops.yaml format and the C++ sources)."))
    for lib in selected.libraries:
        functions_yaml, custom_yaml = lib.yaml_paths
        yaml_path, flag = ((functions_yaml, "--functions-yaml-path") if functions_yaml
                           else (custom_yaml, "--custom-ops-yaml-path"))
        sets.append(KernelSet(
            name=lib.name,
            selection="all" if remaining is None else {op: remaining[op] for op in lib.ops},
            yaml=os.path.join(root, yaml_path), yaml_flag=flag,
            op_sources=[os.path.join(root, s) for s in lib.op_sources],
            util_sources=[os.path.join(root, s) for s in lib.util_sources
                          if os.path.join(root, s) not in {u for k in sets for u in k.util_sources}]))
    return Plan(sets, tuple(selected.prim_ops))
