"""Whole-archive linking for libraries whose objects must all be kept.

Kernel, prim-op and backend registrations are static initializers that nothing
references: in a plain static archive the linker drops them silently and the model
fails at run time ("Missing operator"). SCons has no archive grouping (scons issue
1161), so the link line gets `-Wl,--whole-archive lib... -Wl,--no-whole-archive`
from $WHOLE_ARCHIVE_LIBS, and the archives stay dependencies of the program.

    env.Program("fw.elf", objects, WHOLE_ARCHIVE_LIBS=[registrations_lib])
"""


from etcorev.scons.tools import require_tools


def _whole_archive_flags(libs, target, source, env, for_signature):
    if not libs:
        return ""
    # Nodes, not their paths: SCons puts paths in the command and only names in the
    # signature, so the link's cache entry serves every build directory.
    return ["-Wl,--whole-archive"] + list(libs) + ["-Wl,--no-whole-archive"]


def _emit_dependencies(target, source, env):
    for lib in env.Flatten(env.get("WHOLE_ARCHIVE_LIBS", [])):
        env.Depends(target, lib)
    return target, source


def generate(env):
    require_tools(env, "riscv_toolchain")      # the link command it extends
    env.SetDefault(WHOLE_ARCHIVE_LIBS=[])
    env["_whole_archive_flags"] = _whole_archive_flags
    env["_WHOLE_ARCHIVE"] = "${_whole_archive_flags(WHOLE_ARCHIVE_LIBS, TARGET, SOURCE, __env__, 0)}"
    if "$_WHOLE_ARCHIVE" not in env["LINKCOM"]:
        env["LINKCOM"] = env["LINKCOM"].replace("$SOURCES", "$SOURCES $_WHOLE_ARCHIVE", 1)
    env.Append(PROGEMITTER=[_emit_dependencies])


def exists(env):
    return True
