"""The firmware pipeline without ExecuTorch: cross compile, our startup code and linker
script, hex, size check, and running in QEMU."""

import shutil
import subprocess

import pytest

from sconsrun import scons

pytestmark = pytest.mark.skipif(
    not shutil.which("riscv64-unknown-elf-gcc") and not shutil.which("riscv32-corev-elf-gcc"),
    reason="no RISC-V cross compiler (./setup.sh installs it)")
needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                                reason="qemu-system-riscv32 missing (./setup.sh installs it)")


def objcopy(output_format, elf, out):
    """GNU objcopy (binutils 2.40 in both toolchains): the reference for our ELF outputs."""
    tool = shutil.which("riscv64-unknown-elf-objcopy") or shutil.which("riscv32-corev-elf-objcopy")
    subprocess.run([tool, "-O", output_format, str(elf), str(out)], check=True)
    return out.read_bytes()


def only_variant(build_dir, prefix):
    """The one variant directory under build_dir whose name starts with prefix."""
    [variant] = [p for p in build_dir.iterdir() if p.is_dir() and p.name.startswith(prefix)]
    return variant


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("pipeline")


@needs_qemu
@pytest.mark.quick              # the quick tier's QEMU run: a bare-metal C++ program
def test_cxx_fixture_runs_in_qemu(build_dir, toolchain):
    result = scons("board=qemu", "toolchain=%s" % toolchain, "app=tests/fixtures/cxx_smoke",
                   "run", build_dir=build_dir)
    assert "constructor: 42" in result.stdout
    assert "vector sum: 30" in result.stdout
    assert "area: 2.25" in result.stdout
    assert "cycles counted: yes" in result.stdout
    assert result.returncode == 0, result.stdout
    assert "Exit status: 0" in result.stdout
    assert "Traceback" not in result.stdout


def test_cxx_fixture_links_for_cv32e40p(build_dir, toolchain):
    result = scons("board=cv32e40p", "toolchain=%s" % toolchain, "app=tests/fixtures/cxx_smoke",
                   build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    short = "corev" if "corev" in toolchain else "picolibc"
    variant = build_dir / ("cv32e40p-release-logoff-rv32imc-" + short) / "app-cxx_smoke"
    hex_text = (variant / "cxx_smoke.hex").read_text()
    # The testbench boots at 0x80 with the vector table at 0.
    assert hex_text.startswith("@00000000")
    for name in ("cxx_smoke.elf", "cxx_smoke.map", "cxx_smoke.size.txt"):
        assert (variant / name).is_file(), name
    # The linker script and startup objects: once per variant, shared by its firmwares.
    assert (variant.parent / "link.ld").is_file()
    assert (variant.parent / "startup" / "crt0.o").is_file()


def test_hex_equals_objcopy(tmp_path):
    result = scons("board=cv32e40p", "app=tests/fixtures/cxx_smoke", build_dir=tmp_path)
    assert result.returncode == 0, result.stdout
    variant = only_variant(tmp_path, "cv32e40p-release-logoff-rv32imc-") / "app-cxx_smoke"
    reference = objcopy("verilog", variant / "cxx_smoke.elf", tmp_path / "objcopy.hex")
    assert (variant / "cxx_smoke.hex").read_bytes() == reference


@needs_qemu
def test_registration_dropped_without_whole_archive(tmp_path, toolchain):
    result = scons("board=qemu", "toolchain=%s" % toolchain, "app=tests/fixtures/whole_archive",
                   "run", build_dir=tmp_path)
    assert "registered: 0" in result.stdout, result.stdout
    # The program returns 3 here: scons run ends with the program's own status.
    assert result.returncode == 3
    assert "the program exited with status 3" in result.stdout


@needs_qemu
def test_registration_kept_with_whole_archive(tmp_path, toolchain):
    result = scons("board=qemu", "toolchain=%s" % toolchain, "app=tests/fixtures/whole_archive",
                   "app_whole_archive=1", "run",
                   build_dir=tmp_path)
    assert "registered: 1" in result.stdout, result.stdout
    assert result.returncode == 0


@pytest.mark.parametrize("board", ["cv32e40p", "qemu"])
def test_ram_overflow_fails_with_size_message(tmp_path, board):
    result = scons("board=%s" % board, "app=tests/fixtures/overflow", build_dir=tmp_path)
    assert result.returncode != 0
    assert "does not fit" in result.stdout and "overflows by" in result.stdout, result.stdout
    assert "Traceback" not in result.stdout
    # No hex is made from an image that does not fit.
    assert not list(tmp_path.rglob("overflow.hex"))


@needs_qemu
def test_cxx_fixture_runs_with_the_fpu(tmp_path, toolchain):
    """isa=rv32imfc: the ilp32f libraries, and startup switches the FPU on."""
    result = scons("board=qemu", "toolchain=%s" % toolchain, "isa=rv32imfc",
                   "app=tests/fixtures/cxx_smoke", "run",
                   build_dir=tmp_path)
    assert "area: 2.25" in result.stdout, result.stdout
    assert result.returncode == 0


def test_intel_hex_and_binary_outputs(tmp_path):
    result = scons("board=cv32e40p", "app=tests/fixtures/cxx_smoke", "outputs=ihex,bin",
                   build_dir=tmp_path)
    assert result.returncode == 0, result.stdout
    variant = only_variant(tmp_path, "cv32e40p-release-logoff-rv32imc-") / "app-cxx_smoke"
    reference = objcopy("binary", variant / "cxx_smoke.elf", tmp_path / "objcopy.bin")
    assert (variant / "cxx_smoke.bin").read_bytes() == reference
    from intelhex import IntelHex
    image = IntelHex(str(variant / "cxx_smoke.ihex"))
    image.padding = 0x00          # gaps: objcopy's binary has zeros there
    assert image.tobinstr(start=0, size=len(reference)) == reference


@needs_qemu
def test_the_boards_unrolled_routines_at_every_length_and_alignment(build_dir):
    """crt0.S's word clearing (four words a turn) and board_puts (four characters a
    turn), against the simple loops they replaced, at the lengths and alignments their
    loops treat apart."""
    result = scons("board=qemu", "app=tests/fixtures/board_routines", "run",
                   build_dir=build_dir)
    lines = result.stdout.splitlines()
    assert "zero_words wrong: 0" in lines, result.stdout[-3000:]
    expected = "puts:" + "".join("0123456789"[:length] + "|"
                                 for align in range(4) for length in range(10))
    assert expected in lines, result.stdout[-3000:]
    assert result.returncode == 0, result.stdout[-3000:]
