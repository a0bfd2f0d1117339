#!/usr/bin/env python3
"""Benchmark: how long the SCons build takes, clean and incremental, and what SCons
itself costs on top of the compiler.

For add.pte and cnn.pte (the repository's examples/models; --models picks others), each
in its own temporary build_dir, median of N runs of each step. The builds use copies of
the .pte files in a temporary directory (without their JSON files: the runner fills the
inputs with ones), so that the new-weights step leaves the repository's models alone:

* clean build: a fresh build_dir every run (the per-user libstdc++ and source-list
  caches stay, as they do for a user);
* no-op rebuild: the same command again;
* new weights: the model file replaced by one with the same operators and other
  weights (weight bytes after the extended header's segment_base_offset changed).
  add.pte has no weights, so its row uses mlp.pte (from examples/models too), built
  into the same build_dir;
* touch: os.utime() on runtime/executor/method.cpp (timestamp only: the
  content-timestamp decider re-hashes it and rebuilds nothing);
* method.cpp edited: a comment line appended to it (a real content change).

The ExecuTorch tree configured for the build (executorch= in the user settings, or
$EXECUTORCH_ROOT) is never modified: every build here uses a copy of it in a
temporary directory named `executorch` (hard links, with runtime/executor/method.cpp
a real copy, so that touching or editing it leaves the original alone).

SCons overhead: every compiler, archiver and linker command line that the clean
build printed (verbose=1) is replayed directly. Per run, the objects, archives and
ELF (with its map) are deleted and rebuilt by `scons -jJ` (timed), deleted again and
rebuilt by the replay (timed): J workers, in dependency order (compiles first, an
archive after its members, the link last), `sh -c` per command as SCons spawns them.
Generated sources (codegen, schema headers, linker script) stay in place for both.
overhead = scons wall / replay wall - 1.

Floor: the clean build beside the replay of its compiler, archiver and linker commands
(what a build cannot do without), and the seconds of ExecuTorch's codegen in it (from
scons --debug=time).

Targets: no-op rebuild at most 5 % of a clean build; SCons overhead at most 10 %; a clean
build within 20 % of its floor. Exit status 0 if all are met, 2 if one is missed, 1 on
errors.

    .venv/bin/python benchmarks/build_speed.py [--runs 3] [--jobs 2] [--board qemu]
                                               [--models add.pte,cnn.pte]
"""

import argparse
import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODELS = REPO / "examples" / "models"              # the repository's example models
sys.path.insert(0, str(REPO / "site_scons"))

from etcorev.toolchain import riscv  # noqa: E402
from machine import executorch_root, machine_rows, median, print_rows  # noqa: E402

TOUCHED = "runtime/executor/method.cpp"
WEIGHTS_STANDIN = {"add.pte": "mlp.pte"}       # models without weights -> a model with


# ---------------------------------------------------------------- the ExecuTorch tree

def et_version(root):
    from etcorev.executorch import et_tree
    try:
        return et_tree.check_tree(root) or "unknown version"
    except Exception as error:  # noqa: BLE001 - shown, not handled
        return "? (%s)" % error


def link_copy(src, dst):
    """dst: src's tree with every file hard-linked (copied where linking fails)."""
    def link(s, d):
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)
    shutil.copytree(src, dst, symlinks=True, copy_function=link)


def private_copy(path):
    """Replace a hard link by a file of its own, so that changing it changes only it."""
    tmp = path.with_name(path.name + ".bench-tmp")
    shutil.copy2(path, tmp)
    os.replace(tmp, path)
    if path.stat().st_nlink != 1:
        raise RuntimeError("%s is still shared with the original tree" % path)


def forget_source_cache(tree):
    """Remove the per-user source-list cache entry the build made for the tree copy
    (etcorev.executorch.et_index keys it by the tree's real path; only ours is removed)."""
    from etcorev.executorch import et_index
    real = os.path.realpath(str(tree))
    cfile = et_index._cache_file(real)
    if cfile is None:
        return
    try:
        with open(cfile) as f:
            if json.load(f).get("real_root") == real:
                cfile.unlink()
    except (OSError, ValueError):
        pass


# ---------------------------------------------------------------- models

def extended_header(data):
    """(segment_base_offset, end) of a .pte's segment data, or None without one."""
    if data[8:12] != b"eh00":
        return None
    base = int.from_bytes(data[24:32], "little")
    return (base, len(data)) if 0 < base < len(data) else None


def with_new_weights(original, run):
    """The model with other weights: the low byte of every float32 in its segment data
    changed (values move by a few ulp; operators and tensor layout stay)."""
    base, end = extended_header(original)
    data = bytearray(original)
    for i in range(base, end - 3, 4):
        data[i] ^= (run % 255) + 1
    return bytes(data)


# ---------------------------------------------------------------- running scons

class BuildFailed(Exception):
    pass


def children_cpu():
    """CPU seconds (user + system) of this process's finished children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def next_second():
    """Sleep into the next second. SCons compares whole-second mtimes (ST_MTIME): a
    file changed in the same second as the previous build looked at it can go unseen
    (a touch, a build and an edit within one second leave the edit unbuilt)."""
    time.sleep(1.02 - time.time() % 1.0)


TOOL_RE = re.compile(r"-(gcc|g\+\+|gcc-ar|gcc-ranlib|ar|ranlib)$")


def commands_in(output):
    """The compiler, archiver and linker command lines a verbose build printed."""
    cmds = []
    for line in output.splitlines():
        if not line or line[0].isspace():
            continue
        first = line.split(None, 1)[0]
        match = TOOL_RE.search(os.path.basename(first))
        if match:
            cmds.append(line)
    return cmds


class Scons:
    def __init__(self, tree, board, jobs):
        self.base = [sys.executable, "-m", "SCons", "-Q", "-j%d" % jobs, "verbose=1",
                     "board=%s" % board, "executorch=%s" % tree]

    def run(self, build_dir, model, *extra):
        """(wall seconds, output); self.cpu: the run's CPU seconds, children included."""
        argv = self.base + ["build_dir=%s" % build_dir, "model=%s" % model] + list(extra)
        cpu0, t0 = children_cpu(), time.perf_counter()
        proc = subprocess.run(argv, cwd=REPO, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        wall = time.perf_counter() - t0
        self.cpu = children_cpu() - cpu0
        if proc.returncode:
            raise BuildFailed("scons failed (exit %d): %s\n%s" % (
                proc.returncode, " ".join(argv), "\n".join(proc.stdout.splitlines()[-30:])))
        return wall, proc.stdout


# ExecuTorch's codegen steps and the schema headers: what a clean build makes that is
# not compiling or linking (--debug=time names each action's first target).
CODEGEN_TARGETS = re.compile(r"^Command execution time: (.*(?:selected_operators\.yaml|"
                             r"RegisterCodegenUnboxedKernelsEverything\.cpp|"
                             r"selected_op_variants\.h|selected_max_kernel_num\.h|"
                             r"_generated\.h)): ([\d.]+) seconds$", re.M)


def codegen_seconds(output):
    return sum(float(seconds) for _, seconds in CODEGEN_TARGETS.findall(output))


# ---------------------------------------------------------------- direct replay

class Command:
    def __init__(self, line):
        self.line = line
        self.args = shlex.split(line)
        tool = TOOL_RE.search(os.path.basename(self.args[0])).group(1)
        self.outputs = []
        self.inputs = []
        if tool in ("ar", "gcc-ar"):
            self.kind = "archive"
            self.outputs = [self.args[2]]
            self.inputs = self.args[3:]
        elif tool in ("ranlib", "gcc-ranlib"):
            self.kind = "ranlib"
            self.inputs = [self.args[-1]]
        else:
            self.kind = "compile" if "-c" in self.args else "link"
            self.outputs = [self.args[self.args.index("-o") + 1]]
            for arg in self.args:
                for prefix in ("-Wl,-Map,", "-Wl,-Map="):
                    if arg.startswith(prefix):
                        self.outputs.append(arg[len(prefix):])


def plan(lines):
    """Commands with their dependencies: an archive after its members' compiles, the
    index after its archive, the link after everything else."""
    cmds = [Command(line) for line in lines]
    producer = {}
    deps = []
    for i, cmd in enumerate(cmds):
        if cmd.kind == "compile":
            d = set()
        elif cmd.kind == "archive":
            d = {producer[p] for p in cmd.inputs if p in producer}
        elif cmd.kind == "ranlib":
            d = {producer[cmd.inputs[0]]} if cmd.inputs[0] in producer else set()
        else:
            d = set(range(len(cmds))) - {i}
        deps.append(d)
        for out in cmd.outputs:
            producer[out] = i
    for i, cmd in enumerate(cmds):           # the link waits for later commands too
        if cmd.kind == "link":
            deps[i] = {j for j in range(len(cmds)) if cmds[j].kind != "link"}
    return cmds, deps


def replay(cmds, deps, jobs, env):
    def run(cmd):
        proc = subprocess.run(["sh", "-c", cmd.line], cwd=REPO, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode:
            raise BuildFailed("replayed command failed: %s\n%s" % (cmd.line, proc.stdout))

    pending = list(range(len(cmds)))
    done, running = set(), {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        while pending or running:
            while len(running) < jobs:
                ready = next((i for i in pending if deps[i] <= done), None)
                if ready is None:
                    break
                pending.remove(ready)
                running[pool.submit(run, cmds[ready])] = ready
            if not running:
                raise BuildFailed("replay: dependency cycle")
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                future.result()
                done.add(running.pop(future))


def delete_outputs(cmds):
    for cmd in cmds:
        for out in cmd.outputs:
            path = Path(out) if os.path.isabs(out) else REPO / out
            if path.exists():
                path.unlink()


# ---------------------------------------------------------------- the benchmark

def measure_model(name, args, scons, tree, models_dir, tmp):
    """All figures for one model; returns a dict."""
    model = models_dir / name
    method_cpp = tree / TOUCHED
    method_text = method_cpp.read_bytes()
    result = {"model": name}
    work = tmp / Path(name).stem

    # Clean builds, each into a fresh build_dir; the last one stays for the rest.
    clean, clean_cmds, codegen, build_dir, clean_log = [], [], [], None, ""
    for run in range(args.runs):
        if build_dir is not None:
            shutil.rmtree(build_dir)
        build_dir = work / ("clean-%d" % run)
        wall, clean_log = scons.run(build_dir, model, "--debug=time")
        clean.append(wall)
        clean_cmds.append(len(commands_in(clean_log)))
        codegen.append(codegen_seconds(clean_log))
    result["clean"] = (median(clean), median(clean_cmds))
    result["codegen"] = median(codegen)

    def timed_builds(prepare, model_path=model):
        walls, counts = [], []
        for run in range(args.runs):
            next_second()
            prepare(run)
            wall, out = scons.run(build_dir, model_path)
            walls.append(wall)
            counts.append(len(commands_in(out)))
        return median(walls), median(counts)

    result["noop"] = timed_builds(lambda run: None)

    # New weights (or a stand-in model that has weights, in the same build_dir).
    weights_name = name if extended_header(model.read_bytes()) else WEIGHTS_STANDIN.get(name)
    result["weights_model"] = weights_name
    if weights_name and (models_dir / weights_name).is_file():
        weights_model = models_dir / weights_name
        original = weights_model.read_bytes()
        if weights_name != name:
            scons.run(build_dir, weights_model)               # untimed: its first build

        def new_weights(run):
            weights_model.write_bytes(with_new_weights(original, run))
        result["weights"] = timed_builds(new_weights, weights_model)
        next_second()
        weights_model.write_bytes(original)
        scons.run(build_dir, weights_model)                   # untimed: back to the original
    else:
        result["weights"] = None

    def touch(run):
        now = time.time_ns()
        os.utime(method_cpp, ns=(now, now))
    result["touch"] = timed_builds(touch)

    def edit(run):
        method_cpp.write_bytes(method_text + b"\n// benchmarks/build_speed.py edit %d\n" % run)
    result["edit"] = timed_builds(edit)
    next_second()
    method_cpp.write_bytes(method_text)
    scons.run(build_dir, model)                                # untimed: original again

    # SCons overhead: the clean build's commands, rebuilt by scons and by a replay.
    lines = commands_in(clean_log)
    cmds, deps = plan(lines)
    env = {"PATH": os.environ["PATH"]}                         # SConstruct's ENV
    elf = next(Path(c.outputs[0]) for c in cmds if c.kind == "link")
    scons_walls, replay_walls, scons_cpu, replay_cpu = [], [], [], []
    same_cmds, same_elf = True, True
    for run in range(args.runs):
        delete_outputs(cmds)
        wall, out = scons.run(build_dir, model)
        scons_walls.append(wall)
        scons_cpu.append(scons.cpu)
        same_cmds &= sorted(commands_in(out)) == sorted(lines)
        scons_elf = elf.read_bytes()
        delete_outputs(cmds)
        cpu0, t0 = children_cpu(), time.perf_counter()
        replay(cmds, deps, args.jobs, env)
        replay_walls.append(time.perf_counter() - t0)
        replay_cpu.append(children_cpu() - cpu0)
        same_elf &= elf.read_bytes() == scons_elf
    result["overhead"] = {
        "commands": len(cmds),
        "kinds": {k: sum(c.kind == k for c in cmds) for k in ("compile", "archive", "ranlib", "link")},
        "scons": median(scons_walls), "replay": median(replay_walls),
        "scons_cpu": median(scons_cpu), "replay_cpu": median(replay_cpu),
        "same_cmds": same_cmds, "same_elf": same_elf,
    }
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs of each step, median (3)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="scons -j and replay workers (the number of CPUs)")
    ap.add_argument("--board", default="qemu", help="board= for the builds (qemu)")
    ap.add_argument("--models", default="add.pte,cnn.pte",
                    help="comma-separated .pte files of examples/models (add.pte,cnn.pte)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()

    root = executorch_root()
    if root is None:
        return 1
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    present = [n for n in names if (MODELS / n).is_file()]
    for n in names:
        if n not in present:
            print("skipping %s: not in %s" % (n, MODELS.relative_to(REPO)))
    if not present:
        return 0

    load_start = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="build-speed-"))
    tree = tmp / "et" / "executorch"
    results = []
    try:
        t0 = time.perf_counter()
        link_copy(root, tree)
        private_copy(tree / TOUCHED)
        copy_s = time.perf_counter() - t0
        models_dir = tmp / "models"
        models_dir.mkdir()
        for n in set(present) | {WEIGHTS_STANDIN[n] for n in present if n in WEIGHTS_STANDIN}:
            if (MODELS / n).is_file():
                shutil.copyfile(MODELS / n, models_dir / n)
        scons = Scons(tree, args.board, args.jobs)
        # Untimed: the source lists of the tree copy go into the per-user cache, as
        # they are there for a user's tree after its first build.
        scons.run(tmp / "warm-up", models_dir / present[0], "-n")
        for n in present:
            print("measuring %s ..." % n, file=sys.stderr, flush=True)
            results.append(measure_model(n, args, scons, tree, models_dir, tmp))
    except BuildFailed as error:
        print(error, file=sys.stderr)
        return 1
    finally:
        forget_source_cache(tree)
        if args.keep:
            print("kept %s" % tmp, file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    # The compiler the builds used: the default toolchain, as SCons finds it.
    compiler = riscv.find_prefix("") + "gcc"
    rows = machine_rows(compiler) + [
        ("ExecuTorch", "%s (a hard-linked copy, made in %.1f s)" % (et_version(root), copy_s)),
        ("build", "board=%s, default build type, scons -j%d verbose=1" % (args.board, args.jobs)),
        ("load average", "%.2f %.2f %.2f at start, %.2f %.2f %.2f at end"
         % (load_start + os.getloadavg())),
        ("runs", "%d of each, median; wall time of the scons process" % args.runs),
    ]
    print_rows(rows)
    print()

    def cell(value, clean=None):
        if value is None:
            return "-"
        wall, count = value
        text = "%.1f s [%d]" % (wall, count)
        if clean:
            text += " %.1f%%" % (100 * wall / clean)
        return text

    head = ("model", "clean", "no-op", "new weights", "touch (timestamp only)", "method.cpp edited")
    print("%-9s %-13s %-15s %-26s %-22s %-15s" % head)
    for r in results:
        clean = r["clean"][0]
        weights = cell(r["weights"])
        if r["weights"] and r["weights_model"] != r["model"]:
            weights += " (%s)" % r["weights_model"]
        print("%-9s %-13s %-15s %-26s %-22s %-15s" % (
            r["model"], cell(r["clean"]), cell(r["noop"], clean), weights,
            cell(r["touch"]), cell(r["edit"])))
    print("[n]: compiler/archiver/linker commands the build ran; %: of the clean build.")
    if any(r["weights"] and r["weights_model"] != r["model"] for r in results):
        print("add.pte has no weights: its new-weights figure is mlp.pte's, built into "
              "the same build_dir.")
    print()
    print("SCons overhead: the clean build's commands rebuilt by scons -j%d vs replayed "
          "directly (%d workers)" % (args.jobs, args.jobs))
    print("%-9s %-32s %8s %9s %9s   %8s %9s %9s" % (
        "model", "commands", "scons s", "replay s", "overhead", "scons", "replay", "overhead"))
    print("%-9s %-32s %28s   %28s" % ("", "", "---------- wall ----------",
                                       "---------- CPU -----------"))
    for r in results:
        o = r["overhead"]
        kinds = "%d (%d cc, %d ar, %d ranlib, %d ld)" % (
            o["commands"], o["kinds"]["compile"], o["kinds"]["archive"], o["kinds"]["ranlib"],
            o["kinds"]["link"])
        print("%-9s %-32s %8.1f %9.1f %8.1f%%   %8.1f %9.1f %8.1f%%" % (
            r["model"], kinds, o["scons"], o["replay"], 100 * (o["scons"] / o["replay"] - 1),
            o["scons_cpu"], o["replay_cpu"], 100 * (o["scons_cpu"] / o["replay_cpu"] - 1)))
        if not o["same_cmds"]:
            print("  warning: scons ran other commands than the clean build printed")
        if not o["same_elf"]:
            print("  warning: the replayed ELF differs from the one scons built")
    print()

    print("A clean build beside its floor: the same compiler, archiver and linker commands "
          "replayed directly (%d workers)" % args.jobs)
    print("%-9s %9s %9s %11s %17s" % ("model", "clean s", "floor s", "clean/floor",
                                        "codegen s (share)"))
    for r in results:
        o = r["overhead"]
        print("%-9s %9.1f %9.1f %10.2fx %9.2f (%4.1f%%)" % (
            r["model"], r["clean"][0], o["replay"], r["clean"][0] / o["replay"],
            r["codegen"], 100 * r["codegen"] / r["clean"][0]))
    print()

    worst_noop = max(r["noop"][0] / r["clean"][0] for r in results)
    worst_overhead = max(r["overhead"]["scons"] / r["overhead"]["replay"] - 1 for r in results)
    worst_floor = max(r["clean"][0] / r["overhead"]["replay"] - 1 for r in results)
    ok_noop, ok_overhead = worst_noop <= 0.05, worst_overhead <= 0.10
    ok_floor = worst_floor <= 0.20
    print("no-op rebuild <= 5%% of a clean build: %.1f%% %s"
          % (100 * worst_noop, "ok" if ok_noop else "MISSED"))
    print("SCons overhead <= 10%% (wall): %.1f%% %s"
          % (100 * worst_overhead, "ok" if ok_overhead else "MISSED"))
    print("clean build within 20%% of its floor: %.1f%% above %s"
          % (100 * worst_floor, "ok" if ok_floor else "MISSED"))
    print("(CPU: user + system seconds of the processes, children included; less "
          "sensitive than wall time to other load on the machine)")
    return 0 if ok_noop and ok_overhead and ok_floor else 2


if __name__ == "__main__":
    sys.exit(main())
