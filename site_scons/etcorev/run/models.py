"""The models a build makes firmware for: `model=` names one `.pte`, a comma-separated
list, a directory (every `.pte` in it; a directory without any, every `.bpte`) or a
glob pattern (`models/*.bpte`), or any mix. Each model gets a directory of its own in
the variant, named after the file (NAME for NAME.pte, NAME.bpte for a bundled program
named so, which can then sit beside its .pte in one set; DIR-NAME for files of the same
name in different directories of one set).

Beside NAME.pte, NAME.inputs.json gives its inputs and NAME.expected.json the outputs
`scons run` checks; `inputs=`/`expected=` give them for a single model. A bundled
program (ExecuTorch's .bpte, recognised by its identifier whatever the file's name)
carries its own test cases instead: the runner runs and checks them on the target.
NAME.etrecord beside either is the ETRecord `scons run profile=etdump` gives the
Inspector.
"""

import glob
import os
import re
from dataclasses import dataclass
from typing import List, Optional

from etcorev import pte
from etcorev.errors import BuildSetupError

# The delegate backends every firmware registers (backends/corev/runtime/CoreVBackend.cpp).
FIRMWARE_BACKENDS = ("CoreVBackend",)


@dataclass
class Model:
    path: str                       # absolute
    name: str                       # its directory in the variant
    inputs: Optional[str] = None    # tensor files (absolute) or None
    expected: Optional[str] = None
    program: Optional[pte.Program] = None
    etrecord: Optional[str] = None  # NAME.etrecord beside the model, for the Inspector
    io_given: bool = False          # inputs= / expected= named on purpose


def _name(path):
    stem, extension = os.path.splitext(os.path.basename(path))
    if extension == ".bpte":     # beside NAME.pte in a set: a directory of its own
        stem += extension
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", stem) or "model"


def _beside(path, suffix):
    candidate = os.path.splitext(path)[0] + suffix
    return candidate if os.path.isfile(candidate) else None


def model_set(spec, inputs="", expected="") -> List[Model]:
    """The models of a `model=` value of absolute paths (files or directories)."""
    paths = []
    for item in [p.strip() for p in spec.split(",") if p.strip()]:
        if os.path.isdir(item):
            found = (sorted(glob.glob(os.path.join(glob.escape(item), "*.pte")))
                     or sorted(glob.glob(os.path.join(glob.escape(item), "*.bpte"))))
            if not found:
                raise BuildSetupError("The model directory '%s' ($MODEL) holds no .pte "
                                      "(or .bpte) file." % item)
            paths += found
        elif os.path.exists(item):
            paths.append(item)
        elif glob.has_magic(item):
            found = sorted(p for p in glob.glob(item) if os.path.isfile(p))
            if not found:
                raise BuildSetupError("No model file matches '%s' ($MODEL)." % item)
            paths += found
        else:
            raise BuildSetupError("Model file '%s' not found ($MODEL)." % item)
    if not paths:
        raise BuildSetupError("No model given: $MODEL is empty.")
    if (inputs or expected) and len(paths) > 1:
        raise BuildSetupError(
            "$MODEL_INPUTS and $MODEL_EXPECTED are for a single model; with %d models, put "
            "NAME.inputs.json and NAME.expected.json beside each NAME.pte." % len(paths))
    models, names = [], {}
    stems = [_name(path) for path in paths]
    for path, stem in zip(paths, stems):
        # Files of the same name in different directories (a target's variants of the
        # same network, models/m3/conv.pte beside models/conv.pte): each of those gets
        # its directory's name in front (m3-conv).
        name = stem if stems.count(stem) == 1 else _name(
            os.path.basename(os.path.dirname(os.path.abspath(path))) + "-" + os.path.basename(path))
        if name in names:
            raise BuildSetupError("Two models would build into the same directory '%s': '%s' "
                                  "and '%s'. Rename one of them." % (name, names[name], path))
        names[name] = path
        models.append(Model(path, name, inputs or _beside(path, ".inputs.json"),
                            expected or _beside(path, ".expected.json"),
                            etrecord=_beside(path, ".etrecord"),
                            io_given=bool(inputs or expected)))
    return models


def load_program(model: Model, region, placement, board, method=""):
    """Validate the model's program; refuse one larger than the region it goes into,
    now, in one sentence, rather than after compiling everything. method: the name of
    the method to run, or empty for the program's first (as ExecuTorch's
    executor_runner without --method_name)."""
    try:
        model.program = pte.validate_pte(model.path)
    except pte.PteError as error:
        raise BuildSetupError(str(error))
    size = model.program.size
    if size > region.length:
        raise BuildSetupError(
            "The model '%s' does not fit $BOARD=%s: it is %d bytes (%.1f MiB), more than the "
            "whole %s region it would be placed in (%d bytes, %.1f MiB, with "
            "$MODEL_PLACEMENT=%s) before any code or data. Use a smaller model, or a board "
            "with more memory." % (model.path, board, size, size / 2**20, region.name,
                                   region.length, region.length / 2**20, placement))
    if not model.program.methods:
        raise BuildSetupError("The model '%s' has no method to run." % model.path)
    if method:
        if method not in model.program.method_names:
            raise BuildSetupError(
                "The model '%s' has no method '%s' ($RUNNER_METHOD); its methods are %s."
                % (model.path, method, ", ".join(model.program.method_names)))
        model.program.select_method(method)
    if not model.program.method.outputs:
        raise BuildSetupError("The model '%s' is corrupt or incomplete: its method '%s' has "
                              "no outputs." % (model.path, model.program.method.name))
    _check_delegates(model)
    _check_external_data(model)
    _check_unplanned_state(model)
    if model.program.is_bundled:
        _check_bundle(model)
    return model.program


def _check_delegates(model: Model):
    """A method that hands work to a backend the firmware does not register builds, then
    fails on the target with load_method's NotFound (0x20). ExecuTorch's getting-started
    flow lowers to XNNPACK, so say it before compiling, naming the backend."""
    method = model.program.method
    missing = sorted(set(method.delegates) - set(FIRMWARE_BACKENDS))
    if missing:
        raise BuildSetupError(
            "The model '%s' delegates parts of its method '%s' to %s, which this firmware "
            "does not have (it registers %s only): loading it would fail on the target with "
            "NotFound. Export it without that backend's partitioner "
            "(to_edge_transform_and_lower(...) without partitioner=, or for int8 networks "
            "the Cortex-M flow of the README)."
            % (model.path, method.name, " and ".join(missing), ", ".join(FIRMWARE_BACKENDS)))


def _counted(names, noun):
    """'2 tensors (a, b)': how many, and the first three names."""
    return "%d %s%s (%s)" % (len(names), noun, "" if len(names) == 1 else "s",
                             ", ".join(names[:3]) + (", ..." if len(names) > 3 else ""))


def _check_external_data(model: Model):
    """A program exported with ExecutorchBackendConfig(external_constants=True) keeps its
    weights in a .ptd file beside it; the firmware links one program and no data map, so
    load_method would fail on the target with InvalidState (0x02). Say it before
    compiling."""
    method = model.program.method
    if method.external_data:
        raise BuildSetupError(
            "The model '%s' keeps the data of %s outside the program, in a "
            ".ptd file (exported with ExecutorchBackendConfig(external_constants=True)); "
            "this firmware embeds the .pte alone, so loading its method '%s' would fail on "
            "the target. Export it without external_constants (the weights then travel "
            "inside the .pte)."
            % (model.path, _counted(method.external_data, "tensor"), method.name))


def _check_unplanned_state(model: Model):
    """A mutable buffer exported with MemoryPlanningPass(alloc_mutable_buffers=False)
    (and emit_mutable_buffer_names=True) is left to the application: its memory and its
    initial state. ExecuTorch gives it a null data pointer; the runner has neither, and
    the first kernel on it loaded through address 0. Say it before compiling."""
    method = model.program.method
    if method.unplanned_state:
        them = "it" if len(method.unplanned_state) == 1 else "them"
        raise BuildSetupError(
            "The model '%s' leaves the memory and initial state of %s of its method '%s' "
            "to the application (exported with "
            "MemoryPlanningPass(alloc_mutable_buffers=False)); the runner has no state to "
            "give %s, so its kernels would read and write address 0. Export it with "
            "alloc_mutable_buffers=True (the default), which plans %s in the method's memory."
            % (model.path, _counted(method.unplanned_state, "mutable buffer"), method.name,
               them, them))


def _check_bundle(model: Model):
    """A bundled program brings its own inputs and expected outputs: inputs=/expected=
    cannot apply (NAME.inputs.json and NAME.expected.json beside it are for NAME.pte);
    its method needs test cases that fit it (the runner sets and compares them as they
    are)."""
    if model.io_given:
        raise BuildSetupError(
            "The model '%s' is a bundled program (.bpte): it carries its own test cases "
            "(inputs and expected outputs), so $MODEL_INPUTS and $MODEL_EXPECTED do not apply. Drop "
            "them, or give the plain .pte." % model.path)
    model.inputs = model.expected = None
    method = model.program.method
    cases = model.program.bundle.test_suites.get(method.name, [])
    if not cases:
        raise BuildSetupError("The bundled program '%s' has no test cases for its method "
                              "'%s': nothing to run and check." % (model.path, method.name))
    for i, case in enumerate(cases):
        if [s.describe() for s in case.inputs] != [s.describe() for s in method.inputs]:
            raise BuildSetupError(
                "Test case %d of the bundled program '%s' gives inputs %s, but its method "
                "'%s' takes %s." % (i, model.path, ", ".join(s.describe() for s in case.inputs)
                                    or "none", method.name,
                                    ", ".join(s.describe() for s in method.inputs) or "none"))
        if case.expected and [s.describe() for s in case.expected] != [
                s.describe() for s in method.outputs]:
            raise BuildSetupError(
                "Test case %d of the bundled program '%s' expects outputs %s, but its "
                "method '%s' gives %s." % (i, model.path, ", ".join(
                    s.describe() for s in case.expected), method.name,
                    ", ".join(s.describe() for s in method.outputs)))
