//! `tcrunner check [FILE|-]`: reads the stream in chunks, prints each
//! violation and a summary, and returns the exit code.
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::PathBuf;

use tcrunner_protocol::Parser;

use super::checker::Checker;
use super::report::Report;
use crate::cli::CheckConfig;
use crate::exit;

/// Why `check` could not do its job (as opposed to finding violations).
#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckError {
    /// The input does not exist or cannot be opened.
    #[error("cannot open {}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Reading the input failed part way (or it is a directory).
    #[error("cannot read {name}")]
    Read {
        name: String,
        #[source]
        source: io::Error,
    },
    /// Writing the report failed for a reason other than a closed pipe.
    #[error("cannot write the check report")]
    Write(#[source] io::Error),
}

impl CheckError {
    /// The process exit code for this error.
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            CheckError::Open { .. } | CheckError::Read { .. } => exit::NO_INPUT,
            CheckError::Write(_) => exit::IO_ERROR,
        }
    }
}

const CHUNK: usize = 64 * 1024;

/// Checks the configured file (or stdin), writes the report to `out` and
/// returns 0 when the stream is clean, 1 when it has violations.
pub(crate) fn run(config: &CheckConfig, out: impl Write) -> Result<i32, CheckError> {
    let report = match &config.file {
        Some(path) => {
            let file = File::open(path).map_err(|source| CheckError::Open {
                path: path.clone(),
                source,
            })?;
            check_reader(file, &path.display().to_string())?
        }
        None => check_reader(io::stdin().lock(), "standard input")?,
    };
    write_report(&report, config.quiet, out)?;
    Ok(if report.is_clean() {
        exit::SUCCESS
    } else {
        exit::TESTS_FAILED
    })
}

/// Streams `input` through the parser and the checker in fixed-size chunks.
pub(crate) fn check_reader(mut input: impl Read, name: &str) -> Result<Report, CheckError> {
    let mut checker = Checker::new();
    let mut parser = Parser::new();
    let mut buf = vec![0; CHUNK];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(CheckError::Read {
                    name: name.to_string(),
                    source,
                })
            }
        };
        parser.feed(&buf[..n], |event| checker.event(&event));
    }
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
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(CheckError::Write(e)),
        _ => Ok(()),
    }
}
