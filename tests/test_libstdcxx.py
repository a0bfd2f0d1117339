"""libstdc++ for the bare-metal RISC-V toolchain (site_scons/etcorev/toolchain/libstdcxx.py).

The library is built once into the per-user cache and reused, so only the
first run on a machine pays for the build (about a minute on 2 cores).
"""

import os
import shutil
import subprocess

import pytest

from etcorev.scons import usercache
from etcorev.toolchain import buildsteps, libstdcxx
from etcorev.toolchain.libstdcxx import LibstdcxxError

pytestmark = pytest.mark.quick   # the edit-build loop's tier (README)

PREFIX = "riscv64-unknown-elf-"
GXX = PREFIX + "g++"
QEMU = "qemu-system-riscv32"

# picolibc.ld needs to be told where memory is; QEMU's virt board has RAM at
# 0x80000000 and `-bios none -kernel x.elf` loads the ELF there.
MEMORY = [
    "-Wl,--defsym=__flash=0x80000000",
    "-Wl,--defsym=__flash_size=0x200000",
    "-Wl,--defsym=__ram=0x80200000",
    "-Wl,--defsym=__ram_size=0x200000",
]
COMMON = [
    "-std=c++17", "-Os", "--specs=picolibc.specs", "--oslib=semihost",
    "--crt0=semihost", "-fno-exceptions", "-fno-rtti",
]
# (compile flags, multilib) for the two cores we build for; GCC 12 needs
# -misa-spec=2.2 for rv32imc to select the rv32im multilib.
TARGETS = {
    "rv32imc": (["-march=rv32imc", "-mabi=ilp32", "-misa-spec=2.2"], "rv32im/ilp32"),
    "rv32imfc": (["-march=rv32imfc", "-mabi=ilp32f", "-misa-spec=2.2"], "rv32imf/ilp32f"),
}

needs_toolchain = pytest.mark.skipif(
    shutil.which(GXX) is None,
    reason=f"{GXX} not installed (Debian: gcc-riscv64-unknown-elf)",
)
needs_source = pytest.mark.skipif(
    libstdcxx.find_gcc_source() is None
    or not libstdcxx.find_gcc_source().is_file(),
    reason="gcc source tarball missing (Debian: apt-get install gcc-12-source)",
)
needs_qemu = pytest.mark.skipif(
    shutil.which(QEMU) is None, reason=f"{QEMU} not installed (Debian: qemu-system-misc)"
)

PROGRAM = r"""
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct Shape {
    virtual ~Shape() = default;
    virtual int area() const = 0;
};
struct Square : Shape {
    explicit Square(int s) : s_(s) {}
    int area() const override { return s_ * s_; }
    int s_;
};
struct Rect : Shape {
    Rect(int w, int h) : w_(w), h_(h) {}
    int area() const override { return w_ * h_; }
    int w_, h_;
};

static int g_ctor_ran = 0;
struct GlobalInit {
    GlobalInit() { g_ctor_ran = 42; }
};
static GlobalInit g_init;

static std::optional<int> first_even(const std::vector<int>& v) {
    for (int x : v)
        if (x % 2 == 0) return x;
    return std::nullopt;
}

__attribute__((noinline)) static int area_of(const Shape& s) { return s.area(); }

int main() {
    std::vector<int> v;
    for (int i = 10; i >= 1; --i) v.push_back(i * 3);
    std::sort(v.begin(), v.end());
    int sum = 0;
    for (int x : v) sum += x;
    std::optional<int> even = first_even(v);
    std::optional<int> none = first_even(std::vector<int>{1, 3});
    std::string_view sv = "hello, libstdc++";
    std::string s(sv.substr(0, 5));
    s += " world";
    Square sq(7);
    volatile int w = 3;  // keeps the calls from being folded away
    Rect rc(w, 5);
    int areas = area_of(sq) + area_of(rc);
    std::printf("ctor=%d sum=%d first=%d even=%d none=%d s=%s len=%u areas=%d\n",
                g_ctor_ran, sum, v.front(), even.value_or(-1), none.value_or(-1),
                s.c_str(), (unsigned)sv.size(), areas);
    return 3;
}
"""
EXPECTED = "ctor=42 sum=165 first=3 even=6 none=-1 s=hello world len=16 areas=64"


@pytest.fixture(scope="module")
def install():
    # Cached: a no-op (a few stat calls) unless this machine never built it.
    return libstdcxx.ensure_libstdcxx(PREFIX, libstdcxx.DEFAULT_MULTILIBS)


def _build(install, tmp_path, target):
    arch_flags, multilib = TARGETS[target]
    f = libstdcxx.flags(install, multilib)
    src = tmp_path / "prog.cpp"
    src.write_text(PROGRAM)
    elf = tmp_path / f"prog-{target}.elf"
    cmd = ([GXX] + arch_flags + COMMON + f["CPPFLAGS"]
           + ["-L" + d for d in f["LIBPATH"]] + [str(src), "-o", str(elf)] + MEMORY)
    res = subprocess.run(cmd, capture_output=True, text=True)
    assert res.returncode == 0, f"{' '.join(cmd)}\n{res.stdout}{res.stderr}"
    return elf


def _run_qemu(elf):
    # Semihosting console output goes to QEMU's stderr; the program's exit
    # status becomes QEMU's.
    return subprocess.run(
        [QEMU, "-M", "virt", "-bios", "none", "-kernel", str(elf), "-nographic",
         "-semihosting-config", "enable=on,target=native", "-m", "64M"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )


@needs_toolchain
def test_multilib_names():
    for arch_flags, multilib in TARGETS.values():
        out = subprocess.run([PREFIX + "gcc"] + arch_flags + ["-print-multi-directory"],
                             capture_output=True, text=True, check=True).stdout.strip()
        assert out == multilib


@needs_toolchain
@needs_source
def test_install_layout(install):
    for ml in libstdcxx.DEFAULT_MULTILIBS:
        f = libstdcxx.flags(install, ml)
        generic, per_ml = (p[2:] for p in f["CPPFLAGS"])
        assert os.path.isfile(os.path.join(generic, "vector"))
        assert os.path.isfile(os.path.join(per_ml, "bits", "c++config.h"))
        assert os.path.isfile(os.path.join(f["LIBPATH"][0], "libstdc++.a"))
        assert os.path.isfile(os.path.join(f["LIBPATH"][0], "libsupc++.a"))


@needs_toolchain
@needs_source
@needs_qemu
@pytest.mark.parametrize("target", sorted(TARGETS))
def test_cxx17_program_runs_in_qemu(install, tmp_path, target):
    elf = _build(install, tmp_path, target)
    res = _run_qemu(elf)
    assert EXPECTED in res.stderr, res.stdout + res.stderr
    assert res.returncode == 3, res.stdout + res.stderr


@needs_toolchain
@needs_source
def test_second_call_runs_no_subprocess(install, monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError(f"ensure_libstdcxx ran a subprocess: {args!r}")

    for name in ("run", "Popen", "call", "check_call", "check_output"):
        monkeypatch.setattr(subprocess, name, boom)
    monkeypatch.setattr(os, "system", boom)
    monkeypatch.setattr(os, "posix_spawn", boom, raising=False)
    lines = []
    again = libstdcxx.ensure_libstdcxx(PREFIX, libstdcxx.DEFAULT_MULTILIBS,
                                       log=lines.append)
    assert again == install
    assert lines == []  # nothing to say when nothing is built


def test_missing_source_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("COREV_ET_CACHE", str(tmp_path / "cache"))
    with pytest.raises(LibstdcxxError, match=r"apt-get install gcc-12-source"):
        libstdcxx.ensure_libstdcxx(source=tmp_path / "gcc-12.2.0-dfsg.tar.xz")
    assert not (tmp_path / "cache").exists()


def test_cache_root(monkeypatch, tmp_path):
    monkeypatch.delenv("COREV_ET_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert usercache.cache_root() == tmp_path / "xdg" / "corev-et"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert usercache.cache_root() is None      # a home that does not exist is not made
    (tmp_path / "home").mkdir()
    assert usercache.cache_root() == tmp_path / "home" / ".cache" / "corev-et"
    monkeypatch.setenv("COREV_ET_CACHE", str(tmp_path / "mine"))
    assert usercache.cache_root() == tmp_path / "mine"


def test_cache_off_is_off_for_everyone(monkeypatch, tmp_path):
    """COREV_ET_CACHE=off switches the source index's cache off, and the toolchain
    builds, which need a home, say so instead of using a directory named 'off'."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COREV_ET_CACHE", "off")
    assert usercache.cache_root() is None
    with pytest.raises(LibstdcxxError, match="COREV_ET_CACHE=off"):
        libstdcxx.ensure_libstdcxx(PREFIX, libstdcxx.DEFAULT_MULTILIBS, log=lambda m: None)
    assert not (tmp_path / "off").exists()


def test_failed_step_names_log_and_tail(tmp_path):
    log = tmp_path / "build.log"
    log.write_text("")
    runner = buildsteps.Runner(log, "libstdc++")
    with pytest.raises(buildsteps.StepError) as info:
        runner.run("configuring rv32im/ilp32",
                   ["sh", "-c", "echo checking things; echo 'error: no cookie' >&2; exit 7"],
                   cwd=tmp_path)
    msg = str(info.value)
    assert str(log) in msg
    assert "exit status 7" in msg
    assert "error: no cookie" in msg
    assert "configuring rv32im/ilp32" in msg
