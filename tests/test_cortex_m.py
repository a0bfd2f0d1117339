"""ExecuTorch's Cortex-M operators (cortex_m::, backends/cortex_m/ops) over CMSIS-NN, on
QEMU with both toolchains: every operator's test model (tests/models/cortex_m: odd sizes,
padding, stride, dilation, per-channel scales, batches, channels-last tensors) and MLPerf
Tiny's four networks (examples/models/tiny; and two smaller ones, tiny/small), each
exported for ExecuTorch's default target
(Cortex-M55: CMSIS-NN's MVE forms) and, where the program differs, for Cortex-M3 (scalar)
and Cortex-M4 (DSP), in one model set, each matching the lowered program's Python
reference (NAME.expected.json, to each output's quantization step); the CORE-V kernels
that stand in for CMSIS-NN functions (kernels/corev/cmsis_nn) give exactly CMSIS-NN's
outputs; the operators of kernels/cortex_m stand in for the tree's; what the build reads
of the forms (etcorev.executorch.cortex_m_forms) and refuses; and what the build takes of
CMSIS-NN and says about it.

Needs an ExecuTorch tree and a CMSIS-NN tree (cmsis_nn= in the user settings, from
./setup.sh --cmsis-nn PATH); skips with the reason without them.
"""

import re
import shutil
import struct
from pathlib import Path

import pytest

from etcorev import pte
from etcorev.executorch import cmsis_nn as cmsis
from etcorev.executorch import cortex_m_forms as forms
from etcorev.executorch import kernel_plan
from etcorev.executorch.kernel_sources import defines_function
from etcorev.pte import flatbuf, model_io
from etcorev.pte import program as pte_program
from etcorev.run import models
from sconsrun import REPO, scons

OPS = REPO / "tests" / "models" / "cortex_m"
TINY = REPO / "examples" / "models" / "tiny"
# Each set of models: the default target's, and the Cortex-M3 and M4 programs that differ;
# and two smaller networks of the same kinds (benchmarks/int8.py --small).
SETS = [OPS, OPS / "m3", OPS / "m4", TINY, TINY / "m3", TINY / "m4", TINY / "small"]
NAMES = [m.name for m in models.model_set(",".join(map(str, SETS)))]

needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                                reason="qemu-system-riscv32 not installed (qemu-system-misc)")


@pytest.fixture(scope="module")
def set_runs(et_root, cmsis_nn, tmp_path_factory):
    """(toolchain, corev_kernels) -> `scons run` of the operator models and the four
    networks as one model set, run once. Without LTO: the 37 firmwares' links are most
    of a set's build with it, and what is checked is the kernels' arithmetic."""
    build_dir = tmp_path_factory.mktemp("cortex_m")
    runs = {}

    def run(toolchain, corev=True):
        if (toolchain, corev) not in runs:
            runs[toolchain, corev] = scons(
                "board=qemu", "toolchain=%s" % toolchain, "model=%s" % ",".join(map(str, SETS)),
                "cmsis_nn=%s" % cmsis_nn, "corev_kernels=%d" % corev, "lto=0", "run",
                "timeout=900", build_dir=build_dir)
        return runs[toolchain, corev]
    return run


def _summary(out):
    return {m.group(1): m.group(2) for m in re.finditer(
        r"^([\w.-]+)\s+(ok|FAIL \d+)\s.*$", out[out.index("Summary ("):], re.M)}


@pytest.mark.long(minutes=1.5)
@needs_qemu
def test_operators_and_networks_match_their_reference(toolchain, set_runs):
    result = set_runs(toolchain)
    assert result.returncode == 0, result.stdout[-4000:]
    summary = _summary(result.stdout)
    assert sorted(summary) == sorted(NAMES), summary
    assert set(summary.values()) == {"ok"}, summary
    assert "scons: warning" not in result.stdout, result.stdout


# The toolchain the suite always has (./setup.sh installs it): the comparison of the
# kernels with CMSIS-NN's C is about their arithmetic, the same with either compiler.
DEBIAN_GCC = "riscv64-unknown-elf-"


@pytest.mark.long(minutes=1)
@needs_qemu
def test_the_corev_kernels_give_cmsis_nns_outputs_exactly(set_runs):
    """kernels/corev/cmsis_nn stands in for CMSIS-NN functions: every output of every
    model, as printed, is the same as with CMSIS-NN's own C (corev_kernels=0)."""
    ours, theirs = set_runs(DEBIAN_GCC, True), set_runs(DEBIAN_GCC, False)
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


def _tree_at(tmp_path, cmsis_nn, head, edit=False):
    """A copy of the CMSIS-NN sources whose git HEAD is head (None: no .git); edit: one
    source file changed, and an ARM.CMSIS-NN.pdsc of release 7.1.0 (a pack of another
    release)."""
    tree = tmp_path / "CMSIS-NN"
    for part in ("Include", "Source"):
        shutil.copytree(Path(cmsis_nn) / part, tree / part)
    if head:
        (tree / ".git").mkdir()
        (tree / ".git" / "HEAD").write_text(head + "\n")
    if edit:
        source = tree / "Source" / "BasicMathFunctions" / "arm_elementwise_add_s8.c"
        source.write_text(source.read_text() + "\n/* another release */\n")
        (tree / "ARM.CMSIS-NN.pdsc").write_text(
            '<package><releases><release version="7.1.0">7.1.0</release></releases></package>')
    return tree


@pytest.mark.parametrize("head, edit, says", [
    ("0123456789abcdef0123456789abcdef01234567", False, "is at commit 0123456789ab"),
    (None, True, "has no git metadata, and its files are not those of the commit below "
                 "(its ARM.CMSIS-NN.pdsc names release 7.1.0)"),
], ids=["another-commit", "no-git-other-files"])
def test_a_tree_at_another_commit_builds_with_a_warning(et_root, cmsis_nn, tmp_path, head,
                                                        edit, says):
    tree = _tree_at(tmp_path, cmsis_nn, head, edit)
    result = scons("board=qemu", "model=%s" % (OPS / "linear.pte"), "cmsis_nn=%s" % tree,
                   build_dir=tmp_path / "build")
    assert result.returncode == 0, result.stdout
    warnings = [line for line in result.stdout.splitlines()
                if line.startswith("scons: warning:") and "CMSIS-NN" in line]
    assert len(warnings) == 1, result.stdout
    pin = cmsis.pinned_commit(et_root)
    assert pin[:12] in warnings[0] and "git -C" in warnings[0], warnings[0]
    assert says in warnings[0], warnings[0]


def test_a_tree_without_git_metadata_is_known_by_its_files(et_root, cmsis_nn, tmp_path):
    """An archive of the pinned commit (what ExecuTorch's CMake downloads) or a copy
    without .git is the pinned commit: its files' digest is that commit's, and it builds
    without a warning. (The configured tree is the pinned commit: the other tests
    here build from it without a warning either.)"""
    pin = cmsis.pinned_commit(et_root)
    if cmsis.KNOWN_DIGESTS.get(pin) != cmsis.tree_digest(cmsis_nn):
        pytest.skip("the configured CMSIS-NN tree is not the commit %s pins" % et_root)
    tree = _tree_at(tmp_path, cmsis_nn, None)
    assert cmsis.identify(tree, pin) == (True, "has the files of commit %s" % pin[:12])
    result = scons("board=qemu", "model=%s" % (OPS / "linear.pte"), "cmsis_nn=%s" % tree,
                   build_dir=tmp_path / "build")
    assert result.returncode == 0, result.stdout
    assert "scons: warning" not in result.stdout, result.stdout


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


# ---------------------------------------------------------------- the forms of the targets

def _calls(path):
    return [(f.op, f) for f in forms.call_forms(pte.read_pte(path).methods[0])]


@pytest.mark.quick
def test_every_operator_is_tested_and_every_form_of_every_target():
    """Every operator of the Cortex-M library has a model of its own, and the models of
    each target carry that target's forms: the default's MVE kernel sums and scratch
    sizes, M3's scalar ones, M4's DSP ones."""
    ops = {call.op for path in OPS.glob("*.pte") for call in pte.read_pte(path).methods[0].calls}
    assert set(forms.SCHEMAS) <= ops, sorted(set(forms.SCHEMAS) - ops)
    carried = {}
    for directory in (OPS, OPS / "m3", OPS / "m4"):
        for path in directory.glob("*.pte"):
            for op, form in _calls(path):
                if form.backends != set(forms.BACKENDS):
                    carried.setdefault(directory.name, set()).update(
                        (op, b) for b in form.backends)
    assert ("cortex_m::quantized_linear.out", "mve") in carried["cortex_m"]
    assert ("cortex_m::quantized_conv2d.out", "mve") in carried["cortex_m"]
    assert ("cortex_m::quantized_batch_matmul.out", "mve") in carried["cortex_m"]
    assert ("cortex_m::quantized_linear.out", "scalar") in carried["m3"]
    assert ("cortex_m::quantized_depthwise_conv2d.out", "scalar") in carried["m3"]
    assert ("cortex_m::quantized_depthwise_conv2d.out", "dsp") in carried["m4"]
    assert ("cortex_m::quantized_avg_pool2d.out", "dsp") in carried["m4"]
    for path in [*TINY.glob("*.pte"), *(TINY / "small").glob("*.pte")]:   # the default: M55
        assert forms.targets([f for _, f in _calls(path)]) == {"mve"}, path.name
    for directory, backend in ((TINY / "m3", "scalar"), (TINY / "m4", "dsp")):
        for path in directory.glob("*.pte"):
            assert backend in forms.targets([f for _, f in _calls(path)]), path


@pytest.mark.quick
def test_an_mve_1xn_convolution_takes_the_rest_of_its_buffer_from_the_temp_pool():
    """The default target plans a 1x3 convolution over 4 channels 16 bytes of scratch
    (MVE's row); CMSIS-NN's C path needs its 2 int16 columns, 48 bytes: the firmware's
    temp pool is sized for them."""
    [row] = [f for op, f in _calls(OPS / "conv.pte") if f.scratch and f.scratch[0].short]
    assert (row.scratch[0].planned, row.scratch[0].needs) == (16, 48)
    assert row.backends == {"mve"} and row.temp == 48
    method = pte.read_pte(OPS / "conv.pte").methods[0]
    assert forms.temp_pool_bytes(method) == 48 + forms.TEMP_ALIGNMENT
    m3 = [f for op, f in _calls(OPS / "m3" / "conv.pte")]
    assert not any(s.short for f in m3 for s in f.scratch)


@pytest.mark.quick
def test_a_grouped_convolution_without_bias_takes_a_bias_of_zeros_from_the_temp_pool():
    """CMSIS-NN's C path steps a NULL bias pointer from group to group (a load fault on
    QEMU, a wrong answer where address 0 is memory): op_quantized_conv2d.cpp gives such a
    call int32 zeros, one per output channel, from the temp pool, which is sized for them
    (before the scratch the same call may take, on a 16-byte boundary)."""
    m3 = [f for op, f in _calls(OPS / "m3" / "conv.pte")]
    unbiased = [f for f in m3 if f.temp]
    # conv.pte's grouped convolution (6 outputs) and depthwise one (3) without bias.
    assert sorted(f.temp for f in unbiased) == [3 * 4, 6 * 4]
    method = pte.read_pte(OPS / "m3" / "conv.pte").methods[0]
    assert forms.temp_pool_bytes(method) == 6 * 4 + forms.TEMP_ALIGNMENT
    a = {"input": _Sizes(1, 4, 6, 6), "weight": _Sizes(6, 3, 3, 2), "out": _Sizes(1, 6, 6, 6),
         "bias": None}
    assert forms._temp_of_conv(a, 0) == 24
    assert forms._temp_of_conv(a, 48) == 32 + 48
    assert forms._temp_of_conv(dict(a, bias=_Sizes(6)), 48) == 48
    assert forms._temp_of_conv(dict(a, weight=_Sizes(6, 3, 3, 4)), 0) == 0


class _Sizes:
    def __init__(self, *sizes):
        self.sizes = sizes


def _binding():
    try:
        from executorch.backends.cortex_m.library import cmsis_nn as binding
        binding.resolve_backend(binding.CortexM.M3)
    except Exception as error:      # no export extra, or no compiled binding in it
        pytest.skip("CMSIS-NN's Python binding (the export extra) is not importable: %s"
                    % error)
    return binding


def test_buffer_sizes_are_those_of_cmsis_nns_own_binding():
    """The buffer sizes written out in cortex_m_forms agree with CMSIS-NN's own (its
    Python binding, which ExecuTorch's passes size the scratch tensors with) for every
    backend over a grid of shapes: 1x1, 1xN, odd and strided convolutions, depthwise ones
    with one input channel, multipliers and 3x3, pools, fully connected, transposed."""
    binding = _binding()
    b = {name: getattr(binding.Backend, name.upper()) for name in forms.BACKENDS}
    a8w8 = binding.DataType.A8W8
    checked = 0
    for n, h, w, c in [(1, 1, 16, 4), (1, 7, 9, 3), (2, 6, 5, 8), (1, 1, 11, 6), (1, 12, 12, 17)]:
        for kh, kw in [(1, 1), (1, 3), (3, 3), (2, 5)]:
            for stride in [(1, 1), (2, 2), (1, 2)]:
                for padding in [(0, 0), (1, 1), (0, 2)]:
                    for dilation in [(1, 1), (2, 2)]:
                        oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
                        ow = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
                        if oh < 1 or ow < 1:
                            continue
                        for c_out in (5, 16):
                            args = ((n, h, w, c), (c_out, kh, kw, c), (n, oh, ow, c_out),
                                    padding, stride, dilation)
                            for name, backend in b.items():
                                assert forms.conv_wrapper(name, *args) == \
                                    binding.convolve_wrapper_buffer_size(
                                        backend, a8w8, input_nhwc=args[0], filter_nhwc=args[1],
                                        output_nhwc=args[2], padding_hw=padding,
                                        stride_hw=stride, dilation_hw=dilation), (name, args)
                                checked += 1
                        for mult in (1, 2, 8):
                            c_out = c * mult
                            args = ((n, h, w, c), (c_out, kh, kw, 1), (n, oh, ow, c_out),
                                    padding, stride, dilation)
                            for name, backend in b.items():
                                assert forms.depthwise_wrapper(name, *args) == \
                                    binding.depthwise_conv_wrapper_buffer_size(
                                        backend, a8w8, input_nhwc=args[0], filter_nhwc=args[1],
                                        output_nhwc=args[2], padding_hw=padding,
                                        stride_hw=stride, dilation_hw=dilation,
                                        ch_mult=mult), (name, args)
                                checked += 1
                    if dilation == (1, 1) and padding == (0, 0):
                        tout = ((h - 1) * stride[0] + kh, (w - 1) * stride[1] + kw)
                        args = ((n, h, w, c), (5, kh, kw, c), (n,) + tout + (5,))
                        for name, backend in b.items():
                            assert forms.transpose_conv(name, *args, stride) == \
                                binding.transpose_conv_buffer_size(
                                    backend, a8w8, input_nhwc=args[0], filter_nhwc=args[1],
                                    output_nhwc=args[2], padding_hw=padding, stride_hw=stride,
                                    dilation_hw=dilation), (name, args)
                            assert forms.transpose_conv_reverse(args[0], args[1], stride) == \
                                binding.transpose_conv_reverse_conv_buffer_size(
                                    backend, a8w8, input_nhwc=args[0], filter_nhwc=args[1],
                                    padding_hw=padding, stride_hw=stride), (name, args)
                            checked += 2
        for name, backend in b.items():
            assert forms.avgpool(name, w, c) == binding.avgpool_buffer_size(
                backend, a8w8, dim_dst_width=w, ch_src=c), name
            assert forms.fully_connected(name, c) == binding.fully_connected_buffer_size(
                backend, a8w8, filter_nhwc=[h * w, -1, -1, c]), name
            checked += 2
    assert checked > 3000, checked


def test_the_argument_names_are_the_trees(et_root):
    """cortex_m_forms.SCHEMAS is the tree's operators.yaml, operator for operator."""
    import yaml
    entries = yaml.safe_load((et_root / "backends" / "cortex_m" / "ops" /
                              "operators.yaml").read_text())
    tree = {}
    for entry in entries:
        name, _, args = entry["func"].partition("(")
        args = args.rsplit(") ->", 1)[0]
        tree[name] = tuple(a.split()[-1] for a in args.split(",") if a.strip() not in ("", "*"))
    assert tree == forms.SCHEMAS


def test_each_operator_of_ours_defines_the_kernel_of_the_tree_file_it_replaces(et_root):
    """kernels/cortex_m/op_X.cpp stands in for the tree's backends/cortex_m/ops/op_X.cpp:
    it defines the same kernel functions (those the yaml names), so codegen registers
    ours."""
    import yaml
    ops_dir = et_root / "backends" / "cortex_m" / "ops"
    kernels = [k["kernel_name"].split("::")[-1]
               for e in yaml.safe_load((ops_dir / "operators.yaml").read_text())
               for k in e["kernels"]]
    ours = kernel_plan.cortex_m_op_stand_ins()
    assert len(ours) >= 7, ours
    for name, path in ours.items():
        theirs = (ops_dir / name).read_text()
        mine = Path(path).read_text()
        defined = [k for k in kernels if defines_function(theirs, k)]
        assert defined, name
        assert [k for k in kernels if defines_function(mine, k)] == defined, name


def _with_scratch(source, target, call_index, size):
    """A copy of a program whose kernel call call_index has its scratch tensor (the
    argument named scratch) sized `size` bytes: the edited program of a user, or of
    another exporter."""
    data = bytearray(source.read_bytes())
    reader = pte_program._Reader(memoryview(bytes(data)), len(data), source.name)
    root = flatbuf.Table(reader, struct.unpack_from("<I", data, 0)[0], "Program", "Program")
    plan = root.tables("execution_plan")[0]
    operators = [op.string("name") + "." + op.string("overload") for op in plan.tables("operators")]
    instruction = plan.tables("chains")[0].tables("instructions")[call_index]
    _, call = instruction.union("instr_args")
    op = operators[call.scalar("op_index")]
    value = call.scalars("args")[forms.SCHEMAS[op].index("scratch")]
    _, tensor = plan.tables("values")[value].union("val")
    start, length, _, _ = tensor._vector("sizes")
    assert length == 1
    struct.pack_into("<i", data, start, size)
    target.write_bytes(bytes(data))
    return op


def test_an_undersized_scratch_buffer_is_refused_before_compiling(et_root, cmsis_nn, tmp_path):
    """A scratch tensor smaller than CMSIS-NN's C path needs, of a size no backend plans
    (an edited program): one line naming the operator, its call and both sizes, before
    anything is compiled; the firmware never overruns it."""
    program = pte.read_pte(OPS / "m3" / "conv.pte")
    [(index, needs)] = [(f.index, f.scratch[0].needs) for f in forms.call_forms(program.methods[0])
                        if f.scratch and f.scratch[0].planned == 128][:1]
    edited = tmp_path / "conv.pte"
    op = _with_scratch(OPS / "m3" / "conv.pte", edited, index, 8)
    result = scons("board=qemu", "model=%s" % edited, "cmsis_nn=%s" % cmsis_nn,
                   build_dir=tmp_path / "build")
    out = result.stdout
    assert result.returncode != 0 and "Traceback" not in out, out
    [line] = [l for l in out.splitlines() if l.startswith("scons: ***")]
    for phrase in ("kernel call %d" % index, op, "holds 8 bytes", "the %d bytes" % needs,
                   str(edited), "export it again"):
        assert phrase in line, (phrase, line)
    assert "Compiling" not in out


def test_a_temp_pool_too_small_for_the_forms_is_refused(et_root, cmsis_nn, tmp_path):
    result = scons("board=qemu", "model=%s" % (OPS / "conv.pte"), "temp_pool=32",
                   "cmsis_nn=%s" % cmsis_nn, build_dir=tmp_path)
    assert result.returncode != 0 and "Traceback" not in result.stdout, result.stdout
    [line] = [l for l in result.stdout.splitlines() if l.startswith("scons: ***")]
    assert "temp_pool=32" in line and "temp_pool=64" in line, line
    assert "Compiling" not in result.stdout


# ---------------------------------------------------------------- ExecuTorch's own example

MOBILENET_V2 = REPO / "examples" / "models" / "mobilenet_v2" / "mobilenet_v2.bpte"


@needs_qemu
def test_mobilenet_v2_exported_as_executorchs_notebook_passes_its_test_case(
        et_root, cmsis_nn, tmp_path):
    """MobileNetV2 at 224x224 through ExecuTorch's notebook (the default target, a
    bundled program with the reference as its expected output) passes on QEMU, exactly.
    Its input is channels-last, which BundledProgram stores in logical order and
    ExecuTorch's load_bundled_input copies as it is: the runner lays it out again."""
    program = pte.read_pte(MOBILENET_V2)
    [case] = program.bundle.test_suites["forward"]
    assert case.inputs[0].dim_order != program.methods[0].inputs[0].dim_order
    result = scons("board=qemu", "model=%s" % MOBILENET_V2, "cmsis_nn=%s" % cmsis_nn, "lto=0",
                   "run", "timeout=900", build_dir=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:]
    assert re.search(r"^Test case 0: PASS max \|diff\| 0 at", result.stdout, re.M), \
        result.stdout[-3000:]
    assert "exported for MVE" in result.stdout
