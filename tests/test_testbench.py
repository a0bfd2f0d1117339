"""The CV32E40P Verilator testbench built by the project (issue: "Testbenches built by the
project"): the patches to core-v-verif's testbench (quick, on small fake files), the SCons
build's dependencies and clean-up (a fake checkout and a fake verilator), and the four
variants built from the user's checkouts, each running a program that needs it."""

import hashlib
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from etcorev import testbench
from etcorev.toolchain import riscv
from sconsrun import NO_CHECKOUTS, REPO, scons, checkouts_for_testbench, build_testbench_once

needs_compiler = pytest.mark.skipif(
    not shutil.which("riscv64-unknown-elf-gcc") and not shutil.which("riscv32-corev-elf-gcc"),
    reason="no RISC-V cross compiler (./setup.sh installs it)")


# ---------------------------------------------------------------- the patches (quick)

TB_TOP = textwrap.dedent("""\
    module tb_top_verilator #(parameter BOOT_ADDR = 'h80) (input logic clk_i);
        other_module #(.FPU (0)) other_i (.clk_i (clk_i));
        cv32e40p_core_tb_wrapper
            #(.INSTR_RDATA_WIDTH (INSTR_RDATA_WIDTH),
              .BOOT_ADDR         (BOOT_ADDR),
              .COREV_CLUSTER     (0),
              .FPU               (0),
              .DM_HALTADDRESS    (32'h1A110800)
             )
        cv32e40p_core_tb_wrapper_i
            (.clk_i          ( clk_i          ));
    endmodule
    """)

WRAPPER = textwrap.dedent("""\
    module cv32e40p_core_tb_wrapper #(parameter FPU = 0) (input logic clk_i);
    //  cv32e40p_core_log core_log_i(.pc_id_i ( cv32e40p_core_i.pc_id ));
        cv32e40p_core #(
                     .FPU              (FPU)
                    )
        cv32e40p_core_i
            (
             .clk_i                  ( clk_i                 ),
             .boot_addr_i            ( BOOT_ADDR             ),
             .dm_halt_addr_i         ( DM_HALTADDRESS        ),
             .apu_req_o              (                       ),
             .apu_gnt_i              ( 1'b0                  ),
             .apu_result_i           ( {32{1'b0}}            ),
             .apu_flags_i            ( {5{1'b0}}             ), // APU_NUSFLAGS_CPU
             .debug_req_i            ( debug_req             ),
             .fetch_enable_i         ( fetch_enable_i        )
           );
        mm_ram ram_i
            (.dm_halt_addr_i ( DM_HALTADDRESS ),
             .pc_core_id_i   ( cv32e40p_core_i.pc_id ));
    endmodule
    """)

MAIN = textwrap.dedent("""\
    int main(int argc, char **argv, char **env)
    {
        top = new Vtb_top_verilator();
        top->fetch_enable_i = 1;
        top->clk_i          = 0;
        top->rst_ni         = 0;

        top->eval();
    }
    """)

V = testbench.VARIANTS


@pytest.mark.quick
def test_one_variant_per_isa():
    assert {isa: testbench.variant_for_isa(isa).name for isa in riscv.ISAS} == {
        "rv32imc": "plain", "rv32imfc": "fpu", "rv32imc_xcv": "pulp",
        "rv32imfc_xcv": "pulp-fpu"}
    assert [(v.pulp, v.fpu) for v in V.values()] == [(False, False), (False, True),
                                                     (True, False), (True, True)]
    assert V["fpu"].manifest == "cv32e40p_fpu_manifest.flist"
    assert V["pulp"].manifest == "cv32e40p_manifest.flist"
    assert "-Wno-fatal" in V["pulp-fpu"].waivers and not V["plain"].waivers


@pytest.mark.quick
def test_tb_top_gets_the_variants_parameters():
    assert testbench.patch_tb_top(TB_TOP, V["plain"]) == TB_TOP
    pulp = testbench.patch_tb_top(TB_TOP, V["pulp"])
    assert pulp.count(".COREV_PULP (1),") == 1
    assert "#(.COREV_PULP (1),\n          .INSTR_RDATA_WIDTH" in pulp
    assert ".FPU               (0)," in pulp
    fpu = testbench.patch_tb_top(TB_TOP, V["fpu"])
    assert ".FPU               (1)," in fpu and "COREV_PULP" not in fpu
    # Only the wrapper's parameters: another instantiation keeps its own.
    assert "other_module #(.FPU (0))" in fpu
    both = testbench.patch_tb_top(TB_TOP, V["pulp-fpu"])
    assert ".COREV_PULP (1)," in both and ".FPU               (1)," in both
    # A parameter that is passed already gets the variant's value; patching is idempotent.
    assert testbench.patch_tb_top(both, V["pulp-fpu"]) == both
    assert testbench.patch_tb_top(both, V["plain"]).count("(1)") == 0


@pytest.mark.quick
def test_wrapper_instantiates_cv32e40p_top_for_the_fpu():
    for name in ("plain", "pulp"):
        assert testbench.patch_wrapper(WRAPPER, V[name]) == WRAPPER
    fpu = testbench.patch_wrapper(WRAPPER, V["fpu"])
    assert "    cv32e40p_top #(" in fpu and "cv32e40p_core #(" not in fpu
    assert ".apu_" not in fpu
    # The core's new inputs once, in the core's instantiation (not in mm_ram's).
    assert fpu.count(".mtvec_addr_i") == 1 and fpu.count(".dm_exception_addr_i") == 1
    core = fpu[fpu.index("cv32e40p_top #("):fpu.index("mm_ram")]
    assert ".dm_halt_addr_i         ( DM_HALTADDRESS        ),\n" \
           "         .mtvec_addr_i           ( 32'h0                 )," in core
    for output in ("debug_havereset_o", "debug_running_o", "debug_halted_o"):
        assert "." + output in core
    assert "( cv32e40p_core_i.core_i.pc_id ))" in fpu
    assert "//  cv32e40p_core_log core_log_i(.pc_id_i ( cv32e40p_core_i.pc_id ));" in fpu
    assert testbench.patch_wrapper(WRAPPER, V["pulp-fpu"]) == fpu


@pytest.mark.quick
def test_main_gives_reset_a_falling_edge():
    patched = testbench.patch_main(MAIN, V["plain"])
    lines = [line.strip() for line in patched.splitlines()]
    at = lines.index("top->rst_ni         = 0;")
    assert lines[at - 2].startswith("top->rst_ni         = 1;")
    assert lines[at - 1] == "top->eval();"
    assert patched.replace(testbench.RESET, "") == MAIN


@pytest.mark.quick
def test_every_variant_patches_what_it_changes():
    assert testbench.patched_files(V["plain"]) == ["tb_top_verilator.cpp"]
    assert testbench.patched_files(V["pulp"]) == ["tb_top_verilator.sv", "tb_top_verilator.cpp"]
    assert testbench.patched_files(V["fpu"]) == ["tb_top_verilator.sv",
                                                 "cv32e40p_core_tb_wrapper.sv",
                                                 "tb_top_verilator.cpp"]


@pytest.mark.quick
@pytest.mark.parametrize("name, text, variant", [
    ("tb_top_verilator.sv", "module tb_top_verilator; endmodule\n", "pulp"),
    ("cv32e40p_core_tb_wrapper.sv", "module w; cv32e40p_top #() core_i (); endmodule\n",
     "fpu"),
    ("tb_top_verilator.cpp", "int main() { top->rst_ni = !reset; }\n", "plain"),
])
def test_a_file_that_does_not_match_is_refused_with_its_name(name, text, variant):
    with pytest.raises(testbench.PatchError) as error:
        testbench.patch(name, text, V[variant])
    assert str(error.value).startswith(name + ": ")
    assert "core-v-verif" in str(error.value)


@pytest.mark.quick
def test_manifest_sources(tmp_path):
    rtl = tmp_path / "rtl"
    (rtl / "include").mkdir(parents=True)
    (rtl / "include" / "pkg.sv").write_text("package p; endpackage\n")
    (rtl / "include" / "notes.txt").write_text("not a source\n")
    (rtl / "core.sv").write_text("module core; endmodule\n")
    manifest = tmp_path / "m.flist"
    manifest.write_text("// a comment\n+incdir+${DESIGN_RTL_DIR}/include\n\n"
                        "${DESIGN_RTL_DIR}/core.sv  // the core\n"
                        "${DESIGN_RTL_DIR}/../bhv/x.sv\n")
    assert testbench.manifest_sources(str(manifest), str(rtl)) == sorted(
        [str(rtl / "core.sv"), str(rtl / "include" / "pkg.sv"), str(tmp_path / "bhv" / "x.sv")])


# ---------------------------------------------------------------- the build (fake checkouts)

FAKE_VERILATOR = """\
#!%s
# A stand-in for verilator --build: records its command line, writes a tree and a model.
import os, sys
here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
with open(os.path.join(here, "calls"), "a") as f:
    f.write(" ".join(args + ["DESIGN_RTL_DIR=" + os.environ["DESIGN_RTL_DIR"]]) + "\\n")
if os.path.exists(os.path.join(here, "fail")):
    print("%%Error: tb_top_verilator.sv:1: something is wrong")
    sys.exit(1)
mdir = args[args.index("--Mdir") + 1]
os.makedirs(mdir, exist_ok=True)
with open(os.path.join(mdir, "Vtb_top_verilator.mk"), "w") as f:
    f.write("# generated\\n")
model = os.path.join(mdir, args[args.index("-o") + 1])
with open(model, "w") as f:
    f.write("#!/bin/sh\\necho fake testbench\\n")
os.chmod(model, 0o755)
print("- V e r i l a t i o n   R e p o r t: fake")
"""


def _fake_checkouts(root):
    cvv, core = root / "core-v-verif", root / "cv32e40p"
    tb = cvv / testbench.TB_SUBDIR
    (tb / "tb_riscv").mkdir(parents=True)
    (tb / "tb_top_verilator.sv").write_text(TB_TOP)
    (tb / "cv32e40p_core_tb_wrapper.sv").write_text(WRAPPER)
    (tb / testbench.TB_MAIN).write_text(MAIN)
    for name in testbench.TB_SOURCES[2:]:
        (tb / name).write_text("module %s; endmodule\n" % Path(name).stem)
    for directory in ("rtl/include", "rtl/vendor", "bhv"):
        (core / directory).mkdir(parents=True)
    (core / "rtl" / "include" / "pkg.sv").write_text("package p; endpackage\n")
    (core / "rtl" / "core.sv").write_text("module core; endmodule\n")
    (core / "rtl" / "vendor" / "fpu.sv").write_text("module fpu; endmodule\n")
    (core / "bhv" / "cv32e40p_core_log.sv").write_text("module log; endmodule\n")
    plain = "+incdir+${DESIGN_RTL_DIR}/include\n${DESIGN_RTL_DIR}/core.sv\n"
    (core / "cv32e40p_manifest.flist").write_text(plain)
    (core / "cv32e40p_fpu_manifest.flist").write_text(plain + "${DESIGN_RTL_DIR}/vendor/fpu.sv\n")
    return cvv, core


def _snapshot(*tops):
    return {str(p): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for top in tops for p in sorted(top.rglob("*")) if p.is_file()}


def _edit(path, text):
    """Change a file as a user would, seconds after the build: the build's decider
    (content-timestamp) looks at the content of files whose timestamp (in whole seconds)
    changed."""
    mtime = path.stat().st_mtime
    path.write_text(text)
    os.utime(path, (mtime + 2, mtime + 2))


@pytest.fixture
def fake(tmp_path):
    cvv, core = _fake_checkouts(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    verilator = bin_dir / "verilator"
    verilator.write_text(FAKE_VERILATOR % sys.executable)
    verilator.chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ["PATH"]))

    def run(*args):
        return scons("core_v_verif=%s" % cvv, "cv32e40p=%s" % core, *args,
                     build_dir=tmp_path / "build", env=env, cache=False, timeout=300)

    def calls():
        path = bin_dir / "calls"
        return path.read_text().splitlines() if path.exists() else []
    return dict(cvv=cvv, core=core, run=run, calls=calls, bin=bin_dir,
                build=tmp_path / "build" / "testbench")


def test_build_patches_copies_and_rebuilds_only_when_a_source_changes(fake):
    before = _snapshot(fake["cvv"], fake["core"])
    first = fake["run"]("testbench-fpu")
    assert first.returncode == 0, first.stdout
    fpu = fake["build"] / "fpu"
    assert (fpu / "Vtb_top_verilator").is_file() and (fpu / "obj_dir").is_dir()
    assert sorted(p.name for p in (fpu / "tb").iterdir()) == [
        "cv32e40p_core_tb_wrapper.sv", "tb_top_verilator.cpp", "tb_top_verilator.sv"]
    assert "cv32e40p_top #(" in (fpu / "tb" / "cv32e40p_core_tb_wrapper.sv").read_text()
    assert "Testbench fpu: %s" % (fpu / "Vtb_top_verilator") in first.stdout
    [call] = fake["calls"]()
    # The patched copies, the user's other files, the FPU's manifest, waivers, the RTL dir.
    for word in [str(fpu / "tb" / "tb_top_verilator.sv"), str(fpu / "tb" / testbench.TB_MAIN),
                 str(fake["cvv"] / testbench.TB_SUBDIR / "mm_ram.sv"),
                 str(fake["core"] / "cv32e40p_fpu_manifest.flist"), "-Wno-fatal",
                 "--top-module tb_top_verilator", "DESIGN_RTL_DIR=%s" % (fake["core"] / "rtl")]:
        assert word in call, word
    assert _snapshot(fake["cvv"], fake["core"]) == before     # their checkouts: untouched

    again = fake["run"]("testbench-fpu")
    assert "up to date" in again.stdout and len(fake["calls"]()) == 1, again.stdout
    # A source of the variant rebuilds it: RTL the manifest names, a file of an include
    # directory, a testbench file, the manifest.
    for n, path in enumerate([fake["core"] / "rtl" / "vendor" / "fpu.sv",
                              fake["core"] / "rtl" / "include" / "pkg.sv",
                              fake["cvv"] / testbench.TB_SUBDIR / "dp_ram.sv",
                              fake["core"] / "cv32e40p_fpu_manifest.flist"], start=2):
        _edit(path, path.read_text() + "// changed\n")
        result = fake["run"]("testbench-fpu")
        assert result.returncode == 0 and len(fake["calls"]()) == n, (path, result.stdout)
    # A change to what only the FPU builds does not rebuild the plain variant.
    assert fake["run"]("testbench-plain").returncode == 0
    count = len(fake["calls"]())
    _edit(fake["core"] / "rtl" / "vendor" / "fpu.sv", "module fpu2; endmodule\n")
    assert "up to date" in fake["run"]("testbench-plain").stdout
    assert len(fake["calls"]()) == count

    cleaned = fake["run"]("-c", "testbench")
    assert cleaned.returncode == 0, cleaned.stdout
    assert not fake["build"].exists(), list(fake["build"].rglob("*"))


def test_all_variants_in_their_own_directories(fake):
    result = fake["run"]("testbench")
    assert result.returncode == 0, result.stdout
    assert sorted(p.name for p in fake["build"].iterdir()) == sorted(testbench.VARIANTS)
    calls = fake["calls"]()
    assert len(calls) == 4
    assert sum("cv32e40p_fpu_manifest.flist" in call for call in calls) == 2


def test_a_failed_build_names_its_log(fake):
    (fake["bin"] / "fail").write_text("")
    result = fake["run"]("testbench-plain")
    assert result.returncode == 2
    log = fake["build"] / "plain" / "verilator.log"
    assert "%Error: tb_top_verilator.sv:1: something is wrong" in result.stdout
    assert ("scons: *** [%s] Verilator could not build the plain testbench (exit status 1); "
            "its output: %s" % (fake["build"] / "plain" / "Vtb_top_verilator", log)) \
        in result.stdout, result.stdout
    assert "Traceback" not in result.stdout


@pytest.mark.parametrize("given, missing", [
    (("core_v_verif=", "cv32e40p="), "needs core_v_verif= and cv32e40p="),
    (("cv32e40p=",), "needs cv32e40p=: set it to your checkout of"),
])
def test_testbench_without_the_checkouts_is_a_one_line_error(fake, given, missing):
    result = fake["run"]("testbench", *given)
    assert result.returncode == 2
    [line] = [l for l in result.stdout.splitlines() if l.startswith("scons: ***")]
    assert missing in line, result.stdout
    assert "Traceback" not in result.stdout


def test_an_unknown_variant_is_a_one_line_error_naming_the_variants(fake):
    result = fake["run"]("testbench-bogus")
    assert result.returncode == 2
    [line] = [l for l in result.stdout.splitlines() if l.startswith("scons: ***")]
    assert "testbench-bogus" in line and "plain, fpu, pulp, pulp-fpu" in line, result.stdout
    assert "Traceback" not in result.stdout


def test_a_directory_that_is_no_checkout_is_refused(fake, tmp_path):
    result = fake["run"]("testbench", "core_v_verif=%s" % (tmp_path / "bin"))
    assert result.returncode == 2
    assert ("scons: *** core_v_verif=%s has no cv32e40p/tb/core/" % fake["bin"]) \
        in result.stdout, result.stdout


@needs_compiler
def test_run_without_a_model_or_checkouts_says_what_to_set(tmp_path):
    result = scons("board=cv32e40p", "app=tests/fixtures/cxx_smoke", "run", "verilator_model=",
                   "core_v_verif=", "cv32e40p=", build_dir=tmp_path)
    assert result.returncode != 0
    [line] = [l for l in result.stdout.splitlines() if l.startswith("scons: ***")]
    for phrase in ("No Verilator model", "core_v_verif= and cv32e40p=", "verilator_model="):
        assert phrase in line, result.stdout
    assert "Traceback" not in result.stdout


# ---------------------------------------------------------------- the user's checkouts

needs_checkouts = pytest.mark.skipif(checkouts_for_testbench() is None, reason=NO_CHECKOUTS)

# cv.sdotsp.b (funct7 1010100, funct3 001, opcode 1111011): 100 + 1*5 - 2*6 - 3*7 + 4*8.
# With a float division (the FPU's division unit needs the reset edge, RESET).
PROGRAM = textwrap.dedent("""\
    #include "board.h"
    volatile float dividend = 7.0f, divisor = 2.0f;
    int main(void) {
      int sum = 100;
      unsigned a = 0x0403FE01u, b = 0x08F90605u;   /* {1,-2,3,4}, {5,6,-7,8} */
      board_puts("sdotsp\\n");
      __asm__ volatile(".insn r 0x7b, 1, 0x54, %0, %1, %2" : "+r"(sum) : "r"(a), "r"(b));
      board_puts("sdotsp.b: ");
      board_put_u64(sum);
      board_puts("\\n");
    #ifdef DIVIDE
      float quotient = dividend / divisor;
      board_puts("7 / 2 * 1000: ");
      board_put_u64((unsigned)(quotient * 1000.0f));
      board_puts("\\n");
    #endif
      return sum == 104 ? 0 : 1;
    }
    """)


@pytest.fixture(scope="module")
def tb_build(tmp_path_factory):
    return tmp_path_factory.mktemp("testbench")


@pytest.fixture(scope="module")
def sdotsp_app(tmp_path_factory):
    app = tmp_path_factory.mktemp("apps") / "sdotsp"
    app.mkdir()
    (app / "main.c").write_text(PROGRAM)
    divide = app.parent / "sdotsp_divide"
    divide.mkdir()
    (divide / "main.c").write_text("#define DIVIDE 1\n" + PROGRAM)
    return app, divide


def _run(build_dir, isa, *args):
    """scons run on board=cv32e40p with the testbench the ISA needs (not verilator_model=
    of the user settings), verbose: the commands are printed."""
    return scons("board=cv32e40p", "isa=%s" % isa, "verilator_model=", "run", "timeout=120",
                 "max_cycles=5000000", "verbose=1", *args, build_dir=build_dir, timeout=1800)


def _ran_on(output, build_dir, variant):
    """Did the run's command (verbose=1) start that variant's model?"""
    return "%s/testbench/%s/Vtb_top_verilator +firmware=" % (build_dir, variant) in output


def _verilated(output):
    """Did the build run Verilator (its command line, verbose=1, or its message)?"""
    return "--top-module tb_top_verilator" in output or "Verilating" in output


def _build_variant(build_dir, variant):
    before = _snapshot(*map(Path, checkouts_for_testbench()))
    build_testbench_once(variant)     # or wait for the worker building it: then retrieved here
    result = scons("testbench-%s" % variant, build_dir=build_dir, timeout=1800)
    assert result.returncode == 0, result.stdout[-3000:]
    assert (build_dir / "testbench" / variant / "Vtb_top_verilator").is_file()
    assert _snapshot(*map(Path, checkouts_for_testbench())) == before
    return result


@pytest.mark.long(minutes=0.5)
@needs_checkouts
@needs_compiler
def test_plain_runs_cxx_and_traps_on_pulp_instructions(tb_build, sdotsp_app):
    _build_variant(tb_build, "plain")
    smoke = _run(tb_build, "rv32imc", "app=tests/fixtures/cxx_smoke")
    assert smoke.returncode == 0, smoke.stdout[-3000:]
    assert not _verilated(smoke.stdout)            # built already: not again
    assert _ran_on(smoke.stdout, tb_build, "plain"), smoke.stdout[-3000:]
    assert "vector sum: 30" in smoke.stdout and "Exit status: 0" in smoke.stdout
    trap = _run(tb_build, "rv32imc", "app=%s" % sdotsp_app[0])
    assert trap.returncode == 130, trap.stdout[-3000:]
    assert "Run failed: the program trapped: illegal instruction at 0x" in trap.stdout
    assert "sdotsp.b:" not in trap.stdout


@pytest.mark.long(minutes=1)
@needs_checkouts
@needs_compiler
def test_pulp_runs_sdotsp(tb_build, sdotsp_app):
    _build_variant(tb_build, "pulp")
    result = _run(tb_build, "rv32imc_xcv", "app=%s" % sdotsp_app[0])
    assert result.returncode == 0, result.stdout[-3000:]
    assert _ran_on(result.stdout, tb_build, "pulp"), result.stdout[-3000:]
    assert "sdotsp.b: 104" in result.stdout.splitlines()


@pytest.mark.long(minutes=2)
@needs_checkouts
@needs_compiler
def test_fpu_runs_mlp_with_its_expected_outputs(tb_build):
    _build_variant(tb_build, "fpu")
    result = _run(tb_build, "rv32imfc", "model=examples/models/mlp.pte")
    assert result.returncode == 0, result.stdout[-3000:]
    assert _ran_on(result.stdout, tb_build, "fpu"), result.stdout[-3000:]
    assert "Output 0: float32[1,10] " in result.stdout
    assert "Exit status: 0" in result.stdout and "Run failed" not in result.stdout
    assert (REPO / "examples" / "models" / "mlp.expected.json").is_file()   # was checked


@pytest.mark.long(minutes=1)
@needs_checkouts
@needs_compiler
def test_run_builds_pulp_fpu_first_and_it_divides(tb_build, sdotsp_app):
    """No `scons testbench` first: `scons run` builds the variant the ISA needs."""
    result = _run(tb_build, "rv32imfc_xcv", "app=%s" % sdotsp_app[1])
    assert result.returncode == 0, result.stdout[-3000:]
    assert _verilated(result.stdout) or "Retrieved" in result.stdout, result.stdout[-3000:]
    assert _ran_on(result.stdout, tb_build, "pulp-fpu"), result.stdout[-3000:]
    lines = result.stdout.splitlines()
    assert "sdotsp.b: 104" in lines and "7 / 2 * 1000: 3500" in lines
    again = _run(tb_build, "rv32imfc_xcv", "app=%s" % sdotsp_app[1])
    assert again.returncode == 0 and not _verilated(again.stdout), again.stdout[-3000:]


@needs_checkouts
def test_all_variants_then_clean(tb_build):
    """`scons testbench` builds what is missing of the four; `scons -c testbench` removes
    them, tree and objects included."""
    first = scons("testbench", build_dir=tb_build, timeout=1800)
    assert first.returncode == 0, first.stdout[-3000:]
    second = scons("testbench", build_dir=tb_build, timeout=600)
    assert "Verilating" not in second.stdout and "up to date" in second.stdout, second.stdout
    for variant in testbench.VARIANTS:
        assert (tb_build / "testbench" / variant / "Vtb_top_verilator").is_file()
    cleaned = scons("-c", "testbench", build_dir=tb_build, timeout=600)
    assert cleaned.returncode == 0, cleaned.stdout
    assert not (tb_build / "testbench").exists(), list((tb_build / "testbench").rglob("*"))
