"""Plug-ins fail like everything else: a board directory (board=DIR, its board.py), a
kernel library directory (kernels=DIR, its library.yaml) and the construction variables a
SConstruct of one's own gives the tools. Each case is a correct plug-in with one thing
wrong; it is refused before anything is compiled, in one `scons: ***` paragraph that names
the file (or the construction variable) and what to change, never with a traceback. The
correct plug-in itself is accepted (the first test of each table), so that each refusal is
the one wrong thing's."""

import os
import shutil
import subprocess
import sys

import pytest

from sconsrun import REPO, assert_refused, scons

OWN_PROJECT = REPO / "examples" / "own_project"
# The board of examples/own_project (flash + RAM on QEMU's virt machine): every board
# case is it with one edit.
BOARD = (OWN_PROJECT / "board" / "board.py").read_text()


def edited(text, *edits):
    """text with each (old, new) replaced; old must occur once (a template that changed
    would otherwise leave a case testing nothing)."""
    for old, new in edits:
        assert text.count(old) == 1, (old, text)
        text = text.replace(old, new)
    return text


def line_of(text, start):
    """The number of the line of text that starts with start."""
    return next(n for n, line in enumerate(text.splitlines(), 1) if line.startswith(start))


def write_files(directory, files):
    """Write {relative path: text} under directory (made); returns it."""
    for name, text in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return directory


# ---------------------------------------------------------------- board=DIR

# id, edits of the board.py, options besides board=, phrases of the one-line message
BOARD_CASES = [
    ("syntax-error", [('kind="data")', 'kind="data"')], [],
     ["board.py", "does not import", "line %d" % line_of(BOARD, "RAM = "), "SyntaxError",
      "'(' was never closed"]),
    ("import-error", [("import shutil\n", "import shutil\nimport no_such_module\n")], [],
     ["board.py", "does not import", "line %d" % (line_of(BOARD, "import shutil") + 1),
      "ModuleNotFoundError", "no_such_module"]),
    ("name-error", [('COUNTER_UNIT = "instructions"', "COUNTER_UNIT = INSTRUCTIONS")], [],
     ["board.py", "does not import", "line %d" % line_of(BOARD, "COUNTER_UNIT"),
      "NameError", "INSTRUCTIONS"]),
    ("regions-misspelt", [("def regions(", "def regionz(")], [],
     ["board.py", "regions(model_placement)", "regionz"]),
    ("parse_run-missing", [("def parse_run(", "def parse_output(")], [],
     ["board.py", "parse_run(output, returncode)"]),
    ("DEFINES-missing", [("DEFINES = [", "DEFINITIONS = [")], [],
     ["board.py", "DEFINES"]),
    ("DEFINES-a-string", [('DEFINES = [("BOARD_CONSOLE_ADDR", "0x10000000"), '
                           '("BOARD_EXIT_ADDR", "0x100000"),\n           '
                           '"BOARD_EXIT_SIFIVE_TEST"]', 'DEFINES = "BOARD_EXIT_SIFIVE_TEST"')],
     [], ["board.py", "DEFINES", "a list"]),
    ("DEFINES-a-triple", [('"BOARD_EXIT_SIFIVE_TEST"]', '("BOARD_EXIT_SIFIVE_TEST", 1, 2)]')],
     [], ["board.py", "DEFINES", "('BOARD_EXIT_SIFIVE_TEST', 1, 2)", "(NAME, VALUE)"]),
    ("run_command-not-callable", [("def run_command(", "def run_qemu("),
                                  ("def parse_run(", 'run_command = "qemu-system-riscv32"\n\n\n'
                                                     "def parse_run(")], [],
     ["board.py", "run_command", "not a function"]),
    ("run_command-arguments", [("def run_command(elf, hexfile, env, workdir, model=None):",
                                "def run_command(elf, hexfile):")], [],
     ["board.py", "run_command", "(elf, hexfile, env, workdir, model=None)"]),
    ("optional-part-misspelt", [("COUNTER_UNIT = ", "COUNTER_UNITS = ")], [],
     ["board.py", "COUNTER_UNITS", "COUNTER_UNIT"]),
    ("COREV_EXTENSIONS-not-a-bool", [('SIMULATOR = "QEMU"',
                                      'SIMULATOR = "QEMU"\nCOREV_EXTENSIONS = "no"')], [],
     ["board.py", "COREV_EXTENSIONS", "True or False"]),
    ("SIMULATOR-not-text", [('SIMULATOR = "QEMU"', "SIMULATOR = 7")], [],
     ["board.py", "SIMULATOR", "text"]),
    # The board: flash at 0x80000000 (2 MiB) and RAM at 0x80100000 (1 MiB).
    ("regions-overlap", [("0x80400000", "0x80100000")], [],
     ["board.py", "flash", "ram", "overlap", "0x80100000"]),
    ("region-empty", [('1024 * 1024, kind="data"', '0, kind="data"')], [],
     ["board.py", "ram", "empty"]),
    ("region-not-aligned", [("0x80400000", "0x80400002")], [],
     ["board.py", "ram", "0x80400002", "multiple of 4"]),
    ("region-length-not-aligned", [('1024 * 1024, kind="data"', '1024 * 1024 + 2, '
                                    'kind="data"')], [],
     ["board.py", "ram", "length", "multiple of 4"]),
    ("region-beyond-4-GiB", [("0x80400000", "0xfff80000")], [],
     ["board.py", "ram", "4 GiB"]),
    ("region-of-unknown-kind", [('kind="data"', 'kind="ram"')], [],
     ["board.py", "ram", "kind 'ram'", "all, code, data, model"]),
    ("region-origin-not-a-number", [("0x80400000", '"0x80400000"')], [],
     ["board.py", "ram", "origin", "whole number"]),
    ("region-name-with-a-space", [('Region("ram"', 'Region("my ram"')], [],
     ["board.py", "'my ram'", "name"]),
    ("two-regions-one-name", [('Region("ram"', 'Region("flash"')], [],
     ["board.py", "two regions named flash"]),
    ("no-data-region", [("return [FLASH, RAM]", "return [FLASH]")], [],
     ["board.py", "regions('embedded')", "data"]),
    ("two-code-regions", [('kind="data"', 'kind="code"')], [],
     ["board.py", "regions('embedded')", "code", "flash", "ram"]),
    ("regions-not-a-list", [("return [FLASH, RAM]", "return FLASH")], [],
     ["board.py", "regions('embedded')", "a list"]),
    ("regions-not-of-Region", [("return [FLASH, RAM]",
                                'return [FLASH, ("ram", 0x80400000, 1048576)]')], [],
     ["board.py", "regions('embedded')", "Region"]),
    ("regions-raises", [("return [FLASH, RAM]", "return [FLASH, RAM, ROM]")], [],
     ["board.py", "regions('embedded')", "NameError", "ROM",
      "line %d" % (line_of(BOARD, "def regions(") + 1)]),
    ("no-model-region-for-external", [], ["model_placement=external"],
     ["board.py", "model_placement=external", "model"]),
]


def _board_dir(tmp_path, edits):
    return write_files(tmp_path / "myboard", {"board.py": edited(BOARD, *edits)})


def test_the_template_board_is_accepted(et_root, tmp_path):
    """Every board case is this board with one edit: as it is, it is accepted (-n reads
    the whole build description, compiles nothing)."""
    board = _board_dir(tmp_path, [])
    result = scons("-n", "board=%s" % board, build_dir=tmp_path / "build")
    assert result.returncode == 0, result.stdout
    assert "Writing myboard-release-" in result.stdout, result.stdout      # its link.ld


@pytest.mark.parametrize("edits, options, phrases", [c[1:] for c in BOARD_CASES],
                         ids=[c[0] for c in BOARD_CASES])
def test_a_bad_board_is_one_line(tmp_path, edits, options, phrases):
    board = _board_dir(tmp_path, edits)
    build_dir = tmp_path / "build"
    result = scons("board=%s" % board, *options, build_dir=build_dir)
    assert_refused(result, *phrases, str(board / "board.py"))
    assert not build_dir.exists(), result.stdout      # refused before anything was made


# ---------------------------------------------------------------- kernels=DIR

KERNELS = {
    "functions.yaml": "- op: add.out\n  kernels:\n    - arg_meta: null\n"
                      "      kernel_name: mine::add_out\n",
    "op_add.cpp": "// add.out of its own (never compiled here)\nvoid add_out() {}\n",
    "coverage.yaml": "aten::add.out: [Float]\n",
    "library.yaml": "name: mine\noperators: functions.yaml\ncoverage: coverage.yaml\n"
                    "fallback: true\nflags: [-O2]\nstands_in_for:\n  cmsis_nn: cmsis_nn\n",
    "cmsis_nn/README": "CMSIS-NN files of its own would go here.\n",
}

# id, {file: edits of it, or its whole new text}, phrases of the one-line message
KERNEL_CASES = [
    # The library.yaml.
    ("library.yaml-not-yaml", {"library.yaml": "name: [unclosed\n"},
     ["library.yaml", "not YAML", "line 2"]),
    ("library.yaml-not-a-mapping", {"library.yaml": "- name: mine\n"},
     ["library.yaml", "a mapping"]),
    ("unknown-key", {"library.yaml": [("operators:", "operator:")]},
     ["library.yaml", "'operator'", "operators"]),
    ("operators-file-missing", {"library.yaml": [("operators: functions.yaml",
                                                  "operators: function.yaml")]},
     ["library.yaml", "operators", "function.yaml", "no such file"]),
    ("operators-not-yaml", {"functions.yaml": "- op: add.out\n  kernels: [\n"},
     ["functions.yaml", "not YAML", "line"]),
    ("coverage-file-missing", {"library.yaml": [("coverage: coverage.yaml",
                                                 "coverage: cover.yaml")]},
     ["library.yaml", "coverage", "cover.yaml", "no such file"]),
    ("coverage-not-yaml", {"coverage.yaml": "aten::add.out: [Float\n"},
     ["coverage.yaml", "not YAML"]),
    ("coverage-not-a-mapping", {"coverage.yaml": "- Float\n"},
     ["coverage.yaml", "a mapping"]),
    ("coverage-unknown-dtype", {"coverage.yaml": "aten::add.out: [Float32]\n"},
     ["coverage.yaml", "Float32", "Float, "]),
    ("stands_in_for-unknown-dependency", {"library.yaml": [("cmsis_nn: cmsis_nn",
                                                            "cmsis: cmsis_nn")]},
     ["library.yaml", "stands_in_for", "'cmsis'", "cmsis_nn"]),
    ("stands_in_for-missing-directory", {"library.yaml": [("cmsis_nn: cmsis_nn",
                                                           "cmsis_nn: cmsis")]},
     ["library.yaml", "stands_in_for", "cmsis", "no such directory"]),
    ("flags-not-a-list", {"library.yaml": [("flags: [-O2]", "flags: -O2")]},
     ["library.yaml", "flags", "a list"]),
    ("fallback-not-a-bool", {"library.yaml": [("fallback: true", "fallback: sometimes")]},
     ["library.yaml", "fallback", "true or false"]),
    ("name-not-text", {"library.yaml": [("name: mine", "name: [mine]")]},
     ["library.yaml", "name", "text"]),
    ("name-of-ours", {"library.yaml": [("name: mine", "name: corev")]},
     ["library.yaml", "corev", os.path.join("kernels", "corev", "library.yaml")]),
    ("name-of-executorchs", {"library.yaml": [("name: mine", "name: portable")]},
     ["library.yaml", "portable", "ExecuTorch"]),
]


def _kernel_dir(directory, changes=None):
    files = dict(KERNELS)
    for name, change in (changes or {}).items():
        files[name] = change if isinstance(change, str) else edited(files[name], *change)
    return write_files(directory, files)


def test_the_template_kernel_library_is_accepted(et_root, tmp_path):
    mine = _kernel_dir(tmp_path / "mine")
    result = scons("-n", "board=qemu", "kernels=%s" % mine, build_dir=tmp_path / "build")
    assert result.returncode == 0, result.stdout
    assert "Compiling %s" % (mine / "op_add.cpp") in result.stdout, result.stdout


@pytest.mark.parametrize("changes, phrases", [c[1:] for c in KERNEL_CASES],
                         ids=[c[0] for c in KERNEL_CASES])
def test_a_bad_kernel_library_is_one_line(et_root, tmp_path, changes, phrases):
    mine = _kernel_dir(tmp_path / "mine", changes)
    build_dir = tmp_path / "build"
    result = scons("board=qemu", "kernels=%s" % mine, build_dir=build_dir)
    assert_refused(result, *phrases, str(mine))
    assert not build_dir.exists(), result.stdout


def test_two_libraries_of_one_name_are_one_line(et_root, tmp_path):
    first, second = _kernel_dir(tmp_path / "a" / "mine"), _kernel_dir(tmp_path / "b" / "mine")
    result = scons("board=qemu", "kernels=%s,%s" % (first, second),
                   build_dir=tmp_path / "build")
    assert_refused(result, "mine", str(first / "library.yaml"), str(second / "library.yaml"))


def test_one_library_given_twice_is_one_line(et_root, tmp_path):
    mine = _kernel_dir(tmp_path / "mine")
    result = scons("board=qemu", "kernels=%s,%s" % (mine, mine), build_dir=tmp_path / "build")
    assert_refused(result, str(mine), "twice")


# ---------------------------------------------------------------- a SConstruct of one's own

def own_project(tmp_path, settings="", board_edits=()):
    """examples/own_project copied to tmp_path, with `env.Replace(settings)` after its
    Environment(...) and its board edited."""
    project = tmp_path / "own_project"
    shutil.copytree(OWN_PROJECT, project)
    if settings:
        sconstruct = project / "SConstruct"
        sconstruct.write_text(edited(sconstruct.read_text(), (
            'for tool in ("quiet"', 'env.Replace(%s)\nfor tool in ("quiet"' % settings)))
    (project / "board" / "board.py").write_text(edited(BOARD, *board_edits))
    return project


def scons_in(project, et_root, *args):
    """scons in a project of its own, with this checkout's etcorev on the path (as
    `pip install` would put it)."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "site_scons"), EXECUTORCH_ROOT=str(et_root),
               PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "SCons", "-Q", *args], cwd=project, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=600)


# the settings given to env.Replace(), phrases of the one-line message
OUTSIDE_CASES = [
    ("BOARD=3", ["$BOARD", "3", "a board's name", "directory"]),
    ("BOARD=Dir('board')", ["$BOARD", "abspath"]),
    ("BOARD='/no/such/board'", ["$BOARD", "/no/such/board", "no board.py"]),
    ("MODEL=[]", ["$MODEL", "[]", "path"]),
    ("MODEL=File('add.pte')", ["$MODEL", "abspath"]),
    ("KERNEL_DIRS=['kernels']", ["$KERNEL_DIRS", "['kernels']", "comma-separated"]),
    ("MODEL_PLACEMENT='xip'", ["$MODEL_PLACEMENT", "'xip'", "embedded, external"]),
    ("STACK_SIZE='16K'", ["$STACK_SIZE", "'16K'", "whole number"]),
    ("CLOCK_HZ=4.0e8", ["$CLOCK_HZ", "400000000.0", "whole number"]),
    ("COREV_KERNELS='no'", ["$COREV_KERNELS", "'no'", "True or False"]),
    ("RUNNER_APP_SOURCES='main.c'", ["$RUNNER_APP_SOURCES", "'main.c'", "list"]),
    ("ISA='rv64gc'", ["$ISA", "'rv64gc'", "rv32imc"]),
    ("ET_ROOT=None", ["$ET_ROOT", "None", "path"]),
]


def test_the_own_project_is_accepted(et_root, tmp_path):
    result = scons_in(own_project(tmp_path), et_root, "-n")
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("settings, phrases", OUTSIDE_CASES, ids=[c[0] for c in OUTSIDE_CASES])
def test_a_wrong_construction_variable_is_one_line(et_root, tmp_path, settings, phrases):
    project = own_project(tmp_path, settings)
    result = scons_in(project, et_root)
    assert_refused(result, *phrases, build_dir=project, outside=True)


def test_a_bad_board_in_a_sconstruct_of_ones_own_is_one_line(et_root, tmp_path):
    """The same contract, the same message, whoever loads the board."""
    project = own_project(tmp_path, board_edits=[("0x80400000", "0x80100000")])
    result = scons_in(project, et_root)
    assert_refused(result, str(project / "board" / "board.py"), "flash", "ram", "overlap",
                   build_dir=project, outside=True)


# ---------------------------------------------------------------- the contract, documented

def _readme_section(start):
    """The README's paragraph of Layout's "Where to add things" that starts with start."""
    text = (REPO / "README.md").read_text()
    section = text[text.index(start):]
    return section[:section.index("\n- **", 1)]


@pytest.mark.quick
def test_the_readme_names_every_part_of_the_board_contract():
    from etcorev import boards
    section = _readme_section("- **A board**")
    missing = [part.name for part in boards.CONTRACT if part.name not in section]
    assert missing == [], section


@pytest.mark.quick
def test_the_readme_names_every_key_of_library_yaml():
    from etcorev.executorch import kernel_plan
    section = _readme_section("- **A kernel library**")
    missing = [key for key in kernel_plan.LIBRARY_KEYS if key not in section]
    assert missing == [], section
