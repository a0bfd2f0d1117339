"""Model sets: `model=` names several models (a directory, a list); one invocation builds
a firmware per model, shares what they have in common, runs them all and checks each
against its NAME.expected.json, ending with a summary table."""

import json
import re
import shutil

import pytest

from sconsrun import MODELS, scons

SET = ("add", "mul_add", "int_ops")      # add.out on float (twice) and on int32
needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                                reason="qemu-system-riscv32 missing (./setup.sh installs it)")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """Three of the test models (examples/models), each with its NAME.inputs.json and
    NAME.expected.json."""
    directory = tmp_path_factory.mktemp("set")
    for name in SET:
        for suffix in (".pte", ".inputs.json", ".expected.json"):
            shutil.copy(MODELS / (name + suffix), directory / (name + suffix))
    return directory


@pytest.fixture(scope="module")
def set_run(et_root, model_dir, tmp_path_factory):
    build_dir = tmp_path_factory.mktemp("set-build")
    result = scons("board=qemu", "corev_kernels=0", "model=%s" % model_dir, "run",
                   build_dir=build_dir)
    return build_dir, result


@needs_qemu
def test_a_directory_of_models_runs_with_a_summary(set_run):
    _, result = set_run
    assert result.returncode == 0, result.stdout
    summary = result.stdout[result.stdout.index("Summary (3 models"):]
    for name in SET:
        row = re.search(r"^%s\s+ok\s+(\d+\s+){5}\d+/\d+\s+ok$" % name, summary, re.M)
        assert row, summary


@needs_qemu
def test_kernel_objects_are_shared_by_dtype_selection(set_run):
    """op_add.cpp compiles once for float32 (add.pte and mul_add.pte share it: their
    kernel keys differ only in dim order) and once for int32 (int_ops.pte): a kernel
    compiled for one dtype selection is never linked into a model that needs another."""
    build_dir, result = set_run
    assert result.returncode == 0, result.stdout
    # The objects the build made (compiled, or retrieved from the test run's cache).
    (variant,) = [d for d in build_dir.iterdir() if d.is_dir()]
    objects = [p.name for p in variant.rglob("kernels/portable/cpu/op_*.o")]
    assert objects.count("op_add.o") == 2, objects
    assert objects.count("op_mul.o") == 2, objects              # float (mul_add), int (int_ops)
    assert objects.count("op_sub.o") == 1, objects
    # The runtime core is compiled once for the three.
    assert len(list(variant.rglob("runtime/executor/method.o"))) == 1


@needs_qemu
def test_a_models_own_runner_object_reads_none_of_the_runtimes_headers(set_run):
    """What is compiled for each model of a set is cheap: runner_model.cpp holds the
    model's data only (with the runtime's headers it took 0.6 s of a core per model,
    most of a 40-model set's runner); the runner's functions for the models' features
    are compiled once for the three (runner/io-00: planned inputs and outputs, static
    shapes)."""
    build_dir, result = set_run
    assert result.returncode == 0, result.stdout
    (variant,) = [d for d in build_dir.iterdir() if d.is_dir()]
    assert [p.parent.name for p in variant.rglob("runner_model_io.o")] == ["io-00"]
    for name in SET:
        target = variant / name / "runner" / "runner_model.o"
        tree = scons("board=qemu", "corev_kernels=0", "model=%s" % (MODELS / ("%s.pte" % name)),
                     "--tree=all,prune", str(target), build_dir=build_dir).stdout
        assert "runner_model_data.h" in tree and "runtime/core/span.h" in tree, tree
        for heavy in ("runtime/executor/method.h", "runtime/core/evalue.h",
                      "runtime/core/memory_allocator.h"):
            assert heavy not in tree, (name, heavy, tree)


@needs_qemu
def test_one_wrong_expected_value_fails_the_run_naming_it(set_run, model_dir, tmp_path):
    build_dir, _ = set_run
    wrong = tmp_path / "set"
    shutil.copytree(model_dir, wrong)
    expected = json.loads((wrong / "mul_add.expected.json").read_text())
    expected[0]["values"][3] = 0.5                       # eager PyTorch says -0.5
    (wrong / "mul_add.expected.json").write_text(json.dumps(expected))
    result = scons("board=qemu", "corev_kernels=0", "model=%s" % wrong, "run",
                   build_dir=build_dir)
    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stdout
    assert ("Run failed: outputs: output 0 differs first at index 3: expected 0.5, got -0.5 "
            "(mul_add.expected.json)") in result.stdout, result.stdout
    summary = result.stdout[result.stdout.index("Summary (3 models"):]
    assert re.search(r"^mul_add\s+FAIL 1\s", summary, re.M), summary
    assert re.search(r"^add\s+ok\s", summary, re.M), summary


@pytest.mark.parametrize("got, expected, same", [
    ("inf,-inf,nan,1", [float("inf"), float("-inf"), float("nan"), 1.0], True),
    ("-inf", [float("inf")], False),
    ("inf", [3.0e38], False),
    ("1", [float("inf")], False),
    ("-3e38", [float("-inf")], False),
    ("nan", [0.0], False),
    ("0", [float("nan")], False),
])
def test_the_output_check_takes_infinities_as_numpy_allclose_does(got, expected, same):
    """The check took |got - expected| <= atol + rtol * |expected|: for an expected
    infinity the right side is infinite, so any finite value and the other infinity
    passed (exit status 0 for a wrong output), and two equal infinities failed ("expected
    -inf, got -inf": inf - inf is NaN). As numpy.allclose: an infinity matches the same
    infinity only, NaN matches NaN only; tests/models/programs/infinities runs such a
    program."""
    from etcorev.pte import model_io
    printed = model_io.parse_outputs("Output 0: float32[%d] %s\n" % (len(expected), got))
    difference = model_io.compare(printed, [model_io.Tensor("float32", [len(expected)],
                                                           expected)], 1e-6, 1e-5)
    assert (difference is None) == same, difference


@pytest.mark.parametrize("got, dtype, expected, same", [
    ("9007199254740993", "int64", [9007199254740992], False),
    ("9007199254740993", "int64", [9007199254740993], True),
    ("-9223372036854775808", "int64", [-9223372036854775807], False),
    ("1,2", "int32", [1, 2, 3], False),
])
def test_the_output_check_compares_int64_values_exactly(got, dtype, expected, same):
    """Printed values were read as Python floats: above 2**53 an int64 output one off
    from the expected value compared equal (exit status 0 for a wrong output), and the
    right one could differ. A line with fewer values than its shape says also passed
    on the values it had."""
    from etcorev.pte import model_io
    printed = model_io.parse_outputs("Output 0: %s[%d] %s\n" % (dtype, len(expected), got))
    difference = model_io.compare(printed, [model_io.Tensor(dtype, [len(expected)], expected)],
                                  1e-6, 1e-5)
    assert (difference is None) == same, difference
