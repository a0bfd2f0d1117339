"""One SCons cache (cache=DIR) shared by two checkouts, as CI machines or colleagues share
one: the second checkout's build retrieves what the first built, compiles nothing, and
what it retrieves names its own paths, not the first checkout's or build directory's.
Build directories inside each checkout (build_dir=build) and outside both."""

import os
import re
from pathlib import Path

import pytest

from etcorev.scons.buildcache import tree_places
from sconsrun import REPO, TEST_CACHE, scons
from test_cli import copy_worktree

APP = "app=tests/fixtures/cxx_smoke"
WORK = re.compile(r"^\[\s*\d+%\] (Compiling|Assembling|Linking|Archiving) (\S+)", re.M)


def checkouts(tmp_path, outside):
    """Two checkouts and a build directory for each: (top, build_dir) pairs."""
    pairs = []
    for name in ("first", "second"):
        top = copy_worktree(tmp_path / ("checkout-" + name))
        build_dir = tmp_path / ("builds-" + name) if outside else top / "build"
        pairs.append((top, build_dir))
    return pairs


def files_naming(directory, paths):
    """Files under directory (not SCons's own database and lock) that contain one of the
    paths, with the path each names."""
    found = []
    for file in Path(directory).rglob("*"):
        if file.is_file() and not file.name.startswith((".sconsign", ".lock")):
            data = file.read_bytes()
            found += [(str(file.relative_to(directory)), p) for p in paths
                      if (str(p) + "/").encode() in data]
    return found


def build_twice(tmp_path, outside, *options, cache=None):
    """The first checkout builds into cache (default: a new one, so that it compiles),
    then the second. With the test run's cache, what the first retrieves may come from
    other checkouts and build directories (this repository's)."""
    (first_top, first_dir), (second_top, second_dir) = checkouts(tmp_path, outside)
    own = cache is None
    cache = "cache=%s" % (tmp_path / "cache" if own else cache)
    first = scons(*options, cache, build_dir=first_dir, cwd=first_top)
    assert first.returncode == 0, first.stdout
    if own:
        assert "Compiling" in first.stdout
    second = scons(*options, cache, build_dir=second_dir, cwd=second_top)
    assert second.returncode == 0, second.stdout
    return first_top, first_dir, second_top, second_dir, second


@pytest.mark.parametrize("outside", [False, True], ids=["build-dirs-inside", "build-dirs-outside"])
def test_second_checkout_retrieves_everything_and_names_its_own_paths(tmp_path, outside):
    first_top, first_dir, _, second_dir, second = build_twice(tmp_path, outside, APP)
    assert not WORK.findall(second.stdout), second.stdout
    assert re.search(r"^(\[\s*\d+%\] )?Retrieved `.*cxx_smoke\.map' from cache$", second.stdout,
                     re.M), \
        second.stdout
    assert files_naming(second_dir, [first_top, first_dir]) == []
    maps = [next(Path(d).glob("*/app-cxx_smoke/cxx_smoke.map")) for d in (first_dir, second_dir)]
    if outside:
        # The link names objects by absolute paths: each map its own build directory's.
        assert ("%s/" % second_dir) in maps[1].read_text()
    # Otherwise the maps are the same: the objects' paths are relative to the checkout.
    assert maps[0].read_text().replace(str(first_dir), str(second_dir)) == maps[1].read_text()
    hexes = [next(Path(d).glob("*/app-cxx_smoke/cxx_smoke.hex")).read_bytes()
             for d in (first_dir, second_dir)]
    assert hexes[0] == hexes[1]


@pytest.mark.parametrize("value", ["off", "none"])
def test_cache_off_builds_without_one(tmp_path, value):
    """cache=off (any of COREV_ET_CACHE's words for off) builds without a cache, also
    when the user settings name one: no directory named after the word, nothing put
    into the settings' cache."""
    top = copy_worktree(tmp_path / "checkout")
    settings_cache = tmp_path / "settings-cache"
    settings = tmp_path / "options.py"
    settings.write_text("cache = %r\n" % str(settings_cache))
    env = {k: v for k, v in os.environ.items() if k != TEST_CACHE}
    env["COREV_ET_SETTINGS"] = str(settings)
    result = scons(APP, "cache=%s" % value, build_dir=tmp_path / "build", cwd=top, env=env)
    assert result.returncode == 0, result.stdout
    assert WORK.findall(result.stdout), result.stdout
    assert not (top / value).exists()
    assert not settings_cache.exists() or not any(settings_cache.rglob("*.*")), \
        sorted(settings_cache.rglob("*"))


def test_second_checkout_retrieves_the_runner(et_root, tmp_path):
    """With the test run's cache (the runtime compiles once for the whole run): the
    second checkout retrieves everything, whichever checkout compiled it, and nothing
    it retrieves names the first checkout, its build directory or this repository."""
    first_top, first_dir, _, second_dir, second = build_twice(
        tmp_path, True, "board=qemu", cache=os.environ[TEST_CACHE])
    assert not WORK.findall(second.stdout), second.stdout
    assert files_naming(second_dir, [first_top, first_dir, REPO]) == []
    elfs = [list(Path(d).glob("*/add/executor_runner.elf")) for d in (first_dir, second_dir)]
    assert len(elfs[0]) == len(elfs[1]) == 1
    assert elfs[0][0].read_bytes() == elfs[1][0].read_bytes()


@pytest.mark.parametrize("inside", [False, True], ids=["build-dir-outside", "build-dir-inside"])
def test_objects_with_one_signature_are_the_same_in_every_variant(et_root, tmp_path, inside):
    """The cache keys an object by its signature, which names no directory: variants
    that compile the runtime with the same command (here the CORE-V kernels' and the
    portable ones') share its objects. Their contents must be the same too, or a build
    that retrieves one variant's object and compiles the next relinks for nothing (the
    variant's name reached method.o through the generated headers' paths)."""
    target = "executorch/runtime/executor/method.o"
    # Inside a checkout, commands name the variant directory relative to it.
    top = copy_worktree(tmp_path / "checkout") if inside else REPO
    build_dir = top / "build" if inside else tmp_path
    built = []
    for corev in (1, 0):
        variant = "qemu-release-logoff-rv32imc-corev" + ("" if corev else "-portable")
        path = build_dir / variant / "et" / "core" / "runtime" / "executor" / "method.o"
        result = scons("board=qemu", "corev_kernels=%d" % corev, str(path),
                       build_dir=build_dir, cwd=top, cache=False)
        assert result.returncode == 0, result.stdout
        assert "Compiling %s" % target.replace(".o", ".cpp") in result.stdout, result.stdout
        built.append(path.read_bytes())
    assert built[0] == built[1]



def test_objects_are_the_same_from_every_checkout(et_root, tmp_path):
    """The cache gives two checkouts one key for an object (their places are not in its
    command's signature), so the object must be the same bytes from either: GCC 12 wrote
    the working directory into LTO objects whose file names -ffile-prefix-map left
    relative (ours, given relative to the checkout, and everything it mapped to ".")."""
    objects = {"method.o": "et/core/runtime/executor/method.o",
               "corev_pal.o": "runner/corev_pal.o", "CoreVBackend.o": "backend/CoreVBackend.o"}
    built = []
    for name in ("first", "second-checkout"):
        top = copy_worktree(tmp_path / name)
        variant = tmp_path / "build" / name / "qemu-release-logoff-rv32imc-corev"
        targets = [str(variant / path) for path in objects.values()]
        result = scons("board=qemu", *targets, build_dir=variant.parent, cwd=top, cache=False)
        assert result.returncode == 0, result.stdout
        built.append({o: (variant / path).read_bytes() for o, path in objects.items()})
    assert [o for o in objects if built[0][o] != built[1][o]] == []


def test_the_tree_place_leaves_the_key_and_nothing_else():
    """What tree_places() replaces in a command: the tree (absolute, or relative when it
    is inside the checkout, as a submodule) and -I<its parent>; not a longer name that
    starts with the tree's, nor the parent elsewhere."""
    def key(command, root, top="/ci/job-1/app"):
        for pattern, placeholder in tree_places(root, top):
            command = pattern.sub(placeholder, command.encode()).decode()
        return command

    a = key("g++ -I/ci/job-1 -ffile-prefix-map=/ci/job-1/executorch=executorch "
            "/ci/job-1/executorch/runtime/x.cpp", "/ci/job-1/executorch")
    b = key("g++ -I/ci/job-2 -ffile-prefix-map=/ci/job-2/executorch=executorch "
            "/ci/job-2/executorch/runtime/x.cpp", "/ci/job-2/executorch")
    assert a == b and "job" not in a, (a, b)
    inside = key("g++ -Ithird_party -I/ci/job-1/app/third_party third_party/executorch/a.cpp",
                 "/ci/job-1/app/third_party/executorch")
    assert "third_party" not in inside, inside
    kept = key("g++ -I/ci/job-1/executorch2 /ci/job-1/tools/b.cpp -I/ci/job-1x",
               "/ci/job-1/executorch")
    assert kept == "g++ -I/ci/job-1/executorch2 /ci/job-1/tools/b.cpp -I/ci/job-1x", kept


def test_the_test_runs_cache_goes_with_the_run(tmp_path):
    """The SCons cache the test run shares between its builds (conftest.py makes it in
    the temporary directory) is removed when the run ends, by the process that made it
    (its workers use it to the end). Each run left hundreds of MB behind."""
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if k != TEST_CACHE}
    env["TMPDIR"] = str(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider",
         "tests/test_pte.py::test_the_suites_models_are_here",
         "tests/test_cache.py::test_the_tree_place_leaves_the_key_and_nothing_else"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert "2 passed" in result.stdout, result.stdout
    assert not list(tmp_path.glob("corev-et-test-cache-*"))
