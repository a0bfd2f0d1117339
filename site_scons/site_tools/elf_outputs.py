"""SCons tool: images and size reports derived from a linked firmware ELF.

    env.VerilogHex('build/x/fw.elf')   -> build/x/fw.hex       ($readmemh image)
    env.SizeReport('build/x/fw.elf')   -> build/x/fw.size.txt  (PlatformIO-style bars)
    env.IntelHex(...), env.RawBinary(...)  and every other format of
                                          etcorev.image.output_formats.FORMATS

All are written in-process by etcorev.image.elfout, no objcopy needed; the Verilog hex, Intel
HEX and raw binary are byte-identical to `objcopy -O verilog` / `-O ihex` / `-O binary`. The size report
covers the regions in $MEMORY_REGIONS (a list of {"name", "origin", "length"}), which is
part of its signature. `CheckImageFits` is a post-link action: an image that does not fit
fails the build, and its ELF and map are removed, so nothing can publish it.
"""

import os
import sys

import SCons.Action
import SCons.Builder
import SCons.Errors
from elftools.common.exceptions import ELFError

from etcorev.scons import quiet_messages
from etcorev.image import elfout, memory_usage
from etcorev.image.output_formats import FORMATS


def _converter(writer):
    """An action function calling writer(elf, out); bad input fails in one line."""
    def action(target, source, env):
        try:
            writer(str(source[0]), str(target[0]))
        except (ELFError, ValueError) as e:
            raise SCons.Errors.BuildError(node=target[0], errstr="%s: %s" % (source[0], e))
    action.__name__ = writer.__name__
    return action


def _usage(target, source, env):
    try:
        return memory_usage.memory_usage(str(source[0]), list(env.get("MEMORY_REGIONS", [])))
    except (ELFError, ValueError) as e:
        raise SCons.Errors.BuildError(node=target[0], errstr="%s: %s" % (source[0], e))


def _size_report(target, source, env):
    report = memory_usage.format_size_report(_usage(target, source, env))
    header = "Toolchain: %s" % env["TOOLCHAIN_DESCRIPTION"] if env.get("TOOLCHAIN_DESCRIPTION") else None
    with open(str(target[0]), "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(filter(None, [header, report])) + "\n")
    sys.stdout.write(report + "\n")      # one write: parallel jobs print lines too


def _check_fits(target, source, env):
    """After the link (target: the ELF and its map): fail, and remove them, when the
    image does not fit the board's memory."""
    usage = _usage(target, target[:1], env)
    try:
        memory_usage.check_fits(usage)
    except memory_usage.SizeError as e:
        sys.stdout.write(memory_usage.format_size_report(usage) + "\n")
        for node in target:
            if os.path.exists(node.abspath):
                os.remove(node.abspath)
        raise SCons.Errors.BuildError(node=target[0], errstr=str(e))


def _elf_builder(action, suffix):
    return SCons.Builder.Builder(action=action, suffix=suffix, src_suffix=".elf",
                                 single_source=True)


CHECK_FITS = SCons.Action.Action(_check_fits, None, varlist=["MEMORY_REGIONS"])


def generate(env):
    builders = {
        "VerilogHex": _elf_builder(SCons.Action.Action(
            _converter(elfout.write_verilog_hex), "$VERILOGHEXCOMSTR"), ".hex"),
        "SizeReport": _elf_builder(SCons.Action.Action(
            _size_report, "$SIZEREPORTCOMSTR", varlist=["MEMORY_REGIONS", "TOOLCHAIN_DESCRIPTION"]),
            ".size.txt"),
    }
    for name, output in FORMATS.items():
        builders[output.builder] = _elf_builder(SCons.Action.Action(
            _converter(output.writer), "$%sCOMSTR" % output.builder.upper()), output.suffix)
        quiet_messages.set_message(env, output.builder.upper() + "COMSTR", "Writing", "target")
    for name, builder in builders.items():
        env["BUILDERS"].setdefault(name, builder)
    quiet_messages.set_message(env, "VERILOGHEXCOMSTR", "Writing", "target")
    quiet_messages.set_message(env, "SIZEREPORTCOMSTR", "Checking size of", "source")
    env.SetDefault(MEMORY_REGIONS=[])
    env["CHECK_IMAGE_FITS"] = CHECK_FITS       # the firmware tool's post-link action


def exists(env):
    return True
