"""`scons inspect`: where the firmware's bytes go, by library, object file and symbol.

    env.Tool("inspect_firmware")
    env.InspectFirmwares(firmwares)      # the etcorev.artifacts.Firmware of env.Firmware

From the ELF and the map beside it (site_scons/etcorev/image/footprint.py; the tables and the
picture by footprint_report.py), the InspectReport builder writes two files beside the
firmware:

    executor_runner.inspect.txt    the tables: by library, top objects, top symbols
    executor_runner.inspect.html   a treemap by library and object (no scripts, offline)

The `inspect` alias builds them and prints the tables; with `inspect_against=OTHER.elf`
(its .map beside it) it also prints the growth per library from OTHER to this build.
`scons -c` removes both files with the ELF.

Construction variables (set only if unset): $INSPECT_TOP (rows in the top objects and
symbols tables, 10), $INSPECTCOMSTR, $INSPECTTEXTSUFFIX (.inspect.txt),
$INSPECTHTMLSUFFIX (.inspect.html), $INSPECT_AGAINST (another firmware's ELF, or empty).
"""

import os
import sys

import SCons.Action
import SCons.Builder
import SCons.Errors

from etcorev.scons import quiet_messages
from etcorev.image import MODEL_SECTION, footprint, footprint_report, ldmap, lto_objects

# The inspector: a new one makes new tables.
INSPECTOR_MODULES = (footprint, footprint_report, ldmap, lto_objects)


def _demangler(env):
    return footprint_report.demangler(env.get("TOOLCHAIN_PREFIX", ""))


def _inspect(env, node, elf, map_file=None, option=None):
    """option: the option that named elf, to say what to change when it is no good."""
    try:
        return footprint.inspect(elf, map_file, env.get("MODEL_SECTION", MODEL_SECTION))
    except footprint.FootprintError as e:
        # A BuildError prints its message on one line, without a traceback.
        raise SCons.Errors.BuildError(
            node=node, errstr=("%s=: %s" % (option, e)) if option else str(e)) from None


def _write_report(target, source, env):
    fp = _inspect(env, target[0], str(source[0]), str(source[1]))
    with open(str(target[0]), "w", encoding="utf-8", newline="\n") as f:
        f.write(footprint_report.format_report(fp, int(env["INSPECT_TOP"]), _demangler(env)) + "\n")
    footprint_report.write_treemap(fp, str(target[1]))
    return 0


def _emit_picture(target, source, env):
    """One ELF in: the map beside it in too; the tables and the picture out."""
    base = os.path.splitext(str(source[0]))[0]
    return ([target[0], env.File(base + env.subst("$INSPECTHTMLSUFFIX"))],
            [source[0], env.File(base + ".map")])


InspectReportBuilder = SCons.Builder.Builder(
    action=SCons.Action.Action(_write_report, "$INSPECTCOMSTR", varlist=["INSPECT_TOP"]),
    emitter=_emit_picture, suffix="$INSPECTTEXTSUFFIX", src_suffix=".elf")


def _print_inspection(target, source, env):
    """The alias's action: the tables, then the growth from inspect_against."""
    other = env.get("INSPECT_AGAINST")      # an absolute path (SConstruct)
    if other:                      # a bad file fails before anything is printed
        old = _inspect(env, target[0], other, option="inspect_against")
    with open(str(source[0]), encoding="utf-8") as f:
        said = [f.read().rstrip("\n"), "Picture: %s" % source[1]]
    if other:
        new = _inspect(env, target[0], str(source[2]), str(source[3]))
        said += ["", footprint_report.format_growth(new, old)]
    sys.stdout.write("\n".join(said) + "\n")   # one write: other jobs may print meanwhile
    return 0


PRINT_ACTION = SCons.Action.Action(_print_inspection, None)


def InspectFirmwares(env, firmwares):
    """The `inspect` alias: for each firmware (an alias of its own each, which prints
    its tables), [tables, picture]."""
    reports = []
    for firmware in firmwares:
        elf = firmware.elf
        report = env.InspectReport(elf)
        env.Depends(report, [env.File(module.__file__) for module in INSPECTOR_MODULES])
        env.Clean(elf, report)
        alias = env.Alias("inspect-" + os.path.basename(os.path.dirname(elf.abspath)),
                          report + [elf, firmware.map], PRINT_ACTION)
        env.AlwaysBuild(alias)
        env.Alias("inspect", alias)
        reports += report
    return reports


def generate(env):
    if "InspectReport" not in env["BUILDERS"]:
        env["BUILDERS"]["InspectReport"] = InspectReportBuilder
    env.SetDefault(INSPECT_TOP=10, INSPECTTEXTSUFFIX=".inspect.txt",
                   INSPECTHTMLSUFFIX=".inspect.html")
    quiet_messages.set_message(env, "INSPECTCOMSTR", "Inspecting", "source")
    env.AddMethod(InspectFirmwares)


def exists(env):
    return True
