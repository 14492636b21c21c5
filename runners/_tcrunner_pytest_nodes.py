"""What pytest's node ids and reports say, as plain functions: the suites
and dotted name a node id stands for, a class's line, a subtest's name, a
failed report's one-line summary and a skip's reason."""

import ast
import linecache
import os
import re
import traceback

import _pytest
import pluggy

_ROOT_IDS = ("", ".")


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


# How pytest's text of a fixture error starts: `file /p/test_x.py, line 3`.
_FIXTURE_ERROR_START = re.compile(r"^file .+, line \d+$")


def _summary(longrepr, collected=False):
    """One line: ``assert 54 == 42``, ``TypeError: boom``. A report's text
    says what failed on its first line (a plugin's text, pytest-check's
    under xdist), but a collection error's (``collected``) and a fixture
    error's on the exception's last ``E`` line (their first line is where)."""
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
    if collected or _FIXTURE_ERROR_START.match(_first_line(text)):
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
