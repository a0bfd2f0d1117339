#!/usr/bin/env python3
"""Export the example models to ExecuTorch .pte files, each with a .json that gives its
inputs, the outputs eager PyTorch computes for them, and the operators the program uses.

    python examples/models/export.py [--out DIR] [names...]

Needs the `export` extra (torch + executorch; `./setup.sh --export` installs it). Models are
exported with `torch.export.export`, then `to_edge_transform_and_lower(...).to_executorch()`,
float32 and without delegation. The output is deterministic: the inputs are fixed values and
the random seeds are fixed, so a second run writes the same bytes.
"""

import argparse
import json
import random
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent

# Values for "non-trivial" inputs: exact in float32, so eager and on-target results compare
# exactly.
_PATTERN = [-0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75]


def _pattern(shape, start=0):
    count = 1
    for dim in shape:
        count *= dim
    values = [_PATTERN[(start + i) % len(_PATTERN)] for i in range(count)]
    return torch.tensor(values, dtype=torch.float32).reshape(shape)


class Add(torch.nn.Module):
    """x + y: the application note's model."""

    def forward(self, x, y):
        return x + y


class MulAdd(torch.nn.Module):
    """x * y + x - 0.5."""

    def forward(self, x, y):
        return x * y + x - 0.5


# name -> (module factory, example inputs factory)
MODELS = {
    "add": (Add, lambda: (torch.ones(5), torch.ones(5))),
    "mul_add": (MulAdd, lambda: (_pattern([2, 3]), _pattern([2, 3], start=3))),
}


def _seed():
    random.seed(0)
    torch.manual_seed(0)


def _tensor_entry(tensor):
    return {
        "dtype": str(tensor.dtype).removeprefix("torch."),
        "shape": list(tensor.shape),
        "values": tensor.flatten().tolist(),
    }


def _flat_outputs(outputs):
    if isinstance(outputs, torch.Tensor):
        return [outputs]
    return [t for t in outputs]


def export_model(name):
    """Returns (pte bytes, description dict) for the model called `name`."""
    from executorch.exir import to_edge_transform_and_lower

    make_module, make_inputs = MODELS[name]
    _seed()
    module = make_module().eval()
    inputs = make_inputs()
    with torch.no_grad():
        expected = _flat_outputs(module(*inputs))

    exported = torch.export.export(module, inputs)
    program = to_edge_transform_and_lower(exported).to_executorch()

    return bytes(program.buffer), describe(program, inputs, expected)


def describe(program, inputs, outputs):
    """The .json beside a .pte: inputs, eager outputs, the program's operators."""
    operators = sorted({
        f"{op.name}.{op.overload}" if op.overload else op.name
        for plan in program.executorch_program.execution_plan
        for op in plan.operators
    })
    return {
        "inputs": [_tensor_entry(t) for t in inputs],
        "outputs": [_tensor_entry(t) for t in outputs],
        "operators": operators,
    }


def _json_text(value, indent=0):
    """JSON with one entry per line, but lists of numbers or strings on one line (as in
    the shared manifest)."""
    pad = " " * (indent + 1)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k)}: {_json_text(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        items = [pad + _json_text(v, indent + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    return json.dumps(value)


def write_model(name, out_dir):
    """Exports `name` into out_dir as <name>.pte and <name>.json; returns the two paths."""
    pte, description = export_model(name)
    return write_files(name, pte, description, out_dir)


def write_files(name, pte, description, out_dir):
    """<name>.pte and <name>.json (inputs, outputs, operators) in out_dir."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pte_path = out_dir / f"{name}.pte"
    json_path = out_dir / f"{name}.json"
    pte_path.write_bytes(pte)
    json_path.write_text(_json_text(description) + "\n")
    return pte_path, json_path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE,
                        help="output directory (default: examples/models)")
    parser.add_argument("names", nargs="*", metavar="name",
                        help=f"models to export (default: all of {', '.join(MODELS)})")
    args = parser.parse_args(argv)

    unknown = [n for n in args.names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    for name in args.names or MODELS:
        pte_path, json_path = write_model(name, args.out)
        print(f"{name}: {pte_path} ({pte_path.stat().st_size} bytes), {json_path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
