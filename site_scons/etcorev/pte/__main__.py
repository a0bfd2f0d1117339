"""The operators, kernel keys and buffer sizes of a .pte as JSON:

    python -m etcorev.pte FILE                      (site_scons/ on the path)
    python site_scons/etcorev/pte/__main__.py FILE  (from a checkout, as a script)
"""

import os
import sys

if __package__ in (None, ""):      # run as a script: make `etcorev` importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    sys.dont_write_bytecode = True  # and leave no byte code in the checkout

from etcorev.pte import main  # noqa: E402

sys.exit(main())
