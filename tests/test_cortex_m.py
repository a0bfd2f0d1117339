"""ExecuTorch's Cortex-M operators (cortex_m::, backends/cortex_m/ops) over CMSIS-NN, on
QEMU with both toolchains: every operator's test model (tests/models/cortex_m: odd sizes,
padding, stride, dilation, per-channel scales, batches) and MLPerf Tiny's four networks
(examples/models/tiny) in one model set, each matching the lowered program's Python
reference (NAME.expected.json, to each output's quantization step); the CORE-V kernels
that stand in for CMSIS-NN functions (kernels/corev/cmsis_nn) give exactly CMSIS-NN's
outputs; and what the build takes of CMSIS-NN and says about it.

Needs an ExecuTorch tree and a CMSIS-NN tree (cmsis_nn= in the user settings, from
./setup.sh --cmsis-nn PATH); skips with the reason without them.
"""

import re
import shutil
from pathlib import Path

import pytest

from etcorev.executorch import cmsis_nn as cmsis
from etcorev.pte import model_io
from sconsrun import REPO, scons

OPS = REPO / "tests" / "models" / "cortex_m"
TINY = REPO / "examples" / "models" / "tiny"
NAMES = sorted(p.stem for p in OPS.glob("*.pte")) + sorted(p.stem for p in TINY.glob("*.pte"))

needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                                reason="qemu-system-riscv32 not installed (qemu-system-misc)")


@pytest.fixture(scope="module")
def set_runs(et_root, cmsis_nn, tmp_path_factory):
    """(toolchain, corev_kernels) -> `scons run` of the operator models and the four
    networks as one model set, run once."""
    build_dir = tmp_path_factory.mktemp("cortex_m")
    runs = {}

    def run(toolchain, corev=True):
        if (toolchain, corev) not in runs:
            runs[toolchain, corev] = scons(
                "board=qemu", "toolchain=%s" % toolchain, "model=%s,%s" % (OPS, TINY),
                "cmsis_nn=%s" % cmsis_nn, "corev_kernels=%d" % corev, "run", "timeout=900",
                build_dir=build_dir)
        return runs[toolchain, corev]
    return run


def _summary(out):
    return {m.group(1): m.group(2) for m in re.finditer(
        r"^(\w+)\s+(ok|FAIL \d+)\s.*$", out[out.index("Summary ("):], re.M)}


@needs_qemu
def test_operators_and_networks_match_their_reference(toolchain, set_runs):
    result = set_runs(toolchain)
    assert result.returncode == 0, result.stdout[-4000:]
    summary = _summary(result.stdout)
    assert sorted(summary) == sorted(NAMES), summary
    assert set(summary.values()) == {"ok"}, summary
    assert "scons: warning" not in result.stdout, result.stdout


@needs_qemu
def test_the_corev_kernels_give_cmsis_nns_outputs_exactly(toolchain, set_runs):
    """kernels/corev/cmsis_nn stands in for CMSIS-NN functions: every output of every
    model, as printed, is the same as with CMSIS-NN's own C (corev_kernels=0)."""
    ours, theirs = set_runs(toolchain, True), set_runs(toolchain, False)
    assert theirs.returncode == 0, theirs.stdout[-4000:]
    sections = [re.split(r"(?m)^Cycles startup: ", run.stdout)[1:] for run in (ours, theirs)]
    assert len(sections[0]) == len(sections[1]) == len(NAMES)
    for name, a, b in zip(NAMES, *sections):
        assert model_io.parse_outputs(a) == model_io.parse_outputs(b), name


def test_every_replacement_defines_what_the_cmsis_nn_file_it_replaces_defines(cmsis_nn):
    replacements = sorted((REPO / "kernels" / "corev" / "cmsis_nn").glob("*.c"))
    originals = {p.name: p for p in (Path(cmsis_nn) / "Source").rglob("*.c")}
    for path in replacements:
        assert path.name in originals, "%s replaces no CMSIS-NN file" % path.name
        assert cmsis.functions_defined(path) == cmsis.functions_defined(originals[path.name]), \
            path.name


def test_only_the_files_the_kernels_reach_are_compiled(et_root, cmsis_nn, tmp_path):
    """A linear layer's model compiles CMSIS-NN's fully-connected path and what it calls,
    nothing of the convolutions, pooling or softmax."""
    result = scons("board=qemu", "model=%s" % (OPS / "linear.pte"), "cmsis_nn=%s" % cmsis_nn,
                   "corev_kernels=0", build_dir=tmp_path)
    assert result.returncode == 0, result.stdout
    compiled = sorted(p.name for p in tmp_path.glob("*/cmsis_nn/**/*.o"))
    assert compiled == ["arm_fully_connected_s8.o", "arm_nn_vec_mat_mult_t_s8.o"], compiled


def test_without_cmsis_nn_a_model_that_needs_it_is_one_line(et_root, tmp_path):
    result = scons("board=qemu", "model=%s" % (OPS / "linear.pte"), "cmsis_nn=",
                   build_dir=tmp_path / "build")
    out = result.stdout
    assert result.returncode != 0 and "Traceback" not in out, out
    errors = [line for line in out.splitlines() if line.startswith("scons: ***")]
    assert len(errors) == 1, out
    for phrase in ("cortex_m::quantized_linear.out", "CMSIS-NN", "cmsis_nn=PATH",
                   "github.com/ARM-software/CMSIS-NN", "./setup.sh --cmsis-nn"):
        assert phrase in errors[0], (phrase, out)
    assert "Compiling" not in out


def _tree_at(tmp_path, cmsis_nn, head):
    """A copy of the CMSIS-NN sources whose git HEAD is head (None: no .git)."""
    tree = tmp_path / "CMSIS-NN"
    for part in ("Include", "Source"):
        shutil.copytree(Path(cmsis_nn) / part, tree / part)
    if head:
        (tree / ".git").mkdir()
        (tree / ".git" / "HEAD").write_text(head + "\n")
    return tree


@pytest.mark.parametrize("head", ["0123456789abcdef0123456789abcdef01234567", None],
                         ids=["another-commit", "no-git"])
def test_a_tree_at_another_commit_builds_with_a_warning(et_root, cmsis_nn, tmp_path, head):
    tree = _tree_at(tmp_path, cmsis_nn, head)
    result = scons("board=qemu", "model=%s" % (OPS / "linear.pte"), "cmsis_nn=%s" % tree,
                   build_dir=tmp_path / "build")
    assert result.returncode == 0, result.stdout
    warnings = [line for line in result.stdout.splitlines()
                if line.startswith("scons: warning:") and "CMSIS-NN" in line]
    assert len(warnings) == 1, result.stdout
    pin = cmsis.pinned_commit(et_root)
    assert pin[:12] in warnings[0] and "git -C" in warnings[0], warnings[0]
    assert (head[:12] if head else "no git metadata") in warnings[0], warnings[0]


def test_a_directory_that_is_not_cmsis_nn_is_one_line(et_root, tmp_path):
    result = scons("board=qemu", "model=%s" % (OPS / "linear.pte"), "cmsis_nn=%s" % tmp_path,
                   build_dir=tmp_path / "build")
    assert result.returncode != 0 and "Traceback" not in result.stdout, result.stdout
    assert "is not a CMSIS-NN source tree" in result.stdout, result.stdout


# ---------------------------------------------------------------- the Python layer, quick

@pytest.mark.quick
def test_the_commit_of_a_git_checkout(tmp_path):
    (tmp_path / ".git" / "refs" / "heads").mkdir(parents=True)
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / ".git" / "packed-refs").write_text("# pack-refs\n%s refs/heads/main\n" % ("a" * 40))
    assert cmsis.tree_commit(tmp_path) == "a" * 40
    (tmp_path / ".git" / "refs" / "heads" / "main").write_text("b" * 40 + "\n")
    assert cmsis.tree_commit(tmp_path) == "b" * 40
    (tmp_path / ".git" / "HEAD").write_text("c" * 40 + "\n")
    assert cmsis.tree_commit(tmp_path) == "c" * 40
    assert cmsis.tree_commit(tmp_path / "nowhere") is None


@pytest.mark.quick
def test_sources_follow_calls_and_take_replacements(tmp_path):
    source = tmp_path / "Source" / "Part"
    source.mkdir(parents=True)
    (tmp_path / "Include").mkdir()
    (tmp_path / "Include" / "arm_nnfunctions.h").write_text("")
    (source / "arm_a.c").write_text("int arm_a(int x)\n{\n    return arm_b(x);\n}\n")
    (source / "arm_b.c").write_text("int arm_b(int x)\n{\n    return arm_c(x) + 1;\n}\n")
    (source / "arm_c.c").write_text("int arm_c(int x)\n{\n    return x;\n}\n")
    (source / "arm_d.c").write_text("int arm_d(int x)\n{\n    return x;\n}\n")
    assert cmsis.sources_for(tmp_path, ["arm_a"]) == [
        str(source / n) for n in ("arm_a.c", "arm_b.c", "arm_c.c")]
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / "arm_b.c").write_text("int arm_b(int x)\n{\n    return x + 1;\n}\n")
    assert cmsis.sources_for(tmp_path, ["arm_a"], [ours / "arm_b.c"]) == sorted(
        [str(source / "arm_a.c"), str(ours / "arm_b.c")])


@pytest.mark.quick
def test_inputs_are_laid_out_in_their_dim_order():
    # N=1, C=2, H=2, W=3, values 0..11 in logical (NCHW) order: value c*6 + h*3 + w.
    # Channels-last memory walks c fastest: (h, w) = (0, 0) gives 0, 6; (0, 1) 1, 7; ...
    nhwc = model_io.in_dim_order(list(range(12)), (1, 2, 2, 3), (0, 2, 3, 1))
    assert nhwc == [0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11]
    assert model_io.in_dim_order([1, 2, 3], (3,), (0,)) == [1, 2, 3]


@pytest.mark.quick
def test_both_routes_of_a_network_count_the_same_macs():
    """The MACs of the Cortex-M program (OHWI/IHWO weights) and of the decomposed one
    (OIHW convolutions, addmm) are computed from different operators and layouts: they
    must agree, network by network, and be the network's real work (not zero)."""
    from etcorev import pte
    from etcorev.pte import macs
    for path in sorted(TINY.glob("*.pte")):
        int8 = macs.program_macs(pte.read_pte(path))
        decomposed = macs.program_macs(pte.read_pte(TINY / "decomposed" / path.name))
        assert int8 == decomposed > 100000, (path.name, int8, decomposed)
