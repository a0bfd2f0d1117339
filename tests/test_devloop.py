"""The firmware developer's loop: cycles per operator (profile=1), the debugger
(`scons debug`), and traps reported on the console with a failure status."""

import json
import os
import shutil
import signal
import textwrap
from pathlib import Path

import pytest

from etcorev.run import profile
from sconsrun import NO_TESTBENCH, model_entry, scons, have_testbench

needs_compiler = pytest.mark.skipif(
    not shutil.which("riscv64-unknown-elf-gcc") and not shutil.which("riscv32-corev-elf-gcc"),
    reason="no RISC-V cross compiler (./setup.sh installs it)")
needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                                reason="qemu-system-riscv32 missing (./setup.sh installs it)")
needs_gdb = pytest.mark.skipif(not shutil.which("gdb-multiarch"),
                               reason="gdb-multiarch missing (./setup.sh installs it)")



def _processes_mentioning(text):
    """Pids of this machine's processes whose command line contains text (a path unique
    to one test), other than this one."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            pids.append(int(entry.name))
    return pids


def _kill(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# ---------------------------------------------------------------- profile=1

SAMPLE = textwrap.dedent("""\
    Cycles execute: 1100
    Profile op aten::convolution.out 2 600
    Profile op aten::relu.out 2 300
    Profile kernel aten::convolution.out 2 580
    Profile kernel aten::relu.out 2 250
    Profile instr FREE_CALL 1 10
    Profile phase Program::load 1 50
    Profile phase Method::init 1 70
    Profile phase Method::execute 2 1000
    """)


def test_profile_records_and_table():
    records = profile.parse(SAMPLE)
    assert [r.name for r in records if r.kind == "op"] == ["aten::convolution.out", "aten::relu.out"]
    assert profile.execute_total(records) == 1000
    table = profile.table(records, "instructions").splitlines()
    assert table[0] == "Method::execute: 1000 instructions in 2 runs"
    rows = {line.split()[0]: line for line in table[2:]}
    assert " 60.0%" in rows["aten::convolution.out"] and "580" in rows["aten::convolution.out"]
    assert " 30.0%" in rows["aten::relu.out"]
    assert "FREE_CALL" in rows and " 1.0%" in rows["FREE_CALL"]
    # What the instructions leave of execute has its own row: shares add up to 100 %.
    assert " 90 " in rows["(runtime"] and " 9.0%" in rows["(runtime"]
    assert "#" * 18 + "." * 12 in rows["aten::convolution.out"]
    assert any(line.startswith("Load: Program::load 50, Method::init 70") for line in table)


def test_profile_table_without_records():
    assert "no profile records" in profile.table([])


@pytest.fixture(scope="module")
def cnn_profile(et_root, tmp_path_factory):
    if not shutil.which("qemu-system-riscv32"):
        pytest.skip("qemu-system-riscv32 missing (./setup.sh installs it)")
    entry = model_entry("cnn")          # examples/models/cnn.pte and its cnn.json
    build_dir = tmp_path_factory.mktemp("profile")
    inputs = build_dir / "cnn-inputs.json"
    inputs.write_text(json.dumps(entry["inputs"]))
    result = scons("board=qemu", "model=%s" % entry["path"], "inputs=%s" % inputs, "profile=1",
                   "run", build_dir=build_dir)
    assert result.returncode == 0, result.stdout[-4000:]
    return entry, result.stdout, build_dir


@needs_compiler
def test_profile_names_every_operator_of_cnn(cnn_profile):
    entry, output, build_dir = cnn_profile
    records = profile.parse(output)
    ops = {r.name: r for r in records if r.kind == "op"}
    assert sorted(ops) == sorted(entry["operators"]), output[-3000:]
    assert all(r.calls >= 1 and r.cycles > 0 for r in ops.values())
    # Each kernel runs inside its operator's instruction.
    kernels = {r.name: r for r in records if r.kind == "kernel"}
    assert sorted(kernels) == sorted(ops)
    assert all(kernels[name].cycles < ops[name].cycles for name in ops)
    # The table `scons run` prints names them all, as the program does.
    table = output[output.index("Profile of cnn on qemu"):]
    for name in entry["operators"]:
        assert "\n%s " % name in table, name
    assert "instructions" in table.splitlines()[1]
    # The variant directory says it is a profiling build.
    assert any(p.name.endswith("-profile") for p in build_dir.iterdir() if p.is_dir())


@needs_compiler
def test_profile_operators_stay_within_execute(cnn_profile):
    _, output, _ = cnn_profile
    records = profile.parse(output)
    execute = profile.execute_total(records)
    assert execute is not None
    operators = sum(r.cycles for r in records if r.kind in ("op", "delegate", "instr"))
    assert 0.9 * execute < operators <= execute
    # The runner's own execute figure contains the runtime's Method::execute event.
    runner_execute = int(output.split("Cycles execute: ")[1].split()[0])
    assert execute <= runner_execute
    phases = {r.name for r in records if r.kind == "phase"}
    assert {"Program::load", "Program::load_method", "Method::init"} <= phases


# ---------------------------------------------------------------- scons debug

@needs_compiler
@needs_qemu
@needs_gdb
def test_debug_batch_backtrace_names_our_sources(et_root, tmp_path):
    script = tmp_path / "backtrace.gdb"
    script.write_text("break main\ncontinue\nbreak et_pal_init\ncontinue\nbacktrace\n"
                      "frame 1\ninfo source\n")
    build_dir = tmp_path / "build"
    try:
        # The README's debug variant: its objects are shared with the other tests'.
        result = scons("board=qemu", "logging=Info", "debug=1", "debug",
                       "debug_commands=%s" % script,
                       build_dir=build_dir, timeout=1200)
        output = result.stdout
        assert result.returncode == 0, output[-4000:]
        backtrace = output[output.index("#0  et_pal_init"):]
        # Debug information names the checkout /corev-et (builddir.debug_name).
        assert "at /corev-et/pal/corev_pal.cpp:" in backtrace.splitlines()[0]
        assert "in corev_et_run () at /corev-et/examples/corev/executor_runner/" \
            "corev_executor_runner.cpp:" in backtrace
        assert "in main () at /corev-et/examples/corev/executor_runner/runner_main.cpp:" \
            in backtrace
        # The ExecuTorch frames' files are found in the tree (substitute-path).
        assert "Located in %s" % (Path(et_root) / "runtime" / "platform" / "runtime.cpp") in output
        assert "QEMU gdb server on 127.0.0.1:" in output
    finally:
        left = _processes_mentioning(str(build_dir))
        _kill(left)
    assert not left, "QEMU or gdb still running after scons debug: %s" % left


@needs_compiler
def test_debug_on_the_testbench_is_a_one_line_error(tmp_path):
    result = scons("board=cv32e40p", "debug", build_dir=tmp_path)
    assert result.returncode == 2
    lines = result.stdout.strip().splitlines()
    assert lines[-1].startswith("scons: *** board=cv32e40p: the Verilator testbench has no "
                                "debug port"), result.stdout
    assert "Traceback" not in result.stdout


# ---------------------------------------------------------------- traps

TRAP_BOARDS = [
    "qemu",
    pytest.param("cv32e40p", marks=pytest.mark.skipif(
        not have_testbench(), reason=NO_TESTBENCH)),
]


@needs_compiler
@pytest.mark.parametrize("board", TRAP_BOARDS)
def test_illegal_instruction_reports_the_trap_and_fails(board, tmp_path):
    if board == "qemu" and not shutil.which("qemu-system-riscv32"):
        pytest.skip("qemu-system-riscv32 missing (./setup.sh installs it)")
    try:
        result = scons("board=%s" % board, "app=tests/fixtures/illegal_instruction", "run",
                       "timeout=60", "max_cycles=5000000", build_dir=tmp_path, timeout=600)
    finally:
        _kill(_processes_mentioning(str(tmp_path)))
    output = result.stdout
    lines = output.splitlines()
    trap = next(line for line in lines if line.startswith("trap: "))
    assert trap.startswith("trap: mcause 0x00000002 mepc 0x"), trap
    assert " mtval 0x" in trap
    assert "not reached" not in output
    # 128 + the cause, as a shell reports a signal; scons ends with it.
    assert "Exit status: 130" in lines
    assert result.returncode == 130
    assert "Run failed: the program trapped: illegal instruction at 0x" in output
    assert "(main)" in output


@needs_compiler
def test_the_trap_entry_stays_word_aligned_in_the_runner_image(tmp_path):
    """QEMU's mtvec (direct mode) ignores a write whose low bits are not 0: with
    __trap_entry at an address of 2 mod 4 it stayed 0, and a trap in the runner looped
    on fetch faults at address 0 until the timeout instead of being reported. The
    linker's relaxation of crt0's calls (to 2-byte c.jal) had moved it there: .balign in
    crt0's norvc code does not hold against it."""
    from elftools.elf.elffile import ELFFile
    scons("board=qemu", "model=examples/models/add.pte", build_dir=tmp_path)
    (elf,) = Path(tmp_path).glob("*/add/executor_runner.elf")
    with open(elf, "rb") as stream:
        symbols = ELFFile(stream).get_section_by_name(".symtab")
        (entry,) = symbols.get_symbol_by_name("__trap_entry")
        assert entry["st_value"] % 4 == 0, hex(entry["st_value"])


@needs_compiler
@needs_qemu
def test_a_trap_in_the_trap_handler_still_ends_the_program(tmp_path):
    try:
        result = scons("board=qemu", "app=tests/fixtures/trap_in_trap", "run", "timeout=60",
                       build_dir=tmp_path, timeout=600)
    finally:
        _kill(_processes_mentioning(str(tmp_path)))
    assert "trap: a trap in the trap handler" in result.stdout.splitlines()
    assert result.returncode == 130, result.stdout[-2000:]
    assert "trapped again in the trap handler" in result.stdout
