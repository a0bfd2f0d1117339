"""What `scons -c` leaves that SCons itself does not remove."""

import os


def prune_after_clean(variant_dir, build_dir):
    """SCons removes the files but keeps directories: remove the variant's directories
    that are now empty, then the signature database when no variant directory is left
    in build_dir (it then describes only files that are gone; while other variants
    remain, their files need it) and the build directory's lock, then build_dir itself
    when it is empty. Other files in build_dir stay; other variants are named."""
    for directory, _, _ in sorted(os.walk(variant_dir), key=lambda d: -len(d[0])):
        try:
            os.rmdir(directory)
        except OSError:                  # not empty
            pass
    if not os.path.isdir(build_dir):
        return
    directories = sorted(entry.name for entry in os.scandir(build_dir) if entry.is_dir())
    others = [name for name in directories if name != os.path.basename(variant_dir)]
    if others:                   # say so: a plain `scons -c` cleans the default variant only
        print("Left in %s: %s (`scons -c` with %s options removes %s)."
              % (_shown(build_dir), ", ".join(others), "its" if len(others) == 1 else "their",
                 "it" if len(others) == 1 else "them"))
    if directories:
        return
    for name in (".sconsign.dblite", ".sconsign.dblite.tmp", ".lock"):
        if os.path.isfile(os.path.join(build_dir, name)):
            os.remove(os.path.join(build_dir, name))
    if not os.listdir(build_dir):
        os.rmdir(build_dir)


def _shown(directory):
    relative = os.path.relpath(directory)
    return directory if relative.startswith("..") else relative
