"""Python support for the CORE-V ExecuTorch firmware build (used by SConstruct, the
tools in site_scons/site_tools and the tests)."""

import importlib.util
import os

from etcorev import locations

# Environment(toolpath=etcorev.TOOLPATH) loads the build's tools in any SConstruct.
TOOLPATH = [locations.tool_dir()]
# The executor runner's SConscript, for SConscript(etcorev.RUNNER_SCONSCRIPT, exports="env").
RUNNER_SCONSCRIPT = locations.source_dir("examples", "corev", "executor_runner", "SConscript")


def load_module(path, name=None):
    """Import a Python file by path (toolchain.py, board modules) without touching sys.path."""
    name = name or os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
