"""The executor runner's build options: embedding routes, external (XIP) model, backend
registration, alignment. Needs an ExecuTorch tree; runs in QEMU."""

import re
import shutil
import subprocess

import pytest

from sconsrun import REPO, scons

ADD = REPO / "examples" / "models" / "add.pte"
needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                                reason="qemu-system-riscv32 missing (./setup.sh installs it)")


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("runner")


def outputs(text):
    return re.findall(r"^Output \d+: .*$", text, re.M)


@needs_qemu
@pytest.mark.parametrize("embed", ["incbin", "xxd"])
def test_embedding_routes_run_the_model(et_root, build_dir, embed):
    result = scons("board=qemu", "model=%s" % ADD, "embed=%s" % embed, "run", build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    assert outputs(result.stdout) == ["Output 0: float32[5] 2,2,2,2,2"]


@pytest.mark.skipif(not shutil.which("xxd"), reason="xxd not installed")
def test_xxd_route_writes_what_xxd_writes(et_root, build_dir):
    result = scons("board=qemu", "model=%s" % ADD, "embed=xxd", build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    inc = next(build_dir.rglob("add/model.pte.inc"))
    expected = subprocess.run(["xxd", "-i"], input=ADD.read_bytes(), capture_output=True,
                              check=True).stdout.decode()
    assert inc.read_text() == expected


@needs_qemu
def test_backend_is_registered(et_root, build_dir):
    result = scons("board=qemu", "model=%s" % ADD, "run", build_dir=build_dir)
    assert "Backend: CoreVBackend" in result.stdout, result.stdout


@needs_qemu
def test_external_model_runs_from_its_region(et_root, build_dir, toolchain):
    result = scons("board=qemu", "toolchain=%s" % toolchain, "model=%s" % ADD,
                   "model_placement=external", "run", build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    assert outputs(result.stdout) == ["Output 0: float32[5] 2,2,2,2,2"]
    short = "corev" if "corev" in toolchain else "picolibc"
    variant = next(build_dir.glob("qemu-*-%s-xip" % short))
    # The model is not in the image: it comes as its own hex/bin for the model region.
    elf = (variant / "add" / "executor_runner.elf").read_bytes()
    assert ADD.read_bytes()[:64] not in elf
    model_hex = (variant / "add" / "executor_runner.model.hex").read_text()
    assert model_hex.startswith("@83000000")


def _run_qemu_with_model_region(elf, image, workdir):
    """The firmware on QEMU with image in its model region, as `scons run` starts it."""
    from etcorev import boards
    from etcorev.run import simulator
    model_bin = workdir / "region.bin"
    model_bin.write_bytes(image)
    argv = boards.load("qemu").run_command(str(elf), None, {}, str(workdir),
                                           model=[None, str(model_bin)])
    return simulator.run(argv, str(workdir), 60)


@needs_qemu
def test_a_model_region_that_does_not_hold_the_firmwares_model_is_refused(et_root, build_dir,
                                                                          tmp_path):
    """A model programmed apart from the firmware may be damaged, or another model: the
    runner checks the header's CRC-32 and that the firmware has every operator the model
    names, before Program::load, and reports a mismatch by number, which `scons run`
    names."""
    from etcorev import pte
    from etcorev.run import failures
    mul_add = REPO / "examples" / "models" / "mul_add.pte"
    for model in (ADD, mul_add):
        result = scons("board=qemu", "model=%s" % model, "model_placement=external",
                       build_dir=build_dir)
        assert result.returncode == 0, result.stdout
    variant = next(build_dir.glob("qemu-*-xip"))
    elf = variant / "add" / "executor_runner.elf"
    image = (variant / "add" / "executor_runner.model.bin").read_bytes()

    assert "Output 0: float32[5] 2,2,2,2,2" in _run_qemu_with_model_region(
        elf, image, tmp_path).output
    # One byte of the model flipped (in its operator arguments or weights, the byte
    # flips that gave wrong outputs with exit status 0): the sum does not match.
    for offset in (16 + 400, 16 + 900, len(image) - 3):
        damaged = bytearray(image)
        damaged[offset] ^= 0x10
        run = _run_qemu_with_model_region(elf, bytes(damaged), tmp_path)
        assert run.returncode != 0, run.output
        assert "Output" not in run.output, run.output
        assert "checksum does not match" in failures.describe(run.output), run.output
    # Another model's region, whole and correct: its operators are not all here.
    other = (variant / "mul_add" / "executor_runner.model.bin").read_bytes()
    run = _run_qemu_with_model_region(elf, other, tmp_path)
    assert run.returncode != 0, run.output
    why = failures.describe(run.output, operators=pte.read_pte(mul_add).operators)
    assert "operator this firmware does not have" in why, run.output
    assert "aten::mul.out" in why or "aten::sub.out" in why, why


@pytest.mark.parametrize("value", ["8", "24", "abc"])
def test_bad_model_alignment_is_refused(et_root, build_dir, value):
    result = scons("board=qemu", "model=%s" % ADD, "model_align=%s" % value, build_dir=build_dir)
    assert result.returncode != 0
    assert "Invalid value '%s' for model_align" % value in result.stdout, result.stdout
    assert "power of two" in result.stdout
    assert "Traceback" not in result.stdout


def test_model_alignment_is_applied(et_root, build_dir):
    result = scons("board=cv32e40p", "model=%s" % ADD, "model_align=256", build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    elf = next(build_dir.glob("cv32e40p-*/add/executor_runner.elf"))
    nm = shutil.which("riscv64-unknown-elf-nm") or shutil.which("riscv32-corev-elf-nm")
    symbols = subprocess.run([nm, str(elf)], capture_output=True, text=True, check=True).stdout
    address = int(re.search(r"^([0-9a-f]+) \w model_pte$", symbols, re.M).group(1), 16)
    assert address % 256 == 0


def test_install_layout_and_clean(et_root, build_dir, tmp_path):
    install_dir = tmp_path / "install"
    result = scons("board=cv32e40p", "model=%s" % ADD, "install_dir=%s" % install_dir, "install",
                   build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    names = sorted(p.name for p in install_dir.iterdir())
    assert names == ["executor_runner.elf", "executor_runner.hex", "executor_runner.map"]
    variant_hex = next(build_dir.glob("cv32e40p-*/add/executor_runner.hex"))
    assert (install_dir / "executor_runner.hex").read_bytes() == variant_hex.read_bytes()
    result = scons("-c", "board=cv32e40p", "model=%s" % ADD, "install_dir=%s" % install_dir,
                   "install", build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    assert not list(install_dir.glob("executor_runner.*"))


DECIMAL = REPO / "tests" / "fixtures" / "decimal"


@needs_qemu
def test_the_console_prints_every_u64_as_python_does(tmp_path):
    """board_put_u64 (every count, size and integer output the runner prints) at the
    edges of its 32-bit and 64-bit routes."""
    values = [int(v.rstrip("ul"), 0) for v in re.findall(
        r"\b\d+u?l{0,2}\b", (DECIMAL / "main.c").read_text().split("values[] = {")[1].split("};")[0])]
    result = scons("board=qemu", "app=%s" % DECIMAL, "run", build_dir=tmp_path)
    assert result.returncode == 0, result.stdout
    assert re.findall(r"^u64 (\d+)$", result.stdout, re.M) == [str(v) for v in values]
    assert len(values) == 19 and max(values) == 2 ** 64 - 1


def test_a_release_image_links_no_printf_for_the_log(et_root, tmp_path):
    """ExecuTorch's PAL table keeps et_pal_emit_log_message in every image, logging=Off
    too: it writes through the board's console, and the C library's printf (3 KB of
    add.pte's text, with the stdio it brings) is not linked for it."""
    release = scons("board=qemu", "model=%s" % ADD, build_dir=tmp_path)
    assert release.returncode == 0, release.stdout
    [elf] = tmp_path.glob("qemu-release-logoff-*/add/executor_runner.elf")
    symbols = subprocess.run(["riscv64-unknown-elf-nm", str(elf)], stdout=subprocess.PIPE,
                             text=True, check=True).stdout.split()
    assert "et_pal_emit_log_message" in symbols
    assert not {"printf", "iprintf", "_vfprintf_r", "_vfiprintf_r"} & set(symbols)


UNPLANNED_IO = REPO / "tests" / "models" / "memory" / "unplanned_io"


@needs_qemu
def test_inputs_and_outputs_the_program_does_not_plan_are_given_memory(et_root, build_dir):
    """Exported with MemoryPlanningPass(alloc_graph_input=False, alloc_graph_output=False)
    (tests/models/memory/export.py), the program leaves its inputs' and outputs' memory
    to the caller, as ExecuTorch's own runner provides it. The runner failed with
    "input not memory-planned" (and with unplanned outputs alone, its kernels stored
    through a null pointer: a trap on QEMU, the vector table on the testbench); it now
    takes that memory from the method pool, and the outputs match eager PyTorch's
    (unplanned_io.expected.json)."""
    result = scons("board=qemu", "model=%s.pte" % UNPLANNED_IO, "run", build_dir=build_dir)
    # `scons run` compares the printed outputs with the expected ones: a difference fails
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Exit status: 0" in result.stdout, result.stdout[-3000:]
    assert len(outputs(result.stdout)) == 3, result.stdout[-3000:]


@needs_qemu
def test_a_bundled_program_with_unplanned_inputs_passes_its_test_cases(et_root, build_dir):
    """load_bundled_input points an unplanned input at the test case's data inside the
    bundled program; the runner copies it into the input's own buffer first."""
    result = scons("board=qemu", "model=%s.bpte" % UNPLANNED_IO, "run", build_dir=build_dir)
    assert result.returncode == 0, result.stdout[-3000:]
    assert re.findall(r"^Test case (\d): PASS", result.stdout, re.M) == ["0", "1"], \
        result.stdout[-3000:]
