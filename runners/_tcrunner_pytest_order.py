"""The test history's order inside pytest: tests to run first and tests to leave out.

tcrunner writes a JSON file and names it in ``TCRUNNER_ORDER_FILE``:
``{"first": [ids], "skip": [ids]}``. An id is a node id, or a file's path
relative to the root (every test of that file). After every other plugin
has chosen and ordered the items (``-k``, ``-m``, the project's own
hooks), the ``skip`` ones are deselected, as pytest's stepwise plugin
deselects the tests already passed, and the ``first`` ones are moved to the
front in collection order, as pytest's ``--ff`` does.
"""

import json
import os

import pytest

from _tcrunner_pytest_common import _Plugin


def _order():
    """The file's content, or None without one (or with one unreadable)."""
    path = os.environ.get("TCRUNNER_ORDER_FILE")
    if not path:
        return None
    try:
        with open(path, encoding="utf-8") as file:
            return json.load(file)
    except (OSError, ValueError):
        return None


class _Order(_Plugin):
    def __init__(self, order):
        self._first = set(order.get("first") or ())
        self._skip = set(order.get("skip") or ())

    @staticmethod
    def _named(item, names):
        return item.nodeid in names or item.nodeid.split("::", 1)[0] in names

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        if self._skip:
            kept = [item for item in items if not self._named(item, self._skip)]
            if len(kept) != len(items):
                left = [item for item in items if self._named(item, self._skip)]
                config.hook.pytest_deselected(items=left)
                items[:] = kept
        if self._first:
            items.sort(key=lambda item: not self._named(item, self._first))
