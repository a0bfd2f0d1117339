"""Board support: startup code, console/exit, the linker script and the map file.

    env["BOARD_MODULE"] = boards.load("qemu")   # before the tool is loaded
    env.Tool("board")
    startup = env.BoardStartup(variant_dir)     # crt0 + board objects
    script = env.BoardLinkerScript(variant_dir + "/link.ld")

The MEMORY block is generated from the board module's regions, so the memory map has
one source. The region given to the linker is larger than the board's: the real size
goes into __image_length and the size report checks it after linking, so an overflow
gets the build's own message instead of a linker error.
"""

import os

from etcorev import locations

COMMON_DIR = locations.source_dir("pal", "boards", "common")
LINKER_SLACK = 0x40000000   # room the linker may use beyond the region; checked afterwards


def _linker_script_lines(env):
    image, *others = env["MEMORY_REGION_OBJECTS"]
    lines = [
        "/* Generated for board %s: memory from pal/boards/%s/board.py. */"
        % (env["BOARD_MODULE"].NAME, env["BOARD_MODULE"].NAME),
        "MEMORY",
        "{",
        "  image (rwx) : ORIGIN = 0x%08x, LENGTH = 0x%08x" % (image.origin, LINKER_SLACK),
        "}",
        "__image_origin = 0x%08x;" % image.origin,
        "__image_length = 0x%08x;" % image.length,
        "__stack_size = 0x%x;" % env["STACK_SIZE"],
    ]
    for region in others:
        lines.append("__%s_origin = 0x%08x;" % (region.name, region.origin))
        lines.append("__%s_length = 0x%08x;" % (region.name, region.length))
    lines.append("INCLUDE sections.ld")
    return lines


def BoardLinkerScript(env, target):
    script = env.Textfile(target, _linker_script_lines(env), LINESEPARATOR="\n")
    env.Depends(script, os.path.join(COMMON_DIR, "sections.ld"))
    return script


def BoardStartup(env, build_dir):
    """Startup code, the board's console/exit/cycles, and what the toolchain's C library
    ($TOOLCHAIN_LIBC: picolibc or newlib) needs of the system."""
    # No LTO here: libc refers to stdout, getpid and kill only after LTO has decided
    # what is used, so LTO would drop their definitions.
    sources = ("crt0.S", "board.c", "libc_%s.c" % env["TOOLCHAIN_LIBC"])
    # The board's addresses are for these files only: everything else compiles the same
    # for every board (and objects are shared through a cache=).
    startup_env = env.Clone()
    startup_env.Append(CCFLAGS=["-fno-lto"], CPPDEFINES=env["BOARD_MODULE"].DEFINES)
    return [startup_env.Object(os.path.join(build_dir, os.path.splitext(source)[0] + ".o"),
                               os.path.join(COMMON_DIR, source))
            for source in sources]


def _emit_map_file(target, source, env):
    """The link writes a map file beside the ELF: declare it, so `scons -c` removes it."""
    elf = target[0]
    return target + [elf.target_from_source("", ".map")], source


def generate(env):
    board = env["BOARD_MODULE"]
    regions = board.regions(env.get("model_placement", "embedded"))
    env["MEMORY_REGION_OBJECTS"] = regions
    env["MEMORY_REGIONS"] = [region.as_dict() for region in regions]
    env.SetDefault(STACK_SIZE=16 * 1024)
    env.Append(CPPPATH=[COMMON_DIR], LIBPATH=[COMMON_DIR])
    env.SetDefault(TOOLCHAIN_LIBC="picolibc")
    env.Append(LINKFLAGS=["-T", "$LINKER_SCRIPT", "-Wl,-Map,${TARGETS[1]}"])
    env.Append(PROGEMITTER=[_emit_map_file])
    # The linker writes the map as it goes and leaves it when it fails (an undefined
    # symbol, a full disk): a map of no image, removed (the linker removes the ELF).
    if "rm -f ${TARGETS[1]}" not in env["LINKCOM"]:
        env["LINKCOM"] = env["LINKCOM"] + " || { rm -f ${TARGETS[1]}; exit 1; }"
    env.AddMethod(BoardStartup)
    env.AddMethod(BoardLinkerScript)


def exists(env):
    return "BOARD_MODULE" in env
