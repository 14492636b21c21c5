//! Shared helpers for the integration tests: run the real `tcrunner` binary
//! on a throw-away copy of a fixture project, check its stream with
//! `tcrunner check`, and find processes of a run that outlived it.
//!
//! Use it from a test crate with `mod util;`. Every run gets a unique marker
//! in its environment (`TCRUNNER_TEST_MARKER`), which the framework and
//! everything it starts inherit, so [`leftovers`] can tell this run's
//! processes from everyone else's.
#![allow(dead_code)] // each test crate uses a different part of it

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// The environment variable that marks every process of one run.
pub const MARKER_VAR: &str = "TCRUNNER_TEST_MARKER";

/// The binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tcrunner"))
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A path under the repository root.
pub fn path(relative: &str) -> PathBuf {
    repo().join(relative)
}

/// `target/venv/pytest<major>/bin/python`; panics when
/// `scripts/setup-python.sh` has not made it.
pub fn python(major: u32) -> PathBuf {
    let python = repo().join(format!("target/venv/pytest{major}/bin/python"));
    assert!(
        python.is_file(),
        "{} is missing: run `bash scripts/setup-python.sh`",
        python.display()
    );
    python
}

/// The pytest 9 interpreter.
pub fn pytest9() -> PathBuf {
    python(9)
}

/// A JSON file, parsed.
pub fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The `name` and the fields `keys` of each test of a `--json` result
/// file, in its order (`""` for a field a test lacks or that is no string).
pub fn result_tests(path: &Path, keys: [&str; 2]) -> Vec<(String, String, String)> {
    let result = json(path);
    let tests = result["tests"].as_array().expect("a result's tests");
    let text =
        |test: &serde_json::Value, key: &str| test[key].as_str().unwrap_or_default().to_owned();
    (tests.iter())
        .map(|t| (text(t, "name"), text(t, keys[0]), text(t, keys[1])))
        .collect()
}

/// `tcrunner <args>` with stdin closed and no `TEAMCITY_VERSION` inherited.
pub fn tcrunner(args: &[&str]) -> Command {
    let mut command = Command::new(bin());
    command
        .args(args)
        .env_remove("TEAMCITY_VERSION")
        .env_remove("VIRTUAL_ENV")
        .stdin(Stdio::null());
    command
}

/// Runs a command to the end, capturing stdout and stderr.
pub fn output(command: &mut Command) -> std::process::Output {
    command.output().expect("run tcrunner")
}

/// `target/node/<name>/node_modules` (`jest29`, `jest30`, `vitest3`, ...)
/// when `scripts/setup-node.sh` has installed it.
pub fn node_modules(name: &str) -> Option<PathBuf> {
    let dir = repo().join("target/node").join(name);
    let stamp = dir.join(".tcrunner-stamp");
    let modules = dir.join("node_modules");
    (stamp.is_file() && modules.is_dir()).then_some(modules)
}

/// node 22 from `target/node/node22` (vitest 5 needs it).
pub fn node22() -> Option<PathBuf> {
    let node = repo().join("target/node/node22/bin/node");
    node.is_file().then_some(node)
}

/// A unique string for this process and call.
pub fn unique(label: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{label}-{}-{n}", std::process::id())
}

/// A temporary copy of a fixture project, deleted on drop.
pub struct Project {
    dir: PathBuf,
}

impl Project {
    /// Copies `tests/fixtures/<fixture>` into a fresh folder under `target/tmp`.
    pub fn copy(fixture: &str) -> Project {
        let dir = repo()
            .join("target/tmp")
            .join(unique(&fixture.replace('/', "-")));
        copy_dir(&repo().join("tests/fixtures").join(fixture), &dir);
        Project { dir }
    }

    /// Links `node_modules` (from [`node_modules`]) into the project, so the
    /// project finds that jest or vitest install.
    pub fn link_node_modules(self, modules: &Path) -> Project {
        std::os::unix::fs::symlink(modules, self.dir.join("node_modules"))
            .expect("symlink node_modules");
        self
    }

    /// Writes (or overwrites) a file in the project.
    pub fn write(&self, relative: &str, content: &str) -> &Project {
        let path = self.dir.join(relative);
        std::fs::create_dir_all(path.parent().expect("a file in a folder")).expect("create folder");
        std::fs::write(path, content).expect("write file");
        self
    }

    /// The project folder.
    pub fn path(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        if !thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create project copy");
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.expect("read fixture folder");
        // What a run of the fixture in place left behind is not the
        // fixture: a copy starts without pytest's cache.
        if entry.file_name() == ".pytest_cache" {
            continue;
        }
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy fixture file");
        }
    }
}

/// A `tcrunner` command line being built.
pub struct Tcrunner {
    command: Command,
    marker: String,
    /// A pause after each 4 KB read from stdout (a slow consumer).
    throttle: Option<Duration>,
    /// Nobody reads stdout until tcrunner has exited.
    stall: bool,
}

impl Tcrunner {
    /// `tcrunner --project <project>`, with a fresh marker.
    pub fn new(project: &Path) -> Tcrunner {
        let marker = unique("tcrunner-marker");
        let mut command = Command::new(bin());
        command
            .arg("--project")
            .arg(project)
            .env(MARKER_VAR, &marker)
            .env_remove("TEAMCITY_VERSION")
            .env_remove("VIRTUAL_ENV")
            .stdin(Stdio::null());
        Tcrunner {
            command,
            marker,
            throttle: None,
            stall: false,
        }
    }

    /// `tcrunner --project <project> --python <pytest 9 interpreter>`.
    pub fn pytest(project: &Path) -> Tcrunner {
        let mut t = Tcrunner::new(project);
        t.arg("--python").arg(pytest9());
        t
    }

    /// Adds an argument.
    pub fn arg(&mut self, arg: impl AsRef<std::ffi::OsStr>) -> &mut Tcrunner {
        self.command.arg(arg);
        self
    }

    /// Adds arguments.
    pub fn args<I: IntoIterator<Item = S>, S: AsRef<std::ffi::OsStr>>(
        &mut self,
        args: I,
    ) -> &mut Tcrunner {
        self.command.args(args);
        self
    }

    /// Sets an environment variable for tcrunner (and so for the framework).
    pub fn env(&mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> &mut Tcrunner {
        self.command.env(key, value);
        self
    }

    /// Starts tcrunner with `signal` ignored, as a shell's `&` or nohup
    /// starts a program.
    pub fn ignoring(&mut self, signal: i32) -> &mut Tcrunner {
        use std::os::unix::process::CommandExt;
        // SAFETY: signal() is async-signal-safe.
        unsafe {
            self.command.pre_exec(move || {
                libc::signal(signal, libc::SIG_IGN);
                Ok(())
            });
        }
        self
    }

    /// Reads tcrunner's stdout slowly: 4 KB, then `pause`, and so on.
    pub fn throttle_stdout(&mut self, pause: Duration) -> &mut Tcrunner {
        self.throttle = Some(pause);
        self
    }

    /// Reads nothing from tcrunner's stdout while it runs (a harness that
    /// reads the output only after the run), but keeps the pipe open; what
    /// is left in it is read once tcrunner has exited.
    pub fn stall_stdout(&mut self) -> &mut Tcrunner {
        self.stall = true;
        self
    }

    /// The marker every process of this run carries in its environment.
    pub fn marker(&self) -> &str {
        &self.marker
    }

    /// Starts it with stdout and stderr piped.
    pub fn spawn(&mut self) -> Running {
        self.command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = self.command.spawn().expect("start tcrunner");
        let (tx, rx) = mpsc::channel();
        let mut stdout = child.stdout.take().expect("piped");
        let throttle = self.throttle;
        let (go, stalled) = mpsc::channel::<()>();
        let stall = self.stall.then_some(go);
        thread::spawn(move || {
            // Until `Running::finish` drops its sender: tcrunner has exited.
            let _ = stalled.recv();
            let mut buf = vec![0u8; if throttle.is_some() { 4096 } else { 64 * 1024 }];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
                if let Some(pause) = throttle {
                    thread::sleep(pause);
                }
            }
        });
        let mut stderr = child.stderr.take().expect("piped");
        let stderr = thread::spawn(move || {
            let mut all = Vec::new();
            let _ = stderr.read_to_end(&mut all);
            all
        });
        Running {
            child,
            stall,
            stdout_rx: rx,
            stdout: Vec::new(),
            stderr: Some(stderr),
            marker: self.marker.clone(),
            started: Instant::now(),
        }
    }

    /// Runs it as `tcrunner | head` would: reads stdout until it contains
    /// `needle`, then closes the pipe, and waits for the end (panics after
    /// `limit`). `stdout` of the result holds what was read.
    pub fn run_closing_stdout_at(&mut self, needle: &str, limit: Duration) -> Run {
        self.command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = self.command.spawn().expect("start tcrunner");
        let mut stderr = child.stderr.take().expect("piped");
        let stderr = thread::spawn(move || {
            let mut all = Vec::new();
            let _ = stderr.read_to_end(&mut all);
            all
        });
        let mut stdout = child.stdout.take().expect("piped");
        let (tx, rx) = mpsc::channel();
        let needle = needle.as_bytes().to_vec();
        // Read on a thread, so a run that never prints the needle still ends the test.
        thread::spawn(move || {
            let mut read = Vec::new();
            let mut buf = [0u8; 4096];
            while !contains(&read, &needle) {
                match stdout.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => read.extend_from_slice(&buf[..n]),
                }
            }
            drop(stdout); // the consumer goes away
            let _ = tx.send(read);
        });
        let read = rx.recv_timeout(limit).unwrap_or_else(|_| {
            let _ = child.kill();
            kill_marked(&self.marker);
            panic!("tcrunner did not print the awaited text within {limit:?}");
        });
        let deadline = started + limit;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for tcrunner") {
                break status;
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                kill_marked(&self.marker);
                panic!("tcrunner still running {limit:?} after its stdout closed");
            }
            thread::sleep(Duration::from_millis(50));
        };
        let stderr = stderr.join().expect("stderr reader");
        Run {
            stdout: read,
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            status,
            elapsed: started.elapsed(),
            marker: self.marker.clone(),
        }
    }

    /// Runs it to the end; panics (after killing the run) if it takes longer than `limit`.
    pub fn run(&mut self, limit: Duration) -> Run {
        self.spawn().finish(limit)
    }
}

/// A `tcrunner` that is running.
pub struct Running {
    child: Child,
    /// Held while stdout is to stay unread ([`Tcrunner::stall_stdout`]).
    stall: Option<mpsc::Sender<()>>,
    stdout_rx: Receiver<Vec<u8>>,
    stdout: Vec<u8>,
    stderr: Option<thread::JoinHandle<Vec<u8>>>,
    marker: String,
    started: Instant,
}

impl Running {
    /// tcrunner's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Reads stdout until it contains `needle`; panics after `limit`.
    pub fn wait_for(&mut self, needle: &str, limit: Duration) {
        let deadline = Instant::now() + limit;
        while !contains(&self.stdout, needle.as_bytes()) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout_rx.recv_timeout(left) {
                Ok(chunk) => self.stdout.extend_from_slice(&chunk),
                Err(RecvTimeoutError::Timeout) => {
                    self.kill_all();
                    panic!(
                        "no {needle:?} on tcrunner's stdout within {limit:?}; so far:\n{}",
                        String::from_utf8_lossy(&self.stdout)
                    );
                }
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "tcrunner closed stdout without printing {needle:?}:\n{}",
                    String::from_utf8_lossy(&self.stdout)
                ),
            }
        }
    }

    /// Whether tcrunner has exited.
    pub fn is_finished(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Collects stdout for up to `wait` (keeps the pipe from filling).
    pub fn drain(&mut self, wait: Duration) {
        if let Ok(chunk) = self.stdout_rx.recv_timeout(wait) {
            self.stdout.extend_from_slice(&chunk);
            while let Ok(chunk) = self.stdout_rx.try_recv() {
                self.stdout.extend_from_slice(&chunk);
            }
        }
    }

    /// Sends `signal` to tcrunner (not to its framework).
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill has no memory effects; the pid is our own live child.
        let rc = unsafe { libc::kill(self.child.id() as i32, signal) };
        assert_eq!(rc, 0, "kill({}, {signal})", self.child.id());
    }

    /// Peak resident memory of tcrunner so far (`VmHWM`), in KiB.
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    /// Waits for the end, collecting all output; panics (after killing the
    /// run) if that takes longer than `limit` in all.
    pub fn finish(mut self, limit: Duration) -> Run {
        let deadline = self.started + limit;
        let status = loop {
            while let Ok(chunk) = self.stdout_rx.try_recv() {
                self.stdout.extend_from_slice(&chunk);
            }
            if let Some(status) = self.child.try_wait().expect("wait for tcrunner") {
                self.stall = None;
                break status;
            }
            if Instant::now() >= deadline {
                self.kill_all();
                panic!(
                    "tcrunner still running after {limit:?}; stdout so far:\n{}",
                    String::from_utf8_lossy(&self.stdout)
                );
            }
            let _ = self
                .stdout_rx
                .recv_timeout(Duration::from_millis(20))
                .map(|c| self.stdout.extend_from_slice(&c));
        };
        // tcrunner is gone; a leaked grandchild could still hold its stdout.
        while let Ok(chunk) = self.stdout_rx.recv_timeout(
            deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_secs(5)),
        ) {
            self.stdout.extend_from_slice(&chunk);
        }
        let stderr = self
            .stderr
            .take()
            .expect("joined once")
            .join()
            .expect("stderr reader");
        Run {
            stdout: std::mem::take(&mut self.stdout),
            stderr: String::from_utf8_lossy(&stderr).into_owned(),
            status,
            elapsed: self.started.elapsed(),
            marker: self.marker.clone(),
        }
    }

    fn kill_all(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        kill_marked(&self.marker);
    }
}

/// How a finished run went.
pub struct Run {
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub status: ExitStatus,
    pub elapsed: Duration,
    pub marker: String,
}

impl Run {
    /// The exit code (panics when tcrunner died by a signal).
    pub fn code(&self) -> i32 {
        self.status
            .code()
            .unwrap_or_else(|| panic!("tcrunner died: {:?}\n{}", self.status, self.describe()))
    }

    /// stdout as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// The service-message lines (`##teamcity[...]`) of the stream.
    pub fn messages(&self) -> Vec<String> {
        self.text()
            .lines()
            .filter(|l| l.starts_with("##teamcity["))
            .map(str::to_owned)
            .collect()
    }

    /// The one message line that contains every needle; panics unless exactly one does.
    pub fn message(&self, needles: &[&str]) -> String {
        let found: Vec<String> = self
            .messages()
            .into_iter()
            .filter(|m| needles.iter().all(|n| m.contains(n)))
            .collect();
        assert_eq!(
            found.len(),
            1,
            "want one message with {needles:?}, got {found:#?}\n{}",
            self.describe()
        );
        found.into_iter().next().expect("one")
    }

    /// How many message lines contain every needle.
    pub fn count(&self, needles: &[&str]) -> usize {
        self.messages()
            .iter()
            .filter(|m| needles.iter().all(|n| m.contains(n)))
            .count()
    }

    /// Asserts the exit code, showing the run when it differs.
    pub fn assert_code(&self, want: i32) -> &Run {
        assert_eq!(
            self.status.code(),
            Some(want),
            "exit status\n{}",
            self.describe()
        );
        self
    }

    /// Runs `tcrunner check -` on the stream and asserts it is clean.
    pub fn assert_clean(&self) -> &Run {
        let (code, report) = check(&self.stdout);
        assert_eq!(
            code,
            Some(0),
            "tcrunner check found problems:\n{report}\n{}",
            self.describe()
        );
        self
    }

    /// The node id of the test named `name`.
    pub fn node_id(&self, name: &str) -> String {
        let started = self.message(&["##teamcity[testStarted ", &format!(" name='{name}'")]);
        attr(&started, "nodeId").expect("testStarted has a nodeId")
    }

    /// The `testFailed` line of the test named `name`.
    pub fn failure_of(&self, name: &str) -> String {
        let id = self.node_id(name);
        self.message(&["##teamcity[testFailed ", &format!("nodeId='{id}'")])
    }

    /// Whether the test named `name` was stopped (`testIgnored stopped='true'`).
    pub fn was_stopped(&self, name: &str) -> bool {
        let id = self.node_id(name);
        self.count(&[
            "##teamcity[testIgnored ",
            &format!("nodeId='{id}'"),
            "stopped='true'",
        ]) == 1
    }

    /// Whether the test named `name` passed (finished without a failure or ignore).
    pub fn passed(&self, name: &str) -> bool {
        let id = self.node_id(name);
        let node = format!("nodeId='{id}'");
        self.count(&["##teamcity[testFinished ", &node]) == 1
            && self.count(&["##teamcity[testFailed ", &node]) == 0
            && self.count(&["##teamcity[testIgnored ", &node]) == 0
    }

    /// Whether a test named `name` appears at all.
    pub fn has_test(&self, name: &str) -> bool {
        self.count(&["##teamcity[testStarted ", &format!(" name='{name}'")]) > 0
    }

    /// Asserts that no process of the run is alive (waiting up to 10 s for
    /// killed processes to be reaped).
    pub fn assert_no_leftovers(&self) -> &Run {
        assert_no_leftovers(&self.marker);
        self
    }

    /// The run, for assertion messages (long streams are cut in the middle).
    pub fn describe(&self) -> String {
        let text = self.text();
        let shown = if text.len() > 20_000 {
            let head = text
                .char_indices()
                .nth(10_000)
                .map_or(text.len(), |(i, _)| i);
            let tail = text
                .char_indices()
                .rev()
                .nth(10_000)
                .map_or(0, |(i, _)| i)
                .max(head);
            format!(
                "{}\n[... {} bytes ...]\n{}",
                &text[..head],
                tail - head,
                &text[tail..]
            )
        } else {
            text
        };
        format!(
            "status: {:?} after {:?}\n--- stdout\n{shown}\n--- stderr\n{}",
            self.status, self.elapsed, self.stderr
        )
    }
}

/// The value of `key='...'` in a message line (escapes left as they are).
pub fn attr(message: &str, key: &str) -> Option<String> {
    let start = message.find(&format!(" {key}='"))? + key.len() + 3;
    let rest = &message[start..];
    let mut end = 0;
    let bytes = rest.as_bytes();
    while end < bytes.len() && bytes[end] != b'\'' {
        end += if bytes[end] == b'|' { 2 } else { 1 };
    }
    Some(rest[..end.min(rest.len())].to_owned())
}

/// `tcrunner check -` on `stream`: its exit code and report.
pub fn check(stream: &[u8]) -> (Option<i32>, String) {
    check_with(&[], stream)
}

/// `tcrunner check <options> -` on `stream`: its exit code and report.
pub fn check_with(options: &[&str], stream: &[u8]) -> (Option<i32>, String) {
    let mut child = Command::new(bin())
        .arg("check")
        .args(options)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tcrunner check");
    let mut stdin = child.stdin.take().expect("piped");
    let stream = stream.to_vec();
    let writer = thread::spawn(move || {
        let _ = stdin.write_all(&stream);
    });
    let out = child.wait_with_output().expect("tcrunner check");
    writer.join().expect("stdin writer");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), report)
}

/// Live processes (not zombies) whose environment holds `marker`, with their command lines.
pub fn leftovers(marker: &str) -> Vec<(i32, String)> {
    let needle = format!("{MARKER_VAR}={marker}");
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if !environ
            .split(|&b| b == 0)
            .any(|var| var == needle.as_bytes())
        {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next())
            .unwrap_or("?");
        if state == "Z" || state == "X" {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        found.push((pid, cmdline));
    }
    found
}

/// Kills every process carrying `marker` (cleaning up after a failed test).
pub fn kill_marked(marker: &str) {
    for (pid, _) in leftovers(marker) {
        // SAFETY: kill has no memory effects; pid is a process of this run.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Asserts that no process carrying `marker` is alive, allowing 10 s for
/// killed ones to go away.
pub fn assert_no_leftovers(marker: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = leftovers(marker);
        if left.is_empty() {
            return;
        }
        if Instant::now() >= deadline {
            for (pid, _) in &left {
                // SAFETY: kill has no memory effects; pid is a process of this run.
                unsafe { libc::kill(*pid, libc::SIGKILL) };
            }
            panic!("processes of the run outlived it: {left:#?}");
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// Asserts that `tcrunner check` finds `stream` clean.
pub fn assert_clean(stream: &[u8]) {
    let (code, report) = check(stream);
    assert_eq!(
        code,
        Some(0),
        "tcrunner check found problems:\n{report}\n--- stream\n{}",
        String::from_utf8_lossy(stream)
    );
}

/// Every well-formed service message in `stream`, in order.
pub fn messages(stream: &[u8]) -> Vec<tcrunner_protocol::Message> {
    let mut parser = tcrunner_protocol::Parser::new();
    let mut found = Vec::new();
    let mut sink = |event| {
        if let tcrunner_protocol::ParseEvent::Message { message, .. } = event {
            found.push(message);
        }
    };
    parser.feed(stream, &mut sink);
    parser.finish(&mut sink);
    found
}

/// How one test ended, as an id-mode stream reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestOutcome {
    /// `passed`, `failed`, `error` (`testFailed error='true'`) or `ignored`.
    pub verdict: String,
    /// The `message` of `testFailed` or `testIgnored`.
    pub message: Option<String>,
    /// `expected` of a comparison failure.
    pub expected: Option<String>,
    /// `actual` of a comparison failure.
    pub actual: Option<String>,
}

/// A stream's tests' paths and verdicts, in path order (a `Vec` of pairs
/// or a map).
pub fn verdicts_by_path<C: FromIterator<(String, String)>>(stream: &[u8]) -> C {
    tests_by_path(stream)
        .into_iter()
        .map(|(path, outcome)| (path, outcome.verdict))
        .collect()
}

/// The tests of an id-mode stream keyed by their tree path (names from the
/// outermost suite down, joined by ` > `).
pub fn tests_by_path(stream: &[u8]) -> std::collections::BTreeMap<String, TestOutcome> {
    use std::collections::{BTreeMap, HashMap};
    let mut names: HashMap<String, (String, String)> = HashMap::new();
    let mut running: HashMap<String, TestOutcome> = HashMap::new();
    let mut found = BTreeMap::new();
    let path_of = |names: &HashMap<String, (String, String)>, id: &str| {
        let mut parts = Vec::new();
        let mut at = id.to_owned();
        while let Some((name, parent)) = names.get(&at) {
            parts.push(name.clone());
            at = parent.clone();
        }
        parts.reverse();
        parts.join(" > ")
    };
    for message in messages(stream) {
        let get = |key: &str| message.get(key).map(str::to_owned);
        let Some(id) = get("nodeId") else { continue };
        match message.name.as_str() {
            "testSuiteStarted" | "testStarted" => {
                names.insert(
                    id.clone(),
                    (
                        get("name").unwrap_or_default(),
                        get("parentNodeId").unwrap_or_default(),
                    ),
                );
                if message.name == "testStarted" {
                    running.insert(
                        id,
                        TestOutcome {
                            verdict: "passed".into(),
                            ..TestOutcome::default()
                        },
                    );
                }
            }
            "testFailed" => {
                if let Some(outcome) = running.get_mut(&id) {
                    let error = message.get("error") == Some("true");
                    outcome.verdict = if error { "error" } else { "failed" }.into();
                    outcome.message = get("message");
                    outcome.expected = get("expected");
                    outcome.actual = get("actual");
                }
            }
            "testIgnored" => {
                if let Some(outcome) = running.get_mut(&id) {
                    outcome.verdict = "ignored".into();
                    outcome.message = get("message");
                }
            }
            "testFinished" => {
                if let Some(outcome) = running.remove(&id) {
                    // Duplicate titles: the n-th test with one path gets ` #n`.
                    let path = path_of(&names, &id);
                    let mut key = path.clone();
                    let mut n = 2;
                    while found.contains_key(&key) {
                        key = format!("{path} #{n}");
                        n += 1;
                    }
                    found.insert(key, outcome);
                }
            }
            _ => {}
        }
    }
    found
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// The IDE's three verdicts (plus `error`) from an outcome name of the event
/// protocol, as the fixture models write them.
pub fn verdict(outcome: &str) -> &'static str {
    match outcome {
        "passed" | "xpass" => "passed",
        "failed" => "failed",
        "error" => "error",
        "skipped" | "xfail" | "todo" => "ignored",
        other => panic!("unknown outcome {other} in a model"),
    }
}

/// Asserts a stream's tests are exactly a fixture model's, test by test:
/// verdict, message (where the model gives one and the test did not pass),
/// expected and actual.
pub fn assert_matches_model(
    label: &str,
    found: &std::collections::BTreeMap<String, TestOutcome>,
    model: &std::collections::BTreeMap<String, serde_json::Value>,
) {
    let missing: Vec<&String> = model.keys().filter(|k| !found.contains_key(*k)).collect();
    let extra: Vec<&String> = found.keys().filter(|k| !model.contains_key(*k)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{label}: missing from the stream: {missing:#?}\nnot in the model: {extra:#?}"
    );
    for (key, spec) in model {
        let got = &found[key];
        let want = verdict(spec["outcome"].as_str().unwrap());
        assert_eq!(got.verdict, want, "{label}: {key}: verdict ({got:?})");
        // A pass carries no message in the stream.
        if let Some(message) = spec["message"].as_str().filter(|_| want != "passed") {
            assert_eq!(
                got.message.as_deref(),
                Some(message),
                "{label}: {key}: message"
            );
        }
        assert_eq!(
            got.expected.as_deref(),
            spec["expected"].as_str(),
            "{label}: {key}: expected"
        );
        assert_eq!(
            got.actual.as_deref(),
            spec["actual"].as_str(),
            "{label}: {key}: actual"
        );
    }
}
