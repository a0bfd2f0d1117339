"""A firmware's footprint for people: tables, growth between two builds, a treemap.

Takes the :class:`etcorev.image.footprint.Footprint` of a firmware (``footprint.inspect``)
and writes it out: :func:`format_report`, the tables by library and the largest
objects and symbols (names demangled with :func:`demangler`); :func:`growth` and
:func:`format_growth`, per library what one build has more than another; and
:func:`render_treemap` / :func:`write_treemap`, a self-contained HTML page with a
squarified treemap (SVG) by library and object.  :func:`main` is the command line
(``python -m etcorev.image.footprint ELF [--against OTHER] [--html OUT]``).
"""

from __future__ import annotations

import html
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from typing import Dict, Iterable, List, Sequence, Tuple

from etcorev.image import MODEL_SECTION
from etcorev.image.footprint import (
    KINDS, LINKER, LTO_UNATTRIBUTED, OTHER, PADDING, Footprint, FootprintError, inspect)
from etcorev.image.ldmap import split_member

__all__ = [
    "demangler",
    "format_growth",
    "format_report",
    "growth",
    "main",
    "render_treemap",
    "squarify",
    "write_treemap",
]


# --------------------------------------------------------------------------
# Names for people
# --------------------------------------------------------------------------


def demangler(prefix: str = ""):
    """A function demangling a list of names with the toolchain's c++filt (one
    process for the whole list); names stay as they are without one."""
    tool = None
    for candidate in (prefix + "c++filt" if prefix else None, "c++filt"):
        if candidate and shutil.which(candidate):
            tool = shutil.which(candidate)
            break

    def demangle(names: Sequence[str]) -> Dict[str, str]:
        names = list(dict.fromkeys(names))
        if not tool or not names:
            return {n: n for n in names}
        proc = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True,
                              text=True)
        out = proc.stdout.split("\n")
        if proc.returncode or len(out) < len(names):
            return {n: n for n in names}
        return dict(zip(names, out))

    return demangle


# --------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------

# Rows in this order when sizes tie; the bookkeeping rows go last.
_LAST = (LTO_UNATTRIBUTED, OTHER, PADDING, LINKER)


def _total(row) -> int:
    return sum(row[k] for k in KINDS)


def _rows_sorted(table: Dict) -> List:
    def key(item):
        name, row = item
        group = name[0] if isinstance(name, tuple) else name
        return (group in _LAST, _LAST.index(group) if group in _LAST else 0, -_total(row),
                str(name))
    return sorted(table.items(), key=key)


def _table(header: Sequence[str], rows: Sequence[Sequence], align: str) -> List[str]:
    """Plain-text columns: align has one letter per column, l(eft) or r(ight)."""
    widths = [max(len(str(r[i])) for r in [header] + list(rows)) for i in range(len(header))]
    lines = []
    for r in [header] + list(rows):
        cells = [str(cell).rjust(widths[i]) if align[i] == "r" else str(cell).ljust(widths[i])
                 for i, cell in enumerate(r)]
        lines.append("  ".join(cells).rstrip())
    return lines


def _truncate(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def format_report(fp: Footprint, top: int = 10, demangle=None) -> str:
    """The tables: by library, the ``top`` largest objects and symbols."""
    demangle = demangle or (lambda names: {n: n for n in names})
    t = fp.totals()
    lines = ["%s: text %d (code %d + read-only data %d), data %d, bss %d bytes "
             "(as `size` counts them)%s"
             % (os.path.basename(fp.elf), fp.size["text"], t["text"], t["rodata"],
                fp.size["data"], fp.size["bss"], "; LTO" if fp.lto else ""), ""]

    header = ("library",) + KINDS + ("total",)
    rows = [(name,) + tuple(row[k] for k in KINDS) + (_total(row),)
            for name, row in _rows_sorted(fp.by_group())]
    rows.append(("total",) + tuple(t[k] for k in KINDS) + (_total(t),))
    lines += _table(header, rows, "lrrrrr")

    lines += ["", "Top %d objects:" % top]
    objects = [(key, row) for key, row in _rows_sorted(fp.by_object())
               if key[0] not in (PADDING, LINKER, LTO_UNATTRIBUTED)]
    objects.sort(key=lambda item: -_total(item[1]))
    rows = [(_truncate(obj, 56), group) + tuple(row[k] for k in KINDS) + (_total(row),)
            for (group, obj), row in objects[:top]]
    lines += _table(("object", "library") + KINDS + ("total",), rows, "llrrrrr")

    lines += ["", "Top %d symbols:" % top]
    symbols = sorted(fp.symbols, key=lambda s: (-s.size, s.name))[:top]
    names = demangle([n for s in symbols for n in (s.name,) + s.aliases])
    rows = []
    for s in symbols:
        shown = " = ".join(dict.fromkeys(names.get(n, n) for n in (s.name,) + s.aliases))
        rows.append((s.size, s.kind, s.group, _truncate(shown, 72)))
    lines += _table(("bytes", "kind", "library", "symbol"), rows, "rlll")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Growth between two builds
# --------------------------------------------------------------------------


def growth(new: Footprint, old: Footprint) -> Dict[str, Dict[str, int]]:
    """Per library group and kind, new minus old bytes (groups in either)."""
    a, b = new.by_group(), old.by_group()
    out = {}
    for group in set(a) | set(b):
        zero = dict.fromkeys(KINDS, 0)
        out[group] = {k: a.get(group, zero)[k] - b.get(group, zero)[k] for k in KINDS}
    return out


def format_growth(new: Footprint, old: Footprint) -> str:
    deltas = growth(new, old)
    shown = os.path.abspath(old.elf)
    if shown.startswith(os.getcwd() + os.sep):
        shown = os.path.relpath(shown)
    lines = ["Growth against %s (bytes, this build minus that one):" % shown]
    header = ("library",) + KINDS + ("total",)

    def signed(n):
        return "%+d" % n if n else "0"

    rows = []
    for name, row in _rows_sorted(deltas):
        if any(row.values()):
            rows.append((name,) + tuple(signed(row[k]) for k in KINDS)
                        + (signed(_total(row)),))
    tn, to = new.totals(), old.totals()
    total = {k: tn[k] - to[k] for k in KINDS}
    rows.append(("total",) + tuple(signed(total[k]) for k in KINDS) + (signed(_total(total)),))
    lines += _table(header, rows, "lrrrrr")
    lines.append("size: text %s, data %s, bss %s"
                 % tuple(signed(new.size[c] - old.size[c]) for c in ("text", "data", "bss")))
    return "\n".join(lines)


# --------------------------------------------------------------------------
# The picture: a squarified treemap, self-contained HTML with inline SVG
# --------------------------------------------------------------------------


def squarify(values: Sequence[float], x: float, y: float, w: float, h: float):
    """Rectangles (x, y, w, h) for positive ``values`` sorted largest first, filling
    the box with aspect ratios near 1 (Bruls, Huizing, van Wijk: squarified treemaps)."""
    total = float(sum(values))
    if total <= 0 or w <= 0 or h <= 0:
        return [(x, y, 0.0, 0.0) for _ in values]
    areas = [v * w * h / total for v in values]
    rects: List[Tuple[float, float, float, float]] = []

    def worst(row, side):
        s = sum(row)
        return max(max(side * side * a / (s * s), (s * s) / (side * side * a)) for a in row)

    def lay(row, x, y, w, h):
        s = sum(row)
        if w >= h:                                  # a column at the left
            width = s / h if h else 0
            yy = y
            for a in row:
                hh = a / width if width else 0
                rects.append((x, yy, width, hh))
                yy += hh
            return x + width, y, w - width, h
        height = s / w if w else 0                  # a row at the top
        xx = x
        for a in row:
            ww = a / height if height else 0
            rects.append((xx, y, ww, height))
            xx += ww
        return x, y + height, w, h - height

    row: List[float] = []
    for a in areas:
        side = min(w, h)
        if not row or worst(row + [a], side) <= worst(row, side):
            row.append(a)
            continue
        x, y, w, h = lay(row, x, y, w, h)
        row = [a]
    if row:
        lay(row, x, y, w, h)
    return rects


_PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
            "#ff9da7", "#9c755f", "#86bcb6", "#8cd17d", "#d4a6c8", "#a0cbe8", "#ffbe7d"]
_GREY = {PADDING: "#c8c8c8", LINKER: "#bab0ac", LTO_UNATTRIBUTED: "#dddddd", OTHER: "#cfcfcf"}


def _colours(groups: Iterable[str]) -> Dict[str, str]:
    out, i = {}, 0
    for g in groups:
        if g in _GREY:
            out[g] = _GREY[g]
        else:
            out[g] = _PALETTE[i % len(_PALETTE)]
            i += 1
    return out


def _fmt(n: int) -> str:
    return "{:,}".format(n)


def _label(obj: str) -> str:
    """An object's name inside its library's rectangle: the member of an archive."""
    archive, member = split_member(obj)
    return member if archive else obj


def _svg_treemap(fp: Footprint, kinds: Sequence[str], colours, width, height) -> str:
    objects: Dict[str, Dict[str, int]] = defaultdict(dict)
    rows = fp.by_object()
    for (group, obj), row in rows.items():
        size = sum(row[k] for k in kinds)
        if size > 0:
            objects[group][obj] = size
    groups = sorted(objects, key=lambda g: -sum(objects[g].values()))
    sizes = [sum(objects[g].values()) for g in groups]
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif">' % (width, height, width, height)]
    for group, size, (x, y, w, h) in zip(groups, sizes, squarify(sizes, 0, 0, width, height)):
        out.append('<g><title>%s: %s bytes</title>' % (html.escape(group), _fmt(size)))
        out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" '
                   'stroke="#fff" stroke-width="2"/>' % (x, y, w, h, colours[group]))
        head = 16 if h > 40 and w > 60 else 0
        items = sorted(objects[group].items(), key=lambda item: -item[1])
        inner = squarify([v for _, v in items], x + 2, y + head + 1, max(w - 4, 0),
                         max(h - head - 3, 0))
        for (obj, value), (ox, oy, ow, oh) in zip(items, inner):
            row = rows[(group, obj)]
            detail = ", ".join("%s %s" % (k, _fmt(row[k])) for k in kinds if row[k])
            out.append('<g><title>%s\n%s: %s bytes (%s)</title><rect x="%.1f" y="%.1f" '
                       'width="%.1f" height="%.1f" fill="%s" fill-opacity="0.55" '
                       'stroke="#fff" stroke-width="0.5"/>'
                       % (html.escape(obj), html.escape(group), _fmt(value), detail,
                          ox, oy, ow, oh, colours[group]))
            if ow > 50 and oh > 24:
                label = _truncate(_label(obj), max(int(ow / 6.2), 4))
                out.append('<text x="%.1f" y="%.1f" font-size="10">%s</text>'
                           '<text x="%.1f" y="%.1f" font-size="9" fill="#333">%s</text>'
                           % (ox + 3, oy + 11, html.escape(label), ox + 3, oy + 21,
                              _fmt(value)))
            out.append('</g>')
        if head:
            label = _truncate("%s  %s" % (group, _fmt(size)), max(int(w / 7), 4))
            out.append('<text x="%.1f" y="%.1f" font-size="12" font-weight="bold">%s</text>'
                       % (x + 4, y + 13, html.escape(label)))
        out.append('</g>')
    out.append('</svg>')
    return "\n".join(out)


def render_treemap(fp: Footprint, width: int = 1100, height: int = 560) -> str:
    """Self-contained HTML (inline SVG and CSS, no scripts): a treemap of code and
    read-only data and one of data and bss, by library and object, and the table by
    library."""
    t = fp.totals()
    groups = [g for g, _ in _rows_sorted(fp.by_group())]
    colours = _colours(groups)
    name = os.path.basename(fp.elf)
    title = ("%s: text %s bytes (code %s + read-only data %s), data %s, bss %s"
             % (name, _fmt(fp.size["text"]), _fmt(t["text"]), _fmt(t["rodata"]),
                _fmt(fp.size["data"]), _fmt(fp.size["bss"])))
    rows = []
    for group, row in _rows_sorted(fp.by_group()):
        rows.append("<tr><td><span class=sw style='background:%s'></span>%s</td>%s"
                    "<td>%s</td></tr>"
                    % (colours[group], html.escape(group),
                       "".join("<td>%s</td>" % _fmt(row[k]) for k in KINDS),
                       _fmt(_total(row))))
    rows.append("<tr class=total><td>total</td>%s<td>%s</td></tr>"
                % ("".join("<td>%s</td>" % _fmt(t[k]) for k in KINDS), _fmt(_total(t))))
    parts = [
        "<!DOCTYPE html>",
        "<html lang=en><head><meta charset=utf-8><title>%s</title>" % html.escape(title),
        "<style>body{font-family:sans-serif;margin:16px;color:#222}"
        "h1{font-size:18px}h2{font-size:15px;margin:18px 0 6px}"
        "table{border-collapse:collapse;font-size:13px}"
        "td,th{padding:2px 10px;text-align:right}td:first-child,th:first-child{text-align:left}"
        "tr.total td{font-weight:bold;border-top:1px solid #888}"
        ".sw{display:inline-block;width:10px;height:10px;margin-right:6px}"
        "svg text{pointer-events:none}</style></head><body>",
        "<h1>%s</h1>" % html.escape(title),
        "<p>Bytes as <code>size</code> counts them, by library and object file%s. "
        "Hover over a rectangle for its name and size.</p>"
        % ("; LTO: code the LTRANS objects hold is charged to the LTO object that "
           "defined its symbol" if fp.lto else ""),
        "<h2>Code and read-only data (text + rodata: %s bytes)</h2>"
        % _fmt(t["text"] + t["rodata"]),
        _svg_treemap(fp, ("text", "rodata"), colours, width, height),
        "<h2>Data and bss (data + bss: %s bytes)</h2>" % _fmt(t["data"] + t["bss"]),
        _svg_treemap(fp, ("data", "bss"), colours, width, height * 2 // 3),
        "<h2>By library</h2>",
        "<table><tr><th>library</th>%s<th>total</th></tr>"
        % "".join("<th>%s</th>" % k for k in KINDS),
        "\n".join(rows),
        "</table></body></html>",
        "",
    ]
    return "\n".join(parts)


def write_treemap(fp: Footprint, path) -> None:
    with open(os.fspath(path), "w", encoding="utf-8", newline="\n") as f:
        f.write(render_treemap(fp))


# --------------------------------------------------------------------------
# Command line: PYTHONPATH=site_scons python -m etcorev.image.footprint_report ELF
# [--against OTHER] [--html OUT]
# --------------------------------------------------------------------------


def main(argv=None) -> int:
    import argparse
    parser = argparse.ArgumentParser(description="Where the bytes of a firmware go.")
    parser.add_argument("elf")
    parser.add_argument("--map", help="the link's map file (default: beside the ELF)")
    parser.add_argument("--against", metavar="OTHER_ELF",
                        help="print the growth per library from this build (its .map beside it)")
    parser.add_argument("--html", help="write the treemap picture here")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--model-section", default=MODEL_SECTION,
                        help="the input section the model is in (default: %(default)s)")
    parser.add_argument("--toolchain", default="riscv64-unknown-elf-",
                        help="prefix of the c++filt used to demangle")
    args = parser.parse_args(argv)
    try:
        fp = inspect(args.elf, args.map, args.model_section)
        print(format_report(fp, args.top, demangler(args.toolchain)))
        if args.against:
            print()
            print(format_growth(fp, inspect(args.against, model_section=args.model_section)))
        if args.html:
            write_treemap(fp, args.html)
    except FootprintError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
