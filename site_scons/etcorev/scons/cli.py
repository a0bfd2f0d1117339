"""The command-line face of the build: `scons -h` text and one-line option errors."""

import math
import os
import re
import textwrap

from etcorev.scons.usercache import OFF_VALUES

# Placeholders in `scons -h` for options without a fixed list of values.
METAVARS = {"model": "PATH", "inputs": "PATH", "app": "DIR", "executorch": "DIR", "cmsis_nn": "DIR",
            "core_v_verif": "DIR", "cv32e40p": "DIR",
            "verilator_model": "PATH", "build_dir": "DIR", "cache": "DIR|off",
            "toolchain": "PREFIX", "ops": "model|all|OP,...", "kernels": "DIR,...",
            "method_pool": "N", "temp_pool": "N", "install_dir": "DIR",
            "inspect_against": "ELF", "launcher": "ccache|distcc|icecc|COMMAND",
            "expected": "PATH", "timeout": "SECONDS", "debug_commands": "FILE",
            "rtol": "NUMBER", "atol": "NUMBER", "outputs": "ihex,bin|all|none"}


def option_error(error):
    """An invalid option value as one sentence that names the valid values."""
    text = str(error)
    match = re.search(r"enum variable '(\w+)': '(.*)'\. Valid values are: \((.*)\)", text)
    if match:
        valid = ", ".join(v.strip(" '\"") for v in match.group(3).split(",") if v.strip())
        return "Invalid value '%s' for %s; valid values: %s." % (match.group(2),
                                                                  match.group(1), valid)
    match = (re.search(r"option: '(\w+)'\s+Invalid value for boolean variable: '(.*)'", text)
             or re.search(r"boolean variable '(\w+)': (.*)", text))
    if match:
        return ("Invalid value '%s' for %s; valid values: 0, 1 (also no/yes, false/true, "
                "off/on)." % (match.group(2), match.group(1)))
    return " ".join(text.split()).rstrip(".") + "."


def option_help(opts, env):
    """`scons -h`: every option as NAME=VALUES with its default (and its value when the
    command line or the user settings change it), then what it does."""
    lines = []
    for opt in opts.options:
        text, values = opt.help, None
        listed = re.match(r"(.*?)\s+\(all\|none\|comma-separated list of names\)\s+"
                          r"allowed names: (.*)$", text, re.S)
        if listed:                                 # ListVariable
            text = listed.group(1)
            opt_names = listed.group(2).split()
            text += " (a comma-separated list of: %s; or all, none)" % ", ".join(opt_names)
        match = re.match(r"(.*) \(([^()|]+(?:\|[^()|]+)+)\)$", text, re.S)
        if match:                                  # EnumVariable/BoolVariable: "(a|b|c)"
            text, values = match.group(1), match.group(2).split("|")
        default, actual = opt.default, env.get(opt.key, opt.default)
        if values == ["yes", "no"]:                # BoolVariable
            values = ["0", "1"]
            default = "1" if default in (True, "1", "yes", "true") else "0"
            actual = "1" if actual in (True, "1", "yes", "true") else "0"
        if values:
            shown = "|".join(values)
        else:
            shown = METAVARS.get(opt.key) or ("N" if str(default).isdigit() else "VALUE")
        if isinstance(actual, bool):               # a converter's True/False (profile=)
            actual = "1" if actual else "0"
        about = "default: %s" % (default if default != "" else "none")
        if str(actual) not in (str(default), str(_converted(opt, env))):
            about += "; now: %s" % actual
        lines.append("  %s=%s  (%s)" % (opt.key, shown, about))
        lines += textwrap.wrap(text, 88, initial_indent=" " * 6, subsequent_indent=" " * 6)
    return "\n".join(lines)


def _converted(opt, env):
    """The default as the option's converter gives it to the build (IntOption keeps an
    unset "" as 0), the way SCons's Variables.Save compares them."""
    if not opt.converter:
        return opt.default
    try:
        try:
            return opt.converter(opt.default)
        except TypeError:
            return opt.converter(opt.default, env)
    except Exception:             # a converter that refuses its own default: no match
        return opt.default


# ---------------------------------------------------------------- validated options
# Each returns an Option (key, help, default, validator, converter): the value is checked
# where the option is declared, as given (no $-substitution first), and a bad one is one
# sentence. add_options() adds them and SCons's own option tuples to a Variables.

class Option(tuple):
    """An option whose value is validated as given, not after $-substitution."""


class PathValuedOption(Option):
    """An option whose value is a path or a comma-separated list of them."""


def add_options(opts, *options):
    """Add them to opts; returns the keys of the path options (their relative paths are
    resolved once the options are read)."""
    for option in options:
        if isinstance(option, Option):
            opts.Add(*option, subst=False)
        else:
            opts.AddVariables(option)
    return [option[0] for option in options if isinstance(option, PathValuedOption)]

def _refuse(key, value, why):
    import SCons.Errors
    raise SCons.Errors.UserError("Invalid value '%s' for %s: %s." % (value, key, why))


# The largest value of the C type an integer option becomes on RV32 (int, size_t pools
# whose arrays may not exceed PTRDIFF_MAX, uint32_t): beyond it the value would wrap.
C_TYPE_MAXIMUM = {"int": 2**31 - 1, "array size": 2**31 - 1, "uint32_t": 2**32 - 1}


def IntOption(key, help, default, minimum=None, maximum=None, power_of_two=False,
              optional=False, ctype=None):
    """A whole number (optional: empty means "choose for me", kept as 0). ctype: the C
    type the value becomes (C_TYPE_MAXIMUM), which bounds it unless maximum is lower."""
    if ctype is not None:
        maximum = min(C_TYPE_MAXIMUM[ctype], maximum if maximum is not None else 2**64)
    def convert(value):
        if optional and str(value).strip() == "":
            return 0
        try:
            return int(str(value).strip(), 0)
        except ValueError:
            return value

    def validate(key, value, env):
        ranges = []
        if minimum is not None:
            ranges.append("at least %d" % minimum)
        if maximum is not None:
            ranges.append("at most %d" % maximum)
        wanted = "a whole number" + (" " + " and ".join(ranges) if ranges else "")
        if power_of_two:
            wanted = "a power of two" + (" " + " and ".join(ranges) if ranges else "")
        if optional:
            wanted += ", or empty for the default"
        if optional and value == 0:
            return
        if not isinstance(value, int) or isinstance(value, bool):
            _refuse(key, value, "expected " + wanted)
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum) \
                or (power_of_two and value & (value - 1)):
            _refuse(key, value, "expected " + wanted)
    return Option((key, help, "" if optional and default in (None, "") else default, validate,
                   convert))


def FloatOption(key, help, default, minimum=0.0, maximum=None):
    """A finite number from minimum to maximum: inf and nan would switch a tolerance
    check off or overflow a timer. Checked as it is converted, so that the error quotes
    the value as typed (1e12, not 1e+12)."""
    def convert(value):
        wanted = "expected a finite number of at least %g" % minimum
        if maximum is not None:
            wanted += " and at most %g" % maximum
        typed = str(value).strip()
        try:
            number = float(typed)
        except ValueError:
            _refuse(key, typed, wanted)
        if not math.isfinite(number) or number < minimum \
                or (maximum is not None and number > maximum):
            _refuse(key, typed, wanted)
        return number
    return Option((key, help, default, None, convert))


# Characters SCons substitutes or a shell interprets inside the commands a path ends up in.
UNSAFE_PATH_CHARACTERS = '$"`'


def PathOption(key, help, default, required=False):
    """A path, or a comma-separated list of them (relative to where scons was started);
    required: not empty."""
    def validate(key, value, env):
        if required and not str(value).strip():
            _refuse(key, value, "it must not be empty (default: %s)" % default)
        bad = sorted({c for c in str(value) if c in UNSAFE_PATH_CHARACTERS})
        if bad:
            _refuse(key, value, "the path contains %s, which SCons and the shell would "
                    "interpret; rename or move it" % " and ".join("'%s'" % c for c in bad))
    return PathValuedOption((key, help, default, validate, None))


def PathOrOffOption(key, help, default):
    """A path, or a word for none: the words COREV_ET_CACHE takes (off, 0, no, none,
    false), so that the command line can switch off what the user settings name."""
    def convert(value):
        return "" if str(value).strip().lower() in OFF_VALUES else value
    return PathValuedOption(PathOption(key, help, default)[:4] + (convert,))


def CommandOption(key, help, default):
    """A command with its arguments (split as a shell would; SCons would substitute $)."""
    def validate(key, value, env):
        bad = sorted({c for c in str(value) if c in "$`"})
        if bad:
            _refuse(key, value, "the command contains %s, which SCons and the shell would "
                    "interpret" % " and ".join("'%s'" % c for c in bad))
    return Option((key, help, default, validate, None))


def BoardOption(key, help, default, names):
    """A board: one of names (pal/boards/<name>), or the path of a directory holding a
    board.py (a board of the user's own)."""
    def validate(key, value, env):
        value = str(value)
        if value in names:
            return
        if os.sep in value or value.startswith("."):
            if os.path.isfile(os.path.join(os.path.expanduser(value), "board.py")):
                return
            _refuse(key, value, "no board.py in that directory")
        import SCons.Errors
        raise SCons.Errors.UserError(
            "Invalid value '%s' for %s; valid values: %s, or the path of a board directory "
            "(with a board.py)." % (value, key, ", ".join(names)))
    METAVARS[key] = "|".join(names) + "|DIR"
    return Option((key, help, default, validate, None))


def NonEmptyOption(key, help, default):
    def validate(key, value, env):
        if not str(value).strip():
            _refuse(key, value, "it must not be empty (see `scons -h`)")
    return Option((key, help, default, validate, None))
