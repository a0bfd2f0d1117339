"""Running this repository's SCons build from tests."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The test models: the repository's own (examples/models, made by its export.py), each
# NAME.pte with NAME.inputs.json, NAME.expected.json and NAME.json (inputs, outputs,
# operators, kernel keys).
MODELS = REPO / "examples" / "models"
# The shared test models beside the checkout (not in a user's clone): only
# tests/test_shared_models.py cross-checks the repository's models against them.
SHARED_MODELS = REPO.parent / "shared" / "models"
# conftest.py points this at one SCons cache for the whole test run: a configuration
# built by one test is retrieved, not compiled again, by the next.
TEST_CACHE = "COREV_ET_TEST_CACHE"


def model_names():
    """The names of the repository's test models (every .pte of examples/models)."""
    return sorted(p.stem for p in MODELS.glob("*.pte"))


def model_entry(name):
    """A test model's NAME.json (inputs, outputs, operators, kernel_keys), with "path"
    its .pte."""
    entry = json.loads((MODELS / ("%s.json" % name)).read_text())
    return dict(entry, path=MODELS / ("%s.pte" % name))


def model_entries():
    """name -> model_entry(name), for every test model."""
    return {name: model_entry(name) for name in model_names()}


def scons(*args, build_dir, cwd=REPO, timeout=1800, env=None, cache=True):
    """Run scons with the given options into build_dir (None: give none); returns the
    CompletedProcess (text; stdout and stderr merged, as a user would see them).
    cache=False builds without the test run's shared cache (tests that count what
    compiles)."""
    argv = [sys.executable, "-m", "SCons", "-Q"]
    if build_dir is not None:
        argv.append("build_dir=%s" % build_dir)
    shared = (env or os.environ).get(TEST_CACHE)
    if cache and shared and not any(a.startswith("cache=") for a in args):
        argv.append("cache=%s" % shared)
        if "run" in args and "board=cv32e40p" in args and shared == os.environ.get(TEST_CACHE):
            _testbench_for_run(args)
    return subprocess.run(argv + list(args), cwd=cwd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=timeout, env=env)


# What SCons adds to a UserError's line in a SConstruct of one's own: where it was raised.
SCONS_LOCATION = re.compile(r'^File ".*", line \d+, in \S+$')


def export_program(pte, model_source, example_inputs, *, dynamic_shapes="None",
                   partitioner="", config="None", needs="executorch.exir"):
    """Export a module as ExecuTorch's docs do (torch.export.export, then
    to_edge_transform_and_lower(...).to_executorch()) to the file pte, in a separate Python
    (torch stays out of the test process). model_source defines `class Model`;
    example_inputs, dynamic_shapes, partitioner and config (to_executorch's
    ExecutorchBackendConfig) are Python expressions (the latter two with their import
    first, as "import ...; Partitioner()"). Skips without the export extra (or without the
    module needs names)."""
    import pytest
    pytest.importorskip(needs, reason="the executorch Python package is not installed "
                                      "(it is the `export` extra: ./setup.sh --export)")
    import_line, _, partitioner = partitioner.rpartition(";")
    config_import, _, config = config.rpartition(";")
    script = Path(pte).with_suffix(".export.py")
    script.write_text(
        "import sys, torch\n"
        "from executorch.exir import to_edge_transform_and_lower\n"
        "%s\n%s\n%s\n"
        "ep = torch.export.export(Model(), %s, dynamic_shapes=%s)\n"
        "lowered = to_edge_transform_and_lower(ep, partitioner=[%s])\n"
        "open(sys.argv[1], 'wb').write(lowered.to_executorch(%s).buffer)\n"
        % (import_line.strip(), config_import.strip(), model_source, example_inputs,
           dynamic_shapes, partitioner.strip(), config.strip()))
    subprocess.run([sys.executable, str(script), str(pte)], check=True, capture_output=True)
    return Path(pte)


def assert_refused(result, *phrases, build_dir=None, outside=False):
    """Non-zero exit, one `scons: ***` line holding every phrase, no traceback, nothing
    compiled (refused while reading the build description); with build_dir, no object
    file in it either. outside: scons ran a SConstruct of one's own, where SCons follows
    the line with its own `File "...", line N, in ...` (ours prints the line alone)."""
    out = result.stdout
    assert result.returncode != 0, out
    lines = out.splitlines()
    if outside:
        lines = [line for number, line in enumerate(lines)
                 if not (SCONS_LOCATION.match(line) and number
                         and lines[number - 1].startswith("scons: ***"))]
    rest = "\n".join(lines)
    assert "Traceback" not in rest and 'File "' not in rest, out
    errors = [line for line in out.splitlines() if line.startswith("scons: ***")]
    assert len(errors) == 1, out
    for phrase in phrases:
        assert phrase in errors[0], (phrase, out)
    assert "Compiling" not in out, out
    if build_dir is not None:
        assert not list(Path(build_dir).rglob("*.o")), out


def variant(build_dir, prefix):
    """The one variant directory of build_dir whose name starts with prefix (the
    toolchain's part of the name comes after board, build type, log level and ISA)."""
    found = [p for p in Path(build_dir).iterdir() if p.is_dir() and p.name.startswith(prefix)]
    assert len(found) == 1, (prefix, [p.name for p in Path(build_dir).iterdir()])
    return found[0]


ACTION_LINE = re.compile(r"^\[\s*(\d+)%\] (Compiling|Assembling|Archiving|Indexing|Linking|"
                         r"Writing|Generating|Installing|Checking size of) \S", re.M)


def assert_progress_rises_to_100(output):
    """Every action line's percentage, in the order printed: rising, the last 100, and
    100 only at the end (not on a third of the lines, as when libraries given through
    $LIBS were not counted)."""
    percents = [int(m.group(1)) for m in ACTION_LINE.finditer(output)]
    assert len(percents) >= 8, output
    assert percents == sorted(percents), output
    assert percents[-1] == 100, output
    assert percents.count(100) <= max(3, len(percents) // 10), output
    assert percents[0] < 10, output


def checkouts_for_testbench():
    """[core_v_verif, cv32e40p] of the user settings when both are directories and
    verilator is installed (what `scons testbench` needs), else None."""
    import shutil
    from etcorev.scons import settings
    values = settings.read()
    found = [values.get("core_v_verif"), values.get("cv32e40p")]
    if not shutil.which("verilator"):
        return None
    return found if all(p and os.path.isdir(p) for p in found) else None


def have_testbench():
    """Can `scons run board=cv32e40p` run firmware here: a Verilator model named
    ($VERILATOR_MODEL or verilator_model in the user settings), or the checkouts it
    builds one from?"""
    from etcorev.scons import settings
    model = os.environ.get("VERILATOR_MODEL") or settings.read().get("verilator_model")
    return bool(model and os.path.isfile(model)) or checkouts_for_testbench() is not None


def _testbench_for_run(args):
    """The testbench a `scons run board=cv32e40p` with these options builds from the
    user settings' checkouts (none when it is given a model with verilator_model=, or
    other checkouts), made once for the test run first (build_testbench_once)."""
    from etcorev import testbench
    from etcorev.scons import settings
    named = [a.split("=", 1)[1] for a in args if a.startswith("verilator_model=")]
    if (named[-1] if named else settings.read().get("verilator_model")):
        return
    if any(a.startswith(("core_v_verif=", "cv32e40p=")) for a in args):
        return                       # other checkouts than the user settings' (or none)
    isa = [a.split("=", 1)[1] for a in args if a.startswith("isa=")]
    build_testbench_once(testbench.variant_for_isa(isa[-1] if isa else "rv32imc").name)


def build_testbench_once(variant):
    """Build a testbench variant into the run's shared SCons cache unless this test run
    has: a test's own `scons run` then retrieves it instead of verilating it (a minute or
    two of a core each time). Workers that ask while another builds it wait for it (a
    lock beside the cache), instead of verilating it at the same time. Nothing to do
    without the checkouts or the shared cache."""
    import fcntl
    import shutil
    import tempfile
    shared = os.environ.get(TEST_CACHE)
    if not shared or checkouts_for_testbench() is None:
        return
    stem = "%s.testbench-%s" % (shared.rstrip(os.sep), variant)
    with open(stem + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(stem + ".built"):
            return
        build_dir = tempfile.mkdtemp(prefix="testbench-%s-" % variant)
        try:
            result = scons("testbench-%s" % variant, build_dir=build_dir, timeout=1800)
        finally:
            shutil.rmtree(build_dir, ignore_errors=True)
        if result.returncode == 0:
            open(stem + ".built", "w").close()


NO_TESTBENCH = ("no CV32E40P testbench: neither verilator_model nor core_v_verif= and "
                "cv32e40p= (with verilator installed) in the user settings (see README, CV32E40P)")

# Why a test that needs the testbench checkouts skips.
NO_CHECKOUTS = ("no core-v-verif and cv32e40p checkouts (core_v_verif= and cv32e40p= in the "
                "user settings file) or no verilator (see README, CV32E40P)")
