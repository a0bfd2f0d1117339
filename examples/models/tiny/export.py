#!/usr/bin/env python3
"""Export MLPerf Tiny's four reference networks as int8 programs of Cortex-M operators.

    python examples/models/tiny/export.py [--out DIR] [--targets T,...] [--decomposed DIR]
                                          [names...]

The networks (DS-CNN keyword spotting, MobileNetV1 0.25 visual wake words, ResNet-8 image
classification, the anomaly-detection FC autoencoder) are the benchmark's reference
architectures with weights from fixed seeds (nothing is downloaded), BatchNorm in eval
mode with running statistics measured on one seeded batch (the quantizer folds it).

They go through ExecuTorch's Cortex-M route (backends/cortex_m): channels-last 4-D inputs,
CortexMQuantizer (per-channel int8 weights for convolutions, per-tensor int8 activations),
calibration on seeded random data, to_edge, CortexMPassManager, to_executorch. The program
is made of cortex_m:: operators (CMSIS-NN kernels). The pass manager fills some of their
arguments for the CMSIS-NN backend of the target (--targets): by default for ExecuTorch's
own default (no target_config: Cortex-M55, the MVE forms), written into --out, and for
Cortex-M3 (scalar) and Cortex-M4 (DSP), written into --out/m3 and --out/m4 where they
differ from the programs of the targets before them (the autoencoder's M4 program is its
M3 one). For each network NAME and target:

- NAME.pte: the program;
- NAME.inputs.json: one float32 input (the program quantizes it itself), a JSON list of
  {"dtype", "shape", "values"}, values in logical row-major order over the logical shape
  (NCHW for images, although the program takes the tensor channels-last);
- NAME.expected.json: the outputs of the lowered program's Python reference (the
  cortex_m dialect's implementations), in the same form. A firmware matches them to
  the output's quantization step (the scale of the last dequantize).

--decomposed DIR also writes the same networks (same weights, same calibration data)
through the XNNPACK quantizer without delegation: quantized_decomposed::quantize /
dequantize around float aten operators, the baseline the portable kernels run. Their
expected outputs are the converted (fake-quantized) eager model's.

tests/models/cortex_m/export.py loads this file and lowers and writes its per-operator
test models with its code (lower_cortex_m, to_executorch, io_dim_orders, _flat, _write):
a change here changes those models too.

Needs torch 2.13.0, executorch 1.4.1 and tosa-tools 2026.5.0 (the Cortex-M quantizer
imports the Arm backend, which imports tosa_serializer). Deterministic: a second run
writes the same bytes.
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent

CALIBRATION_SAMPLES = 16
CALIBRATION_SEED = 1
INPUT_SEED = 2
# Input values are multiples of this, in [-1, 1]: exact in float32.
INPUT_STEP = 1.0 / 256.0


# ---------------------------------------------------------------------------------------
# The networks

def conv_bn_relu(c_in, c_out, kernel, stride=1, padding=0, groups=1):
    return [nn.Conv2d(c_in, c_out, kernel, stride, padding, groups=groups, bias=False),
            nn.BatchNorm2d(c_out), nn.ReLU()]


def depthwise_separable(c_in, c_out, stride=1):
    """3x3 depthwise (BN, ReLU), then 1x1 pointwise (BN, ReLU)."""
    return (conv_bn_relu(c_in, c_in, 3, stride, 1, groups=c_in)
            + conv_bn_relu(c_in, c_out, 1))


class DSCNN(nn.Module):
    """Keyword spotting DS-CNN: 49x10 MFCC features, 12 classes (64 channels, 4 blocks;
    fewer for the small one)."""

    def __init__(self, classes=12, channels=64, blocks=4):
        super().__init__()
        layers = conv_bn_relu(1, channels, (10, 4), stride=2, padding=(5, 1))
        for _ in range(blocks):
            layers += depthwise_separable(channels, channels)
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(channels, classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


class MobileNetV1(nn.Module):
    """Visual wake words MobileNetV1, width 0.25: 96x96 RGB, 2 classes."""

    # (output channels, stride) of the 13 depthwise-separable blocks, width 0.25.
    BLOCKS = [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2), (128, 1), (128, 1),
              (128, 1), (128, 1), (128, 1), (256, 2), (256, 1)]

    def __init__(self, classes=2):
        super().__init__()
        layers = conv_bn_relu(3, 8, 3, stride=2, padding=1)
        channels = 8
        for c_out, stride in self.BLOCKS:
            layers += depthwise_separable(channels, c_out, stride)
            channels = c_out
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(channels, classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


class BasicBlock(nn.Module):
    """Two 3x3 conv-BN (ReLU between), plus the input (through a strided 1x1 conv with
    bias where the shape changes), then ReLU."""

    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.body = nn.Sequential(*conv_bn_relu(c_in, c_out, 3, stride, 1),
                                  nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(c_out))
        self.shortcut = (nn.Conv2d(c_in, c_out, 1, stride)
                         if stride != 1 or c_in != c_out else nn.Identity())

    def forward(self, x):
        return torch.relu(self.body(x) + self.shortcut(x))


class ResNet8(nn.Module):
    """Image classification ResNet-8 (CIFAR-10): 32x32 RGB, 10 classes; a stage per
    width (16, 32, 64; the small one stops at 32)."""

    def __init__(self, classes=10, widths=(16, 32, 64)):
        super().__init__()
        self.stem = nn.Sequential(*conv_bn_relu(3, widths[0], 3, padding=1))
        blocks, channels = [], widths[0]
        for i, width in enumerate(widths):
            blocks.append(BasicBlock(channels, width, 1 if i == 0 else 2))
            channels = width
        self.stages = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(channels, classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.pool(self.stages(self.stem(x))), 1))


class AutoEncoder(nn.Module):
    """Anomaly detection FC autoencoder: 640 inputs (5 frames x 128 mel bins), Linear-BN-
    ReLU layers of 128 x4, 8, 128 x4, and a Linear back to 640."""

    def __init__(self, features=640):
        super().__init__()
        layers, width = [], features
        for hidden in [128] * 4 + [8] + [128] * 4:
            layers += [nn.Linear(width, hidden), nn.BatchNorm1d(hidden), nn.ReLU()]
            width = hidden
        layers.append(nn.Linear(width, features))
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


# name -> (module class, input shape, classes, what it is)
NETWORKS = {
    "ds_cnn": (DSCNN, [1, 1, 49, 10], 12, "keyword spotting DS-CNN"),
    "mobilenet_v1": (MobileNetV1, [1, 3, 96, 96], 2, "visual wake words MobileNetV1 0.25"),
    "resnet8": (ResNet8, [1, 3, 32, 32], 10, "image classification ResNet-8"),
    "autoencoder": (AutoEncoder, [1, 640], None, "anomaly detection FC autoencoder"),
}
# Smaller networks of the same kinds (fewer channels, smaller inputs), where a kernel's
# fixed costs per call show: `export.py --out examples/models/tiny/small --targets default
# ds_cnn_small resnet_small` (benchmarks/int8.py --small measures them).
SMALL_NETWORKS = {
    "ds_cnn_small": (lambda: DSCNN(channels=48, blocks=3), [1, 1, 49, 10], 12,
                     "keyword spotting DS-CNN, 48 channels, 3 blocks"),
    "resnet_small": (lambda: ResNet8(widths=(16, 32)), [1, 3, 24, 24], 10,
                     "residual net, 24x24 RGB, two stages"),
}
ALL_NETWORKS = {**NETWORKS, **SMALL_NETWORKS}


def _uniform(shape, generator):
    """Uniform in [-1, 1], rounded to multiples of INPUT_STEP."""
    x = torch.rand(shape, generator=generator) * 2.0 - 1.0
    return torch.round(x / INPUT_STEP) * INPUT_STEP


def make_network(name):
    """The float network `name` in eval mode: weights from seed 0, BatchNorm's affine
    parameters seeded, its running statistics measured on one seeded batch of 64.

    BatchNorm's shift is positive (0.5 to 1 standard deviations), so most ReLUs are
    active: a random deep ReLU network at zero shift amplifies small perturbations layer
    after layer (MobileNetV1's 27 layers turn int8 rounding into a 30% output error,
    and would turn a one-step rounding difference of a kernel into many steps at the
    output); with the shift, int8 stays within a few percent of float."""
    make, shape, _, _ = ALL_NETWORKS[name]
    torch.manual_seed(0)
    model = make()
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for norm in norms:
            norm.weight.uniform_(0.5, 1.0)
            norm.bias.uniform_(0.5, 1.0)
            norm.momentum = None  # running statistics = those of the batch below
        model.train()
        model(_uniform([64] + shape[1:], torch.Generator().manual_seed(0)))
    return model.eval()


def _layout(x):
    """Cortex-M kernels take 4-D activations channels-last."""
    return x.to(memory_format=torch.channels_last) if x.dim() == 4 else x


def calibration_data(name):
    shape = ALL_NETWORKS[name][1]
    generator = torch.Generator().manual_seed(CALIBRATION_SEED)
    return [_uniform(shape, generator) for _ in range(CALIBRATION_SAMPLES)]


def test_input(name):
    return _uniform(ALL_NETWORKS[name][1], torch.Generator().manual_seed(INPUT_SEED))


def count_macs(model, x):
    """Multiply-accumulates of the convolutions and linear layers for input x."""
    total = 0

    def hook(module, inputs, output):
        nonlocal total
        if isinstance(module, nn.Conv2d):
            kh, kw = module.kernel_size
            total += output.numel() * (module.in_channels // module.groups) * kh * kw
        else:
            total += output.numel() * module.in_features

    handles = [m.register_forward_hook(hook) for m in model.modules()
               if isinstance(m, (nn.Conv2d, nn.Linear))]
    with torch.no_grad():
        model(x)
    for handle in handles:
        handle.remove()
    return total


# ---------------------------------------------------------------------------------------
# Export

# The targets a program can be exported for: "default" is CortexMPassManager without a
# target_config, as ExecuTorch's example notebook runs it (Cortex-M55: CMSIS-NN's MVE
# forms); the others are CortexMTargetConfig(cpu=...), and CPU:ISA adds its isa= override
# (m55:dsp, m33:scalar). The firmware computes every form (site_scons/etcorev/executorch/
# cortex_m_forms.py).
CPUS = ("m0", "m0plus", "m3", "m4", "m7", "m23", "m33", "m35p", "m55", "m85")
ISAS = ("scalar", "dsp", "mve")
# What the repository ships: the default, and a core of each other CMSIS-NN backend.
SHIPPED_TARGETS = ("default", "m3", "m4")


def target_config(target):
    """The CortexMTargetConfig of a target name, None for "default"."""
    if target == "default":
        return None
    from executorch.backends.cortex_m.library import cmsis_nn
    from executorch.backends.cortex_m.target_config import CortexM, CortexMTargetConfig
    cpu, _, isa = target.partition(":")
    if cpu not in CPUS or (isa and isa not in ISAS):
        raise ValueError("unknown target %r: default, or one of %s, optionally :ISA (%s)"
                         % (target, ", ".join(CPUS), ", ".join(ISAS)))
    return CortexMTargetConfig(cpu=CortexM[cpu.upper()],
                               isa=getattr(cmsis_nn.Backend, isa.upper()) if isa else None)


def target_name(value):
    """argparse type: a valid target name."""
    try:
        target_config(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error))
    return value


def lower_cortex_m(model, inputs, calibration, target="default"):
    """The edge program manager after the Cortex-M passes, for a tuple of example inputs
    and calibration samples that are tuples of inputs too (4-D ones are made
    channels-last), exported for target (see target_config). Run its reference
    (edge.exported_program().module()) before to_executorch(), which rewrites the graph
    into out variants in place. tests/models/cortex_m/export.py lowers its per-operator
    models with this function."""
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.exir import EdgeCompileConfig, to_edge
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    inputs = tuple(map(_layout, inputs))
    # check_guards=False: no _guards_fn submodule, which the Cortex-M passes reject.
    graph = torch.export.export(model, inputs).module(check_guards=False)
    graph = prepare_pt2e(graph, CortexMQuantizer())
    for sample in calibration:
        graph(*map(_layout, sample))
    graph = convert_pt2e(graph)
    exported = torch.export.export(graph, inputs)
    edge = to_edge(exported, compile_config=EdgeCompileConfig(
        preserve_ops=[torch.ops.aten.linear.default],
        _check_ir_validity=False,
        _core_aten_ops_exception_list=[torch.ops.aten.max_pool2d.default]))
    config = target_config(target)
    passes = (CortexMPassManager(edge.exported_program()) if config is None
              else CortexMPassManager(edge.exported_program(), target_config=config))
    edge._edge_programs["forward"] = passes.transform()
    drop_unused_constants(edge)
    return edge


def drop_unused_constants(edge):
    """Removes the constants no operator reads any more. The Cortex-M passes add weights
    in the layouts CMSIS-NN wants (OHWI, IHWO) but leave the originals as placeholders
    without users, and to_executorch() would serialize them: the dead copy is about half
    of a convolutional network's program. (to_edge's own clean-up ran before the passes
    and only looks at parameters, not at the buffers and constants quantization makes.)"""
    from torch.export.graph_signature import ExportGraphSignature, InputKind

    program = edge.exported_program()
    signature = program.graph_signature
    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    kinds = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)
    unused = [spec for spec in signature.input_specs
              if spec.kind in kinds and not placeholders[spec.arg.name].users]
    for spec in unused:
        program.graph.erase_node(placeholders[spec.arg.name])
        program.state_dict.pop(spec.target, None)
        program.constants.pop(spec.target, None)
    program._graph_signature = ExportGraphSignature(
        input_specs=[s for s in signature.input_specs if s not in unused],
        output_specs=list(signature.output_specs))
    program.graph_module.recompile()
    return len(unused)


def to_executorch(edge):
    from executorch.exir import ExecutorchBackendConfig
    return edge.to_executorch(ExecutorchBackendConfig(extract_delegate_segments=False))


def lower_decomposed(model, example, calibration):
    """(converted graph module, executorch program manager): XNNPACK's symmetric int8
    quantizer, not delegated."""
    import torch.ao.quantization.fx._decomposed  # noqa: F401  (quantized_decomposed ops)
    import executorch.kernels.quantized  # noqa: F401  (their out variants)
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from executorch.exir import to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
    graph = prepare_pt2e(torch.export.export(model, (example,)).module(), quantizer)
    for x in calibration:
        graph(x)
    graph = convert_pt2e(graph)
    program = to_edge_transform_and_lower(
        torch.export.export(graph, (example,))).to_executorch()
    return graph, program


def operators(program):
    return sorted({f"{op.name}.{op.overload}" if op.overload else op.name
                   for plan in program.executorch_program.execution_plan
                   for op in plan.operators})


def io_dim_orders(program):
    """(input dim orders, output dim orders) of the program's tensors."""
    plan = program.executorch_program.execution_plan[0]
    order = lambda i: list(plan.values[i].val.dim_order)  # noqa: E731
    return [order(i) for i in plan.inputs], [order(i) for i in plan.outputs]


def last_dequantize(edge):
    """(scale, zero point) of the dequantize that makes the (first) output."""
    graph = edge.exported_program().graph
    output = next(n for n in graph.nodes if n.op == "output")
    node = output.args[0][0]
    if "dequantize_per_tensor" not in str(node.target):
        return None
    return float(node.args[1]), int(node.args[2])


def _flat(outputs):
    return [outputs] if isinstance(outputs, torch.Tensor) else list(outputs)


def output_steps(graph):
    """The quantization step (the scale of the dequantize that makes it) of each output
    of an FX graph, None for an output that no dequantize makes."""
    output = next(n for n in graph.nodes if n.op == "output")
    nodes = output.args[0] if isinstance(output.args[0], (list, tuple)) else [output.args[0]]
    return [float(n.args[1]) if "dequantize_per_tensor" in str(getattr(n, "target", ""))
            else None for n in nodes]


def _tensor_entry(tensor, atol=None):
    entry = {"dtype": str(tensor.dtype).removeprefix("torch."),
             "shape": list(tensor.shape),
             # contiguous(): logical row-major order, whatever the memory format
             "values": tensor.detach().contiguous().flatten().tolist()}
    if atol is not None:
        entry["atol"] = atol
    return entry


def _json_text(tensors):
    items = [" {\n  \"dtype\": %s,\n  \"shape\": %s,%s\n  \"values\": %s\n }"
             % (json.dumps(t["dtype"]), json.dumps(t["shape"]),
                "\n  \"atol\": %s," % json.dumps(t["atol"]) if "atol" in t else "",
                json.dumps(t["values"]))
             for t in tensors]
    return "[\n" + ",\n".join(items) + "\n]\n"


def _write(out_dir, name, pte, inputs, expected, steps=()):
    """NAME.pte, NAME.inputs.json and NAME.expected.json; steps: each output's
    quantization step, written as its "atol" (the firmware's int8 kernels and the
    Python reference may round a value to neighbouring steps)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pte_path = out_dir / f"{name}.pte"
    pte_path.write_bytes(pte)
    steps = list(steps) + [None] * (len(expected) - len(steps))
    (out_dir / f"{name}.inputs.json").write_text(_json_text([_tensor_entry(t) for t in inputs]))
    (out_dir / f"{name}.expected.json").write_text(
        _json_text([_tensor_entry(t, step) for t, step in zip(expected, steps)]))
    return pte_path


def target_dir(out, target):
    """Where a target's files go: out for the default, out/TARGET for the others."""
    return Path(out) if target == "default" else Path(out) / target.replace(":", "-")


def drop_if_exported(out, target, name, earlier):
    """A target's program that is the same as one of an earlier target's (byte for byte:
    the export is deterministic) is not kept twice: its files go, and its directory when
    emptied. Returns that earlier target, or None."""
    directory = target_dir(out, target)
    mine = (directory / f"{name}.pte").read_bytes()
    same = next((t for t in earlier if (target_dir(out, t) / f"{name}.pte").is_file()
                 and (target_dir(out, t) / f"{name}.pte").read_bytes() == mine), None)
    if same is None:
        return None
    for suffix in (".pte", ".inputs.json", ".expected.json"):
        (directory / f"{name}{suffix}").unlink(missing_ok=True)
    if not any(directory.iterdir()):
        directory.rmdir()
    return same


def _compare(got, want):
    """max |got - want|, and that relative to want's range."""
    error = (got - want).abs().max().item()
    span = (want.max() - want.min()).item()
    return error, error / span if span else float("inf")


def export_network(name, out_dir, decomposed_dir=None, target="default"):
    """Writes the files of `name`, exported for target; returns a dict of what the report
    prints."""
    model = make_network(name)
    x = test_input(name)
    calibration = calibration_data(name)
    with torch.no_grad():
        reference = model(x)
    info = {"macs": count_macs(model, x),
            "parameters": sum(p.numel() for p in model.parameters()),
            "float_range": (reference.min().item(), reference.max().item())}

    edge = lower_cortex_m(model, (x,), [(c,) for c in calibration], target)
    with torch.no_grad():
        expected = _flat(edge.exported_program().module()(_layout(x)))
    output_qparams = last_dequantize(edge)
    steps = output_steps(edge.exported_program().graph)
    program = to_executorch(edge)
    path = _write(out_dir, name, bytes(program.buffer), [x], expected, steps)
    info.update(pte=path, pte_bytes=path.stat().st_size, operators=operators(program),
                dim_orders=io_dim_orders(program), output_qparams=output_qparams,
                error=_compare(expected[0], reference),
                class_spread=expected[0].std().item())

    if decomposed_dir is not None:
        graph, program = lower_decomposed(make_network(name), x, calibration)
        with torch.no_grad():
            expected = _flat(graph(x))
        path = _write(decomposed_dir, name, bytes(program.buffer), [x], expected,
                      output_steps(graph.graph))
        info.update(decomposed_pte=path, decomposed_bytes=path.stat().st_size,
                    decomposed_operators=operators(program),
                    decomposed_error=_compare(expected[0], reference))
    return info


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE,
                        help="output directory (default: examples/models/tiny)")
    parser.add_argument("--decomposed", type=Path, metavar="DIR",
                        help="also write the decomposed (XNNPACK-quantized, float aten "
                             "operators) baseline into DIR")
    parser.add_argument("--targets", default=",".join(SHIPPED_TARGETS),
                        type=lambda v: [target_name(t.strip()) for t in v.split(",") if t.strip()],
                        help="the Cortex-M targets to export for, comma-separated (default: "
                             "%(default)s): `default` is ExecuTorch's own (the pass manager "
                             "without a target: Cortex-M55) into --out, any other (m0, m3, "
                             "m4, m33, m55, ..., CPU:ISA) into --out/TARGET, where a program "
                             "an earlier target has is not kept twice")
    parser.add_argument("names", nargs="*", metavar="name",
                        help=f"networks to export (default: all of {', '.join(NETWORKS)}; "
                             f"also {', '.join(SMALL_NETWORKS)})")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in ALL_NETWORKS]
    if unknown:
        parser.error(f"unknown network(s) {', '.join(unknown)}; known: "
                     f"{', '.join(ALL_NETWORKS)}")

    status = 0
    for i, target in enumerate(args.targets):
        for name in args.names or NETWORKS:
            info = export_network(name, target_dir(args.out, target),
                                  args.decomposed if target == "default" else None, target)
            same = drop_if_exported(args.out, target, name, args.targets[:i])
            if same:
                print(f"{name} for {target}: the same program as for {same}")
                continue
            print(f"{name} for {'the default target' if target == 'default' else target}:")
            digest = hashlib.sha256(info["pte"].read_bytes()).hexdigest()[:16]
            scale_zp = info["output_qparams"]
            print(f"  {info['pte']} {info['pte_bytes']} bytes (sha256 {digest}), "
                  f"{info['macs']} MACs, {info['parameters']} parameters")
            print(f"  operators: {', '.join(info['operators'])}")
            print(f"  dim orders: inputs {info['dim_orders'][0]}, outputs {info['dim_orders'][1]}")
            print(f"  output: scale {scale_zp[0]!r}, zero point {scale_zp[1]}" if scale_zp
                  else "  output: not from a dequantize")
            print("  lowered vs float: max |diff| %.5f, %.2f%% of the float output's range "
                  "[%.4f, %.4f]; std over outputs %.4f"
                  % (info["error"][0], 100 * info["error"][1], *info["float_range"],
                     info["class_spread"]))
            foreign = [op for op in info["operators"] if not op.startswith("cortex_m::")]
            if foreign:
                print(f"  not cortex_m: {', '.join(foreign)}")
            if args.decomposed is not None and target == "default":
                print(f"  decomposed: {info['decomposed_pte']} {info['decomposed_bytes']} bytes; "
                      f"{', '.join(info['decomposed_operators'])}; vs float: max |diff| %.5f "
                      f"(%.2f%%)" % (info["decomposed_error"][0],
                                     100 * info["decomposed_error"][1]))
    return status


if __name__ == "__main__":
    sys.exit(main())
