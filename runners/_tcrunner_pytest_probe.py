"""What a failure is, caught where the test runs: an assertion or an error,
and the values an assertion compared.

pytest's ``assert`` comparisons are taken from its ``pytest_assertrepr_compare``
hook, unittest's from its equality assertions, patched while the plugin is
configured (as teamcity-messages patches ``assertEqual``). Each failed
report is annotated (``tcrunner_kind``, ``tcrunner_message``,
``tcrunner_comparison``) for the reporter to read.
"""

import pprint
import sys
import traceback
import unittest

import pytest

from _tcrunner_pytest_common import _Plugin
from _tcrunner_pytest_timeout import TimedOut

# Hides the unittest equality wrappers below from unittest tracebacks.
__unittest = True

# Comparisons larger than this (expected + actual) are not sent: the diff
# viewer chokes on them and the text is in the details anyway.
_MAX_COMPARISON = 1 << 20
# How far up from our assertrepr hook the failing assert's frame may be
# (pluggy's call, pytest's callbinrepr, _reprcompare, _call_reprcompare).
_FRAMES_TO_ASSERT = 12

# The last comparison that failed in the running phase: (expected, actual,
# where). `where` says which exception it belongs to, so that a comparison
# that failed inside `pytest.raises(AssertionError)` (or was caught by the
# test) is not pinned on a later failure that compared nothing.
_last_comparison = [None]

# Whether expected and actual of an ``assert`` are swapped (``--jb-swapdiff``
# or the ini key ``swapdiff`` of JetBrains' own plugin), set at configure.
_swap_diff = [False]


def _ini_flag(config, name):
    """A boolean ini key, False where it is not registered."""
    try:
        return bool(config.getini(name))
    except (ValueError, KeyError):
        return False


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
    """``(frame, line)`` of the rewritten ``assert`` whose failed comparison
    pytest is explaining, or None.

    pytest calls ``pytest_assertrepr_compare`` only when an ``assert`` fails,
    from the frame that holds it (its ``@py_assert`` temporaries are locals
    there), and raises the AssertionError from that frame and line right after.
    It explains the last comparison even when that held (``assert not (a ==
    b)``, or ``assert a == b and c``), and its sides are then no failure's:
    its ``_call_reprcompare``, on the way up to the assert, has ``done`` False
    then. Comparing the values again would run the test's code twice (an
    ``__eq__`` that counts, an iterator ``in`` uses up).
    """
    frame = sys._getframe(1)
    for _ in range(_FRAMES_TO_ASSERT):
        if frame is None:
            break
        if frame.f_code.co_name == "_call_reprcompare" and frame.f_locals.get("done") is False:
            return None
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
        _swap_diff[0] = bool(getattr(config.option, "swapdiff", False) or _ini_flag(config, "swapdiff"))
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
        # Any operator, as teamcity-messages: `assert a < b` gives expected=b,
        # unless the project swaps them (as teamcity-messages does, for
        # `assert` only: unittest's order is its own).
        where = _failing_assert()
        if where is not None:
            if _swap_diff[0]:
                _remember(left, right, where)
            else:
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
