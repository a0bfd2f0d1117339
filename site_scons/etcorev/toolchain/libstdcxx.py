"""Build (once) and locate libstdc++ for the bare-metal RISC-V toolchain.

Debian 12's ``gcc-riscv64-unknown-elf`` + ``picolibc-riscv64-unknown-elf``
ship no C++ standard library.  This module builds libstdc++ (without
exceptions, against picolibc) from Debian's ``gcc-12-source`` package into a
per-user cache outside the repository, one multilib at a time, and hands out
the include and library flags for it.

The cache key covers the source tarball (name and size), the compiler and
picolibc (path, size and mtime of the installed files), the configure recipe
below, and ``RECIPE_VERSION``.  Each multilib gets its own completion marker,
written last, so an interrupted build never looks complete; a lock file keeps
concurrent builds (parallel tests, two shells) from colliding.  When every
requested multilib is already complete, ``ensure_libstdcxx`` runs no
subprocess at all: it only stats a few files.

Layout of an install prefix P::

    P/include/c++/<ver>/                          generic headers (shared)
    P/include/c++/<ver>/riscv64-unknown-elf/<ml>/ bits/, ext/ (per multilib)
    P/lib/<ml>/                                   libstdc++.a, libsupc++.a, ...
    P/.complete-<ml with / as _>                  marker, written last

Command line: ``python site_scons/etcorev/toolchain/libstdcxx.py [--prefix riscv64-unknown-elf-]``
builds what is missing and prints P.

Stdlib only, so it runs both inside SCons and as a plain script.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):      # run as a script: make `etcorev` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    sys.dont_write_bytecode = True  # and leave no byte code in the checkout

from etcorev.scons import usercache  # noqa: E402
from etcorev.toolchain import buildsteps

__all__ = [
    "LibstdcxxError",
    "ensure_libstdcxx",
    "installed",
    "find_gcc_source",
    "flags",
    "DEFAULT_MULTILIBS",
]

# Bump to force a rebuild everywhere when the recipe below changes in a way
# the configure flags do not show.
RECIPE_VERSION = 1

TARGET = "riscv64-unknown-elf"
DEFAULT_PREFIX = TARGET + "-"
DEFAULT_MULTILIBS = ("rv32im/ilp32", "rv32imf/ilp32f")

# Debian's gcc-12-source package; COREV_ET_GCC_SOURCE overrides.
GCC_SOURCE_GLOB = "/usr/src/gcc-12/gcc-12*.tar.xz"

OPT_FLAGS = "-Os -ffunction-sections -fdata-sections"
CFLAGS = OPT_FLAGS
CXXFLAGS = OPT_FLAGS + " -fno-exceptions"

# Everything except the prefix / include dir, which depend on the cache path.
CONFIGURE_FLAGS = (
    "--host=" + TARGET,
    "--with-newlib",
    "--disable-multilib",
    "--disable-shared",
    "--enable-static",
    "--disable-libstdcxx-pch",
    "--disable-nls",
    "--disable-libstdcxx-verbose",
    "--enable-cstdio=stdio_pure",
    "--disable-libstdcxx-backtrace",
    "--enable-libstdcxx-time=no",
    "--disable-libstdcxx-threads",
)

# Top-level files of the gcc tree that libstdc++-v3/configure needs.
_TOP_FILES = (
    "config-ml.in",
    "config.guess",
    "config.sub",
    "install-sh",
    "ltmain.sh",
    "mkinstalldirs",
    "missing",
    "gcc/BASE-VER",
    "gcc/DATESTAMP",
    "gcc/DEV-PHASE",
)


class LibstdcxxError(RuntimeError):
    """Building or locating libstdc++ failed; the message says what to do."""


# --------------------------------------------------------------------------
# Locations


def find_gcc_source() -> Path | None:
    """The gcc source tarball: ``$COREV_ET_GCC_SOURCE`` or Debian's gcc-12-source."""
    override = os.environ.get("COREV_ET_GCC_SOURCE")
    if override:
        return Path(override)
    hits = sorted(glob.glob(GCC_SOURCE_GLOB))
    return Path(hits[-1]) if hits else None


def _missing_source_message(where) -> str:
    return (
        f"libstdc++: the gcc source tarball ({where}) is missing, so libstdc++ "
        "cannot be built for the bare-metal RISC-V toolchain (Debian's "
        f"{TARGET} compiler ships no C++ standard library). Install Debian's "
        "gcc-12-source package (apt-get install gcc-12-source), or point "
        "COREV_ET_GCC_SOURCE at a gcc-12.*.tar.xz."
    )


def _gcc_version_from_tarball(tarball: Path) -> str:
    m = re.match(r"gcc-(\d+\.\d+\.\d+)", tarball.name)
    if not m:
        raise LibstdcxxError(
            f"libstdc++: cannot tell the gcc version from the source tarball's "
            f"name {tarball.name!r}; expected something like gcc-12.2.0-dfsg.tar.xz."
        )
    return m.group(1)


def _ml_slug(multilib: str) -> str:
    return multilib.strip("/").replace("/", "_")


def _ml_march_mabi(multilib: str) -> tuple[str, str]:
    parts = multilib.strip("/").split("/")
    if len(parts) != 2 or not parts[0].startswith("rv") or not parts[1]:
        raise LibstdcxxError(
            f"libstdc++: multilib {multilib!r} is not of the form "
            "'<march>/<mabi>' (e.g. 'rv32im/ilp32'), as printed by "
            f"'{TARGET}-gcc -march=... -mabi=... -print-multi-directory'."
        )
    return parts[0], parts[1]


def _stat_id(path) -> list:
    """Cheap identity of an installed file: real path, size, mtime."""
    if path is None:
        return ["none"]
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return [real, "missing"]
    return [real, st.st_size, st.st_mtime_ns]


def _tools(prefix: str) -> dict:
    tools = {}
    for name in ("gcc", "g++", "ar", "ranlib", "nm"):
        found = shutil.which(prefix + name)
        if found is None:
            raise LibstdcxxError(
                f"libstdc++: '{prefix}{name}' was not found on PATH. Install "
                f"Debian's gcc-{TARGET}, binutils-{TARGET} and "
                f"picolibc-{TARGET} packages (or pass the right --prefix)."
            )
        tools[name] = found
    return tools


def _picolibc_specs(gcc_path: str) -> str | None:
    bindir = os.path.dirname(os.path.realpath(gcc_path))
    cand = os.path.join(bindir, "..", "lib", "picolibc", TARGET, "picolibc.specs")
    return os.path.normpath(cand) if os.path.exists(cand) else None


def _install_dir(tarball: Path, tools: dict) -> Path:
    key = {
        "recipe": RECIPE_VERSION,
        "source": [tarball.name, tarball.stat().st_size],
        "gcc": _stat_id(tools["gcc"]),
        "g++": _stat_id(tools["g++"]),
        "picolibc": _stat_id(_picolibc_specs(tools["gcc"])),
        "cflags": CFLAGS,
        "cxxflags": CXXFLAGS,
        "configure": CONFIGURE_FLAGS,
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    ver = _gcc_version_from_tarball(tarball)
    try:
        root = usercache.required_cache_root("libstdc++ for " + TARGET)
    except usercache.CacheDisabled as error:
        raise LibstdcxxError(str(error))
    return root / "libstdcxx" / f"gcc-{ver}-{digest}"


def _marker(install: Path, multilib: str) -> Path:
    return install / f".complete-{_ml_slug(multilib)}"


def flags(install, multilib: str) -> dict:
    """Compiler/linker flags for one multilib of an install prefix.

    Returns ``dict(CPPFLAGS=["-I<generic>", "-I<multilib bits>"], LIBPATH=[<lib dir>])``.
    Use -I, not -isystem: picolibc.specs puts its own -isystem first, and
    ``<cstdlib>``'s ``#include_next <stdlib.h>`` must find picolibc after it.
    """
    install = Path(install)
    ml = multilib.strip("/")
    vers = sorted((install / "include" / "c++").glob("*"))
    if len(vers) != 1:
        raise LibstdcxxError(
            f"libstdc++: {install} does not look like a libstdc++ install "
            "made by ensure_libstdcxx() (expected exactly one "
            "include/c++/<version> directory)."
        )
    inc = vers[0]
    return {
        "CPPFLAGS": ["-I" + str(inc), "-I" + str(inc / TARGET / ml)],
        "LIBPATH": [str(install / "lib" / ml)],
    }


# --------------------------------------------------------------------------
# Building


def _extract_sources(tarball: Path, dest: Path, runner: buildsteps.Runner) -> Path:
    """Extract the ~39 MiB of the gcc tree that libstdc++-v3 needs."""
    with open(tarball, "rb") as fh:  # fail early and clearly if unreadable
        fh.read(1)
    top = _gcc_tree_name(tarball)
    lib = f"{top}/libstdc++-v3"
    members = [
        lib,
        f"{top}/libgcc/*.h",
        f"{top}/libiberty/cp-demangle.[ch]",
        f"{top}/include",
    ] + [f"{top}/{f}" for f in _TOP_FILES]
    excludes = [
        # configure needs testsuite/Makefile.in and doc/{Makefile.in,
        # xsl/customization.xsl.in}, none of the tests or the manual.
        f"{lib}/testsuite/*/*",
        f"{lib}/doc/html",
        f"{lib}/doc/xml",
        f"{lib}/doc/doxygen",
        f"{lib}/ChangeLog*",
    ]
    argv = ["tar", "-xJf", str(tarball), "-C", str(dest), "--wildcards"]
    argv += [f"--exclude={e}" for e in excludes]
    argv += members
    runner.run("extracting gcc sources", argv, cwd=dest)
    src = dest / top
    if not (src / "libstdc++-v3" / "configure").is_file():
        raise LibstdcxxError(
            f"libstdc++: {tarball} has no {top}/libstdc++-v3/configure; is it "
            f"a gcc source tarball? (log: {runner.log_path})"
        )
    return src


def _gcc_tree_name(tarball: Path) -> str:
    # Debian's gcc-12.2.0-dfsg.tar.xz unpacks to gcc-12.2.0/
    return "gcc-" + _gcc_version_from_tarball(tarball)


def _build_env(tools: dict, march: str, mabi: str) -> dict:
    # --oslib=semihost: configure's link tests need _exit, _write, ...
    target = f"-march={march} -mabi={mabi} --specs=picolibc.specs --oslib=semihost"
    return buildsteps.clean_build_env(dict(
        CC=f"{tools['gcc']} {target}",
        CXX=f"{tools['g++']} {target}",
        AR=tools["ar"],
        RANLIB=tools["ranlib"],
        NM=tools["nm"],
        CFLAGS=CFLAGS,
        CXXFLAGS=CXXFLAGS,
    ))


def _rmtree(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def _build_one(src: Path, scratch: Path, install: Path, ver: str, multilib: str,
               tools: dict, runner: buildsteps.Runner) -> None:
    """Configure, build and install one multilib, then publish it atomically."""
    march, mabi = _ml_march_mabi(multilib)
    ml = multilib.strip("/")
    slug = _ml_slug(multilib)
    gxx_inc = install / "include" / "c++" / ver
    build = scratch / f"build-{slug}"
    build.mkdir()
    env = _build_env(tools, march, mabi)

    build_triplet = subprocess.run(
        ["sh", str(src / "config.guess")], capture_output=True, text=True
    ).stdout.strip() or "x86_64-pc-linux-gnu"
    configure = [
        "sh", src / "libstdc++-v3" / "configure",
        f"--build={build_triplet}",
        f"--prefix={install}",
        f"--with-gxx-include-dir={gxx_inc}",
        *CONFIGURE_FLAGS,
    ]
    runner.run(f"configuring {multilib}", configure, cwd=build, env=env)
    runner.run(f"building {multilib}", ["make", f"-j{buildsteps.jobs()}"], cwd=build, env=env)

    # Stage next to the install dir (same file system: renames are atomic).
    stage = Path(tempfile.mkdtemp(prefix=f"{install.name}.stage-", dir=install.parent))
    try:
        runner.run(f"installing {multilib}", ["make", "install", f"DESTDIR={stage}"],
                   cwd=build, env=env)
        root = stage / str(install).lstrip("/")
        s_inc = root / "include" / "c++" / ver
        s_tgt = s_inc / TARGET
        # libtool already appends `-print-multi-os-directory` to libdir.
        found = sorted((root / "lib").rglob("libstdc++.a"))
        s_lib = found[0].parent if len(found) == 1 else None
        if s_lib is None or not (s_tgt / "bits").is_dir():
            raise LibstdcxxError(
                f"libstdc++: 'make install' for {multilib} did not produce "
                f"lib/libstdc++.a and include/c++/{ver}/{TARGET}/bits; see "
                f"{runner.log_path}."
            )
        # `make install MULTISUBDIR=` is ignored with --disable-multilib, so
        # move the target headers (bits/, ext/) into a per-multilib dir.
        s_ml_inc = stage / "ml-include"
        s_ml_inc.mkdir()
        for entry in list(s_tgt.iterdir()):
            entry.rename(s_ml_inc / entry.name)
        s_ml_lib = stage / "ml-lib"
        s_ml_lib.mkdir()
        for entry in list(s_lib.iterdir()):
            if entry.name.endswith(".la"):  # libtool files name the old libdir
                entry.unlink()
            else:
                entry.rename(s_ml_lib / entry.name)

        # Publish.  Generic headers are identical for every multilib; whoever
        # comes first renames them in as a whole, so their presence means
        # they are complete.
        if not gxx_inc.exists():
            gxx_inc.parent.mkdir(parents=True, exist_ok=True)
            s_inc.rename(gxx_inc)
        for src_dir, dest in ((s_ml_inc, gxx_inc / TARGET / ml),
                              (s_ml_lib, install / "lib" / ml)):
            _rmtree(dest)  # leftovers of an interrupted build (no marker)
            dest.parent.mkdir(parents=True, exist_ok=True)
            src_dir.rename(dest)
        if (root / "share").is_dir() and not (install / "share").exists():
            (root / "share").rename(install / "share")  # gdb pretty printers
    finally:
        shutil.rmtree(stage, ignore_errors=True)

    buildsteps.write_marker(_marker(install, multilib), multilib=ml, march=march, mabi=mabi,
                            gcc_version=ver)


def installed(prefix: str, multilib: str) -> Path | None:
    """The install prefix when libstdc++ for multilib is built (only stats), else None."""
    tarball = find_gcc_source()
    if tarball is None or not tarball.is_file():
        raise LibstdcxxError(_missing_source_message(tarball or GCC_SOURCE_GLOB))
    install = _install_dir(tarball, _tools(prefix))
    return install if _marker(install, multilib).is_file() else None


def ensure_libstdcxx(prefix: str = DEFAULT_PREFIX,
                     multilibs=DEFAULT_MULTILIBS,
                     log=print,
                     source=None) -> Path:
    """Return the install prefix of libstdc++ for ``multilibs``, building what is missing.

    ``prefix`` is the cross tool prefix (``riscv64-unknown-elf-``, or with a
    directory in front).  ``multilibs`` are ``<march>/<mabi>`` names as given
    by ``-print-multi-directory``.  ``log`` gets one line per step.
    ``source`` overrides the gcc source tarball (default: Debian's
    gcc-12-source, or ``$COREV_ET_GCC_SOURCE``).

    When everything is built already this only stats a few files.  Raises
    :class:`LibstdcxxError` with a message saying what to do on failure.
    """
    if isinstance(multilibs, str):
        multilibs = (multilibs,)
    multilibs = tuple(dict.fromkeys(m.strip("/") for m in multilibs))
    for ml in multilibs:
        _ml_march_mabi(ml)

    tarball = Path(source) if source is not None else find_gcc_source()
    if tarball is None or not tarball.is_file():
        raise LibstdcxxError(_missing_source_message(tarball or GCC_SOURCE_GLOB))
    tools = _tools(prefix)
    install = _install_dir(tarball, tools)

    def missing():
        return [ml for ml in multilibs if not _marker(install, ml).is_file()]

    if not missing():
        return install

    with buildsteps.locked(install.parent / f"{install.name}.lock", log, "libstdc++") as lock_fd:
        todo = missing()  # someone else may have built them meanwhile
        if not todo:
            return install
        _check_compiler(tools, tarball)
        ver = _gcc_version_from_tarball(tarball)
        install.mkdir(parents=True, exist_ok=True)
        # Scratch and staging dirs of a killed build: safe to drop, we hold
        # the lock (and so no command of that build is still running).
        for old in (list(install.parent.glob(f"{install.name}.stage-*"))
                    + list(install.parent.glob(f"{install.name}.scratch-*"))):
            shutil.rmtree(old, ignore_errors=True)
        log_path = install.parent / f"{install.name}.log"
        log_path.write_text(f"libstdc++ build log, started {time.ctime()}\n")
        runner = buildsteps.Runner(log_path, "libstdc++", lock_fd)
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix=f"{install.name}.scratch-",
                                         dir=install.parent) as scratch_s:
            scratch = Path(scratch_s)
            log(f"libstdc++: extracting gcc-{ver.split('.')[0]} sources "
                f"(log: {log_path})")
            src = _extract_sources(tarball, scratch, runner)
            for ml in todo:
                log(f"libstdc++: building {ml} (about 40 s)")
                t1 = time.monotonic()
                _build_one(src, scratch, install, ver, ml, tools, runner)
                runner.note(f"===== {ml} done in {time.monotonic() - t1:.0f} s")
        log(f"libstdc++: done in {time.monotonic() - t0:.0f} s -> {install}")
    return install


def _check_compiler(tools: dict, tarball: Path) -> None:
    """The compiler and the library sources must be the same gcc major version."""
    try:
        out = subprocess.run([tools["g++"], "-dumpversion"], capture_output=True,
                             text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        raise LibstdcxxError(f"libstdc++: '{tools['g++']} -dumpversion' failed: {exc}")
    want = _gcc_version_from_tarball(tarball)
    if out.split(".")[0] != want.split(".")[0]:
        raise LibstdcxxError(
            f"libstdc++: the compiler {tools['g++']} is gcc {out} but the source "
            f"tarball {tarball} is gcc {want}; libstdc++ must come from the "
            "same major version as the compiler. Install the matching "
            "gcc-N-source package or set COREV_ET_GCC_SOURCE."
        )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prefix", default=DEFAULT_PREFIX,
                    help="cross tool prefix (default: %(default)s)")
    ap.add_argument("--multilib", action="append", metavar="MARCH/MABI",
                    help="multilib to build (repeatable; default: "
                    + " ".join(DEFAULT_MULTILIBS) + ")")
    ap.add_argument("--flags", metavar="MARCH/MABI",
                    help="also print the CPPFLAGS and LIBPATH for this multilib")
    args = ap.parse_args(argv)
    multilibs = tuple(args.multilib) if args.multilib else DEFAULT_MULTILIBS
    if args.flags and args.flags.strip("/") not in [m.strip("/") for m in multilibs]:
        multilibs += (args.flags,)
    try:
        install = ensure_libstdcxx(args.prefix, multilibs,
                                   log=lambda m: print(m, file=sys.stderr))
    except (LibstdcxxError, buildsteps.StepError) as exc:
        print(exc, file=sys.stderr)
        return 1
    print(install)
    if args.flags:
        f = flags(install, args.flags)
        print(" ".join(f["CPPFLAGS"] + ["-L" + p for p in f["LIBPATH"]]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
