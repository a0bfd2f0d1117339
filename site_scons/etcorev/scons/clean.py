"""What `scons -c` leaves that SCons itself does not remove."""

import os
import re

from etcorev import boards


def is_variant(name):
    """Is this directory name a variant's (board-buildtype-loglevel-...), not something
    else the user keeps in build_dir (build_dir=. in the checkout holds the checkout)?"""
    return bool(re.match(r"^(%s)-(release|relwithdebinfo|debug)-log[a-z]+-"
                         % "|".join(map(re.escape, boards.names())), name))


def prune_after_clean(variant_dir, build_dir, install_dir=None):
    """SCons removes the files but keeps directories: remove the variant's directories
    that are now empty, then the signature database when no variant directory is left
    in build_dir (it then describes only files that are gone; while other variants
    remain, their files need it) and the build directory's lock, then build_dir itself
    when it is empty; and the install directory when nothing is left in it. Other
    files and directories in build_dir stay; other variants are named."""
    remove_empty_directories(variant_dir)
    # Host programs the variant built (profile=etdump's flatcc, build_dir/host/...).
    remove_empty_directories(os.path.join(build_dir, "host"))
    if install_dir:
        remove_empty_directories(install_dir)
    if not os.path.isdir(build_dir):
        return
    variants = sorted(entry.name for entry in os.scandir(build_dir)
                      if entry.is_dir() and is_variant(entry.name))
    others = [name for name in variants if name != os.path.basename(variant_dir)]
    if others:                   # say so: a plain `scons -c` cleans the default variant only
        print("Left in %s: %s (`scons -c` with %s options removes %s)."
              % (_shown(build_dir), ", ".join(others), "its" if len(others) == 1 else "their",
                 "it" if len(others) == 1 else "them"))
    # The testbenches built there (scons testbench) still need the signature database.
    if variants or os.path.isdir(os.path.join(build_dir, "testbench")):
        return
    for name in (".sconsign.dblite", ".sconsign.dblite.tmp", ".lock"):
        if os.path.isfile(os.path.join(build_dir, name)):
            os.remove(os.path.join(build_dir, name))
    if not os.listdir(build_dir):
        os.rmdir(build_dir)


def remove_empty_directories(top):
    """top and the directories below it that hold no file, deepest first (also after
    `scons -c testbench`)."""
    for directory, _, _ in sorted(os.walk(top), key=lambda d: -len(d[0])):
        try:
            os.rmdir(directory)
        except OSError:                  # not empty
            pass


def _shown(directory):
    relative = os.path.relpath(directory)
    return directory if relative.startswith("..") else relative
