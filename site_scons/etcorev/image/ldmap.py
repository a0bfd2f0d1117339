"""The GNU ld map file (``-Map``) of a link: what :mod:`etcorev.image.footprint` reads of it.

:func:`parse_map` gives the link order of the input files (archive members as
``lib.a(member.o)``, in the order the link pulled them) and, per output section, its
input sections with address, size and file, the ``*fill*`` between them, and the room
the linker script reserves with ``. += N``.  :func:`split_member` takes an input
file's name as the map gives it apart.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from typing import Dict, List, NamedTuple, Optional, Tuple

__all__ = ["MapEntry", "MapFile", "MapFileError", "parse_map", "split_member"]


class MapFileError(Exception):
    """The map file cannot be read or is not a GNU ld map (one-line message)."""


class MapEntry(NamedTuple):
    name: str             # input section name, "*fill*", or what a reservation is
    address: int
    size: int
    path: str             # input file as the map gives it ("" for fill)
    reserved: str = ""    # for fill after `. = (. + X)`: X


class MapFile(NamedTuple):
    link_order: List[str]                 # input files, archive members as "lib.a(m.o)"
    sections: Dict[str, List[MapEntry]]   # output section -> its input sections and fill


_HEX_PAIR = re.compile(r"^\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)(?:\s+(.*?))?\s*$")
_ASSIGN_RESERVE = re.compile(r"^\s+0x[0-9a-fA-F]+\s+\. = \(\. \+ (.+)\)\s*$")
_ASSIGN = re.compile(r"^\s+0x[0-9a-fA-F]+\s+\S.*=")
_MEMBER = re.compile(r"^(\S.*?\.a)\((.+?)\)(?:\s{2,}.*)?$")
_OUTPUT_HEAD = re.compile(r"^(\S+)(?:\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+))?\s*$")
_INPUT_HEAD = re.compile(r"^ (\S+)(?:\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)(?:\s+(.*?))?)?\s*$")


def parse_map(path) -> MapFile:
    """The parts of a GNU ld map this needs: link order and each output section's
    input sections, fill and reserved room."""
    try:
        with open(os.fspath(path), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise MapFileError("cannot read the map file %s: %s" % (path, e.strerror)) from None
    if not any(line.startswith("Linker script and memory map") for line in lines):
        raise MapFileError("%s is not a GNU ld map file (no 'Linker script and memory "
                           "map' part)" % path)

    members: Dict[str, List[str]] = defaultdict(list)   # archive -> members, pull order
    loads: List[str] = []
    sections: Dict[str, List[MapEntry]] = {}
    current: Optional[List[MapEntry]] = None
    part = "start"
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("Archive member included"):
            part = "members"
            continue
        if line.startswith(("Discarded input sections", "Memory Configuration",
                            "Allocating common symbols")):
            part = "skip"
            continue
        if line.startswith("Linker script and memory map"):
            part = "memory map"
            continue
        if part == "members":
            match = _MEMBER.match(line)
            if match and match.group(2) not in members[match.group(1)]:
                members[match.group(1)].append(match.group(2))
            continue
        if part != "memory map" or not line.strip():
            continue
        if line.startswith("LOAD "):
            loads.append(line[5:].strip())
            continue
        if line.startswith(("OUTPUT(", "START GROUP", "END GROUP", "/DISCARD/")):
            current = None
            continue
        if not line[0].isspace():                          # an output section
            match = _OUTPUT_HEAD.match(line)
            if not match:
                current = None
                continue
            current = sections.setdefault(match.group(1), [])
            continue
        if current is None:
            continue
        reserve = _ASSIGN_RESERVE.match(line)
        if reserve:
            # `. += X` prints as this assignment, then a *fill* line with the room.
            if i < len(lines) and lines[i].startswith(" *fill*"):
                fill = _HEX_PAIR.match(lines[i][len(" *fill*"):])
                if fill:
                    current.append(MapEntry("*fill*", int(fill.group(1), 16),
                                            int(fill.group(2), 16), "", reserve.group(1)))
                    i += 1
            continue
        if line.startswith(" *fill*"):
            fill = _HEX_PAIR.match(line[len(" *fill*"):])
            if fill:
                current.append(MapEntry("*fill*", int(fill.group(1), 16),
                                        int(fill.group(2), 16), ""))
            continue
        if line.startswith(" *") or _ASSIGN.match(line):   # patterns, assignments
            continue
        match = _INPUT_HEAD.match(line)
        if not match:
            continue                                       # symbol lines, notes
        name, address, size, path_ = match.groups()
        if address is None:                                # long name: numbers below
            if i >= len(lines):
                break
            nxt = _HEX_PAIR.match(lines[i])
            if not nxt:
                continue
            i += 1
            address, size, path_ = nxt.groups()
        if path_ is None or not path_.strip():
            path_ = ""
        current.append(MapEntry(name, int(address, 16), int(size, 16), path_.strip()))

    link_order: List[str] = []
    for load in loads:
        if load.endswith(".a"):
            for member in members.get(load, ()):
                entry = "%s(%s)" % (load, member)
                if entry not in link_order:
                    link_order.append(entry)
        elif load not in link_order:
            link_order.append(load)
    return MapFile(link_order, sections)


def split_member(path: str) -> Tuple[str, str]:
    """(archive, member) of an input file named ``lib.a(member.o)``, else ("", path)."""
    match = re.match(r"^(.*\.a)\((.+)\)$", path)
    return (match.group(1), match.group(2)) if match else ("", path)
