"""SCons tool: images and size reports derived from a linked firmware ELF.

Builders (each takes one ELF per target; a list of ELFs gives one target
each):

    env.VerilogHex('build/x/fw.elf')   -> build/x/fw.hex    ($readmemh image)
    env.IntelHex('build/x/fw.elf')     -> build/x/fw.ihex
    env.RawBinary('build/x/fw.elf')    -> build/x/fw.bin
    env.SizeReport('build/x/fw.elf')   -> build/x/fw.size.txt

VerilogHex, IntelHex and RawBinary are byte-identical to ``objcopy -O
verilog`` / ``-O ihex`` / ``-O binary``; all of them are written in-process
by :mod:`etcorev.elfout`, no objcopy needed.

SizeReport writes a PlatformIO-style usage report of the regions in
``$MEMORY_REGIONS`` (a list of ``{"name", "origin", "length"}`` dicts),
prints it, and fails the build with a one-paragraph message when a region
overflows.  ``$MEMORY_REGIONS`` is part of the action signature, so changing
it rebuilds the report.

Construction variables: ``$VERILOGHEXCOMSTR``, ``$INTELHEXCOMSTR``,
``$RAWBINARYCOMSTR``, ``$SIZEREPORTCOMSTR`` (one-line progress messages) and
the target suffixes ``$VERILOGHEXSUFFIX`` (.hex), ``$INTELHEXSUFFIX``
(.ihex), ``$RAWBINARYSUFFIX`` (.bin), ``$SIZEREPORTSUFFIX`` (.size.txt).
All are set only if not already set.
"""

import SCons.Action
import SCons.Builder
import SCons.Errors
import SCons.Util

from elftools.common.exceptions import ELFError

from etcorev import elfout


def _convert(writer):
    """Action function calling ``writer(elf, out)``; bad input fails cleanly."""

    def action(target, source, env):
        try:
            writer(str(source[0]), str(target[0]))
        except (ELFError, ValueError) as e:
            raise SCons.Errors.BuildError(
                node=target[0], errstr="%s: %s" % (source[0], e)
            )
        return 0

    action.__name__ = writer.__name__
    return action


_verilog_hex = _convert(elfout.write_verilog_hex)
_intel_hex = _convert(elfout.write_intel_hex)
_raw_binary = _convert(elfout.write_binary)


def _regions(env):
    regions = env.get("MEMORY_REGIONS")
    if regions is None:
        regions = []
    elif isinstance(regions, dict):
        regions = [regions]
    elif not SCons.Util.is_Sequence(regions):
        raise SCons.Errors.UserError(
            "MEMORY_REGIONS must be a list of dicts with name, origin and "
            "length, got %r" % (regions,)
        )
    return list(regions)


def _size_report(target, source, env):
    t, s = str(target[0]), str(source[0])
    try:
        usage = elfout.memory_usage(s, _regions(env))
    except (ELFError, ValueError) as e:
        raise SCons.Errors.BuildError(node=target[0], errstr="%s: %s" % (s, e))
    report = elfout.format_size_report(usage)
    with open(t, "w", encoding="utf-8", newline="\n") as f:
        f.write(report + "\n")
    print(report)
    try:
        elfout.check_fits(usage)
    except elfout.SizeError as e:
        # The report stays on disk for inspection; the build fails with the
        # plain message (a BuildError prints no traceback).
        raise SCons.Errors.BuildError(node=target[0], errstr=str(e))
    return 0


VerilogHexAction = SCons.Action.Action(_verilog_hex, "$VERILOGHEXCOMSTR")
IntelHexAction = SCons.Action.Action(_intel_hex, "$INTELHEXCOMSTR")
RawBinaryAction = SCons.Action.Action(_raw_binary, "$RAWBINARYCOMSTR")
SizeReportAction = SCons.Action.Action(
    _size_report, "$SIZEREPORTCOMSTR", varlist=["MEMORY_REGIONS"]
)

def _elf_builder(action, suffix):
    """One output file per ELF."""
    return SCons.Builder.Builder(action=action, suffix=suffix, src_suffix=".elf",
                                 single_source=True)


VerilogHexBuilder = _elf_builder(VerilogHexAction, "$VERILOGHEXSUFFIX")
IntelHexBuilder = _elf_builder(IntelHexAction, "$INTELHEXSUFFIX")
RawBinaryBuilder = _elf_builder(RawBinaryAction, "$RAWBINARYSUFFIX")
SizeReportBuilder = _elf_builder(SizeReportAction, "$SIZEREPORTSUFFIX")

_BUILDERS = {
    "VerilogHex": VerilogHexBuilder,
    "IntelHex": IntelHexBuilder,
    "RawBinary": RawBinaryBuilder,
    "SizeReport": SizeReportBuilder,
}


def generate(env) -> None:
    """Add the ELF output builders and their variables to ``env``."""
    for name, builder in _BUILDERS.items():
        if name not in env["BUILDERS"]:
            env["BUILDERS"][name] = builder
    env.SetDefault(
        VERILOGHEXSUFFIX=".hex",
        INTELHEXSUFFIX=".ihex",
        RAWBINARYSUFFIX=".bin",
        SIZEREPORTSUFFIX=".size.txt",
        VERILOGHEXCOMSTR="Hex       $TARGET",
        INTELHEXCOMSTR="IHex      $TARGET",
        RAWBINARYCOMSTR="Bin       $TARGET",
        SIZEREPORTCOMSTR="Size      $TARGET",
        MEMORY_REGIONS=[],
    )


def exists(env) -> bool:
    return True
