//! The IDE's socket transport (`JB_TEAMCITY_SOCKET_PATH`, or
//! `JB_TEAMCITY_SOCKET_PORT` with `JB_TEAMCITY_SOCKET_HOST`): a fake IDE
//! listens on a Unix socket or a loopback TCP port and reads the whole
//! stream, which must pass `tcrunner check` and hold the messages a stdout
//! run writes, while stdout keeps the plain text alone; the IDE going away
//! mid-run, and a socket nobody listens on, for pytest, jest and vitest.
mod util;

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use util::{
    assert_clean, messages, node_modules, repo, tests_by_path, unique, Project, Run, Tcrunner,
};

const LIMIT: Duration = Duration::from_secs(240);

/// Tree-changing messages: none of them may reach stdout when the
/// messages go to the socket.
const TREE: &[&str] = &[
    "testSuiteStarted",
    "testSuiteFinished",
    "testStarted",
    "testFinished",
    "testFailed",
    "testIgnored",
    "testingStarted",
    "testingFinished",
    "enteredTheMatrix",
    "testCount",
];

#[derive(Clone, Copy, Debug)]
enum Kind {
    Unix,
    Tcp,
}

/// A fake IDE: one listener, one connection, read on a thread.
struct FakeIde {
    env: Vec<(&'static str, String)>,
    reader: JoinHandle<Vec<u8>>,
    socket_file: Option<PathBuf>,
    /// Set once the run is over: a connection that has not come by then
    /// never will.
    over: Arc<AtomicBool>,
}

impl FakeIde {
    /// Listens and reads the whole stream.
    fn listen(kind: Kind) -> FakeIde {
        FakeIde::listen_until(kind, None)
    }

    /// Listens, and closes the connection once what it read holds `needle`
    /// (an IDE stopping the run); `None` reads to the end.
    fn listen_until(kind: Kind, needle: Option<&str>) -> FakeIde {
        let needle = needle.map(|n| n.as_bytes().to_vec());
        FakeIde::serve(kind, move |stream, _| read(stream, needle))
    }

    /// An IDE that hangs: it takes the connection, reads nothing, and holds
    /// it until the run is over.
    fn stall(kind: Kind) -> FakeIde {
        FakeIde::serve(kind, |stream, over| {
            while !over.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(20));
            }
            drop(stream);
            Vec::new()
        })
    }

    /// Listens, and hands the one connection to `serve` on a thread, with
    /// the flag that says the run is over; what it returns is what the IDE
    /// read.
    fn serve(
        kind: Kind,
        serve: impl FnOnce(Box<dyn Read + Send>, &AtomicBool) -> Vec<u8> + Send + 'static,
    ) -> FakeIde {
        let over = Arc::new(AtomicBool::new(false));
        let run_over = Arc::clone(&over);
        match kind {
            Kind::Unix => {
                let path = repo()
                    .join("target/tmp")
                    .join(unique("ide"))
                    .with_extension("sock");
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                let listener = UnixListener::bind(&path).unwrap();
                listener.set_nonblocking(true).unwrap();
                let reader = thread::spawn(move || {
                    let Some(stream) = accept(|| listener.accept().map(|(s, _)| s), &run_over)
                    else {
                        return Vec::new();
                    };
                    stream.set_nonblocking(false).unwrap();
                    stream.set_read_timeout(Some(LIMIT)).unwrap();
                    serve(Box::new(stream), &run_over)
                });
                FakeIde {
                    env: vec![("JB_TEAMCITY_SOCKET_PATH", path.display().to_string())],
                    reader,
                    socket_file: Some(path),
                    over,
                }
            }
            Kind::Tcp => {
                let listener = TcpListener::bind("127.0.0.1:0").unwrap();
                let port = listener.local_addr().unwrap().port();
                listener.set_nonblocking(true).unwrap();
                let reader = thread::spawn(move || {
                    let Some(stream) = accept(|| listener.accept().map(|(s, _)| s), &run_over)
                    else {
                        return Vec::new();
                    };
                    stream.set_nonblocking(false).unwrap();
                    stream.set_read_timeout(Some(LIMIT)).unwrap();
                    serve(Box::new(stream), &run_over)
                });
                FakeIde {
                    env: vec![
                        ("JB_TEAMCITY_SOCKET_PORT", port.to_string()),
                        ("JB_TEAMCITY_SOCKET_HOST", "127.0.0.1".into()),
                    ],
                    reader,
                    socket_file: None,
                    over,
                }
            }
        }
    }

    /// Points `tcrunner` at this IDE.
    fn apply(&self, tcrunner: &mut Tcrunner) {
        for (key, value) in &self.env {
            tcrunner.env(key, value);
        }
    }

    /// What the IDE read, once the run is over.
    fn stream(self) -> Vec<u8> {
        self.over.store(true, Ordering::SeqCst);
        self.read()
    }

    /// What the IDE read, while the run may still go on.
    fn read(self) -> Vec<u8> {
        let read = self.reader.join().expect("the fake IDE's reader");
        if let Some(path) = self.socket_file {
            let _ = std::fs::remove_file(path);
        }
        read
    }
}

/// Waits for one connection; `None` once the run is `over` without one
/// (panics after [`LIMIT`]).
fn accept<S>(mut accept: impl FnMut() -> std::io::Result<S>, over: &AtomicBool) -> Option<S> {
    let deadline = Instant::now() + LIMIT;
    loop {
        // Read before trying: a connection made before the run ended is
        // waiting by then.
        let was_over = over.load(Ordering::SeqCst);
        match accept() {
            Ok(stream) => return Some(stream),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && was_over => return None,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                thread::sleep(Duration::from_millis(10));
            }
            Err(e) => panic!("no connection: {e}"),
        }
    }
}

/// Reads to the end, or until `needle`, then closes the connection.
fn read(mut stream: impl Read, needle: Option<Vec<u8>>) -> Vec<u8> {
    let mut all = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => return all,
            Ok(n) => all.extend_from_slice(&buf[..n]),
        }
        if let Some(needle) = &needle {
            if all.windows(needle.len()).any(|w| w == needle.as_slice()) {
                return all;
            }
        }
    }
}

/// The messages of a stream as a sorted list of lines without what differs
/// between two runs of the same tests: durations, and the ids, which follow
/// the order parallel workers finish in.
fn normalised(stream: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = messages(stream)
        .iter()
        .map(|m| {
            let attrs: Vec<String> = m
                .attrs()
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "duration" | "nodeId" | "parentNodeId"))
                .map(|(k, v)| format!("{k}={:?}", without_addresses(v)))
                .collect();
            format!("{} {}", m.name, attrs.join(" "))
        })
        .collect();
    lines.sort();
    lines
}

/// `text` with memory addresses (`at 0x7f…`, which pytest prints in
/// objects' reprs) made equal.
fn without_addresses(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("0x") {
        out.push_str(&rest[..at + 2]);
        rest = rest[at + 2..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
        out.push('…');
    }
    out.push_str(rest);
    out
}

/// Lines of `got` that `want` lacks, and the reverse: what differs, short.
fn difference(got: &[String], want: &[String]) -> String {
    let only = |a: &[String], b: &[String]| {
        a.iter()
            .filter(|line| !b.contains(line))
            .map(|line| line.chars().take(300).collect::<String>())
            .collect::<Vec<_>>()
    };
    format!(
        "only in the socket's: {:#?}\nonly in stdout's: {:#?}",
        only(got, want),
        only(want, got)
    )
}

/// Runs `command` once writing to stdout, then once for each kind of
/// socket, and compares.
fn same_as_stdout(framework: &str, make: impl Fn() -> Tcrunner) {
    let plain = make().run(LIMIT);
    assert_clean(&plain.stdout);
    let want = normalised(&plain.stdout);
    assert!(
        want.iter().any(|m| m.starts_with("testStarted")),
        "{}",
        plain.describe()
    );
    for kind in [Kind::Unix, Kind::Tcp] {
        let ide = FakeIde::listen(kind);
        let mut tcrunner = make();
        ide.apply(&mut tcrunner);
        let run = tcrunner.run(LIMIT);
        let stream = ide.stream();
        assert_eq!(run.code(), plain.code(), "{kind:?}: {}", run.describe());
        assert_clean(&stream);
        let got = normalised(&stream);
        assert!(
            got == want,
            "{framework} {kind:?}: {}",
            difference(&got, &want)
        );
        assert_eq!(tests_by_path(&stream), tests_by_path(&plain.stdout));
        // The stream starts as the IDE expects it, on the socket.
        assert!(
            stream.starts_with(b"##teamcity[enteredTheMatrix]\n"),
            "{}",
            String::from_utf8_lossy(&stream)
        );
        // stdout keeps the text only.
        let text = run.text();
        assert!(
            text.contains(&format!("Launching {framework} with arguments")),
            "{kind:?}: {text}"
        );
        let on_stdout: Vec<String> = messages(&run.stdout)
            .into_iter()
            .map(|m| m.name)
            .filter(|name| TREE.contains(&name.as_str()))
            .collect();
        assert!(
            on_stdout.is_empty(),
            "{kind:?}: {on_stdout:?} on stdout:\n{text}"
        );
        run.assert_no_leftovers();
    }
}

fn jest_install() -> PathBuf {
    node_modules("jest30")
        .or_else(|| node_modules("jest29"))
        .expect("no jest under target/node: run `bash scripts/setup-node.sh`")
}

fn vitest_install() -> PathBuf {
    node_modules("vitest4")
        .or_else(|| node_modules("vitest3"))
        .expect("no vitest 3 or 4 under target/node: run `bash scripts/setup-node.sh`")
}

/// The install's own folder: the fixture with its `node_modules`.
fn install_project(modules: &Path) -> PathBuf {
    modules.parent().unwrap().to_path_buf()
}

#[test]
fn pytest_messages_go_to_the_socket_and_text_to_stdout() {
    let project = Project::copy("pytest");
    same_as_stdout("pytest", || Tcrunner::pytest(project.path()));
}

#[test]
fn jest_messages_go_to_the_socket_and_text_to_stdout() {
    let project = install_project(&jest_install());
    same_as_stdout("jest", || Tcrunner::new(&project));
}

#[test]
fn vitest_messages_go_to_the_socket_and_text_to_stdout() {
    let project = install_project(&vitest_install());
    same_as_stdout("vitest", || Tcrunner::new(&project));
}

/// The IDE closes the socket once `needle` arrived, while a test sleeps:
/// the run stops as it does when stdout's reader goes away.
fn ide_gone(project: &Path, pytest: bool, file: &str, needle: &str) {
    for kind in [Kind::Unix, Kind::Tcp] {
        let ide = FakeIde::listen_until(kind, Some(needle));
        let mut tcrunner = if pytest {
            Tcrunner::pytest(project)
        } else {
            Tcrunner::new(project)
        };
        tcrunner.args(["--path", file]);
        ide.apply(&mut tcrunner);
        let running = tcrunner.spawn();
        let stream = ide.read();
        assert!(String::from_utf8_lossy(&stream).contains(needle));
        let run: Run = running.finish(LIMIT);
        assert_eq!(run.code(), 141, "{kind:?}: {}", run.describe());
        assert!(
            !run.stderr.contains("tcrunner") && !run.stderr.contains("panicked"),
            "{kind:?}: no error spam: {}",
            run.stderr
        );
        assert!(run.elapsed < Duration::from_secs(120), "{:?}", run.elapsed);
        run.assert_no_leftovers();
    }
}

#[test]
fn pytest_stops_quietly_when_the_ide_closes_the_socket() {
    let project = Project::copy("faults/pytest");
    ide_gone(project.path(), true, "test_slow.py", "name='test_sleeps'");
}

#[test]
fn jest_stops_quietly_when_the_ide_closes_the_socket() {
    let project = Project::copy("faults/jest").link_node_modules(&jest_install());
    ide_gone(project.path(), false, "slow.test.js", "name='waits'");
}

#[test]
fn vitest_stops_quietly_when_the_ide_closes_the_socket() {
    let project = Project::copy("faults/vitest").link_node_modules(&vitest_install());
    ide_gone(project.path(), false, "slow.test.mjs", "name='waits'");
}

/// A socket nobody listens on: one line, exit 68, and the framework never
/// starts (its conftest would leave a file behind).
/// An IDE that hangs and reads nothing more: the session's time limit
/// still ends the run on time, with every result in the result file.
#[test]
fn an_ide_that_stops_reading_does_not_hold_back_the_time_limit() {
    let project = Project::copy("faults/pytest");
    for kind in [Kind::Unix, Kind::Tcp] {
        let ide = FakeIde::stall(kind);
        let json = project.path().join(format!("{kind:?}.json"));
        let mut tcrunner = Tcrunner::pytest(project.path());
        tcrunner
            .args(["--session-timeout", "4", "--grace-period", "1", "--json"])
            .arg(&json)
            .args(["--path", "test_chatty.py"])
            // More than a loopback TCP connection's buffers hold.
            .env("CHATTY_MB", "16");
        ide.apply(&mut tcrunner);
        let run = tcrunner.run(LIMIT);
        ide.stream();
        assert_eq!(run.code(), 124, "{kind:?}: {}", run.describe());
        assert!(run.elapsed < Duration::from_secs(60), "{:?}", run.elapsed);
        assert!(
            run.stderr.contains("bytes were not delivered"),
            "{kind:?}: {}",
            run.stderr
        );
        // The file is whole: the run's end, and the test that was running
        // (its 16 MB report held back with the framework, or sent).
        let doc = util::json(&json);
        assert_eq!(doc["run"]["exit_code"], 124, "{kind:?}");
        assert_eq!(doc["tests"][0]["name"], "test_prints_megabytes", "{kind:?}");
        run.assert_no_leftovers();
    }
}

#[test]
fn a_socket_nobody_listens_on_stops_the_run_before_it_starts() {
    let project = Project::copy("faults/pytest");
    project.write(
        "conftest.py",
        "import pathlib\npathlib.Path(__file__).with_name('ran.txt').write_text('ran')\n",
    );
    let missing = project.path().join("no-ide.sock");
    let closed_port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port().to_string()
    };
    let cases: [(&[(&str, &str)], &str); 3] = [
        (
            &[("JB_TEAMCITY_SOCKET_PATH", missing.to_str().unwrap())],
            "cannot connect to the IDE's socket",
        ),
        (
            &[
                ("JB_TEAMCITY_SOCKET_PORT", &closed_port),
                ("JB_TEAMCITY_SOCKET_HOST", "127.0.0.1"),
            ],
            "cannot connect to the IDE's socket 127.0.0.1:",
        ),
        (
            &[("JB_TEAMCITY_SOCKET_PORT", "not-a-port")],
            "JB_TEAMCITY_SOCKET_PORT=\"not-a-port\" is not a port number",
        ),
    ];
    for (env, said) in cases {
        let mut tcrunner = Tcrunner::pytest(project.path());
        tcrunner.args(["--path", "test_slow.py"]);
        for (key, value) in env {
            tcrunner.env(key, value);
        }
        let run = tcrunner.run(LIMIT);
        assert_eq!(run.code(), 68, "{env:?}: {}", run.describe());
        assert!(run.stdout.is_empty(), "{env:?}: {}", run.describe());
        let lines: Vec<&str> = run.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{env:?}: {}", run.stderr);
        assert!(lines[0].starts_with("tcrunner: "), "{}", run.stderr);
        assert!(lines[0].contains(said), "{env:?}: {}", run.stderr);
        assert!(
            !project.path().join("ran.txt").exists(),
            "pytest ran: {env:?}"
        );
    }
    // With `--format none` there is nothing to send: the socket is not
    // needed, and the run goes on.
    let run = Tcrunner::pytest(project.path())
        .args([
            "--format",
            "none",
            "--path",
            "test_exit.py",
            "--",
            "-k",
            "not exit",
        ])
        .env("JB_TEAMCITY_SOCKET_PATH", &missing)
        .run(LIMIT);
    assert_ne!(run.code(), 68, "{}", run.describe());
    assert!(project.path().join("ran.txt").exists());
}

/// `convert`'s stream goes to the socket too.
#[test]
fn convert_writes_its_messages_to_the_socket() {
    let junit = repo().join("tests/fixtures/reports/pytest-junit.xml");
    let plain = util::output(&mut util::tcrunner(&["convert", junit.to_str().unwrap()]));
    for kind in [Kind::Unix, Kind::Tcp] {
        let ide = FakeIde::listen(kind);
        let mut command = util::tcrunner(&["convert", junit.to_str().unwrap()]);
        for (key, value) in &ide.env {
            command.env(key, value);
        }
        let run = util::output(&mut command);
        let stream = ide.stream();
        assert_eq!(run.status.code(), plain.status.code(), "{kind:?}");
        assert!(
            run.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&run.stdout)
        );
        assert_clean(&stream);
        let (got, want) = (normalised(&stream), normalised(&plain.stdout));
        assert!(got == want, "{kind:?}: {}", difference(&got, &want));
        assert!(!normalised(&stream).is_empty());
    }
}
