//! `--sandbox` on the real frameworks: what a test can and cannot reach
//! (network, filesystem, processes), that the run's processes end with it,
//! that a normal suite gives the same verdicts inside as outside, and the
//! one-line refusal where the machine cannot give a sandbox (simulated with
//! the `TCRUNNER_SANDBOX_REFUSE` test hook).
mod util;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use util::{assert_clean, tests_by_path, Project, Tcrunner};

const LIMIT: Duration = Duration::from_secs(120);

/// Each test checks one wall of the sandbox; the host side of each is
/// checked after the run too.
const ISOLATION_TESTS: &str = r#"
import errno, os, signal, socket, subprocess, sys, tempfile, time

def test_only_loopback_is_there():
    assert [name for _, name in socket.if_nameindex()] == ["lo"]

def test_the_hosts_loopback_listener_is_out_of_reach():
    client = socket.socket()
    client.settimeout(5)
    try:
        client.connect(("127.0.0.1", int(os.environ["HOST_PORT"])))
    except ConnectionRefusedError:
        return
    raise AssertionError("connected to the host's listener")

def test_the_hosts_daemons_sockets_are_hidden():
    # Their sockets under /run (Docker's, D-Bus's) could be connected to
    # through a read-only mount.
    assert not os.path.isdir("/run") or os.listdir("/run") == []

def test_a_port_of_its_own_works():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    client = socket.create_connection(server.getsockname(), timeout=5)
    conn, _ = server.accept()
    client.sendall(b"hi")
    assert conn.recv(2) == b"hi"

def test_writing_outside_the_allowed_paths_fails():
    for path in [os.environ["OUTSIDE_FILE"], os.path.expanduser("~/.tcrunner-sandbox-probe")]:
        try:
            with open(path, "w") as f:
                f.write("x")
        except OSError as e:
            assert e.errno == errno.EROFS, (path, e)
        else:
            raise AssertionError("wrote " + path)

def test_the_allowed_paths_are_writable():
    with open(os.path.join(os.environ["WRITABLE_DIR"], "written.txt"), "w") as f:
        f.write("ok")
    with open(os.path.join("/tmp", os.environ["PRIVATE_NAME"]), "w") as f:
        f.write("x")
    assert os.environ["TMPDIR"] == "/tmp"
    tempfile.mkstemp()

def test_a_writable_file_is_writable_and_its_folder_is_not():
    path = os.environ["WRITABLE_FILE"]
    with open(path, "w") as f:
        f.write("ok")
    try:
        with open(path + ".beside", "w") as f:
            f.write("x")
    except OSError as e:
        assert e.errno == errno.EROFS, e
    else:
        raise AssertionError("wrote beside " + path)

def test_a_daemon_is_started():
    code = (
        "import os, sys, time\n"
        "if os.fork(): sys.exit(0)\n"
        "os.setsid()\n"
        "if os.fork(): sys.exit(0)\n"
        "time.sleep(120)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def test_a_process_outside_cannot_be_signalled():
    try:
        os.kill(int(os.environ["HOST_PID"]), signal.SIGTERM)
    except ProcessLookupError:
        return
    raise AssertionError("signalled a process outside")
"#;

#[test]
fn a_sandboxed_test_reaches_only_what_it_may() {
    let project = Project::copy("pytest");
    project.write("tests/test_sandbox.py", ISOLATION_TESTS);
    let writable = project.path().join("out");
    std::fs::create_dir(&writable).unwrap();
    let outside = project.path().join("outside.txt");
    // A file of its own is writable too (a rule the kernel takes for a file).
    let writable_file = project.path().join("report.txt");
    std::fs::write(&writable_file, "").unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let mut host = Command::new("sleep").arg("120").spawn().unwrap();
    let private = util::unique("tcrunner-private");
    let run = Tcrunner::pytest(project.path())
        .env("PRIVATE_NAME", &private)
        .env(
            "HOST_PORT",
            listener.local_addr().unwrap().port().to_string(),
        )
        .env("HOST_PID", host.id().to_string())
        .env("OUTSIDE_FILE", &outside)
        .env("WRITABLE_DIR", &writable)
        .env("WRITABLE_FILE", &writable_file)
        .arg("--sandbox")
        .arg("--writable")
        .arg(&writable)
        .arg("--writable")
        .arg(&writable_file)
        .arg("--events-out")
        .arg(project.path().join("events.jsonl"))
        .args(["--path", "tests/test_sandbox.py"])
        .run(LIMIT);
    run.assert_code(0).assert_clean();
    let tests = tests_by_path(&run.stdout);
    assert_eq!(tests.len(), 9, "{}", run.describe());
    assert_eq!(std::fs::read_to_string(&writable_file).unwrap(), "ok");
    // The daemon went with the run.
    run.assert_no_leftovers();
    assert!(
        host.try_wait().unwrap().is_none(),
        "the host's process was killed"
    );
    let _ = host.kill();
    let _ = host.wait();
    assert!(listener.accept().is_err(), "a connection reached the host");
    assert!(!outside.exists());
    // tcrunner's own files are written outside the sandbox, anywhere.
    assert!(project.path().join("events.jsonl").is_file());
    assert_eq!(
        std::fs::read_to_string(writable.join("written.txt")).unwrap(),
        "ok"
    );
    assert!(!PathBuf::from("/tmp").join(&private).exists());
}

/// The same tests unsandboxed fail where the sandbox holds: they tell the
/// two apart.
#[test]
fn unsandboxed_the_isolation_tests_fail() {
    let project = Project::copy("pytest");
    project.write("tests/test_sandbox.py", ISOLATION_TESTS);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut host = Command::new("sleep").arg("120").spawn().unwrap();
    let outside = project.path().join("outside.txt");
    let mut tcrunner = Tcrunner::pytest(project.path());
    tcrunner
        .env(
            "HOST_PORT",
            listener.local_addr().unwrap().port().to_string(),
        )
        .env("HOST_PID", host.id().to_string())
        .env("OUTSIDE_FILE", &outside)
        .env("WRITABLE_DIR", project.path())
        .env("WRITABLE_FILE", project.path().join("report.txt"))
        .env("PRIVATE_NAME", project.path().join("private.txt"))
        .args(["--path", "tests/test_sandbox.py"]);
    let marker = tcrunner.marker().to_owned();
    let run = tcrunner.run(LIMIT);
    let verdicts: BTreeMap<String, String> = tests_by_path(&run.stdout)
        .into_iter()
        .map(|(path, outcome)| {
            (
                path.rsplit(" > ").next().unwrap().to_owned(),
                outcome.verdict,
            )
        })
        .collect();
    for name in [
        "test_only_loopback_is_there",
        "test_the_hosts_loopback_listener_is_out_of_reach",
        "test_writing_outside_the_allowed_paths_fails",
        "test_a_writable_file_is_writable_and_its_folder_is_not",
        "test_a_process_outside_cannot_be_signalled",
    ] {
        assert_eq!(verdicts[name], "failed", "{name}: {}", run.describe());
    }
    // The daemon outlived the run, and the host's process got the signal.
    let left = util::leftovers(&marker);
    for (pid, _) in &left {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
    }
    assert!(!left.is_empty(), "the daemon is gone without a sandbox too");
    assert!(host.wait().unwrap().code().is_none());
    let _ = std::fs::remove_file(dirs_home().join(".tcrunner-sandbox-probe"));
}

fn dirs_home() -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
}

fn node_modules(name: &str) -> PathBuf {
    util::node_modules(name)
        .unwrap_or_else(|| panic!("target/node/{name} missing: run scripts/setup-node.sh"))
}

/// Every test's path and verdict, with and without `--sandbox`.
fn verdicts(command: &mut Tcrunner, code: i32) -> BTreeMap<String, String> {
    let run = command.run(LIMIT);
    run.assert_code(code);
    assert_clean(&run.stdout);
    util::verdicts_by_path(&run.stdout)
}

fn same_inside_and_outside(new: impl Fn() -> Tcrunner) {
    let outside = verdicts(&mut new(), 1);
    let inside = verdicts(new().arg("--sandbox"), 1);
    assert!(outside.len() > 10, "{outside:?}");
    assert_eq!(inside, outside);
}

#[test]
fn a_normal_pytest_suite_passes_identically_inside() {
    let project = Project::copy("pytest");
    same_inside_and_outside(|| Tcrunner::pytest(project.path()));
    // In parallel and in the other dialect too.
    let run = Tcrunner::pytest(project.path())
        .args(["--sandbox", "-j", "2", "--format", "teamcity"])
        .run(LIMIT);
    run.assert_code(1).assert_clean();
    let outside = Tcrunner::pytest(project.path())
        .args(["--format", "teamcity"])
        .run(LIMIT);
    let finished = |run: &util::Run| run.count(&["##teamcity[testFinished"]);
    assert!(finished(&run) > 10);
    assert_eq!(finished(&run), finished(&outside));
}

#[test]
fn a_normal_jest_suite_passes_identically_inside() {
    let project = Project::copy("jest").link_node_modules(&node_modules("jest30"));
    same_inside_and_outside(|| Tcrunner::new(project.path()));
}

/// jest's cache in the host's `/tmp` is read inside, but what the run
/// writes there goes to a private layer gone with it: a test rewriting the
/// cache (to change what the next run reads) changes nothing outside.
/// Named with `--writable`, the folder is written for real.
#[test]
fn a_sandboxed_jest_run_leaves_the_host_cache_as_it_was() {
    let project = Project::copy("jest").link_node_modules(&node_modules("jest30"));
    // `jest_<uid in base 36>`, jest's default.
    let mut uid = unsafe { libc::getuid() };
    let mut digits = Vec::new();
    loop {
        digits.push(std::char::from_digit(uid % 36, 36).unwrap());
        uid /= 36;
        if uid == 0 {
            break;
        }
    }
    let cache = PathBuf::from(format!(
        "/tmp/jest_{}",
        digits.iter().rev().collect::<String>()
    ));
    std::fs::create_dir_all(&cache).unwrap();
    let name = util::unique("tcrunner-cache-probe");
    let planted = cache.join(&name);
    project.write(
        "cache.test.js",
        &format!(
            "const fs = require('fs');\n\
             test('writes into the cache', () => {{\n\
             \x20 fs.writeFileSync({planted:?}, 'x');\n\
             \x20 expect(fs.readFileSync({planted:?}, 'utf8')).toBe('x');\n\
             }});\n"
        ),
    );
    let run = |writable: bool| {
        let mut tcrunner = Tcrunner::new(project.path());
        tcrunner.args(["--sandbox", "--path", "cache.test.js"]);
        if writable {
            tcrunner.arg("--writable").arg(&cache);
        }
        tcrunner.run(LIMIT)
    };
    let inside = run(false);
    inside.assert_code(0).assert_clean();
    assert!(
        inside.passed("writes into the cache"),
        "{}",
        inside.describe()
    );
    assert!(
        !planted.exists(),
        "the sandboxed run wrote the host's cache"
    );
    run(true).assert_code(0);
    assert!(
        planted.exists(),
        "--writable: the host's cache was not written"
    );
    std::fs::remove_file(&planted).unwrap();
}

#[test]
fn a_normal_vitest_suite_passes_identically_inside() {
    let project = Project::copy("vitest").link_node_modules(&node_modules("vitest4"));
    same_inside_and_outside(|| Tcrunner::new(project.path()));
}

/// pytest's cache stays where it is and writable: `--lf` inside runs what
/// failed in the run before, as it does outside.
#[test]
fn last_failed_works_inside() {
    let last_failed = |sandbox: bool| {
        let project = Project::copy("pytest");
        assert!(!project.path().join(".pytest_cache").exists());
        let flags: &[&str] = if sandbox { &["--sandbox"] } else { &[] };
        let all = verdicts(Tcrunner::pytest(project.path()).args(flags), 1);
        let gitignore = project.path().join(".pytest_cache/.gitignore");
        assert!(
            gitignore.is_file(),
            "the cache folder is made as pytest makes it"
        );
        let again = verdicts(
            Tcrunner::pytest(project.path())
                .args(flags)
                .args(["--", "--lf"]),
            1,
        );
        assert!(again.len() < all.len(), "{again:?}");
        again
    };
    assert_eq!(last_failed(true), last_failed(false));
}

/// Where the machine cannot give a sandbox: one line naming what is
/// missing, exit 77, and nothing ran (no stream, no framework).
#[test]
fn an_unavailable_sandbox_is_a_one_line_refusal() {
    let project = Project::copy("pytest");
    project.write("conftest.py", "open('ran.txt', 'w').close()\n");
    for (step, words) in [
        (
            "user-namespace",
            "unprivileged user namespaces are not available",
        ),
        ("proc", "a /proc of its own cannot be mounted"),
    ] {
        let run = Tcrunner::pytest(project.path())
            .env("TCRUNNER_SANDBOX_REFUSE", step)
            .arg("--sandbox")
            .run(LIMIT);
        run.assert_code(77);
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        assert!(run.stderr.contains(words), "{}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.describe());
        assert!(!project.path().join("ran.txt").exists());
    }
}

/// Time limits and signals compose: a test over `--timeout` fails alone,
/// and SIGINT to tcrunner stops the sandboxed tree.
#[test]
fn timeouts_and_signals_reach_the_sandboxed_framework() {
    let project = Project::copy("pytest");
    project.write(
        "tests/test_slow.py",
        "import time\n\ndef test_slow():\n    print('going to sleep', flush=True)\n    time.sleep(60)\n\ndef test_quick():\n    pass\n",
    );
    let run = Tcrunner::pytest(project.path())
        .args([
            "--sandbox",
            "--timeout",
            "1",
            "--path",
            "tests/test_slow.py",
        ])
        .run(LIMIT);
    run.assert_code(124).assert_clean();
    assert!(run.passed("test_quick"), "{}", run.describe());
    assert!(!run.passed("test_slow"));

    let mut tcrunner = Tcrunner::pytest(project.path());
    tcrunner.args([
        "--sandbox",
        "--path",
        "tests/test_slow.py",
        "--grace-period",
        "30",
    ]);
    let mut running = tcrunner.spawn();
    running.wait_for("name='test_slow'", LIMIT);
    std::thread::sleep(Duration::from_millis(500));
    running.signal(libc::SIGINT);
    let run = running.finish(LIMIT);
    run.assert_code(130).assert_clean().assert_no_leftovers();
    assert!(run.was_stopped("test_slow"), "{}", run.describe());
    assert!(run.elapsed < Duration::from_secs(20), "{:?}", run.elapsed);
}

/// A framework killed by a signal inside reads as outside: the crash, its
/// signal and the exit code.
#[test]
fn a_framework_killed_inside_is_reported_as_outside() {
    let project = Project::copy("pytest");
    project.write(
        "tests/test_crash.py",
        "import os, signal\n\ndef test_crash():\n    os.kill(os.getpid(), signal.SIGSEGV)\n",
    );
    let crash = |sandbox: bool| {
        let mut tcrunner = Tcrunner::pytest(project.path());
        if sandbox {
            tcrunner.arg("--sandbox");
        }
        let run = tcrunner.args(["--path", "tests/test_crash.py"]).run(LIMIT);
        run.assert_code(71).assert_clean();
        assert!(run.stderr.contains("SIGSEGV"), "{}", run.stderr);
        // The message; the details hold thread addresses.
        let failure = run.failure_of("test_crash");
        failure.split(" details=").next().unwrap().to_owned()
    };
    assert_eq!(crash(true), crash(false));
}
