"""The reporter, in the process that talks to tcrunner: pytest's hooks
turned into events.

How pytest maps to the tree (JetBrains' mapping, pycharm-and-teamcity-protocol
§1.5-1.8 and §2.3-2.4, unless noted):

- Suites are the collectors of each item (directories and packages, modules,
  classes), declared in collection order; tests are the items. Ids are pytest
  node ids. A test's file and line are where its function is defined
  (pytest's location): for a test inherited from a class in another file,
  that file.
- A test is finished once, after its teardown, with the verdict of all three
  phases folded together: a teardown failure after a passed call makes the test
  itself an ``error`` (teamcity-messages reports a separate ``<id>_teardown``
  test after the real one already passed; junitxml marks the test case); a
  teardown that skips (or an xfail test's teardown that raises) after a
  failure leaves the failure the verdict.
- A collector that fails (import error) or is skipped (module-level skip) has no
  items; it is reported as a test ``<nodeid>::<collection>`` of its own.
- An INTERNALERROR (a plugin's or conftest's hook raised) is a top-level test
  ``<internal error>`` carrying pytest's traceback.
- Subtests (pytest 9's ``subtests`` fixture and unittest ``subTest``) are child
  tests of their test.
- Under xdist only the controller writes. Collection happens in the workers, so
  tests and their suites are declared from each report's node id and location
  just before they start, and suites are left for tcrunner to close.
- With ``TCRUNNER_TEST_TIMEOUT=<seconds>`` (tcrunner's ``--timeout``) a test
  that outlives the limit fails with ``timed out after N s`` and the run goes
  on (``_Alarm``; tcrunner's own backstop stops the run only later).
"""

import os
import signal
import sys
import threading

import pytest

from _tcrunner_pytest_common import _Plugin, _encode, _str
from _tcrunner_pytest_nodes import (
    _ROOT_IDS,
    _class_line,
    _collector_chain,
    _dotted,
    _guess_kind,
    _skip_reason,
    _subtest_name,
    _suite_chain,
    _summary,
    _timed_out,
    _traceback_outside_pytest,
    _without_params,
    _xdist_reprs_twice,
    _xfail_reason,
)
from _tcrunner_pytest_probe import _exception_line, _ini_flag

_COLLECTION = "<collection>"
_INTERNAL_ERROR = "<internal error>"

#: Characters per `output` event.
_OUTPUT_PIECE = 256 * 1024

#: How the log line of a ``pytest.exit()`` outside any test begins; tcrunner
#: then keeps pytest's exit code.
_PYTEST_EXIT = "pytest.exit: "

#: The report classes of subtests: pytest 9's own, and the pytest-subtests
#: plugin's (pytest 7 and 8).
_SUBTEST_REPORTS = ("SubtestReport", "SubTestReport")

_reporting = []  # the config being reported: nested in-process sessions are not


def _quiet_as_tcrunner(config):
    """Whether pytest runs at tcrunner's own quiet flags (-q --no-summary),
    under which its progress letters are blanked (`_NoLetters`)."""
    return config.get_verbosity() < 0 and getattr(config.option, "no_summary", False)


def _terminal_writes_per_test(config):
    """Whether pytest's terminal writes to its stdout as tests run: a verdict
    or a letter per test, unless tcrunner's own quiet flags blank the
    letters, and live log records (`log_cli`)."""
    if config.pluginmanager.get_plugin("terminal") is None:
        return False  # -p no:terminal: nothing is written, live logs neither
    blanked = _quiet_as_tcrunner(config)
    live_logs = config.getoption("log_cli_level", None) is not None or _ini_flag(config, "log_cli")
    return not blanked or live_logs



def _tag(mark):
    """A marker as a tag: its name, with its arguments when it has any
    (``scenario(s1)``, ``error(reason=x)``); a string argument unquoted."""
    if not mark.args and not mark.kwargs:
        return mark.name
    shown = lambda value: value if isinstance(value, str) else repr(value)
    args = [shown(arg) for arg in mark.args]
    args.extend("%s=%s" % (key, shown(value)) for key, value in mark.kwargs.items())
    return "%s(%s)" % (mark.name, ", ".join(args))

class _Run:
    """What is known so far about a test that has started."""

    __slots__ = (
        "outcome",
        "message",
        "details",
        "comparison",
        "failed_subtests",
        "duration",
        "sections_seen",
        "rerun",
        "attempts",
        "failed_call",
        "held",
        "subtests",
        "reported",
    )

    def __init__(self):
        self.verdict_unknown()
        self.duration = 0.0
        self.sections_seen = 0  # report.sections already sent (they accumulate)
        self.rerun = False  # this attempt failed and pytest-rerunfailures runs it again
        self.attempts = 0  # attempts failed so far that pytest-rerunfailures ran again
        self.failed_call = None  # the report of a failed call, until the test finishes
        self.held = None  # output waiting for the verdict (ini `skippassedoutput`)
        self.subtests = None  # subtest reports waiting for their attempt's verdict
        self.reported = False  # a report of it was logged

    def verdict_unknown(self):
        self.outcome = "passed"
        self.message = None
        self.details = None
        self.comparison = None
        self.failed_subtests = 0


class _Reporter(_Plugin):
    def __init__(self, config, writer, probe, teamcity_was_on):
        self.config = config
        self.probe = probe
        self.writer = writer
        self.send = writer.send
        self.root = str(config.rootpath)
        self.session = None
        # Node ids are relative to the rootdir, but for tests outside it
        # (`-c other/pytest.ini`, `--rootdir`) to the path pytest was given:
        # hints name the folder a node's dotted name resolves under.
        self.hints = {self.root: "python<%s>://" % self.root}  # folder -> hint prefix
        self.collector_paths = {}  # node id -> path, of collectors outside the rootdir
        self.logs = os.environ.get("TCRUNNER_PYTEST_LOGS") == "1"
        # Whether tests run one at a time here, not in xdist's workers (None:
        # not known yet; see _in_order): a test's `finished` then waits for
        # the next test's `started` to share one write. Where tests write
        # straight to pytest's stdout (-s, tee-sys), the events go there
        # too, so that each test's text stays between its events.
        self.one_at_a_time = None
        capture = config.getoption("capture", "fd")
        if config.pluginmanager.getplugin("capturemanager") is None:
            capture = "no"  # -p no:capture: nothing is captured
        # Under --capture=sys what tests write to fd 1 (os.write, a child
        # process) is not captured either: it reaches pytest's stdout live.
        if capture in ("no", "tee-sys", "sys"):
            writer.to_stdout()
            writer.send({"ev": "live_output"})
        elif _terminal_writes_per_test(config):
            # pytest's own lines between the events (-v's verdicts, live
            # logs) go in the same pipe as them, so that each lands by its
            # test, however late tcrunner reads the two pipes.
            writer.to_stdout()
        # With -s, and with tee-sys, tests' output already goes live to
        # pytest's stdout, which tcrunner shows; sending it again would double it.
        self.output = capture != "tee-sys"
        self.declared = set()  # ids of every suite and test declared
        self.suite_order = []  # suite ids in declaration order
        self.suites_of = {}  # test id -> its suites, outermost first
        self.remaining = {}  # suite id -> its tests not finished yet
        self.running = {}  # test id -> _Run
        self.stopped = False  # the session was interrupted or broke: running tests stay so
        self.previous_term = None  # SIGTERM's handler before ours
        self.term_pid = None  # the process that set ours
        self.finished = set()  # test ids
        self.collected_sent = False
        self.xdist_counted = False
        self.reprs_twice = None  # see _xdist_reprs_twice
        self.collection_problems = set()  # (node id, outcome, message) already reported
        self.internal_errors = 0
        # The ini key of JetBrains' own plugin: passed tests' captured
        # output is dropped, as under PyCharm's runner.
        self.skip_passed = _ini_flag(config, "skippassedoutput")
        # pytest-rerunfailures withdraws the subtests (pytest 9's) of an
        # attempt it runs again, from pytest's counts and exit code: they
        # wait for their attempt's verdict.
        self.subtests_wait = config.pluginmanager.has_plugin("rerunfailures")
        if teamcity_was_on:
            self.log("info", "teamcity-messages' pytest plugin was turned off: tcrunner reports the tests")

    def log(self, level, text):
        self.send({"ev": "log", "level": level, "text": text})

    def _internal_error(self, where, exc):
        # A bug here must not break the user's run; say so once or twice.
        self.internal_errors += 1
        if self.internal_errors <= 3:
            self.log("error", "tcrunner_pytest: internal error in %s: %r" % (where, exc))

    # --- declarations from collected nodes ---

    def _declare_suite(self, node, node_id, parent):
        path = str(node.path)
        if isinstance(node, pytest.Directory):
            kind = "dir"
        elif isinstance(node, pytest.File):
            kind = "file"
        else:
            kind = "suite"
        event = {"ev": "suite", "id": node_id, "name": node.name, "kind": kind, "file": path}
        if parent is not None:
            event["parent"] = parent
        if kind == "suite" and isinstance(getattr(node, "obj", None), type):
            line = _class_line(node.obj, path)
            if line:
                event["line"] = line
        event["hint"] = self._hint(node_id, path, kind == "dir" or path.endswith(".py"))
        self._add_suite(node_id, event)

    def _add_suite(self, node_id, event):
        self.declared.add(node_id)
        self.suite_order.append(node_id)
        self.send(event)

    def _hint(self, node_id, path, python, line=None):
        if python:
            return self._python_hint(node_id, path) + _dotted(node_id)
        return "file://" + path + (":%d" % line if line else "")

    def _python_hint(self, node_id, path):
        """``python<folder>://`` for a node at ``path``: the folder its id is
        relative to, which is ``path`` without the id's path part."""
        base = self._id_base(node_id, path)
        hint = self.hints.get(base)
        if hint is None:
            hint = self.hints[base] = "python<%s>://" % base
        return hint

    def _id_base(self, node_id, path):
        if path.startswith(self.root) and path[len(self.root) : len(self.root) + 1] in ("", os.sep):
            return self.root  # the usual case, without looking closer
        relative = node_id.partition("::")[0]
        tail = os.sep + relative.replace("/", os.sep)
        if relative not in _ROOT_IDS and path.endswith(tail):
            return path[: -len(tail)] or os.sep
        return self.root

    def _declare_item(self, item, contexts):
        """Declares a collected test, and its suites the first time.

        ``contexts`` keeps what the tests of one collector share (their
        suites, their parent's JSON), keyed by the collector's ``id``: this
        runs for every test before the first one starts.
        """
        context = contexts.get(id(item.parent))
        if context is None:
            context = contexts[id(item.parent)] = self._item_context(item)
        suites, parent_json, dotted_below = context
        node_id = item.nodeid
        name = item.name
        for suite_id in suites:
            self.remaining[suite_id] = self.remaining.get(suite_id, 0) + 1
        self.suites_of[node_id] = suites
        self.declared.add(node_id)

        location = item.location
        line = location[1] + 1 if location[1] is not None else None
        path = str(item.path)
        if line is None:
            line_json = ""
        else:
            line_json = ',"line":%d' % line
            if location[0] and location[0] != node_id.partition("::")[0]:
                # The line is in the file the function is defined in, which for a
                # test inherited from a class elsewhere is not the module that
                # collects it (xdist's controller reads the same location).
                path = os.path.normpath(os.path.join(self.root, location[0]))
        # Doctests live in .py files but their node ids are not Python names.
        if not isinstance(item, pytest.Function):
            hint = self._hint(node_id, path, False, line)
        else:
            named = self._tree_id(item)
            if dotted_below is not None and named == dotted_below[0] + name:
                hint = dotted_below[1] + name.partition("[")[0]
            else:
                hint = self._python_hint(named, str(item.path)) + _dotted(named)
        tags = []
        for mark in item.iter_markers():
            if mark.name != "parametrize":
                tag = _tag(mark)
                if tag not in tags:
                    tags.append(tag)
        name_json = _str(name)
        self.writer.write(
            '{"ev":"test","id":%s,"name":%s,"kind":"test","file":%s%s%s,"hint":%s,"meta":%s%s}\n'
            % (
                _str(node_id),
                name_json,
                _str(path),
                parent_json,
                line_json,
                _str(hint),
                name_json,
                ',"tags":' + _encode(tags) if tags else "",
            )
        )

    def _tree_id(self, node):
        """The id of ``node`` in the tree: its node id, but where pytest was
        given a file outside the rootdir (``-c ci/pytest.ini tests/test_a.py``).
        It makes that file's ids relative to the file itself: ``""`` for the
        module, ``::TestX`` below it, ``::tests`` for the folder above. There
        the path from the folder pytest was started in (else the file's own
        name) stands in front, so that the module is a node and the hints
        name the file."""
        node_id = node.nodeid
        if node_id and not node_id.startswith("::"):
            return node_id
        if not node_id and not isinstance(node, pytest.File):
            return node_id  # the session, or a folder pytest was given
        path = str(node.path)
        started = str(self.config.invocation_params.dir)
        if path.startswith(started + os.sep):
            path = path[len(started) + 1 :]
        else:
            path = os.path.basename(path)
        path = path.replace(os.sep, "/")
        if isinstance(node, pytest.Directory) or not node_id:
            return path
        return path + node_id

    def _item_context(self, item):
        """``(suites, parent_json, dotted_below)`` for the tests of ``item``'s
        collector: the suite ids above them, outermost first (declaring the
        new ones); the ``"parent"`` member of their declaration; and
        ``(collector id + "::", its hint + ".")`` to build a child's hint from
        its name, or None where the collector is no Python name."""
        parent = None
        parent_path = None
        suites = []
        for node in item.listchain()[1:-1]:
            suite_id = self._tree_id(node)
            if suite_id in _ROOT_IDS:
                continue  # the session and the rootdir are not nodes of the tree
            if suite_id not in self.declared:
                self._declare_suite(node, suite_id, parent)
            suites.append(suite_id)
            parent = suite_id
            parent_path = node.path
        if parent is None:
            return suites, "", None
        dotted_below = None
        if parent.partition("::")[0].endswith(".py"):
            dotted_below = (parent + "::", self._python_hint(parent, str(parent_path)) + _dotted(parent) + ".")
        return suites, ',"parent":' + _str(parent), dotted_below

    # --- declarations from node ids (xdist controller, collection errors) ---

    def _path_of(self, collector_id, base):
        """The path of a collector known by its id: as collected, else under
        ``base`` (the folder ids are relative to, where known), else under
        the first folder ids can be relative to where it exists (an xdist
        controller's collection problem), else under the rootdir."""
        path = self.collector_paths.get(collector_id)
        if path is not None:
            return path
        if base is not None:
            return os.path.join(base, collector_id)
        for folder in self._id_folders():
            path = os.path.join(folder, collector_id)
            if os.path.exists(path):
                return path
        return os.path.join(self.root, collector_id)

    def _id_folders(self):
        """The rootdir, the folder pytest was started in, and the folders it
        was given: what node ids are relative to."""
        invoked = str(self.config.invocation_params.dir)
        folders = [self.root, invoked]
        for arg in self.config.args:
            folder = os.path.join(invoked, arg.split("::")[0])
            if os.path.isdir(folder):
                folders.append(os.path.normpath(folder))
        return folders

    def _declare_chain(self, collector_id, base=None):
        """Declares the suites of a collector node id (and it); returns its id."""
        if collector_id in _ROOT_IDS:
            return None
        files, classes = _collector_chain(collector_id)
        parent = None
        for index, (so_far, segment) in enumerate(files):
            if so_far not in self.declared:
                path = self._path_of(so_far, base)
                is_file = index == len(files) - 1 and (bool(classes) or not os.path.isdir(path))
                kind = "file" if is_file else "dir"
                event = {"ev": "suite", "id": so_far, "name": segment, "kind": kind, "file": path}
                if parent is not None:
                    event["parent"] = parent
                event["hint"] = self._hint(so_far, path, kind == "dir" or path.endswith(".py"))
                self._add_suite(so_far, event)
            parent = so_far
        path = self._path_of(files[-1][0], base)
        for so_far, name in classes:
            if so_far not in self.declared:
                event = {"ev": "suite", "id": so_far, "parent": parent, "name": name, "kind": "suite", "file": path}
                event["hint"] = self._hint(so_far, path, path.endswith(".py"))
                self._add_suite(so_far, event)
            parent = so_far
        return parent

    def _declare_lazily(self, node_id, location):
        relpath, line0, domain = location
        path = os.path.normpath(os.path.join(self.root, relpath))
        cut = _without_params(node_id).rfind("::")
        parent = self._declare_chain(node_id[:cut], self._id_base(node_id, path)) if cut > 0 else None
        name = node_id[cut + 2 :] if cut > 0 else node_id
        line = line0 + 1 if line0 is not None else None
        event = {"ev": "test", "id": node_id, "name": name, "kind": "test", "file": path}
        if parent is not None:
            event["parent"] = parent
        if line is not None:
            event["line"] = line
        python = path.endswith(".py") and not str(domain).startswith("[doctest]")
        event["hint"] = self._hint(node_id, path, python, line)
        event["meta"] = name
        self.declared.add(node_id)
        self.send(event)

    # --- collection ---

    def pytest_sessionstart(self, session):
        self.session = session
        # The run is past its arguments and about to collect; the matching
        # `session_ended` tells tcrunner the process did not end under it.
        self.writer.write('{"ev":"session_started"}\n')
        # In case teamcity-messages got configured before us after all.
        teamcity = getattr(self.config, "_teamcityReporting", None)
        if teamcity is not None:
            self.config.pluginmanager.unregister(teamcity)
            del self.config._teamcityReporting
        # tcrunner stops pytest with SIGTERM (a time limit, the IDE's stop),
        # which ends Python on the spot: what the running test printed, held
        # by pytest's capture, would go with it.
        if threading.current_thread() is threading.main_thread():
            try:
                self.previous_term = signal.signal(signal.SIGTERM, self._on_term)
                self.term_pid = os.getpid()
            except (ValueError, OSError):
                pass

    def _on_term(self, signum, frame):
        try:
            # Not in a forked child (a multiprocessing worker being
            # terminated): reading the capture there would empty the file
            # pytest's own process captures into.
            if os.getpid() == self.term_pid:
                self._send_running_output()
                self.writer.flush()
        finally:
            previous = self.previous_term
            signal.signal(signal.SIGTERM, previous if callable(previous) else signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

    def _send_running_output(self):
        """Sends what the running test printed so far, from pytest's capture,
        as its output: the run is being stopped under it."""
        capman = self.config.pluginmanager.getplugin("capturemanager")
        if capman is None or not self.output or not self.running or self.writer.writing:
            return
        if self.config.pluginmanager.has_plugin("dsession"):
            return  # xdist: the tests run in the workers, with their capture
        node_id = list(self.running)[-1]
        # A KeyboardInterrupt ends the phase first: pytest has moved what the
        # phase printed into the item's sections, for a report never made.
        run = self.running[node_id]
        for _, key, content in self._item_sections(node_id)[run.sections_seen :]:
            if key in ("stdout", "stderr"):
                self._send_output(node_id, key, content)
        try:
            out, err = capman.read_global_capture()
        except Exception:
            return  # capturing is not on
        self._send_output(node_id, "stdout", out)
        self._send_output(node_id, "stderr", err)

    def _item_sections(self, node_id):
        """The captured sections (``(when, key, content)``) pytest keeps on
        the item of ``node_id`` for its next report."""
        for item in getattr(self.session, "items", None) or ():
            if item.nodeid == node_id:
                return getattr(item, "_report_sections", [])
        return []

    def pytest_collectstart(self, collector):
        # A collection problem names its collector by id alone: keep the
        # paths that the rootdir and the id do not give.
        path = str(getattr(collector, "path", ""))
        if path and self._id_base(collector.nodeid, path) != self.root:
            self.collector_paths[collector.nodeid] = path

    def pytest_collectreport(self, report):
        if report.passed:
            return
        try:
            self._collection_problem(report)
        except Exception as exc:
            self._internal_error("pytest_collectreport", exc)

    def _collection_problem(self, report):
        if report.failed:
            name, outcome, message = "<collection error>", "error", _summary(report.longrepr, collected=True)
        else:
            name, outcome, message = "<collection skipped>", "skipped", _skip_reason(report.longrepr)
        # With --doctest-modules a module is imported twice (as tests and for
        # doctests) and fails the same way twice; junitxml shows one test case.
        seen = (report.nodeid, outcome, message)
        if seen in self.collection_problems:
            return
        self.collection_problems.add(seen)
        parent = self._declare_chain(report.nodeid)
        base = (report.nodeid + "::" if parent is not None else "") + _COLLECTION
        # pytest and doctest may both fail to import a module.
        test_id = self._claim_id(base, "%s#%d")
        path = self._path_of(report.nodeid.split("::")[0], None)
        event = {"ev": "test", "id": test_id, "name": name, "kind": "test", "file": path}
        if parent is not None:
            event["parent"] = parent
        event["hint"] = self._hint(report.nodeid, path, path.endswith(".py"))
        self.send(event)
        self.send({"ev": "started", "id": test_id})
        if self.output:
            self._output(test_id, report, "")
        result = {"ev": "finished", "id": test_id, "outcome": outcome, "duration_ms": 0, "message": message}
        if report.failed:
            result["details"] = report.longreprtext
        self.send(result)

    def pytest_collection_finish(self, session):
        # pytest calls this from a `finally`: when a hook of the collection
        # raised (a conftest's `pytest_collection_modifyitems`), that error
        # is on its way out, no collected test will run, and the one node
        # the tree gets for it is `<internal error>`.
        collection_failed = sys.exc_info()[1] is not None
        self.writer.gather()
        try:
            contexts = {}
            for item in session.items:
                self._declare_item(item, contexts)
            self._send_collected(1 if collection_failed else len(session.items))
            # Suites declared only for collection problems get nothing more.
            for suite_id in reversed(self.suite_order):
                if not self.remaining.get(suite_id):
                    self.send({"ev": "suite_done", "id": suite_id})
        except Exception as exc:
            self._internal_error("pytest_collection_finish", exc)
        self.writer.flush()

    def _send_collected(self, count):
        """The count of tests in the tree: those collected, and a node for
        each collection problem, reported by now (a count short of the
        tree leaves the IDE's progress short of its end)."""
        if not self.collected_sent:
            self.collected_sent = True
            self.send({"ev": "collected", "count": count + len(self.collection_problems)})

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids):
        self._send_collected(len(ids))
        if self.xdist_counted:
            return  # every worker collects the same tests
        self.xdist_counted = True
        # The controller declares suites from node ids as their tests start
        # (_declare_chain); counting each suite's tests now lets it close
        # when its last test ends, as without xdist.
        try:
            remaining = self.remaining
            for node_id in ids:
                suites = self.suites_of[node_id] = _suite_chain(node_id)
                for suite_id in suites:
                    remaining[suite_id] = remaining.get(suite_id, 0) + 1
        except Exception as exc:
            self._internal_error("pytest_xdist_node_collection_finished", exc)

    # --- running ---

    # First, before the terminal writes the test's node id (-v, log_cli): the
    # IDE puts text under the test that is running when it arrives.
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logstart(self, nodeid, location):
        started = ""
        try:
            if nodeid in self.running:
                return  # pytest-rerunfailures runs it again: still the same test
            if self.running:
                self._finish_left_over()
            if nodeid in self.finished:
                # Run once more under the same id (--keep-duplicates, a path
                # given twice): a test of its own, declared again, as
                # pytest's JUnit report shows each run with its verdict.
                self.finished.discard(nodeid)
                self._declare_lazily(nodeid, location)
            elif nodeid not in self.declared:
                self._declare_lazily(nodeid, location)
            self.running[nodeid] = _Run()
            started = '{"ev":"started","id":%s}\n' % _str(nodeid)
        except Exception as exc:
            self._internal_error("pytest_runtest_logstart", exc)
        finally:
            # The previous test's `finished` (held by _finish) goes out with
            # this `started`: one write and one wake-up of tcrunner per test.
            self.writer.flush(started)

    def pytest_runtest_logreport(self, report):
        # Three calls per test: the body is inline, not a method of its own.
        try:
            node_id, run = self._run_of(report)
            outcome = report.outcome
            if outcome != "passed":
                self.probe.annotate(report)
            if run is None:
                if node_id in self.finished:
                    return  # exactly one `finished` per test
                # No logstart (an xdist worker crashed, or a plugin that runs
                # the protocol itself): the test starts here.
                if self.running:
                    self._finish_left_over()
                if node_id not in self.declared:
                    self._declare_lazily(node_id, report.location)
                run = self.running[node_id] = _Run()
                self.writer.flush('{"ev":"started","id":%s}\n' % _str(node_id))
            run.reported = True
            if type(report) is not pytest.TestReport and type(report).__name__ in _SUBTEST_REPORTS:
                if not report.passed and not report.skipped:
                    # The subtest's exception is the one being handled: pytest
                    # reports it from the `with` block's __exit__, unittest
                    # from its `except`. pytest_exception_interact comes too
                    # late, after the subtest is finished.
                    exc = sys.exc_info()[1]
                    if exc is not None:
                        self.probe.classify(report, exc)
                if self.subtests_wait and type(report).__name__ == "SubtestReport":
                    if run.subtests is None:
                        run.subtests = []
                    run.subtests.append(report)
                else:
                    self._subtest(run, node_id, report)
                return
            when = report.when
            withdrawn = None
            if run.subtests and when != "setup":
                # pytest-rerunfailures logs an attempt's reports when it ends,
                # after its subtests': the call's tells whether it stands.
                if outcome == "rerun":
                    withdrawn, run.subtests = run.subtests, None
                else:
                    self._subtests_of_attempt(node_id, run)
            run.duration += report.duration
            sections = report.sections
            if sections:
                seen = run.sections_seen
                if self.output:
                    self._output(node_id, report, when, seen if len(sections) >= seen else 0)
                run.sections_seen = len(sections)
            if run.rerun and when != "call":
                # The end of a failed attempt (its teardown), or the start of the
                # next (older pytest-rerunfailures log no teardown then).
                run.rerun = False
                if when != "setup":
                    return
            if outcome == "passed":
                if when == "call":
                    if run.failed_subtests:
                        self._subtests_failed(run, None)
                    elif hasattr(report, "wasxfail"):
                        run.outcome = "xpass"
                        run.message = _xfail_reason(report.wasxfail)
            elif outcome == "skipped":
                if run.outcome in ("failed", "error"):
                    # A teardown that skips (or an xfail test's teardown that
                    # raised) after a failure: the failure stays the verdict.
                    if when != "call":
                        self._finish(node_id, run)
                    return
                if hasattr(report, "wasxfail"):
                    run.outcome = "xfail"
                    run.message = _xfail_reason(report.wasxfail)
                else:
                    run.outcome = "skipped"
                    run.message = _skip_reason(report.longrepr)
            elif outcome != "failed":
                # "rerun" (pytest-rerunfailures): this attempt failed, another
                # follows; the test finishes with the last attempt's verdict.
                # The failed attempt is told in its stderr (as jest's and
                # vitest's are), so that a test that passed on a rerun shows
                # it was flaky.
                # An attempt that failed by its subtests alone has no text of
                # its own: theirs tells it (they are withdrawn, as pytest does).
                why = _summary(report.longrepr) if report.longrepr else "One or more subtests failed"
                text = report.longreprtext
                for sub in withdrawn or ():
                    if sub.failed:
                        text += "\n%s failed:\n%s\n" % (self._subtest_title(sub), sub.longreprtext)
                run.verdict_unknown()
                run.rerun = True
                run.attempts += 1
                self._send_output(node_id, "stderr", "Attempt %d failed: %s\n%s\n" % (run.attempts, why, text))
                return
            elif when == "call":
                longrepr = report.longrepr
                if isinstance(longrepr, str) and longrepr.startswith("[XPASS(strict)]"):
                    # "[XPASS(strict)] " then the reason, which may be empty.
                    run.outcome = "failed"
                    run.message = longrepr.strip()
                elif run.failed_subtests and isinstance(longrepr, str) and longrepr.startswith("contains "):
                    # pytest 9 fails a passed test that has failed subtests.
                    self._subtests_failed(run, longrepr)
                else:
                    self._failure(run, report)
                    run.failed_call = report  # pytest_exception_interact may tell more
            elif when == "setup":
                run.outcome = "error"
                run.message = _timed_out(report) or "test setup failed: " + _summary(report.longrepr)
                run.details = report.longreprtext
            elif when != "teardown":
                # "???": the xdist worker running the test crashed.
                run.outcome = "error"
                run.message = _summary(report.longrepr)
                run.details = report.longreprtext
            elif run.outcome in ("failed", "error"):
                # The call already failed: keep its verdict, add the teardown's story.
                run.details = (run.details or "") + "\n\nteardown failed:\n" + report.longreprtext
            else:
                # The teardown's failure is the test's (see the module docstring).
                run.outcome = "error"
                run.message = _timed_out(report) or "test teardown failed: " + _summary(report.longrepr)
                run.details = report.longreprtext
                run.comparison = None
            if when != "setup" and when != "call":
                self._finish(node_id, run)
        except Exception as exc:
            self._internal_error("pytest_runtest_logreport", exc)

    def pytest_exception_interact(self, node, call, report):
        # A phase raised. pytest calls this for failures only, after logging
        # the phase's report (before, under pytest-rerunfailures, which logs a
        # test's reports at its end): the test is still running, and the
        # failure of its call is told again now that its exception is known.
        try:
            if call.excinfo is None or not isinstance(report, pytest.TestReport):
                return
            if not self.probe.classify(report, call.excinfo.value):
                return  # the probe caught it already
            run = self._run_of(report)[1]
            if run is not None and run.failed_call is report:
                self._failure(run, report, run.details)
        except Exception as exc:
            self._internal_error("pytest_exception_interact", exc)

    def _run_of(self, report):
        """The id of the running test a report is of, and its run (None if
        none runs under that id). A report under an id nobody collected,
        while one test runs here, is that test's: a plugin renamed the
        report (``report.nodeid``), not the test, whose id stays the one
        a rerun can select."""
        node_id = report.nodeid
        run = self.running.get(node_id)
        if run is None and len(self.running) == 1 and node_id not in self.declared and self._in_order():
            node_id, run = next(iter(self.running.items()))
        return node_id, run

    def _failure(self, run, report, details=None):
        """The verdict of a failed report; ``details``: its text, if known
        (pytest renders ``longreprtext`` anew at every read)."""
        run.outcome = getattr(report, "tcrunner_kind", None) or _guess_kind(report)
        run.message = getattr(report, "tcrunner_message", None) or _summary(report.longrepr)
        run.details = report.longreprtext if details is None else details
        comparison = getattr(report, "tcrunner_comparison", None)
        if comparison and len(comparison) == 2:
            run.comparison = comparison

    def _subtests_failed(self, run, details):
        # PyCharm's unittest runner: report_fail(test, "One or more subtests failed").
        run.outcome = "failed"
        run.message = "One or more subtests failed"
        run.details = details

    def _in_order(self):
        """Whether this process runs its tests one at a time (not an xdist
        controller, whose workers' tests interleave)."""
        if self.one_at_a_time is None:
            self.one_at_a_time = not self.config.pluginmanager.has_plugin("dsession")
        return self.one_at_a_time

    def _finish_left_over(self):
        """Finishes the tests still running when, one test at a time, the
        next one starts or the session ends: a plugin that runs the test
        protocol itself (``runtestprotocol(log=False)``) logged no teardown
        report for them. Their verdict is that of the reports they had; one
        that had none is skipped, as pytest counts it nowhere. Not under
        xdist, whose workers' tests run side by side."""
        if not self._in_order():
            return
        for node_id, run in list(self.running.items()):
            if not run.reported:
                run.outcome = "skipped"
                run.message = "pytest logged no result for this test"
            self._finish(node_id, run)

    def _finish(self, node_id, run, last=True):
        """Sends a test's end; `last`: nothing more of its test item runs
        (a subtest's end is followed by the rest of its test)."""
        if run.subtests:
            self._subtests_of_attempt(node_id, run)  # its last attempt ended early
        if run.held is not None:
            held, run.held = run.held, None
            if run.outcome not in ("passed", "xpass"):
                for event in held:
                    self.send(event)
        del self.running[node_id]
        self.finished.add(node_id)
        if last and self._in_order() and self.writer.batch is None:
            # Held until the next logstart (microseconds away: nothing runs
            # between one test's teardown report and the next test's start)
            # or the end of the session, whichever comes first. Not a
            # subtest's: the rest of its test, which may never end, runs next.
            self.writer.gather()
        # Built by hand: this runs for every test (a dict through the encoder
        # costs more than the rest of the hook).
        line = '{"ev":"finished","id":%s,"outcome":"%s","duration_ms":%d' % (
            _str(node_id),
            run.outcome,
            int(run.duration * 1000),
        )
        if run.message is not None:
            line += ',"message":' + _encode(run.message)
        if run.details:
            line += ',"details":' + _encode(run.details)
        if run.comparison is not None:
            line += ',"expected":%s,"actual":%s' % (_encode(run.comparison[0]), _encode(run.comparison[1]))
        self.writer.write(line + "}\n")
        suites = self.suites_of.get(node_id)
        if suites:  # known from collection, so the counts are right
            remaining = self.remaining
            for suite_id in reversed(suites):
                left = remaining[suite_id] - 1
                remaining[suite_id] = left
                if left == 0:
                    self.writer.write('{"ev":"suite_done","id":%s}\n' % _str(suite_id))

    def _subtest_title(self, report):
        if self.reprs_twice is None:
            self.reprs_twice = self.config.pluginmanager.has_plugin("dsession") and _xdist_reprs_twice(report)
        return _subtest_name(report.context, self.reprs_twice)

    def _subtests_of_attempt(self, node_id, run):
        """Sends the subtests that waited for their attempt's verdict
        (``subtests_wait``): the attempt stands."""
        waiting, run.subtests = run.subtests, None
        for report in waiting:
            self._subtest(run, node_id, report)

    def _subtest(self, run, parent_id, report):
        name = self._subtest_title(report)
        test_id = self._claim_id(parent_id + "::" + name, "%s #%d")
        relpath, line0, _ = report.location
        path = os.path.join(self.root, relpath)
        event = {"ev": "test", "id": test_id, "parent": parent_id, "name": name, "kind": "test", "file": path}
        if line0 is not None:
            event["line"] = line0 + 1
        event["hint"] = self._hint(parent_id, path, path.endswith(".py"), event.get("line"))
        self.send(event)
        self.send({"ev": "started", "id": test_id})
        sub = _Run()
        self.running[test_id] = sub
        if report.sections and self.output:
            self._output(test_id, report, "call")
        if report.passed:
            pass
        elif report.skipped:
            if hasattr(report, "wasxfail"):
                sub.outcome, sub.message = "xfail", _xfail_reason(report.wasxfail)
            else:
                sub.outcome, sub.message = "skipped", _skip_reason(report.longrepr)
        else:
            self._failure(sub, report)
            run.failed_subtests += 1
        sub.duration = report.duration
        self._finish(test_id, sub, last=False)

    def _output(self, node_id, report, when, start=0):
        # Sections accumulate phase by phase (the teardown report repeats
        # setup's and call's) and, with reruns, attempt by attempt. Take the
        # ones not seen yet, of this phase ("" = a collect report).
        suffix = " " + when if when else ""
        for title, text in report.sections[start:]:
            if not text or not title.endswith(suffix):
                continue
            if title.startswith("Captured stdout"):
                stream = "stdout"
            elif title.startswith("Captured stderr"):
                stream = "stderr"
            elif self.logs and title.startswith("Captured log"):
                stream = "stderr"
                if not text.endswith("\n"):
                    text += "\n"  # pytest strips the last newline of log records
            else:
                continue
            self._send_output(node_id, stream, text)

    def _send_output(self, node_id, stream, text):
        # In pieces, so one huge print never becomes one huge event line
        # that tcrunner has to hold whole.
        run = self.running.get(node_id) if self.skip_passed else None
        for start in range(0, len(text), _OUTPUT_PIECE):
            piece = text[start : start + _OUTPUT_PIECE]
            event = {"ev": "output", "id": node_id, "stream": stream, "text": piece}
            if run is None:
                self.send(event)
            else:
                if run.held is None:
                    run.held = []
                run.held.append(event)

    def pytest_keyboard_interrupt(self, excinfo):
        # pytest.exit() in a test or its fixtures: pytest stops the session on
        # purpose and never reports the test. It ends as an error that says
        # why and where, instead of looking like pytest died under it; with
        # a code of 0 (a clean stop) it is left running, for tcrunner to mark
        # it stopped. A KeyboardInterrupt (Ctrl-C, tcrunner stopping pytest)
        # leaves the test running too.
        self.stopped = True
        try:
            exited = isinstance(excinfo.value, pytest.exit.Exception)
            if exited and (not self.running or excinfo.value.returncode == 0):
                # pytest.exit() outside any test (a conftest giving up), or a
                # clean stop: the run stops on purpose, and pytest's code stands.
                self._send_running_output()
                self.log("warning", _PYTEST_EXIT + str(excinfo.value.msg))
                self.writer.flush()
                return
            if not exited:
                self._send_running_output()
                self.writer.flush()
                return
            message = "pytest.exit: %s" % (excinfo.value.msg,)
            details = _traceback_outside_pytest(excinfo.value)
            for node_id, run in list(self.running.items()):
                run.outcome, run.message, run.details, run.comparison = "error", message, details, None
                self._finish(node_id, run)
            self.writer.flush()
        except Exception as exc:
            self._internal_error("pytest_keyboard_interrupt", exc)

    def pytest_internalerror(self, excrepr, excinfo):
        # pytest itself failed (a plugin's or conftest's hook raised): a test
        # of its own carries the traceback, so the tree shows the crash
        # rather than a run that looks empty or complete.
        self.stopped = True
        try:
            test_id = self._claim_id(_INTERNAL_ERROR, "%s#%d")
            details = str(excrepr)
            if excinfo is not None:
                message = _exception_line(excinfo.type, excinfo.value)
            else:
                message = (details.strip().splitlines() or ["INTERNALERROR"])[-1]
            self.send({"ev": "test", "id": test_id, "name": _INTERNAL_ERROR, "kind": "test"})
            self.send(
                {"ev": "finished", "id": test_id, "outcome": "error", "duration_ms": 0, "message": message, "details": details}
            )
            self.writer.flush()
        except Exception:
            pass  # pytest is already reporting an internal error

    def _claim_id(self, base, numbered):
        """``base``, or ``numbered % (base, n)`` for the first n from 2 not yet
        declared; marks it declared."""
        test_id = base
        count = 2
        while test_id in self.declared:
            test_id = numbered % (base, count)
            count += 1
        self.declared.add(test_id)
        return test_id

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session):
        try:
            if self.running and not self.stopped:
                self._finish_left_over()
        except Exception as exc:
            self._internal_error("pytest_sessionfinish", exc)
        self.writer.flush('{"ev":"session_ended"}\n')
        # pytest's own hooks print the summary after this one.
        self.writer.sync()

    def pytest_unconfigure(self, config):
        self.writer.flush()
        del _reporting[:]
