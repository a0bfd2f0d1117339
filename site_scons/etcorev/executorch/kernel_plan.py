"""Which kernel library builds which of a model's operators.

Libraries are searched in order, and an operator comes from the first that covers it:

1. the user's kernel directories (`kernels=DIR,...`);
2. this build's kernel libraries, every directory of kernels/ with a library.yaml (the
   CORE-V kernels, kernels/corev: for the operators and dtypes its coverage.yaml lists;
   each of its kernels falls back to the tree's kernel for what its fast paths do not
   handle, so the tree's source of every operator it takes is compiled beside it, with
   the same dtype selection, unregistered), and the corrections of ExecuTorch's portable
   kernels where they give wrong answers (kernels/portable_fixes); corev_kernels=0 leaves
   out all but the corrections;
3. ExecuTorch's libraries (etcorev.executorch.kernel_sources.TREE_LIBRARIES: portable,
   quantized, and the Cortex-M operators over CMSIS-NN).

A directory library (DirectoryKernels) is C++ sources, the yaml of their operators and
an optional library.yaml that declares its coverage, fallback, flags and the files that
stand in for a dependency's. Each library that provides an operator gets its own codegen
run and registration, as ExecuTorch's CMake builds portable_ops_lib and quantized_ops_lib.
"""

import difflib
import glob
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Tuple, Union

from etcorev import locations
from etcorev.executorch import cmsis_nn, et_index
from etcorev.errors import BuildSetupError
from etcorev.executorch.et_tree import ETSourceError
from etcorev.executorch.kernel_sources import (CUSTOM_OPS_YAML_FLAG, FUNCTIONS_YAML_FLAG, TREE_LIBRARIES,
                                    defines_function, entry_op_name, helper_sources,
                                    normalize_op, unknown_ops_message, yaml_problem)


Selection = Union[Dict[str, List[str]], str]      # op -> kernel keys, or "all"


@dataclass
class Dependency:
    """A library outside the ExecuTorch tree that a kernel library's sources call
    (CMSIS-NN): the files of it they reach, compiled once per variant (files of ours
    may stand in for some of them: kernels/corev/cmsis_nn)."""
    name: str
    root: str
    sources: List[str]                 # absolute: in root, or ours in its place
    include_dirs: List[str] = field(default_factory=list)


@dataclass
class KernelSet:
    """What the build compiles and registers for one library."""
    name: str
    kind: str                          # "tree" or "directory"
    selection: Selection               # its operators, for gen_oplist
    yamls: List[Tuple[str, str]]       # (codegen flag, absolute yaml path)
    op_sources: List[str]              # absolute paths
    util_sources: List[str] = field(default_factory=list)
    include_dirs: List[str] = field(default_factory=list)
    # op source -> the selected operators it implements (its dtype selection); a source
    # not listed serves the whole selection.
    source_ops: Dict[str, List[str]] = field(default_factory=dict)
    dependencies: List[Dependency] = field(default_factory=list)
    flags: List[str] = field(default_factory=list)     # compile flags of its sources

    @property
    def dtype_selective(self):
        return self.selection != "all" and any(
            key != "default" for keys in self.selection.values() for key in keys)

    @property
    def custom_ops(self):
        return any(flag == CUSTOM_OPS_YAML_FLAG for flag, _ in self.yamls)


@dataclass
class Plan:
    kernel_sets: List[KernelSet]
    prim_ops: Tuple[str, ...]
    # What the build should warn about, once (a CMSIS-NN tree at another commit).
    warnings: List[str] = field(default_factory=list)

    @property
    def sources(self):
        return [s for k in self.kernel_sets for s in k.op_sources + k.util_sources]


def _yaml_flag(entries, path):
    """A yaml with ATen operators (`op:` entries, perhaps beside `func:` ones) goes to
    codegen as a functions.yaml; one of only `func:` entries as a custom_ops.yaml (codegen
    then also writes their ahead-of-time registration)."""
    kinds = {"functions" if "op" in e else "custom" for e in entries
             if isinstance(e, dict) and ("op" in e or "func" in e)}
    if not kinds:
        raise BuildSetupError("Kernel yaml '%s' has no operator entries (`- op: name.overload` "
                              "or `- func: ns::name.overload(...)`)." % path)
    return FUNCTIONS_YAML_FLAG if "functions" in kinds else CUSTOM_OPS_YAML_FLAG


def _load_yaml(path, what):
    """The content of a yaml file of a kernel library (what: "The kernel yaml", ...);
    one that cannot be read or is not YAML is one line naming it."""
    import yaml
    try:
        with open(path) as f:
            text = f.read()
    except OSError as error:
        raise BuildSetupError("Cannot read %s %s: %s." % (what[0].lower() + what[1:], path,
                                                         error.strerror))
    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as error:
        raise BuildSetupError("%s %s is not YAML: %s. Fix it." % (what, path,
                                                                 yaml_problem(error)))


def _read_kernel_yaml(path):
    """(entries, codegen flag) of a yaml of ours or the user's."""
    entries = _load_yaml(path, "The kernel yaml") or []
    if not isinstance(entries, list):
        raise BuildSetupError("Kernel yaml '%s' must be a list of operator entries." % path)
    return entries, _yaml_flag(entries, path)


class TreeKernels:
    """One of ExecuTorch's libraries, as the tree's index describes it."""
    kind = "tree"

    def __init__(self, index, library):
        self.index, self.library = index, library
        self.name = library.name
        self.data = index["libraries"][library.name]
        self.yamls = [(library.yaml_flag, os.path.join(index["root"], library.yaml))]
        self.include_dirs = []

    def covers(self, op, keys):
        return op in self.data["ops"]

    def _abs(self, paths):
        return [os.path.join(self.index["root"], p) for p in paths]

    def sources(self, ops):
        """(op sources, helper sources, {op source: its ops}) for ops."""
        source_ops: Dict[str, List[str]] = {}
        for op in ops:
            if not self.data["ops"][op]:
                expected, function = self.data.get("undefined", {}).get(op, (None, None))
                if expected and not os.path.exists(os.path.join(self.index["root"], expected)):
                    raise BuildSetupError(
                        "The ExecuTorch tree %s lacks %s, the source of %s (%s library, "
                        "kernel %s). Restore it (git -C %s checkout -- %s)."
                        % (self.index["root"], expected, op, self.name, function,
                           self.index["root"], expected))
                raise BuildSetupError(
                    "No source file in the ExecuTorch tree %s defines the kernel of %s (%s "
                    "library); this ExecuTorch version is not supported by these build rules."
                    % (self.index["root"], op, self.name))
            for f in self.data["ops"][op]:
                source_ops.setdefault(os.path.join(self.index["root"], f), []).append(op)
        files = [os.path.relpath(f, self.index["root"]) for f in source_ops]
        helpers = helper_sources(self.index["targets"], self.index["file_targets"], files)
        return list(source_ops), self._abs(helpers), source_ops

    def all_sources(self):
        ops = self.data["all_op_sources"]
        helpers = set(helper_sources(self.index["targets"], self.index["file_targets"], ops))
        helpers |= set(self.data["all_glob_sources"])
        return self._abs(ops), self._abs(sorted(helpers - set(ops))), {}


# Our versions of some of ExecuTorch's Cortex-M operator files (kernels/cortex_m): they
# stand in for the tree's files of the same name in every build, so that the operators
# compute what the dialect's reference computes whatever target the program was exported
# for (etcorev.executorch.cortex_m_forms).
CORTEX_M_OPS_DIR = locations.source_dir("kernels", "cortex_m")


def cortex_m_op_stand_ins():
    """{file name: our file} of kernels/cortex_m."""
    return {os.path.basename(p): p
            for p in sorted(glob.glob(os.path.join(CORTEX_M_OPS_DIR, "op_*.cpp")))}


class CortexMKernels(TreeKernels):
    """ExecuTorch's Cortex-M operators (backends/cortex_m/ops): a tree library whose
    kernels call CMSIS-NN, a tree of its own (cmsis_nn=); the CMSIS-NN files the
    selected kernels reach come along (etcorev.executorch.cmsis_nn). The operator files
    of kernels/cortex_m take the place of the tree's of the same name."""

    def __init__(self, index, library, cmsis_root, replacements=()):
        super().__init__(index, library)
        self.cmsis_root = cmsis_root
        self.replacements = list(replacements)
        self.include_dirs = [os.path.join(cmsis_root, "Include")] if cmsis_root else []
        self.stand_ins = cortex_m_op_stand_ins()
        self.warnings = []          # for the build to print (Plan.warnings)

    def _ours_in_place(self, op_sources, source_ops):
        """The sources with ours in place of the tree's files of the same name."""
        chosen = [self.stand_ins.get(os.path.basename(s), s) for s in op_sources]
        return chosen, {self.stand_ins.get(os.path.basename(s), s): ops
                        for s, ops in source_ops.items()}

    def _dependency(self, op_sources, ops):
        if self.cmsis_root:
            try:
                warning = cmsis_nn.check_version(self.cmsis_root, self.index["root"])
            except cmsis_nn.CmsisNNError as error:
                raise BuildSetupError(str(error))
            if warning:
                self.warnings.append(warning)
        else:
            pin = cmsis_nn.pinned_commit(self.index["root"])
            raise BuildSetupError(
                "The model uses ExecuTorch's Cortex-M operators (%s), whose kernels call "
                "CMSIS-NN, and no CMSIS-NN tree is given. Clone it (git clone %s%s) and "
                "pass $CMSIS_NN_ROOT=PATH, or record it once with ./setup.sh --cmsis-nn PATH."
                % (", ".join(sorted(ops)[:3]) + (", ..." if len(ops) > 3 else ""),
                   cmsis_nn.URL, "; git checkout %s" % pin if pin else ""))
        texts = []
        for path in op_sources:
            with open(path) as f:
                texts.append(f.read())
        sources = cmsis_nn.sources_for(self.cmsis_root, cmsis_nn.called_functions(texts),
                                       self.replacements)
        return Dependency("cmsis_nn", self.cmsis_root, sources, list(self.include_dirs))

    def sources(self, ops):
        op_sources, helpers, source_ops = super().sources(ops)
        op_sources, source_ops = self._ours_in_place(op_sources, source_ops)
        self.dependencies = [self._dependency(op_sources, ops)]
        return op_sources, helpers, source_ops

    def all_sources(self):
        op_sources, helpers, source_ops = super().all_sources()
        op_sources, source_ops = self._ours_in_place(op_sources, source_ops)
        self.dependencies = [self._dependency(op_sources, list(self.data["ops"]))]
        return op_sources, helpers, source_ops


# What a library.yaml may declare, written once: key -> (the type of its value, what it
# is). A library.yaml with another key, or a value of another type, is refused in one line
# naming the file and the key. kernels/corev/library.yaml declares them all.
LIBRARY_KEYS = {
    "name": (str, "the library's name (default: the directory's); it names its build "
                  "directories, and no other library may have it"),
    "operators": (str, "the yaml of its operators, a file of the directory (default: its "
                       "one .yaml)"),
    "coverage": (str, "a yaml file of the directory: each operator with the dtypes it "
                      "takes ([Float]); others go on to the next library (default: every "
                      "dtype of every operator)"),
    "fallback": (bool, "true: the tree's source of each operator it takes comes along "
                       "(its kernels call it for the cases they leave)"),
    "flags": (list, "compile flags of its sources ([-O2])"),
    "corrects": (bool, "true: its kernels correct ExecuTorch's where they give wrong answers, "
                       "so $COREV_KERNELS=0 keeps it (kernels/portable_fixes)"),
    "stands_in_for": (dict, "a dependency (DEPENDENCIES) -> a directory of the library "
                            "whose files stand in for the dependency's of the same name"),
}
TYPE_WORDS = {str: "text", bool: "true or false", list: "a list", dict: "a mapping"}
# Dependencies outside the tree whose files a library may stand in for (stands_in_for:).
DEPENDENCIES = {"cmsis_nn": "CMSIS-NN, which ExecuTorch's Cortex-M operators call"}
# A declared name: it becomes part of directory and library file names.
LIBRARY_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+-]*$")


def _kind_of(value):
    return "%r (%s %s)" % (value, "an" if type(value).__name__[0] in "aeiou" else "a",
                           type(value).__name__)


class DirectoryKernels:
    """A kernel library in a directory: C++ sources and the yaml of the operators they
    implement (functions.yaml or custom_ops.yaml format), the user's (kernels=DIR) or
    ours (kernels/*/). A library.yaml beside them may declare the keys of LIBRARY_KEYS,
    for example (kernels/corev/library.yaml):

        name: corev
        operators: functions.yaml
        coverage: coverage.yaml
        fallback: true
        flags: [-O2]
        stands_in_for:
          cmsis_nn: cmsis_nn

    Everything it declares is checked as the library is read: the keys and the types of
    their values, the files and directories they name, the coverage's dtypes.
    fallbacks: the tree's libraries, for a library that declares fallback.
    """
    kind = "directory"

    def __init__(self, directory, fallbacks=()):
        self.directory = os.path.abspath(directory)
        self.declaration = os.path.join(self.directory, "library.yaml")
        declared = self._declaration()
        self.declared_name = declared.get("name")
        self.name = self.declared_name or os.path.basename(os.path.normpath(directory))
        if declared.get("operators"):
            yamls = [self._named_file(declared, "operators")]
        else:
            yamls = [p for p in sorted(glob.glob(os.path.join(self.directory, "*.yaml")))
                     if os.path.basename(p) != "library.yaml"]
        if len(yamls) != 1:
            raise BuildSetupError(
                "Kernel directory '%s' must hold exactly one .yaml (functions.yaml or "
                "custom_ops.yaml format) beside its C++ sources, or name it in a "
                "library.yaml (operators: FILE); it has %d." % (self.directory, len(yamls)))
        self.yamls, self.kernel_names = [], {}
        for path in yamls:
            entries, flag = _read_kernel_yaml(path)
            self.yamls.append((flag, path))
            for entry in entries:
                op = entry_op_name(entry)
                if op:
                    self.kernel_names[op] = [str(k.get("kernel_name", "")).split("::")[-1]
                                             for k in entry.get("kernels") or [] if k]
        self.cpp = sorted(glob.glob(os.path.join(self.directory, "*.cpp")))
        if not self.cpp:
            raise BuildSetupError(
                "Kernel directory '%s' has no C++ sources (*.cpp) implementing the kernels "
                "of its yaml." % self.directory)
        self.include_dirs = [self.directory]
        self.flags = list(declared.get("flags") or [])
        self.dtypes = self._coverage(declared)
        self.declares_fallback = bool(declared.get("fallback"))
        self.corrects = bool(declared.get("corrects"))
        self.fallbacks = list(fallbacks) if self.declares_fallback else []
        self.stands_in_for = self._stand_ins(declared)

    def _refuse(self, what):
        raise BuildSetupError("The kernel library file %s %s." % (self.declaration, what))

    def _declaration(self):
        """library.yaml's mapping ({} without one), its keys and their types checked."""
        if not os.path.isfile(self.declaration):
            return {}
        declared = _load_yaml(self.declaration, "The kernel library file")
        if declared is None:
            return {}
        if not isinstance(declared, dict):
            self._refuse("must be a mapping of keys (%s), not %s"
                         % (", ".join(LIBRARY_KEYS), _kind_of(declared)))
        for key, value in declared.items():
            if key not in LIBRARY_KEYS:
                close = difflib.get_close_matches(str(key), list(LIBRARY_KEYS), n=1)
                self._refuse("has the key %r, which a library.yaml does not have (its keys: "
                             "%s): %s" % (key, ", ".join(LIBRARY_KEYS),
                                          "rename it %s" % close[0] if close else
                                          "remove it"))
            wanted = LIBRARY_KEYS[key][0]
            if not isinstance(value, wanted) or (wanted is not bool and isinstance(value, bool)):
                self._refuse("gives %s %s; it must be %s: %s" % (
                    key, _kind_of(value), TYPE_WORDS[wanted], LIBRARY_KEYS[key][1]))
        name = declared.get("name")
        if name is not None and not LIBRARY_NAME.match(name):
            self._refuse("gives name %r; a library's name is letters, digits, _, -, . and + "
                         "(it names its build directories)" % name)
        flags = declared.get("flags") or []
        wrong = next((flag for flag in flags if not isinstance(flag, str)), None)
        if wrong is not None:
            self._refuse("gives flags %r; each flag must be text (quote it: '%s')"
                         % (flags, wrong))
        return declared

    def _named_file(self, declared, key):
        """The file of the directory that library.yaml's key names; it must exist."""
        path = os.path.join(self.directory, declared[key])
        if not os.path.isfile(path):
            self._refuse("gives %s: %s, which names %s: no such file" % (key, declared[key],
                                                                         path))
        return path

    def _coverage(self, declared):
        """op -> the dtype codes it takes, from the coverage file; None: every dtype."""
        if not declared.get("coverage"):
            return None
        path = self._named_file(declared, "coverage")
        coverage = _load_yaml(path, "The coverage file") or {}
        from etcorev.pte import SCALAR_TYPES
        codes = {dtype: code for code, (dtype, _) in SCALAR_TYPES.items()}
        if not isinstance(coverage, dict):
            raise BuildSetupError(
                "The coverage file %s must be a mapping of each operator to the dtypes it "
                "takes (aten::add.out: [Float]), not %s." % (path, _kind_of(coverage)))
        for op, dtypes in coverage.items():
            unknown = [d for d in dtypes if d not in codes] if isinstance(dtypes, list) \
                else [dtypes]
            if unknown:
                close = difflib.get_close_matches(str(unknown[0]), list(codes), n=1)
                raise BuildSetupError(
                    "The coverage file %s gives %s %r: each operator takes a list of "
                    "ExecuTorch dtypes, and %r is none%s; the dtypes: %s." % (
                        path, op, dtypes, unknown[0], " (%s?)" % close[0] if close else "",
                        ", ".join(codes)))
        return {normalize_op(op): {codes[dtype] for dtype in dtypes}
                for op, dtypes in coverage.items()}

    def _stand_ins(self, declared):
        """dependency -> the directory of files standing in for its own."""
        stand_ins = {}
        for name, sub in (declared.get("stands_in_for") or {}).items():
            if name not in DEPENDENCIES:
                self._refuse("gives stands_in_for: %r, a dependency the build does not know; "
                             "it knows %s" % (name, ", ".join(
                                 "%s (%s)" % item for item in DEPENDENCIES.items())))
            path = os.path.join(self.directory, str(sub))
            if not os.path.isdir(path):
                self._refuse("gives stands_in_for: %s: %s, which names %s: no such directory"
                             % (name, sub, path))
            stand_ins[name] = path
        return stand_ins

    def covers(self, op, keys):
        if op not in self.kernel_names:
            return False
        if self.dtypes is None:
            return True
        if op not in self.dtypes:
            return False
        dtypes = {int(arg.split(";")[0]) for key in keys if key.startswith("v1/")
                  for arg in key[3:].split("|") if arg}
        return dtypes <= self.dtypes[op]

    def sources(self, ops):
        """(sources, helpers, {source: its ops}); a library without fallback: all its
        sources, each serving the whole selection."""
        if ops is None or not self.fallbacks:
            return list(self.cpp), [], {}
        texts = {p: open(p).read() for p in self.cpp}
        source_ops: Dict[str, List[str]] = {}
        utils: List[str] = []
        for op in ops:
            for path, text in texts.items():
                if any(defines_function(text, fn) for fn in self.kernel_names[op]):
                    source_ops.setdefault(path, []).append(op)
            fallback = next((lib for lib in self.fallbacks if lib.covers(op, [])), None)
            if fallback is not None:
                files, helpers, fallback_ops = fallback.sources([op])
                for path in files:
                    source_ops.setdefault(path, []).extend(fallback_ops[path])
                utils += [h for h in helpers if h not in utils]
        # Sources of ours that define no kernel (shared helpers) come along too.
        support = [p for p in self.cpp if p not in source_ops
                   and not os.path.basename(p).startswith("op_")]
        return list(source_ops) + support, utils, source_ops


# Kernel libraries of this build: every directory of kernels/ with a library.yaml.
KERNELS_DIR = locations.source_dir("kernels")


def our_library_dirs():
    return sorted(os.path.dirname(p) for p in glob.glob(os.path.join(KERNELS_DIR, "*",
                                                                      "library.yaml")))


# Tree libraries that need more than the tree (their class, given the options and the
# directories of files the directory libraries stand in with, by dependency).
TREE_LIBRARY_CLASSES = {"cortex_m": lambda index, lib, options, stand_ins: CortexMKernels(
    index, lib, options.get("cmsis_nn") or None,
    _stand_in_files(stand_ins.get("cmsis_nn", []), ".c"))}


def _stand_in_files(directories, suffix):
    """The files standing in for a dependency's, from its stand-in directories in search
    order: of two with one name, the first library's (the user's before ours)."""
    chosen = {}
    for directory in directories:
        for path in sorted(glob.glob(os.path.join(directory, "*" + suffix))):
            chosen.setdefault(os.path.basename(path), path)
    return sorted(chosen.values())


def directory_libraries(kernel_dirs=(), corev=True):
    """(the user's libraries, ours): the directory libraries in search order, each read
    and checked (it needs no tree: a build checks them before any model). A name a
    library.yaml declares is that library's alone: another library of the same name, or
    one of ExecuTorch's, is refused; a name taken from the directory gets a suffix
    instead (ops, ops_2). corev=False: of ours only those that correct ExecuTorch's
    kernels (corrects: true)."""
    seen = {}
    users = []
    for directory in kernel_dirs:
        if not os.path.isdir(directory):
            raise BuildSetupError("Kernel directory '%s' ($KERNEL_DIRS) %s." % (
                directory, "is a file, not a directory" if os.path.exists(directory)
                else "does not exist"))
        real = os.path.realpath(directory)
        if real in seen:
            raise BuildSetupError("Kernel directory '%s' is given twice in $KERNEL_DIRS (as %s "
                                  "and %s): give it once." % (real, seen[real], directory))
        seen[real] = directory
        users.append(DirectoryKernels(directory))
    ours = []
    for directory in our_library_dirs():
        if os.path.realpath(directory) in seen:
            raise BuildSetupError(
                "Kernel directory '%s' ($KERNEL_DIRS) is one of this build's kernel "
                "libraries, searched anyway ($COREV_KERNELS=0 leaves the CORE-V ones out): "
                "leave it out of $KERNEL_DIRS."
                % seen[os.path.realpath(directory)])
        library = DirectoryKernels(directory)
        if corev or library.corrects:
            ours.append(library)
    _name(users + ours)
    return users, ours


def _name(libraries):
    """Give each library a name of its own (see directory_libraries)."""
    tree_names = {lib.name for lib in TREE_LIBRARIES}
    declared = {}
    for library in libraries:
        name = library.declared_name
        if name is None:
            continue
        if name in tree_names:
            raise BuildSetupError(
                "The kernel library file %s gives name: %s, the name of one of ExecuTorch's "
                "kernel libraries (%s): choose another." % (
                    library.declaration, name, ", ".join(sorted(tree_names))))
        if name in declared:
            raise BuildSetupError(
                "Two kernel libraries are named %s: %s and %s give name: %s. Rename one of "
                "them (a library's name names its build directories)."
                % (name, declared[name].declaration, library.declaration, name))
        declared[name] = library
    taken = tree_names | set(declared)
    for library in libraries:
        if library.declared_name is None:
            library.name = _unique_name(library.name, taken)


def _unique_name(name, taken):
    """name, or name_2, ...: a library's name names its codegen and object directories."""
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = "%s_%d" % (name, n)
    taken.add(candidate)
    return candidate


def libraries(root, kernel_dirs=(), corev=True, **options):
    """The kernel libraries in search order. options: what a library needs besides the
    tree (cmsis_nn: the CMSIS-NN tree)."""
    try:
        index = et_index.tree_index(root)
    except ETSourceError as error:
        raise BuildSetupError(str(error))
    users, ours = directory_libraries(kernel_dirs, corev)
    # The directory libraries first (they stand in for files of the tree's), then the
    # tree's; the user's are read as ours are.
    tree_libs = [lib for lib in TREE_LIBRARIES if lib.name in index["libraries"]]
    plain_tree = [TreeKernels(index, lib) for lib in tree_libs]
    stand_ins = {}
    for library in users + ours:
        if library.declares_fallback:
            library.fallbacks = plain_tree
        for name, directory in library.stands_in_for.items():
            stand_ins.setdefault(name, []).append(directory)
    tree = [TREE_LIBRARY_CLASSES[lib.name](index, lib, options, stand_ins)
            if lib.name in TREE_LIBRARY_CLASSES else plain
            for lib, plain in zip(tree_libs, plain_tree)]
    return users + ours + tree, index


def plan(root, selection: Selection, kernel_dirs=(), corev=True, **options) -> Plan:
    """selection: op -> kernel keys (from the model, or ops=a,b with no keys), or "all".
    options: see libraries()."""
    searched, index = libraries(root, kernel_dirs, corev, **options)
    if selection == "all":
        sets, registered = [], set()
        for library in searched:
            if library.kind == "directory":
                # Every operator it registers, with the tree's source of each it falls
                # back to (compiled, not registered); one an earlier library registers
                # stays that library's (a second kernel for one operator name aborts
                # the program at start-up).
                ops = sorted(library.kernel_names)
                rest = [op for op in ops if op not in registered]
                if len(rest) == len(ops):
                    sets.append(_kernel_set(library, "all", *library.sources(ops)))
                elif rest:
                    sets.append(_kernel_set(library, {op: [] for op in rest},
                                            *library.sources(rest)))
                registered.update(ops)
            elif library.kind == "tree" and library.library.all_globs:
                taken = registered & set(library.data["ops"])
                if not taken:
                    sets.append(_kernel_set(library, "all", *library.all_sources()))
                    continue
                # The others of its operators: a second kernel for one operator name
                # aborts the program at start-up (ExecuTorch's register_kernels).
                rest = {op: [] for op in sorted(library.data["ops"]) if op not in taken}
                sets.append(_kernel_set(library, rest, *library.sources(sorted(rest))))
        return _with_warnings(_deduplicated(sets, ()), searched)
    wanted = {normalize_op(op): keys for op, keys in selection.items()}
    chosen: Dict[str, Dict[str, List[str]]] = {}
    prim, unknown = [], []
    for op, keys in sorted(wanted.items()):
        library = next((lib for lib in searched if lib.covers(op, keys)), None)
        if library is not None:
            chosen.setdefault(library.name, {})[op] = keys
        elif op in index["prim_ops"]:
            prim.append(op)
        else:
            unknown.append(op)
    if unknown:
        raise BuildSetupError(unknown_ops_message(
            unknown, [(lib.name, ", ".join(os.path.relpath(y, index["root"]) if lib.kind == "tree"
                                           else y for _, y in lib.yamls)) for lib in searched],
            [op for lib in searched if lib.kind == "tree" for op in lib.data["ops"]],
            index["root"], index["version"]))
    sets = []
    for library in searched:
        if library.name in chosen:
            ops = chosen[library.name]
            sets.append(_kernel_set(library, ops, *library.sources(sorted(ops))))
    return _with_warnings(_deduplicated(sets, tuple(prim)), searched)


def _with_warnings(plan, libraries):
    plan.warnings = [w for library in libraries for w in getattr(library, "warnings", [])]
    return plan


def _kernel_set(library, selection, op_sources, utils, source_ops):
    return KernelSet(name=library.name, kind=library.kind, selection=selection,
                     yamls=list(library.yamls), op_sources=list(op_sources),
                     util_sources=list(utils), include_dirs=list(library.include_dirs),
                     source_ops=source_ops, flags=list(getattr(library, "flags", [])),
                     dependencies=list(getattr(library, "dependencies", [])))


def _deduplicated(sets, prim):
    """Each source compiled once: a helper (or fallback op file) an earlier library
    already has is not compiled again."""
    seen = set()
    for kernel_set in sets:
        kernel_set.op_sources = [s for s in kernel_set.op_sources if s not in seen]
        seen.update(kernel_set.op_sources)
        kernel_set.util_sources = [s for s in kernel_set.util_sources if s not in seen]
        seen.update(kernel_set.util_sources)
    return Plan(sets, prim)
