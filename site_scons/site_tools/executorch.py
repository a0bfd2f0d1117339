"""The ExecuTorch runtime from a source tree, built by SCons alone.

Source lists come from the tree (site_scons/etcorev/etsources.py reads its .bzl files
as ExecuTorch's CMake does); the schema headers come from flatc; the kernel
registration comes from ExecuTorch's own codegen, run as builders:

    selected_operators.yaml   <- gen_oplist       <- the model's operators (a Value)
    RegisterCodegen...cpp     <- codegen.gen      <- selected_operators.yaml
    selected_max_kernel_num.h <- gen_max_kernel_num (v1.4; v1.0 gets -DMAX_KERNEL_NUM)
    selected_op_variants.h    <- gen_selected_op_variants (dtype selection)

The operator set is a Value node, so new weights with the same operators regenerate
nothing. Codegen runs with the tree as working directory, as CMake runs it.
"""

import json
import os
import re
import shutil
import subprocess
import sys

import SCons.Errors
from SCons.Action import Action
from SCons.Builder import Builder

from etcorev import etsources
from etcorev.errors import BuildSetupError

SUPPORTED_VERSIONS = ("1.4.1", "1.0.0")
MIN_VERSION = (1, 0, 0)        # older trees are refused; newer untested ones get a warning
# Kernel registry slots on v1.0, which has no gen_max_kernel_num: enough for the prim
# ops and a model's kernels without the default 2000 slots (~24 KiB of RAM).
V1_0_MAX_KERNEL_NUM = 64
DEBIAN_FLATBUFFERS = "/usr/include/flatbuffers"
DEBIAN_FLATC = "/usr/bin/flatc"


def _root(env):
    root = env.get("executorch", "")
    if not root:
        raise BuildSetupError(
            "No ExecuTorch source tree given. Clone ExecuTorch (v1.4.1; v1.0.0 also works) "
            "into a directory named `executorch` and pass executorch=PATH, set "
            "EXECUTORCH_ROOT, or record it once with `./setup.sh --executorch PATH` "
            "(it writes the user settings file).")
    root = os.path.abspath(os.path.expanduser(root))
    if not os.path.isdir(root):
        raise BuildSetupError("The ExecuTorch tree '%s' does not exist (from executorch=, "
                              "EXECUTORCH_ROOT or the user settings)." % root)
    return root


def _python_command(env, target, args, cwd):
    """Run one of ExecuTorch's Python tools; its chatter goes to the log unless it fails."""
    proc = subprocess.run([sys.executable, "-m"] + args, cwd=cwd, capture_output=True,
                          text=True)
    if env.get("verbose") or proc.returncode:
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
    if proc.returncode:
        raise SCons.Errors.BuildError(
            node=target[0], errstr="ExecuTorch's %s failed (exit %d): see the output above"
            % (args[0], proc.returncode), exitstatus=2)


def _gen_oplist(target, source, env):
    selection = json.loads(source[0].read())
    args = ["codegen.tools.gen_oplist", "--output_path=" + target[0].abspath]
    if selection == "all":
        args.append("--include_all_operators")
    else:
        args.append("--ops_dict=" + json.dumps(selection, sort_keys=True))
    _python_command(env, target, args, env["ET_ROOT"])


def _torchgen_dir():
    import torchgen
    return os.path.dirname(torchgen.__file__)


def _gen_registration(target, source, env):
    """codegen.gen for one kernel library: source[1] is its yaml, passed with
    $ET_YAML_FLAG (--functions-yaml-path or --custom-ops-yaml-path)."""
    out_dir = os.path.dirname(target[0].abspath)
    tags = os.path.join(_torchgen_dir(), "packaged", "ATen", "native")
    args = ["codegen.gen", "--source-path=" + os.path.join(env["ET_ROOT"], "codegen"),
            "--install-dir=" + out_dir,
            "--tags-path=" + os.path.join(tags, "tags.yaml"),
            "--aten-yaml-path=" + os.path.join(tags, "native_functions.yaml"),
            "--op-selection-yaml-path=" + source[0].abspath,
            env["ET_YAML_FLAG"] + "=" + source[1].abspath]
    _python_command(env, target, args, env["ET_ROOT"])


def _gen_max_kernel_num(target, source, env):
    """source: the prim ops source, then every library's selected_operators.yaml."""
    args = ["codegen.tools.gen_max_kernel_num"]
    args += ["--oplist-yaml=" + node.abspath for node in source[1:]]
    args += ["--prim-ops-source=" + source[0].abspath, "--output-path=" + target[0].abspath]
    _python_command(env, target, args, env["ET_ROOT"])


def _gen_op_variants(target, source, env):
    args = ["codegen.tools.gen_selected_op_variants", "--yaml-file=" + source[0].abspath,
            "--output-dir=" + os.path.dirname(target[0].abspath) + os.sep]
    _python_command(env, target, args, env["ET_ROOT"])


REGISTRATION_OUTPUTS = ("RegisterCodegenUnboxedKernelsEverything.cpp",
                        "RegisterCodegenUnboxedKernels_0.cpp", "Functions.h",
                        "NativeFunctions.h", "RegisterKernels.h")
# With a custom_ops.yaml codegen also writes the ahead-of-time (PyTorch) registration.
CUSTOM_OPS_OUTPUTS = ("CustomOpsNativeFunctions.h", "RegisterCPUCustomOps.cpp",
                      "RegisterCPUStub.cpp", "RegisterSchema.cpp")


def _registration_emitter(target, source, env):
    out_dir = target[0].dir
    names = REGISTRATION_OUTPUTS
    if env["ET_YAML_FLAG"] == "--custom-ops-yaml-path":
        names += CUSTOM_OPS_OUTPUTS
    return [out_dir.File(name) for name in names], source


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
    out = subprocess.run([flatc, "--version"], capture_output=True, text=True).stdout
    match = re.search(r"(\d+\.\d+\.\d+)", out)
    return match.group(1) if match else None


def ExecuTorchSchema(env):
    """program_generated.h and scalar_type_generated.h in the variant's gen directory."""
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


def ExecuTorchRegistration(env, out_dir, selection, yaml, yaml_flag):
    """Codegen for one kernel library; selection is the gen_oplist ops_dict or "all".
    Returns (codegen outputs, the first being the registration .cpp; selected_operators.yaml)."""
    value = env.Value(json.dumps(selection, sort_keys=True))
    oplist = env.Command(os.path.join(out_dir, "selected_operators.yaml"), value,
                         Action(_gen_oplist, "$GENCOMSTR"))
    registration = env.ETRegistration(os.path.join(out_dir, REGISTRATION_OUTPUTS[0]),
                                      [oplist[0], yaml], ET_YAML_FLAG=yaml_flag)
    return registration, oplist[0]


def ExecuTorchMaxKernelNum(env, out_dir, oplists):
    """Size the kernel registry for the selection, for what env compiles
    (operator_registry.cpp): v1.4 generates selected_max_kernel_num.h under out_dir,
    which env's include path then finds; v1.0 has no generator and gets MAX_KERNEL_NUM.
    Returns the generated header (none on v1.0)."""
    if env["ET_VERSION"] == "1.0.0":
        env.Append(CPPDEFINES=[("MAX_KERNEL_NUM", V1_0_MAX_KERNEL_NUM)])
        return []
    env.Append(CPPPATH=[out_dir])
    prim_ops = os.path.join(env["ET_ROOT"], "kernels", "prim_ops", "register_prim_ops.cpp")
    header = os.path.join(out_dir, "executorch", "runtime", "kernel",
                          "selected_max_kernel_num.h")
    return env.Command(header, [prim_ops] + list(oplists), Action(_gen_max_kernel_num, "$GENCOMSTR"))


def ExecuTorchOpVariants(env, out_dir, oplist):
    return env.Command(os.path.join(out_dir, "selected_op_variants.h"), oplist,
                       Action(_gen_op_variants, "$GENCOMSTR"))


def generate(env):
    root = _root(env)
    try:
        version = etsources.check_tree(root)
    except etsources.ETSourceError as error:
        raise BuildSetupError(str(error))
    if version and tuple(int(n) for n in version.split(".")) < MIN_VERSION:
        raise BuildSetupError(
            "ExecuTorch %s at %s is too old: this build needs ExecuTorch %s or newer "
            "(tested: %s). Check out v%s there, or point executorch= at a newer tree."
            % (version, root, ".".join(map(str, MIN_VERSION)), ", ".join(SUPPORTED_VERSIONS),
               SUPPORTED_VERSIONS[0]))
    if version not in SUPPORTED_VERSIONS:
        print("scons: warning: ExecuTorch %s at %s is not a tested version (tested: %s); "
              "building anyway." % (version or "of unknown version", root,
                                    ", ".join(SUPPORTED_VERSIONS)), file=sys.stderr)
    flatc, flatbuffers_include, flatbuffers_defines = _flatbuffers_config(root)
    flatbuffers_include = [flatbuffers_include] if flatbuffers_include else None
    gen_dir = os.path.join(env["VARIANT_DIR"], "et", "gen")
    if flatbuffers_include is None:
        # Debian's headers sit in /usr/include beside the host's C library: copy just
        # them, so the cross compiler never searches the host's include directory.
        flatbuffers_include = [os.path.join(env["VARIANT_DIR"], "et", "flatbuffers")]
        env["ET_FLATBUFFERS_HEADERS"] = env.Install(
            os.path.join(flatbuffers_include[0], "flatbuffers"),
            env.Glob(os.path.join(DEBIAN_FLATBUFFERS, "*.h")))
    env.Replace(ET_ROOT=root, ET_VERSION=version or "unknown", ET_GEN_DIR=gen_dir, FLATC=flatc)

    defines = ["C10_USING_CUSTOM_GENERATED_MACROS", ("FLATBUFFERS_MAX_ALIGNMENT", 1024),
               ("ET_LOG_ENABLED", 0 if env["logging"] == "Off" else 1),
               ("ET_ENABLE_PROGRAM_VERIFICATION", 1 if env["BUILD_TYPE"] == "Debug" else 0)]
    if env["logging"] != "Off":
        defines.append(("ET_MIN_LOG_LEVEL", env["logging"]))   # a token: Debug, Info, ...
    if version != "1.0.0":
        defines.append(("ET_ENABLE_DEPRECATED_CONSTANT_BUFFER", 0))
    defines += flatbuffers_defines
    env.Append(
        CPPDEFINES=defines,
        CPPPATH=[os.path.dirname(root), os.path.join(root, "runtime", "core", "portable_type", "c10"),
                 gen_dir] + flatbuffers_include,
        # Absolute tree paths out of objects and debug info: reproducible builds.
        CCFLAGS=["-ffile-prefix-map=%s=executorch" % root],
        # ExecuTorch deprecates its own aliases faster than its kernels stop using them.
        CXXFLAGS=["-Wno-deprecated-declarations"],
    )
    env["BUILDERS"]["ETRegistration"] = Builder(
        action=Action(_gen_registration, "$GENCOMSTR", varlist=["ET_YAML_FLAG"]),
        emitter=_registration_emitter)
    env.AddMethod(ExecuTorchSchema)
    env.AddMethod(ExecuTorchRegistration)
    env.AddMethod(ExecuTorchMaxKernelNum)
    env.AddMethod(ExecuTorchOpVariants)


def exists(env):
    return bool(env.get("executorch"))
