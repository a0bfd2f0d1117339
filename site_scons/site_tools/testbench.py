"""SCons tool: core-v-verif's CV32E40P Verilator testbench (Vtb_top_verilator), built from
the user's checkouts of core-v-verif and cv32e40p, in the variants of
etcorev.testbench.VARIANTS (plain, fpu, pulp, pulp-fpu):

    env["CORE_V_VERIF_DIR"] = ".../core-v-verif"     # branch cv32e40p/dev
    env["CV32E40P_DIR"] = ".../cv32e40p"             # tag cv32e40p_v1.8.3
    model = env.CV32E40PTestbench("fpu")             # [Vtb_top_verilator, verilator.log]
    model = env.CV32E40PTestbench(isa="rv32imfc")    # the variant firmware of that ISA needs

Each variant is built in its own directory, $TESTBENCH_DIR/<variant>/ (default
$BUILD_DIR/testbench): the testbench files it changes are patched copies in tb/ (a
builder writes them from the user's files, which stay as they are), Verilator's tree and
objects go to obj_dir/ (removed with the executable by `scons -c`), its output to
verilator.log, and the model is Vtb_top_verilator. The build depends on the testbench's
and the RTL's sources (the files the manifest names and those its include directories
hold), on the patches and on the verilator found: it runs again only when one of them
changes.

Construction variables: $VERILATOR (verilator), $TESTBENCH_JOBS (1: make's jobs; not part
of the signature), $TESTBENCH_CFLAGS (-O2: the model's C++ flags, also
for the files verilated.mk compiles with its own -Os), $VERBOSE (the commands and Verilator's
output instead of one line each).
"""

import os
import shutil
import subprocess
import sys
import time

import SCons.Errors
from SCons.Action import Action
from SCons.Builder import Builder

from etcorev import testbench
from etcorev.scons import quiet_messages
from etcorev.errors import BuildSetupError

CHECKOUT_VARIABLES = ("CORE_V_VERIF_DIR", "CV32E40P_DIR")
_MODELS = {}          # directory -> the model built there, in this scons run


def _patch(target, source, env):
    with open(source[0].abspath, newline="") as f:
        text = f.read()
    try:
        text = testbench.patch(env["TESTBENCH_FILE"], text,
                               testbench.VARIANTS[env["TESTBENCH_VARIANT"]])
    except testbench.PatchError as error:
        raise SCons.Errors.BuildError(node=target[0], errstr=str(error))
    with open(target[0].abspath, "w", newline="") as f:
        f.write(text)


def _verilate(target, source, env):
    """Verilate and compile (verilator --build) in a fresh obj_dir; the output goes to
    the log (the last lines of it are printed when the build fails)."""
    model, log = target[0].abspath, target[1].abspath
    obj_dir = env["TESTBENCH_OBJ_DIR"]
    shutil.rmtree(obj_dir, ignore_errors=True)     # nothing stale from another variant table
    argv = list(env["TESTBENCH_ARGV"]) + ["-j", str(env["TESTBENCH_JOBS"])]
    environ = dict(env["ENV"], DESIGN_RTL_DIR=env["TESTBENCH_RTL_DIR"])
    start = time.time()
    try:
        with open(log, "w") as out:
            status = subprocess.call(argv, stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=environ,
                                     cwd=os.path.dirname(model))
    except OSError as error:
        raise SCons.Errors.BuildError(node=target[0], errstr="Cannot run %s: %s." % (
            argv[0], error.strerror))
    with open(log, errors="replace") as f:
        output = f.read()
    if env.get("VERBOSE"):
        sys.stdout.write(output)
    if status or not os.path.isfile(model):
        tail = "".join(output.splitlines(True)[-25:])
        sys.stdout.write(tail if tail.endswith("\n") or not tail else tail + "\n")
        raise SCons.Errors.BuildError(node=target[0], errstr=(
            "Verilator could not build the %s testbench (exit status %d); its output: %s"
            % (env["TESTBENCH_VARIANT"], status, log)))
    sys.stdout.write("Testbench %s: %s (%.0f s)\n" % (env["TESTBENCH_VARIANT"], model,
                                                      time.time() - start))


def _checkouts(env):
    """(core-v-verif, cv32e40p), checked; a one-line error naming what is missing."""
    core_v_verif, cv32e40p = (env.subst("$CORE_V_VERIF_DIR"), env.subst("$CV32E40P_DIR"))
    missing = [variable for variable, value in zip(CHECKOUT_VARIABLES, (core_v_verif, cv32e40p))
               if not value]
    if missing:
        raise BuildSetupError(
            "Building the CV32E40P testbench needs %s: set %s to your checkout%s of "
            "core-v-verif (branch cv32e40p/dev) and cv32e40p (tag cv32e40p_v1.8.3)." % (
                " and ".join("$" + m for m in missing), "it" if len(missing) == 1 else "them",
                "s" if len(missing) > 1 else ""))
    core_v_verif, cv32e40p = os.path.abspath(core_v_verif), os.path.abspath(cv32e40p)
    testbench.check_checkouts(core_v_verif, cv32e40p)
    return core_v_verif, cv32e40p


def CV32E40PTestbench(env, variant=None, isa=None):
    """The testbench model of a variant (a name of etcorev.testbench.VARIANTS), or of the
    one that runs firmware for isa: [the executable, Verilator's log]."""
    if variant is None:
        variant = testbench.variant_for_isa(isa or env["ISA"])
    elif not isinstance(variant, testbench.Variant):
        if variant not in testbench.VARIANTS:
            raise BuildSetupError("Unknown testbench variant '%s'; the variants: %s."
                                  % (variant, ", ".join(testbench.VARIANTS)))
        variant = testbench.VARIANTS[variant]
    core_v_verif, cv32e40p = _checkouts(env)
    tb_dir, rtl_dir = testbench.tb_dir(core_v_verif), os.path.join(cv32e40p, "rtl")
    directory = env.Dir(os.path.join(env.subst("$TESTBENCH_DIR"), variant.name))
    if directory.abspath in _MODELS:      # asked for twice (scons testbench run): once
        return _MODELS[directory.abspath]

    patched = {}
    for name in testbench.patched_files(variant):
        node = env.TestbenchPatch(directory.File(os.path.join("tb", os.path.basename(name))),
                                  os.path.join(tb_dir, name),
                                  TESTBENCH_FILE=name, TESTBENCH_VARIANT=variant.name)
        env.Depends(node, testbench.__file__)        # the patches are code there
        patched[name] = node[0]

    def source(name):
        return patched.get(name) or env.File(os.path.join(tb_dir, name))
    manifest = os.path.join(cv32e40p, variant.manifest)
    sv = [source(name) for name in testbench.TB_SOURCES]
    core_log = env.File(os.path.join(cv32e40p, testbench.CORE_LOG))
    main = source(testbench.TB_MAIN)
    obj_dir = directory.Dir("obj_dir")
    verilator = env.WhereIs(env.subst("$VERILATOR"))
    if not verilator:
        raise BuildSetupError("Building the CV32E40P testbench needs Verilator (5.006 is "
                              "Debian 12's: apt-get install verilator); there is no %s on "
                              "PATH." % env.subst("$VERILATOR"))
    argv = ([verilator, "--cc", "--sv", "--exe", "--build"]
            + list(testbench.WAIVERS) + list(variant.waivers)
            + ["--top-module", testbench.TOP_MODULE] + [n.abspath for n in sv]
            + ["-f", manifest, core_log.abspath, main.abspath, "--Mdir", obj_dir.abspath,
               "-o", os.path.join(os.pardir, testbench.EXECUTABLE),
               "-CFLAGS", env.subst("$TESTBENCH_CFLAGS"),
               # verilated.mk compiles the model with OPT_FAST = -Os after the -CFLAGS:
               # at -O2 the simulation runs 12 % faster (ResNet-8 on the PULP variant)
               "-MAKEFLAGS", env.subst("OPT_FAST=$TESTBENCH_CFLAGS OPT_GLOBAL=$TESTBENCH_CFLAGS")])
    model = env.TestbenchModel(
        [directory.File(testbench.EXECUTABLE), directory.File("verilator.log")],
        sv + [main, core_log, manifest] + testbench.manifest_sources(manifest, rtl_dir),
        TESTBENCH_ARGV=argv, TESTBENCH_RTL_DIR=rtl_dir, TESTBENCH_OBJ_DIR=obj_dir.abspath,
        TESTBENCH_VARIANT=variant.name)
    # A new Verilator rebuilds (Debian's verilator is a script, verilator_bin beside it).
    env.Depends(model, [p for p in (verilator, verilator + "_bin") if os.path.isfile(p)])
    env.Clean(model, obj_dir)
    _MODELS[directory.abspath] = model
    return model


def generate(env):
    env.SetDefault(CORE_V_VERIF_DIR="", CV32E40P_DIR="", BUILD_DIR="build",
                   TESTBENCH_DIR="$BUILD_DIR/testbench", VERILATOR="verilator",
                   TESTBENCH_JOBS=1, TESTBENCH_CFLAGS="-O2", ISA="rv32imc",
                   TESTBENCHPATCHCOMSTR="Patching $SOURCE -> $TARGET",
                   TESTBENCHCOMSTR="cd ${TARGET.dir} && DESIGN_RTL_DIR=$TESTBENCH_RTL_DIR "
                                   "$TESTBENCH_ARGV -j $TESTBENCH_JOBS")
    quiet_messages.set_message(env, "TESTBENCHPATCHCOMSTR", "Patching", "target")
    quiet_messages.set_message(env, "TESTBENCHCOMSTR", "Verilating", "target")
    env["BUILDERS"].update(
        TestbenchPatch=Builder(action=Action(_patch, "$TESTBENCHPATCHCOMSTR",
                                             varlist=["TESTBENCH_FILE", "TESTBENCH_VARIANT"]),
                               single_source=True),
        TestbenchModel=Builder(action=Action(_verilate, "$TESTBENCHCOMSTR",
                                             varlist=["TESTBENCH_ARGV"])))
    env.AddMethod(CV32E40PTestbench)


def exists(env):
    return True
