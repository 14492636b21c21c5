//! The command line: clap parses raw arguments, [`Config::from_args_in`] validates
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
/// framework arguments) and writes `##teamcity[...]` messages to stdout; at a
/// terminal that no IDE or CI server reads, the human view instead (a live
/// status line, the failures and a summary: --format human).
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
    /// Show any service-message stream (a file, or `-` for stdin) as the
    /// human terminal view, as it arrives: `some-runner | tcrunner view`.
    View(RawView),
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
    /// Output format, or `none` for no stream [default: teamcity when
    /// TEAMCITY_VERSION names a real server version; human when stdout is a
    /// terminal and neither TEAMCITY_VERSION nor an IDE transport variable
    /// (JB_TEAMCITY_SOCKET_PATH, JB_TEAMCITY_SOCKET_PORT) is set; else intellij].
    #[arg(long, value_enum)]
    pub format: Option<Dialect>,
    #[command(flatten)]
    pub human: RawHuman,
    /// First node id minus one, for embedding several runs in one tree (PyCharm's --offset; at
    /// most 2^53 - 2^32, so that the ids of 2^32 nodes after it stay exact wherever they are
    /// read).
    #[arg(long, default_value_t = 0, value_name = "N", value_parser = offset_value())]
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
#[derive(Debug, Args, Clone, Default)]
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

/// How the human view looks (`--format human`, `tcrunner view`).
#[derive(Debug, Args, Clone)]
pub(crate) struct RawHuman {
    /// Colour in the human view [default: auto, on at a terminal unless
    /// NO_COLOR is set or TERM=dumb].
    #[arg(long, value_enum, value_name = "WHEN")]
    pub color: Option<ColorChoice>,
    /// Human view: a line for every test instead of one per file.
    #[arg(long, short, conflicts_with = "quiet")]
    pub verbose: bool,
    /// Human view: only the failures, the errors and the summary.
    #[arg(long, short)]
    pub quiet: bool,
}

/// When the human view uses colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    /// At a terminal, unless NO_COLOR is set or TERM=dumb.
    Auto,
    /// Always, even into a file or pipe.
    Always,
    /// Never.
    Never,
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
    /// Report the collected tree without running anything (pytest).
    #[arg(long)]
    pub collect_only: bool,
    /// Fail a single test that runs longer than SECS (its fixtures and
    /// each-test hooks included; code outside any test, such as an import
    /// or a `beforeAll`, is bounded by --session-timeout).
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub timeout: Option<f64>,
    /// Stop the whole run after SECS, even when the reader of the output
    /// has stopped reading (the result files are written whole).
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub session_timeout: Option<f64>,
    /// Time between SIGTERM and SIGKILL when stopping the framework; also
    /// what a stopped run gives a reader that is behind to take the rest.
    #[arg(
        long,
        value_name = "SECS",
        allow_negative_numbers = true,
        default_value_t = 5.0
    )]
    pub grace_period: f64,
    /// Neutralise every service message a test prints (on stdout or stderr),
    /// not only tree-changing ones: each is kept as the text of a `message`.
    #[arg(long)]
    pub block_service_messages: bool,
    /// Print the framework command line, its folder and the environment
    /// tcrunner adds, then exit without running anything. With `--lf`,
    /// `--ff`, `--nf`, `--sw` or `--shard`, the order file the environment
    /// names is written and left in place, so that the command runs as
    /// printed.
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
    /// Run every test, those new to the history first, newest-modified file first (jest, vitest: by file).
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
    /// The input format [default: detected from content]; content of another format is refused
    /// (exit 65). Exit 5 when no report holds a test.
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
    /// The node the tree hangs from instead of 0: a stream written with
    /// `--offset N` is checked with the same N, as embedded under node N.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = offset_value())]
    pub offset: u64,
}

/// The largest `--offset`: the ids of 2^32 nodes after it stay exact in
/// every reader of the stream (a JavaScript number holds integers up to
/// 2^53; 2^53 + 1 reads as 2^53, its parent's id) and cannot overflow.
const MAX_OFFSET: u64 = (1 << 53) - (1 << 32);

/// `--offset`'s parser: a number up to [`MAX_OFFSET`].
fn offset_value() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(..=MAX_OFFSET)
}

#[derive(Debug, Args)]
pub(crate) struct RawView {
    /// The stream to show; `-` or nothing reads stdin.
    #[arg(value_name = "FILE|-")]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub human: RawHuman,
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
    /// For a person: a live status line, a line per file, then the
    /// failures and a summary (plain, without cursor movement, off a terminal).
    Human,
    /// No stream on stdout: only the files asked for (`--events-out`, `--json`, `--ctrf`,
    /// `--junit-xml`).
    None,
}

impl Dialect {
    /// Whether the format is service messages (for the IDE's socket, when
    /// it asks for them).
    pub(crate) fn writes_messages(self) -> bool {
        matches!(self, Dialect::Intellij | Dialect::Teamcity)
    }
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
    /// Tests run in parallel workers (`-j`, pytest-xdist's `-n`): the
    /// intellij dialect says so as PyCharm's runner does
    /// (`enteredTheMatrix durationStrategy='manual'`), so that the IDE takes
    /// each test's duration as reported rather than timing it.
    pub parallel: bool,
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
    /// How the human view looks, when it is the format.
    pub human: HumanConfig,
}

/// How much the human view shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Verbosity {
    /// The failures, the errors and the summary.
    Quiet,
    /// A line per file too.
    #[default]
    Normal,
    /// A line per test too.
    Verbose,
}

/// The human view's settings, resolved against the terminal (by default
/// plain: no colour, no status line).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct HumanConfig {
    pub color: bool,
    /// A live status line, redrawn in place: stdout is a terminal that
    /// understands cursor movement.
    pub live: bool,
    pub verbosity: Verbosity,
    /// What the tests about to run took last time, summed from the test
    /// history (docs/history.md), when it knows them: the status line then
    /// estimates the time left.
    pub expected_ms: Option<u64>,
}

impl HumanConfig {
    fn from_raw(raw: &RawHuman, env: &Env) -> Self {
        let terminal = env.stdout_terminal && !env.dumb_terminal;
        HumanConfig {
            color: match raw.color.unwrap_or(ColorChoice::Auto) {
                ColorChoice::Always => true,
                ColorChoice::Never => false,
                ColorChoice::Auto => terminal && !env.no_color,
            },
            live: terminal,
            expected_ms: None,
            verbosity: match (raw.quiet, raw.verbose) {
                (true, _) => Verbosity::Quiet,
                (false, true) => Verbosity::Verbose,
                (false, false) => Verbosity::Normal,
            },
        }
    }
}

/// What of the environment decides the defaults: who reads the output.
#[derive(Debug, Clone, Default)]
pub(crate) struct Env {
    /// `$TEAMCITY_VERSION`: a TeamCity agent, or PyCharm (`LOCAL`).
    pub teamcity_version: Option<String>,
    /// An IDE's transport variable is set (`JB_TEAMCITY_SOCKET_PATH`,
    /// `JB_TEAMCITY_SOCKET_PORT`): an IDE reads the stream.
    pub ide_transport: bool,
    /// Standard output is a terminal.
    pub stdout_terminal: bool,
    /// `TERM=dumb`: no cursor movement, no colour.
    pub dumb_terminal: bool,
    /// `NO_COLOR` is set and not empty.
    pub no_color: bool,
}

impl Env {
    /// Reads the process's environment and whether stdout is a terminal.
    pub(crate) fn current() -> Env {
        use std::io::IsTerminal as _;
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        Env {
            teamcity_version: std::env::var("TEAMCITY_VERSION").ok(),
            ide_transport: set("JB_TEAMCITY_SOCKET_PATH") || set("JB_TEAMCITY_SOCKET_PORT"),
            stdout_terminal: std::io::stdout().is_terminal(),
            dumb_terminal: std::env::var_os("TERM").is_some_and(|t| t == "dumb"),
            no_color: set("NO_COLOR"),
        }
    }
}

impl OutputConfig {
    fn from_raw(raw: RawOutput, env: &Env) -> Self {
        let dialect = raw.format.unwrap_or(match env.teamcity_version.as_deref() {
            // PyCharm sets TEAMCITY_VERSION=LOCAL for its own runners; only a
            // real agent sets a version.
            Some(v) if !v.is_empty() && !v.eq_ignore_ascii_case("LOCAL") => Dialect::Teamcity,
            // Any TEAMCITY_VERSION or IDE transport means a program reads
            // the stream, even under a pseudo-terminal.
            None if !env.ide_transport && env.stdout_terminal => Dialect::Human,
            _ => Dialect::Intellij,
        });
        OutputConfig {
            human: HumanConfig::from_raw(&raw.human, env),
            dialect,
            parallel: false,
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
pub(crate) enum Config {
    Run(RunConfig),
    Convert(ConvertConfig),
    Check(CheckConfig),
    View(ViewConfig),
    Completions(clap_complete::Shell),
    Man,
    PromptfooProvider,
    /// `ide install`: the folder to write the runner scripts into.
    IdeInstall(PathBuf),
    Doctor(RawDoctor),
    /// `tcrunner history`: the project, the history folder and the framework asked for.
    History {
        /// The project named by `--project`, which must be a folder.
        project: Option<PathBuf>,
        /// Where the history is.
        dir: PathBuf,
        framework: Option<FrameworkName>,
    },
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
    /// The id of the node the tree hangs from (`--offset`).
    pub offset: u64,
}

/// `tcrunner view`'s settings.
#[derive(Debug)]
pub(crate) struct ViewConfig {
    /// `None` reads stdin.
    pub file: Option<PathBuf>,
    pub output: OutputConfig,
}

impl Config {
    /// Validates raw arguments; `teamcity_version` is `$TEAMCITY_VERSION`,
    /// and stdout is taken for something other than a terminal.
    #[cfg(test)]
    pub(crate) fn from_args(args: RawArgs, teamcity_version: Option<&str>) -> Config {
        let env = Env {
            teamcity_version: teamcity_version.map(str::to_owned),
            ..Env::default()
        };
        Config::from_args_in(args, &env)
    }

    /// Validates raw arguments in the environment `env` describes.
    pub(crate) fn from_args_in(args: RawArgs, env: &Env) -> Config {
        match args.command {
            Some(RawCommand::Convert(c)) => Config::Convert(ConvertConfig {
                files: c.files.into_iter().map(ReportInput::from_arg).collect(),
                input_format: c.input_format,
                output: OutputConfig::from_raw(c.output, env),
            }),
            Some(RawCommand::PromptfooProvider) => Config::PromptfooProvider,
            Some(RawCommand::View(v)) => {
                let raw = RawOutput {
                    format: Some(Dialect::Human),
                    human: v.human,
                    offset: 0,
                    timestamps: false,
                    skip_passed_output: false,
                    retry_support: false,
                    ctrf: None,
                    junit_xml: None,
                    grading: RawGrading::default(),
                };
                Config::View(ViewConfig {
                    file: v.file.filter(|f| f.as_os_str() != "-"),
                    output: OutputConfig::from_raw(raw, env),
                })
            }
            Some(RawCommand::Check(c)) => Config::Check(CheckConfig {
                file: c.file.filter(|f| f.as_os_str() != "-"),
                quiet: c.quiet,
                offset: c.offset,
            }),
            Some(RawCommand::Completions { shell }) => Config::Completions(shell),
            Some(RawCommand::Man) => Config::Man,
            Some(RawCommand::Ide(RawIde::Install { dir })) => {
                Config::IdeInstall(dir.unwrap_or_else(|| PathBuf::from(".")))
            }
            Some(RawCommand::Doctor(doctor)) => Config::Doctor(doctor),
            Some(RawCommand::History(h)) => {
                let dir = h.cache_dir.unwrap_or_else(|| {
                    let project = h.project.clone().unwrap_or_else(|| PathBuf::from("."));
                    project.join(crate::history::DEFAULT_DIR)
                });
                Config::History {
                    project: h.project,
                    dir,
                    framework: h.framework,
                }
            }
            None => {
                let mut output = OutputConfig::from_raw(args.run.output.clone(), env);
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
    use clap::Parser as _;

    use super::*;

    fn output(args: &[&str], env: &Env) -> OutputConfig {
        let raw = RawArgs::try_parse_from(std::iter::once("tcrunner").chain(args.iter().copied()))
            .unwrap();
        match Config::from_args_in(raw, env) {
            Config::Run(run) => run.output,
            Config::Convert(convert) => convert.output,
            Config::View(view) => view.output,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_human_view_is_for_a_terminal_nobody_else_reads() {
        let terminal = Env {
            stdout_terminal: true,
            ..Env::default()
        };
        let with = |change: fn(&mut Env)| {
            let mut env = terminal.clone();
            change(&mut env);
            env
        };
        let cases: &[(&[&str], Env, Dialect)] = &[
            (&[], terminal.clone(), Dialect::Human),
            (&[], Env::default(), Dialect::Intellij),
            (
                &[],
                with(|e| e.teamcity_version = Some("LOCAL".into())),
                Dialect::Intellij,
            ),
            (
                &[],
                with(|e| e.teamcity_version = Some("2025.07".into())),
                Dialect::Teamcity,
            ),
            (&[], with(|e| e.ide_transport = true), Dialect::Intellij),
            (
                &["--format", "intellij"],
                terminal.clone(),
                Dialect::Intellij,
            ),
            (&["--format", "human"], Env::default(), Dialect::Human),
            (&["convert", "r.xml"], terminal.clone(), Dialect::Human),
            (&["view"], Env::default(), Dialect::Human),
        ];
        for (args, env, dialect) in cases {
            assert_eq!(output(args, env).dialect, *dialect, "{args:?} {env:?}");
        }
    }

    #[test]
    fn colour_and_the_status_line_follow_the_terminal() {
        let terminal = Env {
            stdout_terminal: true,
            ..Env::default()
        };
        let human = |args: &[&str], env: &Env| {
            let c = output(args, env).human;
            (c.color, c.live, c.verbosity)
        };
        use Verbosity::*;
        assert_eq!(human(&[], &terminal), (true, true, Normal));
        assert_eq!(human(&["-q"], &Env::default()), (false, false, Quiet));
        assert_eq!(
            human(&["-v", "--color", "always"], &Env::default()),
            (true, false, Verbose)
        );
        let no_color = Env {
            no_color: true,
            ..terminal.clone()
        };
        assert_eq!(human(&[], &no_color), (false, true, Normal));
        assert!(human(&["--color", "always"], &no_color).0);
        let dumb = Env {
            dumb_terminal: true,
            ..terminal.clone()
        };
        assert_eq!(human(&[], &dumb), (false, false, Normal));
        assert!(!human(&["--color", "never"], &terminal).0);
        assert!(RawArgs::try_parse_from(["tcrunner", "-q", "-v"]).is_err());
    }

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
