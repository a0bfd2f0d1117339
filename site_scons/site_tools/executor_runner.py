"""SCons tool: the executor runner (examples/corev/executor_runner), one firmware per model.

    env.Tool("executor_runner")
    firmwares = env.ExecutorRunner()      # [etcorev.artifacts.Firmware], one per model
    env.InstallFirmwares(firmwares)       # `scons install`: $INSTALL_DIR/executor_runner.*

For each model of $MODEL (one .pte or .bpte, a directory of them, a comma-separated list
or a glob pattern), a firmware of the runner, the CORE-V backend and PAL, the ExecuTorch
runtime, the kernels the model's operators need and the model itself. What the models of
a build share lives once in the variant directory (the executorch tool's objects, the
runner's sources in $VARIANT_DIR/runner/, and in runner/io-<u><d>/ its functions for
unplanned inputs and outputs and dynamic shapes, once for each combination of the two
that a model has); each model's own files are in
$VARIANT_DIR/<model>/:

    runner_config.h        pools sized from the .pte, inputs (etcorev.run.runner_config)
    runner/*.o             the model's data for the runner, compiled with that header
    model.S / model.o      the embedded model (or executor_runner.model.hex for XIP)
    executor_runner.elf    with .hex, .map, .size.txt (the firmware tool)

A bundled program (.bpte, recognised by its identifier) gets the runner compiled a second
time with RUNNER_BUNDLED ($VARIANT_DIR/runner-bundled/: it runs and checks the bundle's
test cases) and ExecuTorch's bundled-program runtime; $PROFILE=etdump links ExecuTorch's
ETDumpGen and the flatcc runtime (the executorch tool builds both). A model of a set that
cannot be built is named when the build is read, the others are built, and the build
fails at its end.

Construction variables, with their defaults: $MODEL, $MODEL_INPUTS and $MODEL_EXPECTED
(one model's inputs and expected outputs; else NAME.inputs.json and NAME.expected.json
beside each NAME.pte), $OPS ("model": the kernels the model's operators need; "all"; or
op,op,...), $KERNEL_DIRS (kernel directories of one's own, comma-separated),
$COREV_KERNELS (True), $CMSIS_NN_ROOT, $MODEL_PLACEMENT ("embedded" or "external"),
$MODEL_EMBED ("incbin"), $CLOCK_HZ (400000000), $PROFILE, $INSTALL_DIR ("install"),
$RUNNER_METHOD (the method to run: "", the program's first, as ExecuTorch's
executor_runner without --method_name), the
pools ($RUNNER_NUM_EXECUTIONS 1, $RUNNER_METHOD_POOL and $RUNNER_TEMP_POOL: 0, sized from
the model) and $RUNNER_APP_SOURCES: a firmware's own sources, whose main calls
corev_et_run() (corev_et.h), in place of the runner's main. Loads the executorch,
model_embed and corev_backend tools.
"""

import os
import sys

import SCons.Errors
import SCons.Script
from SCons.Action import Action

from etcorev import boards, locations
from etcorev.artifacts import Firmware
from etcorev.errors import BuildSetupError
from etcorev.executorch import cortex_m_forms, kernel_plan, memory_order
from etcorev.pte import model_io
from etcorev.run import models, runner_config
from etcorev.run.runner_config import profile_mode
from etcorev.scons import variables
from etcorev.scons.shared import made_once
from etcorev.scons.tools import require_tools
from etcorev.scons.vocabulary import spoken

RUNNER_DIR = locations.source_dir("examples", "corev", "executor_runner")
PAL_DIR = locations.source_dir("pal")


def _runner_file(env, name):
    return env.File(os.path.join(RUNNER_DIR, name))


def _selection_of(env, program):
    """What the kernels are built for: the model's operators and kernel keys (ops=model),
    every operator (ops=all), or the operators listed."""
    if env["OPS"] == "model":
        return program.kernel_keys
    if env["OPS"] == "all":
        return "all"
    return {kernel_plan.normalize_op(op): [] for op in env["OPS"].split(",") if op.strip()}


def _check_selection_covers(env, model, selection):
    """ops=a,b that leaves out an operator of the model: refused now, where the firmware
    would fail at load_method with OperatorMissing."""
    if not isinstance(selection, dict):
        return
    left_out = sorted(set(model.program.operators) - set(selection))
    if left_out:
        raise BuildSetupError(
            "$OPS=%s leaves out operator%s that %s uses: %s. Add %s to $OPS (or use "
            "$OPS=model, the default, which takes the model's own)."
            % (env["OPS"], "s" if len(left_out) > 1 else "", os.path.basename(model.path),
               ", ".join(left_out), "them" if len(left_out) > 1 else "it"))


def _kernel_names(env, plan):
    """The kernel sources by file name; ours beside the tree's sources of the same name
    (a library's fallbacks), or in place of the tree's file of that name
    (kernels/cortex_m), named with our directory: corev/op_x.cpp, cortex_m/op_y.cpp."""
    names = []
    tree_root = env["ET_ROOT"] + os.sep
    for kernel_set in plan.kernel_sets:
        sources = kernel_set.op_sources + kernel_set.util_sources
        tree = {os.path.basename(s) for s in sources if s.startswith(tree_root)}
        for source in sources:
            own = not source.startswith(tree_root)
            name = os.path.basename(source)
            names.append(("%s/%s" % (os.path.basename(os.path.dirname(source)), name))
                         if own and (tree or kernel_set.kind == "tree") else name)
    return names


class _Runner:
    """The runner's objects of one variant, and what each model adds to them."""

    def __init__(self, env):
        self.env = env
        profile = profile_mode(env["PROFILE"])
        sources = [env.File(os.path.join(PAL_DIR, "corev_pal.cpp")),
                   env.File(os.path.join(PAL_DIR, "no_iostream.cpp"))]
        if env["MODEL_PLACEMENT"] == "external":
            sources.append(_runner_file(env, "model_check.cpp"))
        # The runner's main, or the sources of a firmware of its own that calls
        # corev_et_run().
        app_sources = env["RUNNER_APP_SOURCES"] or [_runner_file(env, "runner_main.cpp")]
        # What the runner knows of its model (runner_model_data.h) and, with profile=1,
        # the cycle tracer the runtime reports its events to, sized for the model
        # (profile=etdump: ExecuTorch's ETDumpGen over a buffer sized for it).
        self.model_sources = [_runner_file(env, "runner_model.cpp")] + [
            _runner_file(env, name) for name in
            {"1": ["cycle_tracer.cpp"], "etdump": ["etdump_tracer.cpp"]}.get(profile, [])]
        self.runtime = env.ExecuTorchRuntime()
        self.backend = env.CoreVBackend()
        self.runner_env = env.Clone()
        self.runner_env.Append(CPPPATH=[RUNNER_DIR], CPPDEFINES=runner_config.runner_defines(env)
                               + runner_config.clock_defines(env["CLOCK_HZ"]))
        variant = env["VARIANT_DIR"]
        self.common = self.runner_env.ObjectsIn(os.path.join(variant, "runner"), sources)
        self.common += self.runner_env.ObjectsIn(os.path.join(variant, "runner", "app"),
                                                 app_sources)
        self.plain = self.runner_env.ObjectsIn(
            os.path.join(variant, "runner"), [_runner_file(env, "corev_executor_runner.cpp")])
        # The devtools libraries every model links (profile=etdump: ETDumpGen, flatcc).
        self.devtools = env.ExecuTorchETDump() if profile == "etdump" else []
        self.bundled = None

    def model_io_objects(self, method):
        """runner_model_io.cpp for the features of a method (runner_config.io_defines):
        compiled once per combination, in runner/io-<unplanned><dynamic>/."""
        defines = runner_config.io_defines(method)
        directory = os.path.join(self.env["VARIANT_DIR"], "runner",
                                 "io-%d%d" % tuple(value for _, value in defines))

        def make():
            io_env = self.runner_env.Clone()
            io_env.Append(CPPDEFINES=defines)
            return io_env.ObjectsIn(directory, [_runner_file(self.env, "runner_model_io.cpp")])
        return made_once(self.env, ("runner model io", directory), make)

    def objects_for(self, program):
        """The runner's objects and the libraries it needs beyond the plain runner's: for a
        bundled program, the runner compiled with RUNNER_BUNDLED (once) and the
        bundled-program runtime."""
        if not program.is_bundled:
            return self.plain + self.common, list(self.devtools)
        if self.bundled is None:
            runtime = self.env.ExecuTorchBundledProgram()
            bundled_env = self.runner_env.Clone()
            bundled_env.Append(CPPDEFINES=[("RUNNER_BUNDLED", 1)])
            objects = bundled_env.ObjectsIn(
                os.path.join(self.env["VARIANT_DIR"], "runner-bundled"),
                [_runner_file(self.env, "corev_executor_runner.cpp")])
            bundled_env.Depends(objects, runtime.schema)
            self.bundled = (objects + self.common, list(runtime.library))
        objects, library = self.bundled
        return objects, library + list(self.devtools)

    def firmware_for(self, model, plan):
        env = self.env
        runner, extra_libs = self.objects_for(model.program)
        model_dir = os.path.join(env["VARIANT_DIR"], model.name)
        kernels = env.ExecuTorchKernels(plan)
        libs = [env.StaticLibrary(os.path.join(model_dir, "kernels_" + k.name), objects)
                for k, objects in zip(plan.kernel_sets, kernels.objects)]
        if kernels.helpers:      # after every library's operators: they all use them
            libs.append(env.StaticLibrary(os.path.join(model_dir, "kernel_helpers"),
                                          kernels.helpers))
        for name, objects in sorted(kernels.dependencies.items()):     # what they call
            libs.append(env.StaticLibrary(os.path.join(model_dir, name), objects))
        whole_archive = kernels.registrations + list(self.backend)
        if plan.prim_ops or env["OPS"] == "all":
            whole_archive += self.runtime.prim_ops

        inputs = []
        method = model.program.method
        if model.inputs:
            tensors = model_io.read_tensors(model.inputs, "inputs", "MODEL_INPUTS")
            inputs = model_io.check_inputs(tensors, method.inputs, model.inputs,
                                           os.path.basename(model.path))
        if model.expected:
            model_io.check_expected(model_io.read_tensors(model.expected, "outputs", "MODEL_EXPECTED"),
                                    method.outputs, model.expected, os.path.basename(model.path))
        config = env.Textfile(os.path.join(model_dir, "runner_config.h"),
                              runner_config.header_lines(model.program,
                                                         os.path.basename(model.path), env,
                                                         inputs),
                              LINESEPARATOR="\n")
        model_env = self.runner_env.Clone()
        model_env.Append(CPPPATH=[model_dir])
        runner_objects = model_env.ObjectsIn(os.path.join(model_dir, "runner"),
                                             self.model_sources)
        model_env.Depends(runner_objects, config)
        runner_objects += self.model_io_objects(method)

        base = os.path.join(model_dir, "executor_runner")
        if env["MODEL_PLACEMENT"] == "embedded":
            model_objects = env.EmbedModel(os.path.join(model_dir, "model"), model.path,
                                           method=env["MODEL_EMBED"])
            model_image = []
        else:
            model_objects = []
            model_image = env.ModelImage(base + ".model", model.path)
        # The runner prints numbers itself, without printf's floating point.
        firmware = env.Clone(PRINTF_LINKFLAGS=env["INTEGER_PRINTF_LINKFLAGS"]).Firmware(
            base, runner + runner_objects + kernels.registry + model_objects,
            whole_archive=whole_archive, libs=libs + extra_libs + list(self.runtime.core))
        return firmware.with_model(model, model_image)


def _fail_for_the_unbuilt(env, firmwares):
    """An alias that fails, after everything else of the build, naming the models of a
    set that could not be built."""
    unbuilt = [f for f in firmwares if not f.built]

    def fail(target, source, env):
        raise SCons.Errors.BuildError(
            node=target[0], errstr="%d of %d models not built: %s" % (
                len(unbuilt), len(firmwares),
                "; ".join("%s: %s" % (os.path.basename(f.model.path), f.unbuilt)
                          for f in unbuilt)))
    built = [node for firmware in firmwares if firmware.built for node in firmware.all]
    alias = env.Alias("unbuilt-models", built, Action(fail, None))
    env.AlwaysBuild(alias)
    env.Default(alias)


def ExecutorRunner(env):
    """A firmware (etcorev.artifacts.Firmware) for every model of $MODEL; one that
    cannot be built, of a set, is a Firmware that says why (the others are built)."""
    # What it reads, checked first: in a SConstruct of one's own they may be of any type.
    variables.check(env, "MODEL", "MODEL_INPUTS", "MODEL_EXPECTED", "OPS", "KERNEL_DIRS",
                    "COREV_KERNELS", "CMSIS_NN_ROOT", "MODEL_PLACEMENT", "MODEL_EMBED",
                    "CLOCK_HZ", "PROFILE", "INSTALL_DIR", "RUNNER_METHOD",
                    "RUNNER_NUM_EXECUTIONS", "RUNNER_METHOD_POOL", "RUNNER_TEMP_POOL",
                    "RUNNER_APP_SOURCES", "BOARD", "STACK_SIZE", "MODEL_ALIGN",
                    "IMAGE_FORMATS", "ISA", "ET_ROOT")
    kernel_dirs = [d.strip() for d in env["KERNEL_DIRS"].split(",") if d.strip()]
    # The kernel libraries, checked before any model: a broken library.yaml is the
    # build's error, not each model's of a set.
    kernel_plan.directory_libraries(kernel_dirs, env["COREV_KERNELS"])
    runner = _Runner(env)
    regions = boards.regions_of(env)
    data = boards.region(regions, "data")
    embedded = env["MODEL_PLACEMENT"] == "embedded"
    model_region = (boards.region(regions, "code") if embedded
                    else next(r for r in regions if r.kind == "model"))
    reporting = not SCons.Script.GetOption("clean") and not SCons.Script.GetOption("no_exec")
    firmwares = []
    model_set = models.model_set(env["MODEL"], env["MODEL_INPUTS"], env["MODEL_EXPECTED"])
    for model in model_set:
        try:
            program = models.load_program(model, model_region, env["MODEL_PLACEMENT"],
                                          env["BOARD"], env["RUNNER_METHOD"])
            cortex_m_forms.check(program, model.path, env.get("RUNNER_TEMP_POOL"))
            memory_order.check(program, model.path)
            runner_config.check_fits(program, model.path, env, data,
                                     embedded and model_region is data)
            selection = _selection_of(env, program)
            plan = kernel_plan.plan(env["ET_ROOT"], selection, kernel_dirs,
                                    corev=env["COREV_KERNELS"], cmsis_nn=env["CMSIS_NN_ROOT"])
            _check_selection_covers(env, model, selection)
            for warning in plan.warnings:
                sys.stderr.write(spoken(env, "scons: warning: %s\n" % warning))
            firmware = runner.firmware_for(model, plan)
        except BuildSetupError as error:
            if len(model_set) == 1:
                raise
            # One bad model of a set: the others are built (and run), this one is named
            # now and fails the build at its end, as a test runner would.
            print(spoken(env, "Not building %s: %s" % (os.path.basename(model.path), error)))
            firmwares.append(Firmware(model=model, unbuilt=str(error)))
            continue
        if reporting:
            print("Kernels for %s: %s" % (os.path.basename(model.path),
                                          ", ".join(_kernel_names(env, plan)) or "none"))
            forms = cortex_m_forms.summary(program)
            if forms:
                print("Cortex-M operators of %s: exported for %s"
                      % (os.path.basename(model.path), forms))
        firmwares.append(firmware)
    if not all(firmware.built for firmware in firmwares):
        _fail_for_the_unbuilt(env, firmwares)
    return firmwares


def InstallFirmwares(env, firmwares):
    """`scons install`: the application note's layout ($INSTALL_DIR/executor_runner.*),
    so its `Vtb_top_verilator +firmware=../install/executor_runner.hex` works unchanged;
    with several models, one directory per model. Returns the installed nodes."""
    path = os.path.join(env.Dir("#").abspath, env["INSTALL_DIR"])
    while not os.path.exists(path):      # a file in the way: one line, not SCons's TypeError
        path = os.path.dirname(path)
    if not os.path.isdir(path):
        raise BuildSetupError("$INSTALL_DIR=%s: %s is a file, not a directory."
                              % (env["INSTALL_DIR"], path))
    built = [f for f in firmwares if f.built]
    nodes = []
    for firmware in built:
        directory = env["INSTALL_DIR"]
        if len(built) > 1:
            directory = os.path.join(directory, firmware.model.name)
        for suffix, node in ((".elf", firmware.elf), (".hex", firmware.hex),
                             (".map", firmware.map)):
            installed = env.InstallAs(os.path.join(directory, "executor_runner" + suffix), node)
            env.Clean(firmware.elf, installed)    # `scons -c` removes it with the ELF
            nodes += installed
    env.Alias("install", nodes)
    return nodes


def generate(env):
    require_tools(env, "executorch", "model_embed", "corev_backend")
    env.SetDefault(MODEL="", MODEL_INPUTS="", MODEL_EXPECTED="", OPS="model", KERNEL_DIRS="",
                   COREV_KERNELS=True, MODEL_PLACEMENT="embedded", MODEL_EMBED="incbin",
                   CLOCK_HZ=400000000, RUNNER_METHOD="", RUNNER_NUM_EXECUTIONS=1,
                   RUNNER_METHOD_POOL=0, RUNNER_TEMP_POOL=0, INSTALL_DIR="install",
                   RUNNER_APP_SOURCES=[])
    env.AddMethod(ExecutorRunner)
    env.AddMethod(InstallFirmwares)


def exists(env):
    return True
