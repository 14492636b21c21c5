#!/usr/bin/env bash
# Creates the Python virtualenvs the pytest integration tests and benchmarks
# use: target/venv/pytest8, pytest8-subtests, pytest9 and pytest9-reruns under
# the repo root.
#
# Idempotent and quiet: each venv carries a stamp file naming the Python and
# the pinned packages it was built with; when the stamp matches, nothing runs.
# Only PyPI is reached, through pip.
#
# Usage: scripts/setup-python.sh [PYTHON]   (default: python3, or $PYTHON)
set -euo pipefail

# Pins: the newest release of each line (checked with `pip index versions`).
# xdist goes into both venvs (the plugin is checked with -n on both pytests);
# teamcity-messages, JetBrains' own reporter, only into pytest9, for
# comparisons and benchmarks; pytest-timeout too, for tests/timeout.rs (a
# project's own pytest-timeout limit beside tcrunner's --timeout);
# pytest-subtests, the `subtests` fixture before pytest 9 had its own, in a
# venv of its own (it also changes how pytest 8 reports unittest subtests);
# pytest-rerunfailures in one of its own too (every run it is installed in
# pays for its hooks), with pytest-describe, whose blocks are files inside
# a file (tests/history.rs, `--lf`). junitparser, an independent JUnit XML reader, goes
# into pytest9 for tests/results_files.rs (it reads --junit-xml files).
PYTEST8=8.4.2
PYTEST9=9.2.0
XDIST=3.8.0
TEAMCITY_MESSAGES=1.33
PYTEST_TIMEOUT=2.4.0
PYTEST_SUBTESTS=0.15.0
PYTEST_RERUNFAILURES=16.7
JUNITPARSER=5.0.3
PYTEST_DESCRIBE=3.2.0

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${1:-${PYTHON:-python3}}"
pyver="$("$python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')"

# Two runs at once (parallel test jobs) take turns.
mkdir -p "$root/target/venv"
if command -v flock >/dev/null; then
    exec 9>"$root/target/venv/.lock"
    flock 9
fi

# make_venv NAME PACKAGE...
make_venv() {
    local name="$1"
    shift
    local dir="$root/target/venv/$name"
    local stamp="$dir/.tcrunner-stamp"
    local want="python=$pyver $*"
    if [[ -x "$dir/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
        return 0
    fi
    echo "setup-python: building target/venv/$name ($*)" >&2
    rm -rf "$dir"
    "$python" -m venv "$dir"
    "$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
        --no-input "$@"
    printf '%s' "$want" >"$stamp"
}

make_venv pytest8 "pytest==$PYTEST8" "pytest-xdist==$XDIST"
make_venv pytest8-subtests "pytest==$PYTEST8" "pytest-subtests==$PYTEST_SUBTESTS"
make_venv pytest9-reruns "pytest==$PYTEST9" "pytest-rerunfailures==$PYTEST_RERUNFAILURES" \
    "pytest-describe==$PYTEST_DESCRIBE"
make_venv pytest9 "pytest==$PYTEST9" "pytest-xdist==$XDIST" \
    "teamcity-messages==$TEAMCITY_MESSAGES" "pytest-timeout==$PYTEST_TIMEOUT" \
    "junitparser==$JUNITPARSER"
