"""The command-line experience: variant directories, `scons -c`, `scons -h`, messages,
compile_commands.json, the cache, errors for bad input, reproducible and interrupted
builds. Tests that build the runner need an ExecuTorch tree (et_root); the others build
the C++ fixture (app=tests/fixtures/cxx_smoke) alone."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sconsrun import REPO, assert_progress_rises_to_100, scons

pytestmark = pytest.mark.skipif(
    not shutil.which("riscv64-unknown-elf-gcc") and not shutil.which("riscv32-corev-elf-gcc"),
    reason="no RISC-V cross compiler (./setup.sh installs it)")

APP = "app=tests/fixtures/cxx_smoke"
ADD_PTE = REPO / "examples" / "models" / "add.pte"

def assert_clean_failure(result, *phrases):
    """Non-zero exit, one `scons: ***` paragraph containing every phrase, no stack."""
    out = result.stdout
    assert result.returncode != 0, out
    assert "Traceback" not in out and not re.search(r'^\s*File "', out, re.M), out
    errors = [line for line in out.splitlines() if line.startswith("scons: ***")]
    assert len(errors) == 1, out
    for phrase in phrases:
        assert phrase in errors[0], out
    # Refused while reading the build description: nothing was compiled.
    assert "Compiling" not in out, out


def tree(root):
    """Every file and directory under root, relative to it."""
    return sorted(str(p.relative_to(root)) + ("/" if p.is_dir() else "")
                  for p in Path(root).rglob("*"))


def repo_status():
    """`git status` including ignored files (but pytest's own cache)."""
    out = subprocess.run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"],
                         cwd=REPO, capture_output=True, text=True, check=True).stdout
    return sorted(line for line in out.splitlines() if ".pytest_cache" not in line)


def copy_worktree(dest):
    """The working tree as it is (tracked and untracked files, not ignored ones:
    no build/, .venv, caches), copied to dest."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        source = REPO / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


def variant_dirs(build_dir):
    return sorted(p.name for p in Path(build_dir).iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def default_build(et_root, tmp_path_factory):
    """A complete build with the default options; returns (build_dir, hex path)."""
    build_dir = tmp_path_factory.mktemp("default")
    result = scons(build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    hexes = list(build_dir.glob("*/add/executor_runner.hex"))
    assert len(hexes) == 1, hexes
    return build_dir, hexes[0]


# ---------------------------------------------------------------- 1. variants

def test_variants_side_by_side_and_switching_rebuilds_nothing(default_build):
    build_dir, release_hex = default_build
    before = variant_dirs(build_dir)
    result = scons("logging=Info", "debug=1", build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    added = sorted(set(variant_dirs(build_dir)) - set(before))
    assert len(added) == 1 and "-debug-loginfo-" in added[0], variant_dirs(build_dir)
    assert (build_dir / added[0] / "add" / "executor_runner.hex").is_file()
    assert release_hex.is_file()            # beside the default one, not instead of it
    # Its log messages are formatted by pal/log_format.c (newlib-nano's knows no %hhd).
    symbols = subprocess.run(["riscv64-unknown-elf-nm", str(build_dir / added[0] / "add" /
                                                          "executor_runner.elf")],
                             stdout=subprocess.PIPE, text=True, check=True).stdout.split()
    assert "corev_log_vsnprintf" in symbols
    # `scons -q` exits 0 when everything is up to date: back and forth, nothing rebuilds.
    for options in ([], ["logging=Info", "debug=1"], [], ["logging=Info", "debug=1"]):
        result = scons("-q", *options, build_dir=build_dir)
        assert result.returncode == 0, (options, result.stdout)


# ---------------------------------------------------------------- 2. scons -c

def test_clean_removes_everything_the_build_made(et_root, tmp_path):
    build_dir = tmp_path / "out"
    build_dir.mkdir()
    (build_dir / "mine.txt").write_text("not the build's\n")   # -c must leave it alone
    tree_before, status_before = tree(build_dir), repo_status()
    debug = ["logging=Info", "debug=1"]
    for options in ([], debug):
        result = scons(*options, build_dir=build_dir)
        assert result.returncode == 0, result.stdout
    assert len(variant_dirs(build_dir)) == 2

    # Cleaning one variant leaves the other complete and up to date (the signature
    # database stays while a variant needs it).
    result = scons("-c", build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    assert len(variant_dirs(build_dir)) == 1
    assert scons("-q", *debug, build_dir=build_dir).returncode == 0
    # ... and says so: what is left, and how it goes.
    left = variant_dirs(build_dir)[0]
    assert re.search(r"^Left in .*: %s \(`scons -c` with its options removes it\)\.$"
                     % re.escape(left), result.stdout, re.M), result.stdout

    result = scons("-c", *debug, build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    assert "Left in" not in result.stdout, result.stdout
    # Directories and SCons's .sconsign.dblite are gone too: the tree is as before.
    assert tree(build_dir) == tree_before
    assert repo_status() == status_before


# ---------------------------------------------------------------- 3. scons -h, bad values

def test_help_lists_options_values_and_defaults(tmp_path):
    build_dir = tmp_path / "never-made"
    result = scons("-h", build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    out = result.stdout
    for line in ("board=cv32e40p|qemu|DIR  (default: cv32e40p)",
                 "logging=Off|Debug|Info|Error|Fatal  (default: Off)",
                 "isa=rv32imc|rv32imfc|rv32imc_xcv|rv32imfc_xcv  (default: rv32imc)",
                 "build_type=Release|RelWithDebInfo|Debug  (default: Release)",
                 "embed=incbin|xxd|embed  (default: incbin)",
                 "verbose=0|1  (default: 0)",
                 "model=PATH  (default: examples/models/add.pte)",
                 "build_dir=DIR  (default: build; now: %s)" % build_dir,
                 # unset, so no "now:" (its converter keeps "choose for me" as 0)
                 "method_pool=N  (default: none)"):
        assert "\n  " + line + "\n" in out, line + "\n" + out
    for name in ("model", "model_placement", "ops", "inputs", "board", "toolchain", "isa",
                 "build_type", "debug", "lto", "pic", "logging", "executorch",
                 "verilator_model", "build_dir", "verbose", "compiledb", "cache", "app"):
        assert re.search(r"^  %s=\S+  \(default: " % name, out, re.M), name
    assert not build_dir.exists()           # -h builds and makes nothing


@pytest.mark.parametrize("option, valid", [
    ("board=foo", "valid values: cv32e40p, qemu"),
    ("logging=Verbose", "valid values: Off, Debug, Info, Error, Fatal"),
    ("isa=rv64gc", "valid values: rv32imc, rv32imfc"),
    ("verbose=maybe", "valid values: 0, 1"),
])
def test_invalid_value_names_the_valid_ones(tmp_path, option, valid):
    result = scons(option, APP, build_dir=tmp_path)
    assert_clean_failure(result, "Invalid value '%s'" % option.split("=")[1], valid)


def test_unknown_option_is_refused(tmp_path):
    result = scons("boad=qemu", APP, build_dir=tmp_path)
    assert_clean_failure(result, "Unknown option", "boad")


# ---------------------------------------------------------------- 4. messages, compiledb, cache

def test_quiet_lines_with_progress_and_verbose_commands(tmp_path):
    quiet = scons(APP, build_dir=tmp_path / "quiet", cache=False)
    assert quiet.returncode == 0, quiet.stdout
    assert re.search(r"^\[\s*\d+%\] Compiling tests/fixtures/cxx_smoke/main\.cpp$",
                     quiet.stdout, re.M), quiet.stdout
    assert "-march=" not in quiet.stdout
    assert re.search(r"^Done in \d+\.\d s$", quiet.stdout.splitlines()[-1]), quiet.stdout

    verbose = scons(APP, "verbose=1", build_dir=tmp_path / "verbose", cache=False)
    assert verbose.returncode == 0, verbose.stdout
    compile_lines = [l for l in verbose.stdout.splitlines() if "main.cpp" in l]
    assert any("-march=" in l and " -c " in l for l in compile_lines), verbose.stdout
    assert "Compiling" not in verbose.stdout


def test_progress_rises_steadily_for_a_program_with_libraries(tmp_path):
    """The whole-archive fixture links a library of its own through $LIBS. One job: with
    two, SCons may reach two of its 11 files before the first line prints (18 %, where
    the test wants the first line under 10 %): it failed so once on a loaded machine."""
    result = scons("-j1", "board=qemu", "app=tests/fixtures/whole_archive", build_dir=tmp_path,
                   cache=False)
    assert result.returncode == 0, result.stdout
    assert_progress_rises_to_100(result.stdout)


def test_compiledb_writes_compile_commands_and_clean_removes_it(tmp_path):
    # In a copy of the working tree: compile_commands.json goes to the top directory
    # (SCons's and clangd's convention), and the real one must not be touched.
    top = copy_worktree(tmp_path / "tree")
    result = scons(APP, "compiledb=1", build_dir="build", cwd=top)
    assert result.returncode == 0, result.stdout
    database = json.loads((top / "compile_commands.json").read_text())
    assert database and all("file" in e and ("command" in e or "arguments" in e)
                            for e in database)
    main = [e for e in database if e["file"].endswith("cxx_smoke/main.cpp")]
    assert main and "-march=" in main[0].get("command", " ".join(main[0].get("arguments", [])))
    result = scons("-c", APP, "compiledb=1", build_dir="build", cwd=top)
    assert result.returncode == 0, result.stdout
    assert not (top / "compile_commands.json").exists()
    assert subprocess.run(["git", "check-ignore", "-q", "compile_commands.json"],
                          cwd=REPO).returncode == 0


def test_cache_shared_between_build_dirs(tmp_path):
    cache = tmp_path / "cache"
    first = scons(APP, "cache=%s" % cache, build_dir=tmp_path / "one")
    assert first.returncode == 0 and "Compiling" in first.stdout, first.stdout
    second = scons(APP, "cache=%s" % cache, build_dir=tmp_path / "two")
    assert second.returncode == 0, second.stdout
    assert re.search(r"^(\[\s*\d+%\] )?Retrieved `.*/main\.o' from cache$", second.stdout,
                     re.M), second.stdout
    assert "Compiling" not in second.stdout
    hexes = [next((tmp_path / d).glob("*/app-cxx_smoke/cxx_smoke.hex")).read_bytes()
             for d in ("one", "two")]
    assert hexes[0] == hexes[1]


# ---------------------------------------------------------------- 5. bad input

@pytest.fixture
def bad_models(tmp_path):
    data = ADD_PTE.read_bytes()
    models = tmp_path / "models"
    models.mkdir()
    (models / "empty.pte").write_bytes(b"")
    (models / "notes.pte").write_text("These are my notes, not a model at all.\n" * 20)
    (models / "truncated.pte").write_bytes(data[:len(data) // 2])
    # validate_pte accepts bytes after the program: a valid model, too big for 4 MiB.
    (models / "huge.pte").write_bytes(data + bytes(5 * 1024 * 1024))
    return models


@pytest.mark.parametrize("name, phrases", [
    ("missing.pte", ["missing.pte", "not found"]),
    ("empty.pte", ["empty.pte", "is empty"]),
    ("notes.pte", ["notes.pte", "is not an ExecuTorch program"]),
    ("truncated.pte", ["truncated.pte", "truncated or corrupt"]),
    ("huge.pte", ["huge.pte", "does not fit board=cv32e40p", "ram region"]),
])
def test_bad_model(et_root, bad_models, tmp_path, name, phrases):
    result = scons("model=%s" % (bad_models / name), build_dir=tmp_path / "build")
    assert_clean_failure(result, *phrases)


def test_unknown_board(tmp_path):
    assert_clean_failure(scons("board=foo", APP, build_dir=tmp_path), "board",
                         "cv32e40p, qemu")


def test_bad_logging_level(tmp_path):
    assert_clean_failure(scons("logging=Verbose", APP, build_dir=tmp_path), "logging",
                         "Off, Debug, Info, Error, Fatal")


def test_missing_toolchain(tmp_path):
    result = scons("toolchain=nonexistent-prefix-", APP, build_dir=tmp_path)
    assert_clean_failure(result, "No RISC-V cross compiler found", "nonexistent-prefix-gcc")


def test_missing_executorch_tree(tmp_path):
    result = scons("executorch=/nonexistent", build_dir=tmp_path)
    assert_clean_failure(result, "/nonexistent", "does not exist")


def test_executorch_root_comes_before_the_user_settings(tmp_path):
    """As `scons -h` and the README say: the command line, then $EXECUTORCH_ROOT, then
    the settings file (the tests' et_root fixture looks in that order too)."""
    settings = tmp_path / "options.py"
    settings.write_text("executorch = %r\n" % str(tmp_path / "from-settings"))
    env = dict(os.environ, COREV_ET_SETTINGS=str(settings),
               EXECUTORCH_ROOT=str(tmp_path / "from-environment"))
    result = scons(build_dir=tmp_path / "build", env=env)
    assert_clean_failure(result, "from-environment", "does not exist")
    result = scons("executorch=%s" % (tmp_path / "from-command-line"),
                   build_dir=tmp_path / "build", env=env)
    assert_clean_failure(result, "from-command-line", "does not exist")


def test_executorch_older_than_1_0_is_refused(et_root, tmp_path):
    fake = tmp_path / "old" / "executorch"
    fake.mkdir(parents=True)
    for entry in et_root.iterdir():
        if entry.name != "version.txt":
            (fake / entry.name).symlink_to(entry)
    (fake / "version.txt").write_text("0.5.0\n")
    result = scons("executorch=%s" % fake, build_dir=tmp_path / "build")
    assert_clean_failure(result, "ExecuTorch 0.5.0", "too old", "1.0.0 or newer")


def test_operator_not_in_portable_kernels(et_root, tmp_path):
    result = scons("ops=aten::not_an_op.out", build_dir=tmp_path)
    assert_clean_failure(result, "aten::not_an_op.out")


def test_paths_with_spaces(et_root, tmp_path):
    models = tmp_path / "my models"
    models.mkdir()
    shutil.copy(ADD_PTE, models / "add copy.pte")
    build_dir = tmp_path / "build dir with spaces"
    result = scons("model=%s" % (models / "add copy.pte"), build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    assert list(build_dir.glob("*/add_copy/executor_runner.hex")), tree(build_dir)
    assert scons("-q", "model=%s" % (models / "add copy.pte"), build_dir=build_dir).returncode == 0


def test_scons_D_in_a_subdirectory(et_root, tmp_path):
    """`scons -D` in a subdirectory (SCons climbs to the SConstruct and builds the default
    targets): the defaults are the checkout's (examples/models/add.pte, build/), paths
    typed on the command line are the launch directory's."""
    top = copy_worktree(tmp_path / "tree")
    result = scons("-D", build_dir=None, cwd=top / "examples")
    assert result.returncode == 0, result.stdout
    assert list((top / "build").glob("*/add/executor_runner.hex")), tree(top)
    assert not (top / "examples" / "build").exists()
    # The same model, named from examples/: nothing to do.
    result = scons("-D", "-q", "model=models/add.pte", build_dir=None, cwd=top / "examples")
    assert result.returncode == 0, result.stdout


# ---------------------------------------------------------------- 6. reproducible

def test_two_checkouts_build_identical_hex(et_root, tmp_path):
    tops = [copy_worktree(tmp_path / "a"),
            copy_worktree(tmp_path / "a-much-longer-directory-name" / "and" / "deeper" / "b")]
    hexes = []
    for top in tops:
        result = scons(build_dir="build", cwd=top)
        assert result.returncode == 0, result.stdout
        found = list((top / "build").glob("*/add/executor_runner.hex"))
        assert len(found) == 1, found
        hexes.append(found[0].read_bytes())
    assert hexes[0] == hexes[1]


# ---------------------------------------------------------------- 7. killed build

def test_build_killed_halfway_is_completed_by_the_next(default_build, tmp_path):
    """kill -9 halfway: the next build completes it, identical to a clean build, and
    keeps what the killed one finished (the signature database is written every few
    seconds during a build, not only at its end)."""
    _, clean_hex = default_build
    argv = [sys.executable, "-m", "SCons", "-Q", "-j2", "build_dir=%s" % (tmp_path / "build")]
    # The killed compilers leave their temporary files behind: in tmp_path, not /tmp.
    (tmp_path / "tmp").mkdir()
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True,
                            env=dict(os.environ, TMPDIR=str(tmp_path / "tmp")))
    compiled, deadline = [], time.monotonic() + 600
    try:
        for line in proc.stdout:
            if " Compiling " in line:
                compiled.append(line.split(" Compiling ", 1)[1].strip())
            if len(compiled) >= 12 or time.monotonic() > deadline:
                break
        time.sleep(3)                  # past a checkpoint of the signature database
    finally:
        os.killpg(proc.pid, signal.SIGKILL)     # scons and the compilers it started
        proc.wait()
        proc.stdout.close()
    assert len(compiled) >= 12 and proc.returncode == -signal.SIGKILL
    build_dir = tmp_path / "build"
    assert not list(build_dir.glob("*/add/executor_runner.hex"))

    result = scons(build_dir=build_dir, cache=False)
    assert result.returncode == 0, result.stdout
    hexes = list(build_dir.glob("*/add/executor_runner.hex"))
    assert len(hexes) == 1 and hexes[0].read_bytes() == clean_hex.read_bytes()
    assert scons("-q", build_dir=build_dir).returncode == 0
    # What the killed build finished before its last checkpoint is not compiled again:
    # at most the last files (those in flight, or finished after the checkpoint) are.
    again = [line for line in result.stdout.splitlines() if " Compiling " in line]
    redone = [name for name in compiled if any(line.endswith(" " + name) for line in again)]
    assert len(redone) <= 4, (redone, compiled)
