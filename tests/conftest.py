"""Shared pytest setup: make the build's Python packages (site_scons/) importable, find
the ExecuTorch tree the way the build does (EXECUTORCH_ROOT, then the user settings
file), and give the end-to-end tests each toolchain (fixture `toolchain`)."""

import glob
import os
import shutil
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

_site_scons = str(REPO_ROOT / "site_scons")
if _site_scons not in sys.path:
    sys.path.insert(0, _site_scons)

# Byte code of site_scons/ goes to the user cache in tests as in builds (site_init.py).
sys.dont_write_bytecode, _saved = True, sys.dont_write_bytecode
import site_init  # noqa: E402,F401
sys.dont_write_bytecode = _saved or site_init.sys.dont_write_bytecode
from etcorev.scons import settings  # noqa: E402
from etcorev.toolchain import corev_gcc
from sconsrun import TEST_CACHE  # noqa: E402

# The toolchains the build supports, by the prefix tests give as toolchain=.
TOOLCHAINS = {
    "corev": ("riscv32-corev-elf-", "./setup.sh --corev-gcc builds it"),
    "picolibc": ("riscv64-unknown-elf-", "./setup.sh installs it"),
}


def toolchain_present(prefix):
    return bool(shutil.which(prefix + "gcc")) or (
        prefix == corev_gcc.PREFIX and corev_gcc.installed_prefix() is not None)


def pytest_generate_tests(metafunc):
    """Tests that take `toolchain` run once per toolchain; an absent one is a skip that
    says how to get it (the README's test command builds both)."""
    if "toolchain" in metafunc.fixturenames:
        params = []
        for name, (prefix, how) in TOOLCHAINS.items():
            marks = [] if toolchain_present(prefix) else [
                pytest.mark.skip(reason="toolchain %s not found (%s)" % (prefix, how))]
            params.append(pytest.param(prefix, id=name, marks=marks))
        metafunc.parametrize("toolchain", params, scope="module")


# The shared cache this process made, if it made it (xdist's workers find it made).
_made_cache = None


def pytest_configure(config):
    """One SCons cache for the whole test run (unless one is given): builds of the same
    configuration in different tests compile once."""
    global _made_cache
    if not os.environ.get(TEST_CACHE):
        import tempfile
        _made_cache = os.environ[TEST_CACHE] = tempfile.mkdtemp(prefix="corev-et-test-cache-")


def pytest_unconfigure(config):
    """The run's cache goes with the run (hundreds of MB): removed by the process that
    made it, after its workers have ended."""
    if _made_cache is not None:
        shutil.rmtree(_made_cache, ignore_errors=True)
        for marker in glob.glob(glob.escape(_made_cache) + ".testbench-*"):   # build_testbench_once
            os.remove(marker)
        del os.environ[TEST_CACHE]


def executorch_root():
    """The configured ExecuTorch tree, or None."""
    root = os.environ.get("EXECUTORCH_ROOT") or settings.read().get("executorch")
    return Path(root) if root and Path(root).is_dir() else None


def cmsis_nn_root():
    """The configured CMSIS-NN tree (cmsis_nn= in the user settings), or None."""
    root = os.environ.get("COREV_ET_CMSIS_NN") or settings.read().get("cmsis_nn")
    return Path(root) if root and Path(root).is_dir() else None


@pytest.fixture(scope="session")
def cmsis_nn():
    root = cmsis_nn_root()
    if root is None:
        pytest.skip("no CMSIS-NN tree: clone https://github.com/ARM-software/CMSIS-NN at the "
                    "commit the ExecuTorch tree pins and run ./setup.sh --cmsis-nn PATH")
    return root


def flatcc_tree_root():
    """An ExecuTorch tree with its third-party/flatcc submodule (what profile=etdump
    builds from), or None: $COREV_ET_FLATCC_TREE, else the configured tree when it has
    the submodule. No user setting: a tree with flatcc is a test-machine matter."""
    from etcorev.executorch.flatcc import has_flatcc
    for root in (os.environ.get("COREV_ET_FLATCC_TREE"), executorch_root()):
        if root and has_flatcc(str(root)):
            return Path(root)
    return None


@pytest.fixture(scope="session")
def flatcc_tree():
    root = flatcc_tree_root()
    if root is None:
        pytest.skip("no ExecuTorch tree with the third-party/flatcc submodule: set "
                    "COREV_ET_FLATCC_TREE to one (`git submodule update --init "
                    "third-party/flatcc` in a clone)")
    return root


@pytest.fixture(scope="session")
def et_root():
    root = executorch_root()
    if root is None:
        pytest.skip("no ExecuTorch tree: set EXECUTORCH_ROOT, or run "
                    "./setup.sh --executorch PATH to record it in the user settings")
    return root


def same_program(fresh: bytes, shipped: bytes) -> bool:
    """Are two .pte files the same program, read by ExecuTorch's own deserializer? (The
    bytes of a fresh export depend on the flatbuffers build's incidental layout, which
    varies with the export environment; the program does not.) Needs the export extra."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    return deserialize_pte_binary(fresh) == deserialize_pte_binary(shipped)


def pytest_collection_modifyitems(config, items):
    """Files with long tests first, the longest first (the minutes their `long` marks
    give: how long each takes on 2 cores, a scheduling hint, not a limit). pytest-xdist
    hands whole files to its workers in this order (--no-loadscope-reorder): started
    first, the long files end together with the rest instead of after it."""
    minutes = {}
    for item in items:
        mark = item.get_closest_marker("long")
        if mark is not None:
            path = item.nodeid.split("::")[0]
            minutes[path] = minutes.get(path, 0) + mark.kwargs.get("minutes", 1)
    items.sort(key=lambda item: -minutes.get(item.nodeid.split("::")[0], 0))
