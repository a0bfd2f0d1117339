"""The signature database (.sconsign.dblite) through SCons's own dblite, for
`SConsignFile(name, signature_db)`: SCons takes any module with a dbm-style open().

What it adds: a database that cannot be written (a full disk, a directory made read-only
during the build) is one `scons: ***` line, with the half-written temporary file
removed, instead of the stack trace SCons prints when its final write fails. The build
itself is done by then; what is lost is the record of it, so the next build compiles
again what this one compiled.
"""

import sys

from etcorev.scons import scons_internals

_reported = []


class SignaturesNotWritten(SystemExit):
    """Raised from sync(): SCons ends with status 2 and no traceback."""

    def __init__(self):
        super().__init__(2)


class SignatureDB:
    def __init__(self, db, file_name):
        self._db = db
        self._file_name = file_name

    def sync(self):
        try:
            self._db.sync()
        except OSError as error:
            # dblite's __del__ would try (and fail) again; its temporary file goes.
            scons_internals.dblite_drop_pending(self._db)
            if not _reported:
                _reported.append(error)
                sys.stderr.write(
                    "scons: *** Cannot write the signature database %s: %s. What was "
                    "built is in place, but the next build will build it again; make room "
                    "(or fix the directory's permissions).\n"
                    % (self._file_name, error.strerror or error))
            raise SignaturesNotWritten()

    def close(self):
        # dblite's close() syncs once more: do it here, reported as above.
        if scons_internals.dblite_pending(self._db):
            self.sync()

    def __getattr__(self, name):
        return getattr(self._db, name)

    def __getitem__(self, key):
        return self._db[key]

    def __setitem__(self, key, value):
        self._db[key] = value

    def __contains__(self, key):
        return key in self._db

    def __len__(self):
        return len(self._db)

    def __iter__(self):
        return iter(self._db)


def failed():
    """Did writing the database fail in this run?"""
    return bool(_reported)


def open(file, flag="r", mode=0o666):      # noqa: A001 (the dbm module interface)
    return SignatureDB(*scons_internals.dblite_open(file, flag, mode))
