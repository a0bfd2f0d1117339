"""The models a build makes firmware for: `model=` names one `.pte`, a comma-separated
list, or a directory (every `.pte` in it), or any mix. Each model gets a directory of
its own in the variant, named after the file.

Beside NAME.pte, NAME.inputs.json gives its inputs and NAME.expected.json the outputs
`scons run` checks; `inputs=`/`expected=` give them for a single model.
"""

import glob
import os
import re
from dataclasses import dataclass
from typing import List, Optional

from etcorev import pte
from etcorev.errors import BuildSetupError


@dataclass
class Model:
    path: str                       # absolute
    name: str                       # its directory in the variant
    inputs: Optional[str] = None    # tensor files (absolute) or None
    expected: Optional[str] = None
    program: Optional[pte.Program] = None


def _name(path):
    stem = os.path.splitext(os.path.basename(path))[0]
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", stem) or "model"


def _beside(path, suffix):
    candidate = os.path.splitext(path)[0] + suffix
    return candidate if os.path.isfile(candidate) else None


def model_set(spec, inputs="", expected="") -> List[Model]:
    """The models of a `model=` value of absolute paths (files or directories)."""
    paths = []
    for item in [p.strip() for p in spec.split(",") if p.strip()]:
        if os.path.isdir(item):
            found = sorted(glob.glob(os.path.join(glob.escape(item), "*.pte")))
            if not found:
                raise BuildSetupError("The model directory '%s' (model=) holds no .pte file."
                                      % item)
            paths += found
        elif os.path.exists(item):
            paths.append(item)
        else:
            raise BuildSetupError("Model file '%s' not found (model=)." % item)
    if not paths:
        raise BuildSetupError("No model given: model= is empty.")
    if (inputs or expected) and len(paths) > 1:
        raise BuildSetupError(
            "inputs= and expected= are for a single model; with %d models, put "
            "NAME.inputs.json and NAME.expected.json beside each NAME.pte." % len(paths))
    models, names = [], {}
    for path in paths:
        name = _name(path)
        if name in names:
            raise BuildSetupError("Two models would build into the same directory '%s': '%s' "
                                  "and '%s'. Rename one of them." % (name, names[name], path))
        names[name] = path
        models.append(Model(path, name, inputs or _beside(path, ".inputs.json"),
                            expected or _beside(path, ".expected.json")))
    return models


def load_program(model: Model, region, placement, board):
    """Validate the model's program; refuse one larger than the region it goes into,
    now, in one sentence, rather than after compiling everything."""
    try:
        model.program = pte.validate_pte(model.path)
    except pte.PteError as error:
        raise BuildSetupError(str(error))
    size = model.program.size
    if size > region.length:
        raise BuildSetupError(
            "The model '%s' does not fit board=%s: it is %d bytes (%.1f MiB), more than the "
            "whole %s region it would be placed in (%d bytes, %.1f MiB, with "
            "model_placement=%s) before any code or data. Use a smaller model, or a board "
            "with more memory." % (model.path, board, size, size / 2**20, region.name,
                                   region.length, region.length / 2**20, placement))
    if not model.program.methods:
        raise BuildSetupError("The model '%s' has no method to run." % model.path)
    if not model.program.methods[0].outputs:
        raise BuildSetupError("The model '%s' is corrupt or incomplete: its method '%s' has "
                              "no outputs." % (model.path, model.program.methods[0].name))
    return model.program
