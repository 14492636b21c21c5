//! A recorded run (`--events-out`; a reporter's `TCRUNNER_EVENT_FILE` too):
//! JSON lines of side-channel events and plain text, replayed into the
//! pipeline in their order, so the stream is the live run's
//! (docs/event-protocol.md, "Recorded runs").
use std::io::BufRead;

use serde::Deserialize;

use super::common::{Emitter, ReadError};
use crate::event::TestEvent;
use crate::report::RunLine;

/// What every line of a recording starts with: the side channel's tag.
pub(crate) const LINE_START: &[u8] = br#"{"ev":""#;

/// A line that is not a [`TestEvent`].
#[derive(Deserialize)]
#[serde(tag = "ev", rename_all = "snake_case")]
enum Record {
    Run(RunLine),
    Text {
        #[serde(default)]
        text: Option<String>,
        #[serde(default)]
        bytes: Option<Vec<u8>>,
    },
}

/// The settings of the recording whose first bytes are `prefix`, when its
/// first line is a whole `run` line.
pub(crate) fn settings(prefix: &[u8]) -> Option<RunLine> {
    let line = &prefix[..memchr::memchr(b'\n', prefix)?];
    match serde_json::from_slice(line).ok()? {
        Record::Run(run) => Some(run),
        Record::Text { .. } => None,
    }
}

/// Replays every line of `input`.
pub(crate) fn read(input: impl BufRead, out: &mut Emitter<'_>) -> Result<(), ReadError> {
    for (index, line) in input.split(b'\n').enumerate() {
        let line = line.map_err(ReadError::Io)?;
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // serde's position is within the line: the line is the file's.
        let malformed = |err| match ReadError::from_json(err) {
            ReadError::Malformed {
                column, problem, ..
            } => ReadError::Malformed {
                line: index as u64 + 1,
                column,
                problem,
            },
            other => other,
        };
        match TestEvent::from_line(line) {
            Ok(event) => out.send(event)?,
            Err(not_an_event) => match serde_json::from_slice::<Record>(line) {
                // Read before the pipeline started (`settings`).
                Ok(Record::Run(_)) => {}
                Ok(Record::Text {
                    text: Some(text), ..
                }) => out.text(text.as_bytes())?,
                Ok(Record::Text {
                    bytes: Some(bytes), ..
                }) => out.text(&bytes)?,
                Ok(Record::Text { .. }) => {
                    return Err(ReadError::Malformed {
                        line: index as u64 + 1,
                        column: 0,
                        problem: "a text line with neither `text` nor `bytes`".into(),
                    })
                }
                Err(_) => return Err(malformed(not_an_event)),
            },
        }
    }
    Ok(())
}
