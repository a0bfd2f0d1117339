"""Firmware: compile sources into a build directory, link them with the board's startup
code and linker script, and derive the hex, the size report and the images of
`outputs=` (etcorev.image.output_formats).

    fw = env.Firmware("build/v/add/executor_runner", objects, whole_archive=[registrations])
    fw["elf"], fw["hex"], fw["map"], fw["size"], fw["all"]

An image that does not fit the board fails the link, and its ELF and map are removed.
"""

import os

from etcorev import require_tools
from etcorev.image.output_formats import FORMATS


def ObjectsIn(env, build_dir, sources, source_root=None):
    """Objects for sources (files anywhere, e.g. the ExecuTorch tree) under build_dir,
    keeping their path relative to source_root so equal names don't collide."""
    objects = []
    for source in env.Flatten(sources):
        node = env.File(source)
        rel = os.path.relpath(node.srcnode().abspath, source_root) if source_root else node.name
        base = os.path.splitext(rel)[0]
        objects += env.Object(os.path.join(build_dir, base + env["OBJSUFFIX"]), node)
    return objects


def Firmware(env, target_base, objects, whole_archive=(), libs=()):
    build_dir = os.path.dirname(target_base)
    script = env.BoardLinkerScript(os.path.join(build_dir, "link.ld"))
    startup = env.BoardStartup(os.path.join(build_dir, "startup"))
    elf, map_file = env.Program(
        target_base + ".elf", startup + list(objects),
        LINKER_SCRIPT=script[0],
        WHOLE_ARCHIVE_LIBS=list(whole_archive),
        LIBS=list(libs) + env["LIBS"],
    )
    env.Depends(elf, script)
    env.AddPostAction(elf, env["CHECK_IMAGE_FITS"])
    size = env.SizeReport(target_base + ".size.txt", elf)
    hexfile = env.VerilogHex(target_base + ".hex", elf)
    extra = [getattr(env, FORMATS[name].builder)(target_base + FORMATS[name].suffix, elf)[0]
             for name in env.get("outputs", [])]
    return {"elf": elf, "map": map_file, "hex": hexfile[0], "size": size[0],
            "all": [elf, map_file, hexfile[0], size[0]] + extra}


def generate(env):
    require_tools(env, "board", "elf_outputs", "whole_archive")
    env.AddMethod(ObjectsIn)
    env.AddMethod(Firmware)


def exists(env):
    return True
