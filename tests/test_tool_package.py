"""The build's tools as a package for other SConstructs (issue: "your firmware, our
build"): they read UPPERCASE construction variables only, load in any order (each loads
what it needs), and a project of the user's own (examples/own_project: its SConstruct,
its main.c, its own flash + RAM board), copied out of this checkout, builds with the
package installed into a fresh virtual environment and runs its model on QEMU."""

import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sconsrun import REPO

TOOLS_DIR = REPO / "site_scons" / "site_tools"
TOOLS = sorted(p.stem for p in TOOLS_DIR.glob("*.py"))
LOWERCASE_OPTION = re.compile(r"""env(?:\.get\(|\[)["']([a-z][a-z0-9_]*)["']""")


@pytest.mark.quick
def test_no_tool_reads_a_command_line_option():
    """Options are SConstruct's: tools read construction variables (UPPERCASE), so that
    they serve any SConstruct. (Private variables of SCons's own, e.g. $_LIBFLAGS, start
    with an underscore and are not options.)"""
    found = []
    # (etcorev/executorch/buck.py's `env` is a Starlark namespace, not an environment.)
    modules = [p for p in (REPO / "site_scons" / "etcorev").rglob("*.py") if p.name != "buck.py"]
    for path in [*TOOLS_DIR.glob("*.py"), *modules,
                 *(REPO / "pal" / "boards").rglob("board.py")]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for name in LOWERCASE_OPTION.findall(line):
                found.append("%s:%d: %s" % (path.relative_to(REPO), number, name))
    assert found == [], "\n".join(found)


def _load_in_order(order):
    """A fresh environment with the tools loaded in this order, in a new process (SCons's
    tools are not meant to be loaded twice into one process's default environment)."""
    code = ("import sys; sys.path.insert(0, %r)\n"
            "import SCons.Script\n"
            "from SCons.Environment import Environment\n"
            "import etcorev\n"
            "env = Environment(tools=[], toolpath=etcorev.TOOLPATH)\n"
            "for tool in %r: env.Tool(tool)\n"
            "print(sorted(set(env['TOOLS'])))\n" % (str(REPO / "site_scons"), list(order)))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO)


@pytest.mark.quick
def test_tools_load_alone_and_in_any_order():
    orders = [[tool] for tool in TOOLS] + [TOOLS, list(reversed(TOOLS))]
    rng = random.Random(1)
    for _ in range(3):
        shuffled = list(TOOLS)
        rng.shuffle(shuffled)
        orders.append(shuffled)
    loaded = set()
    for order in orders:
        result = _load_in_order(order)
        assert result.returncode == 0, (order, result.stderr[-2000:])
        tools = eval(result.stdout.strip().splitlines()[-1])
        assert set(order) <= set(tools), (order, tools)
        if len(order) > 1:
            loaded.add(tuple(tools))
    assert len(loaded) == 1, loaded        # the same tools whatever the order


needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                                reason="qemu-system-riscv32 not installed (qemu-system-misc)")


def _checkout_files(checkout):
    """Every path of the checkout but git's, the venv's and pytest's (other tests may use
    build/ meanwhile: what pip would write there is setuptools' lib/ and bdist.*)."""
    skip = {".git", ".venv", ".pytest_cache"}
    paths = set()
    for directory, dirs, names in os.walk(checkout):
        rel = Path(directory).relative_to(checkout)
        dirs[:] = [d for d in dirs if not (rel == Path(".") and d in skip)
                   and not (rel == Path("build") and d not in ("lib",) and
                            not d.startswith("bdist."))]
        paths.update(str(rel / n) for n in names + dirs)
    return paths


@needs_qemu
def test_own_project_builds_with_the_installed_package(et_root, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # From the checkout itself, which it leaves as it was (hatchling writes nothing into
    # the source tree; setuptools left build/lib, build/bdist.* and an .egg-info there).
    before = _checkout_files(REPO)
    install = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(REPO)],
                             capture_output=True, text=True, cwd=tmp_path)
    assert install.returncode == 0, install.stdout + install.stderr
    assert _checkout_files(REPO) - before == set()
    # Every kernel directory of the checkout ships, with all its files (a directory left
    # out of pyproject.toml's force-include would be missing from the package).
    data = next(venv.glob("lib/python*/site-packages/etcorev/_data/kernels"))
    for directory in sorted(p for p in (REPO / "kernels").iterdir() if p.is_dir()):
        files = sorted(str(f.relative_to(directory)) for f in directory.rglob("*")
                       if f.is_file() and "__pycache__" not in f.parts)
        shipped = sorted(str(f.relative_to(data / directory.name))
                         for f in (data / directory.name).rglob("*") if f.is_file())
        assert shipped == files, directory.name
    project = tmp_path / "own_project"              # outside the checkout
    shutil.copytree(REPO / "examples" / "own_project", project)
    env = dict(os.environ, PATH="%s:%s" % (venv / "bin", os.environ["PATH"]),
               EXECUTORCH_ROOT=str(et_root))
    env.pop("PYTHONPATH", None)
    result = subprocess.run([str(venv / "bin" / "scons"), "-Q", "run"], cwd=project, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=1800)
    out = result.stdout
    assert result.returncode == 0, out[-4000:]
    assert "own_project: running the model" in out, out[-4000:]
    assert "Output 0: float32[5] 2,2,2,2,2" in out, out[-4000:]
    assert "Exit status: 0" in out, out[-4000:]
    # Its own memory map: code and read-only data in its flash, data copied to its RAM.
    elf = next(project.glob("build/add/executor_runner.elf"))
    from etcorev.image import elfout
    sections = {s.name: s for s in elfout.load_sections(str(elf))}
    assert 0x80000000 <= sections[".text"].vma < 0x80200000
    assert 0x80400000 <= sections[".data"].vma < 0x80500000
    assert 0x80000000 <= sections[".data"].lma < 0x80200000
    # scons -c removes what it built, the emptied directories too (the tools do it, not
    # only our SConstruct).
    clean = subprocess.run([str(venv / "bin" / "scons"), "-Q", "-c"], cwd=project, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=600)
    assert clean.returncode == 0, clean.stdout[-3000:]
    left = [p for p in (project / "build").rglob("*")] if (project / "build").exists() else []
    assert left == [], left[:10]


# ---------------------------------------------------------------- plug-ins: boards, kernels

OWN_BOARD = REPO / "examples" / "own_project" / "board"


@needs_qemu
def test_a_board_of_ones_own_is_a_directory(et_root, tmp_path):
    """board=DIR: a flash + RAM board in a directory of its own, with our SConstruct."""
    from sconsrun import scons
    board = tmp_path / "myboard"
    shutil.copytree(OWN_BOARD, board)
    build = scons("board=%s" % board, build_dir=tmp_path / "build")
    assert build.returncode == 0, build.stdout[-3000:]
    assert re.search(r"^FLASH: .*\nRAM: ", build.stdout, re.M), build.stdout[-3000:]
    result = scons("board=%s" % board, "run", build_dir=tmp_path / "build")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Output 0: float32[5] 2,2,2,2,2" in result.stdout


def test_a_kernel_library_is_a_directory(et_root, tmp_path, monkeypatch):
    """A directory with a library.yaml beside kernels/corev is searched too: before corev
    when its name sorts first, for the operators and dtypes it declares."""
    from etcorev.executorch import kernel_plan
    kernels = tmp_path / "kernels"
    shutil.copytree(REPO / "kernels" / "corev", kernels / "corev")
    mine = kernels / "a_fast"
    mine.mkdir()
    (mine / "functions.yaml").write_text(
        "- op: add.out\n  kernels:\n    - arg_meta: null\n      kernel_name: fast::add_out\n")
    (mine / "op_add.cpp").write_text("// a kernel of its own\n")
    (mine / "library.yaml").write_text("name: fast\noperators: functions.yaml\n"
                                       "flags: [-O3]\n")
    monkeypatch.setattr(kernel_plan, "KERNELS_DIR", str(kernels))
    plan = kernel_plan.plan(str(et_root), {"aten::add.out": ["v1/6;0|6;0|6;0"],
                                          "aten::mul.out": ["v1/6;0|6;0|6;0"]})
    by_name = {k.name: k for k in plan.kernel_sets}
    assert set(by_name["fast"].selection) == {"aten::add.out"}
    assert by_name["fast"].flags == ["-O3"]
    assert set(by_name["corev"].selection) == {"aten::mul.out"}
    # corev_kernels=0 leaves every library of kernels/ out.
    plan = kernel_plan.plan(str(et_root), {"aten::add.out": []}, corev=False)
    assert [k.name for k in plan.kernel_sets] == ["portable"]


@pytest.mark.quick
def test_no_sconscript_holds_wiring():
    """The build's wiring is in its tools (the executor runner's in
    site_tools/executor_runner.py): the source directories hold sources, and another
    SConstruct needs no SConscript of ours."""
    scripts = [p.relative_to(REPO) for p in REPO.rglob("SConscript")
               if ".venv" not in p.parts and "build" not in p.parts]
    assert scripts == [], scripts


@pytest.mark.parametrize("arguments, says", [
    ([], "No ExecuTorch source tree given"),
    (["model=missing.pte"], "Model file"),
], ids=["no-executorch-tree", "no-model"])
def test_an_outside_sconstruct_gets_one_line_naming_the_variable(tmp_path, arguments, says):
    """The tools speak of construction variables ($ET_ROOT, $MODEL): in a SConstruct of
    one's own a bad setting is SCons's one-line report, never a traceback nor our
    command line's option names."""
    project = tmp_path / "own_project"
    shutil.copytree(REPO / "examples" / "own_project", project)
    env = dict(os.environ, PYTHONPATH=str(REPO / "site_scons"),
               XDG_CONFIG_HOME=str(tmp_path / "no-config"))   # no user settings either
    env.pop("EXECUTORCH_ROOT", None)
    env.pop("COREV_ET_SETTINGS", None)
    if arguments:
        from conftest import executorch_root
        if executorch_root() is None:
            pytest.skip("no ExecuTorch tree")
        arguments = arguments + ["executorch=%s" % executorch_root()]
    result = subprocess.run([sys.executable, "-m", "SCons", "-Q"] + arguments, cwd=project,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, timeout=600)
    out = result.stdout
    assert result.returncode == 2 and "Traceback" not in out, out
    [line] = [l for l in out.splitlines() if l.startswith("scons: ***")]
    assert says in line, line
    variable = "$ET_ROOT" if not arguments else "$MODEL"
    assert variable in line, line
    assert "executorch=" not in line and "model=" not in line, line


def test_a_kernel_directory_given_with_kernels_has_what_its_library_yaml_declares(
        et_root, tmp_path):
    """kernels=DIR with a library.yaml is read as the libraries of kernels/ are: its
    fallback brings the tree's source of its operators along, and its stands_in_for files
    stand in for CMSIS-NN's (before ours of the same name; ours for the others). Both
    were left out without a word."""
    from etcorev.executorch import kernel_plan
    mine = tmp_path / "mine"
    (mine / "cmsis_nn").mkdir(parents=True)
    (mine / "functions.yaml").write_text(
        "- op: add.out\n  kernels:\n    - arg_meta: null\n      kernel_name: mine::add_out\n")
    (mine / "op_add.cpp").write_text("void add_out() {}\n")
    (mine / "library.yaml").write_text("name: mine\nfallback: true\n"
                                       "stands_in_for:\n  cmsis_nn: cmsis_nn\n")
    ours = REPO / "kernels" / "corev" / "cmsis_nn"
    replaced, kept = sorted(p.name for p in ours.glob("*.c"))[:2]
    (mine / "cmsis_nn" / replaced).write_text("/* mine */\n")
    plan = kernel_plan.plan(str(et_root), {"aten::add.out": ["v1/6;0|6;0|6;0"]}, [str(mine)])
    sources = next(k for k in plan.kernel_sets if k.name == "mine").op_sources
    assert str(mine / "op_add.cpp") in sources
    assert any(s.endswith("/kernels/portable/cpu/op_add.cpp") for s in sources), sources
    searched, _ = kernel_plan.libraries(str(et_root), [str(mine)])
    cortex_m = next((lib for lib in searched if lib.name == "cortex_m"), None)
    if cortex_m is None:
        pytest.skip("this ExecuTorch tree has no Cortex-M operators (backends/cortex_m)")
    assert str(mine / "cmsis_nn" / replaced) in cortex_m.replacements
    assert str(ours / replaced) not in cortex_m.replacements
    assert str(ours / kept) in cortex_m.replacements
