#!/usr/bin/env python3
"""Export the memory-planning test models, as tests/models/ops/export.py exports its
models (the same requirements: the `export` extra):

- `wide_add`, x + y over 1,200,000 float32 values each, whose planned activations (about
  14 MB) fit QEMU's 64 MiB but not the CV32E40P testbench's 4 MiB. Only the .pte is
  written (its inputs would be 12 MB of JSON, and the tests run it with all ones).
- `unplanned_io`, exported with ExecuTorch's
  MemoryPlanningPass(alloc_graph_input=False, alloc_graph_output=False): the program
  plans no memory for its inputs and outputs, the caller provides it. With its inputs
  and expected outputs, and as a bundled program (unplanned_io.bpte, two test cases).

    python tests/models/memory/export.py [--out DIR]
"""

import importlib.util
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("ops_export", HERE.parent / "ops" / "export.py")
ops_export = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ops_export)


class WideAdd(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class UnplannedIO(torch.nn.Module):
    """Float and int64 inputs and outputs, one output computed in place of nothing
    planned, one a reduction."""
    def forward(self, x, y, n):
        return x * 2 + y, n + 1, (x - y).sum(dim=1)


def _unplanned_config():
    from executorch.exir import ExecutorchBackendConfig
    from executorch.exir.passes import MemoryPlanningPass
    return ExecutorchBackendConfig(memory_planning_pass=MemoryPlanningPass(
        alloc_graph_input=False, alloc_graph_output=False))


MODELS = {
    "wide_add": (WideAdd, lambda: (torch.ones(1, 1_200_000), torch.ones(1, 1_200_000))),
    "unplanned_io": (UnplannedIO, lambda: (torch.randn(3, 5), torch.randn(3, 5),
                                           torch.arange(-4, 3, dtype=torch.int64))),
}
WITH_INPUTS = {"unplanned_io"}


def write_bundled(name, out):
    """NAME.bpte: the program with two test cases of eager PyTorch's outputs."""
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import (
        serialize_from_bundled_program_to_flatbuffer)
    from executorch.exir import to_edge_transform_and_lower
    make_module, make_inputs = MODELS[name]
    torch.manual_seed(1)
    module = make_module().eval()
    cases = [make_inputs() for _ in range(2)]
    program = to_edge_transform_and_lower(torch.export.export(module, cases[0])).to_executorch(
        ops_export.BACKEND_CONFIGS[name]())
    with torch.no_grad():
        suite = MethodTestSuite(method_name="forward", test_cases=[
            MethodTestCase(inputs=list(c), expected_outputs=list(module(*c))) for c in cases])
    path = out / f"{name}.bpte"
    path.write_bytes(serialize_from_bundled_program_to_flatbuffer(
        BundledProgram(program, [suite])))
    return path


def main(argv):
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else HERE
    ops_export.MODELS = MODELS
    ops_export.BACKEND_CONFIGS["unplanned_io"] = _unplanned_config
    for name in MODELS:
        if name in WITH_INPUTS:
            for path in (ops_export.write_model(name, out)[0], write_bundled(name, out)):
                print(f"{name}: {path.name} ({path.stat().st_size} bytes)")
            continue
        pte, _, _ = ops_export.export_model(name)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{name}.pte").write_bytes(pte)
        print(f"{name}: {name}.pte ({len(pte)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
