"""Never a wrong answer in silence: every bad or unusual input gets one clear `scons: ***`
paragraph (or, for a program that fails, the program's own status), never a traceback,
never a partial result. Each case names the key words its message must hold."""

import json
import math
import re
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from etcorev.pte import program as pte_program
from etcorev.pte import flatbuf
from sconsrun import (MODELS, REPO, TEST_CACHE, assert_progress_rises_to_100, assert_refused,
                      export_program, scons)

ADD = REPO / "examples" / "models" / "add.pte"
needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                                reason="qemu-system-riscv32 missing (./setup.sh installs it)")


def tensors(*specs):
    return [{"dtype": dtype, "shape": shape, "values": [1] * (shape[0] if shape else 1)}
            for dtype, shape in specs]


def corrupt_output_list(data):
    """add.pte with its method's output list emptied (the flatbuffer stays valid)."""
    data = bytearray(data)
    reader = pte_program._Reader(memoryview(data), len(data), "add")
    program = flatbuf.Table(reader, struct.unpack_from("<I", data, 0)[0], "Program", "Program")
    start, _, _, _ = program.tables("execution_plan")[0]._vector("outputs")
    struct.pack_into("<I", data, start - 4, 0)
    return bytes(data)


@pytest.fixture
def files(tmp_path):
    """Inputs, models and paths for the cases, in tmp_path."""
    def write(name, content):
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content if isinstance(content, str) else json.dumps(content))
        return path
    (tmp_path / "empty-dir").mkdir()
    write("int-inputs.json", tensors(("int32", [5]), ("int32", [5])))
    write("shape-inputs.json", tensors(("float32", [4]), ("float32", [5])))
    write("one-input.json", tensors(("float32", [5])))
    write("three-inputs.json", tensors(("float32", [5]), ("float32", [5]), ("float32", [5])))
    write("not-json.json", "[{'dtype': 'float32'")
    write("a-file", "not a directory\n")
    write("no-outputs.pte", corrupt_output_list(ADD.read_bytes()))
    write('quote"model.pte', ADD.read_bytes())
    write("dollar$model.pte", ADD.read_bytes())
    write("huge-inputs.json", [{"dtype": "float32", "shape": [5], "values": [1e39, 1, 1, 1, 1]},
                               {"dtype": "float32", "shape": [5], "values": [1] * 5}])
    write("object.json", {"dtype": "float32", "shape": [5], "values": [2] * 5})
    return tmp_path


# option, then the key words of the one-line message
REFUSED = [
    ("num_executions=abc", ["num_executions", "'abc'", "whole number", "at least 1"]),
    ("num_executions=0", ["num_executions", "'0'", "at least 1"]),
    ("num_executions=-3", ["num_executions", "'-3'", "at least 1"]),
    ("method_pool=abc", ["method_pool", "'abc'", "at least 64", "empty for the default"]),
    ("temp_pool=abc", ["temp_pool", "'abc'", "whole number"]),
    ("model_align=24", ["model_align", "'24'", "power of two"]),
    ("model_align=8", ["model_align", "'8'", "at least 16"]),
    ("clock_hz=0", ["clock_hz", "'0'", "at least 1"]),
    ("clock_hz=fast", ["clock_hz", "'fast'"]),
    ("timeout=never", ["timeout", "'never'", "a finite number"]),
    ("ops=", ["ops", "must not be empty"]),
    ("ops=aten::not_an_op.out", ["aten::not_an_op.out", "not in any kernel library"]),
    ("model={files}/missing.pte", ["missing.pte", "not found"]),
    ("model={files}/empty-dir", ["empty-dir", "holds no .pte"]),
    ("model={files}/no-outputs.pte", ["no-outputs.pte", "no outputs"]),
    ('model={files}/quote"model.pte', ["model", "'\"'", "rename or move it"]),
    ("model={files}/dollar$model.pte", ["model", "'$'", "rename or move it"]),
    ("build_dir={files}/a-file", ["a-file", "names a file"]),
    ("build_dir=", ["build_dir", "must not be empty"]),
    ("app={files}/missing-app", ["app=", "missing-app", "is not a directory"]),
    ("kernels={files}/missing-kernels", ["kernels=", "missing-kernels", "does not exist"]),
    ("kernels={files}/a-file", ["kernels=", "a-file", "is a file, not a directory"]),
    ("app={files}/a-file", ["app=", "a-file", "is not a directory"]),
    ("app={files}/empty-dir", ["app=", "empty-dir", "holds no .c, .cpp or .S file"]),
    ("cache={files}/a-file/cache", ["cache directory", "a-file/cache", "Not a directory"]),
    ("timeout=-1", ["timeout", "'-1'", "at least 1"]),
    ("inputs={files}/int-inputs.json", ["Input 0", "int32[5]", "expects float32[5]"]),
    ("inputs={files}/shape-inputs.json", ["Input 0", "float32[4]", "expects float32[5]"]),
    ("inputs={files}/one-input.json", ["gives 1 input", "takes 2", "input 1: float32[5]"]),
    ("inputs={files}/three-inputs.json", ["gives 3 inputs", "takes 2"]),
    ("inputs={files}/not-json.json", ["Cannot read inputs", "not valid JSON"]),
    ("inputs={files}/missing.json", ["Cannot read inputs", "missing.json"]),
    ("toolchain=x86_64-linux-gnu-", ["x86_64-linux-gnu-gcc", "not a RISC-V compiler"]),
    ("toolchain=nonexistent-prefix-", ["No RISC-V cross compiler found",
                                       "nonexistent-prefix-gcc"]),
    # Round two: integers that would wrap in the C type they become.
    ("num_executions=4294967297", ["num_executions", "'4294967297'", "at most 2147483647"]),
    ("num_executions=99999999999999999999", ["num_executions", "at most 2147483647"]),
    ("temp_pool=999999999999", ["temp_pool", "'999999999999'", "at most 2147483647"]),
    ("method_pool=4294967296", ["method_pool", "at most 2147483647"]),
    ("clock_hz=4294967296", ["clock_hz", "at most 4294967295"]),
    ("max_cycles=2147483648", ["max_cycles", "at most 2147483647"]),
    ("model_align=4294967296", ["model_align", "at most"]),
    # Numbers that are not finite or too large for a timer, tolerances that switch the
    # check off.
    ("timeout=inf", ["timeout", "'inf'", "at most"]),
    ("timeout=nan", ["timeout", "'nan'", "a finite number"]),
    ("timeout=1e12", ["timeout", "'1e12'", "at most"]),
    ("timeout=3000000", ["timeout", "'3000000'", "at most"]),
    ("rtol=nan", ["rtol", "'nan'", "a finite number"]),
    ("atol=inf", ["atol", "'inf'", "a finite number"]),
    ("rtol=-1", ["rtol", "'-1'", "at least 0"]),
    # Values and files that broke after the build, or with a traceback.
    ("inputs={files}/huge-inputs.json", ["Input 0", "does not fit float32"]),
    ("expected={files}/not-json.json", ["Cannot read outputs", "expected=", "not valid JSON"]),
    ("expected={files}/missing.json", ["Cannot read outputs", "expected=", "missing.json"]),
    ("expected={files}/object.json", ["Cannot read outputs", "expected=", "not a list"]),
    ("expected={files}/int-inputs.json", ["expected=", "2 outputs", "has 1"]),
    # Options that contradict each other or the model.
    ("debug=1 build_type=Release", ["debug=1", "build_type=Release"]),
    ("ops=aten::mul.out", ["ops=", "aten::add.out", "add.pte"]),
    # The CORE-V extensions on a board whose core has none of them.
    ("board=qemu isa=rv32imc_xcv", ["isa=rv32imc_xcv", "board=qemu", "CORE-V extensions"]),
    # Activations larger than the board: refused before compiling, naming the parts.
    ("board=cv32e40p model=%s" % (REPO / "tests" / "models" / "memory" / "wide_add.pte"),
     ["wide_add.pte", "does not fit board=cv32e40p", "planned memory", "14,400,000",
      "4,194,304"]),
]


@pytest.mark.parametrize("option, phrases", REFUSED, ids=[r[0].split("{")[0] + r[0].split("/")[-1]
                                                          for r in REFUSED])
def test_refused_with_one_line(et_root, files, option, phrases):
    if option.startswith("toolchain=x86") and not shutil.which("x86_64-linux-gnu-gcc"):
        pytest.skip("no x86_64-linux-gnu-gcc to name")
    build_dir = files / "build"
    args = option.format(files=files).split(" ")
    if not option.startswith("build_dir="):
        args.append("build_dir=%s" % build_dir)
    result = scons(*args, build_dir=None)
    assert_refused(result, *phrases)
    if not option.startswith("build_dir="):
        assert not build_dir.exists()       # refused before anything was made


def test_several_models_take_no_inputs_option(et_root, tmp_path):
    (tmp_path / "set").mkdir()
    for name in ("a", "b"):
        shutil.copy(ADD, tmp_path / "set" / ("%s.pte" % name))
    (tmp_path / "in.json").write_text(json.dumps(tensors(("float32", [5]), ("float32", [5]))))
    result = scons("model=%s" % (tmp_path / "set"), "inputs=%s" % (tmp_path / "in.json"),
                   build_dir=tmp_path / "build")
    assert_refused(result, "inputs= and expected= are for a single model", "NAME.inputs.json")


# ---------------------------------------------------------------- programs that fail

@needs_qemu
def test_run_ends_with_the_programs_status_and_names_the_option(et_root, tmp_path):
    """A method pool too small: the runtime's error by name, the option to change, and
    scons ends with the program's status (1), not a TypeError and 2."""
    result = scons("board=qemu", "method_pool=64", "run", build_dir=tmp_path)
    out = result.stdout
    assert result.returncode == 1, out
    assert "Traceback" not in out
    assert "Run failed: load_method failed with MemoryAllocationFailed (0x21): " in out, out
    assert "method_pool=" in out.split("Run failed: load_method", 1)[1].splitlines()[0]
    assert "Exit status: 1" in out


@needs_qemu
def test_a_hanging_program_is_stopped(tmp_path):
    result = scons("board=qemu", "app=tests/fixtures/hang", "timeout=3", "run",
                   build_dir=tmp_path)
    assert result.returncode == 124, result.stdout
    assert "looping" in result.stdout
    assert "stopped after timeout=3 s" in result.stdout
    assert "Traceback" not in result.stdout


def test_an_install_dir_that_cannot_be_made_is_refused_before_building(et_root, files):
    """`scons install` into a path under a file: one line naming the option, before
    anything is built (SCons itself would fail at the copy, after the whole build)."""
    result = scons("install", "install_dir=%s" % (files / "a-file" / "install"),
                   build_dir=files / "build")
    assert_refused(result, "install_dir=", "a-file", "not a directory")


def test_a_simulator_that_cannot_start_is_named_with_its_option(tmp_path):
    missing = tmp_path / "no-such" / "Vtb_top_verilator"
    result = scons("board=cv32e40p", "app=tests/fixtures/cxx_smoke", "run",
                   "verilator_model=%s" % missing, build_dir=tmp_path / "build")
    assert result.returncode != 0, result.stdout
    errors = [line for line in result.stdout.splitlines() if line.startswith("scons: ***")]
    assert len(errors) == 1, result.stdout
    for phrase in ("verilator_model=%s" % missing, "No such file or directory"):
        assert phrase in errors[0], result.stdout


def test_an_image_that_does_not_fit_is_never_published(et_root, tmp_path):
    """Bigger than the board with its code, though the model alone passes the early
    check: the link fails, the ELF and map are removed, nothing is installed."""
    big = tmp_path / "big.pte"
    # 8 KiB short of the board's 4 MiB: less than the runner's stack alone (64 KiB short
    # fitted once the dtype selection left add's other dtypes' code out).
    big.write_bytes(ADD.read_bytes() + bytes(4 * 1024 * 1024 - 8 * 1024))
    install = tmp_path / "install"
    result = scons("board=cv32e40p", "model=%s" % big, "install_dir=%s" % install, "install",
                   build_dir=tmp_path / "build")
    assert result.returncode != 0
    assert "does not fit" in result.stdout and "Traceback" not in result.stdout
    assert not list((tmp_path / "build").rglob("executor_runner.elf"))
    assert not list((tmp_path / "build").rglob("executor_runner.map"))
    assert not install.exists() or not list(install.iterdir())


# ---------------------------------------------------------------- the tree, the build dir

def _snapshot(root):
    """Every path under root with its size and a checksum of its content."""
    import hashlib
    entries = {}
    for directory, dirs, names in os.walk(root):
        for name in dirs:
            entries[os.path.relpath(os.path.join(directory, name), root) + "/"] = None
        for name in names:
            path = os.path.join(directory, name)
            if os.path.islink(path):
                entries[os.path.relpath(path, root)] = os.readlink(path)
            else:
                with open(path, "rb") as f:
                    entries[os.path.relpath(path, root)] = hashlib.sha1(f.read()).hexdigest()
    return entries


@pytest.fixture(scope="module")
def build_with_a_tree_copy(et_root, tmp_path_factory):
    """A clean build of qmlp.pte (codegen, the portable, quantized and CORE-V kernels,
    the runtime, the runner) with a copy of the tree, byte-code writing on: (tree, its
    listing and checksums before, the build's output)."""
    qmlp = MODELS / "qmlp.pte"
    top = tmp_path_factory.mktemp("tree-copy")
    tree = top / "src" / "executorch"
    shutil.copytree(et_root, tree, symlinks=True)
    before = _snapshot(tree)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # A cache of its own, empty: this build compiles everything (from the copy), and
    # test_a_tree_elsewhere_retrieves_from_the_cache builds from the test run's tree
    # with this cache afterwards.
    options = ("board=qemu", "executorch=%s" % tree, "model=%s" % qmlp)
    result = scons(*options, "cache=%s" % (top / "cache"), build_dir=top / "build", env=env)
    shared = os.environ.get(TEST_CACHE)
    if result.returncode == 0 and shared:
        # Its objects are those a build with the test run's tree compiles (the tree's
        # place is not in their key): into the test run's cache for the builds to come.
        populate = scons(*options, "cache=%s" % shared, "--cache-populate",
                         build_dir=top / "build", env=env)
        assert populate.returncode == 0 and "Compiling" not in populate.stdout, populate.stdout
    return tree, before, result


def test_no_build_writes_into_the_executorch_tree(build_with_a_tree_copy):
    """A build that runs ExecuTorch's codegen leaves the tree exactly as it was."""
    tree, before, result = build_with_a_tree_copy
    assert result.returncode == 0, result.stdout
    assert "Generating" in result.stdout          # codegen ran
    after = _snapshot(tree)
    assert sorted(set(after) - set(before)) == []
    assert sorted(k for k in before if before[k] != after.get(k)) == []


def test_a_build_prints_no_compiler_warnings(build_with_a_tree_copy):
    """No warning in a clean build's output. ExecuTorch's sources compile without -Wall,
    as in its own CMake build (its quantized kernels gave hundreds of lines); ours with."""
    _, _, result = build_with_a_tree_copy
    assert result.returncode == 0, result.stdout
    for source in ("executorch/kernels/quantized/cpu/op_quantize.cpp",
                   "executorch/runtime/executor/method.cpp", "kernels/corev/op_addmm.cpp",
                   "examples/corev/executor_runner/corev_executor_runner.cpp"):
        assert "Compiling %s" % source in result.stdout, (source, result.stdout)
    warnings = [line for line in result.stdout.splitlines() if "warning:" in line]
    assert warnings == [], "\n".join(warnings[:20])


def test_a_tree_elsewhere_retrieves_from_the_cache(build_with_a_tree_copy, et_root,
                                                   tmp_path):
    """Two ExecuTorch trees with the same contents in two places (a clone per CI job, a
    submodule of each checkout) share one cache: the build with the other tree compiles
    nothing, and its image is the same, byte for byte (no tree path in any object)."""
    tree, _, first = build_with_a_tree_copy
    assert first.returncode == 0, first.stdout
    assert tree != et_root
    top = tree.parent.parent
    second = scons("board=qemu", "executorch=%s" % et_root,
                   "model=%s" % (MODELS / "qmlp.pte"),
                   "cache=%s" % (top / "cache"), build_dir=tmp_path / "build")
    assert second.returncode == 0, second.stdout
    assert "Compiling" not in second.stdout, second.stdout
    elfs = [sorted(b.glob("*/qmlp/executor_runner.elf")) for b in (top / "build", tmp_path / "build")]
    assert len(elfs[0]) == len(elfs[1]) == 1, elfs
    assert elfs[0][0].read_bytes() == elfs[1][0].read_bytes()


def test_a_second_scons_on_the_same_build_dir_is_refused(tmp_path):
    argv = [sys.executable, "-m", "SCons", "-Q", "build_dir=%s" % tmp_path,
            "app=tests/fixtures/cxx_smoke"]
    first = subprocess.Popen(argv + ["-j1"], cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        for line in first.stdout:
            if "Compiling" in line:
                break
        # Held still while the second one runs: the small build would otherwise finish
        # (about 1 s) in a race with the second scons's start.
        os.kill(first.pid, signal.SIGSTOP)
        second = scons("app=tests/fixtures/cxx_smoke", build_dir=tmp_path)
        assert second.returncode != 0
        assert "is in use by scons (pid %d" % first.pid in second.stdout, second.stdout
        assert "Traceback" not in second.stdout
    finally:
        os.kill(first.pid, signal.SIGCONT)
        rest = first.communicate(timeout=600)[0]
    assert first.returncode == 0, rest


@pytest.mark.long(minutes=0.6)
def test_debug_images_are_reproducible_in_any_build_directory(et_root, tmp_path):
    """Two builds of the README's debug variant (logging=Info debug=1: the log
    messages name their source files) in two directories outside the checkout:
    identical ELFs (no build directory path reaches the image). The first may come from
    the test run's cache (test_cli and test_devloop build this variant too); the second
    compiles everything, and its progress rises steadily to 100."""
    elves = []
    for name, cache in (("one", True), ("a-much-longer-directory/two", False)):
        build_dir = tmp_path / name
        result = scons("logging=Info", "debug=1", build_dir=build_dir, cache=cache)
        assert result.returncode == 0, result.stdout
        if not cache:
            assert_progress_rises_to_100(result.stdout)
        elves.append(next(build_dir.rglob("add/executor_runner.elf")).read_bytes())
    assert elves[0] == elves[1]


# ---------------------------------------------------------------- toolchains that cannot do it

def _fake_toolchain(directory, real, answers):
    """prefix of a toolchain that is `real` except for the answers to some probes
    (argument -> what it prints)."""
    directory.mkdir()
    cases = "".join('    *%s*) echo "%s"; exit 0 ;;\n' % (arg, out) for arg, out in answers.items())
    for tool in ("gcc", "g++"):
        script = directory / ("fake-" + tool)
        script.write_text('#!/bin/sh\ncase "$*" in\n%s    *) exec %s%s "$@" ;;\nesac\n'
                          % (cases, real, tool))
        script.chmod(0o755)
    return str(directory / "fake-")


def _a_toolchain():
    from conftest import TOOLCHAINS, toolchain_present
    from etcorev.toolchain import corev_gcc
    for prefix, _ in TOOLCHAINS.values():
        if toolchain_present(prefix):
            return corev_gcc.installed_prefix() if prefix == corev_gcc.PREFIX and not \
                shutil.which(prefix + "gcc") else prefix
    pytest.skip("no RISC-V toolchain")


def test_toolchain_without_the_multilib_for_the_isa(tmp_path):
    """GCC silently falls back to its default libraries: refused, naming isa and ABI."""
    prefix = _fake_toolchain(tmp_path / "tc", _a_toolchain(), {"-print-multi-directory": "."})
    result = scons("toolchain=%s" % prefix, "isa=rv32imfc", "app=tests/fixtures/cxx_smoke",
                   build_dir=tmp_path / "build")
    assert_refused(result, "has no libraries for isa=rv32imfc", "-mabi=ilp32f")


def test_toolchain_without_a_cpp_library(tmp_path):
    real = _a_toolchain()
    if "corev" not in real:
        pytest.skip("the picolibc toolchain's C++ library is the one set-up builds")
    prefix = _fake_toolchain(tmp_path / "tc", real,
                             {"-print-file-name=libstdc++.a": "libstdc++.a"})
    result = scons("toolchain=%s" % prefix, "app=tests/fixtures/cxx_smoke",
                   build_dir=tmp_path / "build")
    assert_refused(result, "has no C++ library (libstdc++.a)", "isa=rv32imc")


# ---------------------------------------------------------------- files replaced in place

@needs_qemu
def test_a_model_replaced_with_the_same_modification_time_is_the_one_that_runs(et_root,
                                                                               tmp_path):
    """Copying a model over another keeps its modification time (cp -p, touch -r, a
    checkout): the build decides models and their inputs by content, so the new one
    is embedded and runs, with its new inputs."""
    model = tmp_path / "m.pte"
    inputs = tmp_path / "m.inputs.json"
    shutil.copy(ADD, model)
    inputs.write_text(json.dumps(tensors(("float32", [5]), ("float32", [5]))))
    stamps = [(p, p.stat().st_mtime_ns) for p in (model, inputs)]
    first = scons("board=qemu", "model=%s" % model, "run", build_dir=tmp_path / "build")
    assert "Output 0: float32[5] 2,2,2,2,2" in first.stdout, first.stdout

    model.write_bytes((REPO / "examples" / "models" / "mul_add.pte").read_bytes())
    inputs.write_text(json.dumps([{"dtype": "float32", "shape": [2, 3], "values": [2] * 6},
                                  {"dtype": "float32", "shape": [2, 3], "values": [3] * 6}]))
    for path, stamp in stamps:
        os.utime(path, ns=(stamp, stamp))
    second = scons("board=qemu", "model=%s" % model, "run", build_dir=tmp_path / "build")
    assert second.returncode == 0, second.stdout
    # x * y + x - 0.5 with x = 2, y = 3
    assert "Output 0: float32[2,3] 7.5,7.5,7.5,7.5,7.5,7.5" in second.stdout, second.stdout


# ---------------------------------------------------------------- model sets

@pytest.fixture
def set_with_a_corrupt_model(tmp_path):
    directory = tmp_path / "set"
    directory.mkdir()
    shutil.copy(ADD, directory / "add.pte")
    shutil.copy(REPO / "examples" / "models" / "mul_add.pte", directory / "mul_add.pte")
    (directory / "broken.pte").write_bytes(ADD.read_bytes()[:300])
    return directory


def test_a_corrupt_model_does_not_stop_the_others_from_building(et_root,
                                                                set_with_a_corrupt_model,
                                                                tmp_path):
    result = scons("model=%s" % set_with_a_corrupt_model, build_dir=tmp_path / "build")
    out = result.stdout
    assert result.returncode != 0, out
    assert "Traceback" not in out, out
    assert "broken.pte" in out, out
    for name in ("add", "mul_add"):
        assert list((tmp_path / "build").glob("*/%s/executor_runner.elf" % name)), out
    assert not list((tmp_path / "build").glob("*/broken/executor_runner.elf")), out


@needs_qemu
def test_a_model_set_runs_the_others_and_lists_the_corrupt_one_as_failed(
        et_root, set_with_a_corrupt_model, tmp_path):
    result = scons("board=qemu", "model=%s" % set_with_a_corrupt_model, "run",
                   build_dir=tmp_path / "build")
    out = result.stdout
    assert result.returncode != 0, out
    assert "Traceback" not in out, out
    summary = out[out.index("Summary (3 models"):]
    assert re.search(r"^add\s+ok\s", summary, re.M), summary
    assert re.search(r"^mul_add\s+ok\s", summary, re.M), summary
    assert re.search(r"^broken\s+FAIL\b.*not built: .*", summary, re.M), summary


# ---------------------------------------------------------------- stopping a run

def _simulators_running(marker):
    """pids of processes whose command line names marker (a build directory)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/cmdline" % entry, "rb") as f:
                    if str(marker).encode() in f.read() and int(entry) != os.getpid():
                        pids.append(int(entry))
            except OSError:
                pass
    return pids


def _start_a_hanging_run(tmp_path):
    """scons run of a program that never ends, its simulator started: the Popen. Its
    temporary files go to tmp_path / "tmp" (TMPDIR), which the test may look at."""
    build = scons("board=qemu", "app=tests/fixtures/hang", build_dir=tmp_path / "build")
    assert build.returncode == 0, build.stdout
    (tmp_path / "tmp").mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "SCons", "-Q", "board=qemu",
                             "app=tests/fixtures/hang", "timeout=120", "run",
                             "build_dir=%s" % (tmp_path / "build")],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=dict(os.environ, TMPDIR=str(tmp_path / "tmp")))
    deadline = time.time() + 60
    while not _simulators_running(tmp_path / "build" / "qemu") and time.time() < deadline:
        time.sleep(0.2)
    assert _simulators_running(tmp_path / "build"), "the simulator did not start"
    return proc


@needs_qemu
def test_sigterm_stops_a_run_at_once(tmp_path):
    """SIGTERM (a CI job's time limit, `kill`) stops the simulator and scons promptly,
    as Ctrl-C does, instead of waiting for timeout=."""
    proc = _start_a_hanging_run(tmp_path)
    try:
        time.sleep(1)
        started = time.time()
        proc.send_signal(signal.SIGTERM)
        out = proc.communicate(timeout=30)[0]
        assert time.time() - started < 10, out
        assert proc.returncode != 0, out
        assert "Traceback" not in out, out
        time.sleep(0.5)
        assert not _simulators_running(tmp_path / "build"), out
    finally:
        for pid in _simulators_running(tmp_path / "build"):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()


@needs_qemu
def test_a_killed_scons_takes_its_simulator_with_it(tmp_path):
    """kill -9 of scons: no handler runs, yet the simulator must not go on alone."""
    proc = _start_a_hanging_run(tmp_path)
    try:
        proc.kill()
        proc.communicate(timeout=30)
        deadline = time.time() + 5
        while _simulators_running(tmp_path / "build") and time.time() < deadline:
            time.sleep(0.2)
        assert not _simulators_running(tmp_path / "build")
        # No handler ran, so whatever the run made stays: in the build directory, where
        # `scons -c` finds it, not in the user's temporary directory for good.
        assert not list((tmp_path / "tmp").iterdir())
        result = scons("-c", "board=qemu", "app=tests/fixtures/hang",
                       build_dir=tmp_path / "build")
        assert result.returncode == 0, result.stdout
        assert not list((tmp_path / "build").rglob("*")), result.stdout
    finally:
        for pid in _simulators_running(tmp_path / "build"):
            os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------- writing where it should not

def test_a_home_that_does_not_exist_is_not_created(tmp_path):
    """HOME naming nothing (a service account, a container): the per-user cache is off,
    not made under that path."""
    from etcorev.scons import settings
    env = dict(os.environ, HOME=str(tmp_path / "nonexistent" / "home"),
               COREV_ET_SETTINGS=settings.path())
    env.pop("XDG_CACHE_HOME", None)
    env.pop("COREV_ET_CACHE", None)
    result = scons("board=qemu", "app=tests/fixtures/cxx_smoke", build_dir=tmp_path / "build",
                   env=env)
    assert "Traceback" not in result.stdout, result.stdout
    assert not (tmp_path / "nonexistent").exists(), result.stdout


def test_clean_leaves_nothing_of_ours_beside_the_users_own_directories(tmp_path):
    build_dir = tmp_path / "mine"
    (build_dir / "notes").mkdir(parents=True)
    options = ("board=qemu", "app=tests/fixtures/cxx_smoke")
    assert scons(*options, build_dir=build_dir).returncode == 0
    result = scons("-c", *options, build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    assert sorted(p.name for p in build_dir.iterdir()) == ["notes"], result.stdout
    assert "Left in" not in result.stdout, result.stdout


def test_clean_names_only_variants_as_left(tmp_path):
    from etcorev.scons.clean import prune_after_clean
    build_dir = tmp_path / "checkout"
    for name in ("site_scons", "tests", "qemu-debug-loginfo-rv32imc-corev",
                 "cv32e40p-release-logoff-rv32imc-corev"):
        (build_dir / name).mkdir(parents=True)
    (build_dir / "qemu-debug-loginfo-rv32imc-corev" / "x.o").write_text("")
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        prune_after_clean(str(build_dir / "cv32e40p-release-logoff-rv32imc-corev"),
                          str(build_dir))
    assert "qemu-debug-loginfo-rv32imc-corev" in out.getvalue()
    assert "site_scons" not in out.getvalue() and "tests" not in out.getvalue(), out.getvalue()


def test_clean_removes_what_install_made(et_root, tmp_path):
    install = tmp_path / "install"
    options = ("board=qemu", "install_dir=%s" % install)
    result = scons(*options, "install", build_dir=tmp_path / "build")
    assert result.returncode == 0, result.stdout
    assert (install / "executor_runner.elf").is_file()
    for clean in (["-c"], ["-c", "install"]):
        result = scons(*clean, *options, build_dir=tmp_path / "build")
        assert result.returncode == 0, result.stdout
        assert not install.exists(), (clean, result.stdout)
        assert scons(*options, "install", build_dir=tmp_path / "build").returncode == 0


def test_a_failed_link_leaves_no_partial_map(tmp_path):
    """The linker writes the map as it goes; a link that fails (an undefined symbol here,
    a disk that fills up in the wild) must not leave it behind as if it were the map of
    an image."""
    result = scons("board=qemu", "app=tests/fixtures/undefined_symbol",
                   build_dir=tmp_path / "build")
    assert result.returncode != 0, result.stdout
    assert "a_symbol_nobody_defines" in result.stdout, result.stdout
    assert not list((tmp_path / "build").rglob("*.map")), result.stdout
    assert not list((tmp_path / "build").rglob("*.elf")), result.stdout


# ---------------------------------------------------------------- places that cannot be written

@pytest.fixture
def read_only_dir(tmp_path):
    """A directory nobody can write in, root included (chattr +i): made read-only the way
    a read-only mount or someone else's directory is."""
    directory = tmp_path / "read-only"
    directory.mkdir()
    if subprocess.run(["chattr", "+i", str(directory)], capture_output=True).returncode:
        pytest.skip("chattr +i is not possible here (needs root on a filesystem with it)")
    yield directory
    subprocess.run(["chattr", "-i", str(directory)], capture_output=True)


@pytest.mark.parametrize("option", ["build_dir", "cache"])
def test_a_read_only_directory_is_one_line(option, read_only_dir, tmp_path):
    args = ["board=qemu", "app=tests/fixtures/cxx_smoke"]
    if option == "build_dir":
        result = scons(*args, build_dir=read_only_dir)
    else:
        result = scons(*args, "cache=%s" % read_only_dir, build_dir=tmp_path / "build")
        assert not (tmp_path / "build").exists()
    assert_refused(result, "Cannot write in the", "(%s=)" % option, str(read_only_dir))


@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB file system of its own (tmpfs), unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)],
                      capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_a_full_disk_at_the_signature_database_is_one_line(small_disk):
    """The disk fills up after the last target: the database SCons writes at the end
    cannot be written. One line says so (no stack trace), the status is not 0, and no
    half-written temporary file stays."""
    build_dir = small_disk / "build"
    options = ("board=qemu", "app=tests/fixtures/cxx_smoke")
    assert scons(*options, build_dir=build_dir, cache=False).returncode == 0
    (build_dir / ".sconsign.dblite").unlink()     # the next build writes it whole again
    with open(small_disk / "filler", "wb") as filler:
        try:
            while True:
                filler.write(bytes(65536))
                filler.flush()
        except OSError:
            pass
    result = scons(*options, build_dir=build_dir, cache=False)
    out = result.stdout
    assert result.returncode != 0, out
    assert "Traceback" not in out and "Exception ignored" not in out, out
    errors = [line for line in out.splitlines() if line.startswith("scons: ***")]
    assert len(errors) == 1 and "No space left on device" in errors[0], out
    assert not list(build_dir.glob("*.tmp")), sorted(p.name for p in build_dir.iterdir())


# ---------------------------------------------------------------- errors that say what to fix

def test_a_tree_missing_a_kernel_file_names_it(et_root, tmp_path):
    """A tree whose op_add.cpp was deleted (a sparse checkout, a bad merge): the error
    names the file, not the ExecuTorch version."""
    tree = tmp_path / "src" / "executorch"
    shutil.copytree(et_root, tree, symlinks=True,
                    ignore=shutil.ignore_patterns("op_add.cpp", ".git", "docs", "examples"))
    assert not (tree / "kernels" / "portable" / "cpu" / "op_add.cpp").exists()
    result = scons("executorch=%s" % tree, "corev_kernels=0", build_dir=tmp_path / "build")
    assert_refused(result, "kernels/portable/cpu/op_add.cpp", "aten::add.out", "Restore it")
    assert "not supported" not in result.stdout


def test_a_settings_file_that_does_not_exist_is_named(tmp_path):
    env = dict(os.environ, COREV_ET_SETTINGS=str(tmp_path / "no-such-options.py"))
    result = scons("board=qemu", "app=tests/fixtures/cxx_smoke", build_dir=tmp_path / "build",
                   env=env)
    assert_refused(result, "COREV_ET_SETTINGS=", "no-such-options.py", "names no file")


@pytest.mark.skipif(not shutil.which("gdb-multiarch"), reason="gdb-multiarch missing")
@needs_qemu
def test_debugging_a_release_image_says_how_to_get_a_debuggable_one(tmp_path):
    script = tmp_path / "commands.gdb"
    script.write_text("info registers pc\nkill\n")
    result = scons("board=qemu", "app=tests/fixtures/cxx_smoke", "debug",
                   "debug_commands=%s" % script, build_dir=tmp_path / "build")
    assert result.returncode == 0, result.stdout
    before_gdb = result.stdout[:result.stdout.index("gdb server on")]
    assert "Release image" in before_gdb and "debug=1" in before_gdb, result.stdout


def _corev_gcc_prefix():
    from etcorev.toolchain import corev_gcc
    from conftest import toolchain_present
    if not toolchain_present(corev_gcc.PREFIX):
        pytest.skip("no CORE-V GCC (./setup.sh --corev-gcc builds it)")
    return shutil.which(corev_gcc.PREFIX + "gcc") and corev_gcc.PREFIX or \
        corev_gcc.installed_prefix()


def _without_cxx11_math(tmp_path, real):
    """A toolchain prefix that is CORE-V GCC, but whose libstdc++ is configured as a
    standard build on newlib for RV32 leaves it: no _GLIBCXX_USE_C99_MATH_TR1, so
    <cmath> lacks std::lgamma(float), std::trunc, ... (its c++config.h shadowed)."""
    config = subprocess.run([real + "g++", "-print-file-name=include"], capture_output=True,
                            text=True).stdout  # only to prove the compiler runs
    assert config
    source = subprocess.run([real + "g++", "-x", "c++", "-E", "-H", "-"],
                            input="#include <cmath>\n", capture_output=True, text=True).stderr
    original = next(line.split()[-1] for line in source.splitlines()
                    if line.rstrip().endswith("bits/c++config.h"))
    shadow = tmp_path / "shadow" / "bits"
    shadow.mkdir(parents=True)
    text = Path(original).read_text()
    assert "#define _GLIBCXX_USE_C99_MATH_TR1 1" in text
    (shadow / "c++config.h").write_text(text.replace("#define _GLIBCXX_USE_C99_MATH_TR1 1\n", ""))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("gcc", "g++", "gcc-ar", "gcc-ranlib", "ar", "ranlib", "objcopy", "size",
                 "objdump", "nm", "readelf"):
        wrapper = bin_dir / ("nomath-" + tool)
        extra = ' -isystem "%s"' % shadow.parent if tool in ("gcc", "g++") else ""
        wrapper.write_text('#!/bin/sh\nexec "%s%s"%s "$@"\n' % (real, tool, extra))
        wrapper.chmod(0o755)
    return str(bin_dir / "nomath-")


@needs_qemu
def test_a_corev_gcc_without_cxx11_math_builds_and_runs(et_root, tmp_path):
    """A riscv32-corev-elf GCC built the standard way (libstdc++ on newlib, unpatched)
    fails on ExecuTorch's first file with raw errors from c10's BFloat16-math.h. The
    build probes for it and compiles with a compatibility header instead."""
    prefix = _without_cxx11_math(tmp_path, _corev_gcc_prefix())
    probe = subprocess.run([prefix + "g++", "-std=c++17", "-fsyntax-only", "-x", "c++", "-"],
                           input="#include <cmath>\nfloat f(float x) { return std::lgamma(x); }\n",
                           capture_output=True, text=True)
    assert probe.returncode != 0 and "lgamma" in probe.stderr   # the toolchain lacks it
    result = scons("board=qemu", "toolchain=%s" % prefix, "run", build_dir=tmp_path / "build")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Output 0: float32[5] 2,2,2,2,2" in result.stdout


def test_a_toolchain_whose_cmath_the_compat_header_cannot_mend_is_refused():
    from etcorev.errors import BuildSetupError
    from etcorev.toolchain import riscv
    with pytest.raises(BuildSetupError) as refused:
        riscv._cxx11_math({}, "other-", "no: <stdin>:2:10: error: 'erf' is not a member of 'std'")
    message = str(refused.value)
    for phrase in ("$TOOLCHAIN=other-", "std::lgamma(float)", "'erf' is not a member",
                   "./setup.sh --corev-gcc"):
        assert phrase in message, message
    # In our command line's words, as our SConstruct prints it:
    from etcorev.scons import options
    from etcorev.scons.vocabulary import spoken
    assert spoken(options.option_words(), message).startswith("toolchain=other-: "), message


# --------------------------------------------------------------------------
# A program that delegates to a backend the firmware lacks (ExecuTorch's getting-started
# flow lowers to XNNPACK) used to build and then fail on the target with load_method's
# NotFound (0x20). It is refused before compiling, naming the backend.
# --------------------------------------------------------------------------

def test_a_delegate_to_a_backend_the_firmware_lacks_is_refused(monkeypatch):
    import dataclasses
    from etcorev.boards import Region
    from etcorev.errors import BuildSetupError
    from etcorev.run import models
    region = Region("code", 0, 1 << 20)
    model = models.model_set(str(ADD))[0]
    program = models.load_program(model, region, "embedded", "qemu")
    assert program.methods[0].delegates == []
    delegating = dataclasses.replace(program.methods[0],
                                     delegates=["XnnpackBackend", "CoreVBackend"])
    validate = models.pte.validate_pte
    monkeypatch.setattr(models.pte, "validate_pte", lambda path: dataclasses.replace(
        validate(path), methods=[delegating]))
    with pytest.raises(BuildSetupError) as refused:
        models.load_program(model, region, "embedded", "qemu")
    message = str(refused.value)
    for phrase in ("add.pte", "XnnpackBackend", "CoreVBackend", "partitioner"):
        assert phrase in message, message
    assert message.count("XnnpackBackend") == 1 and "NotFound" in message, message


def test_the_backends_the_build_knows_are_those_the_firmware_registers():
    from etcorev.run import models
    source = (REPO / "backends" / "corev" / "runtime" / "CoreVBackend.cpp").read_text()
    registered = re.findall(r'Backend\s+\w+\s*\{\s*"(\w+)"', source)
    assert registered and tuple(registered) == models.FIRMWARE_BACKENDS


def test_a_program_exported_with_the_xnnpack_partitioner_is_refused(tmp_path):
    model = export_program(
        tmp_path / "add_xnnpack.pte",
        "class Model(torch.nn.Module):\n"
        "    def forward(self, x, y):\n"
        "        return torch.relu(x + y)\n",
        "(torch.ones(5), torch.ones(5))",
        partitioner="from executorch.backends.xnnpack.partition.xnnpack_partitioner import "
                    "XnnpackPartitioner; XnnpackPartitioner()",
        needs="executorch.backends.xnnpack.partition.xnnpack_partitioner")
    build = tmp_path / "build"
    result = scons("board=qemu", "model=%s" % model, build_dir=build)
    assert_refused(result, "add_xnnpack.pte", "XnnpackBackend", build_dir=build)


def test_inputs_beyond_a_dynamic_shapes_bound_are_refused_and_smaller_ones_run(tmp_path):
    """A program exported with torch.export.Dim plans its tensors at their upper bound.
    Inputs beyond the bound (or of another rank) are refused, naming the bound and that
    the shape is dynamic; inputs at or below it run (the runner resizes the planned
    tensor, as Method::set_input does) and give eager PyTorch's outputs. Smaller inputs
    were refused before."""
    model = export_program(
        tmp_path / "scale.pte",
        "class Model(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x * 3 - 1, x.sum(dim=1)\n",
        "(torch.ones(2, 3),)", dynamic_shapes="{'x': {0: torch.export.Dim('b', max=4)}}")
    inputs = tmp_path / "scale.inputs.json"
    build = tmp_path / "build"
    for shape in ([5, 3], [2, 4], [6]):
        inputs.write_text(json.dumps([{"dtype": "float32", "shape": shape,
                                       "values": [1] * math.prod(shape)}]))
        result = scons("board=qemu", "model=%s" % model, build_dir=build)
        assert_refused(result, "float32[%s]" % ",".join(map(str, shape)), "float32[4,3]",
                       "dynamic", build_dir=build)
    for rows in (4, 2, 1):
        values = [0.5 * i - 2 for i in range(3 * rows)]
        inputs.write_text(json.dumps([{"dtype": "float32", "shape": [rows, 3],
                                       "values": values}]))
        result = scons("board=qemu", "model=%s" % model, "run", build_dir=build)
        assert result.returncode == 0, result.stdout[-3000:]
        printed = re.search(r"Output 0: float32\[%d,3\] (\S+)" % rows, result.stdout)
        assert printed, result.stdout[-3000:]
        assert [float(v) for v in printed.group(1).split(",")] == [v * 3 - 1 for v in values]
        sums = re.search(r"Output 1: float32\[%d\] (\S+)" % rows, result.stdout)
        assert sums, result.stdout[-3000:]
        assert [float(v) for v in sums.group(1).split(",")] == [
            sum(values[3 * r:3 * r + 3]) for r in range(rows)]


def test_a_program_with_its_weights_in_a_ptd_file_is_refused(tmp_path):
    """ExecutorchBackendConfig(external_constants=True) moves the weights into a .ptd file
    beside the .pte. The firmware embeds the .pte alone: such a program built, then failed
    on the target with load_method's InvalidState (0x02). It is refused before compiling,
    naming the tensors and the export option."""
    model = export_program(
        tmp_path / "linear.pte",
        "class Model(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.fc = torch.nn.Linear(4, 3)\n"
        "    def forward(self, x):\n"
        "        return self.fc(x)\n",
        "(torch.ones(2, 4),)",
        config="from executorch.exir import ExecutorchBackendConfig; "
               "ExecutorchBackendConfig(external_constants=True)")
    build = tmp_path / "build"
    result = scons("board=qemu", "model=%s" % model, build_dir=build)
    assert_refused(result, "linear.pte", "fc.weight", "fc.bias", ".ptd",
                   "external_constants", build_dir=build)
