"""Firmware: compile sources into a build directory, link them with the board's startup
code and linker script, and derive the hex, the binary and the size report.

    fw = env.Firmware("build/v/runner/executor_runner", objects,
                      whole_archive=[registrations])
    fw["elf"], fw["hex"], fw["map"], fw["size"], fw["all"]
"""

import os


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
    elf_nodes = env.Program(
        target_base + ".elf", startup + list(objects),
        LINKER_SCRIPT=script[0],
        WHOLE_ARCHIVE_LIBS=list(whole_archive),
        LIBS=list(libs) + env["LIBS"],
    )
    env.Depends(elf_nodes, script)
    elf, map_file = elf_nodes[0], elf_nodes[1]
    size = env.SizeReport(target_base + ".size.txt", elf)
    # The hex is made only from an image that fits the board.
    hexfile = env.VerilogHex(target_base + ".hex", elf)
    env.Depends(hexfile, size)
    extra = []
    if "ihex" in env.get("outputs", []):
        extra += env.IntelHex(target_base + ".ihex", elf)
    if "bin" in env.get("outputs", []):
        extra += env.RawBinary(target_base + ".bin", elf)
    env.Depends(extra, size)
    return {"elf": elf, "map": map_file, "hex": hexfile[0], "size": size[0],
            "all": [elf, map_file, hexfile, size] + extra}


def generate(env):
    env.AddMethod(ObjectsIn)
    env.AddMethod(Firmware)


def exists(env):
    return True
