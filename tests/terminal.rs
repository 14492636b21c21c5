//! The human view in a real terminal, driven through tmux: the status line
//! is redrawn in place while tests run, follows a resized window, is gone
//! from the final screen, and Ctrl-C shows what ran so far and the summary,
//! then exits 130.
//!
//! Each test runs its own tmux server (a socket of its own), killed when
//! the test ends.
mod util;

use std::process::Command;
use std::time::{Duration, Instant};

use regex::Regex;
use util::{pytest9, Project};

/// Generous: a loaded two-core machine must never hit it.
const LIMIT: Duration = Duration::from_secs(120);

/// A tmux server with one window running a command.
struct Tmux {
    socket: String,
}

impl Tmux {
    /// Runs `command` in a new `columns`×40 window; the window stays
    /// open after it, showing `EXIT=<code>`.
    fn start(command: &str, columns: u32) -> Tmux {
        let tmux = Tmux {
            socket: util::unique("tcrunner-tmux"),
        };
        let shell = format!("{command}; echo EXIT=$?; sleep 600");
        let status = Command::new("tmux")
            .args(["-L", &tmux.socket, "-f", "/dev/null", "new-session", "-d"])
            .args(["-x", &columns.to_string(), "-y", "40", &shell])
            .env("TERM", "xterm-256color")
            .env_remove("TEAMCITY_VERSION")
            .env_remove("JB_TEAMCITY_SOCKET_PATH")
            .env_remove("JB_TEAMCITY_SOCKET_PORT")
            .env_remove("NO_COLOR")
            .env_remove("TMUX")
            .status()
            .expect("run tmux");
        assert!(status.success(), "tmux new-session failed");
        tmux
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("run tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen as it is, lines the window wrapped joined back.
    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-J"])
    }

    /// Waits until the screen holds a match of `pattern`; returns it.
    fn wait_for(&self, pattern: &str) -> String {
        let re = Regex::new(pattern).expect("a valid regex");
        self.wait_until(pattern, |screen| re.is_match(screen))
    }

    /// Waits until `ready` says yes to the screen; returns it.
    fn wait_until(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(start.elapsed() < LIMIT, "{what} never showed:\n{screen}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}

/// The lines of `screen` that hold the status line.
fn status_lines(screen: &str) -> Vec<&str> {
    screen.lines().filter(|l| l.contains("RUNNING")).collect()
}

fn tcrunner(project: &Project, path: &str) -> String {
    format!(
        "cd '{}' && '{}' --python '{}' --path {path}",
        project.path().display(),
        util::bin().display(),
        pytest9().display()
    )
}

#[test]
fn the_status_line_updates_in_place_follows_a_resize_and_is_gone_at_the_end() {
    let project = Project::copy("faults/pytest");
    project.write(
        "test_steps.py",
        "import time\nimport pytest\n\n\n@pytest.mark.parametrize('n', range(12))\n\
         def test_step(n):\n    time.sleep(0.5)\n    assert n != 5\n",
    );
    let tmux = Tmux::start(&tcrunner(&project, "test_steps.py"), 120);
    // How many tests the status line (the lowest one) counts as done (0
    // without one).
    let done = |screen: &str| -> u32 {
        let re = Regex::new(r"RUNNING .*\b(\d+)/12").unwrap();
        status_lines(screen)
            .last()
            .and_then(|line| re.captures(line))
            .map_or(0, |c| c[1].parse().unwrap())
    };
    let first = tmux.wait_until("a test done", |s| (1..11).contains(&done(s)));
    assert_eq!(status_lines(&first).len(), 1, "{first}");
    assert!(first.contains("Launching pytest"), "{first}");
    let second = tmux.wait_until("another test done", |s| done(s) > done(&first));
    assert_eq!(
        status_lines(&second).len(),
        1,
        "one line, redrawn:\n{second}"
    );

    // Narrower: the line that was drawn wide is taken off whole, and the
    // next one fits the new width.
    tmux.tmux(&["resize-window", "-x", "40"]);
    std::thread::sleep(Duration::from_millis(200));
    let after = done(&tmux.screen());
    assert!(after < 11, "the run ended before the resize was seen");
    let narrow = tmux.wait_until("a test done after the resize", |s| done(s) > after);
    let lines = status_lines(&narrow);
    assert_eq!(lines.len(), 1, "no stale status line:\n{narrow}");
    assert!(lines[0].chars().count() < 40, "fits: {:?}", lines[0]);

    let end = tmux.wait_for(r"EXIT=\d+");
    assert!(end.contains("EXIT=1\n"), "{end}");
    assert!(status_lines(&end).is_empty(), "{end}");
    assert!(end.contains("FAIL  ["), "the file's line\n{end}");
    assert!(end.contains("FAILED test_steps.py > test_step[5]"), "{end}");
    assert!(end.contains("  at test_steps.py:5"), "{end}");
    assert!(
        Regex::new(r"\nFAILED 11 passed, 1 failed in \S+\nEXIT=1")
            .unwrap()
            .is_match(&end),
        "the summary is the last line\n{end}"
    );
}

#[test]
fn ctrl_c_shows_what_ran_and_the_summary_then_exits_130() {
    let project = Project::copy("faults/pytest");
    let tmux = Tmux::start(&tcrunner(&project, "test_slow.py"), 120);
    tmux.wait_for(r"RUNNING .* 1/3 1 passed");
    tmux.tmux(&["send-keys", "C-c"]);
    let end = tmux.wait_for(r"EXIT=\d+");
    assert!(end.contains("EXIT=130\n"), "{end}");
    assert!(status_lines(&end).is_empty(), "{end}");
    assert!(end.contains("STOPPED test_slow.py > test_sleeps"), "{end}");
    assert!(end.contains("  going to sleep\n"), "what it printed\n{end}");
    assert!(
        Regex::new(r"\nFAILED 1 passed, 1 stopped in \S+\nEXIT=130")
            .unwrap()
            .is_match(&end),
        "{end}"
    );
}
