"""Where the build's own sources are: the board support (pal/), the CORE-V kernels
(kernels/corev) and backend (backends/corev), the executor runner
(examples/corev/executor_runner), and the SCons tools (site_scons/site_tools). In a
checkout they are beside site_scons/; a package installed from it (pip install) carries
them inside: etcorev/_data/ and etcorev/site_tools/."""

import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_INSTALLED = os.path.join(_HERE, "_data")
CHECKOUT = os.path.dirname(os.path.dirname(_HERE))


def source_dir(*parts):
    """A directory of the build's sources, e.g. source_dir("pal", "boards")."""
    if os.path.isdir(_INSTALLED):
        return os.path.join(_INSTALLED, *parts)
    return os.path.join(CHECKOUT, *parts)


def tool_dir():
    """The directory of the SCons tools (a toolpath for Environment(toolpath=[...]))."""
    installed = os.path.join(_HERE, "site_tools")
    return installed if os.path.isdir(installed) else os.path.join(CHECKOUT, "site_scons",
                                                                    "site_tools")
