"""flatcc for profile=etdump: ExecuTorch's ETDump writer (devtools/etdump) builds its
flatbuffer with flatcc, which the tree keeps as the submodule third-party/flatcc. From
its sources the build makes

- the flatcc runtime for the target (RUNTIME_SOURCES: what ETDumpGen calls), and
- flatcc's schema compiler, `flatcc`, for this machine (COMPILER_SOURCES: what
  ExecuTorch's CMake builds as flatcc_cli, without reflection), which generates the
  ETDump schema's C headers (ETDUMP_HEADERS).

The schema compiler is an SCons host program: an Environment of its own with the host's
C compiler (tools=['default']), built once per tree into
<build_dir>/host/flatcc-<digest of the tree's path>/ and shared by every variant.
"""

import hashlib
import os
import shutil

from etcorev.errors import BuildSetupError

FLATCC = os.path.join("third-party", "flatcc")

RUNTIME_SOURCES = ["src/runtime/builder.c", "src/runtime/emitter.c", "src/runtime/refmap.c"]

# flatcc's src/compiler/CMakeLists.txt and src/cli (FLATCC_REFLECTION off, as ExecuTorch
# builds it).
COMPILER_SOURCES = [
    "external/hash/str_set.c", "external/hash/ptr_set.c",
    "src/compiler/hash_tables/symbol_table.c", "src/compiler/hash_tables/scope_table.c",
    "src/compiler/hash_tables/name_table.c", "src/compiler/hash_tables/schema_table.c",
    "src/compiler/hash_tables/value_set.c",
    "src/compiler/fileio.c", "src/compiler/parser.c", "src/compiler/semantics.c",
    "src/compiler/coerce.c", "src/compiler/flatcc.c", "src/compiler/codegen_c.c",
    "src/compiler/codegen_c_reader.c", "src/compiler/codegen_c_sort.c",
    "src/compiler/codegen_c_builder.c", "src/compiler/codegen_c_verifier.c",
    "src/compiler/codegen_c_sorter.c", "src/compiler/codegen_c_json_parser.c",
    "src/compiler/codegen_c_json_printer.c",
    "src/runtime/builder.c", "src/runtime/emitter.c", "src/runtime/refmap.c",
    "src/cli/flatcc_cli.c",
]

# What `flatcc -cwr` writes for etdump_schema_flatcc.fbs and the scalar_type.fbs it
# includes (ExecuTorch's devtools/etdump/CMakeLists.txt).
ETDUMP_HEADERS = ["etdump_schema_flatcc_builder.h", "etdump_schema_flatcc_reader.h",
                  "scalar_type_builder.h", "scalar_type_reader.h",
                  "flatbuffers_common_builder.h", "flatbuffers_common_reader.h"]


def has_flatcc(root):
    """Whether the ExecuTorch tree at root has the flatcc sources (its submodule
    third-party/flatcc initialised)."""
    flatcc = os.path.join(root, FLATCC)
    return all(os.path.isfile(os.path.join(flatcc, path)) for path in (
        "include/flatcc/flatcc_builder.h", "src/cli/flatcc_cli.c", *RUNTIME_SOURCES))


def check_tree(root):
    """The tree's flatcc directory, or a BuildSetupError that says how to get it."""
    if not has_flatcc(root):
        raise BuildSetupError(
            "$PROFILE=etdump needs flatcc, which ExecuTorch keeps in the submodule "
            "third-party/flatcc, and %s has no flatcc sources there: run `git submodule "
            "update --init third-party/flatcc` in that tree (or use $PROFILE=1, the cycle "
            "tracer, which needs no flatcc)." % root)
    return os.path.join(root, FLATCC)


def host_compiler(env, flatcc_root):
    """The node of flatcc's schema compiler for this machine, built from flatcc_root
    (once per tree, whichever variant asks first)."""
    from etcorev.scons.shared import made_once
    return made_once(env, ("host flatcc", flatcc_root),
                     lambda: _build_host_compiler(env, flatcc_root))


def _build_host_compiler(env, flatcc_root):
    import SCons.Environment

    build_root = os.path.dirname(env.Dir(env["VARIANT_DIR"]).abspath)
    digest = hashlib.sha1(os.path.abspath(flatcc_root).encode()).hexdigest()[:10]
    out_dir = os.path.join(build_root, "host", "flatcc-" + digest)
    host = SCons.Environment.Environment(
        tools=["default"], ENV={name: os.environ[name] for name in ("PATH", "TMPDIR")
                                if name in os.environ})
    if not shutil.which(host.subst("$CC") or "cc", path=host["ENV"].get("PATH")):
        raise BuildSetupError(
            "$PROFILE=etdump builds flatcc's schema compiler for this machine, and no host "
            "C compiler was found (cc, gcc or clang on PATH): install one, e.g. "
            "`apt-get install gcc`.")
    host.Append(CPPPATH=[os.path.join(flatcc_root, d) for d in ("external", "include", "config")],
                CPPDEFINES=[("FLATCC_REFLECTION", 0)], CCFLAGS=["-O2"])
    # The cross build's one-line messages (quiet tool), marked as the host's.
    if not env.get("VERBOSE"):
        for name in ("PRINT_CMD_LINE_FUNC", "QUIET_SOURCE", "QUIET_TARGET"):
            if env.get(name) is not None:
                host[name] = env[name]
        host["CCCOMSTR"] = "Compiling $QUIET_SOURCE (host)"
        host["LINKCOMSTR"] = "Linking $QUIET_TARGET (host)"
    objects = [host.Object(os.path.join(out_dir, "obj", os.path.splitext(source)[0] + ".o"),
                           os.path.join(flatcc_root, source))
               for source in COMPILER_SOURCES]
    return host.Program(os.path.join(out_dir, "flatcc"), objects)
