"""The build's options in one table: name, values, default, help (the SCons Variables
declarations of etcorev.scons.cli), the construction variable each one sets, and whether
it changes the code (and then what it adds to the variant directory's name).

From it SConstruct derives `scons -h`, the validation of every value (as it is declared)
and the variant directory, and maps the options onto construction variables once: the
tools (site_scons/site_tools) read UPPERCASE construction variables only, so they serve
any SConstruct, ours or a user's.

Options without a variable are SConstruct's own (what to build: app=, compiledb=,
cache=, build_dir=).
"""

import os
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

from SCons.Script import BoolVariable, EnumVariable, ListVariable

from etcorev import boards
from etcorev.scons.cli import (BoardOption, CommandOption, FloatOption, IntOption,
                               NonEmptyOption, PathOption, PathOrOffOption)
from etcorev.image.output_formats import FORMATS
from etcorev.toolchain import riscv


@dataclass(frozen=True)
class Option:
    declaration: tuple                  # an SCons Variables declaration (etcorev.scons.cli)
    variable: Optional[str] = None      # the construction variable it sets
    # Changes the code: (its place in the variant's name, the part it adds, from the
    # construction environment once the toolchain is configured, or None for nothing).
    variant: Optional[Tuple[int, Callable]] = None

    @property
    def name(self):
        return self.declaration[0]


def _flag(name, variable, when=True):
    return lambda env: name if env[variable] == when else None


def _lower(variable, prefix=""):
    return lambda env: prefix + str(env[variable]).lower()


PROFILE_WORDS = {"0": False, "no": False, "false": False, "off": False,
                 "1": True, "yes": True, "true": True, "on": True, "etdump": "etdump"}


def _profile_option(help):
    """profile=0|1|etdump (0 and 1 also as no/yes, false/true, off/on): $PROFILE is
    False, True (our cycle tracer) or "etdump" (ExecuTorch's ETDumpGen)."""
    from etcorev.scons.cli import Option as Declaration
    import SCons.Errors

    def convert(value):
        if value is True or value is False or value == "etdump":
            return value
        return PROFILE_WORDS.get(str(value).strip().lower(), value)

    def validate(key, value, env):
        if not (value is True or value is False or value == "etdump"):
            raise SCons.Errors.UserError("Invalid value '%s' for %s; valid values: 0, 1, "
                                         "etdump" % (value, key))
    return Declaration(("profile", help + " (0|1|etdump)", "0", validate, convert))


def _profile_part(env):
    return {True: "profile", "etdump": "etdump"}.get(env["PROFILE"]) \
        if env["PROFILE"] in (True, "etdump") else None


OPTIONS = (
    # What to build
    Option(PathOption("model", "the .pte model(s) to run, or bundled programs (.bpte, "
                      "their test cases checked on the target): a file, a directory (every "
                      ".pte in it, else every .bpte), a glob pattern, or a comma-separated "
                      "list of them", "examples/models/add.pte"),
           "MODEL"),
    Option(EnumVariable("model_placement", "link the model into the image, or leave it to "
                        "a separate hex for the board's model (flash) region", "embedded",
                        allowed_values=("embedded", "external")),
           "MODEL_PLACEMENT", (8, _flag("xip", "MODEL_PLACEMENT", "external"))),
    Option(EnumVariable("embed", "how the model gets into the image", "incbin",
                        allowed_values=("incbin", "xxd", "embed")), "MODEL_EMBED"),
    Option(IntOption("model_align", "alignment of the embedded model in bytes", 16, minimum=16,
                     power_of_two=True, ctype="uint32_t"), "MODEL_ALIGN"),
    Option(PathOption("inputs", "JSON file with the input values (default: NAME.inputs.json "
                      "beside the model, else all ones)", ""), "MODEL_INPUTS"),
    Option(PathOption("expected", "JSON file with the outputs `scons run` checks (default: "
                      "NAME.expected.json beside the model)", ""), "MODEL_EXPECTED"),
    Option(NonEmptyOption("ops", "operators to build: 'model' (from the .pte), 'all', or "
                          "a,b,...", "model"), "OPS"),
    Option(PathOption("kernels", "your own kernel directories (a yaml + C++ sources each), "
                      "searched before the CORE-V and ExecuTorch's kernels: DIR[,DIR...]", ""),
           "KERNEL_DIRS"),
    Option(BoolVariable("corev_kernels", "use the CORE-V kernels (kernels/corev) where they "
                        "cover the model's operators; 0: ExecuTorch's portable kernels only",
                        True),
           "COREV_KERNELS", (9, _flag("portable", "COREV_KERNELS", False))),
    Option(_profile_option("cycles per operator: the runtime's event-tracer hooks compiled "
                           "in; 1: with the runner's cycle tracer, `scons run` prints a "
                           "table; etdump: with ExecuTorch's ETDumpGen (needs the tree's "
                           "third-party/flatcc submodule), `scons run` writes "
                           "executor_runner.etdp and prints the Inspector's table"),
           "PROFILE", (10, _profile_part)),
    Option(("method", "the method of the program to run (default: its first, as "
            "ExecuTorch's executor_runner without --method_name)", ""), "RUNNER_METHOD"),
    Option(IntOption("num_executions", "how many times the runner executes the method", 1,
                     minimum=1, ctype="int"), "RUNNER_NUM_EXECUTIONS"),
    Option(IntOption("method_pool", "method allocator pool in bytes (default: sized from the "
                     "model)", "", minimum=64, optional=True, ctype="array size"),
           "RUNNER_METHOD_POOL"),
    Option(IntOption("temp_pool", "temp allocator pool in bytes (default: sized from the model, at least 1024)", "",
                     minimum=16, optional=True, ctype="array size"), "RUNNER_TEMP_POOL"),
    Option(IntOption("clock_hz", "core clock for the PAL's ticks-to-nanoseconds ratio",
                     400000000, minimum=1, ctype="uint32_t"), "CLOCK_HZ"),
    Option(ListVariable("outputs", "outputs besides the ELF and the Verilog hex", "none",
                        list(FORMATS)), "IMAGE_FORMATS"),
    Option(PathOption("app", "build the C/C++/asm sources of this directory instead of the "
                      "runner (board bring-up); sources in its lib/ become a static library",
                      "")),
    Option(BoolVariable("app_whole_archive", "link the app's lib/ with --whole-archive",
                        False)),
    # Where and for what
    Option(BoardOption("board", "target board: one of pal/boards, or the path of a board "
                       "directory of your own (its board.py)", "cv32e40p", boards.names()), "BOARD",
           (0, lambda env: os.path.basename(os.path.normpath(env["BOARD"])))),
    Option(("toolchain", "compiler prefix, with or without a directory (default: "
            "riscv32-corev-elf- on PATH, else the CORE-V GCC that ./setup.sh --corev-gcc "
            "built, else riscv64-unknown-elf- with picolibc)", ""), "TOOLCHAIN",
           (4, riscv.short_name)),
    Option(EnumVariable("isa", "RISC-V ISA and ABI", "rv32imc",
                        allowed_values=tuple(riscv.ISAS)), "ISA", (3, _lower("ISA"))),
    Option(EnumVariable("build_type", "optimisation and debug information", "Release",
                        allowed_values=tuple(riscv.BUILD_TYPES)), "BUILD_TYPE",
           (1, _lower("BUILD_TYPE"))),
    Option(BoolVariable("debug", "shorthand for build_type=Debug", False)),
    Option(EnumVariable("lto", "link-time optimisation (auto: on for Release)", "auto",
                        allowed_values=("auto", "0", "1")), "LTO", (5, riscv.lto_part)),
    Option(BoolVariable("pic", "position-independent code", False), "PIC",
           (6, _flag("pic", "PIC"))),
    Option(EnumVariable("logging", "ExecuTorch log level compiled in", "Off",
                        allowed_values=("Off", "Debug", "Info", "Error", "Fatal")),
           "ET_LOG_LEVEL", (2, _lower("ET_LOG_LEVEL", "log"))),
    Option(PathOption("executorch", "ExecuTorch source tree (else $EXECUTORCH_ROOT, else the "
                      "user settings)", ""), "ET_ROOT"),
    Option(PathOption("cmsis_nn", "CMSIS-NN source tree, for models of ExecuTorch's Cortex-M "
                      "int8 operators (cortex_m::...): a clone at the commit the ExecuTorch "
                      "tree pins", ""), "CMSIS_NN_ROOT"),
    Option(PathOption("verilator_model", "Vtb_top_verilator of core-v-verif, for `scons run` "
                      "on cv32e40p", ""), "VERILATOR_MODEL"),
    Option(PathOption("core_v_verif", "your core-v-verif checkout (branch cv32e40p/dev): "
                      "`scons testbench` builds the CV32E40P testbench from it and cv32e40p=, "
                      "and `scons run` on cv32e40p without verilator_model= runs the variant "
                      "the ISA needs", ""), "CORE_V_VERIF_DIR"),
    Option(PathOption("cv32e40p", "your cv32e40p RTL checkout (tag cv32e40p_v1.8.3), for the "
                      "testbench core_v_verif= builds", ""), "CV32E40P_DIR"),
    # Running
    # A week at most: Python's timers take up to about 24 days (milliseconds in an int).
    Option(FloatOption("timeout", "seconds `scons run` lets a program run before stopping it",
                       300.0, minimum=1.0, maximum=7 * 24 * 3600), "RUN_TIMEOUT"),
    Option(IntOption("max_cycles", "cycles the CV32E40P testbench runs before stopping "
                     "(+maxcycles)", 200000000, minimum=1, ctype="int"), "RUN_MAX_CYCLES"),
    Option(PathOption("debug_commands", "`scons debug` runs gdb in batch mode with this "
                      "command file instead of interactively", ""), "DEBUG_COMMANDS"),
    Option(FloatOption("rtol", "relative tolerance for expected float outputs", 1e-5),
           "RUN_RTOL"),
    Option(FloatOption("atol", "absolute tolerance for expected float outputs", 1e-6),
           "RUN_ATOL"),
    Option(PathOption("inspect_against", "`scons inspect` also prints the growth per library "
                      "from this other firmware ELF (its .map beside it) to this build", ""),
           "INSPECT_AGAINST"),
    # How
    Option(PathOption("build_dir", "where variants are built", "build", required=True),
           "BUILD_DIR"),
    Option(PathOption("install_dir", "where `scons install` puts executor_runner.elf/.hex/.map",
                      "install", required=True), "INSTALL_DIR"),
    Option(BoolVariable("verbose", "print full command lines", False), "VERBOSE"),
    Option(BoolVariable("compiledb", "write compile_commands.json", False)),
    Option(PathOrOffOption("cache", "SCons cache directory: build directories and checkouts "
                           "that use the same one share what they have built; off: none", "")),
    Option(CommandOption("launcher", "command put in front of every compile (ccache, distcc, "
                         "icecc, ...); not part of the build signature: switching it rebuilds "
                         "nothing", ""), "LAUNCHER"),
)


def construction_variables(values):
    """{construction variable: value} for the options' values (a dict-like, e.g. the
    environment Variables filled); debug=1 is BUILD_TYPE=Debug."""
    out = {o.variable: values[o.name] for o in OPTIONS if o.variable}
    if values["debug"]:
        out["BUILD_TYPE"] = "Debug"
    return out


def defaults(*variables):
    """{construction variable: the option's default, converted as a given value would
    be}: the tools' defaults are the command line's (one BOARD, one ISA for every
    SConstruct)."""
    out = {}
    for option in OPTIONS:
        if option.variable in variables:
            declaration = tuple(option.declaration)
            default = declaration[2]
            converter = declaration[4] if len(declaration) > 4 else None
            out[option.variable] = converter(default) if converter else default
    missing = set(variables) - set(out)
    assert not missing, "no option sets %s" % ", ".join(sorted(missing))
    return out


def option_words():
    """{construction variable: option name} of every option that sets one: how our
    SConstruct's messages name what the tools call $VARIABLE (etcorev.scons.vocabulary)."""
    return {o.variable: o.name for o in OPTIONS if o.variable}


def variant_name(env):
    """The variant directory's name: the parts of the options that change the code, in
    their places (board-buildtype-loglevel-isa-toolchain[-lto|-nolto][-pic][-xip]
    [-portable][-profile|-etdump])."""
    parts = sorted((o.variant[0], o.variant[1](env)) for o in OPTIONS if o.variant)
    return "-".join(part for _, part in parts if part)


def path_option_names():
    """The options whose values are paths (relative ones are resolved by SConstruct)."""
    from etcorev.scons.cli import PathValuedOption
    return [o.name for o in OPTIONS if isinstance(o.declaration, PathValuedOption)]


def settings_variables(path):
    """{construction variable: value} for the options a settings file sets, validated
    and converted as the command line's are; {} for no file. A file that cannot be read,
    an unknown option or a bad value: SCons.Errors.UserError naming the file."""
    import SCons.Environment
    import SCons.Errors
    from SCons.Variables import Variables
    from etcorev.scons import settings
    from etcorev.scons.cli import add_options, option_error

    if not os.path.isfile(path):
        return {}
    try:
        given = settings.read_file(path)
    except Exception as error:
        raise SCons.Errors.UserError("Cannot read the user settings file %s: %s: %s"
                                     % (path, type(error).__name__, error))
    by_name = {o.name: o for o in OPTIONS}
    unknown = sorted(name for name in given if name not in by_name)
    if unknown:
        raise SCons.Errors.UserError(
            "The user settings file %s sets %s, which %s no option of the build (`scons -h` "
            "in the checkout lists them)." % (path, ", ".join(unknown),
                                             "is" if len(unknown) == 1 else "are"))
    opts = Variables(None, {name: str(value) for name, value in given.items()})
    add_options(opts, *(by_name[name].declaration for name in given))
    try:
        env = SCons.Environment.Environment(tools=[], variables=opts)
    except SCons.Errors.UserError as error:
        raise SCons.Errors.UserError("In the user settings file %s: %s"
                                     % (path, option_error(error)))
    return {by_name[name].variable: env[name] for name in given if by_name[name].variable}
