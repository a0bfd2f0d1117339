"""Compiler launchers (launcher=) with real tools: a distccd on the loopback interface that
the compiles go to, ccache with its own cache directory. Builds through a launcher give
the same ELF, bit for bit, as builds without one, and switching launchers rebuilds
nothing. Most tests build the C++ fixture (app=tests/fixtures/cxx_smoke); one builds the
ExecuTorch runner through distcc (et_root: skipped without a tree).

distcc distributes no compile with -flto (Release's default: "LTO cc invocations are not
worth distributing") nor with -x (the .S files), so the distcc builds here use lto=0. Each
test that starts a daemon stops it and its workers (the distccd fixture)."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from sconsrun import scons
from test_cli import assert_clean_failure, copy_worktree

DEBIAN_CC = "riscv64-unknown-elf-"
APP = "app=tests/fixtures/cxx_smoke"
# distccd runs compilers as its own user (it drops root): the Debian compiler in /usr/bin,
# which its whitelist (/usr/lib/distcc) names, not one in a user's home.
TOOLCHAIN = "toolchain=" + DEBIAN_CC

pytestmark = pytest.mark.skipif(not shutil.which(DEBIAN_CC + "gcc"),
                                reason="no riscv64-unknown-elf-gcc (./setup.sh installs it)")
needs_distcc = pytest.mark.skipif(
    not (shutil.which("distcc") and shutil.which("distccd")),
    reason="distcc is not installed (./setup.sh installs it; Debian: apt-get install distcc)")
needs_ccache = pytest.mark.skipif(
    not shutil.which("ccache"),
    reason="ccache is not installed (./setup.sh installs it; Debian: apt-get install ccache)")


def elf(build_dir, app="cxx_smoke"):
    found = list(Path(build_dir).glob("*/app-%s/%s.elf" % (app, app)))
    assert len(found) == 1, found
    return found[0]


# ---------------------------------------------------------------- distccd on loopback

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def children(pid):
    """The processes whose parent is pid (distccd's preforked workers)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def wait_gone(pids, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pids = [p for p in pids if Path("/proc/%d" % p).exists()]
        if not pids:
            return []
        time.sleep(0.1)
    return pids


class Distccd:
    """A distccd listening on 127.0.0.1 only, allowing only 127.0.0.1."""

    def __init__(self):
        # Run as root, distccd drops to its own user, which must write its log and pid
        # file: a directory of its own (pytest's tmp_path is private to root).
        self.dir = Path(tempfile.mkdtemp(prefix="corev-distccd-"))
        self.dir.chmod(0o777)
        self.log, self.pid_file = self.dir / "distccd.log", self.dir / "distccd.pid"
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["distccd", "--daemon", "--no-detach", "--listen", "127.0.0.1", "--allow",
             "127.0.0.1", "--port", str(self.port), "--jobs", "2", "--log-level", "info",
             "--log-file", str(self.log), "--pid-file", str(self.pid_file),
             # Any compiler, not just the whitelist's: acceptable on loopback only.
             "--enable-tcp-insecure"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)

    def wait_ready(self, seconds=10):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            if self.pid_file.exists() and "listening on" in self.log_text():
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", self.port)) == 0:
                        return
            time.sleep(0.1)
        pytest.fail("distccd did not start (status %s): %s" % (self.proc.poll(), self.log_text()))

    def log_text(self):
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def environment(self, tmp_path):
        """What a user sets for this one host: 2 jobs, no silent local fallback; distcc's
        own state (locks, ~/.distcc) in tmp_path."""
        (tmp_path / "distcc-state").mkdir(exist_ok=True)
        return dict(os.environ, DISTCC_HOSTS="127.0.0.1:%d/2" % self.port,
                    DISTCC_FALLBACK="0", DISTCC_DIR=str(tmp_path / "distcc-state"))

    def compiled(self):
        """The sources the daemon compiled, from its COMPILE_OK job summaries."""
        return re.findall(r"COMPILE_OK .* (\S+)$", self.log_text(), re.M)

    def stop(self):
        """Kill the pid of its pid file, then wait for it and its workers."""
        pid = self.proc.pid
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            pass
        workers = children(pid)
        for target in {pid, self.proc.pid}:
            try:
                os.kill(target, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        left = wait_gone(workers, 10)
        for worker in left:
            os.kill(worker, signal.SIGKILL)
        assert not wait_gone(left, 5), "distccd workers still running: %s" % left
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def distccd():
    daemon = Distccd()
    try:
        daemon.wait_ready()
        yield daemon
    finally:
        daemon.stop()


@needs_distcc
def test_distcc_compiles_on_the_daemon_and_gives_the_same_elf(distccd, tmp_path):
    options = [APP, TOOLCHAIN, "lto=0"]
    result = scons(*options, "launcher=distcc", build_dir=tmp_path / "distcc", cache=False,
                   env=distccd.environment(tmp_path))
    assert result.returncode == 0, result.stdout
    # The C and C++ sources went to the daemon (crt0.S, compiled with -x
    # assembler-with-cpp, stays local: distcc does not distribute -x).
    compiled = distccd.compiled()
    assert sorted(os.path.basename(s) for s in compiled) == \
        ["board.c", "libc_picolibc.c", "main.cpp"], distccd.log_text()

    local = scons(*options, build_dir=tmp_path / "local", cache=False)
    assert local.returncode == 0, local.stdout
    assert elf(tmp_path / "distcc").read_bytes() == elf(tmp_path / "local").read_bytes()

    # The launcher is no part of the signatures: without it, or with another, nothing
    # is out of date (scons -q runs nothing and exits 0 only then).
    others = [["launcher=ccache"]] if shutil.which("ccache") else []
    for launcher in [[]] + others + [["launcher=distcc"]]:
        check = scons("-q", *options, *launcher, build_dir=tmp_path / "distcc", cache=False,
                      env=distccd.environment(tmp_path))
        assert check.returncode == 0, (launcher, check.stdout)
    assert len(distccd.compiled()) == 3


@needs_distcc
def test_distcc_builds_the_runner(et_root, distccd, tmp_path):
    options = [TOOLCHAIN, "board=qemu", "lto=0"]
    result = scons(*options, "launcher=distcc", build_dir=tmp_path / "distcc", cache=False,
                   env=distccd.environment(tmp_path))
    assert result.returncode == 0, result.stdout
    compiled = [os.path.basename(s) for s in distccd.compiled()]
    local_compiles = re.findall(r"\] Compiling (\S+)$", result.stdout, re.M)
    # Every C and C++ compile of the build ran on the daemon.
    assert len(compiled) == len(local_compiles) > 20, (compiled, result.stdout)
    assert "method.cpp" in compiled and "op_add.cpp" in compiled

    local = scons(*options, build_dir=tmp_path / "local")
    assert local.returncode == 0, local.stdout
    elfs = [list((tmp_path / d).glob("*/add/executor_runner.elf")) for d in ("distcc", "local")]
    assert len(elfs[0]) == len(elfs[1]) == 1, elfs
    assert elfs[0][0].read_bytes() == elfs[1][0].read_bytes()


# ---------------------------------------------------------------- ccache

def ccache_stats(ccache_dir):
    out = subprocess.run(["ccache", "--print-stats"], capture_output=True, text=True, check=True,
                         env=dict(os.environ, CCACHE_DIR=str(ccache_dir))).stdout
    stats = dict(line.split("\t") for line in out.splitlines() if "\t" in line)
    return {key: int(value) for key, value in stats.items() if value.isdigit()}


@needs_ccache
def test_ccache_hits_in_a_second_build_directory(tmp_path):
    ccache_dir = tmp_path / "ccache"
    env = dict(os.environ, CCACHE_DIR=str(ccache_dir))   # reaches ccache through scons
    for name in ("one", "two"):
        result = scons(APP, "launcher=ccache", build_dir=tmp_path / name, cache=False, env=env)
        assert result.returncode == 0, result.stdout
        compiles = len(re.findall(r"\] (Compiling|Assembling) ", result.stdout))
        assert compiles == 4, result.stdout
        stats = ccache_stats(ccache_dir)
        hits = stats["direct_cache_hit"] + stats["preprocessed_cache_hit"]
        if name == "one":
            assert (hits, stats["cache_miss"]) == (0, 4), stats
    # The second build found every object in ccache.
    assert (hits, stats["cache_miss"]) == (4, 4), stats
    assert elf(tmp_path / "one").read_bytes() == elf(tmp_path / "two").read_bytes()


@needs_ccache
def test_compile_commands_name_the_compiler_not_the_launcher(tmp_path):
    top = copy_worktree(tmp_path / "tree")
    env = dict(os.environ, CCACHE_DIR=str(tmp_path / "ccache"))
    result = scons(APP, "launcher=ccache", "compiledb=1", "verbose=1", build_dir="build",
                   cwd=top, cache=False, env=env)
    assert result.returncode == 0, result.stdout
    assert re.search(r"^ccache \S*g\+\+ .* tests/fixtures/cxx_smoke/main\.cpp$", result.stdout,
                     re.M), result.stdout
    commands = [e["command"] for e in json.loads((top / "compile_commands.json").read_text())]
    assert len(commands) == 4 and all(re.match(r"\S*riscv\S*-g(cc|\+\+) ", c) for c in commands), \
        commands


# ---------------------------------------------------------------- errors

def test_launcher_not_installed(tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    result = scons(APP, "launcher=no-such-launcher", build_dir=tmp_path / "build")
    assert_clean_failure(result, "launcher=no-such-launcher", "not installed")
    assert not (tmp_path / "build").exists()
    # A known launcher missing from PATH: how to install it.
    result = scons(APP, "launcher=distcc", build_dir=tmp_path / "build",
                   env=dict(os.environ, PATH=str(empty)))
    assert_clean_failure(result, "launcher=distcc", "distcc is not installed",
                         "apt-get install distcc")


def test_launcher_with_a_dollar_is_refused(tmp_path):
    result = scons(APP, "launcher=ccache $HOME", build_dir=tmp_path / "build")
    assert_clean_failure(result, "Invalid value", "launcher", "'$'")
