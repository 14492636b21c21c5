//! The `convert` command: every file in order into one pipeline (`-` is
//! standard input, read as any pipe is). A file that is missing or
//! malformed is reported on stderr and does not stop the others; what was
//! read before a problem is still sent.
use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read, Write};
use std::path::Path;

use serde_json::Value;

use super::common::{Emitter, ReadError, Sink};
use super::detect::{self, Sniffed, FORMAT_NAMES, SNIFF_LEN};
use super::{ctrf, events, jest_json, junit, lenient, pytest_json, vitest_json};
use crate::cli::{ConvertConfig, InputFormat, ReportInput};
use crate::event::{Node, Outcome, Stream, TestEvent, TestResult};
use crate::exit;
use crate::report::{
    self, Pipeline, Problem, ProblemKind, RunEnd, RunLine, RunStart, SocketError, Transport,
};

/// What stops the whole conversion (a bad input file does not).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConvertError {
    /// Writing the stream failed.
    #[error("writing the output failed")]
    Output(#[source] io::Error),
    /// An output file cannot be written (found before anything is read).
    #[error(transparent)]
    OutputFile(report::FileError),
    /// The IDE's socket cannot be used.
    #[error(transparent)]
    Socket(#[from] SocketError),
    /// Options that cannot go together.
    #[error("{0}")]
    Usage(String),
}

impl ConvertError {
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            ConvertError::Output(_) | ConvertError::OutputFile(_) => exit::IO_ERROR,
            ConvertError::Socket(_) => exit::SOCKET_UNREACHABLE,
            ConvertError::Usage(_) => exit::USAGE,
        }
    }
}

/// Why one input file was not (fully) converted.
#[derive(Debug, thiserror::Error)]
enum FileError {
    #[error("no such file")]
    Missing,
    #[error("is a directory")]
    Directory,
    #[error("cannot read: {0}")]
    Unreadable(#[source] io::Error),
    #[error("empty file")]
    Empty,
    #[error("unknown report format (expected one of: {FORMAT_NAMES}; see --input-format)")]
    Unknown,
    #[error("UTF-16 text: convert the report to UTF-8 first (e.g. `iconv -f UTF-16 -t UTF-8`)")]
    Utf16,
    /// `--input-format` names another format than the content's.
    #[error("a {found} report, not {given}: leave --input-format out, or give {found}", given = format_name(*.given), found = format_name(*.found))]
    Mismatch {
        given: InputFormat,
        found: InputFormat,
    },
    /// A JSON document forced to a format has none of its keys.
    #[error("no `{key}` key, so not a {given} report (leave --input-format out to detect the format)", given = format_name(*.given))]
    NotFormat {
        given: InputFormat,
        key: &'static str,
    },
    #[error(transparent)]
    Read(ReadError),
}

impl FileError {
    fn exit_code(&self) -> i32 {
        match self {
            FileError::Missing | FileError::Directory | FileError::Unreadable(_) => exit::NO_INPUT,
            FileError::Read(ReadError::Io(_)) => exit::NO_INPUT,
            FileError::Empty
            | FileError::Unknown
            | FileError::Utf16
            | FileError::Mismatch { .. }
            | FileError::NotFormat { .. }
            | FileError::Read(_) => exit::DATA_ERROR,
        }
    }
}

/// Converts `config.files` into one stream on `out`; returns the exit code.
/// Problems with single files go to stderr as one line each.
pub(crate) fn run(config: &ConvertConfig, out: impl Write) -> Result<i32, ConvertError> {
    run_with(config, out, &mut io::stderr().lock())
}

/// [`run`] with the error stream given.
pub(crate) fn run_with(
    config: &ConvertConfig,
    out: impl Write,
    errors: &mut dyn Write,
) -> Result<i32, ConvertError> {
    // A recorded run is replayed with the settings it ran with, and its
    // suites are kept as a live run keeps them.
    let recording = recording(config);
    let mut output = config.output.clone();
    if let Some(run) = recording {
        output.collect_only = run.collect_only;
        output.block_service_messages = run.block_service_messages;
    }
    if let Some(clash) = report::shared_output_path(&output) {
        return Err(ConvertError::Usage(clash));
    }
    let files = report::open_files(&output).map_err(ConvertError::OutputFile)?;
    let out = Transport::from_env(out, output.dialect.writes_messages())?;
    let socket = out.messages_apart().cloned();
    let mut pipeline = Pipeline::new(&output, out, files).map_err(ConvertError::Output)?;
    pipeline.forget_done_suites(recording.is_none());
    pipeline
        .start_run(&RunStart {
            framework: None,
            command: std::env::args().collect(),
            started: std::time::SystemTime::now(),
        })
        .map_err(ConvertError::Output)?;
    let mut problems = Vec::new();
    let mut sink = Verdicts {
        inner: &mut pipeline,
        failed: false,
        tests: 0,
    };
    let mut worst = exit::SUCCESS;
    for (index, input) in config.files.iter().enumerate() {
        let mut emitter = Emitter::new(&mut sink, format!("{}:", index + 1));
        let converted = match input {
            ReportInput::Stdin => {
                convert_stream(io::stdin().lock(), None, config.input_format, &mut emitter)
            }
            ReportInput::File(path) => convert_file(path, config.input_format, &mut emitter),
        };
        match converted {
            Ok(()) => {}
            Err(FileError::Read(ReadError::Output(e))) => return Err(ConvertError::Output(e)),
            Err(e) => {
                // One line per problem, whatever the parser's text holds.
                let text = e.to_string().replace(['\n', '\r'], " ");
                let _ = writeln!(errors, "tcrunner: {input}: {text}");
                problems.push(Problem {
                    kind: ProblemKind::Input,
                    message: format!("{input}: {text}"),
                });
                worst = worst.max(e.exit_code());
            }
        }
    }
    let code = match (worst, sink.failed) {
        (exit::SUCCESS, true) => exit::TESTS_FAILED,
        // Reports that hold no test: as a run that collected none.
        (exit::SUCCESS, false) if sink.tests == 0 => {
            const NO_TESTS: &str = "no tests in the reports";
            let _ = writeln!(errors, "tcrunner: {NO_TESTS}");
            problems.push(Problem {
                kind: ProblemKind::NoTests,
                message: NO_TESTS.to_string(),
            });
            exit::NO_TESTS
        }
        (code, _) => code,
    };
    let policy = output.grading.policy;
    let (_, end) = pipeline
        .finish(|_, groups| RunEnd::graded(policy, code, problems, groups))
        .map_err(ConvertError::Output)?;
    if let Some(socket) = socket {
        socket.finish().map_err(ConvertError::Output)?;
    }
    Ok(end.exit_code)
}

/// The settings of a recorded run, when the first input is one (its
/// `run` line's, or the defaults for a recording without one). Peeked:
/// standard input keeps what was looked at for the reader.
fn recording(config: &ConvertConfig) -> Option<RunLine> {
    if config
        .input_format
        .is_some_and(|format| format != InputFormat::Events)
    {
        return None;
    }
    let mut prefix = Vec::new();
    match config.files.first()? {
        ReportInput::Stdin => prefix.extend_from_slice(io::stdin().lock().fill_buf().ok()?),
        ReportInput::File(path) => {
            File::open(path)
                .ok()?
                .take(SNIFF_LEN as u64)
                .read_to_end(&mut prefix)
                .ok()?;
        }
    }
    let prefix = prefix.strip_prefix(UTF8_BOM).unwrap_or(&prefix);
    let is_recording = config.input_format == Some(InputFormat::Events)
        || detect::sniff(prefix) == Sniffed::Format(InputFormat::Events);
    is_recording.then(|| events::settings(prefix).unwrap_or_default())
}

/// Passes events on, noting whether any test failed and how many tests
/// there were.
struct Verdicts<'a, S: Sink> {
    inner: &'a mut S,
    failed: bool,
    tests: usize,
}

impl<S: Sink> Sink for Verdicts<'_, S> {
    fn event(&mut self, event: TestEvent) -> io::Result<()> {
        match &event {
            TestEvent::Finished(result) => {
                self.failed |= matches!(result.outcome, Outcome::Failed | Outcome::Error);
            }
            TestEvent::Test(_) => self.tests += 1,
            _ => {}
        }
        self.inner.event(event)
    }

    fn test(
        &mut self,
        node: &Node,
        output: &[(Stream, String)],
        result: &TestResult,
    ) -> io::Result<()> {
        self.failed |= matches!(result.outcome, Outcome::Failed | Outcome::Error);
        self.tests += 1;
        self.inner.test(node, output, result)
    }

    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.text(bytes)
    }
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

fn convert_file(
    path: &Path,
    format: Option<InputFormat>,
    out: &mut Emitter<'_>,
) -> Result<(), FileError> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => FileError::Missing,
        _ => FileError::Unreadable(e),
    })?;
    if meta.is_dir() {
        return Err(FileError::Directory);
    }
    let file = File::open(path).map_err(FileError::Unreadable)?;
    // A file that can be read again: the JSON of jest and vitest is then
    // read entry by entry, in memory that does not grow with it.
    let again = meta.is_file().then_some(path);
    convert_stream(file, again, format, out)
}

/// Converts one report from `input`; `again` is its file when that can be
/// opened and read a second time.
fn convert_stream(
    mut input: impl Read,
    again: Option<&Path>,
    format: Option<InputFormat>,
    out: &mut Emitter<'_>,
) -> Result<(), FileError> {
    let mut prefix = Vec::with_capacity(SNIFF_LEN);
    (&mut input)
        .take(SNIFF_LEN as u64)
        .read_to_end(&mut prefix)
        .map_err(FileError::Unreadable)?;
    // A UTF-8 byte-order mark (Windows editors, PowerShell's `Out-File`) is
    // not JSON, and serde_json rejects it.
    if prefix.starts_with(UTF8_BOM) {
        prefix.drain(..UTF8_BOM.len());
    }
    if crate::input::is_utf16(&prefix) {
        return Err(FileError::Utf16);
    }
    let sniffed = detect::sniff(&prefix);
    let input = BufReader::with_capacity(64 * 1024, Cursor::new(prefix).chain(input));
    let format = match format {
        Some(format) => match sniffed {
            Sniffed::Format(found) if !same_shape(format, found) => {
                return Err(FileError::Mismatch {
                    given: format,
                    found,
                })
            }
            // The prefix did not tell: the whole document does, or its
            // lack of the format's keys.
            Sniffed::Json if required_key(format).is_some() => {
                return send_forced(format, input, out)
            }
            _ => format,
        },
        None => match sniffed {
            Sniffed::Format(format) => format,
            Sniffed::Empty => return Err(FileError::Empty),
            Sniffed::Unknown => return Err(FileError::Unknown),
            // The telling keys are further in: parse it all, then decide.
            Sniffed::Json => {
                let doc = parse_whole(input)?;
                let format = detect::by_keys(&doc).ok_or(FileError::Unknown)?;
                return send_doc(format, doc, out);
            }
        },
    };
    let sent = match (format, again) {
        (InputFormat::JestJson, Some(path)) => {
            jest_json::read_twice(input, reopen(path).map_err(FileError::Unreadable)?, out)
        }
        (InputFormat::VitestJson, Some(path)) => {
            vitest_json::read_twice(input, reopen(path).map_err(FileError::Unreadable)?, out)
        }
        _ => read(format, input, out),
    };
    sent.map_err(FileError::Read)
}

/// The whole JSON document of `input`, built to a bounded depth: serde_json
/// refuses nesting past 128 levels, and one deep value must not lose the
/// report.
fn parse_whole(input: impl Read) -> Result<Value, FileError> {
    let mut json = serde_json::Deserializer::from_reader(input);
    lenient::value(&mut json)
        .and_then(|doc| json.end().map(|()| doc))
        .map_err(|e| FileError::Read(ReadError::from_json(e)))
}

/// Sends a JSON document as `format`, which the user gave: refused when its
/// keys are another format's, or when it has none of this one's.
fn send_forced(
    format: InputFormat,
    input: impl Read,
    out: &mut Emitter<'_>,
) -> Result<(), FileError> {
    let doc = parse_whole(input)?;
    match detect::by_keys(&doc) {
        Some(found) if !same_shape(format, found) => {
            return Err(FileError::Mismatch {
                given: format,
                found,
            })
        }
        Some(_) => {}
        None => {
            if let Some(key) = required_key(format).filter(|key| doc.get(key).is_none()) {
                return Err(FileError::NotFormat { given: format, key });
            }
        }
    }
    send_doc(format, doc, out)
}

/// Sends a parsed document as `format`, one of the JSON formats.
fn send_doc(format: InputFormat, doc: Value, out: &mut Emitter<'_>) -> Result<(), FileError> {
    let sent = match format {
        InputFormat::JestJson => jest_json::send(doc, out),
        InputFormat::VitestJson => vitest_json::send(doc, out),
        InputFormat::PytestJson => pytest_json::send(doc, out),
        InputFormat::Ctrf => ctrf::send(doc, out),
        InputFormat::Junit | InputFormat::Events => return Err(FileError::Unknown),
    };
    sent.map_err(FileError::Read)
}

/// The top-level key a JSON report of `format` cannot be without; `None`
/// for the formats that are not one JSON document.
fn required_key(format: InputFormat) -> Option<&'static str> {
    match format {
        InputFormat::JestJson | InputFormat::VitestJson => Some("testResults"),
        InputFormat::PytestJson => Some("tests"),
        InputFormat::Ctrf => Some("results"),
        InputFormat::Junit | InputFormat::Events => None,
    }
}

/// Whether a report of format `found` reads as `given`: jest's and
/// vitest's JSON share one shape, which each reader takes.
fn same_shape(given: InputFormat, found: InputFormat) -> bool {
    let js = |f| matches!(f, InputFormat::JestJson | InputFormat::VitestJson);
    given == found || (js(given) && js(found))
}

/// A format as `--input-format` spells it.
fn format_name(format: InputFormat) -> String {
    use clap::ValueEnum as _;
    format
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
}

/// `path` opened again from its start, past a UTF-8 byte-order mark.
fn reopen(path: &Path) -> io::Result<impl BufRead> {
    let mut input = BufReader::with_capacity(64 * 1024, File::open(path)?);
    if input.fill_buf()?.starts_with(UTF8_BOM) {
        input.consume(UTF8_BOM.len());
    }
    Ok(input)
}

/// Runs the reader for `format`.
pub(crate) fn read(
    format: InputFormat,
    input: impl io::BufRead,
    out: &mut Emitter<'_>,
) -> Result<(), ReadError> {
    match format {
        InputFormat::Junit => junit::read(input, out),
        InputFormat::JestJson => jest_json::read(input, out),
        InputFormat::VitestJson => vitest_json::read(input, out),
        InputFormat::PytestJson => pytest_json::read(input, out),
        InputFormat::Ctrf => ctrf::read(input, out),
        InputFormat::Events => events::read(input, out),
    }
}

#[cfg(test)]
#[path = "run_tests.rs"]
mod tests;
