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

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::PathBuf;

use tcrunner_protocol::{ParseEvent, Parser};

use crate::cli::ViewConfig;
use crate::event::{LogLevel, TestEvent};
use crate::exit;
use crate::report::{Groups, PassPolicy, Pipeline, RunEnd, Summary, Transport};
use translate::{Said, Translator};

/// Why `view` could not show its stream.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ViewError {
    #[error("cannot open {}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("cannot read {name}")]
    Read {
        name: String,
        #[source]
        source: io::Error,
    },
    #[error("writing the output failed")]
    Write(#[source] io::Error),
}

impl ViewError {
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            ViewError::Open { .. } | ViewError::Read { .. } => exit::NO_INPUT,
            ViewError::Write(_) => exit::IO_ERROR,
        }
    }
}

const CHUNK: usize = 64 * 1024;

/// Shows the configured file (or stdin); exit 0 when no test failed, 1
/// when one did.
pub(crate) fn run(config: &ViewConfig, out: impl Write) -> Result<i32, ViewError> {
    match &config.file {
        Some(path) => {
            let file = File::open(path).map_err(|source| ViewError::Open {
                path: path.clone(),
                source,
            })?;
            view(config, file, &path.display().to_string(), out)
        }
        None => view(config, io::stdin().lock(), "standard input", out),
    }
}

/// Feeds `input` chunk by chunk through the parser into the pipeline,
/// handing what is shown on after each chunk.
fn view(
    config: &ViewConfig,
    mut input: impl Read,
    name: &str,
    out: impl Write,
) -> Result<i32, ViewError> {
    let mut pipeline = Pipeline::new(&config.output, Transport::Stdout(out), Vec::new())
        .map_err(ViewError::Write)?;
    let mut reader = Reader::default();
    let mut parser = Parser::new();
    let mut buf = vec![0; CHUNK];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(ViewError::Read {
                    name: name.to_owned(),
                    source,
                })
            }
        };
        parser.feed(&buf[..n], |event| reader.take(event, &mut pipeline));
        reader.result.take().transpose().map_err(ViewError::Write)?;
        pipeline.flush().map_err(ViewError::Write)?;
    }
    parser.finish(|event| reader.take(event, &mut pipeline));
    reader.result.take().transpose().map_err(ViewError::Write)?;
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
            .map_err(ViewError::Write)?;
    }
    let end = |summary: &Summary, groups: Option<&Groups>| {
        let code = match summary.any_failed() {
            true => exit::TESTS_FAILED,
            false => exit::SUCCESS,
        };
        RunEnd::graded(PassPolicy::Framework, code, Vec::new(), groups)
    };
    let (_, end) = pipeline.finish(end).map_err(ViewError::Write)?;
    Ok(end.exit_code)
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
