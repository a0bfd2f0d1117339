#!/usr/bin/env python3
"""Export the programs of ExecuTorch's default flow that ExecuTorch v1.4.1's portable
kernels or this build once got wrong, as tests/models/ops/export.py exports its models
(NAME.pte, NAME.inputs.json, NAME.expected.json from eager PyTorch; the same
requirements: the `export` extra). tests/test_exported_programs.py runs them.

- `remainder`: torch.remainder (%) of int32 and int64 tensors with negative operands,
  tensor and scalar divisors (the portable kernel took C's sign).
- `fmod_pow`: fmod and pow of int32 tensors (the portable kernels compute them in
  double: the dtype selection had left it out).
- `cond`: torch.cond (a JumpFalseCall to the chain's end was refused as out of range);
  `two_conds_cloned`: two of them, both ways from one input, the first result copied.
- `infinities`: outputs with infinities and NaN (the check took an infinity equal to
  the one expected for a difference).
- `quantize_extremes`: quantize_per_tensor of values beyond int32 once scaled
  (ExecuTorch's kernel casts them to int64: undefined; with an FPU it gave -1).
- `state`: a mutable buffer as ExecuTorch plans it by default, without an initial value
  in the program (the runner zeroes its memory, as ExecuTorch's runners do);
  `initialized_state`: one with a value of its own in the program
  (InitializedMutableBufferPass), which loading the method writes after the zeroing.
- methods/two_methods: a program of two methods (to_edge of {"forward": ..., "decode":
  ...}); ExecuTorch orders them by name, so its first is `decode`. The inputs fit
  both; NAME.METHOD.expected.json per method.
- refused/: programs the build refuses, only the .pte: `unplanned_buffer`, a mutable
  buffer exported with MemoryPlanningPass(alloc_mutable_buffers=False); `two_conds`, the
  two conditions without the copy, which ExecuTorch v1.4.1 plans to wrong outputs.

    python tests/models/programs/export.py [--out DIR]
"""

import importlib.util
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("ops_export", HERE.parent / "ops" / "export.py")
ops_export = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ops_export)

A = [7, -8, 100, -1, 0, -9, 9, -2147483647]
B = [3, 3, -7, 5, -2, -3, -4, 10]


class Remainder(torch.nn.Module):
    def forward(self, a, b, c, d):
        return a % b, a % 4, a % -3, c % d, torch.remainder(c, -5)


class FmodPow(torch.nn.Module):
    def forward(self, a, b):
        return torch.fmod(a, b), torch.fmod(a, 3), torch.pow(b, 2), torch.pow(b, b.abs() - 1)


def _cond(x, positive):
    return torch.cond(x.sum() > 0 if positive else x.sum() < 0,
                      lambda x: x * 2, lambda x: x - 10, (x,))


class Cond(torch.nn.Module):
    def forward(self, x):
        return _cond(x, True)


class TwoConds(torch.nn.Module):
    """Two conditions on one input: one true, one false, so both branch kinds run. The
    first result is copied (.clone()): without the copy, ExecuTorch v1.4.1 plans the
    second branch's output over the first result (refused/two_conds)."""
    def __init__(self, clone=True):
        super().__init__()
        self.clone = clone

    def forward(self, x):
        first = _cond(x, True)
        return first.clone() if self.clone else first, _cond(x, False)


class Infinities(torch.nn.Module):
    """Outputs that hold infinities and NaN, as attention masks and logs of zero make
    them: eager's expected outputs say -Infinity, Infinity and NaN."""
    def forward(self, x):
        return torch.log(x), x.masked_fill(x > 1, float("-inf")), x / 0


class QuantizeExtremes(torch.nn.Module):
    """quantized_decomposed.quantize_per_tensor (what PT2E quantizers put at a float
    input) of values whose scaled product is beyond int32, infinities included: the
    reference clamps in float, so they saturate at the range's ends."""
    def forward(self, x):
        quantize = torch.ops.quantized_decomposed.quantize_per_tensor
        return (quantize(x, 0.05, 3, -128, 127, torch.int8),
                quantize(x, 0.05, 3, 0, 255, torch.uint8))


class State(torch.nn.Module):
    """A mutable buffer, planned as ExecuTorch plans it by default: the program holds no
    initial value for it (ExecuTorch's runners start it from zeroed memory)."""
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(3))

    def forward(self, x):
        self.total.add_(x)
        return self.total * 2


class InitializedState(State):
    """The mutable buffer with a value of its own, which the program carries
    (InitializedMutableBufferPass): load_method writes it after the runner's zeroing."""
    def __init__(self):
        super().__init__()
        self.total.fill_(5.0)


def _initialized_state_config():
    from executorch.exir import ExecutorchBackendConfig
    from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass
    return ExecutorchBackendConfig(passes=[InitializedMutableBufferPass(["total"])])


def _unplanned_buffer_config():
    from executorch.exir import ExecutorchBackendConfig
    from executorch.exir.passes import MemoryPlanningPass
    return ExecutorchBackendConfig(
        memory_planning_pass=MemoryPlanningPass(alloc_mutable_buffers=False),
        emit_mutable_buffer_names=True)


class Forward(torch.nn.Module):
    def forward(self, x):
        return x * 2 + 1


class Decode(torch.nn.Module):
    def forward(self, x):
        return x - 5, x.sum()


def write_two_methods(out_dir):
    """methods/two_methods.pte, its inputs and each method's expected outputs."""
    from executorch.exir import to_edge_transform_and_lower
    inputs = (torch.tensor([1.5, -2.0, 0.25]),)
    modules = {"forward": Forward(), "decode": Decode()}
    program = to_edge_transform_and_lower(
        {name: torch.export.export(m, inputs) for name, m in modules.items()})
    out_dir = Path(out_dir) / "methods"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "two_methods.pte"
    path.write_bytes(program.to_executorch().buffer)
    entry = ops_export._tensor_entry
    (out_dir / "two_methods.inputs.json").write_text(
        ops_export._json_text([entry(t) for t in inputs]))
    for name, module in modules.items():
        with torch.no_grad():
            outputs = ops_export._flat(module(*inputs))
        (out_dir / f"two_methods.{name}.expected.json").write_text(
            ops_export._json_text([entry(t) for t in outputs]))
    return path


def _ints(values, dtype):
    return torch.tensor(values, dtype=dtype)


MODELS = {
    "remainder": (Remainder, lambda: (_ints(A, torch.int32), _ints(B, torch.int32),
                                      _ints(A, torch.int64), _ints(B, torch.int64))),
    "fmod_pow": (FmodPow, lambda: (_ints(A, torch.int32), _ints(B, torch.int32))),
    "cond": (Cond, lambda: (torch.tensor([1.0, -3.0, 4.5]),)),
    "two_conds_cloned": (TwoConds, lambda: (torch.tensor([1.0, -3.0, 4.5]),)),
    "infinities": (Infinities, lambda: (torch.tensor([0.0, 2.0, -1.0, 0.5]),)),
    "quantize_extremes": (QuantizeExtremes, lambda: (torch.tensor(
        [3.4e38, -3.4e38, float("inf"), -float("inf"), 1e10, -1e10, 2e9, 1.0, -2.5]),)),
    "state": (State, lambda: (torch.tensor([1.5, -2.0, 0.25]),)),
    "initialized_state": (InitializedState, lambda: (torch.tensor([1.5, -2.0, 0.25]),)),
    # the same module, its buffer left to the application (_unplanned_buffer_config)
    "unplanned_buffer": (State, lambda: (torch.ones(3),)),
    "two_conds": (lambda: TwoConds(clone=False), lambda: (torch.tensor([1.0, -3.0, 4.5]),)),
}
REFUSED = {"unplanned_buffer", "two_conds"}


def main(argv):
    out = Path(argv[argv.index("--out") + 1]) if "--out" in argv else HERE
    ops_export.MODELS = MODELS
    ops_export.BACKEND_CONFIGS["unplanned_buffer"] = _unplanned_buffer_config
    ops_export.BACKEND_CONFIGS["initialized_state"] = _initialized_state_config
    for name in MODELS:
        if name in REFUSED:
            pte, _, _ = ops_export.export_model(name)
            (out / "refused").mkdir(parents=True, exist_ok=True)
            path = out / "refused" / f"{name}.pte"
            path.write_bytes(pte)
        else:
            path = ops_export.write_model(name, out)[0]
        print(f"{name}: {path.relative_to(out)} ({path.stat().st_size} bytes)")
    path = write_two_methods(out)
    print(f"two_methods: {path.relative_to(out)} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
