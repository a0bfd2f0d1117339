"""Build (once) and locate CORE-V GCC: a riscv32-corev-elf cross toolchain with newlib,
newlib-nano and libstdc++, from Debian's source packages.

The application note's users build with CORE-V GCC (Embecosm's binaries): binutils,
GCC, newlib and libstdc++ for the `riscv32-corev-elf` target, multilibs rv32imc/ilp32 and
rv32imfc/ilp32f. CORE-V GCC is upstream GCC plus the CORE-V (Xpulp/xcv*) extensions, which
the CV32E40P configuration we target never uses; the same toolchain built from
`binutils-source` (2.40), `gcc-12-source` (12.2) and `newlib-source` (3.3.0) exercises
everything our build depends on: the prefix, newlib and its syscalls, crt files and
specs, libstdc++ on newlib, multilib selection.

    python site_scons/etcorev/toolchain/corev_gcc.py        # build what is missing, print the prefix

Layout in the per-user cache (etcorev.scons.usercache):

    corev-gcc/<key>/             the install (bin/riscv32-corev-elf-gcc, ...)
    corev-gcc/<key>/.complete    written last: only then is the toolchain used
    corev-gcc/<key>.work/        sources and build trees; .done-<step> markers let an
                                 interrupted build resume; removed after success
    corev-gcc/<key>.log          every command's output

About 20 minutes on 2 cores the first time (binutils 2, GCC and the target libraries 16,
newlib-nano 1); later runs only stat the marker. Stdlib only.
"""

import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

if __package__ in (None, ""):      # run as a script: make `etcorev` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    sys.dont_write_bytecode = True  # and leave no byte code in the checkout

from etcorev.scons import usercache   # noqa: E402
from etcorev.toolchain import buildsteps

TARGET = "riscv32-corev-elf"
PREFIX = TARGET + "-"
# Bump when the recipe changes in a way the flags below do not show.
RECIPE_VERSION = 2

SOURCES = {   # Debian package -> tarball glob (COREV_ET_<NAME>_SOURCE overrides)
    "binutils": ("binutils-source", "/usr/src/binutils/binutils-2*.tar.xz"),
    "gcc": ("gcc-12-source", "/usr/src/gcc-12/gcc-12*.tar.xz"),
    "newlib": ("newlib-source", "/usr/src/newlib/newlib-*.tar.xz"),
}
# Debian's GCC tarball is the dfsg one (GFDL manuals removed): without this patch of
# Debian's, all-gcc stops at `genhooks: No place specified to document hook`.
GFDL_PATCH = "/usr/src/gcc-12/patches/gcc-gfdl-build.diff"
HOST_PACKAGES = ("libgmp-dev", "libmpfr-dev", "libmpc-dev", "flex", "bison", "texinfo", "patch")

MULTILIBS = ("rv32imc/ilp32", "rv32imfc/ilp32f")
TARGET_CFLAGS = "-Os -ffunction-sections -fdata-sections"

BINUTILS_CONFIGURE = ("--disable-werror", "--disable-nls", "--disable-gdb",
                      "--disable-gdbserver", "--disable-sim", "--disable-gprofng",
                      "--disable-libdecnumber", "--disable-readline")
GCC_CONFIGURE = (
    "--with-newlib", "--enable-languages=c,c++", "--disable-shared", "--disable-threads",
    "--disable-nls", "--disable-libssp", "--disable-libquadmath", "--disable-libgomp",
    "--disable-libstdcxx-pch", "--disable-libcc1", "--without-isl",
    "--enable-checking=release",
    # ISA spec 2.2 by default: rv32imc keeps its CSR instructions (startup code, cycle
    # counters), as our build's -misa-spec=2.2 asks anyway.
    "--with-isa-spec=2.2", "--with-arch=rv32imc", "--with-abi=ilp32",
    "--with-multilib-generator=rv32imc-ilp32--;rv32imfc-ilp32f--",
    "--with-pkgversion=corev-et, from Debian's gcc-12 sources",
)
# Embecosm's toolchain scripts build newlib a second time with these options and
# install it as lib*_nano.a, which --specs=nano.specs links.
NANO_CONFIGURE = (
    "--enable-newlib-reent-small", "--disable-newlib-fvwrite-in-streamio",
    "--disable-newlib-fseek-optimization", "--disable-newlib-wide-orient",
    "--enable-newlib-nano-malloc", "--disable-newlib-unbuf-stream-opt", "--enable-lite-exit",
    "--enable-newlib-global-atexit", "--enable-newlib-nano-formatted-io",
    "--disable-newlib-supplied-syscalls", "--disable-nls",
)
NANO_LIBS = ("libc", "libg", "libm", "libgloss")

# newlib 3.3 declares the long double math functions only where long double is double
# (not on RV32), so libstdc++'s configure test for C99 math in TR1/C++11 fails as a whole
# and std::trunc(float), std::lgamma, ... are missing: ExecuTorch's c10 does not compile.
# The test's answer is changed in libstdc++'s configure (GCC runs target configures with
# CONFIG_SITE=no-such-file, so a site file cannot give it) and <cmath> leaves out the
# declarations that need the missing functions (as the Zephyr SDK patched its libstdc++).
TR1_CONFIGURE = "libstdc++-v3/configure"
TR1_CHECK = "checking for ISO C99 support to TR1 in <math.h>"
CMATH_HEADERS = ("libstdc++-v3/include/c_global/cmath", "libstdc++-v3/include/tr1/cmath")
CMATH_NOTE = "// corev-et: not declared by newlib on RV32 (long double is 128-bit): "

# Rough share of the total, for progress lines.
STEP_MINUTES = {"binutils": 2, "gcc": 16, "newlib-nano": 1}


class ToolchainError(RuntimeError):
    """Building or locating CORE-V GCC failed; the message says what to do."""


# --------------------------------------------------------------------------- finding

def find_source(name):
    override = os.environ.get("COREV_ET_%s_SOURCE" % name.upper())
    if override:
        return Path(override)
    hits = sorted(glob.glob(SOURCES[name][1]))
    return Path(hits[-1]) if hits else None


def _sources():
    found, missing = {}, []
    for name, (package, pattern) in SOURCES.items():
        path = find_source(name)
        if path is None or not path.is_file():
            missing.append("%s (%s)" % (package, path or pattern))
        else:
            found[name] = path
    if missing:
        raise ToolchainError(
            "CORE-V GCC is built from Debian's source packages, and %s %s missing: "
            "`apt-get install binutils-source gcc-12-source newlib-source %s` "
            "(./setup.sh --corev-gcc does this)."
            % (", ".join(missing), "is" if len(missing) == 1 else "are", " ".join(HOST_PACKAGES)))
    return found


def _check_host():
    """What building a cross GCC needs on the host, before 25 minutes are spent."""
    missing = [tool for tool in ("gcc", "g++", "make", "flex", "bison", "patch", "tar")
               if not shutil.which(tool)]
    missing += [header for header in ("gmp.h", "mpfr.h", "mpc.h")
                if not glob.glob("/usr/include/**/" + header, recursive=True)]
    if missing:
        raise ToolchainError(
            "CORE-V GCC: the host lacks %s, which building a cross GCC needs: "
            "`apt-get install %s` (./setup.sh --corev-gcc does this)."
            % (", ".join(missing), " ".join(HOST_PACKAGES)))


def _key(sources):
    key = {
        "recipe": RECIPE_VERSION,
        "sources": {n: [p.name, p.stat().st_size] for n, p in sorted(sources.items())},
        "binutils": BINUTILS_CONFIGURE, "gcc": GCC_CONFIGURE, "nano": NANO_CONFIGURE,
        "cflags": TARGET_CFLAGS,
    }
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    version = re.match(r"gcc-(\d+\.\d+\.\d+)", sources["gcc"].name)
    return "gcc-%s-%s" % (version.group(1) if version else "x", digest)


def install_dir():
    """Where this recipe's toolchain is (or would be) installed; None if the sources
    are not there to tell."""
    try:
        sources = _sources()
    except ToolchainError:
        return None
    root = usercache.cache_root()
    return root / "corev-gcc" / _key(sources) if root else None


def installed_prefix():
    """The compiler prefix of a complete cached CORE-V GCC (`.../bin/riscv32-corev-elf-`),
    or None. Only stats: a complete install has its marker; any install from an older
    recipe counts too, as long as it is complete."""
    root = usercache.cache_root()
    if root is None:
        return None
    candidates = []
    preferred = install_dir()
    if preferred is not None:
        candidates.append(preferred)
    candidates += sorted(Path(root, "corev-gcc").glob("gcc-*"), reverse=True)
    for install in candidates:
        if (install / ".complete").is_file() and (install / "bin" / (PREFIX + "gcc")).is_file():
            return str(install / "bin" / PREFIX)
    return None


# --------------------------------------------------------------------------- building

class _Build:
    def __init__(self, sources, install, work, runner, log):
        self.sources, self.install, self.work = sources, install, work
        self.runner, self.log = runner, log
        self.src = work / "src"
        self.env = buildsteps.clean_build_env({
            "PATH": "%s:%s" % (install / "bin", os.environ.get("PATH", "")),
        })

    def step(self, name, function):
        marker = self.work / (".done-" + name)
        if marker.is_file():
            self.log("CORE-V GCC: %s already done (resuming)" % name)
            return
        minutes = STEP_MINUTES.get(name)
        self.log("CORE-V GCC: %s%s" % (name, " (about %d min)" % minutes if minutes else ""))
        started = time.monotonic()
        function()
        marker.write_text("%.0f s\n" % (time.monotonic() - started))
        self.log("CORE-V GCC: %s done in %.0f s" % (name, time.monotonic() - started))

    def make(self, what, build_dir, *targets):
        self.runner.run(what, ["make", "-j%d" % buildsteps.jobs(), *targets], build_dir, self.env)

    # ---- sources
    def extract(self, name):
        tarball = self.sources[name]
        listing = subprocess.run(["tar", "-tJf", str(tarball)], capture_output=True,
                                 text=True).stdout.split("\n", 1)[0]
        top = listing.split("/", 1)[0]
        if not top:
            raise ToolchainError("CORE-V GCC: cannot list %s: is it a tar.xz?" % tarball)
        shutil.rmtree(self.src / top, ignore_errors=True)
        self.src.mkdir(parents=True, exist_ok=True)
        self.runner.run("extracting " + tarball.name, ["tar", "-xJf", tarball], self.src)
        link = self.src / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(top)          # newlib's tarball unpacks into newlib-salsa/

    def prepare_gcc(self):
        self.extract("gcc")
        gcc = self.src / "gcc"
        if not os.path.isfile(GFDL_PATCH):
            raise ToolchainError("CORE-V GCC: Debian's %s is missing (package gcc-12-source)."
                                 % GFDL_PATCH)
        self.runner.run("applying Debian's gcc-gfdl-build.diff",
                        ["patch", "-p2", "-i", GFDL_PATCH], gcc)
        _patch_tr1_check(gcc / TR1_CONFIGURE)
        for header in CMATH_HEADERS:
            _patch_cmath(gcc / header)

    def combine_newlib(self):
        """newlib and libgloss inside GCC's tree: one pass builds the target libraries.
        A dangling link would be silent (no target-newlib) and fail much later."""
        self.extract("newlib")
        for part in ("newlib", "libgloss"):
            link = self.src / "gcc" / part
            if link.is_symlink():
                link.unlink()
            link.symlink_to(self.src / "newlib" / part)
            if not (link / "configure").is_file():
                raise ToolchainError("CORE-V GCC: %s has no %s/configure." %
                                     (self.sources["newlib"], part))

    # ---- builds
    def binutils(self):
        build = self._fresh_dir("build-binutils")
        self.runner.run("configuring binutils", [
            self.src / "binutils" / "configure", "--target=" + TARGET,
            "--prefix=%s" % self.install, *BINUTILS_CONFIGURE], build, self.env)
        self.make("building binutils", build)
        self.make("installing binutils", build, "install-strip")

    def gcc(self):
        build = self.work / "build-gcc"
        if not (build / "Makefile").is_file():    # configure once; make resumes
            build = self._fresh_dir("build-gcc")
            self.runner.run("configuring GCC", [
                self.src / "gcc" / "configure", "--target=" + TARGET,
                "--prefix=%s" % self.install, *GCC_CONFIGURE,
                "CFLAGS_FOR_TARGET=" + TARGET_CFLAGS,
                "CXXFLAGS_FOR_TARGET=" + TARGET_CFLAGS], build, self.env)
        self.make("building GCC, newlib and libstdc++", build)
        # Host programs stripped; target libraries as they are (libgloss has no
        # install-strip).
        self.make("installing GCC", build, "install-strip-host", "install-target")

    def newlib_nano(self):
        build = self._fresh_dir("build-newlib-nano")
        stage = self._fresh_dir("stage-newlib-nano")
        self.runner.run("configuring newlib-nano", [
            self.src / "newlib" / "configure", "--target=" + TARGET, "--prefix=/nano",
            *NANO_CONFIGURE, "CFLAGS_FOR_TARGET=" + TARGET_CFLAGS], build, self.env)
        self.make("building newlib-nano", build)
        self.make("installing newlib-nano", build, "install", "DESTDIR=%s" % stage)
        nano = stage / "nano" / TARGET
        for multilib in [""] + list(MULTILIBS[1:]):
            src_dir, dest_dir = nano / "lib" / multilib, self.install / TARGET / "lib" / multilib
            for lib in NANO_LIBS:
                shutil.copyfile(src_dir / (lib + ".a"), dest_dir / (lib + "_nano.a"))
        include = self.install / TARGET / "include" / "newlib-nano"
        include.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(nano / "include" / "newlib.h", include / "newlib.h")
        shutil.rmtree(stage)

    def _fresh_dir(self, name):
        path = self.work / name
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        return path


def _patch_tr1_check(path):
    """libstdc++'s configure: the C99-in-TR1 math check answers yes (see above)."""
    text = path.read_text()
    start = text.find(TR1_CHECK)
    failed = text.find("glibcxx_cv_c99_math_tr1=no", start)
    if start < 0 or failed < 0:
        raise ToolchainError("CORE-V GCC: %s has no C99 TR1 math check to patch; is this "
                             "GCC 12's libstdc++?" % path)
    path.write_text(text[:failed] + "glibcxx_cv_c99_math_tr1=yes"
                    + text[failed + len("glibcxx_cv_c99_math_tr1=no"):])


def _patch_cmath(path):
    """Comment out `using ::<f>l;` (long double) and `using ::nexttoward*;` in the C99
    math part of a <cmath>; idempotent."""
    text = path.read_text()
    names = set(re.findall(r"^\s*using ::(\w+);", text, re.M))

    def keep_out(match):
        name = match.group(2)
        if name.startswith("nexttoward") or (name.endswith("l") and name[:-1] in names):
            return match.group(1) + CMATH_NOTE + match.group(0).strip()
        return match.group(0)

    patched = re.sub(r"^(\s*)using ::(\w+);[^\n]*$", keep_out, text, flags=re.M)
    path.write_text(patched)


def verify(prefix):
    """Compile and link a C++ program for each multilib; check -print-multi-lib.
    Returns a list of problems (empty: fine)."""
    problems = []
    multi = subprocess.run([prefix + "gcc", "-print-multi-lib"], capture_output=True,
                           text=True).stdout
    for multilib in MULTILIBS[1:]:
        if multilib + ";" not in multi:
            problems.append("-print-multi-lib lacks %s: %s" % (multilib, multi.strip()))
    with tempfile_dir() as scratch:
        source = Path(scratch, "t.cpp")
        source.write_text("#include <cmath>\n#include <vector>\n"
                          "float f(float x) { return std::trunc(x) + std::lgamma(x); }\n"
                          "int main() { std::vector<int> v(3); return (int)f(v.size()); }\n")
        for multilib in MULTILIBS:
            march, mabi = multilib.split("/")
            argv = [prefix + "g++", "-misa-spec=2.2", "-march=" + march, "-mabi=" + mabi,
                    "--specs=nano.specs", "-std=c++17", "-fno-exceptions",
                    "-Os", str(source), "-o", str(Path(scratch, "t.elf"))]
            proc = subprocess.run(argv, capture_output=True, text=True)
            if proc.returncode:
                problems.append("%s: %s" % (" ".join(argv[1:4]), proc.stderr.strip()[-2000:]))
    return problems


def tempfile_dir():
    import tempfile
    return tempfile.TemporaryDirectory(prefix="corev-gcc-check-")


def ensure_toolchain(log=print):
    """The prefix of the cached CORE-V GCC (…/bin/riscv32-corev-elf-), built if missing."""
    sources = _sources()
    root = usercache.required_cache_root("CORE-V GCC")
    key = _key(sources)
    install = root / "corev-gcc" / key
    marker = install / ".complete"
    if marker.is_file():
        return str(install / "bin" / PREFIX)
    with buildsteps.locked(install.with_name(key + ".lock"), log, "CORE-V GCC") as lock_fd:
        if marker.is_file():                    # built by someone else meanwhile
            return str(install / "bin" / PREFIX)
        _check_host()
        work = install.with_name(key + ".work")
        work.mkdir(parents=True, exist_ok=True)
        install.mkdir(parents=True, exist_ok=True)
        log_path = install.with_name(key + ".log")
        runner = buildsteps.Runner(
            log_path, "CORE-V GCC", lock_fd,
            heartbeat=lambda step, seconds: log("CORE-V GCC: %s ... %d min" % (step, seconds // 60)))
        runner.note("CORE-V GCC build log, started %s" % time.ctime())
        log("CORE-V GCC: building %s into %s (about 20 min on 2 cores; log: %s)"
            % (TARGET, install, log_path))
        started = time.monotonic()
        build = _Build(sources, install, work, runner, log)
        build.step("binutils-sources", lambda: build.extract("binutils"))
        build.step("gcc-sources", build.prepare_gcc)
        build.step("newlib-sources", build.combine_newlib)
        build.step("binutils", build.binutils)
        build.step("gcc", build.gcc)
        build.step("newlib-nano", build.newlib_nano)
        prefix = str(install / "bin" / PREFIX)
        problems = verify(prefix)
        if problems:
            raise ToolchainError("CORE-V GCC: the new toolchain in %s fails its check:\n  %s"
                                 % (install, "\n  ".join(problems)))
        buildsteps.write_marker(marker, target=TARGET, multilibs=list(MULTILIBS),
                                sources={n: p.name for n, p in sources.items()},
                                seconds=round(time.monotonic() - started))
        shutil.rmtree(work, ignore_errors=True)
        log("CORE-V GCC: done in %.0f min -> %s" % ((time.monotonic() - started) / 60, prefix))
    return prefix


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.parse_args(argv)
    try:
        prefix = ensure_toolchain(log=lambda message: print(message, file=sys.stderr, flush=True))
    except (ToolchainError, buildsteps.StepError, usercache.CacheDisabled) as error:
        print(error, file=sys.stderr)
        return 1
    print(prefix)
    return 0


if __name__ == "__main__":
    sys.exit(main())
