"""Programs exported with ExecuTorch's defaults (torch.export, to_edge_transform_and_lower,
to_executorch) that ran to a wrong answer, aborted, or were refused, though eager PyTorch
and ExecuTorch's own flows take them. Each runs on QEMU; the expected values are computed
here with Python's own operators, which follow PyTorch's semantics for these."""

import json
import math
import re
import shutil

import pytest

from sconsrun import assert_refused, export_program, scons

needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                                reason="qemu-system-riscv32 missing (./setup.sh installs it)")

A = [7, -8, 100, -1, 0, -9, 9, -2147483647]
B = [3, 3, -7, 5, -2, -3, -4, 10]


def printed_outputs(stdout):
    """{index: [values]} of the runner's `Output N: dtype[shape] v,v,...` lines."""
    found = {}
    for index, values in re.findall(r"^Output (\d+): \S+? ?(\S*)$", stdout, re.M):
        found[int(index)] = [float(v) for v in values.split(",")] if values else []
    return found


def write_inputs(model, *tensors):
    model.with_suffix(".inputs.json").write_text(json.dumps(
        [{"dtype": dtype, "shape": [len(values)], "values": values}
         for dtype, values in tensors]))


def run(model, build_dir, *options):
    result = scons("board=qemu", "model=%s" % model, *options, "run", build_dir=build_dir)
    assert result.returncode == 0, result.stdout[-3000:]
    return printed_outputs(result.stdout)


def floor_remainder(a, b):
    return a % b                       # Python's % takes the divisor's sign, as torch's


def c_fmod(a, b):
    return int(math.fmod(a, b))        # the dividend's sign, as torch.fmod


@pytest.fixture(scope="module")
def remainder_program(tmp_path_factory):
    model = export_program(
        tmp_path_factory.mktemp("remainder") / "remainder.pte",
        "class Model(torch.nn.Module):\n"
        "    def forward(self, a, b, c, d):\n"
        "        return a % b, a % 4, a % -3, c % d, torch.remainder(c, -5)\n",
        "(torch.tensor(%r, dtype=torch.int32), torch.tensor(%r, dtype=torch.int32), "
        "torch.tensor(%r), torch.tensor(%r))" % (A, B, A, B))
    write_inputs(model, ("int32", A), ("int32", B), ("int64", A), ("int64", B))
    return model


@needs_qemu
@pytest.mark.long(minutes=0.7)
@pytest.mark.parametrize("corev_kernels", ["1", "0"])
def test_integer_remainder_takes_the_divisors_sign(et_root, remainder_program, tmp_path,
                                                   corev_kernels):
    """torch.remainder (Python's %) of integers has the divisor's sign. ExecuTorch v1.4.1's
    portable kernel takes C's % for integers (utils::remainder_override), the dividend's
    sign: -8 % 3 gave -2 where eager PyTorch gives 1, with exit status 0. int32 and int64,
    tensor and scalar divisors, with and without the CORE-V kernels."""
    printed = run(remainder_program, tmp_path / "build", "corev_kernels=" + corev_kernels)
    assert printed == {
        0: [floor_remainder(a, b) for a, b in zip(A, B)],
        1: [floor_remainder(a, 4) for a in A],
        2: [floor_remainder(a, -3) for a in A],
        3: [floor_remainder(a, b) for a, b in zip(A, B)],
        4: [floor_remainder(a, -5) for a in A],
    }


@needs_qemu
def test_integer_fmod_and_pow_run(et_root, tmp_path):
    """The portable fmod and pow compute integers in double, switching on that type under
    the operator's own name; the dtype-selective build selected only the dtypes of the
    kernel keys (Int), so both aborted ("dtype not selected for operator fmod.Tensor_out")."""
    model = export_program(
        tmp_path / "fmod_pow.pte",
        "class Model(torch.nn.Module):\n"
        "    def forward(self, a, b):\n"
        "        return torch.fmod(a, b), torch.fmod(a, 3), torch.pow(b, 2), torch.pow(b, b.abs() - 1)\n",
        "(torch.tensor(%r, dtype=torch.int32), torch.tensor(%r, dtype=torch.int32))" % (A, B))
    write_inputs(model, ("int32", A), ("int32", B))
    printed = run(model, tmp_path / "build")
    assert printed == {
        0: [c_fmod(a, b) for a, b in zip(A, B)],
        1: [c_fmod(a, 3) for a in A],
        2: [b ** 2 for b in B],
        3: [b ** (abs(b) - 1) for b in B],
    }


@needs_qemu
def test_torch_cond_runs_either_branch(et_root, tmp_path):
    """torch.cond becomes a JumpFalseCall whose destination may be the end of the chain
    (the instruction count): the build refused such a program as "jump destination 10 is
    out of range (10 instructions)". Both branches run and give eager's values."""
    model = export_program(
        tmp_path / "cond.pte",
        "class Model(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.cond(x.sum() > 0, lambda x: x * 2, lambda x: x - 10, (x,))\n",
        "(torch.tensor([1.0, 2.0, 3.0]),)")
    build = tmp_path / "build"
    for values in ([1.0, -3.0, 4.5], [1.0, -3.0, 0.5]):
        write_inputs(model, ("float32", values))
        expected = [v * 2 for v in values] if sum(values) > 0 else [v - 10 for v in values]
        assert run(model, build) == {0: expected}


def test_a_mutable_buffer_left_to_the_caller_is_refused(et_root, tmp_path):
    """MemoryPlanningPass(alloc_mutable_buffers=False) with emit_mutable_buffer_names=True
    leaves a buffer's memory and its initial state to the application (ExecuTorch hands
    it a null data pointer: "pointer received at runtime"). The runner has neither: the
    program built and its first kernel on the buffer loaded through address 0 (a trap on
    QEMU; on the testbench, the vector table). It is refused before compiling, naming
    the buffer and the export option."""
    model = export_program(
        tmp_path / "state.pte",
        "class Model(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.register_buffer('total', torch.zeros(3))\n"
        "    def forward(self, x):\n"
        "        self.total.add_(x)\n"
        "        return self.total * 2\n",
        "(torch.ones(3),)",
        config="from executorch.exir import ExecutorchBackendConfig; "
               "from executorch.exir.passes import MemoryPlanningPass; "
               "ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass("
               "alloc_mutable_buffers=False), emit_mutable_buffer_names=True)")
    build = tmp_path / "build"
    result = scons("board=qemu", "model=%s" % model, build_dir=build)
    assert_refused(result, "state.pte", "total", "alloc_mutable_buffers", build_dir=build)
