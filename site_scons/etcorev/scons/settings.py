"""The user-level settings file: SCons options every build on this machine should get
(the ExecuTorch tree, the Verilator model, ...), kept outside the repository.

It is an SCons variables file: Python assignments such as

    executorch = "/home/me/src/executorch"
    verilator_model = "/home/me/core-v-verif/cv32e40p/sim/core/cobj_dir/Vtb_top_verilator"

Location: $COREV_ET_SETTINGS, else $XDG_CONFIG_HOME/corev-et/options.py, else
~/.config/corev-et/options.py. Options on the command line win over it.
"""

import os


def path():
    explicit = os.environ.get("COREV_ET_SETTINGS")
    if explicit:
        return explicit
    return default_path()


def default_path():
    """Where the settings file is when COREV_ET_SETTINGS does not say."""
    config_home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config_home, "corev-et", "options.py")


def read():
    """The settings as a dict ({} when there is no file)."""
    file = path()
    return read_file(file) if os.path.isfile(file) else {}


def read_file(file):
    """The settings of a settings file, as a dict."""
    values = {}
    with open(file) as f:
        exec(compile(f.read(), file, "exec"), {}, values)
    return values


def write(**updates):
    """Add or replace settings, keeping the others."""
    values = read()
    values.update(updates)
    file = path()
    os.makedirs(os.path.dirname(file), exist_ok=True)
    with open(file, "w") as f:
        f.write("# corev-et user settings (SCons options applied to every build).\n")
        for key in sorted(values):
            f.write("%s = %r\n" % (key, values[key]))
    return file
