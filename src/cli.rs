//! The command line: clap parses raw arguments, [`Config::from_args`] validates
//! and resolves them. No other module sees raw strings.
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use regex::Regex;

use crate::report::{parse_rule, parse_scenario, PassPolicy};

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
    /// Print a Promptfoo Python provider that runs tests with tcrunner
    /// (`tcrunner promptfoo-provider > provider.py`).
    PromptfooProvider,
    /// Set an IDE up to run tcrunner as its test runner.
    #[command(subcommand)]
    Ide(RawIde),
    /// Say which framework, interpreter or node and versions a project uses,
    /// which plugins tcrunner switches off, and what is missing, with the
    /// command that fixes it (exit 0 when nothing is).
    Doctor(RawDoctor),
    /// Print the test history: each framework's failures, slowest tests and stepwise position.
    History(RawShowHistory),
}

#[derive(Debug, Subcommand)]
pub(crate) enum RawIde {
    /// Write PyCharm's runner scripts (`_jb_pytest_runner.py`,
    /// `_jb_unittest_runner.py`) into DIR, each starting tcrunner with the
    /// IDE's arguments and environment; a script of the IDE's own already
    /// there is kept beside it as `<name>.orig`.
    Install {
        /// Where to write them: the IDE's helpers folder
        /// (`…/helpers/pycharm`) [default: the current directory].
        #[arg(value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

#[derive(Debug, Args)]
pub(crate) struct RawDoctor {
    /// The project to look at [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// The framework [default: detected from the project].
    #[arg(long, value_enum)]
    pub framework: Option<FrameworkName>,
    /// The Python interpreter for pytest [default: as a run chooses it].
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// The node binary for jest/vitest [default: node on PATH].
    #[arg(long, value_name = "PATH")]
    pub node: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct RawShowHistory {
    /// The project whose history to show [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Where the history lives [default: .tcrunner in the project].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Only this framework's history.
    #[arg(long, value_enum)]
    pub framework: Option<FrameworkName>,
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
    #[command(flatten)]
    pub grading: RawGrading,
}

/// The JSON result and grading: groups, scenarios, pass policy (docs/results.md).
#[derive(Debug, Args, Clone)]
pub(crate) struct RawGrading {
    /// Also write tcrunner's JSON result to FILE: every test with its
    /// status, group and scenario, a summary per group, run-level errors
    /// (docs/results.md).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The current checkpoint's test files: a test from any other file is
    /// in group REGRESSION (repeatable; `*`, `?`, `**`; a glob without `/`
    /// matches a file name in any folder).
    #[arg(long, value_name = "GLOB")]
    pub current: Vec<String>,
    /// Tests tagged TAG are in GROUP (repeatable; after the tags `error` and
    /// `regression`, before `functionality`; others are CORE).
    #[arg(long = "group", value_name = "TAG=GROUP", value_parser = parse_rule)]
    pub groups: Vec<(String, String)>,
    /// A test's scenario id: the one capture group of REGEX in its id (a
    /// `scenario(ID)` tag wins).
    #[arg(long, value_name = "REGEX", value_parser = parse_scenario)]
    pub scenario_id: Option<Regex>,
    /// What the exit code means: `framework` (its own verdict), or 0 when
    /// the groups meet the policy, 1 when not, 75 on an infrastructure
    /// failure.
    #[arg(long, value_enum, value_name = "POLICY", default_value_t = PassPolicy::Framework)]
    pub pass_policy: PassPolicy,
}

/// [`RawGrading`] validated.
#[derive(Debug, Clone, Default)]
pub(crate) struct GradingConfig {
    pub json: Option<PathBuf>,
    pub grader: crate::report::Grader,
    pub policy: PassPolicy,
    /// A grading option was given: the run is tallied by group.
    pub graded: bool,
}

impl GradingConfig {
    fn from_raw(raw: RawGrading) -> Self {
        let graded = !raw.current.is_empty()
            || !raw.groups.is_empty()
            || raw.scenario_id.is_some()
            || raw.pass_policy != PassPolicy::Framework;
        GradingConfig {
            grader: crate::report::Grader::new(&raw.current, &raw.groups, raw.scenario_id),
            json: raw.json,
            policy: raw.pass_policy,
            graded,
        }
    }
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
    #[command(flatten)]
    pub history: RawHistory,
    #[command(flatten)]
    pub output: RawOutput,
    /// Raw framework arguments, passed verbatim.
    #[arg(last = true, value_name = "FRAMEWORK ARGS")]
    pub raw: Vec<String>,
}

/// The test history's options (pytest's names and meanings, for every
/// framework; docs/history.md).
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Test history (docs/history.md)")]
pub(crate) struct RawHistory {
    /// Run only the tests that failed last time (a file that failed to load counts as failed).
    #[arg(long = "lf", visible_alias = "last-failed")]
    pub last_failed: bool,
    /// Run every test, those that failed last time first.
    #[arg(long = "ff", visible_alias = "failed-first")]
    pub failed_first: bool,
    /// Run every test, those new to the history first, each group from the newest-modified file (pytest).
    #[arg(long = "nf", visible_alias = "new-first")]
    pub new_first: bool,
    /// With --lf and no failure recorded: run all tests, or none.
    #[arg(
        long = "lfnf",
        visible_alias = "last-failed-no-failures",
        value_enum,
        value_name = "all|none",
        default_value = "all"
    )]
    pub last_failed_no_failures: NoFailures,
    /// Stop at the first failure; the next --sw run resumes from that test.
    #[arg(long = "sw", visible_alias = "stepwise")]
    pub stepwise: bool,
    /// As --sw, but let one failure pass before stopping.
    #[arg(long = "sw-skip", visible_alias = "stepwise-skip")]
    pub stepwise_skip: bool,
    /// As --sw, starting over instead of resuming.
    #[arg(long = "sw-reset", visible_alias = "stepwise-reset")]
    pub stepwise_reset: bool,
    /// Run shard K of N: the tests (pytest) or test files (jest, vitest)
    /// split by recorded durations, longest first into the least loaded shard.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Where the test history lives [default: .tcrunner in the project].
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Empty the test history before the run.
    #[arg(long)]
    pub cache_clear: bool,
}

/// `--lfnf`: what `--lf` runs when no failure is recorded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum NoFailures {
    /// Every test.
    #[default]
    All,
    /// Nothing (exit 5, no tests).
    None,
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

/// Output dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Dialect {
    /// nodeId/parentNodeId tree for PyCharm, IntelliJ and WebStorm.
    Intellij,
    /// Nested suites by name with a flowId per file, for TeamCity build steps.
    Teamcity,
    /// No stream on stdout: only the files asked for (`--events-out`, `--json`, `--ctrf`, `--junit-xml`).
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
    /// `--json`, groups and the pass policy.
    pub grading: GradingConfig,
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
            grading: GradingConfig::from_raw(raw.grading),
        }
    }
}

/// What to do, validated.
// Made once per process: a run's settings are held inline.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // one per process: boxing it would buy nothing
pub(crate) enum Config {
    Run(RunConfig),
    Convert(ConvertConfig),
    Check(CheckConfig),
    Completions(clap_complete::Shell),
    Man,
    PromptfooProvider,
    /// `ide install`: the folder to write the runner scripts into.
    IdeInstall(PathBuf),
    Doctor(RawDoctor),
    /// `tcrunner history`: the history folder and the framework asked for.
    History(std::path::PathBuf, Option<FrameworkName>),
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
            Some(RawCommand::PromptfooProvider) => Config::PromptfooProvider,
            Some(RawCommand::Check(c)) => Config::Check(CheckConfig {
                file: c.file.filter(|f| f.as_os_str() != "-"),
                quiet: c.quiet,
            }),
            Some(RawCommand::Completions { shell }) => Config::Completions(shell),
            Some(RawCommand::Man) => Config::Man,
            Some(RawCommand::Ide(RawIde::Install { dir })) => {
                Config::IdeInstall(dir.unwrap_or_else(|| PathBuf::from(".")))
            }
            Some(RawCommand::Doctor(doctor)) => Config::Doctor(doctor),
            Some(RawCommand::History(h)) => {
                let project = h.project.unwrap_or_else(|| PathBuf::from("."));
                let dir = h
                    .cache_dir
                    .unwrap_or_else(|| project.join(crate::history::DEFAULT_DIR));
                Config::History(dir, h.framework)
            }
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
