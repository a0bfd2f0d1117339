"""The command-line face of the build: `scons -h` text and one-line option errors."""

import re
import textwrap

# Placeholders in `scons -h` for options without a fixed list of values.
METAVARS = {"model": "PATH", "inputs": "PATH", "app": "DIR", "executorch": "DIR",
            "verilator_model": "PATH", "build_dir": "DIR", "cache": "DIR",
            "toolchain": "PREFIX", "ops": "model|all|OP,...", "kernels": "DIR,...",
            "method_pool": "N", "temp_pool": "N", "install_dir": "DIR",
            "inspect_against": "ELF"}


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
        about = "default: %s" % (default if default != "" else "none")
        if str(actual) != str(default):
            about += "; now: %s" % actual
        lines.append("  %s=%s  (%s)" % (opt.key, shown, about))
        lines += textwrap.wrap(text, 88, initial_indent=" " * 6, subsequent_indent=" " * 6)
    return "\n".join(lines)
