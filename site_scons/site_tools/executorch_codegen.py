"""ExecuTorch's own code generators, run as SCons builders:

    selected_operators.yaml   <- codegen.tools.gen_oplist         <- operators (a Value)
    native_functions.yaml     <- the schemas of the library's operators, cut from torchgen's
    RegisterCodegen...cpp     <- codegen.gen                      <- both, the library's yamls
    selected_max_kernel_num.h <- codegen.tools.gen_max_kernel_num (v1.4; v1.0 has none)
    selected_op_variants.h    <- codegen.tools.gen_selected_op_variants (dtype selection;
                                 rewritten so that the compiler folds it: foldable_op_variants)

codegen.gen parses every schema it is given, and torchgen's native_functions.yaml has
2,584 (1.3 s, most of a registration's time); it needs only those of the operators the
library's yamls name. The cut keeps every entry of such an operator's base name (add.out
brings add.Tensor, add_.Tensor, ...: torchgen checks variants against each other), the
entries whose `autogen:` makes one, and their `structured_delegate:`s; the generated files
are the same byte for byte (tests/test_codegen.py compares them).

They run inside the SCons process, one at a time: a Python start and the torchgen import
per step would cost more than the generation itself. The tree's `codegen` package is
imported from the tree without writing byte code into it: the build never writes into
the user's ExecuTorch tree. Their argument lists are what ExecuTorch's CMake passes.

    env.Tool("executorch_codegen")      # needs $ET_ROOT
    oplist = env.ETOplist("gen/selected_operators.yaml", env.Value(json_selection))
    files = env.ETRegistration("gen", oplist, yamls, flags)
"""

import contextlib
import hashlib
import importlib
import io
import json
import os
import re
import sys
import threading
import types

import SCons.Errors
from SCons.Action import Action
from SCons.Builder import Builder

from etcorev.toolchain import torchgen


_LOCK = threading.Lock()

REGISTRATION_OUTPUTS = ("RegisterCodegenUnboxedKernelsEverything.cpp",
                        "RegisterCodegenUnboxedKernels_0.cpp", "Functions.h",
                        "NativeFunctions.h", "RegisterKernels.h")
# With a custom_ops.yaml codegen also writes the ahead-of-time (PyTorch) registration.
CUSTOM_OPS_OUTPUTS = ("CustomOpsNativeFunctions.h", "RegisterCPUCustomOps.cpp",
                      "RegisterCPUStub.cpp", "RegisterSchema.cpp")


@contextlib.contextmanager
def _tree_on_path(root):
    saved_path, saved_bytecode = list(sys.path), sys.dont_write_bytecode
    sys.path.insert(0, root)
    sys.dont_write_bytecode = True
    try:
        yield
    finally:
        sys.path[:] = saved_path
        sys.dont_write_bytecode = saved_bytecode


def run_codegen(env, target, module, argv):
    """Run module's main() with argv, in this process; a failure is a one-line BuildError.
    What the generator prints is held back: the job threads print the build's one-line
    messages meanwhile, and its words would land inside them. verbose=1 shows them whole."""
    root, failure = env["ET_ROOT"], None
    torchgen.ensure()
    with _LOCK, _tree_on_path(root), _this_thread_output() as said:
        saved_argv = sys.argv
        sys.argv = [module] + list(argv)
        try:
            main = importlib.import_module(module).main
            main() if module == "codegen.gen" else main(list(argv))
        except SystemExit as stop:                     # argparse
            if stop.code not in (None, 0):
                failure = _failure(target, module, "exit status %s" % stop.code)
        except Exception as error:                     # its own asserts and errors
            failure = _failure(target, module, "%s: %s" % (type(error).__name__, error))
        finally:
            sys.argv = saved_argv
    if env.get("VERBOSE"):
        sys.stdout.write("  (in-process) python -m %s %s\n%s" % (module, " ".join(argv),
                                                                 said["stdout"]))
        sys.stderr.write(said["stderr"])
    if failure:
        raise failure


class _ThreadOutput:
    """Stands in for sys.stdout or sys.stderr: one thread's writes go to a buffer, the
    other threads' to the stream."""

    def __init__(self, stream, thread):
        self.stream, self.thread, self.held = stream, thread, io.StringIO()

    def write(self, text):
        if threading.get_ident() == self.thread:
            return self.held.write(text)
        return self.stream.write(text)

    def flush(self):
        if threading.get_ident() != self.thread:
            self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)


@contextlib.contextmanager
def _this_thread_output():
    """{"stdout": ..., "stderr": ...}: what this thread printed in the block, filled at its
    end. Callers hold _LOCK, so one generator at a time swaps the streams."""
    thread, said = threading.get_ident(), {}
    saved = sys.stdout, sys.stderr
    out, err = _ThreadOutput(saved[0], thread), _ThreadOutput(saved[1], thread)
    sys.stdout, sys.stderr = out, err
    try:
        yield said
    finally:
        sys.stdout, sys.stderr = saved
        said["stdout"], said["stderr"] = out.held.getvalue(), err.held.getvalue()


def _failure(target, module, what):
    return SCons.Errors.BuildError(node=target[0], errstr="ExecuTorch's %s failed: %s"
                                   % (module, " ".join(str(what).split())))


def torchgen_dir():
    return os.path.join(torchgen.ensure(), "torchgen")


def _gen_oplist(target, source, env):
    selection = json.loads(source[0].read())
    argv = ["--output_path=" + target[0].abspath]
    if selection == "all":
        argv.append("--include_all_operators")
    else:
        argv.append("--ops_dict=" + json.dumps(selection, sort_keys=True))
    run_codegen(env, target, "codegen.tools.gen_oplist", argv)


def aten_yaml_dir():
    """torchgen's native_functions.yaml and tags.yaml (of the pinned torch release)."""
    return os.path.join(torchgen_dir(), "packaged", "ATen", "native")


_SCHEMA_ENTRY = re.compile(r"^- func: ([\w.]+)\(", re.M)
_LIBRARY_OP = re.compile(r"^- (?:op|func): *(?:\w+::)?([\w.]+)", re.M)


def _base_name(op):
    """add.out, add_.Tensor -> add: the name torchgen groups an operator's variants by."""
    return op.split(".", 1)[0].rstrip("_")


def schemas_for(aten_text, library_texts):
    """The entries of native_functions.yaml (its text) that codegen needs for the
    operators named in the library yamls (their texts): see the module's doc."""
    wanted = set()
    for text in library_texts:
        wanted.update(_LIBRARY_OP.findall(text))
    bases = {_base_name(op) for op in wanted}
    starts = [m.start() for m in re.finditer(r"^- ", aten_text, re.M)] + [len(aten_text)]
    entries = {}
    for begin, end in zip(starts, starts[1:]):
        entry = aten_text[begin:end]
        match = _SCHEMA_ENTRY.match(entry)
        if match is None:
            raise SCons.Errors.UserError("torchgen's native_functions.yaml has an entry that "
                                         "is not a `- func:`: %r" % entry[:80])
        entries[match.group(1)] = entry

    def field(entry, name):
        found = re.search(r"^  %s: *(.*)$" % name, entry, re.M)
        return [v.strip() for v in found.group(1).split(",")] if found else []

    kept = {name for name, entry in entries.items()
            if _base_name(name) in bases or wanted.intersection(field(entry, "autogen"))}
    for name in list(kept):
        kept.update(d for d in field(entries[name], "structured_delegate") if d in entries)
    # A library of custom operators alone needs none: an empty list, not an empty file
    # (which codegen's YAML loader reads as None).
    return "".join(entry for name, entry in entries.items() if name in kept) or "[]\n"


def _cut_schemas(target, source, env):
    """source[0]: torchgen's native_functions.yaml; then the library's yamls."""
    texts = [node.get_text_contents() for node in source]
    with open(target[0].abspath, "w") as out:
        out.write(schemas_for(texts[0], texts[1:]))


def _gen_registration(target, source, env):
    """source[0]: selected_operators.yaml; source[1]: the schemas (native_functions.yaml
    cut for the library); then the library's yamls, passed with the flags in
    $ET_YAML_FLAGS."""
    argv = ["--source-path=" + os.path.join(env["ET_ROOT"], "codegen"),
            "--install-dir=" + os.path.dirname(target[0].abspath),
            "--tags-path=" + os.path.join(aten_yaml_dir(), "tags.yaml"),
            "--aten-yaml-path=" + source[1].abspath,
            "--op-selection-yaml-path=" + source[0].abspath]
    argv += ["%s=%s" % (flag, node.abspath) for flag, node in zip(env["ET_YAML_FLAGS"], source[2:])]
    run_codegen(env, target, "codegen.gen", argv)


def ETRegistration(env, reg_dir, oplist, yamls, flags):
    """Codegen's registration of a kernel library in reg_dir: oplist (its
    selected_operators.yaml node), yamls (the library's yamls), flags (their codegen
    flags). Returns the generated files, the registration .cpp first."""
    schemas = env.ETSchemas(os.path.join(reg_dir, "native_functions.yaml"),
                            [os.path.join(aten_yaml_dir(), "native_functions.yaml")] + list(yamls))
    return env.ETRegistrationFiles(os.path.join(reg_dir, REGISTRATION_OUTPUTS[0]),
                                   list(oplist) + schemas + list(yamls), ET_YAML_FLAGS=list(flags))


def _registration_emitter(target, source, env):
    names = REGISTRATION_OUTPUTS
    if "--custom-ops-yaml-path" in env["ET_YAML_FLAGS"]:
        names += CUSTOM_OPS_OUTPUTS
    return [target[0].dir.File(name) for name in names], source


def _gen_max_kernel_num(target, source, env):
    """source: the prim ops source, then every library's selected_operators.yaml."""
    # A program without kernels (every output an input, say) selects no library; the tool
    # requires an oplist, and an empty one counts nothing: the header then sizes the
    # registry for the prim ops alone.
    oplists = [node.abspath for node in source[1:]] or [os.devnull]
    argv = ["--oplist-yaml=" + path for path in oplists]
    argv += ["--prim-ops-source=" + source[0].abspath, "--output-path=" + target[0].abspath]
    run_codegen(env, target, "codegen.tools.gen_max_kernel_num", argv)


# The generated should_include_kernel_dtype() compares std::string_views. At -Os GCC
# inlines it into none of the ET_SWITCH cases and so never learns that a case's dtype is
# not selected: the check stays a run-time one and every dtype's code of every operator
# stays in the image (op_add.o: 33 KB for add.out on Float, 3.3 KB with the rewrite, and
# add.pte's image no longer needs soft double). Forced inline and __builtin_strcmp fold it
# to a constant in each case; what it returns is unchanged.
_STRING_VIEW_COMPARE = "std::string_view(operator_name).compare("
_INLINE_DEFINITION = "inline constexpr bool should_include_kernel_dtype("


def foldable_op_variants(text):
    """selected_op_variants.h as gen_selected_op_variants writes it, rewritten so that
    the compiler folds the selection in every switch case."""
    return (text.replace(_STRING_VIEW_COMPARE, "__builtin_strcmp(operator_name, ")
            .replace(_INLINE_DEFINITION, "__attribute__((always_inline)) " + _INLINE_DEFINITION))


# An operator's condition in selected_op_variants.h:
# `(__builtin_strcmp(operator_name, "add.out") == 0) && (scalar_type == ... || ...)`.
_OP_CONDITION = re.compile(r'(__builtin_strcmp\(operator_name, "([\w.]+)"\) == 0\)\s*)'
                           r'&& \((scalar_type == [^()]*)\)')
_SCALAR_TYPE = "scalar_type == executorch::aten::ScalarType::"
# Portable kernels that compute every dtype but float (and float16/bfloat16, computed in
# float) in double, switching on it under their own operator name (op_fmod.cpp,
# op_pow.cpp: `if (compute_type != ScalarType::Float) compute_type = Double`).
_COMPUTED_IN_DOUBLE = {"fmod.Tensor_out", "fmod.Scalar_out", "pow.Tensor_Tensor_out",
                       "pow.Tensor_Scalar_out", "pow.Scalar_out"}
_COMPUTED_IN_FLOAT = {"Float", "Half", "BFloat16"}


def compute_types(op, selected):
    """The dtypes a portable kernel switches on besides its kernel keys' own (selected)."""
    extra = set()
    if selected & {"Half", "BFloat16"}:
        extra.add("Float")
    if op in _COMPUTED_IN_DOUBLE and selected - _COMPUTED_IN_FLOAT:
        extra.add("Double")
    return extra - selected


def with_compute_types(text):
    """selected_op_variants.h with each operator's compute types selected beside the
    dtypes of its kernel keys. ExecuTorch's portable kernels switch again on the compute
    type under the same operator name: float for float16 and bfloat16 (get_compute_type
    in elementwise_util.h), double for integers in fmod and pow. Selecting only the
    kernel keys' dtypes, a float16 program's add.out aborted with "Unhandled dtype
    Float", an int32 fmod with "dtype not selected for operator fmod.Tensor_out"."""
    def widen(match):
        checks = match.group(3)
        selected = set(re.findall(r"ScalarType::(\w+)", checks))
        for dtype in sorted(compute_types(match.group(2), selected)):
            checks += " || " + _SCALAR_TYPE + dtype
        return "%s&& (%s)" % (match.group(1), checks)
    return _OP_CONDITION.sub(widen, text)


def _gen_op_variants(target, source, env):
    run_codegen(env, target, "codegen.tools.gen_selected_op_variants",
                ["--yaml-file=" + source[0].abspath,
                 "--output-dir=" + os.path.dirname(target[0].abspath) + os.sep])
    with open(target[0].abspath) as f:
        text = f.read()
    with open(target[0].abspath, "w") as f:
        f.write(with_compute_types(foldable_op_variants(text)))


def _rewrite_signature():
    """The rewrite of selected_op_variants.h as text: a function action's signature is
    its own code, not that of the functions it calls, so a change of the compute types
    would not remake the headers of existing build directories."""
    def text(code):          # not marshal: its output varies with reference counts
        return repr((code.co_code, code.co_names, [
            text(c) if isinstance(c, types.CodeType) else repr(c) for c in code.co_consts]))
    code = "".join(text(f.__code__) for f in (foldable_op_variants, compute_types,
                                               with_compute_types))
    return hashlib.sha1((code + repr(sorted(_COMPUTED_IN_DOUBLE))).encode()).hexdigest()


def generate(env):
    env["ET_OP_VARIANTS_REWRITE"] = _rewrite_signature()
    env["BUILDERS"].update(
        ETOplist=Builder(action=Action(_gen_oplist, "$GENCOMSTR")),
        ETSchemas=Builder(action=Action(_cut_schemas, "$GENCOMSTR")),
        ETRegistrationFiles=Builder(action=Action(_gen_registration, "$GENCOMSTR",
                                                  varlist=["ET_YAML_FLAGS"]),
                                    emitter=_registration_emitter),
        ETMaxKernelNum=Builder(action=Action(_gen_max_kernel_num, "$GENCOMSTR")),
        ETOpVariants=Builder(action=Action(_gen_op_variants, "$GENCOMSTR",
                                           varlist=["ET_OP_VARIANTS_REWRITE"])),
    )
    env.AddMethod(ETRegistration)


def exists(env):
    return True
