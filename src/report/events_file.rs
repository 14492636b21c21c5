//! `--events-out FILE`: everything a run's stream is made from, as JSON
//! lines, so that `tcrunner convert --input-format events` replays it into
//! the same stream, in either dialect (docs/event-protocol.md, "Recorded
//! runs").
//!
//! Lines: first a `run` line with the run's settings that shape the tree
//! (`collect_only`, `block_service_messages`); then, in the order the
//! pipeline took them, each [`TestEvent`] the tree saw, in the side
//! channel's own form, and each piece of plain text as a `text` line
//! (`"text"` when it is UTF-8, else `"bytes"`: its bytes as numbers).
use std::io::{self, Write};

use serde::Serialize;

use super::file::AtomicFile;
use super::output::{Opened, Output, TreeEvent};
use crate::event::{Stream, TestEvent, TestResult};

/// The `ev` of the first line.
const RUN_LINE: &str = "run";
/// The `ev` of a line of plain text.
const TEXT_LINE: &str = "text";

/// The first line: what the replay must know before the first event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub(crate) struct RunLine {
    /// The tree was collect-only (IntelliJ's pre-declared tree).
    #[serde(default)]
    pub collect_only: bool,
    /// Every service message in plain text was neutralised.
    #[serde(default)]
    pub block_service_messages: bool,
}

pub(crate) struct EventsFile {
    file: AtomicFile,
}

impl EventsFile {
    /// Creates the file's temporary twin and writes the `run` line.
    pub(crate) fn create(file: AtomicFile, run: RunLine) -> io::Result<Self> {
        #[derive(Serialize)]
        struct Line {
            ev: &'static str,
            #[serde(flatten)]
            run: RunLine,
        }
        let mut events = EventsFile { file };
        events.line(&Line { ev: RUN_LINE, run })?;
        Ok(events)
    }

    fn line(&mut self, value: &impl Serialize) -> io::Result<()> {
        let out = self.file.writer();
        serde_json::to_writer(&mut *out, value)?;
        out.write_all(b"\n")
    }
}

impl Output for EventsFile {
    fn source(&mut self, event: &TestEvent) -> io::Result<()> {
        self.line(event)
    }

    /// The tree's events follow from the source's: nothing to record.
    fn event(&mut self, _: TreeEvent<'_>) -> io::Result<()> {
        Ok(())
    }

    /// Recorded by [`Output::source`] as the events the test stands for.
    fn test(&mut self, _: &Opened<'_>, _: &[(Stream, String)], _: &TestResult) -> io::Result<()> {
        Ok(())
    }

    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        #[derive(Serialize)]
        struct Text<'a> {
            ev: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            text: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            bytes: Option<&'a [u8]>,
        }
        let (text, bytes) = match std::str::from_utf8(bytes) {
            Ok(text) => (Some(text), None),
            Err(_) => (None, Some(bytes)),
        };
        self.line(&Text {
            ev: TEXT_LINE,
            text,
            bytes,
        })
    }

    fn finish(&mut self) -> io::Result<()> {
        self.file.commit()
    }
}
