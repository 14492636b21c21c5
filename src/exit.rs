//! Every exit code tcrunner uses, named once, and the table of what each
//! means: `--help` prints it ([`help`]), and a test holds the README's
//! "Exit codes" table to it.
use std::fmt;

/// Everything passed (or `check` found the stream clean).
pub(crate) const SUCCESS: i32 = 0;
/// Tests failed (or `check` found violations). pytest's own codes 2-5 pass through.
pub(crate) const TESTS_FAILED: i32 = 1;
/// No tests were collected or selected (pytest's code, used for every framework).
pub(crate) const NO_TESTS: i32 = 5;
/// The command line is wrong.
pub(crate) const USAGE: i32 = 64;
/// An input report or stream is malformed; what was read before the problem is still reported.
pub(crate) const DATA_ERROR: i32 = 65;
/// An input file or directory does not exist or cannot be read.
pub(crate) const NO_INPUT: i32 = 66;
/// The IDE's socket (`JB_TEAMCITY_SOCKET_PATH`, `JB_TEAMCITY_SOCKET_PORT`)
/// cannot be connected to; nothing ran.
pub(crate) const SOCKET_UNREACHABLE: i32 = 68;
/// The framework (or its interpreter / node) is missing or too old; for
/// `doctor`, anything it checks is missing.
pub(crate) const FRAMEWORK_UNAVAILABLE: i32 = 69;
/// A bug in tcrunner.
pub(crate) const INTERNAL: i32 = 70;
/// The framework died before finishing the run (signal, `os._exit`, out of memory).
pub(crate) const FRAMEWORK_CRASHED: i32 = 71;
/// Our reporter never reported from inside the framework (failed to load, side channel closed).
pub(crate) const REPORTER_FAILED: i32 = 73;
/// Writing the output failed for a reason other than the reader going away.
pub(crate) const IO_ERROR: i32 = 74;
/// Under a `--pass-policy` other than `framework`: the run itself failed
/// (the framework did not start or never reported, crashed, was stopped,
/// collected nothing or could not collect a file), whatever the tests did.
pub(crate) const INFRASTRUCTURE: i32 = 75;
/// `--sandbox` was asked for and this machine cannot give it; nothing ran.
pub(crate) const SANDBOX_UNAVAILABLE: i32 = 77;
/// A test or the whole run exceeded its time limit.
pub(crate) const TIMEOUT: i32 = 124;
/// tcrunner itself was stopped by signal `n`: the code is 128 + n.
pub(crate) const SIGNAL_BASE: i32 = 128;

/// The codes one row of [`TABLE`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Codes {
    /// One code.
    One(i32),
    /// Several codes with one explanation (pytest's own, passed through).
    Several(&'static [i32]),
    /// [`SIGNAL_BASE`] plus the signal's number.
    Signal,
}

impl fmt::Display for Codes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Codes::One(code) => write!(f, "{code}"),
            Codes::Several(codes) => {
                for (i, code) in codes.iter().enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}{code}")?;
                }
                Ok(())
            }
            Codes::Signal => write!(f, "{SIGNAL_BASE}+n"),
        }
    }
}

/// One row of the exit-code table.
#[derive(Debug)]
pub(crate) struct Row {
    pub codes: Codes,
    /// A few words, for `--help`.
    pub brief: &'static str,
    /// The whole story, as the README tells it (Markdown); a test holds
    /// the README to it.
    #[cfg_attr(not(test), expect(dead_code, reason = "only the README shows it"))]
    pub meaning: &'static str,
}

/// Every exit code, in order: what `--help` and the README say.
pub(crate) const TABLE: &[Row] = &[
    Row {
        codes: Codes::One(SUCCESS),
        brief: "all tests passed (check: the stream is clean)",
        meaning: "all tests passed (`check`: the stream is clean)",
    },
    Row {
        codes: Codes::One(TESTS_FAILED),
        brief: "tests failed (check: violations found)",
        meaning: "tests failed (`check`: violations found)",
    },
    Row {
        codes: Codes::Several(&[2, 3, 4]),
        brief: "pytest's own: interrupted / internal error / usage error",
        meaning: "pytest's own: interrupted / internal error / usage error",
    },
    Row {
        codes: Codes::One(NO_TESTS),
        brief: "no tests were collected or selected",
        meaning: "no tests were collected or selected (pytest's code, used for every \
                  framework); where the framework itself exits 0 for that \
                  (`--passWithNoTests`, jest's `-o` or vitest's `--changed` with nothing \
                  changed, a config allowing it), tcrunner exits 0 too, with the same warning; \
                  never 0 for a `--lf` on jest or vitest whose recorded failures all select \
                  nothing (renamed since), nor for a `--target` that selects no test \
                  (unless `--passWithNoTests` is passed)",
    },
    Row {
        codes: Codes::One(USAGE),
        brief: "bad command line",
        meaning: "bad command line",
    },
    Row {
        codes: Codes::One(DATA_ERROR),
        brief: "malformed input report or stream",
        meaning: "an input report or stream is malformed (what was read is still reported)",
    },
    Row {
        codes: Codes::One(NO_INPUT),
        brief: "missing input file, --path, --project or folder",
        meaning: "an input file, `--path`, `--project` or `ide install`'s folder does not exist",
    },
    Row {
        codes: Codes::One(SOCKET_UNREACHABLE),
        brief: "the IDE's socket (JB_TEAMCITY_SOCKET_*) cannot be connected to",
        meaning: "the IDE's socket (`JB_TEAMCITY_SOCKET_PATH`, or `JB_TEAMCITY_SOCKET_PORT` \
                  on `JB_TEAMCITY_SOCKET_HOST`) cannot be connected to, or the port is not a \
                  number; nothing ran",
    },
    Row {
        codes: Codes::One(FRAMEWORK_UNAVAILABLE),
        brief: "framework, interpreter or node missing or too old (doctor: something is missing)",
        meaning: "the framework, its interpreter or node is missing or too old (`doctor`: \
                  something it checks is missing)",
    },
    Row {
        codes: Codes::One(INTERNAL),
        brief: "internal error in tcrunner",
        meaning: "internal error in tcrunner",
    },
    Row {
        codes: Codes::One(FRAMEWORK_CRASHED),
        brief: "the framework crashed",
        meaning: "the framework crashed (died by a signal, or exited while a test was running)",
    },
    Row {
        codes: Codes::One(REPORTER_FAILED),
        brief: "our reporter never reported from inside the framework",
        meaning: "our reporter never reported from inside the framework",
    },
    Row {
        codes: Codes::One(IO_ERROR),
        brief: "writing the output failed",
        meaning: "writing the output failed, or an output file (`--events-out`, `--json`, `--ctrf`, `--junit-xml`) cannot be written",
    },
    Row {
        codes: Codes::One(INFRASTRUCTURE),
        brief: "infrastructure failure under --pass-policy (the run itself failed)",
        meaning: "under a `--pass-policy` other than `framework`: the run itself failed (the framework did not start or never reported, crashed, was stopped, collected nothing or could not collect a file), whatever the tests did",
    },
    Row {
        codes: Codes::One(SANDBOX_UNAVAILABLE),
        brief: "--sandbox cannot be set up here (nothing ran)",
        meaning: "`--sandbox` cannot be set up on this machine (user namespaces disabled, not \
                  Linux): one line names what is missing, and nothing ran",
    },
    Row {
        codes: Codes::One(TIMEOUT),
        brief: "a test (--timeout) or the run (--session-timeout) ran out of time",
        meaning: "a test (`--timeout`) or the run (`--session-timeout`) ran out of time",
    },
    Row {
        codes: Codes::Signal,
        brief: "stopped by signal n (141: the reader of stdout or the IDE's socket went away)",
        meaning: "tcrunner was stopped by signal n (130 for Ctrl-C, 143 for SIGTERM); 141 \
                  when the reader of stdout, or of the IDE's socket, went away",
    },
];

/// The exit codes as `--help` lists them after the options.
pub(crate) fn help() -> String {
    let rows: Vec<(String, &str)> = TABLE
        .iter()
        .map(|row| (row.codes.to_string(), row.brief))
        .collect();
    let width = rows.iter().map(|(codes, _)| codes.len()).max().unwrap_or(0);
    let mut text = String::from("Exit codes:");
    for (codes, brief) in rows {
        text.push_str(&format!("\n  {codes:<width$}  {brief}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of the README's "Exit codes" table: (code, meaning).
    fn readme_rows() -> Vec<(String, String)> {
        let readme = include_str!("../README.md");
        let section = readme
            .split("\n## Exit codes\n")
            .nth(1)
            .expect("the README has an \"Exit codes\" section");
        let section = section.split("\n#").next().unwrap_or(section);
        section
            .lines()
            .filter(|line| line.starts_with("| ") && !line.starts_with("| ---"))
            .skip(1) // the heading
            .map(|line| {
                let cells = line.trim_matches('|');
                let (code, meaning) = cells.split_once(" | ").expect("two cells");
                (code.trim().to_owned(), meaning.trim().to_owned())
            })
            .collect()
    }

    /// The README's table says what this file says, row for row, both ways:
    /// no code missing on either side, none explained differently.
    #[test]
    fn the_readme_table_is_this_table() {
        let ours: Vec<(String, String)> = TABLE
            .iter()
            .map(|row| (row.codes.to_string(), row.meaning.to_owned()))
            .collect();
        let readme = readme_rows();
        for row in &ours {
            assert!(readme.contains(row), "the README lacks {row:?}");
        }
        for row in &readme {
            assert!(ours.contains(row), "src/exit.rs lacks the README's {row:?}");
        }
        assert_eq!(readme, ours, "the same rows, in another order");
    }

    /// Every named code has its row in the table.
    #[test]
    fn every_code_is_in_the_table() {
        let named: Vec<i32> = include_str!("exit.rs")
            .lines()
            .filter_map(|line| line.strip_prefix("pub(crate) const "))
            .filter_map(|line| line.split_once(": i32 = "))
            .map(|(_, value)| value.trim_end_matches(';').parse().expect("a number"))
            .collect();
        assert!(named.len() >= 13, "the constants were found: {named:?}");
        for code in named {
            let row = TABLE.iter().find(|row| match row.codes {
                Codes::One(c) => c == code,
                Codes::Several(codes) => codes.contains(&code),
                Codes::Signal => code == SIGNAL_BASE,
            });
            assert!(row.is_some(), "exit code {code} has no row");
        }
    }

    /// `--help` lists every row, codes aligned.
    #[test]
    fn help_lists_every_code() {
        let help = help();
        let lines: Vec<&str> = help.lines().collect();
        assert_eq!(lines[0], "Exit codes:");
        assert_eq!(lines.len(), TABLE.len() + 1);
        assert_eq!(
            lines[1],
            "  0        all tests passed (check: the stream is clean)"
        );
        assert_eq!(
            lines[3],
            "  2, 3, 4  pytest's own: interrupted / internal error / usage error"
        );
        assert!(lines[TABLE.len()].starts_with("  128+n    stopped by signal n"));
    }
}
