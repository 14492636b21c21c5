"""A Promptfoo provider that runs a test suite with tcrunner and returns its
result: written by ``tcrunner promptfoo-provider > provider.py``.

Promptfoo calls ``call_api(prompt, options, context)``; the provider's
``config`` (in promptfooconfig.yaml) names what to run:

    providers:
      - id: file://provider.py
        config:
          test_dir: ./generated        # the project to run (required)
          framework: pytest            # pytest | jest | vitest (else detected)
          args: ["-x"]                 # raw framework arguments (optional; a
                                       # string is split as a shell would)
          timeout: 600                 # seconds for the whole run (optional)
          tcrunner: /path/to/tcrunner  # else $TCRUNNER, else tcrunner on PATH
          pass_policy: core            # and current, group, scenario_id (optional)

A test's ``vars`` may set the same keys, which win over ``config`` (give
``args`` there as one string: Promptfoo makes one test per item of a list). The
output is tcrunner's JSON result (docs/results.md): ``summary``, ``tests``,
``groups``, ``errors`` and ``run`` (with ``exit_code``), so assertions read
``output.summary.failed``, ``output.groups.CORE.passed`` and so on. No
result at all (tcrunner could not start) is returned as the provider's
``error``. Standard library only.
"""
import json
import os
import shlex
import shutil
import subprocess
import tempfile

_KEYS = ("test_dir", "framework", "args", "timeout", "tcrunner", "pass_policy",
         "current", "group", "scenario_id")


def _settings(options, context):
    settings = {}
    config = (options or {}).get("config") or {}
    variables = (context or {}).get("vars") or {}
    for key in _KEYS:
        if key in variables:
            settings[key] = variables[key]
        elif key in config:
            settings[key] = config[key]
    return settings


def _as_list(value):
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(item) for item in value]
    return [str(value)]


def command(settings, result_path):
    """The tcrunner command line for ``settings``, writing ``result_path``."""
    program = settings.get("tcrunner") or os.environ.get("TCRUNNER") or "tcrunner"
    argv = [program, "--project", str(settings["test_dir"]),
            "--json", result_path, "--format", "none"]
    if settings.get("framework"):
        argv += ["--framework", str(settings["framework"])]
    if settings.get("timeout"):
        argv += ["--session-timeout", str(settings["timeout"])]
    if settings.get("pass_policy"):
        argv += ["--pass-policy", str(settings["pass_policy"])]
    for glob in _as_list(settings.get("current")):
        argv += ["--current", glob]
    for rule in _as_list(settings.get("group")):
        argv += ["--group", rule]
    if settings.get("scenario_id"):
        argv += ["--scenario-id", str(settings["scenario_id"])]
    args = settings.get("args")
    args = shlex.split(args) if isinstance(args, str) else _as_list(args)
    if args:
        argv += ["--"] + args
    return argv


def run(settings):
    """Runs tcrunner; returns its result, or raises RuntimeError saying why
    there is none."""
    if not settings.get("test_dir"):
        raise RuntimeError("the provider's config names no test_dir")
    folder = tempfile.mkdtemp(prefix="tcrunner-promptfoo-")
    try:
        path = os.path.join(folder, "result.json")
        argv = command(settings, path)
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
        except OSError as error:
            raise RuntimeError("cannot start %s: %s" % (argv[0], error))
        try:
            with open(path, encoding="utf-8") as file:
                return json.load(file)
        except (OSError, ValueError) as error:
            stderr = done.stderr.decode("utf-8", "replace").strip()
            raise RuntimeError("tcrunner exited with %d and wrote no result (%s): %s"
                               % (done.returncode, error, stderr))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def call_api(prompt, options, context):
    """Promptfoo's entry point: the run's result as the output."""
    try:
        result = run(_settings(options, context))
    except RuntimeError as error:
        return {"error": str(error)}
    return {"output": {key: result[key] for key in ("summary", "tests", "groups", "errors", "run")}}
