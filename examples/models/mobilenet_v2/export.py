#!/usr/bin/env python3
"""MobileNetV2, exported the way ExecuTorch's own Cortex-M example does it.

    python examples/models/mobilenet_v2/export.py [--out DIR] [--calibration N]

ExecuTorch's example notebook for its Cortex-M backend (examples/arm/
cortex_m_mv2_example.ipynb in the v1.4.1 tree) takes torchvision's MobileNetV2 at 224x224,
quantizes it with CortexMQuantizer calibrated on 100 images, lowers it with to_edge (its
EdgeCompileConfig: linear, hardsigmoid and hardswish preserved, IR validity checks off,
max_pool2d an exception to the core ATen set) and CortexMPassManager with no target
(ExecuTorch's default: Cortex-M55, CMSIS-NN's MVE forms), serializes it with
to_executorch(ExecutorchBackendConfig(extract_delegate_segments=False)) and bundles one
test case into a BundledProgram (.bpte). This script does the same, step by step, and
writes:

- mobilenet_v2.bpte: the program and one test case: a 224x224 input and, as its expected
  output, what the lowered program's Python reference (the cortex_m dialect's
  implementations) computes for it. The firmware checks it on the target.

Where it differs from the notebook, and why:

- torchvision 0.28 does not import beside torch 2.13.0, so its MobileNetV2 is written out
  below: the same layers, channel counts and initialization (torchvision's
  models/mobilenetv2.py), with random weights from seed 0 instead of ImageNet's
  (nothing is downloaded; the outputs mean nothing, they check the arithmetic), and
  BatchNorm fitted to them (make_model says why).
- The images are seeded random values in the range ImageNet's preprocessing gives
  (normalized by its mean and deviation), not imagenette's photographs.
- torch.export.export(...).module(check_guards=False): torch 2.13 otherwise adds a
  _guards_fn submodule, which the Cortex-M passes reject ("call_module is not
  supported"); the notebook was written for an earlier torch.
- The test case carries the reference as its expected output (the notebook's has none:
  it prints the firmware's output and compares the top class by eye).

The unused constants the passes leave behind are kept, as the notebook keeps them
(examples/models/tiny/export.py drops them): the program is as large as the notebook's.

Needs torch 2.13.0, executorch 1.4.1 and tosa-tools 2026.5.0 (./setup.sh --export).
Deterministic: a second run writes the same bytes.
"""

import argparse
import hashlib
import sys
from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent
NAME = "mobilenet_v2"
INPUT_SHAPE = (1, 3, 224, 224)
# The notebook's calibration: 100 images.
CALIBRATION_SAMPLES = 100
CALIBRATION_SEED = 1
INPUT_SEED = 2
# ImageNet's normalization (what MobileNet_V2_Weights.DEFAULT.transforms() applies).
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


# ---------------------------------------------------------------------------------------
# torchvision's MobileNetV2 (models/mobilenetv2.py), width 1.0, 1000 classes

def conv_bn_relu6(c_in, c_out, kernel, stride=1, groups=1):
    """torchvision's Conv2dNormActivation: convolution without bias, BatchNorm, ReLU6."""
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
        nn.BatchNorm2d(c_out), nn.ReLU6(inplace=True))


class InvertedResidual(nn.Module):
    def __init__(self, c_in, c_out, stride, expand_ratio):
        super().__init__()
        hidden = int(round(c_in * expand_ratio))
        self.use_res_connect = stride == 1 and c_in == c_out
        layers = [conv_bn_relu6(c_in, hidden, 1)] if expand_ratio != 1 else []
        layers += [conv_bn_relu6(hidden, hidden, 3, stride, groups=hidden),
                   nn.Conv2d(hidden, c_out, 1, 1, 0, bias=False), nn.BatchNorm2d(c_out)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res_connect else self.conv(x)


class MobileNetV2(nn.Module):
    # expansion t, output channels c, repeats n, first stride s
    SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                (6, 160, 3, 2), (6, 320, 1, 1)]

    def __init__(self, num_classes=1000):
        super().__init__()
        features = [conv_bn_relu6(3, 32, 3, stride=2)]
        channels = 32
        for t, c, n, s in self.SETTINGS:
            for i in range(n):
                features.append(InvertedResidual(channels, c, s if i == 0 else 1, t))
                channels = c
        features.append(conv_bn_relu6(channels, 1280, 1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=0.2), nn.Linear(1280, num_classes))
        for m in self.modules():            # torchvision's initialization
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
        return self.classifier(torch.flatten(x, 1))


def make_model():
    """torchvision's MobileNetV2 with weights from seed 0, then BatchNorm made to fit them
    as tiny/export.py does for its networks: affine parameters seeded (0.5 to 1), running
    statistics measured on a seeded batch of 16 images. With torchvision's
    initialization alone (and no training) the activations fade layer by layer and every
    output comes out below one quantization step: all zeros, which checks nothing."""
    torch.manual_seed(0)
    model = MobileNetV2()
    norms = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        for norm in norms:
            norm.weight.uniform_(0.5, 1.0)
            norm.bias.uniform_(0.5, 1.0)
            norm.momentum = None        # running statistics = those of the batch below
        model.train()
        generator = torch.Generator().manual_seed(0)
        model(torch.cat([image(generator) for _ in range(16)]))
    return model.eval()


def image(generator):
    """A seeded random 'image': uniform pixels in [0, 1], normalized as ImageNet's
    preprocessing does, channels-last as the Cortex-M backend wants it."""
    pixels = torch.rand(INPUT_SHAPE, generator=generator)
    mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
    return ((pixels - mean) / std).to(memory_format=torch.channels_last)


def count_macs(model, x):
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
# The notebook's steps

def export(calibration_samples=CALIBRATION_SAMPLES):
    """(bundled program bytes, the input, the reference output, the float output, the
    executorch program manager)."""
    from executorch.backends.cortex_m.passes.cortex_m_pass_manager import CortexMPassManager
    from executorch.backends.cortex_m.quantizer.quantizer import CortexMQuantizer
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import (
        serialize_from_bundled_program_to_flatbuffer)
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    model = make_model()
    transformed_img = image(torch.Generator().manual_seed(INPUT_SEED))
    with torch.no_grad():
        float_output = model(transformed_img)

    exported_program = torch.export.export(model, (transformed_img,))
    graph_module = exported_program.module(check_guards=False)

    quantizer = CortexMQuantizer()
    quantized_graph_module = prepare_pt2e(graph_module, quantizer)
    generator = torch.Generator().manual_seed(CALIBRATION_SEED)
    for _ in range(calibration_samples):
        quantized_graph_module(image(generator))
    quantized_graph_module = convert_pt2e(quantized_graph_module)
    quantized_exported_program = torch.export.export(quantized_graph_module, (transformed_img,))

    config = EdgeCompileConfig(
        preserve_ops=[
            torch.ops.aten.linear.default,
            torch.ops.aten.hardsigmoid.default,
            torch.ops.aten.hardsigmoid_.default,
            torch.ops.aten.hardswish.default,
            torch.ops.aten.hardswish_.default,
        ],
        _check_ir_validity=False,
        _core_aten_ops_exception_list=[torch.ops.aten.max_pool2d.default],
    )
    edge_program_manager = to_edge(quantized_exported_program, compile_config=config)
    pass_manager = CortexMPassManager(edge_program_manager.exported_program())
    edge_program_manager._edge_programs["forward"] = pass_manager.transform()

    with torch.no_grad():
        reference = edge_program_manager.exported_program().module()(transformed_img)

    executorch_program_manager = edge_program_manager.to_executorch(
        config=ExecutorchBackendConfig(extract_delegate_segments=False))

    test_case = MethodTestCase(inputs=transformed_img, expected_outputs=reference)
    test_suite = MethodTestSuite(method_name="forward", test_cases=[test_case])
    bundled_program = BundledProgram(executorch_program_manager, [test_suite])
    data = serialize_from_bundled_program_to_flatbuffer(bundled_program)
    return data, transformed_img, reference, float_output, executorch_program_manager, model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE,
                        help="output directory (default: examples/models/mobilenet_v2)")
    parser.add_argument("--calibration", type=int, default=CALIBRATION_SAMPLES,
                        help="calibration images (default: %(default)s, the notebook's)")
    args = parser.parse_args(argv)
    data, x, reference, float_output, program, model = export(args.calibration)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{NAME}.bpte"
    path.write_bytes(data)
    operators = sorted({f"{op.name}.{op.overload}" if op.overload else op.name
                        for plan in program.executorch_program.execution_plan
                        for op in plan.operators})
    top = (reference.argmax().item(), float_output.argmax().item())
    print(f"{path}: {len(data)} bytes (sha256 {hashlib.sha256(data).hexdigest()[:16]}), "
          f"program {len(program.buffer)} bytes, {count_macs(model, x)} MACs")
    print(f"  operators: {', '.join(operators)}")
    print("  reference vs float: max |diff| %.4f over outputs in [%.4f, %.4f]; top class "
          "%d (float: %d)" % ((reference - float_output).abs().max().item(),
                               float_output.min().item(), float_output.max().item(), *top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
