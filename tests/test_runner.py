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


def test_a_kernels_failure_without_its_log_points_at_a_logging_build():
    """A kernel that refuses its arguments fails execute (InvalidArgument) or aborts
    (ET_CHECK, a dtype not selected); without logging the firmware cannot say which or
    why, so the failure names the build that can. With the log, the log says it."""
    from etcorev.run import failures
    failed = "Cycles method load: 9000\nError: execute failed: 0x12\n"
    why = failures.describe(failed)
    assert "execute failed" in why and "0x12" in why and "logging=Info" in why, why
    aborted = "Cycles method load: 9000\nExecuTorch abort\n"
    why = failures.describe(aborted)
    assert "ExecuTorch aborted" in why and "logging=Info" in why, why
    logged = "E 12 op_mul.cpp:31] Check failed (tensors_have_same_dim_order(a, b, out)): \n"
    for text in (logged + failed, logged + aborted):
        assert "logging=Info" not in failures.describe(text), text


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


# ExecuTorch's log message formats (runtime/platform/log.cpp's vsnprintf is
# pal/log_format.c's in every logging build): (format, arguments as (C type, value)).
LOG_FORMATS = [
    ("dtype '%hhd' not selected for operator %s", [("int8_t", 7), ("char*", "fmod.Tensor_out")]),
    ("%hhd %hhu %hd %hu", [("int", 300), ("int", 511), ("int", -40000), ("int", 70000)]),
    ("%lld %llu %llx %lld", [("long long", -2 ** 63), ("unsigned long long", 2 ** 64 - 1),
                             ("unsigned long long", 0xdeadbeefcafe), ("long long", 123456789012345)]),
    ("%zu %zd %zx %ld %lu", [("size_t", 2 ** 32 - 1), ("ssize_t", -5), ("size_t", 255),
                             ("long", -2 ** 31), ("unsigned long", 2 ** 32 - 1)]),
    ("%5d|%-5d|%05d|%+d|% d|%.3d|%8.3d|%-8.3d|", [("int", 42), ("int", 42), ("int", -42),
                                                 ("int", 42), ("int", 42), ("int", 7),
                                                 ("int", -7), ("int", 7)]),
    ("%x %X %#x %#X %o %u %i", [("int", 255), ("int", 255), ("int", 255), ("int", 48879),
                                ("int", 8), ("unsigned", 2 ** 32 - 1), ("int", -3)]),
    ("%*d|%-*d|%.*s|%s|%10s|%-6s|%.2s|%c|%3c|%%", [("int", 6), ("int", 1), ("int", 6),
                                                 ("int", 2), ("int", 3), ("char*", "abcdef"),
                                                 ("char*", "hi"), ("char*", "hi"),
                                                 ("char*", "hi"), ("char*", "hello"),
                                                 ("char", "x"), ("char", "y")]),
    ("%f %f %.2f %.0f %10.3f %-9.3f| %+f %010.2f", [("double", 0.0), ("double", -2.25),
                                                   ("double", 3.14159), ("double", 3.0),
                                                   ("double", -1.25), ("double", 1.25),
                                                   ("double", 1.0), ("double", -3.5)]),
    ("%e %E %.0e %.3e %e %e %g %g %g %g %G %.3g %g", [
        ("double", 0.0), ("double", 12345.678), ("double", 5e10), ("double", -0.00012345),
        ("double", 1e-300), ("double", 1.5e300), ("double", 100000.0), ("double", 1e6),
        ("double", 0.0001), ("double", 1e-5), ("double", 1e-10), ("double", 3.14159),
        ("double", -2.5)]),
]
WIDTHS = {"hh": 8, "h": 16}


def c_argument(ctype, value):
    if ctype == "char*":
        return '"%s"' % value
    if ctype == "char":
        return "'%s'" % value
    if ctype == "double":
        return repr(value)
    if value == -2 ** 63:
        return "(%s)(%dLL - 1)" % (ctype, value + 1)      # no literal of it in C
    return "(%s)%dLL" % (ctype, value) if value < 0 or ctype != "unsigned long long" \
        else "(%s)%dULL" % (ctype, value)


def python_formatted(form, arguments):
    """What C's vsnprintf writes, by Python's % (which takes no length modifiers: the
    value is cut to hh's or h's width first, as C's conversion does)."""
    values = [value for _, value in arguments]
    position = 0
    pieces = re.split(r"(%[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|z|j|t)?[diouxXcsfeEgG%])",
                      form)
    out = []
    for piece in pieces:
        match = re.match(r"%([-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?)(hh|h|ll|l|z|j|t)?([diouxXcsfeEgG%])$",
                         piece)
        if not match:
            out.append(piece)
            continue
        spec, length, conversion = match.groups()
        if conversion == "%":
            out.append("%")
            continue
        stars = spec.count("*")
        taken = values[position:position + stars + 1]
        position += stars + 1
        if length in WIDTHS:
            bits = WIDTHS[length]
            taken[-1] &= (1 << bits) - 1
            if conversion in "di" and taken[-1] >= 1 << (bits - 1):
                taken[-1] -= 1 << bits
        if conversion in "uxXo" and taken[-1] < 0:
            taken[-1] += 1 << (64 if length in ("ll", "j") else 32)
        out.append(("%" + spec + ("d" if conversion == "u" else conversion)) % tuple(taken))
    return "".join(out)


@needs_qemu
def test_log_messages_format_as_c_does(tmp_path):
    """ExecuTorch's log messages use hh, ll and z throughout ("%" PRId8 in every
    "Unhandled dtype"); newlib-nano's vsnprintf (CORE-V GCC's) knows none of them, so a
    logging build printed garbage and trapped in memchr on the next %s while reporting a
    kernel error. pal/log_format.c formats them in every logging build: on the target,
    each format as Python's % writes it."""
    app = tmp_path / "app"
    app.mkdir()
    calls = "\n".join(
        '  show("%s"%s);' % (form, "".join(", " + c_argument(*a) for a in arguments))
        for form, arguments in LOG_FORMATS)
    (app / "main.c").write_text(
        '#include <stdarg.h>\n#include <stddef.h>\n#include <stdint.h>\n'
        '#include <sys/types.h>\n#include "board.h"\n'
        '#include "%s"\n'
        "static void show(const char* format, ...) {\n"
        "  char line[200];\n  va_list args;\n  va_start(args, format);\n"
        "  corev_log_vsnprintf(line, sizeof line, format, args);\n  va_end(args);\n"
        '  board_puts("log|");\n  board_puts(line);\n  board_puts("|\\n");\n}\n'
        "int main(void) {\n%s\n  return 0;\n}\n" % (REPO / "pal" / "log_format.c", calls))
    result = scons("board=qemu", "app=%s" % app, "run", build_dir=tmp_path / "build")
    assert result.returncode == 0, result.stdout[-3000:]
    printed = re.findall(r"^log\|(.*)\|$", result.stdout, re.M)
    assert printed == [python_formatted(form, arguments) for form, arguments in LOG_FORMATS]


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
