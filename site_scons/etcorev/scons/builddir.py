"""A build directory that survives what users do to it: two scons processes at once (a
lock, naming the process that holds it), `kill -9` (the signature database is written
every few seconds during the build, not only at its end), and a path that is a file."""

import fcntl
import os
import time

from etcorev.scons import scons_internals
from etcorev.errors import BuildSetupError
from etcorev.scons.signature_db import SignaturesNotWritten

CHECKPOINT_SECONDS = 2.0
VARIANT_PREFIX = "build/variant"
LOCK_NAME = ".lock"
_held = []        # (lock file, build_dir, made by this run): held until the process ends


def path_prefixes(top, build_dir, variant_dir):
    """(directory, prefix) pairs that objects name instead of the directories, in the
    compiler's order (the last that matches wins): the checkout is ".", the build
    directory "build" and the variant's "build/variant" whatever its name. Inside the
    checkout SCons names them relative to it, so those spellings too. Objects then name
    no place on this machine, and variants that compile a file with the same command
    make the same object (the cache gives them one)."""
    pairs = [(top, "."), (build_dir, "build"), (variant_dir, VARIANT_PREFIX)]
    pairs += [(relative, prefix) for directory, prefix in pairs[1:]
              for relative in spellings(directory, top)[1:]]
    return pairs


def spellings(directory, top):
    """How commands name a directory: absolute, and relative to the checkout (top) when
    it is inside it (SCons runs commands there and names what is inside relatively)."""
    forms = [directory]
    if directory.startswith(top + os.sep):
        forms.append(os.path.relpath(directory, top))
    return forms


def checkout_dirs(top):
    """The checkout's directories, whose files commands name relative to it (pal/...)."""
    return sorted(d for d in os.listdir(top)
                  if not d.startswith(".") and os.path.isdir(os.path.join(top, d)))


DEBUG_ROOT = "/corev-et"


def debug_name(prefix):
    """Where debug information and LTO objects put what prefix stands for: an absolute
    name. GCC 12 writes the working directory, unmapped, into an LTO object in which a
    file name is relative, so the same command in two checkouts gave other bytes."""
    return DEBUG_ROOT if prefix == "." else "%s/%s" % (DEBUG_ROOT, prefix)


def prefix_map_flags(pairs, relative_dirs=()):
    """The compiler flags for (directory, prefix) pairs: __FILE__ gets the prefixes,
    debug information and LTO objects their debug_name()s. relative_dirs: the checkout's
    directories, which name its files relative to it (pal/board.c), mapped first so
    that the pairs win where both match."""
    return (["-ffile-prefix-map=%s=%s" % pair for pair in pairs]
            + ["-fdebug-prefix-map=%s/=%s/" % (d, debug_name(d)) for d in relative_dirs]
            + ["-fdebug-prefix-map=%s=%s" % (d, debug_name(p)) for d, p in pairs])


def prepare(build_dir):
    """Make build_dir and lock it for this process."""
    made = not os.path.exists(build_dir)
    if os.path.exists(build_dir) and not os.path.isdir(build_dir):
        raise BuildSetupError("$BUILD_DIR=%s names a file, not a directory: choose another "
                              "build_dir." % build_dir)
    try:
        os.makedirs(build_dir, exist_ok=True)
    except OSError as error:
        raise BuildSetupError("Cannot make the build directory %s: %s." % (build_dir, error.strerror))
    try:
        lock = open(os.path.join(build_dir, LOCK_NAME), "a+")
    except OSError as error:            # read-only, or not ours
        raise BuildSetupError("Cannot write in the build directory %s ($BUILD_DIR): %s. "
                              "Choose a build_dir you can write to." % (build_dir, error.strerror))
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip() or "another process"
        lock.close()
        raise BuildSetupError(
            "The build directory %s is in use by %s. Wait for it to finish, or use another "
            "$BUILD_DIR." % (build_dir, holder))
    lock.seek(0)
    lock.truncate()
    lock.write("scons (pid %d, started %s)\n" % (os.getpid(), time.strftime("%H:%M:%S")))
    lock.flush()
    _held.append((lock, build_dir, made))


def abandon():
    """The build was refused before it started: leave no directory it made itself."""
    while _held:
        lock, build_dir, made = _held.pop()
        lock.close()
        os.remove(os.path.join(build_dir, LOCK_NAME))
        if made:
            try:
                os.rmdir(build_dir)
            except OSError:            # not empty: keep it
                pass


class SignatureCheckpoint:
    """A Progress() callback that writes SCons's signature database every few seconds,
    so that a killed build keeps what it finished. SCons records a built file's signature
    in the main thread, where Progress() is called too, so the database is consistent."""

    def __init__(self, seconds=CHECKPOINT_SECONDS):
        self.seconds = seconds
        self.last = time.monotonic()

    def __call__(self, node):
        now = time.monotonic()
        if now - self.last < self.seconds:
            return
        self.last = now
        files, databases = scons_internals.signature_files()
        try:
            for sig_file in files:
                sig_file.write(sync=0)
            for db in databases:
                if hasattr(db, "sync"):
                    db.sync()
        except SignaturesNotWritten:      # said once (signature_db); SCons tries at the end
            self.seconds = float("inf")
