//! `tcrunner check [FILE|-]`: reads the stream in chunks, prints each
//! violation and a summary, and returns the exit code.
use std::io::{self, Write};

use tcrunner_protocol::Parser;

use super::checker::Checker;
use super::report::Report;
use crate::cli::CheckConfig;
use crate::exit;
use crate::input::{self, StreamError};

/// Why `check` could not do its job (as opposed to finding violations).
pub(crate) type CheckError = StreamError;

/// What failed when the report could not be written.
const WRITING: &str = "cannot write the check report";

/// Checks the configured file (or stdin), writes the report to `out` and
/// returns 0 when the stream is clean, 1 when it has violations.
pub(crate) fn run(config: &CheckConfig, out: impl Write) -> Result<i32, CheckError> {
    let mut checker = Checker::under(config.offset);
    let mut parser = Parser::new();
    input::each_chunk(config.file.as_deref(), |chunk| {
        parser.feed(chunk, |event| checker.event(&event));
        Ok(())
    })?;
    parser.finish(|event| checker.event(&event));
    let report = checker.finish();
    write_report(&report, config.quiet, out)?;
    Ok(if report.is_clean() {
        exit::SUCCESS
    } else {
        exit::TESTS_FAILED
    })
}

/// Streams `input` through the parser and the checker in fixed-size chunks.
#[cfg(test)]
pub(crate) fn check_reader(input: impl std::io::Read, name: &str) -> Result<Report, CheckError> {
    let mut checker = Checker::new();
    let mut parser = Parser::new();
    input::chunks(input, name, |chunk| {
        parser.feed(chunk, |event| checker.event(&event));
        Ok(())
    })?;
    parser.finish(|event| checker.event(&event));
    Ok(checker.finish())
}

/// Violations one per line, then the summary. A reader that went away
/// (`check … | head`) ends the output quietly.
fn write_report(report: &Report, quiet: bool, out: impl Write) -> Result<(), CheckError> {
    let mut out = io::BufWriter::new(out);
    let result = (|| {
        if !quiet {
            for violation in &report.violations {
                writeln!(out, "{violation}")?;
            }
        }
        writeln!(out, "{}", report.summary())?;
        out.flush()
    })();
    match result {
        Err(source) if source.kind() != io::ErrorKind::BrokenPipe => Err(StreamError::Write {
            what: WRITING,
            source,
        }),
        _ => Ok(()),
    }
}
