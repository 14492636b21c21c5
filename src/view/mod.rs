//! `tcrunner view [FILE|-]`: any service-message stream (ours in either
//! dialect, teamcity-messages, jest-teamcity, vitest-teamcity-reporter, a
//! TeamCity build log) shown as the human view, as it arrives.
//!
//! The stream goes through the protocol's push parser, which reads a
//! message glued after other text on its line as TeamCity's server reads
//! it; [`translate`] turns messages into the run's own events, and those go
//! through the same pipeline as a run's. A malformed message is shown as
//! the text it is and counted, never fatal.
mod translate;

use std::io::{self, Write};

use tcrunner_protocol::{ParseEvent, Parser};

use crate::cli::ViewConfig;
use crate::event::{LogLevel, TestEvent};
use crate::exit;
use crate::input::{self, StreamError};
use crate::report::{Groups, PassPolicy, Pipeline, RunEnd, Summary, Transport};
use translate::{Said, Translator};

/// Why `view` could not show its stream.
pub(crate) type ViewError = StreamError;

/// A write of what is shown failed.
fn write_error(source: io::Error) -> StreamError {
    StreamError::Write {
        what: "writing the output failed",
        source,
    }
}

/// Shows the configured file (or stdin); exit 0 when no test failed, 1
/// when one did.
pub(crate) fn run(config: &ViewConfig, out: impl Write) -> Result<i32, ViewError> {
    view(config, config.file.as_deref(), out)
}

/// Feeds the stream `file` names (stdin when `None`) chunk by chunk through
/// the parser into the pipeline, handing what is shown on after each chunk.
fn view(
    config: &ViewConfig,
    file: Option<&std::path::Path>,
    out: impl Write,
) -> Result<i32, ViewError> {
    let mut pipeline =
        Pipeline::new(&config.output, Transport::Stdout(out), Vec::new()).map_err(write_error)?;
    let mut reader = Reader::default();
    let mut parser = Parser::new();
    let mut chunk = |chunk: Option<&[u8]>| {
        if let Some(chunk) = chunk {
            parser.feed(chunk, |event| reader.take(event, &mut pipeline));
            reader.result.take().transpose().map_err(write_error)?;
        }
        pipeline.flush().map_err(write_error)
    };
    // On a terminal the status line's clock goes on while no input comes,
    // and Ctrl-C ends the view with what it has, not in the middle of it.
    let signalled = if config.output.human.live {
        let signals = crate::process::listen_for_signals();
        let watch = input::Watch {
            signals: signals.as_ref().map(std::os::fd::AsFd::as_fd),
            tick: std::time::Duration::from_millis(250),
        };
        input::each_chunk_watching(file, &watch, &mut chunk)?
    } else {
        input::each_chunk(file, |bytes| chunk(Some(bytes)))?;
        None
    };
    parser.finish(|event| reader.take(event, &mut pipeline));
    reader.result.take().transpose().map_err(write_error)?;
    for event in reader.translator.finish() {
        pipeline.event(event).map_err(write_error)?;
    }
    if let Some(line) = reader.first_malformed {
        let text = format!(
            "{} malformed service message{} shown as text (the first on line {line})",
            reader.malformed,
            if reader.malformed == 1 { "" } else { "s" }
        );
        pipeline
            .event(TestEvent::Log {
                level: LogLevel::Warning,
                text,
            })
            .map_err(write_error)?;
    }
    let end = |summary: &Summary, groups: Option<&Groups>| {
        let code = match summary.any_failed() {
            true => exit::TESTS_FAILED,
            false => exit::SUCCESS,
        };
        RunEnd::graded(PassPolicy::Framework, code, Vec::new(), groups)
    };
    let (_, end) = pipeline.finish(end).map_err(write_error)?;
    Ok(signalled.map_or(end.exit_code, |signal| exit::SIGNAL_BASE + signal))
}

/// The parser's events into the pipeline; the first write error is kept.
#[derive(Default)]
struct Reader {
    translator: Translator,
    malformed: u64,
    first_malformed: Option<u64>,
    result: Option<io::Result<()>>,
}

impl Reader {
    fn take<W: Write>(&mut self, event: ParseEvent, pipeline: &mut Pipeline<W>) {
        if matches!(self.result, Some(Err(_))) {
            return;
        }
        let done = match event {
            // Text before a message on its line that is only a saved
            // TeamCity build log's prefix is left out; other text there
            // (teamcity-messages' verbose `test_a.py::test_one`, whose
            // `PASSED` follows later) is shown as it is.
            ParseEvent::Text { bytes, .. }
                if !bytes.ends_with(b"\n") && is_build_log_prefix(&bytes) =>
            {
                Ok(())
            }
            ParseEvent::Text { bytes, .. } => pipeline.text(&bytes),
            // The rest of its line follows as text: it is shown as it is.
            ParseEvent::Error(error) => {
                self.malformed += 1;
                self.first_malformed.get_or_insert(error.position.line);
                Ok(())
            }
            ParseEvent::Message { message, .. } => match self.translator.message(&message) {
                Said::Text(text) => pipeline.text(text.as_bytes()),
                Said::Events(events) => events
                    .into_iter()
                    .try_for_each(|event| pipeline.event(event)),
            },
        };
        if done.is_err() {
            self.result = Some(done);
        }
    }
}

/// Whether `text` is only what TeamCity writes before each line of a saved
/// build log: `[10:00:01]i:`, a tab, and the blocks the line is in
/// (`[Step 1/1]`, `[pytest]`).
fn is_build_log_prefix(text: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(text) else {
        return false;
    };
    let Some((time, rest)) = text.strip_prefix('[').and_then(|t| t.split_once(']')) else {
        return false;
    };
    let is_time = time.len() == 8
        && time.bytes().enumerate().all(|(i, b)| {
            if i == 2 || i == 5 {
                b == b':'
            } else {
                b.is_ascii_digit()
            }
        });
    let Some((status, mut rest)) = rest.split_once(':') else {
        return false;
    };
    let status = status.trim_start_matches(' ');
    if !is_time || status.len() > 1 || !status.bytes().all(|b| b.is_ascii_alphabetic()) {
        return false;
    }
    loop {
        rest = rest.trim_start();
        match rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
            Some((_, after)) => rest = after,
            None => return rest.is_empty(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_build_log_prefix;

    #[test]
    fn build_log_prefixes_are_told_from_text() {
        for prefix in [
            "[10:00:01]i:\t [Step 1/1] ",
            "[23:59:59] :\t",
            "[10:00:01]W:\t [Step 1/1] [pytest] ",
        ] {
            assert!(is_build_log_prefix(prefix.as_bytes()), "{prefix:?}");
        }
        for text in [
            "test_a.py::test_one PASSED [ 50%]",
            "[10:00]i: ",
            "[10:00:01]i: text",
            "text ",
        ] {
            assert!(!is_build_log_prefix(text.as_bytes()), "{text:?}");
        }
    }
}
