"""tcrunner's reporter inside pytest: every test event as a JSON line on a side channel.

tcrunner writes this file out beside ``tcrunner_pytest.py``, the module it
loads with ``-p tcrunner_pytest``, which imports this one. The events go to
the file descriptor in ``TCRUNNER_EVENT_FD`` (or are appended to the file
``TCRUNNER_EVENT_FILE``, for debugging by hand), one JSON object per line,
exactly as ``docs/event-protocol.md`` and ``src/event.rs`` define them. With
neither variable set the plugin does nothing at all. It never writes to stdout
and never changes pytest's exit code.

Checked against pytest 8.3 (Python 3.8), 8.4 and 9.2 (Python 3.11, 3.13),
pytest-xdist 3.8, pytest-rerunfailures 16.7, pytest-timeout 2.4,
pytest-asyncio 1.5, pytest-randomly 5.1, pytest-repeat 0.9, pytest-mock 3.17,
pytest-benchmark 5.3, pytest-cov 7.1, pytest-django 4.14 and hypothesis 6.170.
Only the standard library (and pytest itself) is used.

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
  test after the real one already passed; junitxml marks the test case).
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

import ast
import json
import linecache
import os
import pprint
import re
import select
import signal
import sys
import threading
import time
import traceback
import unittest

import _pytest
import pluggy
import pytest

# Hides the unittest equality wrappers below from unittest tracebacks.
__unittest = True

_REPORTER = "tcrunner-reporter"
_PROBE = "tcrunner-probe"
_ALARM = "tcrunner-alarm"
_COLLECTION = "<collection>"
_INTERNAL_ERROR = "<internal error>"
_ROOT_IDS = ("", ".")
# Comparisons larger than this (expected + actual) are not sent: the diff
# viewer chokes on them and the text is in the details anyway.
_MAX_COMPARISON = 1 << 20
# How far up from our assertrepr hook the failing assert's frame may be
# (pluggy's call, pytest's callbinrepr, _reprcompare, _call_reprcompare).
_FRAMES_TO_ASSERT = 12

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
# A string as a JSON string, for the lines written by hand on the hot paths.
_str = json.encoder.encode_basestring


def _enabled():
    return bool(os.environ.get("TCRUNNER_EVENT_FD") or os.environ.get("TCRUNNER_EVENT_FILE"))


_channel = []  # the _Writer (or None) once opened: one per process
_reporting = []  # the config being reported: nested in-process sessions are not


def _open_channel():
    if not _channel:
        writer = _Writer.open()
        _channel.append(writer)
        if writer is not None:
            writer.send({"ev": "hello", "runner": "pytest", "version": pytest.__version__})
            if hasattr(os, "register_at_fork"):
                # Only pytest's own process reports: a test that forks and
                # whose child returns into pytest (instead of os._exit) would
                # otherwise report the rest of the session a second time.
                os.register_at_fork(after_in_child=writer.silence)
    return _channel[0]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    if not _enabled():
        return
    teamcity_was_on = _silence_teamcity_messages(config)
    _register_markers(config)
    _stop_early_if_asked(config)
    manager = config.pluginmanager
    if manager.has_plugin(_PROBE):
        return
    limit = _test_timeout()
    if hasattr(config, "workerinput"):
        probe = _WorkerProbe()
    elif limit is not None:
        probe = _PhaseProbe()
    else:
        probe = _Probe()
    manager.register(probe, _PROBE)
    if config.get_verbosity() <= 0 and getattr(config.option, "no_summary", False):
        # In xdist's workers too: there a subtest's letter (`u`) is written
        # while the test runs, into the output the test is reported with.
        manager.register(_NoLetters(), "tcrunner-no-letters")
    if limit is not None:
        manager.register(_Alarm(config, *limit), _ALARM)
    if hasattr(config, "workerinput") or _reporting:
        return  # an xdist worker (the controller reports), or a nested session
    writer = _open_channel()
    if writer is not None:
        _reporting.append(config)
        manager.register(_Reporter(config, writer, probe, teamcity_was_on), _REPORTER)


# The markers tcrunner's groups read (`--pass-policy`, docs/results.md),
# registered so that a project with `--strict-markers` may use them.
_MARKERS = (
    "error: error-handling and edge-case tests (tcrunner group ERROR)",
    "functionality: non-core tests (tcrunner group FUNCTIONALITY)",
    "regression: regression tests (tcrunner group REGRESSION)",
    "scenario(id): the scenario a test was written for (tcrunner's scenario id)",
)


def _register_markers(config):
    for line in _MARKERS:
        config.addinivalue_line("markers", line)


def _tag(mark):
    """A marker as a tag: its name, with its arguments when it has any
    (``scenario(s1)``, ``error(reason=x)``); a string argument unquoted."""
    if not mark.args and not mark.kwargs:
        return mark.name
    shown = lambda value: value if isinstance(value, str) else repr(value)
    args = [shown(arg) for arg in mark.args]
    args.extend("%s=%s" % (key, shown(value)) for key, value in mark.kwargs.items())
    return "%s(%s)" % (mark.name, ", ".join(args))


def _stop_early_if_asked(config):
    """tcrunner adds ``--continue-on-collection-errors`` unless its command
    line stops early (``-x``, ``--maxfail``, stepwise). Those can also come
    from ``addopts`` or ``PYTEST_ADDOPTS``, which only pytest reads: then the
    project's choice to stop at the first problem wins, as without tcrunner."""
    if os.environ.get("TCRUNNER_ADDED_CONTINUE") != "1":
        return
    option = config.option
    if getattr(option, "maxfail", 0) or getattr(option, "stepwise", False) or getattr(option, "stepwise_skip", False):
        option.continue_on_collection_errors = False


class _Plugin:
    """Base of the objects registered with pytest: ``dir()`` of one lists its
    hooks only. pluggy looks at every name ``dir`` gives for a hook, and
    pytest's fixture manager inspects each one for a fixture (unwrapping it,
    walking the class's MRO): for the reporter's helpers and attributes that
    was most of the plugin's fixed cost on a small run."""

    def __dir__(self):
        return [name for name in dir(type(self)) if name.startswith("pytest_")]


class _NoLetters(_Plugin):
    """Blanks pytest's progress letters (`.F.s`) under tcrunner's quiet flags
    (-q --no-summary). They are noise between the service messages, and each
    one is a write to tcrunner's stdout pipe (pytest flushes it per letter;
    PyCharm sets PYTHONUNBUFFERED): a second wake-up of tcrunner per test.
    The category still counts."""

    @pytest.hookimpl(wrapper=True)
    def pytest_report_teststatus(self, report, config):
        result = yield
        if isinstance(result, tuple) and len(result) == 3:
            return result[0], "", ""
        return result


def _silence_teamcity_messages(config):
    """Turns JetBrains' teamcity-messages plugin off, so no test is reported twice.

    Its ``pytest_configure`` reads ``--no-teamcity``; ours runs first
    (tryfirst). ``_Reporter.pytest_sessionstart`` unregisters it in case it
    was configured anyway. Returns whether it would have reported.
    """
    option = config.option
    if not hasattr(option, "no_teamcity"):
        return False
    was_on = not option.no_teamcity and bool(getattr(option, "teamcity", 0) or os.environ.get("TEAMCITY_VERSION"))
    option.no_teamcity = 1
    return was_on


# --- comparisons, captured where the test runs ---------------------------------

# The last comparison that failed in the running phase: (expected, actual,
# where). `where` says which exception it belongs to, so that a comparison
# that failed inside `pytest.raises(AssertionError)` (or was caught by the
# test) is not pinned on a later failure that compared nothing.
_last_comparison = [None]


def _format_value(value):
    # PyCharm sets _JB_PPRINT_PRIMITIVES, so teamcity-messages pformats every
    # value: ints stay `54`, strings become `'spam'` (reference §1.3, §2.4).
    return pprint.pformat(value)


def _remember(expected, actual, where):
    try:
        expected, actual = _format_value(expected), _format_value(actual)
    except Exception:
        _last_comparison[0] = None
        return
    if len(expected) + len(actual) <= _MAX_COMPARISON:
        _last_comparison[0] = (expected, actual, where)
    else:
        _last_comparison[0] = None


def _failing_assert():
    """``(frame, line)`` of the rewritten ``assert`` whose comparison pytest is
    explaining, or None.

    pytest calls ``pytest_assertrepr_compare`` only when an ``assert`` fails,
    from the frame that holds it (its ``@py_assert`` temporaries are locals
    there), and raises the AssertionError from that frame and line right after.
    """
    frame = sys._getframe(1)
    for _ in range(_FRAMES_TO_ASSERT):
        if frame is None:
            break
        if any(name.startswith("@py_assert") for name in frame.f_code.co_varnames):
            return frame, frame.f_lineno
        frame = frame.f_back
    return None


def _raised_at(exc):
    """``(frame, line)`` where ``exc`` was raised: its innermost traceback entry."""
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame, tb.tb_lineno


def _comparison_of(exc, comparison):
    """The remembered ``[expected, actual]`` when it belongs to ``exc``."""
    if comparison is None or not isinstance(exc, AssertionError):
        return None
    expected, actual, where = comparison
    if where is exc:  # unittest's assertEqual and friends
        return [expected, actual]
    raised = _raised_at(exc)
    if isinstance(where, tuple) and raised is not None and raised[0] is where[0] and raised[1] == where[1]:
        return [expected, actual]
    return None


# unittest's assertions that two values are equal. teamcity-messages patches
# assertEqual only; the typed ones are as often called directly
# (assertDictEqual(a, b)) and compare two values just the same.
_UNITTEST_EQUALITY = (
    "assertEqual",
    "assertListEqual",
    "assertTupleEqual",
    "assertDictEqual",
    "assertSetEqual",
    "assertSequenceEqual",
    "assertMultiLineEqual",
)


def _patched_equality(original):
    def assertion(self, first, second, *args, **kwargs):
        __tracebackhide__ = True
        try:
            original(self, first, second, *args, **kwargs)
        except AssertionError as exc:
            # teamcity-messages' diff_tools builds EqualsAssertionError(first,
            # second): unittest's first argument is the expected value.
            _remember(first, second, exc)
            raise

    assertion.__name__ = original.__name__
    assertion.tcrunner_original = original
    return assertion


class _Probe(_Plugin):
    """Leaves on each failed report what a failure is: an assertion or an
    error, and the compared values (``_classify``).

    Where the reporter runs in the same process, it hands this probe each
    failed phase's exception as pytest passes it to
    ``pytest_exception_interact``, a hook called for failures only: the
    probe has no per-phase hook of its own. ``_PhaseProbe`` and
    ``_WorkerProbe`` below are for where the exception must be caught
    earlier.
    """

    def pytest_configure(self, config):
        for name in _UNITTEST_EQUALITY:
            current = getattr(unittest.TestCase, name, None)
            if current is not None and not hasattr(current, "tcrunner_original"):
                setattr(unittest.TestCase, name, _patched_equality(current))

    def pytest_unconfigure(self, config):
        for name in _UNITTEST_EQUALITY:
            original = getattr(getattr(unittest.TestCase, name, None), "tcrunner_original", None)
            if original is not None:
                setattr(unittest.TestCase, name, original)

    @pytest.hookimpl(tryfirst=True)
    def pytest_assertrepr_compare(self, config, op, left, right):
        # Any operator, as teamcity-messages: `assert a < b` gives expected=b.
        where = _failing_assert()
        if where is not None:
            _remember(right, left, where)
        return None

    def classify(self, report, exc):
        """Annotates ``report`` with what ``exc``, its phase's exception, is,
        unless it is annotated already; returns whether it was not."""
        if getattr(report, "tcrunner_kind", None) is not None:
            return False
        comparison = _last_comparison[0]
        _last_comparison[0] = None
        _classify(report, exc, comparison)
        return True

    def annotate(self, report):
        """Annotates a report that did not pass, where the probe caught its
        phase's exception itself (this one never does)."""


class _PhaseProbe(_Probe):
    """A probe that catches every phase's exception as pytest makes its report.

    For a report whose verdict is read before ``pytest_exception_interact``
    comes: a timed-out teardown (tcrunner's ``--timeout``), whose test is
    finished as soon as its report is logged.
    """

    def __init__(self):
        # (node id, phase) -> (exception, comparison) of a phase that raised,
        # kept from its makereport until its report is logged (pytest-
        # rerunfailures logs a test's reports only after all three phases).
        self.raised = {}
        # (node id, phase) of the last phase that raised nothing.
        self.clean = None

    # Three calls per test, so a plain implementation rather than a wrapper
    # (pluggy's generator round trip costs several times this body). It runs
    # before pytest's own, which was registered earlier, and after unittest's
    # tryfirst one, which sets a TestCase's exception on `call`.
    def pytest_runtest_makereport(self, item, call):
        comparison = _last_comparison[0]
        if comparison is not None:
            _last_comparison[0] = None
        excinfo = call.excinfo
        if excinfo is None:
            self.clean = (item.nodeid, call.when)
        else:
            self.raised[(item.nodeid, call.when)] = (excinfo.value, comparison)

    def annotate(self, report):
        outcome = report.outcome
        if outcome == "passed":
            return
        key = (report.nodeid, report.when)
        raised = self.raised.pop(key, None)
        if outcome != "failed":
            return
        if raised is not None:
            _classify(report, raised[0], raised[1])
        elif key == self.clean:
            # A verdict without an exception: strict xpass, pytest 9's
            # failed subtests.
            report.tcrunner_kind = "failed"


class _WorkerProbe(_PhaseProbe):
    """The probe in an xdist worker, which annotates each report before the
    worker sends it to the controller, where the reporter is."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report):
        self.annotate(report)


def _classify(report, exc, comparison):
    """Leaves on ``report`` what ``exc`` is (``tcrunner_kind``, and the
    message and compared values where they say more than the report). A
    failure here must not cost the test its verdict: the reporter then
    guesses from the report's text."""
    try:
        _classify_exception(report, exc, comparison)
    except Exception:
        pass


def _classify_exception(report, exc, comparison):
    name = type(exc).__name__
    if isinstance(exc, TimedOut):
        report.tcrunner_kind = "error"
        report.tcrunner_message = str(exc)
        report.tcrunner_timed_out = True
    elif name in ("DocTestFailure", "UnexpectedException", "MultipleDoctestFailures"):
        # --doctest-continue-on-failure gathers both kinds; the first is shown.
        failure = exc.failures[0] if name == "MultipleDoctestFailures" else exc
        source = "doctest: >>> " + failure.example.source.strip().split("\n")[0]
        if type(failure).__name__ == "UnexpectedException":
            # An example raised: an error, named as other errors are
            # (`KeyError: 'missing'`), not the listing's first line.
            kind, value = failure.exc_info[:2]
            report.tcrunner_kind = "error"
            report.tcrunner_message = "%s raised %s" % (source, _exception_line(kind, value))
        else:
            report.tcrunner_kind = "failed"
            report.tcrunner_comparison = [failure.example.want.rstrip("\n"), failure.got.rstrip("\n")]
            report.tcrunner_message = source
    elif isinstance(exc, (AssertionError, pytest.fail.Exception)):
        # pytest.fail() is an explicit verdict, not a crash: a failure.
        report.tcrunner_kind = "failed"
        comparison = _comparison_of(exc, comparison)
        if comparison is not None:
            report.tcrunner_comparison = comparison
    else:
        report.tcrunner_kind = "error"


def _exception_line(kind, value):
    """``KeyError: 'missing'``, as the traceback's last line shows it."""
    return traceback.format_exception_only(kind, value)[-1].strip()


# --- the per-test time limit (tcrunner --timeout) ------------------------------


class TimedOut(BaseException):
    """A test ran past tcrunner's ``--timeout``.

    A BaseException, like pytest's own outcomes, so that ``except Exception``
    or ``pytest.raises(Exception)`` in the test cannot swallow it.
    """


def _test_timeout():
    """``(seconds, text)`` from ``TCRUNNER_TEST_TIMEOUT``, or None when unset,
    unusable, or the platform has no ``setitimer`` (Windows)."""
    text = os.environ.get("TCRUNNER_TEST_TIMEOUT", "").strip()
    if not text or not hasattr(signal, "setitimer"):
        return None
    try:
        seconds = float(text)
    except ValueError:
        return None
    if not 0 < seconds < float("inf"):  # also refuses nan
        return None
    # tcrunner formats the limit as the user typed it (`1`, `0.5`): echo that.
    return seconds, text


class _Alarm(_Plugin):
    """Fails a test that outlives ``TCRUNNER_TEST_TIMEOUT`` seconds and lets the
    run go on (issue 5; tcrunner's run loop stops the whole run only when a
    test outlives the limit by its backstop margin).

    One deadline per test, from the start of its setup: setup, call and
    teardown together get the limit, as tcrunner's own clock counts from the
    test's start to its end (and as pytest-timeout does by default). An
    ``ITIMER_REAL`` alarm is armed only while a phase runs on the main thread,
    never between phases (pytest's reporting must not be interrupted), and is
    always disarmed with the previous SIGALRM handler put back.

    Left alone: a test that pytest-timeout limits to no more than our limit,
    a phase during which someone else's ``ITIMER_REAL`` alarm (a conftest's,
    pytest-timeout's signal method) will ring before ours, and a SIGALRM
    handler installed from C. Someone else's later alarm is held while ours
    runs and re-armed with the time it has left, so a project-wide
    pytest-timeout default does not turn ``--timeout`` off.

    The handler raises ``TimedOut`` wherever the test is, so the failure's
    traceback shows where it was stuck; the verdict is an ``error`` with the
    message ``timed out after N s``, which tcrunner recognises. A test that
    catches it anyway still gets that verdict when the phase ends.
    """

    def __init__(self, config, seconds, text):
        self.config = config
        self.seconds = seconds
        self.message = "timed out after %s s" % text
        self.deadline = None  # monotonic time the running test must end by
        self.fired = None  # the TimedOut raised in the running test, if any
        self.armed = False  # the handler may raise: a timed phase is running

    def _on_alarm(self, signum, frame):
        __tracebackhide__ = True
        if self.armed:  # not in the instant between a phase's end and disarming
            self.armed = False
            self.fired = TimedOut(self.message)
            raise self.fired

    def _pytest_timeout_limit(self, item):
        """The seconds pytest-timeout limits this test to, or None: its
        ``timeout`` marker, else the first of its ``--timeout``,
        ``PYTEST_TIMEOUT`` and ``timeout`` ini option that is set, as
        pytest-timeout reads them (0 turns its limit off)."""
        manager = self.config.pluginmanager
        if not (manager.has_plugin("timeout") or manager.has_plugin("pytest_timeout")):
            return None
        marker = item.get_closest_marker("timeout")
        if marker is not None:
            values = [marker.kwargs.get("timeout", marker.args[0] if marker.args else None)]
        else:
            values = [self.config.getoption("timeout", None), os.environ.get("PYTEST_TIMEOUT")]
            try:
                values.append(self.config.getini("timeout"))
            except (ValueError, KeyError):
                pass
        for value in values:
            if value is None or value == "":
                continue
            try:
                seconds = float(value)
            except (TypeError, ValueError):
                return None
            return seconds if seconds > 0 else None
        return None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item):
        __tracebackhide__ = True
        self.deadline = None
        self.fired = None
        if threading.current_thread() is threading.main_thread():
            # A shorter (or equal) limit of pytest-timeout's is left to it; a
            # longer one (a project-wide default) does not turn ours off.
            theirs = self._pytest_timeout_limit(item)
            if theirs is None or theirs > self.seconds:
                self.deadline = time.monotonic() + self.seconds
        return (yield from self._phase(False))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        __tracebackhide__ = True
        return (yield from self._phase(False))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item):
        __tracebackhide__ = True
        try:
            return (yield from self._phase(True))
        finally:
            self.deadline = None

    def _phase(self, teardown):
        """Runs one phase (the ``yield``) under the alarm."""
        __tracebackhide__ = True
        if self.deadline is None or self.fired is not None:
            # Not timed, or already timed out: teardown still runs, untimed
            # (tcrunner's backstop covers a teardown that hangs).
            return (yield)
        left = self.deadline - time.monotonic()
        if left <= 0:
            if teardown:
                return (yield)
            self.fired = TimedOut(self.message)
            raise self.fired  # the phase does not start
        previous = signal.getsignal(signal.SIGALRM)
        if previous is None:
            return (yield)  # a handler installed from C: not ours to replace
        # Someone else's alarm (a conftest's, pytest-timeout's signal method):
        # left alone when it rings first, else held while ours runs.
        theirs = signal.getitimer(signal.ITIMER_REAL)
        if 0 < theirs[0] <= left:
            return (yield)
        signal.signal(signal.SIGALRM, self._on_alarm)
        self.armed = True
        armed_at = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, left)
        try:
            result = yield
        except (TimedOut, KeyboardInterrupt, pytest.exit.Exception):
            raise
        except BaseException as exc:
            if self.fired is not None:
                raise self.fired from exc  # it caught ours, then failed
            raise
        finally:
            # In this order: an alarm due now finds the handler disarmed.
            self.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            if theirs[0] > 0:
                # Theirs runs on with the time it has left (at once if none).
                rest = theirs[0] - (time.monotonic() - armed_at)
                signal.setitimer(signal.ITIMER_REAL, max(rest, 1e-6), theirs[1])
        if self.fired is not None:
            # The test caught ours and went on. Raised again, the same
            # exception keeps its traceback: where the test was stuck.
            raise self.fired
        return result


# --- the side channel ----------------------------------------------------------


class _Writer:
    """Writes whole lines with os.write; goes quiet for good once the reader is gone.

    Each event is written as it happens, one line per write call, except
    what is gathered: the declarations at the end of collection, and a test's
    ``finished``, which goes out with the next test's ``started`` (one write
    and one wake-up of tcrunner per test).
    """

    def __init__(self, fd):
        self.fd = fd
        self.batch = None  # a list while gathering lines
        self.inband = False  # see to_stdout
        self.writing = False  # finishing a cut-short write, which a signal's handler must not cut into

    def to_stdout(self):
        """Writes the lines into pytest's stdout from now on, in frames
        tcrunner takes out (src/process/reader.rs): where tests write straight
        to stdout (-s), the one pipe keeps their text and the events in the
        order they happened. Each frame is one write of at most PIPE_BUF
        bytes, which no other writer to the pipe can cut into, and carries
        the run's key, so that no test's text is taken for one."""
        self.inband = True
        self.frame_open = ("\x1b_tcrunner;%s;" % os.environ.get("TCRUNNER_INBAND_KEY", "")).encode("ascii", "replace")

    @classmethod
    def open(cls):
        try:
            fd_text = os.environ.get("TCRUNNER_EVENT_FD")
            if fd_text:
                fd = int(fd_text)
                os.fstat(fd)  # is it open at all?
            else:
                fd = os.open(os.environ["TCRUNNER_EVENT_FILE"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            # Processes that tests start must not hold the pipe open after
            # pytest exits (xdist's workers get the variable, not the fd).
            os.set_inheritable(fd, False)
        except (ValueError, KeyError, OSError):
            return None
        return cls(fd)

    def send(self, event):
        self.write(_encode(event) + "\n")

    def write(self, line):
        """Writes complete lines (the text ends with a newline)."""
        if self.batch is not None:
            self.batch.append(line)
            return
        fd = self.fd
        if fd is None:
            return
        data = line.encode("utf-8", "replace")  # lone surrogates become "?"
        if self.inband:
            fd = 1
            try:
                sys.stdout.flush()  # what the test printed goes first
            except Exception:
                pass
            opening = self.frame_open
            room = _PIPE_BUF - len(opening) - 2
            # A signal's handler must not put frames of its own between these.
            writing, self.writing = self.writing, True
            try:
                for at in range(0, len(data), room):
                    self._write_all(fd, b"".join((opening, data[at : at + room], b"\x1b\\")))
            finally:
                self.writing = writing
            return
        self._write_all(fd, data)

    def _write_all(self, fd, data):
        try:
            written = os.write(fd, data)
            if written < len(data):
                self._write_rest(fd, data, written)
        except (BlockingIOError, InterruptedError):
            self._write_rest(fd, data, 0)
        except OSError:
            self.fd = None  # EPIPE and friends: tcrunner is gone; the run goes on

    def _write_rest(self, fd, data, written):
        # A signal's handler that writes must wait for the rest of this line
        # (one whole `os.write` it cannot cut into).
        writing, self.writing = self.writing, True
        view = memoryview(data)[written:]
        try:
            while view:
                try:
                    view = view[os.write(fd, view) :]
                except (BlockingIOError, InterruptedError):
                    select.select([], [fd], [], 1.0)
        except (OSError, ValueError):
            self.fd = None
        finally:
            self.writing = writing

    def silence(self):
        """Writes nothing more (in a forked child: the pipe is the parent's)."""
        self.fd = None
        self.batch = None

    def gather(self):
        self.batch = []

    def flush(self, last=""):
        """Writes the lines gathered, and ``last`` after them."""
        lines, self.batch = self.batch, None
        if lines:
            lines.append(last)
            self.write("".join(lines))
        elif last:
            self.write(last)


# --- the reporter, in the process that talks to tcrunner ----------------------


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
    )

    def __init__(self):
        self.verdict_unknown()
        self.duration = 0.0
        self.sections_seen = 0  # report.sections already sent (they accumulate)
        self.rerun = False  # this attempt failed and pytest-rerunfailures runs it again
        self.attempts = 0  # attempts failed so far that pytest-rerunfailures ran again
        self.failed_call = None  # the report of a failed call, until the test finishes

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
        # Whether a test's `finished` waits for the next test's `started` to
        # share one write (None: not known yet; never under xdist). Where
        # tests write straight to pytest's stdout (-s, tee-sys), the events
        # go there too, so that each test's text stays between its events.
        self.coalesce = None
        capture = config.getoption("capture", "fd")
        if capture in ("no", "tee-sys"):
            writer.to_stdout()
            writer.send({"ev": "live_output"})
        # With -s, and with tee-sys, tests' output already goes live to
        # pytest's stdout, which tcrunner shows; sending it again would double it.
        self.output = capture != "tee-sys"
        self.declared = set()  # ids of every suite and test declared
        self.suite_order = []  # suite ids in declaration order
        self.suites_of = {}  # test id -> its suites, outermost first
        self.remaining = {}  # suite id -> its tests not finished yet
        self.running = {}  # test id -> _Run
        self.previous_term = None  # SIGTERM's handler before ours
        self.term_pid = None  # the process that set ours
        self.finished = set()  # test ids
        self.collected_sent = False
        self.xdist_counted = False
        self.reprs_twice = None  # see _xdist_reprs_twice
        self.collection_problems = set()  # (node id, outcome, message) already reported
        self.internal_errors = 0
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
        elif dotted_below is not None and node_id == dotted_below[0] + name:
            hint = dotted_below[1] + name.partition("[")[0]
        else:
            hint = self._python_hint(node_id, str(item.path)) + _dotted(node_id)
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
            suite_id = node.nodeid
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
            name, outcome, message = "<collection error>", "error", _summary(report.longrepr)
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
        self.writer.gather()
        try:
            contexts = {}
            for item in session.items:
                self._declare_item(item, contexts)
            self._send_collected(len(session.items))
            # Suites declared only for collection problems get nothing more.
            for suite_id in reversed(self.suite_order):
                if not self.remaining.get(suite_id):
                    self.send({"ev": "suite_done", "id": suite_id})
        except Exception as exc:
            self._internal_error("pytest_collection_finish", exc)
        self.writer.flush()

    def _send_collected(self, count):
        if not self.collected_sent:
            self.collected_sent = True
            self.send({"ev": "collected", "count": count})

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
            node_id = report.nodeid
            outcome = report.outcome
            if outcome != "passed":
                self.probe.annotate(report)
            run = self.running.get(node_id)
            if run is None:
                if node_id in self.finished:
                    return  # exactly one `finished` per test
                # No logstart (an xdist worker crashed, or a plugin's own report):
                # `finished` starts the test implicitly.
                if node_id not in self.declared:
                    self._declare_lazily(node_id, report.location)
                run = self.running[node_id] = _Run()
            if type(report) is not pytest.TestReport and type(report).__name__ in _SUBTEST_REPORTS:
                self._subtest(run, node_id, report)
                return
            when = report.when
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
                run.verdict_unknown()
                run.rerun = True
                run.attempts += 1
                self._send_output(
                    node_id,
                    "stderr",
                    "Attempt %d failed: %s\n%s\n" % (run.attempts, _summary(report.longrepr), report.longreprtext),
                )
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
            run = self.running.get(report.nodeid)
            if run is not None and run.failed_call is report:
                self._failure(run, report, run.details)
        except Exception as exc:
            self._internal_error("pytest_exception_interact", exc)

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

    def _finish(self, node_id, run):
        del self.running[node_id]
        self.finished.add(node_id)
        if self.coalesce is None:
            self.coalesce = not self.config.pluginmanager.has_plugin("dsession")
        if self.coalesce and self.writer.batch is None:
            # Held until the next logstart (microseconds away: nothing runs
            # between one test's teardown report and the next test's start)
            # or the end of the session, whichever comes first.
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

    def _subtest(self, run, parent_id, report):
        if self.reprs_twice is None:
            self.reprs_twice = self.config.pluginmanager.has_plugin("dsession") and _xdist_reprs_twice(report)
        name = _subtest_name(report.context, self.reprs_twice)
        test_id = self._claim_id(parent_id + "::" + name, "%s #%d")
        relpath, line0, _ = report.location
        path = os.path.join(self.root, relpath)
        event = {"ev": "test", "id": test_id, "parent": parent_id, "name": name, "kind": "test", "file": path}
        if line0 is not None:
            event["line"] = line0 + 1
        event["hint"] = self._hint(parent_id, path, path.endswith(".py"), event.get("line"))
        self.send(event)
        self.send({"ev": "started", "id": test_id})
        if report.sections and self.output:
            self._output(test_id, report, "call")
        sub = _Run()
        if report.passed:
            pass
        elif report.skipped:
            if hasattr(report, "wasxfail"):
                sub.outcome, sub.message = "xfail", _xfail_reason(report.wasxfail)
            else:
                sub.outcome, sub.message = "skipped", _skip_reason(report.longrepr)
        else:
            # The subtest's exception is the one being handled: pytest
            # reports it from the `with` block's __exit__, unittest from its
            # `except`. pytest_exception_interact comes too late, after the
            # subtest is finished.
            exc = sys.exc_info()[1]
            if exc is not None:
                self.probe.classify(report, exc)
            self._failure(sub, report)
            run.failed_subtests += 1
        sub.duration = report.duration
        self.running[test_id] = sub
        self._finish(test_id, sub)

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
        for start in range(0, len(text), _OUTPUT_PIECE):
            piece = text[start : start + _OUTPUT_PIECE]
            self.send({"ev": "output", "id": node_id, "stream": stream, "text": piece})

    def pytest_keyboard_interrupt(self, excinfo):
        # pytest.exit() in a test or its fixtures: pytest stops the session on
        # purpose and never reports the test. It ends as an error that says
        # why and where, instead of looking like pytest died under it. A
        # KeyboardInterrupt (Ctrl-C, tcrunner stopping pytest) leaves the test
        # running, for tcrunner to mark it stopped.
        try:
            exited = isinstance(excinfo.value, pytest.exit.Exception)
            if exited and not self.running:
                # pytest.exit() outside any test (a conftest giving up): the
                # run stops on purpose, and pytest's code stands.
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
        self.writer.flush()

    def pytest_unconfigure(self, config):
        self.writer.flush()
        del _reporting[:]


# --- helpers -------------------------------------------------------------------

#: The most bytes one write to a pipe puts there whole, whatever else writes to it.
_PIPE_BUF = getattr(select, "PIPE_BUF", 512)

#: Characters per `output` event.
_OUTPUT_PIECE = 256 * 1024


def _without_params(node_id):
    """``tests/v[2]/test_a.py::test_eval[6*9-42]`` -> ``tests/v[2]/test_a.py::test_eval``.

    Parameters open at the first ``[`` after the file's path: folder and file
    names may hold brackets, class and function names cannot.
    """
    path, separator, rest = node_id.partition("::")
    return path + separator + rest.split("[", 1)[0]


def _collector_chain(collector_id):
    """The suites a collector's node id names, outermost first, as ``(id,
    name)`` pairs: its path's folders and file, then its classes.
    ``a/t.py::K`` -> ``[("a", "a"), ("a/t.py", "t.py")], [("a/t.py::K", "K")]``."""
    parts = _without_params(collector_id).split("::")
    files = []
    so_far = ""
    for segment in parts[0].split("/"):
        so_far = so_far + "/" + segment if so_far else segment
        files.append((so_far, segment))
    classes = []
    for name in parts[1:]:
        so_far = so_far + "::" + name
        classes.append((so_far, name))
    return files, classes


def _suite_chain(node_id):
    """The ids of the suites ``_declare_chain`` declares above a test, outermost
    first: ``a/t.py::K::test[1]`` -> ``a``, ``a/t.py``, ``a/t.py::K``."""
    cut = _without_params(node_id).rfind("::")
    if cut <= 0:
        return []
    files, classes = _collector_chain(node_id[:cut])
    return [suite_id for suite_id, _ in files + classes if suite_id not in _ROOT_IDS]


def _dotted(node_id):
    """``tests/test_a.py::TestX::test_eval[6*9-42]`` -> ``tests.test_a.TestX.test_eval``."""
    path, _, rest = _without_params(node_id).partition("::")
    if path.endswith(".py"):
        path = path[:-3]
    dotted = path.replace("/", ".")
    if rest:
        dotted += "." + rest.replace("::", ".")
    return dotted


def _class_line(cls, path):
    """The 1-based line of ``class Name``, without parsing the module."""
    line = getattr(cls, "__firstlineno__", None)  # Python 3.13+
    if line:
        return line
    limit = None
    for value in vars(cls).values():
        code = getattr(getattr(value, "__func__", value), "__code__", None)
        if code is not None and (limit is None or code.co_firstlineno < limit):
            limit = code.co_firstlineno
    pattern = re.compile(r"\s*class\s+%s\b" % re.escape(cls.__name__))
    found = None
    for index, text in enumerate(linecache.getlines(path)):
        if limit is not None and index + 1 >= limit:
            break
        if pattern.match(text):
            found = index + 1
            if limit is None:
                break
    return found


# `ValueError:`, `Failed:`, `mod.CustomError:`: an exception line whose
# message is empty on that line.
_BARE_EXCEPTION_NAME = re.compile(r"^[A-Za-z_][\w.]*:$")


def _first_line(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _summary(longrepr):
    """One line: ``assert 54 == 42``, ``TypeError: boom``."""
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        line = _first_line(crash.message)
        if _BARE_EXCEPTION_NAME.match(line):
            # `ValueError: ` and the message on the lines after: it starts
            # with a line break (`raise ValueError("\nwhy")`).
            rest = crash.message.strip().split("\n", 1)[1:]
            if rest and _first_line(rest[0]):
                line += " " + _first_line(rest[0])
        # pytest keeps the class name when the explanation has more lines.
        if line.startswith("AssertionError: assert "):
            line = line[len("AssertionError: ") :]
        return line
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return _first_line(str(longrepr[2]))
    text = str(longrepr)
    # A collection error's text ends with the exception's "E   " line.
    for line in reversed(text.splitlines()):
        if line.startswith("E   "):
            return line[1:].strip()
    return _first_line(text)


def _traceback_outside_pytest(exc):
    """The traceback of ``exc`` without pytest's and pluggy's own frames (the
    session loop around a test), as Python prints it."""
    inside = tuple(os.path.dirname(module.__file__) + os.sep for module in (_pytest, pluggy))
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if not frame.filename.startswith(inside)]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip("\n")


def _timed_out(report):
    """``timed out after N s`` when the report's phase ran out of time
    (tcrunner matches that message, so no phase prefix goes in front)."""
    return getattr(report, "tcrunner_message", None) if getattr(report, "tcrunner_timed_out", False) else None


def _guess_kind(report):
    # Reports from elsewhere (an xdist crash, a plugin) carry no probe data.
    summary = _summary(report.longrepr)
    return "failed" if summary.startswith(("assert", "AssertionError", "Failed:")) else "error"


def _skip_reason(longrepr):
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
    else:
        reason = str(longrepr)
    reason = reason[len("Skipped: ") :] if reason.startswith("Skipped: ") else reason
    return reason or None


def _xfail_reason(wasxfail):
    reason = str(wasxfail)
    reason = reason[len("reason: ") :] if reason.startswith("reason: ") else reason
    return reason or None  # unittest's expectedFailure gives none


#: How the log line of a ``pytest.exit()`` outside any test begins; tcrunner
#: then keeps pytest's exit code.
_PYTEST_EXIT = "pytest.exit: "

#: The report classes of subtests: pytest 9's own, and the pytest-subtests
#: plugin's (pytest 7 and 8).
_SUBTEST_REPORTS = ("SubtestReport", "SubTestReport")


def _subtest_name(context, reprs_twice):
    """As pytest shows it: ``[msg] (i=1)``; ``(<subtest>)`` with neither."""
    parts = []
    if context.msg is not None:
        parts.append("[%s]" % context.msg)
    if context.kwargs:
        kwargs = context.kwargs.items()
        if reprs_twice:
            kwargs = [(key, _unrepr(value)) for key, value in kwargs]
        parts.append("(%s)" % ", ".join("%s=%s" % item for item in kwargs))
    return " ".join(parts) or "(<subtest>)"


def _xdist_reprs_twice(report):
    """Whether pytest's SubtestContext reprs its values again when it is
    deserialized (pytest 9.2: ``i=0`` arrives from an xdist worker as
    ``i='0'``), so that subtest ids are the same with and without xdist."""
    try:
        context = type(report.context)
        return context._from_json(context(msg=None, kwargs={"k": 0})._to_json()).kwargs["k"] != "0"
    except Exception:
        return False


def _unrepr(text):
    try:
        value = ast.literal_eval(text)
    except Exception:
        return text
    return value if isinstance(value, str) else text


# Say hello as soon as `-p` imports us, before conftests load: a run that
# breaks in a conftest is then not mistaken for a reporter that never loaded.
# xdist sets PYTEST_XDIST_WORKER in workers before their plugins load.
if _enabled() and not os.environ.get("PYTEST_XDIST_WORKER"):
    _open_channel()
