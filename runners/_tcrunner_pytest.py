"""tcrunner's reporter inside pytest: every test event as a JSON line on a side channel.

tcrunner writes this file out beside ``tcrunner_pytest.py``, the module it
loads with ``-p tcrunner_pytest``, which imports this one. The events go to
the file descriptor in ``TCRUNNER_EVENT_FD`` (or are appended to the file
``TCRUNNER_EVENT_FILE``, for debugging by hand), one JSON object per line,
exactly as ``docs/event-protocol.md`` and ``src/event.rs`` define them. With
neither variable set the plugin does nothing at all. It never writes to stdout
and never changes pytest's exit code.

This module sets the plugin up: it says hello on import and registers its
parts with pytest, each a module of its own beside it:

- ``_tcrunner_pytest_reporter``: the reporter, which turns pytest's hooks
  into events (how pytest maps to the tree is described there);
- ``_tcrunner_pytest_probe``: what a failure is (an assertion or an error)
  and the values it compared, caught where the test runs;
- ``_tcrunner_pytest_timeout``: the per-test time limit (tcrunner's
  ``--timeout``);
- ``_tcrunner_pytest_order``: the test history's order (tcrunner's
  ``--ff`` and ``--sw``);
- ``_tcrunner_pytest_channel``: the side channel, whole lines written to a
  pipe, or framed into pytest's stdout;
- ``_tcrunner_pytest_nodes``: what node ids and reports say, as plain
  functions;
- ``_tcrunner_pytest_common``: what the others share.

Checked against pytest 8.3 (Python 3.8), 8.4 and 9.2 (Python 3.11, 3.13),
pytest-xdist 3.8, pytest-rerunfailures 16.7, pytest-timeout 2.4,
pytest-asyncio 1.5, pytest-randomly 5.1, pytest-repeat 0.9, pytest-mock 3.17,
pytest-benchmark 5.3, pytest-cov 7.1, pytest-django 4.14 and hypothesis 6.170.
Only the standard library (and pytest itself) is used.
"""

import os

import pytest

from _tcrunner_pytest_channel import _Writer
from _tcrunner_pytest_order import _Order, _order
from _tcrunner_pytest_common import _Plugin
from _tcrunner_pytest_probe import _PhaseProbe, _Probe, _WorkerProbe
from _tcrunner_pytest_reporter import _Reporter, _quiet_as_tcrunner, _reporting
from _tcrunner_pytest_timeout import _Alarm, _test_timeout

_REPORTER = "tcrunner-reporter"
_PROBE = "tcrunner-probe"
_ALARM = "tcrunner-alarm"
_ORDER = "tcrunner-order"


def _enabled():
    return bool(os.environ.get("TCRUNNER_EVENT_FD") or os.environ.get("TCRUNNER_EVENT_FILE"))


_channel = []  # the _Writer (or None) once opened: one per process


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
    # Quiet only (-q): at the normal verbosity (an ini's `-v` against our
    # `-q`) pytest writes each file's name before its letters, and the
    # letters' progress count after them.
    if _quiet_as_tcrunner(config):
        # In xdist's workers too: there a subtest's letter (`u`) is written
        # while the test runs, into the output the test is reported with.
        manager.register(_NoLetters(), "tcrunner-no-letters")
    if limit is not None:
        manager.register(_Alarm(config, *limit), _ALARM)
    order = _order()
    if order is not None:
        # xdist's workers too: each collects, and all must agree on the
        # order; the controller alone says what it chose.
        say = None if hasattr(config, "workerinput") else _say
        manager.register(_Order(order, say), _ORDER)
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


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    """Registers what projects set up for PyCharm carry for JetBrains' own
    pytest plugin (teamcity-messages): ``--jb-swapdiff`` and the ini keys
    ``swapdiff`` and ``skippassedoutput``, so that such a project runs as it
    does in the IDE, also under ``--strict-config``. This hook comes after
    the installed plugins registered their options and before pytest reads
    the command line: where teamcity-messages is installed, its own
    registrations stand (same names, same meaning)."""
    if not _enabled():
        return
    try:
        parser.addoption(
            "--jb-swapdiff",
            action="store_true",
            dest="swapdiff",
            default=False,
            help="swap expected and actual of an assert's comparison (tcrunner, as PyCharm)",
        )
    except ValueError:
        pass  # registered by teamcity-messages
    known = getattr(parser, "_inidict", {})
    for name, text in (
        ("skippassedoutput", "drop the captured output of passed tests (tcrunner, as PyCharm)"),
        ("swapdiff", "swap expected and actual of an assert's comparison (tcrunner, as PyCharm)"),
    ):
        if name not in known:
            parser.addini(name, text, type="bool")


def _say(text):
    """A run-level line for the stream (what ``--shard`` chose)."""
    writer = _open_channel()
    if writer is not None:
        writer.send({"ev": "log", "level": "info", "text": text})


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


# Say hello as soon as `-p` imports us, before conftests load: a run that
# breaks in a conftest is then not mistaken for a reporter that never loaded.
# xdist sets PYTEST_XDIST_WORKER in workers before their plugins load.
if _enabled() and not os.environ.get("PYTEST_XDIST_WORKER"):
    _open_channel()
