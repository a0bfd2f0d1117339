"""ExecuTorch's Buck files, evaluated strictly, as the source of truth for which source
files make up which library.

- `build_variables.bzl` is plain Python holding file lists; ExecuTorch's CMake `exec()`s
  it (tools/cmake/Codegen.cmake, executorch_append_filelist), and so do we.
- A package's `targets.bzl` (Starlark) defines targets in `define_common_targets()`.
  Evaluating it records every `runtime.cxx_library(...)`: its sources, headers and
  dependencies. Starlark is close enough to Python to run as Python, with the Starlark
  built-ins and Buck's helpers given explicitly (STUBS below).

Strict: a name, attribute, helper or loaded symbol this evaluator does not know is an
error naming the file and line, never a silent empty value: if ExecuTorch changes its Buck
files in a way we do not understand, the build says so instead of quietly losing sources.
"""

import builtins
import functools
import os
import re
from typing import Dict, List, Optional

from etcorev.executorch.et_tree import BUILD_VARIABLES, ETSourceError, TreeReader

SHIM_ROOT = "shim_et/xplat/executorch"

# The Starlark built-ins these files may use, as Python offers them.
STARLARK_BUILTINS = {name: getattr(builtins, name) for name in (
    "len", "range", "str", "int", "bool", "list", "dict", "tuple", "sorted", "reversed",
    "enumerate", "zip", "any", "all", "min", "max", "type", "hasattr", "getattr",
    "isinstance", "print", "repr", "hash", "set", "True", "False", "None",
    "NameError", "AttributeError")}


class BuckError(ETSourceError):
    pass


def _where(error: BaseException, default: str) -> str:
    """file:line of the innermost frame of a Buck file in error's traceback."""
    where = default
    tb = error.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.endswith(".bzl"):
            where = "%s:%d" % (name, tb.tb_lineno)
        tb = tb.tb_next
    return where


def _unsupported(root, where: str, what: str) -> BuckError:
    return BuckError(
        "%s/%s: %s. This build evaluates ExecuTorch's Buck files strictly to find which "
        "sources each kernel needs; this construct is new to it, so this ExecuTorch "
        "version is not supported by these build rules (site_scons/etcorev/executorch/buck.py)."
        % (root, where, what))


def exec_build_variables(reader: TreeReader) -> Dict[str, List[str]]:
    """The file lists (`NAME_SRCS = [...]`) of build_variables.bzl."""
    namespace = {"__builtins__": STARLARK_BUILTINS}
    try:
        exec(compile(reader.text(BUILD_VARIABLES), BUILD_VARIABLES, "exec"), namespace)
    except Exception as error:
        raise _unsupported(reader.root, _where(error, BUILD_VARIABLES),
                           "%s: %s" % (type(error).__name__, error)) from error
    return {k: list(v) for k, v in namespace.items()
            if k.isupper() and isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v)}


class _Strict:
    """An object with a fixed set of attributes; any other is an AttributeError."""

    def __init__(self, name: str, **attributes):
        self._name = name
        self.__dict__.update(attributes)

    def __getattr__(self, attr):
        raise AttributeError("'%s' has no attribute %r known to this build" % (self._name, attr))


def _select(choices):
    """Starlark select(): the DEFAULT branch, as an open-source build would configure."""
    if isinstance(choices, dict):
        if "DEFAULT" not in choices:
            raise ValueError("select() without a DEFAULT branch: %r" % sorted(choices))
        return choices["DEFAULT"]
    return choices


def _fail(*args, **kwargs):
    raise RuntimeError("fail(): " + " ".join(str(a) for a in args))


def _selects_apply(obj=None, function=None, **kwargs):
    if function is not None:
        function(obj)
    return obj


def _none(*args, **kwargs):
    return None


# Helper files that are given, not executed: what they export here. Their real versions
# wrap Meta-internal rules; for source lists only these matter.
def _stub_modules(runtime):
    return {
        "runtime_wrapper.bzl": {
            "runtime": runtime,
            "get_aten_mode_options": lambda: [False],
            "is_xplat": lambda: False,
            "is_fbcode": lambda: False,
            "get_default_executorch_platforms": lambda: [],
        },
        "selects.bzl": {"selects": _Strict("selects", apply=_selects_apply)},
        # Operator libraries and generated registrations: built by this build itself.
        "codegen.bzl": {"et_operator_library": _none, "executorch_generated_lib": _none},
        # Meta's platform lists and file exports (backends/cortex_m/ops).
        "platform_defs.bzl": {"CXX": "CXX"},
        "export_files.bzl": {"export_file": _none},
    }


class BuckEvaluator:
    """Evaluates targets.bzl files and records their C++ libraries:
    targets[label] = {"srcs": [...], "headers": [...], "deps": [labels]}."""

    RECORDED_RULES = ("cxx_library",)
    IGNORED_RULES = ("filegroup", "export_file", "genrule", "python_library",
                     "python_binary", "cxx_test", "python_test")

    def __init__(self, reader: TreeReader, build_vars: Dict[str, List[str]]):
        self.reader = reader
        self.build_vars = build_vars
        self.targets: Dict[str, dict] = {}
        self.notes: List[str] = []
        self.modules: Dict[str, dict] = {}
        self.evaluated: Dict[str, bool] = {}
        self.package: Optional[str] = None
        rules = {name: functools.partial(self._record, name) for name in self.RECORDED_RULES}
        rules.update({name: _none for name in self.IGNORED_RULES})
        self.stubs = _stub_modules(_Strict("runtime", is_oss=True, **rules))

    # ---- modules
    def _globals(self, origin: str) -> dict:
        env = {"__builtins__": STARLARK_BUILTINS, "__name__": "bzl:" + origin,
               "select": _select, "fail": _fail, "struct": lambda **kw: _Strict("struct", **kw),
               "native": _Strict("native", partial=functools.partial, glob=self._glob),
               "read_config": lambda section, key, default=None: default}
        env["load"] = lambda label, *names, **aliases: self._load(env, label, names, aliases)
        return env

    def _load(self, env: dict, label: str, names, aliases) -> None:
        module, origin = self._module(label)
        for alias, name in [(n, n) for n in names] + list(aliases.items()):
            if name not in module:
                raise NameError("load(%r): %s does not define %r" % (label, origin, name))
            env[alias] = module[name]

    def _module(self, label: str):
        m = re.match(r"^@?[\w-]*//(.*?):([^:]+)$", label)
        if not m:
            raise NameError("load(%r): not a label this build understands" % label)
        package, filename = m.group(1), m.group(2)
        for prefix in ("xplat/executorch/", "executorch/"):
            if package.startswith(prefix):
                package = package[len(prefix):]
                break
        if filename == "build_variables.bzl":
            return self.build_vars, BUILD_VARIABLES
        if filename in self.stubs:
            return self.stubs[filename], filename + " (given by this build)"
        for rel in ("%s/%s/%s" % (SHIM_ROOT, package, filename), "%s/%s" % (package, filename)):
            rel = rel.replace("//", "/")
            if self.reader.exists(rel):
                return self._exec(rel), rel
        raise NameError("load(%r): no such file in the tree" % label)

    def _exec(self, rel: str) -> dict:
        if rel not in self.modules:
            env = self.modules[rel] = self._globals(rel)
            exec(compile(self.reader.text(rel), rel, "exec"), env)
        return self.modules[rel]

    # ---- targets
    def evaluate_package(self, package: str, required: bool) -> bool:
        """Record the targets of package/targets.bzl; False when there is none."""
        if package in self.evaluated:
            return self.evaluated[package]
        rel = package + "/targets.bzl"
        self.evaluated[package] = self.reader.exists(rel)
        if not self.evaluated[package]:
            if required:
                raise ETSourceError(
                    "The ExecuTorch tree %s has no %s, which says how its kernel sources "
                    "depend on each other; this ExecuTorch version is not supported by these "
                    "build rules." % (self.reader.root, rel))
            return False
        saved, self.package = self.package, package
        try:
            env = self._exec(rel)
            if "define_common_targets" not in env:
                raise NameError("%s defines no define_common_targets()" % rel)
            env["define_common_targets"]()
        except BuckError:
            raise
        except Exception as error:
            raise _unsupported(self.reader.root, _where(error, rel),
                               "%s: %s" % (type(error).__name__, error)) from error
        finally:
            self.package = saved
        return True

    def _glob(self, include, exclude=()):
        """native.glob(): files of the current package matching the patterns."""
        import fnmatch
        base = self.reader.abspath(self.package)
        files = sorted(os.path.relpath(os.path.join(d, f), base)
                       for d, _, names in os.walk(base) for f in names)
        return [f for f in files if any(fnmatch.fnmatch(f, p) for p in include)
                and not any(fnmatch.fnmatch(f, p) for p in exclude)]

    def _record(self, kind: str, name=None, srcs=None, exported_headers=None, headers=None,
                deps=None, exported_deps=None, **ignored) -> None:
        if self.package is None:
            raise RuntimeError("runtime.%s() outside define_common_targets()" % kind)
        if not isinstance(name, str):
            raise TypeError("runtime.%s() without a name" % kind)
        package = self.package
        sources = []
        for src in _flatten(srcs):
            src = src[0] if isinstance(src, (tuple, list)) else src   # (file, flags)
            if src.endswith((".cpp", ".cc", ".c")):
                sources.append("%s/%s" % (package, src))
        header_list = []
        for group in (exported_headers, headers):
            if isinstance(group, dict):
                group = list(group.values())
            header_list += ["%s/%s" % (package, h) for h in _flatten(group)]
        labels = [_norm_label(d, package) for d in _flatten(deps) + _flatten(exported_deps)]
        self.targets["//%s:%s" % (package, name)] = {
            "srcs": sources, "headers": header_list, "deps": list(dict.fromkeys(labels))}

    def follow_deps(self, prefix: str) -> None:
        """Evaluate the targets.bzl of every package under prefix that a recorded
        dependency points into, until no new package is reached."""
        while True:
            pending = {d[2:].split(":", 1)[0] for t in list(self.targets.values())
                       for d in t["deps"] if d.startswith("//") and d not in self.targets}
            pending = sorted(p for p in pending if p.startswith(prefix) and p not in self.evaluated)
            if not pending:
                return
            for package in pending:
                self.evaluate_package(package, required=False)

    def add_include_targets(self, files: List[str]) -> None:
        """A source that no target builds depends on the targets exporting the headers
        it includes."""
        built = {s for t in self.targets.values() for s in t["srcs"]}
        header_targets: Dict[str, List[str]] = {}
        for label, t in self.targets.items():
            for h in t["headers"]:
                header_targets.setdefault(h, []).append(label)
        for f in files:
            if f in built:
                continue
            deps = []
            for inc in re.findall(r'^\s*#\s*include\s*[<"]executorch/([^>"]+)[>"]',
                                  self.reader.text(f), re.M):
                deps.extend(header_targets.get(inc, []))
            label = "//%s:%s#includes" % tuple(f.rsplit("/", 1))
            self.targets[label] = {"srcs": [f], "headers": [], "deps": list(dict.fromkeys(deps))}
            self.notes.append("%s: no Buck target; deps from #includes" % f)


def _flatten(x) -> list:
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        out = []
        for y in x:
            out.extend(_flatten(y) if isinstance(y, list) else [y])
        return out
    if isinstance(x, str):
        return [x]
    raise TypeError("expected a string or a list of them, got %r" % (x,))


def _norm_label(dep: str, package: str) -> str:
    """`:foo` / `//executorch/a/b:c` -> `//a/b:c` (root-relative); others unchanged."""
    if dep.startswith(":"):
        return "//%s:%s" % (package, dep[1:])
    m = re.match(r"^@?(fbsource|fbcode|xplat)?//(.*)$", dep)
    if not m:
        return dep
    path = m.group(2)
    for prefix in ("xplat/executorch/", "executorch/"):
        if path.startswith(prefix):
            path = path[len(prefix):]
            break
    else:
        return dep
    p, n = path.split(":", 1) if ":" in path else (path, path.rsplit("/", 1)[-1])
    return "//%s:%s" % (p, n)

