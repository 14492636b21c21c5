//! The command line: clap parses raw arguments, [`Config::from_args`] validates
//! and resolves them. No other module sees raw strings.
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::frameworks::FrameworkName;

/// Run pytest, jest or vitest and stream a live TeamCity service-message test tree.
///
/// Without a subcommand, tcrunner runs the project's tests. It accepts PyCharm's
/// what-to-run arguments (--path, --target, --offset, then `--` and raw
/// framework arguments) and writes `##teamcity[...]` messages to stdout.
#[derive(Debug, Parser)]
#[command(name = "tcrunner", version, long_version = LONG_VERSION, args_conflicts_with_subcommands = true)]
#[command(after_help = crate::exit::help())]
pub(crate) struct RawArgs {
    #[command(subcommand)]
    pub command: Option<RawCommand>,
    #[command(flatten)]
    pub run: RawRun,
}

#[derive(Debug, Subcommand)]
pub(crate) enum RawCommand {
    /// Translate finished report files into the service-message stream.
    Convert(RawConvert),
    /// Validate a service-message stream (a file, or `-` for stdin).
    Check(RawCheck),
    /// Print a completion script for a shell (e.g. `tcrunner completions bash > /etc/bash_completion.d/tcrunner`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print tcrunner's man page (roff), made from the same definitions as `--help`.
    Man,
}

/// Options shared by everything that writes a stream.
#[derive(Debug, Args, Clone)]
pub(crate) struct RawOutput {
    /// Output dialect, or `none` for no stream [default: teamcity when
    /// TEAMCITY_VERSION names a real server version, else intellij].
    #[arg(long, value_enum)]
    pub format: Option<Dialect>,
    /// First node id minus one, for embedding several runs in one tree (PyCharm's --offset).
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub offset: u64,
    /// Add `timestamp='…'` to every message.
    #[arg(long)]
    pub timestamps: bool,
    /// Do not report captured output of tests that passed.
    #[arg(long)]
    pub skip_passed_output: bool,
    /// Announce `testRetrySupport` so a rerun's pass mutes an earlier failure (teamcity dialect).
    #[arg(long)]
    pub retry_support: bool,
    /// Also write the results to FILE as a CTRF report (JSON), written atomically.
    #[arg(long, value_name = "FILE")]
    pub ctrf: Option<PathBuf>,
    /// Also write the results to FILE as JUnit XML (one `<testsuite>` per file), written atomically.
    #[arg(long, value_name = "FILE")]
    pub junit_xml: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct RawRun {
    /// A folder or file to run, that one only: `src` leaves `lib/src` and `src2` out (repeatable).
    #[arg(long = "path", value_name = "DIR|FILE")]
    pub paths: Vec<PathBuf>,
    /// A test to run: `file.py::Class.test[params]`, `pkg.mod.Class.test`, `file.test.ts::outer > test` (repeatable).
    #[arg(long = "target", value_name = "TARGET")]
    pub targets: Vec<String>,
    /// The framework [default: detected from the project].
    #[arg(long, value_enum)]
    pub framework: Option<FrameworkName>,
    /// The project root to run in [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// The Python interpreter for pytest [default: $VIRTUAL_ENV, .venv, venv, then python3].
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// The node binary for jest/vitest [default: node on PATH].
    #[arg(long, value_name = "PATH")]
    pub node: Option<PathBuf>,
    /// Report the collected tree without running anything.
    #[arg(long)]
    pub collect_only: bool,
    /// Fail a single test that runs longer than SECS.
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
    /// Stop the whole run after SECS.
    #[arg(long, value_name = "SECS")]
    pub session_timeout: Option<f64>,
    /// Time between SIGTERM and SIGKILL when stopping the framework.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub grace_period: f64,
    /// Drop every service message a test prints, not only tree-changing ones.
    #[arg(long)]
    pub block_service_messages: bool,
    /// Print the framework command line, its folder and the environment
    /// tcrunner adds, then exit without running anything.
    #[arg(long)]
    pub print_command: bool,
    /// Also record the run's events and plain text to FILE, as JSON lines
    /// (`tcrunner convert --input-format events FILE` replays the stream).
    #[arg(long, value_name = "FILE")]
    pub events_out: Option<PathBuf>,
    /// Set KEY to VALUE in the framework's environment (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_env_pair)]
    pub env: Vec<(String, String)>,
    /// Start the framework with only PATH, HOME, LANG, TMPDIR and TERM of
    /// tcrunner's environment (and what tcrunner itself adds; --env on top).
    #[arg(long)]
    pub env_clear: bool,
    /// Run as on a CI server: CI=true, and NODE_ENV=test for jest and
    /// vitest unless the environment already names one.
    #[arg(long)]
    pub ci: bool,
    /// Run tests in N parallel workers through the framework's own mechanism
    /// (pytest-xdist's -n, jest's and vitest's --maxWorkers); `auto`: one per core.
    #[arg(short = 'j', long, value_name = "N|auto", value_parser = parse_jobs)]
    pub jobs: Option<Jobs>,
    /// Run the framework in a sandbox (Linux): no network but its own
    /// loopback, the filesystem read-only but for --writable paths, a
    /// private /tmp and the frameworks' caches, its own PID namespace, no
    /// new privileges.
    #[arg(long)]
    pub sandbox: bool,
    /// A file or folder the sandboxed framework may write (repeatable; needs --sandbox).
    #[arg(long = "writable", value_name = "PATH", requires = "sandbox")]
    pub writable: Vec<PathBuf>,
    #[command(flatten)]
    pub output: RawOutput,
    /// Raw framework arguments, passed verbatim.
    #[arg(last = true, value_name = "FRAMEWORK ARGS")]
    pub raw: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct RawConvert {
    /// Report files: JUnit XML, jest --json, vitest json, pytest-json-report, CTRF; `-` reads stdin.
    #[arg(required = true, value_name = "FILE|-")]
    pub files: Vec<PathBuf>,
    /// The input format [default: detected from content].
    #[arg(long, value_enum)]
    pub input_format: Option<InputFormat>,
    #[command(flatten)]
    pub output: RawOutput,
}

#[derive(Debug, Args)]
pub(crate) struct RawCheck {
    /// The stream to check; `-` or nothing reads stdin.
    #[arg(value_name = "FILE|-")]
    pub file: Option<PathBuf>,
    /// Print only the summary line.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `--jobs`: how many workers the framework runs tests in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Jobs {
    /// This many.
    Count(std::num::NonZeroU32),
    /// One per core.
    Auto,
}

impl Jobs {
    /// The number of workers: `auto` counts the cores available to us.
    pub(crate) fn count(self) -> u32 {
        match self {
            Jobs::Count(n) => n.get(),
            Jobs::Auto => std::thread::available_parallelism()
                .map_or(1, |n| u32::try_from(n.get()).unwrap_or(u32::MAX)),
        }
    }
}

fn parse_jobs(text: &str) -> Result<Jobs, String> {
    if text == "auto" {
        return Ok(Jobs::Auto);
    }
    text.parse()
        .map(Jobs::Count)
        .map_err(|_| "expected a positive number of workers or `auto`".to_owned())
}

fn parse_env_pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() && !key.contains('\0') && !value.contains('\0') => {
            Ok((key.to_owned(), value.to_owned()))
        }
        _ => Err("expected KEY=VALUE with a non-empty KEY".to_owned()),
    }
}

/// Output dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Dialect {
    /// nodeId/parentNodeId tree for PyCharm, IntelliJ and WebStorm.
    Intellij,
    /// Nested suites by name with a flowId per file, for TeamCity build steps.
    Teamcity,
    /// No stream on stdout: only the files asked for (`--events-out`, `--ctrf`, `--junit-xml`).
    None,
}

/// A report-file format `convert` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum InputFormat {
    /// JUnit XML (pytest, vitest, jest-junit, Surefire).
    Junit,
    /// jest `--json`.
    JestJson,
    /// vitest `--reporter=json`.
    VitestJson,
    /// pytest-json-report.
    PytestJson,
    /// Common Test Report Format.
    Ctrf,
    /// A run recorded with `--events-out`.
    Events,
}

/// Output settings after validation.
#[derive(Debug, Clone)]
pub(crate) struct OutputConfig {
    pub dialect: Dialect,
    pub offset: u64,
    pub timestamps: bool,
    pub skip_passed_output: bool,
    pub retry_support: bool,
    /// Neutralise every service message in passed-through text.
    pub block_service_messages: bool,
    /// Report declared tests as a pre-declared tree (nothing runs).
    pub collect_only: bool,
    /// Where to record the run's events (`--events-out`).
    pub events_out: Option<PathBuf>,
    /// Where to write the CTRF report (`--ctrf`).
    pub ctrf: Option<PathBuf>,
    /// Where to write the JUnit XML report (`--junit-xml`).
    pub junit_xml: Option<PathBuf>,
}

impl OutputConfig {
    fn from_raw(raw: RawOutput, env_teamcity_version: Option<&str>) -> Self {
        let dialect = raw.format.unwrap_or(match env_teamcity_version {
            // PyCharm sets TEAMCITY_VERSION=LOCAL for its own runners; only a
            // real agent sets a version.
            Some(v) if !v.is_empty() && !v.eq_ignore_ascii_case("LOCAL") => Dialect::Teamcity,
            _ => Dialect::Intellij,
        });
        OutputConfig {
            dialect,
            offset: raw.offset,
            timestamps: raw.timestamps,
            skip_passed_output: raw.skip_passed_output,
            retry_support: raw.retry_support,
            block_service_messages: false,
            collect_only: false,
            events_out: None,
            ctrf: raw.ctrf,
            junit_xml: raw.junit_xml,
        }
    }
}

/// What to do, validated.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per process: boxing it would buy nothing
pub(crate) enum Config {
    Run(RunConfig),
    Convert(ConvertConfig),
    Check(CheckConfig),
    Completions(clap_complete::Shell),
    Man,
}

/// `--version`'s long form: the embedded reporters ship inside the binary,
/// so their version is the binary's; then the framework versions they are
/// tested against.
const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    "\nreporters: embedded (runners/), version ",
    env!("CARGO_PKG_VERSION"),
    "\nsupports: pytest 8 and 9 (with pytest-xdist, pytest-rerunfailures, pytest-subtests), ",
    "jest 29 and 30, vitest 3, 4 and 5 (node 22.12 or later)"
);

/// The command-line definition, for completions and the man page.
pub(crate) fn command() -> clap::Command {
    use clap::CommandFactory as _;
    RawArgs::command()
}

#[derive(Debug)]
pub(crate) struct RunConfig {
    pub raw: RawRun,
    pub output: OutputConfig,
}

#[derive(Debug)]
pub(crate) struct ConvertConfig {
    pub files: Vec<ReportInput>,
    pub input_format: Option<InputFormat>,
    pub output: OutputConfig,
}

/// Where `convert` reads one report from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ReportInput {
    /// `-`: standard input, read whole as any pipe is (it cannot be read twice).
    Stdin,
    /// A file.
    File(PathBuf),
}

impl ReportInput {
    fn from_arg(arg: PathBuf) -> ReportInput {
        if arg.as_os_str() == "-" {
            ReportInput::Stdin
        } else {
            ReportInput::File(arg)
        }
    }
}

impl std::fmt::Display for ReportInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReportInput::Stdin => f.write_str("standard input"),
            ReportInput::File(path) => path.display().fmt(f),
        }
    }
}

#[derive(Debug)]
pub(crate) struct CheckConfig {
    /// `None` reads stdin.
    pub file: Option<PathBuf>,
    pub quiet: bool,
}

impl Config {
    /// Validates raw arguments; `teamcity_version` is `$TEAMCITY_VERSION`.
    pub(crate) fn from_args(args: RawArgs, teamcity_version: Option<&str>) -> Config {
        match args.command {
            Some(RawCommand::Convert(c)) => Config::Convert(ConvertConfig {
                files: c.files.into_iter().map(ReportInput::from_arg).collect(),
                input_format: c.input_format,
                output: OutputConfig::from_raw(c.output, teamcity_version),
            }),
            Some(RawCommand::Check(c)) => Config::Check(CheckConfig {
                file: c.file.filter(|f| f.as_os_str() != "-"),
                quiet: c.quiet,
            }),
            Some(RawCommand::Completions { shell }) => Config::Completions(shell),
            Some(RawCommand::Man) => Config::Man,
            None => {
                let mut output = OutputConfig::from_raw(args.run.output.clone(), teamcity_version);
                output.block_service_messages = args.run.block_service_messages;
                output.collect_only = args.run.collect_only;
                output.events_out = args.run.events_out.clone();
                Config::Run(RunConfig {
                    raw: args.run,
                    output,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_and_environment_pairs_are_read_or_refused() {
        assert_eq!(parse_jobs("auto"), Ok(Jobs::Auto));
        assert_eq!(parse_jobs("3").map(Jobs::count), Ok(3));
        assert!(Jobs::Auto.count() >= 1);
        for bad in ["0", "-1", "two", ""] {
            assert!(parse_jobs(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_env_pair("A=b=c"),
            Ok(("A".to_owned(), "b=c".to_owned()))
        );
        assert_eq!(parse_env_pair("A="), Ok(("A".to_owned(), String::new())));
        for bad in ["A", "=b", ""] {
            assert!(parse_env_pair(bad).is_err(), "{bad}");
        }
    }
}
