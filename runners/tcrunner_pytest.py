"""The module tcrunner loads into pytest with ``-p tcrunner_pytest``.

PYTEST_DONT_REWRITE

The reporter itself is ``_tcrunner_pytest`` beside this file, with the
modules it imports (``_tcrunner_pytest_*``, one job each). pytest compiles
a module named by ``-p`` through its assertion rewriter, and keeps that
compiled code only where it may write bytecode: under
``PYTHONDONTWRITEBYTECODE`` (common in containers) it would parse and compile
the whole reporter again at every run, some 50 ms. So this module stays a few
lines long, and the reporter is imported the ordinary way, with its bytecode
cached beside it even then: the folder is tcrunner's own, not the project's.
"""

import sys

_dont_write_bytecode = sys.dont_write_bytecode
sys.dont_write_bytecode = False
try:
    # The hooks pytest finds here.
    from _tcrunner_pytest import pytest_configure, pytest_load_initial_conftests  # noqa: F401
finally:
    sys.dont_write_bytecode = _dont_write_bytecode
