"""The per-user cache: toolchains built once (libstdc++, CORE-V GCC) and the ExecuTorch
source index live under one directory, outside every checkout.

    $COREV_ET_CACHE, else $XDG_CACHE_HOME/corev-et, else ~/.cache/corev-et

`COREV_ET_CACHE=off` switches the cache off: derived data (the source index) is then
recomputed on every run, and toolchain builds, which need a home, refuse with a message.
Stdlib only: set-up scripts use it outside SCons.
"""

import os
from pathlib import Path
from typing import Optional

OFF_VALUES = ("off", "0", "no", "none", "false")


class CacheDisabled(Exception):
    """A toolchain build was asked for while COREV_ET_CACHE=off."""


def cache_root() -> Optional[Path]:
    """The cache directory, or None when COREV_ET_CACHE=off or there is no home directory
    to put it in (HOME naming a path that does not exist is not created)."""
    override = os.environ.get("COREV_ET_CACHE", "").strip()
    if override.lower() in OFF_VALUES and override:
        return None
    if override:
        return Path(override).expanduser().absolute()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "corev-et"
    home = Path.home()
    return home / ".cache" / "corev-et" if home.is_dir() else None


def remembered(store: str, path: str, compute):
    """compute(path)'s answer about a program or file, kept in the cache file `store`
    keyed by the file's real path, size and modification time: asked once per file
    (flatc's version: a process per build otherwise). Without a cache, computed."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return compute(path)
    return remembered_as(store, "%s:%d:%d" % (real, st.st_size, st.st_mtime_ns),
                         lambda: compute(path))


def remembered_as(store: str, key: str, compute):
    """compute()'s answer (JSON), kept under key in the cache file `store` (a JSON object,
    replaced whole, so that a reader never sees half of it). Without a cache, computed."""
    import json
    root = cache_root()
    file = root / store if root else None
    known = {}
    if file is not None:
        try:
            known = json.loads(file.read_text())
        except (OSError, ValueError):
            known = {}
    if key not in known:
        known[key] = compute()
        if file is not None:
            try:
                file.parent.mkdir(parents=True, exist_ok=True)
                tmp = file.with_name(file.name + ".%d.tmp" % os.getpid())
                tmp.write_text(json.dumps(known, indent=0, sort_keys=True))
                os.replace(tmp, file)
            except OSError:
                pass
    return known[key]


def required_cache_root(what: str) -> Path:
    """The cache directory for something that cannot do without one."""
    root = cache_root()
    if root is None and not os.environ.get("COREV_ET_CACHE", "").strip():
        raise CacheDisabled(
            "%s is built once into the per-user cache, and there is none: the home "
            "directory %s does not exist. Set HOME or XDG_CACHE_HOME to a directory, or "
            "COREV_ET_CACHE to the cache's own." % (what, Path.home()))
    if root is None:
        raise CacheDisabled(
            "%s is built once into the per-user cache, which COREV_ET_CACHE=off switches "
            "off: unset COREV_ET_CACHE or set it to a directory." % what)
    return root
