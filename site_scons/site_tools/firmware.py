"""Firmware: compile sources into a build directory, link them with the board's startup
code and linker script, and derive the hex, the size report and the images of
$IMAGE_FORMATS (etcorev.image.output_formats).

    env.Tool("firmware")
    env.UseVariantDir("build/qemu-release")      # where shared objects go (optional)
    objects = env.ObjectsIn("build/qemu-release/app", ["main.c"])
    fw = env.Firmware("build/qemu-release/app/fw", objects, libs=[...], whole_archive=[...])
    fw.elf, fw.map, fw.hex, fw.size, fw.all          # an etcorev.artifacts.Firmware

The startup objects and the linker script are made once per variant directory (the
firmwares of a model set share them). An image that does not fit the board fails the
link, and its ELF and map are removed. Loads the board and toolchain tools it needs.
"""

import atexit
import os

import SCons.Script

from etcorev import boards
from etcorev.scons.tools import require_tools
from etcorev.artifacts import Firmware as FirmwareArtifact
from etcorev.scons import builddir, clean
from etcorev.scons.shared import SharedNodes, made_once
from etcorev.image.output_formats import FORMATS


def UseVariantDir(env, variant_dir, top=None):
    """Build into variant_dir: $VARIANT_DIR (top-relative when inside the checkout, so
    that commands and the map name relative paths), and objects that name no place on
    this machine (reproducible builds: neither the checkout, the build directory nor the
    variant's name reach debug information or macros; between $( $) the places are not
    part of the signature, so checkouts and variants share a cache), and LTO section
    names from a seed of ours, not a random one."""
    top = top or env.Dir("#").abspath
    variant_dir = os.path.abspath(variant_dir)
    if SCons.Script.GetOption("clean"):
        # SCons removes the files it made and keeps their directories.
        atexit.register(clean.remove_empty_directories, variant_dir)
    env["VARIANT_DIR"] = ("#" + os.path.relpath(variant_dir, top)
                          if variant_dir.startswith(top + os.sep) else variant_dir)
    build_dir = os.path.dirname(variant_dir)
    env["PATH_PREFIXES"] = builddir.path_prefixes(top, build_dir, variant_dir)
    env.Append(CCFLAGS=["$("] + builddir.prefix_map_flags(env["PATH_PREFIXES"],
                                                         builddir.checkout_dirs(top))
               + ["$)", "-frandom-seed=${TARGET.file}"])


def ObjectsIn(env, build_dir, sources, source_root=None):
    """Objects for sources (files anywhere, e.g. the ExecuTorch tree) under build_dir,
    keeping their path relative to source_root so equal names don't collide."""
    env.RiscvToolchain()
    objects = []
    for source in env.Flatten(sources):
        node = env.File(source)
        rel = os.path.relpath(node.srcnode().abspath, source_root) if source_root else node.name
        base = os.path.splitext(rel)[0]
        objects += env.Object(os.path.join(build_dir, base + env["OBJSUFFIX"]), node)
    return objects


def Firmware(env, target_base, objects, whole_archive=(), libs=()):
    env.RiscvToolchain()
    shared_dir = env.get("VARIANT_DIR") or os.path.dirname(target_base)
    shared_dir = env.Dir(shared_dir).abspath
    script = made_once(env, ("link.ld", shared_dir), lambda: env.BoardLinkerScript(
        os.path.join(shared_dir, "link.ld")))
    startup = made_once(env, ("startup", shared_dir), lambda: env.BoardStartup(
        os.path.join(shared_dir, "startup")))
    link_env = env.Clone(MEMORY_REGIONS=[r.as_dict() for r in boards.regions_of(env)])
    link_env.Prepend(LIBPATH=env.BoardLibPath())
    elf, map_file = link_env.Program(
        target_base + ".elf", startup + list(objects),
        LINKER_SCRIPT=script[0],
        WHOLE_ARCHIVE_LIBS=list(whole_archive),
        LIBS=list(libs) + env["LIBS"],
    )
    link_env.Depends(elf, script)
    link_env.AddPostAction(elf, link_env["CHECK_IMAGE_FITS"])
    size = link_env.SizeReport(target_base + ".size.txt", elf)
    hexfile = link_env.VerilogHex(target_base + ".hex", elf)
    images = [getattr(link_env, FORMATS[name].builder)(target_base + FORMATS[name].suffix, elf)[0]
              for name in env.get("IMAGE_FORMATS", [])]
    return FirmwareArtifact(elf=elf, map=map_file, hex=hexfile[0], size=size[0], images=images)


def generate(env):
    require_tools(env, "riscv_toolchain", "board", "elf_outputs", "whole_archive")
    env.SetDefault(SHARED_NODES=SharedNodes(), IMAGE_FORMATS=[])
    env.AddMethod(UseVariantDir)
    env.AddMethod(ObjectsIn)
    env.AddMethod(Firmware)


def exists(env):
    return True
