"""The ExecuTorch runtime from a source tree, built by SCons alone.

Source lists come from the tree (etcorev.executorch.et_index reads its .bzl files as ExecuTorch's
CMake does), the schema headers from flatc, the kernel registrations from ExecuTorch's own
codegen (the executorch_codegen tool). What one variant builds:

    et/core/...              executorch_core (+ the minimal PAL), compiled once
    et/prim_ops/...          the prim ops, when a model uses them
    et/kernels/...           kernel helpers (util/, pattern/): no dtype selection, shared
    kernels/<lib>/<sel>/...  a kernel source compiled for one dtype selection of the
                             operators it implements (<sel> names it): models with the same
                             selection share the object
    registration/<lib>-<sel>/  codegen and registration of one library's selection
    registry/<sel>/          operator_registry.cpp, its table sized for the selection

    env.Tool("executorch")
    env["ET_ROOT"] = "/src/executorch"       # construction variables, defaults if unset:
    env["ET_LOG_LEVEL"] = "Info"             # Off, Debug, Info, Error, Fatal; $PROFILE: the
                                             # runtime's event-tracer hooks; $VARIANT_DIR
    runtime = env.ExecuTorchRuntime()        # artifacts.ExecuTorchRuntime: core, prim_ops
    plan = kernel_plan.plan(env["ET_ROOT"], program.kernel_keys, cmsis_nn=...)
    kernels = env.ExecuTorchKernels(plan)    # an etcorev.artifacts.KernelBuild
    bundled = env.ExecuTorchBundledProgram() # for a .bpte: library, schema headers
    etdump = env.ExecuTorchETDump()          # profile=etdump: [etdump lib, flatcc runtime]

The devtools parts are built only when asked for: the bundled-program runtime
(devtools/bundled_program, its schema headers from flatc like the program's) for a
.bpte model, ETDumpGen (devtools/etdump) with the flatcc runtime and the ETDump schema
headers for profile=etdump. Those headers come from flatcc's schema compiler, which
the build compiles for this machine from the tree's third-party/flatcc (a submodule),
once per tree, into <build_dir>/host/flatcc-<tree>/ (etcorev.executorch.flatcc).

Nodes that several models of a build share (a kernel object compiled for one dtype
selection, a registration, the registry) are made once: the environments cloned from
one share what they made.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

from SCons.Action import Action

from etcorev.scons import options as option_table  # (a tool module's `options` is SCons's hook)
from etcorev.scons.tools import require_tools
from etcorev.artifacts import BundledProgramRuntime, KernelBuild
from etcorev.artifacts import ExecuTorchRuntime as RuntimeLibraries
from etcorev import locations
from etcorev.scons.shared import made_once
from etcorev.scons import builddir, usercache, variables
from etcorev.executorch import et_index, flatcc
from etcorev.errors import BuildSetupError
from etcorev.executorch.et_tree import ETSourceError, check_tree
from etcorev.run.runner_config import profile_mode

SUPPORTED_VERSIONS = ("1.4.1", "1.0.0")
MIN_VERSION = (1, 0, 0)        # older trees are refused; newer untested ones get a warning
# Kernel registry slots on v1.0, which has no gen_max_kernel_num: enough for the prim
# ops and a model's kernels without the default 2000 slots (~24 KiB of RAM).
V1_0_MAX_KERNEL_NUM = 64
DEBIAN_FLATBUFFERS = "/usr/include/flatbuffers"
DEBIAN_FLATC = "/usr/bin/flatc"
REGISTRY_SOURCE = "runtime/kernel/operator_registry.cpp"
# ExecuTorch's log messages are formatted by vsnprintf in log.cpp. newlib-nano's (CORE-V
# GCC's C library) knows no hh, ll or z, which ExecuTorch's messages use throughout:
# a logging build printed garbage and trapped while reporting an error. log.cpp alone
# takes pal/log_format.h, whose formatter stands in for vsnprintf there.
LOG_SOURCE = "runtime/platform/log.cpp"
LOG_FORMAT_HEADER = os.path.join(locations.source_dir("pal"), "log_format.h")
LOG_FORMAT_SOURCE = os.path.join(locations.source_dir("pal"), "log_format.c")


def _root(env):
    variables.check(env, "ET_ROOT", "ET_LOG_LEVEL", "PROFILE", "CMSIS_NN_ROOT")
    root = env.get("ET_ROOT", "")
    if not root:
        raise BuildSetupError(
            "No ExecuTorch source tree given. Clone ExecuTorch (v1.4.1; v1.0.0 also works) "
            "into a directory named `executorch` and pass $ET_ROOT=PATH, set "
            "EXECUTORCH_ROOT, or record it once with `./setup.sh --executorch PATH` "
            "(it writes the user settings file).")
    root = os.path.abspath(os.path.expanduser(root))
    if not os.path.isdir(root):
        raise BuildSetupError("The ExecuTorch tree '%s' does not exist (from $ET_ROOT, "
                              "EXECUTORCH_ROOT or the user settings)." % root)
    return root


def _check_version(root):
    try:
        version = check_tree(root)
    except ETSourceError as error:
        raise BuildSetupError(str(error))
    if version and tuple(int(n) for n in version.split(".")) < MIN_VERSION:
        raise BuildSetupError(
            "ExecuTorch %s at %s is too old: this build needs ExecuTorch %s or newer "
            "(tested: %s). Check out v%s there, or point $ET_ROOT at a newer tree."
            % (version, root, ".".join(map(str, MIN_VERSION)), ", ".join(SUPPORTED_VERSIONS),
               SUPPORTED_VERSIONS[0]))
    if version not in SUPPORTED_VERSIONS:
        print("scons: warning: ExecuTorch %s at %s is not a tested version (tested: %s); "
              "building anyway." % (version or "of unknown version", root,
                                    ", ".join(SUPPORTED_VERSIONS)), file=sys.stderr)
    return version


# ---------------------------------------------------------------- flatbuffers

def _flatbuffers_config(root):
    """flatc and headers of the same version (generated headers static_assert it): the
    tree's third-party/flatbuffers submodule, else Debian's headers, which need
    EXECUTORCH_INTERNAL_FLATBUFFERS. Returns (flatc, include dir or None for Debian's,
    defines)."""
    found = []
    for flatc in (_wheel_flatc(), shutil.which("flatc"), DEBIAN_FLATC):
        if flatc and os.path.isfile(flatc) and flatc not in found:
            found.append(flatc)
    # Each choice asks its likeliest flatc first: usually one `flatc --version` a run.
    choices = [(os.path.join(root, "third-party", "flatbuffers", "include"), [], found),
               (None, ["EXECUTORCH_INTERNAL_FLATBUFFERS"],
                sorted(found, key=lambda flatc: flatc != DEBIAN_FLATC))]
    for include_dir, defines, candidates in choices:
        headers = os.path.join(include_dir, "flatbuffers") if include_dir else DEBIAN_FLATBUFFERS
        if not os.path.isfile(os.path.join(headers, "base.h")):
            continue
        wanted = _flatbuffers_header_version(os.path.join(headers, "base.h"))
        for flatc in candidates:
            if _flatc_version(flatc) == wanted:
                return flatc, include_dir, defines
    raise BuildSetupError(
        "No flatc with matching flatbuffers headers: the tree's third-party/flatbuffers "
        "submodule is empty (clone with --recursive) and Debian's flatbuffers are not "
        "installed (`apt-get install flatbuffers-compiler libflatbuffers-dev`, which "
        "./setup.sh does). Found flatc: %s." % (", ".join(found) or "none"))


def _wheel_flatc():
    try:
        import executorch  # noqa: F401  (the optional export extra ships a flatc)
        path = os.path.join(os.path.dirname(executorch.__file__), "data", "bin", "flatc")
        return path if os.path.isfile(path) else None
    except ImportError:
        return None


def _flatbuffers_header_version(base_h):
    text = open(base_h).read()
    parts = [re.search(r"#define FLATBUFFERS_VERSION_%s (\d+)" % name, text)
             for name in ("MAJOR", "MINOR", "REVISION")]
    return ".".join(p.group(1) for p in parts) if all(parts) else None


def _flatc_version(flatc):
    """Asked once per flatc binary (etcorev.scons.usercache.remembered)."""
    def ask(path):
        out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        match = re.search(r"(\d+\.\d+\.\d+)", out)
        return match.group(1) if match else None
    return usercache.remembered("flatc.json", flatc, ask)


# ---------------------------------------------------------------- the runtime

def _in(env, *parts):
    return os.path.join(env["VARIANT_DIR"], *parts)


def ExecuTorchSchema(env):
    """program_generated.h and scalar_type_generated.h in the variant's gen directory."""
    env.ExecuTorchTree()
    schema_dir = os.path.join(env["ET_ROOT"], "schema")
    out_dir = os.path.join(env["ET_GEN_DIR"], "executorch", "schema")
    schema = env.Command(
        [os.path.join(out_dir, "program_generated.h"),
         os.path.join(out_dir, "scalar_type_generated.h")],
        [os.path.join(schema_dir, "program.fbs"), os.path.join(schema_dir, "scalar_type.fbs")],
        Action("$FLATC --cpp --cpp-std c++11 --gen-mutable --scoped-enums -o ${TARGET.dir} "
                   "${SOURCES[1]} ${SOURCES[0]}", "$GENCOMSTR"))
    env.Depends(schema, env.get("ET_FLATBUFFERS_HEADERS", []))
    return schema


# ExecuTorch's sources compile without -Wall, as in its own CMake build: their warnings
# (hundreds of lines for the quantized kernels) are not the user's to act on.
TREE_WARNING_FLAGS = []


def _tree_objects(env, directory, sources):
    root = env["ET_ROOT"]
    return env.Clone(WARNING_FLAGS=TREE_WARNING_FLAGS).ObjectsIn(
        directory, [os.path.join(root, s) for s in sources], root)


def ExecuTorchRuntime(env):
    """executorch_core (without operator_registry.cpp, which each model's selection
    sizes) and the prim ops, once per variant: an artifacts.ExecuTorchRuntime."""
    root = env.ExecuTorchTree()

    def make():
        logging = env["ET_LOG_LEVEL"] != "Off"
        core_sources = [s for s in et_index.core_sources(root, pal="minimal")
                        if s != REGISTRY_SOURCE and not (logging and s == LOG_SOURCE)]
        core_objects = _tree_objects(env, _in(env, "et", "core"), core_sources)
        if logging:
            log_env = env.Clone()
            log_env.Append(CCFLAGS=["-include", LOG_FORMAT_HEADER])
            log_objects = _tree_objects(log_env, _in(env, "et", "core"), [LOG_SOURCE])
            env.Depends(log_objects, LOG_FORMAT_HEADER)      # -include: no scanner sees it
            core_objects += log_objects + env.ObjectsIn(_in(env, "et", "log_format"),
                                                        [LOG_FORMAT_SOURCE])
        env.Depends(core_objects, env.ExecuTorchSchema())
        prim_objects = _tree_objects(env, _in(env, "et", "prim_ops"),
                                     et_index.prim_ops_sources(root))
        return RuntimeLibraries(
            core=env.StaticLibrary(_in(env, "et", "executorch_core"), core_objects),
            prim_ops=env.StaticLibrary(_in(env, "et", "prim_ops"), prim_objects))
    return made_once(env, ("runtime", env["VARIANT_DIR"]), make)


# ---------------------------------------------------------------- devtools

def ExecuTorchBundledProgram(env):
    """The bundled-program runtime (devtools/bundled_program/bundled_program.cpp) and the
    headers of its schema (bundled_program_schema.fbs, from the flatc/headers pair the
    program's schema uses), once per variant: an artifacts.BundledProgramRuntime."""
    root = env.ExecuTorchTree()

    def make():
        schema_dir = os.path.join(root, "devtools", "bundled_program", "schema")
        out_dir = os.path.join(env["ET_GEN_DIR"], "executorch", "devtools", "bundled_program",
                               "schema")
        schema = env.Command(
            [os.path.join(out_dir, "bundled_program_schema_generated.h"),
             os.path.join(out_dir, "scalar_type_generated.h")],
            [os.path.join(schema_dir, "bundled_program_schema.fbs"),
             os.path.join(schema_dir, "scalar_type.fbs")],
            Action("$FLATC --cpp --cpp-std c++11 --gen-mutable --scoped-enums -o "
                   "${TARGET.dir} ${SOURCES[1]} ${SOURCES[0]}", "$GENCOMSTR"))
        env.Depends(schema, env.get("ET_FLATBUFFERS_HEADERS", []))
        objects = _tree_objects(env, _in(env, "et", "bundled_program"),
                                ["devtools/bundled_program/bundled_program.cpp"])
        program_schema = [env.File(os.path.join(env["ET_GEN_DIR"], "executorch", "schema", h))
                          for h in ("program_generated.h", "scalar_type_generated.h")]
        env.Depends(objects, schema + program_schema)
        return BundledProgramRuntime(
            library=env.StaticLibrary(_in(env, "et", "bundled_program"), objects), schema=schema)
    return made_once(env, ("bundled_program", env["VARIANT_DIR"]), make)


ETDUMP_SOURCES = ["devtools/etdump/etdump_flatcc.cpp", "devtools/etdump/emitter.cpp",
                  "devtools/etdump/data_sinks/buffer_data_sink.cpp"]


def ExecuTorchETDump(env):
    """ETDumpGen (devtools/etdump) and the flatcc runtime it builds with (builder.c,
    emitter.c, refmap.c of third-party/flatcc), with the ETDump schema headers flatcc's
    schema compiler makes (built for this machine from the same sources): a list of
    libraries, ETDumpGen's first. A tree without the flatcc submodule is refused in one
    sentence that says how to get it."""
    root = env.ExecuTorchTree()
    flatcc_root = flatcc.check_tree(root)

    def make():
        compiler = flatcc.host_compiler(env, flatcc_root)
        etdump_dir = os.path.join(root, "devtools", "etdump")
        out_dir = os.path.join(env["ET_GEN_DIR"], "executorch", "devtools", "etdump")
        headers = env.Command(
            [os.path.join(out_dir, name) for name in flatcc.ETDUMP_HEADERS],
            [os.path.join(etdump_dir, "etdump_schema_flatcc.fbs"),
             os.path.join(etdump_dir, "scalar_type.fbs"), compiler],
            Action("${SOURCES[2]} -cwr -o ${TARGET.dir} ${SOURCES[0]} ${SOURCES[1]}",
                   "$GENCOMSTR"))
        include = os.path.join(flatcc_root, "include")
        etdump_env = env.Clone()
        etdump_env.Append(CPPPATH=[include])
        objects = _tree_objects(etdump_env, _in(env, "et", "etdump"), ETDUMP_SOURCES)
        env.Depends(objects, headers)
        # The runtime (C) with flatcc's own aligned_alloc over malloc: newlib-nano's
        # aligned_alloc needs a posix_memalign it lacks. Neither is called: ETDumpGen
        # builds in its static buffer.
        runtime_env = env.Clone(WARNING_FLAGS=TREE_WARNING_FLAGS)
        runtime_env.Append(CPPPATH=[include], CPPDEFINES=["FLATCC_USE_GENERIC_ALIGNED_ALLOC"])
        runtime = runtime_env.ObjectsIn(_in(env, "et", "flatcc"),
                                        [os.path.join(flatcc_root, s) for s in flatcc.RUNTIME_SOURCES],
                                        flatcc_root)
        return [env.StaticLibrary(_in(env, "et", "etdump"), objects),
                env.StaticLibrary(_in(env, "et", "flatccrt"), runtime)]
    return made_once(env, ("etdump", env["VARIANT_DIR"]), make)


def _digest(value):
    return hashlib.sha1(json.dumps(value, sort_keys=True).encode()).hexdigest()[:10]


def _dtypes_only(kernel_keys):
    """The part of an operator's kernel keys that its dtype selection depends on:
    gen_selected_op_variants reads only the dtypes ("v1/6;0,1|6;0,1" -> Float), so keys
    that differ in dim order alone select the same code, and the object is shared
    between the models that have them. Returns one key, "v1/<dtype>;|<dtype>;...",
    or ["default"] when a key gives no dtype."""
    dtypes = set()
    for key in kernel_keys:
        if key == "default" or "/" not in key:
            return ["default"]
        dtypes.update(arg.split(";")[0] for arg in key.split("/", 1)[1].split("|") if arg)
    return ["v1/" + "|".join("%s;" % d for d in sorted(dtypes, key=int))] if dtypes else ["default"]


def _object_base(env, source):
    """An object's path below its directory: relative to the tree or the checkout."""
    for base in (env["ET_ROOT"], env.Dir("#").abspath):
        if source.startswith(base + os.sep):
            return os.path.relpath(source, base)
    return os.path.basename(source)


def ExecuTorchKernels(env, plan):
    """The kernel libraries, registrations and registry for a kernel_plan.Plan, as an
    etcorev.artifacts.KernelBuild.

    The helpers (util/, pattern/) are one list for all the libraries: each is compiled
    for the first library that needs it, and a later library's operators need it too
    (the portable reductions and the CORE-V softmax's fallback share reduce_util.cpp).
    Archived with the operators of one library, a helper is passed by before a later
    library's archive asks for it; archived after every library's operators, it links."""
    env.ExecuTorchTree()
    def once(key, make):
        return made_once(env, key, make)

    libs, helpers, registrations, oplists = [], [], [], []
    dependencies = {}       # name -> objects of the libraries the kernels call (CMSIS-NN)
    for kernel_set in plan.kernel_sets:
        lib_env = env.Clone()
        lib_env.Append(CPPPATH=list(kernel_set.include_dirs), CCFLAGS=list(kernel_set.flags))
        selection = kernel_set.selection
        # Yamls inside the checkout (kernels/corev) by their path in it: the directory
        # name, part of every cache key below it, is then the same in every checkout.
        top = env.Dir("#").abspath
        yamls = [(flag, os.path.relpath(path, top) if path.startswith(top + os.sep) else path)
                 for flag, path in kernel_set.yamls]
        reg_dir = _in(env, "registration", "%s-%s" % (kernel_set.name, _digest([selection, yamls])))

        def registration(reg_dir=reg_dir, lib_env=lib_env, kernel_set=kernel_set):
            oplist = env.ETOplist(os.path.join(reg_dir, "selected_operators.yaml"),
                                  env.Value(json.dumps(selection, sort_keys=True)))
            outputs = lib_env.ETRegistration(reg_dir, oplist,
                                             [y for _, y in kernel_set.yamls],
                                             [flag for flag, _ in kernel_set.yamls])
            reg_env = lib_env.Clone()
            reg_env.Prepend(CPPPATH=[reg_dir])
            objects = reg_env.ObjectsIn(reg_dir, outputs[0])
            return oplist[0], outputs, reg_env.StaticLibrary(
                os.path.join(reg_dir, "registration_" + kernel_set.name), objects)

        oplist, outputs, registration_lib = once(reg_dir, registration)
        oplists.append(oplist)
        registrations += registration_lib

        objects = []
        for source in kernel_set.op_sources:
            ops = kernel_set.source_ops.get(source)
            if ops is None:                                   # serves the whole selection
                obj_dir, headers = reg_dir, outputs
            elif not kernel_set.dtype_selective:
                obj_dir, headers = _in(env, "kernels", kernel_set.name, "all"), []
            else:
                own = {op: _dtypes_only(selection[op]) for op in ops}
                obj_dir = _in(env, "kernels", kernel_set.name, _digest(own))
                headers = once(obj_dir, lambda obj_dir=obj_dir, own=own: env.ETOpVariants(
                    os.path.join(obj_dir, "selected_op_variants.h"),
                    env.ETOplist(os.path.join(obj_dir, "selected_operators.yaml"),
                                 env.Value(json.dumps(own, sort_keys=True)))))
            target = os.path.join(obj_dir, os.path.splitext(_object_base(env, source))[0])

            def compile_one(obj_dir=obj_dir, headers=headers, source=source, target=target):
                obj_env = lib_env.Clone()
                obj_env.Prepend(CPPPATH=[obj_dir])
                if source.startswith(env["ET_ROOT"] + os.sep):
                    obj_env["WARNING_FLAGS"] = TREE_WARNING_FLAGS
                if kernel_set.dtype_selective:
                    # Each selection's should_include_kernel_dtype() gets a name of its
                    # own: one inline function with different bodies in different
                    # objects would be merged by the linker (and LTO) into one of them.
                    obj_env.Append(CPPDEFINES=[
                        "EXECUTORCH_SELECTIVE_BUILD_DTYPE",
                        ("should_include_kernel_dtype",
                         "should_include_kernel_dtype_" + os.path.basename(obj_dir))])
                obj = obj_env.Object(target + env["OBJSUFFIX"], source)
                obj_env.Depends(obj, headers)
                return obj
            objects += once(target, compile_one)
        # Helpers do not see the dtype selection (as in ExecuTorch's CMake): one object
        # each, made once for every library and model that needs it (made per list,
        # two lists with a helper in common gave its object two environments).
        for source in kernel_set.util_sources:
            helper = os.path.relpath(source, env["ET_ROOT"])
            helpers += once(("util", helper), lambda helper=helper: _tree_objects(
                env, _in(env, "et", "kernels"), [helper]))
        for dependency in kernel_set.dependencies:
            for source in dependency.sources:
                # extend(), not +=: a NodeList on the right makes += a new list.
                dependencies.setdefault(dependency.name, []).extend(once(
                    (dependency.name, source), lambda d=dependency, source=source:
                    _dependency_objects(env, d, source)))
        libs.append(objects)
    registry_dir = _in(env, "registry", _digest([k.selection for k in plan.kernel_sets]))
    registry = once(registry_dir, lambda: env.ExecuTorchRegistry(registry_dir, oplists))
    return KernelBuild(objects=libs, helpers=helpers, dependencies=dependencies,
                       registrations=registrations, registry=registry)


# The inner loops of the kernels' libraries (CMSIS-NN): -O2 where the build is -Os
# (Release), about 1.3x fewer instructions for a convolutional network for 2 % more text.
DEPENDENCY_OPTIMISATION = {"Release": ["-O2"]}


def _dependency_objects(env, dependency, source):
    """One source of a library the kernels call, in <variant>/<its name>/ (ours that
    stand in for some, in <variant>/<its name>/corev/), compiled as the tree's sources
    are (without our warnings), its place mapped out of the object."""
    dep_env = env.Clone(WARNING_FLAGS=TREE_WARNING_FLAGS)
    dep_env.Append(CPPPATH=list(dependency.include_dirs),
                   CCFLAGS=builddir.prefix_map_flags([(dependency.root, dependency.name)])
                   + DEPENDENCY_OPTIMISATION.get(env["BUILD_TYPE"], []))
    if source.startswith(dependency.root + os.sep):
        return dep_env.ObjectsIn(_in(env, dependency.name), [source], dependency.root)
    return dep_env.ObjectsIn(_in(env, dependency.name, "corev"), [source])


def ExecuTorchRegistry(env, out_dir, oplists):
    """operator_registry.cpp with its kernel table sized for the selection: v1.4 generates
    selected_max_kernel_num.h; v1.0 has no generator and gets MAX_KERNEL_NUM."""
    registry_env = env.Clone(WARNING_FLAGS=TREE_WARNING_FLAGS)
    source = os.path.join(env["ET_ROOT"], REGISTRY_SOURCE)
    target = os.path.join(out_dir, "operator_registry" + env["OBJSUFFIX"])
    if env["ET_VERSION"] == "1.0.0":
        registry_env.Append(CPPDEFINES=[("MAX_KERNEL_NUM", V1_0_MAX_KERNEL_NUM)])
        return registry_env.Object(target, source)
    registry_env.Prepend(CPPPATH=[out_dir])
    prim_ops = os.path.join(env["ET_ROOT"], "kernels", "prim_ops", "register_prim_ops.cpp")
    header = env.ETMaxKernelNum(os.path.join(out_dir, "executorch", "runtime", "kernel",
                                             "selected_max_kernel_num.h"),
                                [prim_ops] + list(oplists))
    obj = registry_env.Object(target, source)
    registry_env.Depends(obj, header)
    return obj


def ExecuTorchTree(env):
    """Check $ET_ROOT and configure env to compile against it (once): include paths,
    ExecuTorch's defines for $ET_LOG_LEVEL, $BUILD_TYPE and $PROFILE, the schema's flatc
    and headers. Every ExecuTorch* pseudo-builder calls it first; call it before
    compiling sources of your own that include ExecuTorch's headers. Returns the tree."""
    if env.get("ET_VERSION"):
        return env["ET_ROOT"]
    env.RiscvToolchain()
    root = _root(env)
    version = _check_version(root)
    flatc, flatbuffers_include, flatbuffers_defines = _flatbuffers_config(root)
    gen_dir = _in(env, "et", "gen")
    if flatbuffers_include:
        include = [flatbuffers_include]
    else:
        # Debian's headers sit in /usr/include beside the host's C library: copy just
        # them, so the cross compiler never searches the host's include directory.
        include = [_in(env, "et", "flatbuffers")]
        env["ET_FLATBUFFERS_HEADERS"] = env.Install(
            os.path.join(include[0], "flatbuffers"),
            env.Glob(os.path.join(DEBIAN_FLATBUFFERS, "*.h")))
    env.Replace(ET_ROOT=root, ET_VERSION=version or "unknown", ET_GEN_DIR=gen_dir, FLATC=flatc)

    level = env["ET_LOG_LEVEL"]
    defines = ["C10_USING_CUSTOM_GENERATED_MACROS", ("FLATBUFFERS_MAX_ALIGNMENT", 1024),
               ("ET_LOG_ENABLED", 0 if level == "Off" else 1),
               ("ET_ENABLE_PROGRAM_VERIFICATION", 1 if env["BUILD_TYPE"] == "Debug" else 0)]
    if level != "Off":
        defines.append(("ET_MIN_LOG_LEVEL", level))   # a token: Debug, Info, ...
    if profile_mode(env["PROFILE"]):
        # The runtime's profiling events (method.cpp, program.cpp) for the runner's tracer
        # (profile=1) or ExecuTorch's ETDumpGen (profile=etdump).
        defines.append("ET_EVENT_TRACER_ENABLED")
    if version != "1.0.0":
        defines.append(("ET_ENABLE_DEPRECATED_CONSTANT_BUFFER", 0))
    env.Append(
        CPPDEFINES=defines + flatbuffers_defines,
        CPPPATH=[os.path.dirname(root), os.path.join(root, "runtime", "core", "portable_type", "c10"),
                 gen_dir] + include,
        # Absolute tree paths out of objects and debug info: reproducible builds.
        CCFLAGS=builddir.prefix_map_flags([(root, "executorch")]),
        # ExecuTorch deprecates its own aliases faster than its kernels stop using them.
        CXXFLAGS=["-Wno-deprecated-declarations"],
    )
    return root


def generate(env):
    require_tools(env, "riscv_toolchain", "firmware", "executorch_codegen")
    env.SetDefault(VARIANT_DIR="build", **option_table.defaults(
        "ET_ROOT", "ET_LOG_LEVEL", "PROFILE", "CMSIS_NN_ROOT"))
    for method in (ExecuTorchTree, ExecuTorchSchema, ExecuTorchRuntime, ExecuTorchKernels,
                   ExecuTorchRegistry, ExecuTorchBundledProgram, ExecuTorchETDump):
        env.AddMethod(method)


def exists(env):
    return True
