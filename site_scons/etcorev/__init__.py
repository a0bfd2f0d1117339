"""Python support for the CORE-V ExecuTorch firmware build (used by SConstruct, the
tools in site_scons/site_tools and the tests)."""

import importlib.util
import os

from etcorev import locations

# Environment(toolpath=etcorev.TOOLPATH) loads the build's tools in any SConstruct.
TOOLPATH = [locations.tool_dir()]


def load_module(path, name=None):
    """Import a Python file by path (toolchain.py, board modules) without touching sys.path."""
    name = name or os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def user_settings(path=None):
    """The user settings file as construction variables, for a SConstruct of one's own:

        env = Environment(tools=[], toolpath=etcorev.TOOLPATH, **etcorev.user_settings())

    The file is the one ./setup.sh writes (`--executorch PATH`, `--cmsis-nn PATH`):
    path, else $COREV_ET_SETTINGS, else $XDG_CONFIG_HOME/corev-et/options.py, else
    ~/.config/corev-et/options.py; {} when there is none. Its options (executorch=,
    cmsis_nn=, verilator_model=, ...) are validated as the command line's are and given
    as the construction variables they set (ET_ROOT, CMSIS_NN_ROOT, VERILATOR_MODEL,
    ...); what is wrong with it raises SCons.Errors.UserError naming the file."""
    from etcorev.scons import options, settings
    return options.settings_variables(path or settings.path())
