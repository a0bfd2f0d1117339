#!/usr/bin/env python3
"""Export the example models (also the test suite's models) to ExecuTorch .pte files.

    python examples/models/export.py [--out DIR] [names...]

Each model is written as five files:

- NAME.pte: the ExecuTorch program;
- NAME.inputs.json: its inputs, a JSON list of {"dtype", "shape", "values"} (values
  flattened, row-major); the build reads it beside the model (or as inputs=);
- NAME.expected.json: the outputs eager PyTorch computes for those inputs (for a quantized
  model: the converted model's), in the same form; `scons run` checks against it;
- NAME.json: {"inputs", "outputs", "operators", "kernel_keys"}: the same inputs and
  outputs, with the operators of the program's execution plan and the kernel keys that
  ExecuTorch's own gen_oplist reports for it (codegen.tools.gen_oplist), the form of an
  entry of the shared test models' manifest.json;
- NAME.bpte: the same program as an ExecuTorch bundled program (devtools/bundled_program)
  with two test cases: NAME.inputs.json's inputs and a second set of fixed values, each
  with its expected outputs: eager PyTorch's, or, for an int8 model, those of the
  lowered program's own reference (the edge program run in Python, as
  examples/models/tiny/export.py takes them). `scons run model=NAME.bpte` runs every
  test case and checks the outputs on the target;
- cnn.etrecord (cnn only): its ETRecord (devtools/etrecord), which `scons run
  profile=etdump` gives ExecuTorch's Inspector with the ETDump the firmware writes.

Needs the `export` extra (torch + executorch; `./setup.sh --export` installs it). Models are
exported with `torch.export.export`, then `to_edge_transform_and_lower(...).to_executorch()`,
float32 unless noted and without delegation; qmlp is first quantized to int8 by PT2E
post-training quantization (the XNNPACK quantizer's symmetric config, not delegated: the
program keeps quantized_decomposed::quantize_per_tensor and dequantize_per_tensor). The
output is deterministic: the inputs are fixed values and the random seeds are fixed, so a
second run writes the same bytes. (On another machine, eager PyTorch's float results may
differ in the last bit, its matrix products taking other CPU code paths, and with them
qmlp's calibrated scales; the .pte's byte layout may differ with the flatbuffers build.)
"""

import argparse
import contextlib
import io
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


class MLP(torch.nn.Module):
    """Linear(inputs, hidden) ReLU Linear(hidden, outputs); weights from the fixed seed,
    in the program's data segment."""

    def __init__(self, inputs=16, hidden=32, outputs=10):
        super().__init__()
        self.fc1 = torch.nn.Linear(inputs, hidden)
        self.relu = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(hidden, outputs)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class CNN(torch.nn.Module):
    """Conv2d(1,4,3) ReLU MaxPool2d(2) Linear(36,10) softmax, on a [1,1,8,8] input."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(1, 4, 3)
        self.relu = torch.nn.ReLU()
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(36, 10)

    def forward(self, x):
        x = self.pool(self.relu(self.conv(x)))
        return torch.softmax(self.fc(x.flatten(1)), dim=1)


class IntOps(torch.nn.Module):
    """x * 3 + y on int32 (the scalar 3 becomes an int64 constant converted to int32: the
    program's dim_order_ops::_to_dim_order_copy)."""

    def forward(self, x, y):
        return x * 3 + y


# name -> (module factory, example inputs factory)
MODELS = {
    "add": (Add, lambda: (torch.ones(5), torch.ones(5))),
    "mul_add": (MulAdd, lambda: (_pattern([2, 3]), _pattern([2, 3], start=3))),
    "mlp": (MLP, lambda: (_pattern([1, 16]),)),
    "cnn": (CNN, lambda: (_pattern([1, 1, 8, 8]),)),
    "int_ops": (IntOps, lambda: (torch.arange(-3, 1, dtype=torch.int32),
                                 torch.arange(-1, 3, dtype=torch.int32))),
    "qmlp": (lambda: MLP(16, 32, 4), lambda: (_pattern([1, 16]),)),
}

# Models quantized to int8 before export (calibrated on their example inputs).
QUANTIZED = {"qmlp"}

# The second test case of each bundled program (NAME.bpte): other fixed values.
BUNDLE_INPUTS = {
    "add": lambda: (_pattern([5]), _pattern([5], start=2)),
    "mul_add": lambda: (_pattern([2, 3], start=1), _pattern([2, 3], start=5)),
    "mlp": lambda: (_pattern([1, 16], start=3),),
    "cnn": lambda: (_pattern([1, 1, 8, 8], start=2),),
    "int_ops": lambda: (torch.tensor([7, -5, 100, 0], dtype=torch.int32),
                        torch.tensor([-2, 3, -300, 9], dtype=torch.int32)),
    "qmlp": lambda: (_pattern([1, 16], start=3),),
}

# Models that get an ETRecord (NAME.etrecord) for the Inspector (profile=etdump).
ETRECORD = {"cnn"}


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


def quantize(module, inputs):
    """The module after int8 PT2E post-training quantization with the XNNPACK quantizer's
    symmetric config, calibrated on inputs (the converted graph module; not delegated, so
    it keeps quantized_decomposed::quantize_per_tensor and dequantize_per_tensor)."""
    import torch.ao.quantization.fx._decomposed  # noqa: F401  (quantized_decomposed ops)
    import executorch.kernels.quantized  # noqa: F401  (their out variants)
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
    graph = prepare_pt2e(torch.export.export(module, inputs).module(), quantizer)
    with torch.no_grad():
        graph(*inputs)
    return convert_pt2e(graph)


def export_model(name):
    """Returns (pte bytes, description dict, bundled program bytes, ETRecord or None) for
    the model called `name`; the description has the program's kernel keys too (see
    kernel_keys)."""
    from executorch.exir import to_edge_transform_and_lower

    make_module, make_inputs = MODELS[name]
    _seed()
    module = make_module().eval()
    inputs = make_inputs()
    if name in QUANTIZED:
        module = quantize(module, inputs)
    with torch.no_grad():
        expected = _flat_outputs(module(*inputs))

    exported = torch.export.export(module, inputs)
    edge = to_edge_transform_and_lower(exported, generate_etrecord=name in ETRECORD)
    # The bundled program's expected outputs: eager PyTorch's, for an int8 model the
    # lowered program's reference (before to_executorch(), which rewrites it in place).
    reference = edge.exported_program().module() if name in QUANTIZED else module
    cases = [inputs, BUNDLE_INPUTS[name]()]
    with torch.no_grad():
        case_outputs = [_flat_outputs(reference(*case)) for case in cases]
    program = edge.to_executorch()

    pte = bytes(program.buffer)
    description = describe(program, inputs, expected)
    description["kernel_keys"] = kernel_keys(pte)
    etrecord = program.get_etrecord() if name in ETRECORD else None
    if etrecord is not None:
        _portable_stack_traces(etrecord)
    return pte, description, bundle(program, cases, case_outputs), etrecord


def _portable_stack_traces(etrecord):
    """The ETRecord's graphs keep each node's stack trace: their files named relative to
    the checkout or to site-packages (examples/models/export.py, torch/nn/...), not by
    where they are on this machine."""
    import site
    import sysconfig

    roots = {str(HERE.parents[1]), sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    prefixes = sorted((root.rstrip("/") + "/" for root in roots), key=len, reverse=True)
    edge = etrecord.edge_dialect_program
    programs = [etrecord.exported_program] + (
        list(edge.values()) if isinstance(edge, dict) else [edge])
    for program in programs:
        if program is None:
            continue
        for module in program.graph_module.modules():
            if not isinstance(module, torch.fx.GraphModule):
                continue
            for node in module.graph.nodes:
                trace = node.meta.get("stack_trace")
                if trace:
                    for prefix in prefixes:
                        trace = trace.replace(prefix, "")
                    node.meta["stack_trace"] = trace


def bundle(program, cases, outputs):
    """The program as an ExecuTorch bundled program (.bpte bytes): one test case of its
    method "forward" per (inputs, expected outputs)."""
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import (
        serialize_from_bundled_program_to_flatbuffer)

    suite = MethodTestSuite(method_name="forward", test_cases=[
        MethodTestCase(inputs=list(case), expected_outputs=list(expected))
        for case, expected in zip(cases, outputs)])
    return serialize_from_bundled_program_to_flatbuffer(BundledProgram(program, [suite]))


def kernel_keys(pte):
    """Operator -> its kernel keys ("v1/<dtype>;<dim order>|..."), as ExecuTorch's own
    `codegen.tools.gen_oplist --model_file_path` reports them for the program."""
    import tempfile
    from executorch.codegen.tools.gen_oplist import _get_kernel_metadata_for_model

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.pte"
        path.write_bytes(pte)
        with contextlib.redirect_stdout(io.StringIO()):     # it prints each operator
            keys = _get_kernel_metadata_for_model(str(path))
    return {op: sorted(keys[op]) for op in sorted(keys)}


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


def _tensors_text(tensors):
    """A JSON list of tensors (NAME.inputs.json, NAME.expected.json), as the test models'
    of tests/models/ops: one tensor per line group, the values on one line."""
    return _json_text(tensors) + "\n"


def write_model(name, out_dir):
    """Exports `name` into out_dir as <name>.pte, <name>.json, <name>.inputs.json,
    <name>.expected.json and <name>.bpte (and <name>.etrecord for the models of
    ETRECORD); returns their paths (in that order)."""
    pte, description, bpte, etrecord = export_model(name)
    pte_path, json_path = write_files(name, pte, description, out_dir)
    inputs_path = Path(out_dir) / f"{name}.inputs.json"
    expected_path = Path(out_dir) / f"{name}.expected.json"
    bpte_path = Path(out_dir) / f"{name}.bpte"
    inputs_path.write_text(_tensors_text(description["inputs"]))
    expected_path.write_text(_tensors_text(description["outputs"]))
    bpte_path.write_bytes(bpte)
    paths = [pte_path, json_path, inputs_path, expected_path, bpte_path]
    if etrecord is not None:
        paths.append(Path(out_dir) / f"{name}.etrecord")
        etrecord.save(str(paths[-1]))
    return paths


def write_files(name, pte, description, out_dir):
    """<name>.pte and <name>.json (inputs, outputs, operators; kernel keys where the
    description has them) in out_dir."""
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
        pte_path, *others = write_model(name, args.out)
        print(f"{name}: {pte_path} ({pte_path.stat().st_size} bytes), "
              f"{', '.join(p.name for p in others)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
