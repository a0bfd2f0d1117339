"""What `scons -c` leaves that SCons itself does not remove."""

import os


def prune_after_clean(variant_dir, build_dir):
    """SCons removes the files but keeps directories: remove the variant's directories
    that are now empty, then the signature database when no variant directory is left
    in build_dir (it then describes only files that are gone; while other variants
    remain, their files need it) and the build directory's lock, then build_dir itself
    when it is empty. Other files in build_dir stay."""
    for directory, _, _ in sorted(os.walk(variant_dir), key=lambda d: -len(d[0])):
        try:
            os.rmdir(directory)
        except OSError:                  # not empty
            pass
    if not os.path.isdir(build_dir):
        return
    if any(entry.is_dir() for entry in os.scandir(build_dir)):
        return
    for name in (".sconsign.dblite", ".sconsign.dblite.tmp", ".lock"):
        if os.path.isfile(os.path.join(build_dir, name)):
            os.remove(os.path.join(build_dir, name))
    if not os.listdir(build_dir):
        os.rmdir(build_dir)
