"""Bundled programs (.bpte: ExecuTorch's devtools/bundled_program, identifier BP08) run
and checked on the target, and profile=etdump (ExecuTorch's ETDumpGen, decoded by
`scons run`, opened by the Inspector)."""

import base64
import os
import re
import shutil
import struct

import pytest

from etcorev import pte
from etcorev.pte import program as pte_program
from etcorev.pte import flatbuf
from etcorev.run import bundled, etdump, models
from conftest import executorch_root
from etcorev.executorch.flatcc import has_flatcc
from sconsrun import MODELS, NO_TESTBENCH, model_entry, model_names, scons, have_testbench

needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                                reason="qemu-system-riscv32 missing (./setup.sh installs it)")
BUNDLES = "model=%s" % (MODELS / "*.bpte")



def _summary(output):
    """{model: (status, outputs column)} of the summary table `scons run` ends with."""
    table = output[output.index("Summary ("):].splitlines()[2:]
    rows = {}
    for line in table:
        cells = line.split()
        if len(cells) > 3 and cells[0].endswith(".bpte"):
            rows[cells[0]] = (cells[1], " ".join(cells[-4:]))
    return rows


def _patched(source, target, case, output, index, delta):
    """A copy of the bundled program `source` whose expected output `output` of test
    case `case` has `delta` added to element `index` (float32)."""
    data = bytearray(source.read_bytes())
    reader = pte_program._Reader(memoryview(bytes(data)), len(data), source.name, pte_program._BUNDLE_SCHEMA)
    root = flatbuf.Table(reader, struct.unpack_from("<I", data, 0)[0], "BundledProgram", "root")
    test_case = root.tables("method_test_suites")[0].tables("test_cases")[case]
    tensor = test_case.tables("expected_outputs")[output].union("val")[1]
    start = tensor._vector("data")[0] + 4 * index
    value = struct.unpack_from("<f", data, start)[0]
    struct.pack_into("<f", data, start, value + delta)
    target.write_bytes(bytes(data))
    return value, value + delta


# ---------------------------------------------------------------- the reader

@pytest.mark.quick
@pytest.mark.parametrize("name", model_names())
def test_reader_gives_the_bundled_programs_operators(name):
    """The pte reader reads a .bpte's program (its `program` field) for kernel
    selection: the same operators and kernel keys as NAME.pte."""
    path = MODELS / ("%s.bpte" % name)
    program = pte.validate_pte(path)
    entry = model_entry(name)
    assert program.is_bundled and not pte.validate_pte(MODELS / ("%s.pte" % name)).is_bundled
    assert program.operators == entry["operators"]
    assert program.kernel_keys == entry["kernel_keys"]
    assert program.size == path.stat().st_size
    inner = path.read_bytes()[program.bundle.program_offset:][:program.bundle.program_size]
    assert inner[4:8] == b"ET12" and program.bundle.program_offset % 16 == 0
    cases = program.bundle.test_suites["forward"]
    assert len(cases) == 2
    method = program.methods[0]
    for case in cases:
        assert [s.describe() for s in case.inputs] == [s.describe() for s in method.inputs]
        assert [s.describe() for s in case.expected] == [s.describe() for s in method.outputs]


@pytest.mark.quick
def test_reader_refuses_a_damaged_bundle(tmp_path):
    data = (MODELS / "cnn.bpte").read_bytes()
    path = tmp_path / "cut.bpte"
    path.write_bytes(data[:len(data) // 2])
    with pytest.raises(pte.PteError, match="cut.bpte"):
        pte.validate_pte(path)
    with pytest.raises(pte.PteError, match="'BP08'"):
        pte.read_pte(b"GIF89a" + bytes(64))


@pytest.mark.quick
def test_model_sets_take_bundles(tmp_path):
    """A bundle builds into NAME.bpte/ (beside NAME.pte's NAME/); a directory gives its
    .pte files, or its .bpte files when it has none; a glob pattern works too."""
    both = models.model_set("%s,%s" % (MODELS / "add.pte", MODELS / "add.bpte"))
    assert [m.name for m in both] == ["add", "add.bpte"]
    assert both[1].etrecord is None and both[1].expected.endswith("add.expected.json")
    assert [m.name for m in models.model_set(str(MODELS))] == model_names()
    only = tmp_path / "bundles"
    only.mkdir()
    for name in ("add", "cnn"):
        os.symlink(MODELS / ("%s.bpte" % name), only / ("%s.bpte" % name))
    assert [m.name for m in models.model_set(str(only))] == ["add.bpte", "cnn.bpte"]
    globbed = models.model_set(str(MODELS / "*.bpte"))
    assert [m.name for m in globbed] == ["%s.bpte" % n for n in model_names()]
    assert next(m for m in globbed if m.name == "cnn.bpte").etrecord.endswith("cnn.etrecord")


@pytest.mark.quick
def test_the_etrecord_names_no_machines_paths():
    """cnn.etrecord (for the Inspector) keeps its graphs' stack traces, files named
    relative to the checkout or site-packages."""
    import zipfile
    with zipfile.ZipFile(MODELS / "cnn.etrecord") as etrecord:
        graphs = [etrecord.read(name) for name in etrecord.namelist()]
    assert any(b'File \\"examples/models/export.py\\"' in graph for graph in graphs)
    assert not any(b'File \\"/' in graph for graph in graphs)


@pytest.mark.quick
def test_test_case_lines_are_read_back():
    text = ("Test case 0: PASS max |diff| 0 at output 0 index 0\n"
            "Test case 1: FAIL output 0 index 3: expected 0.5, got -0.5 (max |diff| 1 at "
            "output 0 index 3)\n")
    assert bundled.check(text, 2) == ("test case 1 failed: output 0 index 3: expected 0.5, "
                                      "got -0.5 (max |diff| 1 at output 0 index 3); 1 of 2 "
                                      "test cases failed")
    assert bundled.summary(text, 2) == "1/2 test cases passed"
    assert bundled.check(text.splitlines()[0] + "\n", 2).startswith("the program reported 1")
    assert bundled.check(text.splitlines()[0] + "\n", 1) is None


@pytest.mark.quick
def test_etdump_text_is_decoded():
    data = bytes(range(256)) * 3
    encoded = base64.b64encode(data).decode()
    lines = [encoded[i:i + 76] for i in range(0, len(encoded), 76)]
    text = "\n".join(["Cycles execute: 5", "ETDump: %d bytes (buffer 9)" % len(data),
                      "#[RUN THIS]", "# Writing etdump.bin [base64]",
                      "base64 -d >etdump.bin <<'EOF'"] + lines + ["EOF", "#[END]", "Output 0"])
    assert etdump.extract(text) == data
    short = etdump.without_payload(text, "/x/executor_runner.etdp")
    assert encoded[:76] not in short and "decoded into /x/executor_runner.etdp" in short
    assert etdump.extract("no dump here") is None
    with pytest.raises(etdump.ETDumpError):
        etdump.extract(text.replace(lines[1], lines[1][:-3] + "!!!"))


# ---------------------------------------------------------------- build and run

def test_inputs_option_is_refused_for_a_bundle(et_root, tmp_path):
    result = scons("board=qemu", "model=%s" % (MODELS / "add.bpte"),
                   "inputs=%s" % (MODELS / "add.inputs.json"), build_dir=tmp_path)
    assert result.returncode == 2, result.stdout
    errors = [line for line in result.stdout.splitlines() if line.startswith("scons: ***")]
    assert len(errors) == 1 and "carries its own test cases" in errors[0], result.stdout
    assert "Compiling" not in result.stdout and "Traceback" not in result.stdout


@pytest.mark.long(minutes=0.7)
@needs_qemu
def test_every_bundle_passes_on_qemu(et_root, toolchain, tmp_path):
    """Every model of examples/models as a .bpte: each test case run and checked on the
    target, one line each; the summary says so."""
    result = scons("board=qemu", "toolchain=%s" % toolchain, BUNDLES, "run",
                   build_dir=tmp_path)
    assert result.returncode == 0, result.stdout[-4000:]
    rows = _summary(result.stdout)
    assert sorted(rows) == ["%s.bpte" % name for name in model_names()], result.stdout[-3000:]
    assert all(row == ("ok", "2/2 test cases passed") for row in rows.values()), rows
    passes = re.findall(r"^Test case (\d): PASS max \|diff\| \S+ at output 0 index \d+$",
                        result.stdout, re.M)
    assert sorted(passes) == sorted(["0", "1"] * len(rows)), result.stdout
    # The bundled-program runtime, compiled from the tree for them.
    assert list(tmp_path.glob("qemu-*/et/libbundled_program.a"))


@needs_qemu
def test_a_wrong_expected_value_fails_naming_the_case_and_index(et_root, tmp_path):
    wrong = tmp_path / "mul_add.bpte"
    expected, changed = _patched(MODELS / "mul_add.bpte", wrong, case=1, output=0, index=3,
                                 delta=0.5)
    result = scons("board=qemu", "model=%s" % wrong, "run", build_dir=tmp_path / "build")
    assert result.returncode == 1, result.stdout[-3000:]
    assert "Traceback" not in result.stdout
    assert re.search(r"^Test case 0: PASS", result.stdout, re.M), result.stdout[-3000:]
    failed = [line for line in result.stdout.splitlines() if line.startswith("Run failed:")]
    assert len(failed) == 1, result.stdout[-3000:]
    assert failed[0].startswith("Run failed: test case 1 failed: output 0 index 3: "
                                "expected %r, got %r" % (changed, expected)), failed[0]


@needs_qemu
def test_an_expected_infinity_fails_against_a_finite_output(et_root, tmp_path):
    """The firmware's check took diff <= atol + rtol * |expected|, whose right side is
    infinite for an expected infinity: a test case expecting inf passed with any finite
    output (or -inf), exit status 0. Now, as numpy.allclose, an infinity matches the
    same infinity only."""
    wrong = tmp_path / "mul_add.bpte"
    _patched(MODELS / "mul_add.bpte", wrong, case=0, output=0, index=1, delta=float("inf"))
    result = scons("board=qemu", "model=%s" % wrong, "run", build_dir=tmp_path / "build")
    assert result.returncode == 1, result.stdout[-3000:]
    failed = [line for line in result.stdout.splitlines() if line.startswith("Run failed:")]
    assert len(failed) == 1, result.stdout[-3000:]
    assert failed[0].startswith("Run failed: test case 0 failed: output 0 index 1: "
                                "expected inf, got "), failed[0]


@needs_qemu
def test_a_bundle_runs_in_place_from_the_model_region(et_root, tmp_path):
    result = scons("board=qemu", "model=%s" % (MODELS / "cnn.bpte"), "model_placement=external",
                   "run", build_dir=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:]
    assert len(re.findall(r"^Test case \d: PASS", result.stdout, re.M)) == 2
    assert next(tmp_path.glob("*-xip/cnn.bpte/executor_runner.model.hex")).is_file()


@pytest.mark.long(minutes=0.5)
def test_every_bundle_passes_on_the_testbench(et_root, tmp_path):
    if not have_testbench():
        pytest.skip(NO_TESTBENCH)
    result = scons("board=cv32e40p", BUNDLES, "run", build_dir=tmp_path)
    assert result.returncode == 0, result.stdout[-4000:]
    rows = _summary(result.stdout)
    assert sorted(rows) == ["%s.bpte" % name for name in model_names()], result.stdout[-3000:]
    assert all(row == ("ok", "2/2 test cases passed") for row in rows.values()), rows


# ---------------------------------------------------------------- profile=etdump

@pytest.fixture(scope="module")
def etdump_run(flatcc_tree, tmp_path_factory):
    if not shutil.which("qemu-system-riscv32"):
        pytest.skip("qemu-system-riscv32 missing (./setup.sh installs it)")
    build_dir = tmp_path_factory.mktemp("etdump")
    result = scons("board=qemu", "model=%s" % (MODELS / "cnn.pte"), "profile=etdump",
                   "executorch=%s" % flatcc_tree, "run", build_dir=build_dir)
    assert result.returncode == 0, result.stdout[-4000:]
    return result.stdout, build_dir


@pytest.mark.long(minutes=1)
def test_etdump_is_decoded_beside_the_firmware(etdump_run):
    output, build_dir = etdump_run
    variant = next(build_dir.glob("qemu-*-etdump"))
    dump = variant / "cnn" / "executor_runner.etdp"
    assert dump.is_file() and dump.stat().st_size > 200
    assert "#[RUN THIS]" in output and "#[END]" in output
    assert "decoded into %s" % dump in output
    # flatcc's schema compiler, built for this machine once per tree, outside the variant.
    assert list(build_dir.glob("host/flatcc-*/flatcc"))
    assert not list(variant.rglob("flatcc_cli.o"))
    # The outputs are still printed and checked.
    assert "Output 0: float32[1,10]" in output


def test_the_inspector_lists_cnns_operators_with_cycles(etdump_run):
    pytest.importorskip("executorch.devtools", reason="the export extra is not installed "
                        "(./setup.sh --export)")
    import warnings
    from executorch.devtools import Inspector
    from executorch.devtools.inspector import TimeScale

    output, build_dir = etdump_run
    dump = next(build_dir.glob("qemu-*-etdump/cnn/executor_runner.etdp"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inspector = Inspector(etdump_path=str(dump), etrecord=str(MODELS / "cnn.etrecord"),
                              source_time_scale=TimeScale.CYCLES,
                              target_time_scale=TimeScale.CYCLES)
    block = next(b for b in inspector.event_blocks if b.name == "Execute")
    kernels = {e.name: e.perf_data.raw[0] for e in block.events
               if e.name.startswith("native_call_")}
    operators = model_entry("cnn")["operators"]
    assert sorted(kernels) == sorted("native_call_" + op.split("::")[1] for op in operators)
    assert all(cycles > 0 for cycles in kernels.values()), kernels
    # `scons run` printed the Inspector's table, with them.
    table = output[output.index("Inspector (ExecuTorch devtools; with cnn.etrecord)"):]
    for name in kernels:
        assert name in table, name
    assert "(cycles)" in table


def test_etdump_without_flatcc_is_one_clear_error(et_root, tmp_path):
    """A tree whose third-party/flatcc submodule is not initialised: one sentence that
    says what to run, before anything is compiled."""
    tree = executorch_root()
    if has_flatcc(str(tree)):            # a copy of it without the submodule's files
        copy = tmp_path / "src" / "executorch"
        copy.mkdir(parents=True)
        for entry in tree.iterdir():
            if entry.name != "third-party":
                os.symlink(entry, copy / entry.name)
        (copy / "third-party" / "flatcc").mkdir(parents=True)
        for entry in (tree / "third-party").iterdir():
            if entry.name != "flatcc":
                os.symlink(entry, copy / "third-party" / entry.name)
        tree = copy
    result = scons("board=qemu", "model=%s" % (MODELS / "cnn.pte"), "profile=etdump",
                   "executorch=%s" % tree, "run", build_dir=tmp_path / "build")
    assert result.returncode == 2, result.stdout
    errors = [line for line in result.stdout.splitlines() if line.startswith("scons: ***")]
    assert len(errors) == 1, result.stdout
    assert "git submodule update --init third-party/flatcc" in errors[0]
    assert "Traceback" not in result.stdout and "Compiling" not in result.stdout
