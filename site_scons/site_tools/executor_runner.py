"""The executor runner: one firmware per model, each the ExecuTorch runtime selected from
the model, the kernels its operators need, the runner's own sources and the model.

    env.Tool("executor_runner")
    firmwares = env.ExecutorRunners(sources=[...], model_sources=[...],
                                    backend=[backend_lib])

What is shared between the models of a build lives once in the variant directory (see
the executorch tool), sources (the runner, the PAL) among it, in <variant>/runner/; each
model's own files are in <variant>/<model>/:

    runner_config.h        pools sized from the .pte, inputs (etcorev.run.runner_config)
    runner/*.o             model_sources compiled with that header
    model.S / model.o      the embedded model (or executor_runner.model.hex for XIP)
    executor_runner.elf    with .hex, .map, .size.txt (the firmware tool)

Options read: model, ops, kernels, corev_kernels, inputs, expected, num_executions,
method_pool, temp_pool, clock_hz, model_align, embed, model_placement, install_dir, profile.
"""

import os

import SCons.Errors
from SCons.Action import Action
from SCons.Script import GetOption

from etcorev import boards, require_tools
from etcorev.executorch import kernel_plan
from etcorev.pte import model_io
from etcorev.run import models, runner_config
from etcorev.errors import BuildSetupError


def _selection(env, program):
    if env["ops"] == "model":
        return program.kernel_keys
    if env["ops"] == "all":
        return "all"
    return {kernel_plan.normalize_op(op): [] for op in env["ops"].split(",") if op.strip()}


def _check_selection_covers(env, model, selection):
    """ops=a,b that leaves out an operator of the model: refused now, where the firmware
    would fail at load_method with OperatorMissing."""
    if not isinstance(selection, dict):
        return
    left_out = sorted(set(model.program.operators) - set(selection))
    if left_out:
        raise BuildSetupError(
            "ops=%s leaves out operator%s that %s uses: %s. Add %s to ops= (or use "
            "ops=model, the default, which takes the model's own)."
            % (env["ops"], "s" if len(left_out) > 1 else "", os.path.basename(model.path),
               ", ".join(left_out), "them" if len(left_out) > 1 else "it"))


def _kernel_names(env, plan):
    """The kernel sources by file name; the CORE-V kernels' own as corev/op_x.cpp (their
    portable fallbacks have the same names)."""
    names = []
    for kernel_set in plan.kernel_sets:
        for source in kernel_set.op_sources + kernel_set.util_sources:
            own = kernel_set.kind == "corev" and not source.startswith(env["ET_ROOT"] + os.sep)
            names.append(("corev/" if own else "") + os.path.basename(source))
    return names


def _model_region(env):
    regions = env["MEMORY_REGION_OBJECTS"]
    if env["model_placement"] == "external":
        return next(r for r in regions if r.name == "model")
    return regions[0]


def ExecutorRunners(env, sources, model_sources, backend):
    """Firmware dicts (the firmware tool's, plus "model") for every model of model=:
    sources compiled once, model_sources once per model with its runner_config.h."""
    kernel_dirs = [d.strip() for d in env["kernels"].split(",") if d.strip()]
    made = {}             # nodes shared between the models of this build
    runtime = env.ExecuTorchRuntime()
    runner_env = env.Clone()
    runner_env.Append(CPPDEFINES=runner_config.runner_defines(env)
                      + runner_config.clock_defines(env["clock_hz"]))
    runner = runner_env.ObjectsIn(os.path.join(env["VARIANT_DIR"], "runner"), sources)
    firmwares = []
    model_set = models.model_set(env["model"], env["inputs"], env["expected"])
    for model in model_set:
        try:
            program = models.load_program(model, _model_region(env), env["model_placement"],
                                          env["board"])
            runner_config.check_fits(program, model.path, env, env["MEMORY_REGION_OBJECTS"][0],
                                     env["model_placement"] == "embedded")
            selection = _selection(env, program)
            plan = kernel_plan.plan(env["ET_ROOT"], selection, kernel_dirs,
                                    corev=env["corev_kernels"], cmsis_nn=env["cmsis_nn"])
            _check_selection_covers(env, model, selection)
            firmware = _firmware(env, model, plan, runtime, backend,
                                 (runner_env, runner, model_sources), made)
        except BuildSetupError as error:
            if len(model_set) == 1:
                raise
            # One bad model of a set: the others are built (and run), this one is
            # named now and fails the build at its end, as a test runner would.
            print("Not building %s: %s" % (os.path.basename(model.path), error))
            firmwares.append({"model": model, "unbuilt": str(error)})
            continue
        if not GetOption("clean") and not GetOption("no_exec"):
            print("Kernels for %s: %s" % (os.path.basename(model.path),
                                          ", ".join(_kernel_names(env, plan)) or "none"))
        firmwares.append(firmware)
    return firmwares


def UnbuiltModels(env, firmwares):
    """An alias that fails, after everything else of the build, naming the models of a
    set that could not be built (nothing when all were)."""
    unbuilt = [f for f in firmwares if f.get("unbuilt")]
    if not unbuilt:
        return []

    def fail(target, source, env):
        raise SCons.Errors.BuildError(
            node=target[0], errstr="%d of %d models not built: %s" % (
                len(unbuilt), len(firmwares),
                "; ".join("%s: %s" % (os.path.basename(f["model"].path), f["unbuilt"])
                          for f in unbuilt)))
    built = [node for firmware in boards.built(firmwares) for node in firmware["all"]]
    alias = env.Alias("unbuilt-models", built, Action(fail, None))
    env.AlwaysBuild(alias)
    return alias


def _firmware(env, model, plan, runtime, backend, runner_parts, made):
    model_dir = os.path.join(env["VARIANT_DIR"], model.name)
    kernels = env.ExecuTorchKernels(plan, made)
    kernel_libs = [env.StaticLibrary(os.path.join(model_dir, "kernels_" + k.name), objects)
                   for k, objects in zip(plan.kernel_sets, kernels["objects"])]
    if kernels["helpers"]:      # after every library's operators: they all use them
        kernel_libs.append(env.StaticLibrary(os.path.join(model_dir, "kernel_helpers"),
                                             kernels["helpers"]))
    for name, objects in sorted(kernels["dependencies"].items()):     # what they call
        kernel_libs.append(env.StaticLibrary(os.path.join(model_dir, name), objects))
    whole_archive = kernels["whole_archive"] + list(backend)
    if plan.prim_ops or env["ops"] == "all":
        whole_archive += runtime["prim_ops"]

    inputs = []
    if model.inputs:
        tensors = model_io.read_tensors(model.inputs, "inputs", "inputs")
        inputs = model_io.check_inputs(tensors, model.program.methods[0].inputs, model.inputs,
                                       os.path.basename(model.path))
    if model.expected:
        model_io.check_expected(model_io.read_tensors(model.expected, "outputs", "expected"),
                                model.program.methods[0].outputs, model.expected,
                                os.path.basename(model.path))
    config = env.Textfile(os.path.join(model_dir, "runner_config.h"),
                          runner_config.header_lines(model.program, os.path.basename(model.path),
                                                     env, inputs), LINESEPARATOR="\n")
    runner_env, runner, model_sources = runner_parts
    model_env = runner_env.Clone()
    model_env.Append(CPPPATH=[model_dir])
    runner_objects = model_env.ObjectsIn(os.path.join(model_dir, "runner"), model_sources)
    model_env.Depends(runner_objects, config)
    runner_objects = runner + runner_objects

    base = os.path.join(model_dir, "executor_runner")
    if env["model_placement"] == "embedded":
        model_objects = env.Clone(MODEL_ALIGN=env["model_align"]).EmbedModel(
            os.path.join(model_dir, "model"), model.path, method=env["embed"])
        model_image = []
    else:
        model_objects = []
        model_image = env.ModelImage(base + ".model", model.path)
    # The runner prints numbers itself, without printf's floating point.
    firmware = env.Clone(PRINTF_LINKFLAGS=env["INTEGER_PRINTF_LINKFLAGS"]).Firmware(
        base, runner_objects + kernels["registry"] + model_objects,
        whole_archive=whole_archive, libs=kernel_libs + runtime["core"])
    firmware["model"] = model
    if model_image:
        firmware["model_hex"], firmware["model_bin"] = model_image
        firmware["all"] += model_image
    return firmware


def InstallRunners(env, firmwares):
    """`scons install`: the application note's layout (install_dir/executor_runner.*), so
    its `Vtb_top_verilator +firmware=../install/executor_runner.hex` works unchanged; with
    several models, one directory per model."""
    _check_install_dir(env["install_dir"])
    nodes = []
    firmwares = boards.built(firmwares)
    for firmware in firmwares:
        directory = env["install_dir"]
        if len(firmwares) > 1:
            directory = os.path.join(directory, firmware["model"].name)
        for suffix in (".elf", ".hex", ".map"):
            key = suffix[1:]
            installed = env.InstallAs(os.path.join(directory, "executor_runner" + suffix),
                                      firmware[key])
            env.Clean(firmware["elf"], installed)    # `scons -c` removes it with the ELF
            nodes += installed
    return env.Alias("install", nodes)


def _check_install_dir(directory):
    """A file where install_dir or a parent of it should be a directory is one line here;
    SCons would raise a TypeError while the nodes are declared."""
    path = directory
    while not os.path.exists(path):
        path = os.path.dirname(path)
    if not os.path.isdir(path):
        raise BuildSetupError("install_dir=%s: %s is a file, not a directory." % (directory, path))


def generate(env):
    require_tools(env, "executorch", "firmware", "model_embed")
    env.AddMethod(ExecutorRunners)
    env.AddMethod(InstallRunners)
    env.AddMethod(UnbuiltModels)


def exists(env):
    return True
