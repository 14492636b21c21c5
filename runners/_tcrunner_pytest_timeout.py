"""The per-test time limit (tcrunner's ``--timeout``): with
``TCRUNNER_TEST_TIMEOUT=<seconds>`` a test that outlives the limit fails with
``timed out after N s`` and the run goes on (``_Alarm``; tcrunner's own
backstop stops the run only later)."""

import os
import signal
import threading
import time

import pytest

from _tcrunner_pytest_common import _Plugin


def _clock(monotonic=time.monotonic):
    """The monotonic clock Python started with. A test's fixture may replace
    ``time.monotonic`` while the test runs (freezegun, pytest-freezer, a
    monkeypatch), which would make the time left negative (a clock frozen
    ahead of it, as at a date) or far too long (one frozen behind it);
    freezegun also replaces module attributes that hold it, but not a
    default argument."""
    return monotonic()


class TimedOut(BaseException):
    """A test ran past tcrunner's ``--timeout``.

    A BaseException, like pytest's own outcomes, so that ``except Exception``
    or ``pytest.raises(Exception)`` in the test cannot swallow it.
    """

    # The name a failure's traceback shows (`_tcrunner_pytest.TimedOut: timed
    # out after 1 s`): the plugin's, not this file's.
    __module__ = "_tcrunner_pytest"


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
    run go on (tcrunner's run loop stops the whole run only when a
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
                self.deadline = _clock() + self.seconds
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
        left = self.deadline - _clock()
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
        armed_at = _clock()
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
                rest = theirs[0] - (_clock() - armed_at)
                signal.setitimer(signal.ITIMER_REAL, max(rest, 1e-6), theirs[1])
        if self.fired is not None:
            # The test caught ours and went on. Raised again, the same
            # exception keeps its traceback: where the test was stuck.
            raise self.fired
        return result
