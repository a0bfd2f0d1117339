"""The build's tools as a package for other SConstructs (issue: "your firmware, our
build"): they read UPPERCASE construction variables only, load in any order (each loads
what it needs), and a project of the user's own (examples/own_project: its SConstruct,
its main.c, its own flash + RAM board), copied out of this checkout, builds with the
package installed into a fresh virtual environment and runs its model on QEMU."""

import itertools
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
                 *(REPO / "pal" / "boards").rglob("board.py"),
                 REPO / "examples" / "corev" / "executor_runner" / "SConscript"]:
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


@needs_qemu
def test_own_project_builds_with_the_installed_package(et_root, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    install = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", str(REPO)],
                             capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
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
