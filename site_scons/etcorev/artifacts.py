"""What the build's pseudo-builders return: typed records of SCons nodes, which callers
compose and read (and never mutate for one another).

- Firmware: a linked image and what is derived from it (env.Firmware; the runner's
  executor_runner tool adds the model it runs), or a model of a set that could not be
  built.
- KernelBuild: the objects and libraries of a kernel plan (env.ExecuTorchKernels).
- ExecuTorchRuntime: the runtime's libraries (env.ExecuTorchRuntime).
- BundledProgramRuntime: ExecuTorch's bundled-program runtime and its schema's headers
  (env.ExecuTorchBundledProgram).
"""

from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional


@dataclass
class Firmware:
    elf: Any = None                    # the nodes; None for a model that was not built
    map: Any = None
    hex: Any = None                    # Verilog hex for $readmemh
    size: Any = None                   # the size report
    images: List[Any] = field(default_factory=list)     # outputs=: Intel HEX, binary
    model: Any = None                  # etcorev.run.models.Model it runs, if any
    model_image: List[Any] = field(default_factory=list)  # external model: [hex, bin]
    unbuilt: Optional[str] = None      # why a model of a set was not built

    @property
    def built(self):
        return self.unbuilt is None

    @property
    def all(self):
        """Every file of the firmware: what `scons` builds by default."""
        return [self.elf, self.map, self.hex, self.size] + self.images + self.model_image

    @property
    def simulation_inputs(self):
        """What `scons run` and `scons debug` hand a simulator: the ELF, its hex, and an
        external model's hex and binary when it has one."""
        return [self.elf, self.hex] + self.model_image

    @property
    def external_model(self):
        """[model hex, model binary] paths of a firmware built with
        model_placement=external (the `model` argument of a board's run_command and
        debug_command), else None."""
        return [str(node) for node in self.model_image] if self.model_image else None

    def with_model(self, model, model_image=()):
        return replace(self, model=model, model_image=list(model_image))


@dataclass
class KernelBuild:
    """The compiled kernels of a kernel_plan.Plan, per library, in link order."""
    objects: List[List[Any]]           # each kernel set's operator objects
    helpers: List[Any]                 # util/pattern objects every library shares
    dependencies: Dict[str, List[Any]]  # libraries the kernels call (CMSIS-NN), by name
    registrations: List[Any]           # libraries linked whole (static initializers)
    registry: List[Any]                # operator_registry.o, sized for the selection


@dataclass
class ExecuTorchRuntime:
    """The ExecuTorch runtime of a variant: executorch_core (without the operator
    registry, which each model's selection sizes) and the prim ops (registered by static
    initializers: linked whole when a model uses them)."""
    core: List[Any]
    prim_ops: List[Any]


@dataclass
class BundledProgramRuntime:
    """devtools/bundled_program: its library, and the headers generated from its schema
    (what the runner compiled for a .bpte includes)."""
    library: List[Any]
    schema: List[Any]
