#!/usr/bin/env python3
"""Benchmark: a model set built by one invocation (model=DIR) against one invocation per
model, without a cache and with a cold and a warm SCons cache (cache=DIR).

The repository's models (examples/models/*.pte, or those --models names) are copied
into a scratch directory with their NAME.inputs.json and NAME.expected.json, as a model
set expects them. For each build type (Release, Debug), every build in a fresh build_dir
(board=qemu, -jJ):

* one invocation: `scons model=DIR`: the runtime, and the kernels that models with the
  same operator and dtype selection need, are compiled once for all models;
* one per model: `scons model=DIR/NAME.pte` for each model, each in its own fresh
  build_dir; wall time and compiles are the sums over the models;

and each of them three ways: no cache; cache=DIR empty (cold: the separate builds
already share through it what an earlier model of the set built); the same cache again
(warm: new build directories retrieve everything).

compiled = the objects compiled ("Compiling" and "Assembling" lines), retrieved =
files retrieved from the cache ("Retrieved ... from cache"). Exit status 0 when the one
invocation compiles fewer objects than the separate builds without a cache, for every
build type; 2 if not; 1 on errors.

    .venv/bin/python benchmarks/model_set.py [--jobs 2] [--build-types Release,Debug]
                                             [--models add,mlp]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODELS = REPO / "examples" / "models"              # the repository's example models
sys.path.insert(0, str(REPO / "site_scons"))

from etcorev.toolchain import riscv  # noqa: E402
from machine import executorch_root, machine_rows, print_rows  # noqa: E402

COMPILED = re.compile(r"^\[\s*\d+%\] (Compiling|Assembling) ", re.M)
RETRIEVED = re.compile(r"^(\[\s*\d+%\] )?Retrieved `.*' from cache$", re.M)
CACHES = ("none", "cold", "warm")


class Failed(Exception):
    pass


def scons(build_dir, jobs, *args):
    """(wall seconds, objects compiled, files retrieved) of one build."""
    argv = [sys.executable, "-m", "SCons", "-Q", "-j%d" % jobs, "build_dir=%s" % build_dir,
            "board=qemu"] + list(args)
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    wall = time.monotonic() - start
    if proc.returncode:
        raise Failed("scons failed (exit %d): %s\n%s" % (
            proc.returncode, " ".join(argv), "\n".join(proc.stdout.splitlines()[-25:])))
    return wall, len(COMPILED.findall(proc.stdout)), len(RETRIEVED.findall(proc.stdout))


def model_set(directory, wanted):
    """The models of examples/models (those named in wanted, or all) copied into
    directory with their inputs and expected outputs, as a model set; their names."""
    names = []
    for pte in sorted(MODELS.glob("*.pte")):
        name = pte.stem
        if wanted and name not in wanted:
            continue
        shutil.copy(pte, directory / pte.name)
        for suffix in (".inputs.json", ".expected.json"):
            beside = MODELS / (name + suffix)
            if beside.is_file():
                shutil.copy(beside, directory / beside.name)
        names.append(name)
    for name in wanted:
        if name not in names:
            print("skipping %s: not in %s" % (name, MODELS.relative_to(REPO)))
    return names


def measure(models_dir, names, build_type, jobs, tmp):
    """Rows (strategy, cache, wall, compiled, retrieved, per-model compiles)."""
    rows = []
    strategies = {
        "one invocation": [["model=%s" % models_dir]],
        "one per model (%d)" % len(names): [["model=%s" % (models_dir / (n + ".pte"))]
                                             for n in names],
    }
    for index, (strategy, invocations) in enumerate(strategies.items()):
        cache = tmp / ("cache-%s-%d" % (build_type, index))
        for state in CACHES:
            wall = compiled = retrieved = 0
            each = []
            for n, options in enumerate(invocations):
                build_dir = tmp / ("build-%s-%d-%s-%d" % (build_type, index, state, n))
                extra = [] if state == "none" else ["cache=%s" % cache]
                result = scons(build_dir, jobs, "build_type=%s" % build_type, *options, *extra)
                shutil.rmtree(build_dir)
                wall += result[0]
                compiled += result[1]
                retrieved += result[2]
                each.append(result[1])
            rows.append((strategy, state, wall, compiled, retrieved, each))
        shutil.rmtree(cache, ignore_errors=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2, help="scons -j (2)")
    ap.add_argument("--build-types", default="Release,Debug", help="(Release,Debug)")
    ap.add_argument("--models", default="",
                    help="model names in examples/models (all of them)")
    args = ap.parse_args()
    build_types = [t.strip() for t in args.build_types.split(",") if t.strip()]

    root = executorch_root()
    if root is None:
        return 1
    compiler = riscv.find_prefix("") + "gcc"      # the default toolchain, as SCons finds it

    tmp = Path(tempfile.mkdtemp(prefix="model-set-bench-"))
    try:
        models_dir = tmp / "models"
        models_dir.mkdir()
        names = model_set(models_dir, [m.strip() for m in args.models.split(",") if m.strip()])
        if not names:
            print("skipping: no models in %s" % MODELS.relative_to(REPO))
            return 0
        print_rows(machine_rows(compiler, [("load average", "%.2f %.2f %.2f at start"
                                            % os.getloadavg())]) + [
            ("models", "%s (%d, from %s)" % (", ".join(names), len(names),
                                             MODELS.relative_to(REPO))),
            ("builds", "board=qemu, -j%d, each in a fresh build_dir" % args.jobs),
        ])
        print()
        print("%-8s %-20s %-5s %8s %9s %9s  %s" % ("type", "invocations", "cache", "wall s",
                                                 "compiled", "retrieved",
                                                 "compiled per model"))
        verdicts = []
        for build_type in build_types:
            rows = measure(models_dir, names, build_type, args.jobs, tmp)
            for strategy, state, wall, compiled, retrieved, each in rows:
                print("%-8s %-20s %-5s %8.1f %9d %9d  %s" % (
                    build_type, strategy, state, wall, compiled, retrieved,
                    " ".join("%s %d" % (n, c) for n, c in zip(names, each))
                    if len(each) > 1 else ""))
            one, separate = rows[0][3], rows[len(CACHES)][3]
            verdicts.append((build_type, one, separate))
        print()
        print("load average %.2f %.2f %.2f at end (wall times count other work on the "
              "machine too; the compile counts do not)" % os.getloadavg())
        for build_type, one, separate in verdicts:
            print("%s without a cache: one invocation compiles %d objects, one invocation per "
                  "model %d in all (%.1fx)" % (build_type, one, separate, separate / max(one, 1)))
    except Failed as error:
        print(error, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if all(one < separate for _, one, separate in verdicts) else 2


if __name__ == "__main__":
    sys.exit(main())
