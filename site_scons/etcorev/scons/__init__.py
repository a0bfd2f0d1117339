"""Build directories and what lives beside them: the lock, signature database and
checkpoints (builddir, signature_db), the shared cache (buildcache) and the per-user one
(usercache), the user settings file (settings), cleaning (clean), the options' command-line
face (cli) and the one-line messages (quiet_messages).
"""
