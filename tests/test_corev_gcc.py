"""CORE-V GCC built from Debian's sources (site_scons/etcorev/toolchain/corev_gcc.py): the source
patches it needs, that only a complete install counts, how the build finds it, and, when
it is there, that it is the toolchain the application note's users have (prefix, newlib,
multilibs rv32imc/ilp32 and rv32imfc/ilp32f, libstdc++ with C++11 <cmath>)."""

import subprocess
import sys
import textwrap

import pytest

from etcorev.toolchain import corev_gcc
from sconsrun import REPO

pytestmark = pytest.mark.quick   # the edit-build loop's tier (README)

CMATH = textwrap.dedent("""\
    #ifdef _GLIBCXX_USE_C99_MATH_TR1
      using ::acosh;
      using ::acoshf;
      using ::acoshl;
      using ::nexttoward;
      using ::nexttowardf;
      using ::nexttowardl;
      using ::fmal;
      using ::fma;
      using ::lgamma;
    #endif
    """)


def test_cmath_keeps_out_what_newlib_does_not_declare(tmp_path):
    path = tmp_path / "cmath"
    path.write_text(CMATH)
    corev_gcc._patch_cmath(path)
    kept = [l.strip() for l in path.read_text().splitlines() if l.strip().startswith("using")]
    assert kept == ["using ::acosh;", "using ::acoshf;", "using ::fma;", "using ::lgamma;"]
    corev_gcc._patch_cmath(path)                      # idempotent
    assert [l.strip() for l in path.read_text().splitlines()
            if l.strip().startswith("using")] == kept


def test_tr1_check_answers_yes(tmp_path):
    path = tmp_path / "configure"
    path.write_text("glibcxx_cv_c99_math_tr1=no\n...%s...\nif x; then\n"
                    "  glibcxx_cv_c99_math_tr1=yes\nelse\n  glibcxx_cv_c99_math_tr1=no\nfi\n"
                    % corev_gcc.TR1_CHECK)
    corev_gcc._patch_tr1_check(path)
    text = path.read_text()
    assert text.startswith("glibcxx_cv_c99_math_tr1=no\n")      # before the check: as it was
    assert "else\n  glibcxx_cv_c99_math_tr1=yes" in text
    (tmp_path / "other").write_text("nothing to patch\n")
    with pytest.raises(corev_gcc.ToolchainError, match="no C99 TR1 math check"):
        corev_gcc._patch_tr1_check(tmp_path / "other")


def test_only_a_complete_install_counts(tmp_path, monkeypatch):
    """An interrupted build leaves bin/riscv32-corev-elf-gcc but no marker: not used."""
    monkeypatch.setenv("COREV_ET_CACHE", str(tmp_path))
    install = tmp_path / "corev-gcc" / "gcc-12.2.0-0123456789ab"
    (install / "bin").mkdir(parents=True)
    (install / "bin" / "riscv32-corev-elf-gcc").write_text("#!/bin/sh\n")
    assert corev_gcc.installed_prefix() is None
    (install / ".complete").write_text("{}\n")
    assert corev_gcc.installed_prefix() == str(install / "bin" / "riscv32-corev-elf-")
    monkeypatch.setenv("COREV_ET_CACHE", "off")
    assert corev_gcc.installed_prefix() is None


def test_missing_sources_say_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("COREV_ET_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("COREV_ET_NEWLIB_SOURCE", str(tmp_path / "newlib-3.3.0.tar.xz"))
    result = subprocess.run([sys.executable, str(REPO / "site_scons/etcorev/toolchain/corev_gcc.py")],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "newlib-source" in result.stderr and "apt-get install" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "cache" / "corev-gcc").exists()


@pytest.fixture(scope="module")
def prefix():
    found = corev_gcc.installed_prefix()
    if found is None:
        pytest.skip("CORE-V GCC is not built (./setup.sh --corev-gcc)")
    return found


def test_toolchain_is_what_corev_gcc_users_have(prefix):
    assert prefix.endswith("/bin/riscv32-corev-elf-")
    machine = subprocess.run([prefix + "gcc", "-dumpmachine"], capture_output=True,
                             text=True, check=True).stdout.strip()
    assert machine == "riscv32-corev-elf"
    multilibs = subprocess.run([prefix + "gcc", "-print-multi-lib"], capture_output=True,
                               text=True, check=True).stdout.split()
    assert ".;" in multilibs and "rv32imfc/ilp32f;@march=rv32imfc@mabi=ilp32f" in multilibs
    assert corev_gcc.verify(prefix) == []     # C++ with <cmath>, <vector> for both multilibs
