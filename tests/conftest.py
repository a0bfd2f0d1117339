"""Shared pytest setup: make the build's Python packages (site_scons/) importable."""

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

_site_scons = str(REPO_ROOT / "site_scons")
if _site_scons not in sys.path:
    sys.path.insert(0, _site_scons)
