"""The CV32E40P Verilator testbench of core-v-verif, built from the user's checkouts of
core-v-verif (cv32e40p/tb/core) and cv32e40p (the RTL): the variants, what each changes
in the testbench's sources, and the sources and flags of a Verilator build. No SCons
here: the tool site_scons/site_tools/testbench.py builds them, and tests patch small
files with the functions below.

Every variant is core-v-verif's `tb_top_verilator` with some of the core's parameters
set; the testbench's own files are patched copies, written into the build directory,
never into the user's checkout:

- COREV_PULP=1 (the CORE-V extensions, for isa=..._xcv): tb_top_verilator.sv passes
  `.COREV_PULP (1)` to the wrapper, whose default is 0.
- FPU=1 (for isa=rv32imfc...): tb_top_verilator.sv passes `.FPU (1)`, and the wrapper
  instantiates `cv32e40p_top` (the core with the FPU beside it) instead of
  `cv32e40p_core`, whose APU port the wrapper ties off: with FPU=1 alone the first
  floating-point instruction waits forever. The RTL comes from the FPU manifest.
- Every variant: tb_top_verilator.cpp raises reset once before pulling it low (RESET
  below), so that the flops with an asynchronous reset see its edge.
"""

import os
import re
from dataclasses import dataclass, field
from typing import Tuple

from etcorev.errors import BuildSetupError


@dataclass(frozen=True)
class Variant:
    name: str
    pulp: bool                      # COREV_PULP=1: the CORE-V (PULP) extensions
    fpu: bool                       # FPU=1: cv32e40p_top with its FPU
    # Verilator's warnings that stop the build of this variant, waived (the FPU's vendored
    # sources trip more of them than the core's).
    waivers: Tuple[str, ...] = field(default=())

    @property
    def manifest(self):
        """The RTL manifest of the cv32e40p checkout this variant builds from."""
        return "cv32e40p_fpu_manifest.flist" if self.fpu else "cv32e40p_manifest.flist"

    @property
    def parameters(self):
        """The wrapper's parameters tb_top_verilator.sv sets for this variant."""
        return {"COREV_PULP": int(self.pulp), "FPU": int(self.fpu)}


# What core-v-verif's Makefile waives for every build.
WAIVERS = ("-Wno-lint", "-Wno-UNOPTFLAT", "-Wno-MODDUP", "-Wno-MULTIDRIVEN", "-Wno-COMBDLY",
           "-Wno-BLKANDNBLK")
_FPU_WAIVERS = ("-Wno-fatal", "-Wno-style")

# The variants, by name: the one table of what differs between them.
VARIANTS = {v.name: v for v in (
    Variant("plain", pulp=False, fpu=False),
    Variant("fpu", pulp=False, fpu=True, waivers=_FPU_WAIVERS),
    Variant("pulp", pulp=True, fpu=False),
    Variant("pulp-fpu", pulp=True, fpu=True, waivers=_FPU_WAIVERS),
)}

# Where core-v-verif keeps the testbench, and its sources (tb_top_verilator.sv first).
TB_SUBDIR = os.path.join("cv32e40p", "tb", "core")
TB_SOURCES = ("tb_top_verilator.sv", "cv32e40p_core_tb_wrapper.sv",
              "tb_riscv/riscv_rvalid_stall.sv", "tb_riscv/riscv_gnt_stall.sv", "mm_ram.sv",
              "dp_ram.sv")
TB_MAIN = "tb_top_verilator.cpp"
TOP_MODULE = "tb_top_verilator"
EXECUTABLE = "Vtb_top_verilator"
# The core's log module, compiled in as core-v-verif's Makefile does.
CORE_LOG = os.path.join("bhv", "cv32e40p_core_log.sv")


def variant_for_isa(isa):
    """The variant that runs firmware built for isa: an FPU for the F extension, the
    CORE-V extensions for isa=..._xcv."""
    base, _, extension = isa.partition("_")
    fpu = "f" in base[len("rv32"):]
    pulp = extension == "xcv"
    return next(v for v in VARIANTS.values() if v.fpu == fpu and v.pulp == pulp)


# ---------------------------------------------------------------- patches

class PatchError(BuildSetupError):
    """A testbench file does not look like the one the patches were written for."""


def _sub_once(pattern, replacement, text, what, filename, flags=0):
    new, count = re.subn(pattern, replacement, text, flags=flags)
    if count == 0:
        raise PatchError("%s: cannot %s (no match for /%s/): is this core-v-verif's "
                         "cv32e40p testbench?" % (filename, what, pattern))
    return new


def _wrapper_instantiation(text, filename):
    """(start, end) of the parameter list `#( ... )` of the cv32e40p_core_tb_wrapper
    instantiation in tb_top_verilator.sv."""
    match = re.search(r"^\s*cv32e40p_core_tb_wrapper\s*#\s*\(", text, re.M)
    if not match:
        raise PatchError("%s: no instantiation of cv32e40p_core_tb_wrapper with a parameter "
                         "list: is this core-v-verif's cv32e40p testbench?" % filename)
    depth, i = 1, match.end()
    while depth and i < len(text):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        i += 1
    return match.end(), i - 1


def patch_tb_top(text, variant, filename=TB_SOURCES[0]):
    """tb_top_verilator.sv with the wrapper's parameters of the variant: each one that is
    passed gets the variant's value, each one that is not is added."""
    start, end = _wrapper_instantiation(text, filename)
    parameters = text[start:end]
    added = []
    for name, value in variant.parameters.items():
        pattern = r"(\.%s\s*\()\s*[^()]*?\s*(\))" % name
        if re.search(pattern, parameters):
            parameters = re.sub(pattern, r"\g<1>%d\g<2>" % value, parameters, count=1)
        elif value:
            added.append(".%s (%d)," % (name, value))
    if added:
        # First in the list: the existing ones keep their commas.
        parameters = " ".join(added) + "\n          " + parameters.lstrip()
    return text[:start] + parameters + text[end:]


def patch_wrapper(text, variant, filename=TB_SOURCES[1]):
    """cv32e40p_core_tb_wrapper.sv for the variant: with an FPU, cv32e40p_top (core and
    FPU) instead of cv32e40p_core: its APU port is internal, it has mtvec_addr_i and
    dm_exception_addr_i inputs (tied to 0, as the core's are when left open) and three
    debug status outputs (left open), and the core is one level down (core_i)."""
    if not variant.fpu:
        return text
    match = re.search(r"\bcv32e40p_core(\s*#\s*\()", text)
    if not match:
        raise PatchError("%s: no instantiation of cv32e40p_core with a parameter list: is this "
                         "core-v-verif's cv32e40p testbench?" % filename)
    end = text.find(");", match.end())
    end = len(text) if end < 0 else end
    core = "cv32e40p_top" + text[match.start() + len("cv32e40p_core"):end]
    what = "in the cv32e40p_core instantiation: %s"
    core = _sub_once(r"^[ \t]*\.apu_\w+\s*\([^()]*\)\s*,?[ \t]*(//[^\n]*)?\n", "", core,
                     what % "remove the APU port connections", filename, flags=re.M)
    core = _sub_once(r"^([ \t]*)(\.dm_halt_addr_i\s*\([^()]*\)\s*,)[ \t]*\n",
                     "\\1\\2\n\\1.mtvec_addr_i           ( 32'h0                 ),\n"
                     "\\1.dm_exception_addr_i    ( 32'h0                 ),\n",
                     core, what % "connect mtvec_addr_i and dm_exception_addr_i", filename,
                     flags=re.M)
    core = _sub_once(r"^([ \t]*)(\.debug_req_i\s*\([^()]*\)\s*,)[ \t]*\n",
                     "\\1\\2\n\\1.debug_havereset_o      (                       ),\n"
                     "\\1.debug_running_o        (                       ),\n"
                     "\\1.debug_halted_o         (                       ),\n",
                     core, what % "add the debug status outputs", filename, flags=re.M)
    text = text[:match.start()] + core + text[end:]
    # Outside comments: the memory's pc_core_id_i.
    return _sub_once(r"^([^/\n]*)\bcv32e40p_core_i\.pc_id\b", "\\1cv32e40p_core_i.core_i.pc_id",
                     text, "reach the core's pc_id inside cv32e40p_top", filename, flags=re.M)


# The testbench starts with rst_ni low and never gives it a falling edge, so flops with an
# asynchronous reset (`always_ff @(posedge clk, negedge rst_ni)`) reset only on a clock
# edge while it is low. The FPU's clock is gated off until its first request: without an
# edge its division unit keeps the state Verilator starts it in, and the first float
# division waits forever. Raising reset for one evaluation before pulling it low gives
# every such flop the edge.
RESET = ("    top->rst_ni         = 1;  // corev-et: a falling edge of rst_ni below\n"
         "    top->eval();\n")


def patch_main(text, variant, filename=TB_MAIN):
    """tb_top_verilator.cpp with a falling edge of rst_ni at time 0 (RESET)."""
    return _sub_once(r"^([ \t]*top->rst_ni\s*=\s*0\s*;[^\n]*\n)", lambda m: RESET + m.group(1),
                     text, "find where reset is pulled low", filename, flags=re.M)


# The testbench files a variant changes, and how (plain gets the reset edge too).
PATCHES = {TB_SOURCES[0]: patch_tb_top, TB_SOURCES[1]: patch_wrapper, TB_MAIN: patch_main}


def patched_files(variant):
    """The testbench files the variant builds from patched copies of."""
    return [name for name, patch in PATCHES.items()
            if patch is patch_main or (patch is patch_tb_top and (variant.pulp or variant.fpu))
            or (patch is patch_wrapper and variant.fpu)]


def patch(name, text, variant):
    return PATCHES[name](text, variant, filename=name)


# ---------------------------------------------------------------- the checkouts

def tb_dir(core_v_verif):
    return os.path.join(core_v_verif, TB_SUBDIR)


def check_checkouts(core_v_verif, cv32e40p):
    """Refuse checkouts that lack what the build reads, naming the construction variable."""
    for variable, top, files, what in (
            ("CORE_V_VERIF_DIR", core_v_verif,
             [os.path.join(TB_SUBDIR, f) for f in TB_SOURCES + (TB_MAIN,)],
             "core-v-verif (branch cv32e40p/dev)"),
            ("CV32E40P_DIR", cv32e40p,
             [v.manifest for v in VARIANTS.values()] + [CORE_LOG], "cv32e40p (tag cv32e40p_v1.8.3)")):
        if not os.path.isdir(top):
            raise BuildSetupError("$%s=%s is not a directory." % (variable, top))
        missing = sorted({f for f in files if not os.path.isfile(os.path.join(top, f))})
        if missing:
            raise BuildSetupError("$%s=%s has no %s: is it a checkout of %s?"
                                  % (variable, top, missing[0], what))


def manifest_sources(manifest, rtl_dir):
    """The files a manifest (-f file with ${DESIGN_RTL_DIR}) names, and the files of its
    +incdir+ directories (what `include can read): the RTL a build depends on."""
    files, incdirs = [], []
    with open(manifest) as f:
        for line in f:
            line = line.split("//")[0].strip()
            if not line:
                continue
            line = line.replace("${DESIGN_RTL_DIR}", rtl_dir).replace("$DESIGN_RTL_DIR", rtl_dir)
            if line.startswith("+incdir+"):
                incdirs.extend(p for p in line[len("+incdir+"):].split("+") if p)
            elif not line.startswith(("-", "+")):
                files.append(os.path.normpath(line))
    for directory in incdirs:
        if os.path.isdir(directory):
            files.extend(os.path.normpath(os.path.join(directory, name))
                         for name in sorted(os.listdir(directory))
                         if name.endswith((".sv", ".svh", ".v", ".vh")))
    return sorted(set(files))
