"""Programs exported with ExecuTorch's defaults (torch.export, to_edge_transform_and_lower,
to_executorch) that ran to a wrong answer, aborted, or were refused, though eager PyTorch
and ExecuTorch's own flows take them: tests/models/programs (made by its export.py, with
eager PyTorch's outputs), run on QEMU as one model set; `scons run` compares each
model's outputs with its NAME.expected.json and fails on a difference."""

import json
import math
import re
import shutil
import struct

import pytest

from conftest import same_program
from sconsrun import REPO, assert_refused, scons

PROGRAMS = REPO / "tests" / "models" / "programs"
NAMES = sorted(p.name[:-len(".pte")] for p in PROGRAMS.glob("*.pte"))
needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                                reason="qemu-system-riscv32 missing (./setup.sh installs it)")


def _values(name, kind):
    return [t["values"] for t in json.loads((PROGRAMS / ("%s.%s.json" % (name, kind))).read_text())]


def test_the_expected_outputs_are_pytorchs_semantics():
    """The shipped expected outputs say what the fixes are about (computed here with
    Python's own operators): the remainder takes the divisor's sign (Python's %, as
    torch.remainder), fmod the dividend's (math.fmod, as torch.fmod); cond takes both
    branches from one input."""
    a, b, c, d = _values("remainder", "inputs")
    assert _values("remainder", "expected") == [
        [x % y for x, y in zip(a, b)], [x % 4 for x in a], [x % -3 for x in a],
        [x % y for x, y in zip(c, d)], [x % -5 for x in c]]
    assert any(x < 0 for x in a) and any(y < 0 for y in b)
    a, b = _values("fmod_pow", "inputs")
    assert _values("fmod_pow", "expected") == [
        [int(math.fmod(x, y)) for x, y in zip(a, b)], [int(math.fmod(x, 3)) for x in a],
        [y ** 2 for y in b], [y ** (abs(y) - 1) for y in b]]
    [x] = _values("cond", "inputs")
    assert sum(x) > 0 and _values("cond", "expected") == [[v * 2 for v in x]]
    [x] = _values("two_conds_cloned", "inputs")
    assert _values("two_conds_cloned", "expected") == [[v * 2 for v in x], [v - 10 for v in x]]
    [x] = _values("infinities", "inputs")
    log, masked, divided = _values("infinities", "expected")
    assert masked == [-math.inf if v > 1 else v for v in x] and -math.inf in log
    assert math.inf in divided and -math.inf in divided and any(map(math.isnan, divided))
    [x] = _values("state", "inputs")
    assert _values("state", "expected") == [[2 * v for v in x]]
    [x] = _values("initialized_state", "inputs")
    assert _values("initialized_state", "expected") == [[2 * (5 + v) for v in x]]


@needs_qemu
@pytest.mark.long(minutes=0.7)
@pytest.mark.parametrize("corev_kernels", ["1", "0"])
def test_programs_run_to_eager_outputs(et_root, tmp_path, corev_kernels):
    """- remainder: ExecuTorch v1.4.1's portable kernel takes C's % for integers
      (utils::remainder_override), the dividend's sign: -8 % 3 gave -2 where PyTorch
      gives 1, with exit status 0 (kernels/portable_fixes corrects it, corev_kernels=0
      too).
    - fmod_pow: the portable fmod and pow compute integers in double, switching on that
      type under the operator's own name; the dtype selection selected only the kernel
      keys' dtypes (Int), so both aborted ("dtype not selected for operator
      fmod.Tensor_out").
    - quantize_extremes: quantize_per_tensor of values beyond int32 once scaled
      saturate (test_quantize_saturates_with_an_fpu: the failing ISA).
    - infinities: outputs of -inf, inf and NaN as eager gives them; the check took an
      infinity equal to the one expected for a difference (and passed anything for an
      expected infinity).
    - cond, two_conds_cloned: torch.cond's JumpFalseCall may jump to the chain's end
      (the instruction count); the build refused the program as "jump destination 10 is
      out of range (10 instructions)". The second runs both branches from one input."""
    result = scons("board=qemu", "model=%s" % PROGRAMS, "corev_kernels=" + corev_kernels,
                   "run", build_dir=tmp_path / "build")
    assert result.returncode == 0, result.stdout[-4000:]
    sections = re.split(r"(?m)^Cycles startup: ", result.stdout)[1:]
    assert len(sections) == len(NAMES) == 8, result.stdout[-4000:]
    for name, section in zip(NAMES, sections):
        assert re.search(r"^Exit status: 0$", section, re.M), section
        printed = re.findall(r"^Output \d+: ", section, re.M)
        assert len(printed) == len(_values(name, "expected")), (name, section)


@needs_qemu
@pytest.mark.parametrize("corev_kernels", ["1", "0"])
def test_quantize_saturates_with_an_fpu(et_root, tmp_path, corev_kernels):
    """quantize_per_tensor of values whose scaled product is beyond int32 (3.4e38,
    infinities, 1e10): the operator's reference clamps in float, so they saturate at
    the range's ends. ExecuTorch's kernel casts the product to int64 first, undefined
    there; with isa=rv32imfc (libgcc's conversion) 3.4e38 came out as -1 with exit
    status 0 (rv32imc's soft-float conversion happened to saturate: the model set above
    runs it). The CORE-V kernel, and with corev_kernels=0 portable_fixes' correction,
    saturate."""
    model = PROGRAMS / "quantize_extremes.pte"
    result = scons("board=qemu", "isa=rv32imfc", "corev_kernels=" + corev_kernels,
                   "model=%s" % model, "run", build_dir=tmp_path / "build")
    assert result.returncode == 0, result.stdout[-3000:]
    assert re.search(r"^Output 0: int8\[9\] 127,-128,127,-128,", result.stdout, re.M), \
        result.stdout[-3000:]


def _symbol(elf, name_part):
    from elftools.elf.elffile import ELFFile
    with open(elf, "rb") as f:
        symbols = ELFFile(f).get_section_by_name(".symtab")
        [symbol] = [s for s in symbols.iter_symbols() if name_part in s.name
                    and s["st_info"]["type"] == "STT_OBJECT"]
        return symbol["st_value"], symbol["st_size"]


@needs_qemu
def test_a_mutable_buffer_starts_from_zero_whatever_the_ram_held(et_root, tmp_path):
    """ExecuTorch plans a mutable buffer (register_buffer, then an in-place update) without
    an initial value in the program ("meaningless initial state"); its runners start it
    from zeroed memory, as eager PyTorch's zeros. The runner's planned pool is not
    cleared at start-up (.noinit: it is large), so on a board whose RAM holds anything
    at reset the state began as that, and the outputs were wrong with exit status 0.
    Here QEMU's RAM under the pool holds float32 100.0s before the firmware starts."""
    from etcorev import boards
    from etcorev.run import simulator
    build = tmp_path / "build"
    result = scons("board=qemu", "model=%s" % (PROGRAMS / "state.pte"), build_dir=build)
    assert result.returncode == 0, result.stdout[-3000:]
    [elf] = build.glob("qemu-*/state/executor_runner.elf")
    address, size = _symbol(elf, "planned_pool")
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(struct.pack("<f", 100.0) * (size // 4))
    argv = boards.load("qemu").run_command(str(elf), None, {}, str(tmp_path)) + [
        "-device", "loader,file=%s,addr=0x%x,force-raw=on" % (garbage, address)]
    run = simulator.run(argv, str(tmp_path), 60)
    [x] = _values("infinities", "inputs")
    log, masked, divided = _values("infinities", "expected")
    assert masked == [-math.inf if v > 1 else v for v in x] and -math.inf in log
    assert math.inf in divided and -math.inf in divided and any(map(math.isnan, divided))
    [x] = _values("state", "inputs")
    printed = re.search(r"^Output 0: float32\[3\] (\S+)$", run.output, re.M)
    assert printed, run.output
    assert [float(v) for v in printed.group(1).split(",")] == [2 * v for v in x]


def test_a_mutable_buffer_left_to_the_caller_is_refused(et_root, tmp_path):
    """MemoryPlanningPass(alloc_mutable_buffers=False) with emit_mutable_buffer_names=True
    leaves a buffer's memory and its initial state to the application (ExecuTorch hands
    it a null data pointer: "pointer received at runtime"). The runner has neither: the
    program built and its first kernel on the buffer loaded through address 0 (a trap on
    QEMU; on the testbench, the vector table). It is refused before compiling, naming
    the buffer and the export option."""
    model = PROGRAMS / "refused" / "unplanned_buffer.pte"
    build = tmp_path / "build"
    result = scons("board=qemu", "model=%s" % model, build_dir=build)
    assert_refused(result, "unplanned_buffer.pte", "total", "alloc_mutable_buffers",
                   build_dir=build)


def test_two_torch_conds_that_export_to_wrong_outputs_are_refused(et_root, tmp_path):
    """Two torch.cond on one input, one true and one false: ExecuTorch v1.4.1 hands the
    first branch's result on by reference (a MoveCall) and plans the second branch's
    output over that memory, so both outputs come out as the second's, with exit status
    0, on every runtime (ExecuTorch's own Python runtime too). Refused before compiling,
    naming the kernel call and the .clone() that avoids it (two_conds_cloned runs)."""
    model = PROGRAMS / "refused" / "two_conds.pte"
    build = tmp_path / "build"
    result = scons("board=qemu", "model=%s" % model, build_dir=build)
    assert_refused(result, "two_conds.pte", "torch.cond", "kernel call", ".clone()",
                   build_dir=build)


@needs_qemu
def test_method_picks_the_method_of_a_program_of_several(et_root, tmp_path):
    """A program of two methods (to_edge of {"forward": ..., "decode": ...}) has them in
    name order: the runner ran the first, decode, as ExecuTorch's executor_runner does
    without --method_name, and there was no way to run forward. method=NAME runs the
    method named so (its inputs, outputs and memory); without it the first runs, named in
    the output; an unknown name is refused with the program's methods."""
    methods = PROGRAMS / "methods"
    model = methods / "two_methods.pte"
    build = tmp_path / "build"
    for method, given in (("forward", ["method=forward"]), ("decode", [])):
        expected = methods / ("two_methods.%s.expected.json" % method)
        result = scons("board=qemu", "model=%s" % model, "expected=%s" % expected, "run",
                       *given, build_dir=build)
        assert result.returncode == 0, result.stdout[-3000:]
        assert re.search(r"^Method: %s \(of 2\)$" % method, result.stdout, re.M), result.stdout
        printed = re.findall(r"^Output \d+: ", result.stdout, re.M)
        assert len(printed) == len(_values_in(expected)), result.stdout
    # the other method's outputs are no match: the check compares the method's own
    wrong = scons("board=qemu", "model=%s" % model, "run",
                  "expected=%s" % (methods / "two_methods.forward.expected.json"),
                  build_dir=build)
    assert wrong.returncode != 0
    refused = scons("board=qemu", "model=%s" % model, "method=encode",
                    build_dir=tmp_path / "refused")
    assert_refused(refused, "two_methods.pte", "no method 'encode'", "decode, forward",
                   "method=", build_dir=tmp_path / "refused")


def _values_in(path):
    return [t["values"] for t in json.loads(path.read_text())]


def test_export_reproduces_shipped(tmp_path):
    pytest.importorskip("executorch.exir", reason="the executorch Python package is not "
                        "installed (it is the `export` extra: ./setup.sh --export)")
    import subprocess
    import sys
    subprocess.run([sys.executable, str(PROGRAMS / "export.py"), "--out", str(tmp_path)],
                   check=True, capture_output=True)
    methods = tmp_path / "methods"
    for path in [tmp_path / "refused" / "unplanned_buffer.pte",
                 tmp_path / "refused" / "two_conds.pte", methods / "two_methods.pte",
                 methods / "two_methods.inputs.json",
                 methods / "two_methods.forward.expected.json",
                 methods / "two_methods.decode.expected.json"] + [
            tmp_path / ("%s.%s" % (n, s)) for n in NAMES
            for s in ("pte", "inputs.json", "expected.json")]:
        shipped = PROGRAMS / path.relative_to(tmp_path)
        if path.suffix == ".pte":
            assert same_program(path.read_bytes(), shipped.read_bytes()), path.name
        else:
            assert path.read_bytes() == shipped.read_bytes(), path.name
