"""How much of each memory region a linked firmware ELF takes, the PlatformIO-style size
report, and the check that it fits: memory_usage(), format_size_report(), check_fits().
They work on the allocated sections (etcorev.image.elfout.load_sections) and a list of memory
regions {"name": ..., "origin": int, "length": int}."""

from __future__ import annotations

import os
from typing import Iterable, List, Optional, Sequence

from etcorev.image.elfout import load_sections

__all__ = ["SizeError", "check_fits", "format_size_report", "memory_usage"]



class SizeError(Exception):
    """The image does not fit its memory regions; the message says why."""

    def __init__(self, message: str, overflows: Optional[list] = None):
        super().__init__(message)
        self.overflows = overflows or []


def _check_regions(regions: Iterable[dict]) -> List[dict]:
    out = []
    for i, r in enumerate(regions):
        try:
            name, origin, length = r["name"], int(r["origin"]), int(r["length"])
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(
                "memory region #%d must be a dict with name, origin and length "
                "(got %r): %s" % (i, r, e)
            ) from None
        if origin < 0 or length < 0:
            raise ValueError("memory region %r has a negative origin or length" % name)
        out.append({"name": str(name), "origin": origin, "length": length})
    return out


def memory_usage(elf_path, regions: Sequence[dict]) -> dict:
    """How much of each memory region the ELF's allocated sections take.

    Every ``SHF_ALLOC`` section of non-zero size (NOBITS such as ``.bss``
    included) counts in the region that holds its start address (VMA).  A
    section with contents whose LMA differs from its VMA (``.data`` copied
    from flash at boot) also counts in the region that holds its LMA.

    Returns a dict::

        {"elf": path,
         "regions": [{"name", "origin", "length", "used", "end", "free",
                      "percent", "overflow", "sections": [(name, size), ...]}],
         "totals": {"text": n, "data": n, "bss": n},
         "outside": [{"name", "address", "size", "lma": bool}, ...]}

    ``used`` is the sum of the section sizes in the region; ``end`` is the
    highest address one of them reaches (alignment gaps included), and
    ``overflow`` how many bytes past the region either of them goes (0 when
    it fits).  ``totals`` follows Berkeley ``size``: text is allocated code or
    read-only data, data is writable data with contents, bss is writable
    NOBITS.  ``outside`` lists sections whose address is in no region.
    """
    regs = _check_regions(regions)
    usage_regions = [
        dict(r, used=0, end=r["origin"], sections=[]) for r in regs
    ]

    def region_of(addr: int):
        for r in usage_regions:
            if r["origin"] <= addr < r["origin"] + r["length"]:
                return r
        return None

    totals = {"text": 0, "data": 0, "bss": 0}
    outside = []
    for s in load_sections(elf_path):
        if not s.alloc or s.size == 0:
            continue
        totals[s.kind] += s.size
        places = [(s.vma, False)]
        if not s.nobits and s.lma != s.vma:
            places.append((s.lma, True))
        seen = []
        for addr, is_lma in places:
            r = region_of(addr)
            if r is None:
                outside.append(
                    {"name": s.name, "address": addr, "size": s.size, "lma": is_lma}
                )
                continue
            if any(r is x for x in seen):
                continue
            seen.append(r)
            r["used"] += s.size
            r["end"] = max(r["end"], addr + s.size)
            r["sections"].append((s.name, s.size))
    for r in usage_regions:
        extent = r["end"] - r["origin"]
        r["overflow"] = max(0, r["used"] - r["length"], extent - r["length"])
        r["free"] = r["length"] - r["used"]
        r["percent"] = 100.0 * r["used"] / r["length"] if r["length"] else (
            0.0 if r["used"] == 0 else float("inf")
        )
        r["sections"].sort(key=lambda item: (-item[1], item[0]))
    return {
        "elf": os.fspath(elf_path),
        "regions": usage_regions,
        "totals": totals,
        "outside": outside,
    }


def _label(name: str) -> str:
    return name.upper()


def format_size_report(usage: dict) -> str:
    """A PlatformIO-style report, one line per region, then text/data/bss::

        RAM:   [==        ]  20.1% (used 6588 bytes from 32768 bytes)
        text/data/bss: 5884 / 84 / 620 bytes

    followed by one line for each section outside every region.  No trailing
    newline.
    """
    regions = usage["regions"]
    width = max([7] + [len(_label(r["name"])) + 2 for r in regions])
    lines = []
    for r in regions:
        frac = r["used"] / r["length"] if r["length"] else (0.0 if not r["used"] else 1.0)
        blocks = min(int(round(10 * frac)), 10)
        line = "{:<{w}}[{:<10}] {: 6.1%} (used {:d} bytes from {:d} bytes)".format(
            _label(r["name"]) + ":", "=" * blocks, frac, r["used"], r["length"], w=width
        )
        if r["overflow"]:
            line += " OVERFLOW by %d bytes" % r["overflow"]
        lines.append(line)
    t = usage["totals"]
    lines.append(
        "text/data/bss: %d / %d / %d bytes (%d total)"
        % (t["text"], t["data"], t["bss"], t["text"] + t["data"] + t["bss"])
    )
    for o in usage.get("outside", ()):
        lines.append(
            "outside every region: %s at %s 0x%08x (%d bytes)"
            % (o["name"], "LMA" if o["lma"] else "address", o["address"], o["size"])
        )
    return "\n".join(lines)


def check_fits(usage: dict, largest: int = 3) -> None:
    """Raise :class:`SizeError` if any region of ``usage`` overflows.

    The message is one paragraph: for each overflowing region its name, the
    bytes used and available, by how much it overflows and its ``largest``
    biggest sections.
    """
    bad = [r for r in usage["regions"] if r["overflow"]]
    if not bad:
        return
    parts = []
    for r in bad:
        limit = r["origin"] + r["length"]
        part = "region %s overflows by %d bytes (used %d bytes, %d available" % (
            r["name"],
            r["overflow"],
            r["used"],
            r["length"],
        )
        if r["end"] - limit > r["used"] - r["length"]:
            part += ", and its sections reach 0x%08x, past its end at 0x%08x" % (
                r["end"],
                limit,
            )
        part += ")"
        biggest = ", ".join("%s %d" % item for item in r["sections"][:largest])
        if biggest:
            part += "; largest sections: " + biggest + " bytes"
        parts.append(part)
    message = "%s does not fit in memory: %s." % (
        os.path.basename(usage.get("elf", "image")) or "image",
        "; ".join(parts),
    )
    raise SizeError(message, bad)
