"""Shared pytest setup: make the build's Python packages (site_scons/) importable, and
find the ExecuTorch tree the way the build does (EXECUTORCH_ROOT, then the user
settings file)."""

import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]

_site_scons = str(REPO_ROOT / "site_scons")
if _site_scons not in sys.path:
    sys.path.insert(0, _site_scons)

from etcorev import settings  # noqa: E402
from sconsrun import TEST_CACHE  # noqa: E402


def pytest_configure(config):
    """One SCons cache for the whole test run (unless one is given): builds of the same
    configuration in different tests compile once."""
    if not os.environ.get(TEST_CACHE):
        import tempfile
        os.environ[TEST_CACHE] = tempfile.mkdtemp(prefix="corev-et-test-cache-")


def executorch_root():
    """The configured ExecuTorch tree, or None."""
    root = os.environ.get("EXECUTORCH_ROOT") or settings.read().get("executorch")
    return Path(root) if root and Path(root).is_dir() else None


@pytest.fixture(scope="session")
def et_root():
    root = executorch_root()
    if root is None:
        pytest.skip("no ExecuTorch tree: set EXECUTORCH_ROOT, or run "
                    "./setup.sh --executorch PATH to record it in the user settings")
    return root
