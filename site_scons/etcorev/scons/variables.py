"""The construction variables the tools read, each with what it takes, in one table
(VARIABLES), and their one check (check(), value()). In a SConstruct of one's own they
are whatever Python values it gives (BOARD=3, MODEL=[]): a wrong one is one line naming
$VARIABLE and what to set it to, instead of a TypeError deep in a tool. Each tool checks
those it reads where it first needs them (the tools do no I/O when loaded, and a
SConstruct may set a variable after loading one). Our SConstruct sets them from options
checked as they are read (etcorev.scons.cli), whose errors name the option: these checks
never fire there.
"""

from collections import UserList
from dataclasses import dataclass
from typing import Callable, Tuple, Union

from etcorev.errors import BuildSetupError


def _is_text(value):
    return isinstance(value, str)


def _is_flag(value):
    return isinstance(value, bool) or (isinstance(value, int) and value in (0, 1))


def _is_whole(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_list(value):
    # UserList: SCons's own lists (a ListVariable's value, CLVar) are ones.
    return isinstance(value, (list, tuple, UserList))


KINDS = {    # kind -> (test, what a value of it is)
    "text": (_is_text, "a str"),
    "flag": (_is_flag, "True or False"),
    "whole": (_is_whole, "a whole number (an int)"),
    "number": (_is_number, "a number"),
    "list": (_is_list, "a list"),
}


@dataclass(frozen=True)
class Variable:
    name: str
    kind: str                    # one of KINDS, or "choice": one of values
    about: str = ""              # what it is, for the message
    values: Union[Tuple, Callable[[], Tuple]] = ()    # a choice's (or a function of them)

    def accepted(self):
        return tuple(self.values() if callable(self.values) else self.values)

    def wrong(self, value):
        """What is wrong with value for this variable, or None."""
        if self.kind == "choice":
            values = self.accepted()
            if any(value == v and type(value) is type(v) for v in values):
                return None
            return "one of %s" % ", ".join(str(v) for v in values if v not in ("", None))
        test, what = KINDS[self.kind]
        return None if test(value) else what


def _isas():
    from etcorev.toolchain import riscv
    return tuple(riscv.ISAS)


def _build_types():
    from etcorev.toolchain import riscv
    return tuple(riscv.BUILD_TYPES)


VARIABLES = {v.name: v for v in (
    # the board tool (and everything that asks for the board)
    Variable("BOARD", "text", "a board's name (a directory of pal/boards: cv32e40p, qemu) or "
             "the path of a board directory (Dir('board').abspath)"),
    Variable("MODEL_PLACEMENT", "choice", "where the model goes", ("embedded", "external")),
    Variable("STACK_SIZE", "whole", "the stack's size in bytes"),
    # firmware, model_embed
    Variable("IMAGE_FORMATS", "list", "the outputs besides the ELF and the Verilog hex "
             "(['ihex', 'bin'])"),
    Variable("MODEL_ALIGN", "whole", "the embedded model's alignment in bytes"),
    # riscv_toolchain
    Variable("TOOLCHAIN", "text", "a compiler prefix, or empty for the default"),
    Variable("ISA", "choice", "the ISA and ABI", _isas),
    Variable("BUILD_TYPE", "choice", "the build type", _build_types),
    Variable("LTO", "choice", "link-time optimisation",
             ("auto", "0", "1", True, False, "", None)),
    Variable("PIC", "flag", "position-independent code"),
    # executorch
    Variable("ET_ROOT", "text", "the path of the ExecuTorch tree"),
    Variable("ET_LOG_LEVEL", "choice", "the log level compiled in",
             ("Off", "Debug", "Info", "Error", "Fatal")),
    Variable("PROFILE", "choice", "the profiling compiled in", (False, True, "etdump")),
    Variable("CMSIS_NN_ROOT", "text", "the path of the CMSIS-NN tree, or empty"),
    # the executor runner (site_tools/executor_runner.py)
    Variable("MODEL", "text", "the path of a .pte or .bpte, a directory, a glob pattern or a "
             "comma-separated list of them (File('add.pte').abspath)"),
    Variable("MODEL_INPUTS", "text", "a JSON file of inputs, or empty"),
    Variable("MODEL_EXPECTED", "text", "a JSON file of expected outputs, or empty"),
    Variable("OPS", "text", "model, all, or a comma-separated list of operators"),
    Variable("KERNEL_DIRS", "text", "the paths of kernel library directories, comma-separated"),
    Variable("COREV_KERNELS", "flag", "whether the CORE-V kernels are searched"),
    Variable("MODEL_EMBED", "choice", "how the model gets into the image",
             ("incbin", "xxd", "embed")),
    Variable("CLOCK_HZ", "whole", "the core clock in Hz"),
    Variable("RUNNER_METHOD", "text", "the name of the method to run, or empty for the "
             "program's first"),
    Variable("RUNNER_NUM_EXECUTIONS", "whole", "how many times the runner executes"),
    Variable("RUNNER_METHOD_POOL", "whole", "the method pool in bytes (0: sized for you)"),
    Variable("RUNNER_TEMP_POOL", "whole", "the temp pool in bytes (0: the default)"),
    Variable("INSTALL_DIR", "text", "where `scons install` copies the firmware"),
    Variable("RUNNER_APP_SOURCES", "list", "the sources of a main of one's own "
             "([File('main.c')])"),
    # run
    Variable("RUN_TIMEOUT", "number", "seconds a run may take"),
    Variable("RUN_MAX_CYCLES", "whole", "cycles the testbench runs at most"),
    Variable("RUN_RTOL", "number", "the relative tolerance of the output check"),
    Variable("RUN_ATOL", "number", "the absolute tolerance of the output check"),
    Variable("VERILATOR_MODEL", "text", "a Vtb_top_verilator, or empty"),
)}


def _kind_of(value):
    name = type(value).__name__
    if hasattr(value, "abspath"):       # File("x"), Dir("x"): said as they were written
        return "%s(%r) (an SCons node)" % (name, str(value))
    return "%r (%s %s)" % (value, "an" if name[0] in "aeiou" else "a", name)


def wrong_type_message(name, value, takes, about=""):
    """The one line for a construction variable of the wrong type or value: takes, what
    it must be ("a str"); about, what it is."""
    return ("The construction variable $%s is %s; set it to %s%s."
            % (name, _kind_of(value), takes, ": " + about if about else ""))


def check(env, *names):
    """Refuse the first of these construction variables (those env has) that is of the
    wrong type or value."""
    for name in names:
        if name in env:
            value(env, name)


def value(env, name, default=None):
    """env[name] (default when env has none), checked against VARIABLES."""
    found = env[name] if name in env else default
    variable = VARIABLES[name]
    wrong = variable.wrong(found)
    if wrong:
        raise BuildSetupError(wrong_type_message(name, found, wrong, variable.about))
    return found
