"""The test history's order inside pytest: tests to run first and tests to leave out.

tcrunner writes a JSON file and names it in ``TCRUNNER_ORDER_FILE``:
``{"first": [ids], "skip": [ids], "only": [ids], "batch": [ids], "shard":
null or {"index": K-1, "count": N, "durations": {id: ms}}, "new_first":
bool, "known": [ids]}``. An id is a node id, or a file's path relative to
the root (every test of that file). After every other plugin has chosen and
ordered the items (``-k``, ``-m``, the project's own hooks):

- with ``only``, the folders and files that hold those are collected
  first, and once one of them is seen to hold one, files that hold none
  are not collected, as pytest's own ``--lf`` does;
- the ``skip`` ones are deselected, as pytest's stepwise plugin deselects
  the tests already passed, and so are those ``only`` (``--lf``) and
  ``batch`` (TeamCity's parallel tests batch) leave out; when none of the
  ``only`` ones was collected (each renamed or deleted since), everything
  collected runs, and a line says so;
- ``--shard`` keeps this shard's items, split as ``src/history/shard.rs``
  splits: longest first into the least loaded shard, ties by node id, a test
  with no recorded duration weighing the mean of those recorded, every test
  the same when none is;
- the ``first`` ones are moved to the front in collection order, as pytest's
  ``--ff`` does; with ``new_first`` the tests not ``known`` to the history
  go first, each group ordered by its files' modification time, newest
  first, as pytest's ``--nf`` does.
"""

import heapq
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


def _split(items, shard):
    """This shard's items, and the line that says what it planned."""
    index, count = shard["index"], shard["count"]
    durations = shard.get("durations") or {}
    recorded = [durations[item.nodeid] for item in items if item.nodeid in durations]
    fallback = max(1, sum(recorded) // len(recorded)) if recorded else 1
    weights = [max(1, durations.get(item.nodeid, fallback)) for item in items]
    order = sorted(range(len(items)), key=lambda i: (-weights[i], items[i].nodeid))
    # Each test to the lightest shard so far, the lowest index on a tie. No
    # more shards than tests are ever chosen (the rest stay empty), so a huge
    # count costs nothing.
    loads = [(0, s) for s in range(min(count, len(items)))]  # a heap already
    mine = set()
    for i in order:
        load, lightest = heapq.heappop(loads)
        heapq.heappush(loads, (load + weights[i], lightest))
        if lightest == index:
            mine.add(i)
    if recorded:
        total = sum(weights)
        planned = sum(weights[i] for i in mine)
        share = "planned %.1f s of %.1f s (%.0f%%)" % (
            planned / 1000.0,
            total / 1000.0,
            100.0 * planned / max(total, 1),
        )
    else:
        share = "split by count: no durations recorded"
    line = "shard %d/%d: %d of %d tests, %s" % (index + 1, count, len(mine), len(items), share)
    return [item for i, item in enumerate(items) if i in mine], line


def _file_id(collector):
    """The id of the file a ``pytest.File`` collector is in: its own, or for
    a File inside a file (pytest-describe's blocks, ``test_d.py::describe_x``)
    its file's, as pytest's own ``--lf`` goes by the collector's path."""
    return collector.nodeid.split("::", 1)[0]


class _Order(_Plugin):
    def __init__(self, order, say=None):
        self._first = set(order.get("first") or ())
        self._skip = set(order.get("skip") or ())
        self._only = set(order.get("only") or ())
        # Their files, relative to the root as pytest names them: the files
        # to collect at all (see ``pytest_make_collect_report``).
        self._only_files = set(name.split("::", 1)[0] for name in self._only)
        # Files are left out only once a file has been seen to hold one of
        # ``only``: until then each of them may have been renamed away.
        self._skipping = False
        self._batch = set(order.get("batch") or ())
        self._shard = order.get("shard")
        self._say = say
        self._new_first = bool(order.get("new_first"))
        self._known = set(order.get("known") or ())

    @staticmethod
    def _named(item, names):
        return item.nodeid in names or item.nodeid.split("::", 1)[0] in names

    @staticmethod
    def _deselect(config, items, leave_out):
        left = [item for item in items if leave_out(item)]
        if left:
            config.hook.pytest_deselected(items=left)
            items[:] = [item for item in items if not leave_out(item)]

    @pytest.hookimpl(tryfirst=True)
    def pytest_make_collect_report(self, collector):
        """With ``only``, a file that holds none of those tests is not
        collected, as pytest's own ``--lf`` skips it. The run keeps the
        arguments it was given: ids are relative to pytest's root, which
        the failures' files as arguments could move (an ini file beside
        them, a root above the project)."""
        if self._skipping and isinstance(collector, pytest.File) and _file_id(collector) not in self._only_files:
            return pytest.CollectReport(collector.nodeid, "passed", None, [])
        return None

    @pytest.hookimpl(wrapper=True, specname="pytest_make_collect_report")
    def pytest_make_collect_report_in_order(self, collector):
        """With ``only``: the folders and files that hold those tests are
        collected first, and a file seen to hold one of them starts the
        skipping above, as pytest's own ``--lf`` orders and skips."""
        report = yield
        if not self._only_files or self._skipping or not report.result:
            return report
        if isinstance(collector, pytest.File):
            if _file_id(collector) in self._only_files and any(self._holds_only(node.nodeid) for node in report.result):
                self._skipping = True
        else:
            report.result.sort(key=lambda node: not self._leads_to_only(node.nodeid))
        return report

    def _holds_only(self, nodeid):
        """Whether the node ``nodeid`` is, or holds, one of ``only``."""
        return nodeid in self._only or any(name.startswith(nodeid + "::") for name in self._only)

    def _leads_to_only(self, nodeid):
        """Whether the folder or file ``nodeid`` holds a file of ``only``."""
        return any(name == nodeid or name.startswith(nodeid + "/") for name in self._only_files)

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        self._deselect(config, items, lambda item: self._named(item, self._skip))
        if self._only and not any(self._named(item, self._only) for item in items):
            if self._say is not None:
                self._say(
                    "run-last-failure: %d known failures not in selected tests; running what was collected"
                    % len(self._only)
                )
        elif self._only:
            self._deselect(config, items, lambda item: not self._named(item, self._only))
        if self._batch:
            self._deselect(config, items, lambda item: not self._named(item, self._batch))
        if self._shard:
            kept, line = _split(items, self._shard)
            if len(kept) != len(items):
                chosen = set(id(item) for item in kept)
                config.hook.pytest_deselected(items=[item for item in items if id(item) not in chosen])
                items[:] = kept
            if self._say is not None:
                self._say(line)
        if self._first:
            items.sort(key=lambda item: not self._named(item, self._first))
        if self._new_first:
            mtimes = {}

            def mtime(item):
                path = str(getattr(item, "path", None) or item.fspath)
                if path not in mtimes:
                    try:
                        mtimes[path] = os.stat(path).st_mtime
                    except OSError:
                        mtimes[path] = 0
                return mtimes[path]

            items.sort(key=lambda item: (item.nodeid in self._known, -mtime(item)))
