"""profile=1: the runner's cycle-tracer records, read from its output, as a table.

The firmware prints one line per record (examples/corev/executor_runner/cycle_tracer.h):

    Profile op aten::convolution.out 1 412687        kind, name, calls, cycles
    Profile kernel aten::convolution.out 1 411317
    Profile phase Method::execute 1 636320

`op` records are the runtime's kernel-call instructions of one operator (named as the
program names it), `kernel` the kernel alone inside them, `delegate` a delegate call,
`instr` the other instructions (MOVE_CALL, FREE_CALL, JF_CALL), `phase` the load and
execute phases. The table gives each operator's share of Method::execute; what the
operators leave of it (the runtime's loop between instructions, the tracer's own calls)
has a row of its own, so the shares add up to 100 %.
"""

import re
from dataclasses import dataclass
from typing import Dict, List, Optional

_LINE = re.compile(r"^Profile (op|kernel|delegate|instr|phase|event) (\S+) (\d+) (\d+)\s*$", re.M)
BAR_WIDTH = 30


@dataclass(frozen=True)
class Record:
    kind: str
    name: str
    calls: int
    cycles: int


def parse(text: str) -> List[Record]:
    """The records the firmware printed, in its order."""
    return [Record(m.group(1), m.group(2), int(m.group(3)), int(m.group(4)))
            for m in _LINE.finditer(text)]


def _phase(records, name) -> Optional[Record]:
    return next((r for r in records if r.kind == "phase" and r.name == name), None)


def execute_total(records: List[Record]) -> Optional[int]:
    """Method::execute's cycles (all runs), or None when the firmware printed none."""
    record = _phase(records, "Method::execute")
    return record.cycles if record else None


def _bar(fraction: float) -> str:
    filled = max(0, min(BAR_WIDTH, round(fraction * BAR_WIDTH)))
    return "#" * filled + "." * (BAR_WIDTH - filled)


def table(records: List[Record], unit: str = "cycles", title: str = "") -> str:
    """The operator table, then the load phases. unit names what the counter counts."""
    if not records:
        return "Profile: the firmware printed no profile records (built without $PROFILE=1?)"
    execute = _phase(records, "Method::execute")
    total = execute.cycles if execute else sum(
        r.cycles for r in records if r.kind in ("op", "delegate", "instr"))
    runs = execute.calls if execute else 1
    kernels: Dict[str, int] = {r.name: r.cycles for r in records if r.kind == "kernel"}
    rows = sorted((r for r in records if r.kind in ("op", "delegate", "instr")),
                  key=lambda r: -r.cycles)
    body = []
    for r in rows:
        label = r.name if r.kind == "op" else "%s (%s)" % (r.name, r.kind)
        kernel = kernels.get(r.name) if r.kind == "op" else None
        body.append((label, str(r.calls), str(r.cycles),
                     "" if kernel is None else str(kernel), r.cycles))
    outside = total - sum(r.cycles for r in rows)
    body.append(("(runtime between instructions)", "", str(outside), "", outside))

    header = ("operator", "calls", unit, "kernel", "share")
    widths = [max(len(header[i]), *(len(row[i]) for row in body)) for i in range(4)]
    lines = ["%sMethod::execute: %d %s%s" % (title + ": " if title else "", total, unit,
                                              " in %d runs" % runs if runs > 1 else "")]
    lines.append("  ".join([header[0].ljust(widths[0])]
                           + [header[i].rjust(widths[i]) for i in (1, 2, 3)])
                 + "   share")
    for label, calls, cycles, kernel, value in body:
        share = value / total if total else 0.0
        lines.append("  ".join([label.ljust(widths[0]), calls.rjust(widths[1]),
                                cycles.rjust(widths[2]), kernel.rjust(widths[3])])
                     + "  %5.1f%%  %s" % (100.0 * share, _bar(share)))
    lines.append("  ".join(["total".ljust(widths[0]), "".rjust(widths[1]),
                            str(total).rjust(widths[2]), "".rjust(widths[3])]) + "  100.0%")
    phases = [r for r in records if r.kind == "phase" and r.name != "Method::execute"]
    if phases:
        lines.append("Load: " + ", ".join("%s %d" % (r.name, r.cycles) for r in phases)
                     + " %s" % unit)
    events = [r for r in records if r.kind == "event"]
    if events:
        lines.append("Delegate events: " + ", ".join(
            "%s %d calls %d" % (r.name, r.calls, r.cycles) for r in events))
    if kernels:
        lines.append("(kernel: the kernel alone, without the generated code that unboxes "
                     "its arguments)")
    return "\n".join(lines)
