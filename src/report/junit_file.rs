//! `--junit-xml FILE`: the run as JUnit XML, the shape CI servers read
//! (Jenkins, GitLab, Azure DevOps, TeamCity's XML report processing) and
//! `tcrunner convert` reads back into the same tree (docs/results.md).
//!
//! ```text
//! <testsuites name="tcrunner">
//!   <testsuite name="tests/unit/test_a.py" package="tests/unit" file=… tests failures errors skipped time>
//!     <testcase classname="tests/unit/test_a.py" name="TestX > test_one" file line time>
//!       <properties>tags, the raw status, expected/actual, titles</properties>
//!       <failure message>details</failure> | <error …> | <skipped message [type="pytest.xfail"]>
//!       <system-out>…</system-out><system-err>…</system-err>
//!     </testcase>
//!     <system-out>the file's own output (jest's console)</system-out>
//!   </testsuite>
//!   <testsuite name="tcrunner">run-level properties (framework, errors, warnings) and output</testsuite>
//! </testsuites>
//! ```
//!
//! One `<testsuite>` per file (a flow: the file node, or a top-level node),
//! named by its path in the tree (folders joined by `/`, which `package`
//! holds alone); each test's `classname` is that name and its `name` the
//! titles of the suites between the file and the test with its own, joined
//! by ` > ` (vitest's own JUnit shape; when a title holds ` > ` itself, a
//! `titles` property spells them out as a JSON array). A top-level test that no file holds
//! goes in a `<testsuite name="tcrunner">` of its own.
//!
//! Streamed: a `<testsuite>` needs its counts in its opening tag, so a
//! file's test cases are held, already written out, until the file's suite
//! closes, then written with it; only the files open at once are held.
//! Text that XML 1.0 cannot hold (control characters other than tab, line
//! feed and carriage return) is written as `#xHH`, as pytest's JUnit writer
//! does.
use std::io::{self, Write};

use super::file::AtomicFile;
use super::output::{Output, TreeEvent};
use super::record::{Collected, Records, Status, SuiteRecord, TestRecord};
use crate::event::{LogLevel, Outcome, Stream, TestEvent};
use crate::hash::FastMap;

/// The name of the root and of the run's own `<testsuite>`: the reader
/// knows tcrunner's files by it.
pub(crate) const TCRUNNER: &str = "tcrunner";

/// The most run-level output (text no test or file holds) kept for the
/// run's `<testsuite>`: memory must not grow with a long run's chatter.
const RUN_OUTPUT_LIMIT: usize = 1 << 20;

/// A file's test cases, written out, and its counts.
#[derive(Debug, Default)]
struct Suite {
    cases: Vec<u8>,
    tests: u64,
    failures: u64,
    errors: u64,
    skipped: u64,
    time_ms: u64,
    stdout: String,
    stderr: String,
}

impl Suite {
    fn count(&mut self, record: &TestRecord) {
        self.tests += 1;
        self.time_ms = self.time_ms.saturating_add(record.duration_ms.unwrap_or(0));
        match record.status {
            Status::Finished(Outcome::Failed) => self.failures += 1,
            Status::Finished(Outcome::Error) => self.errors += 1,
            Status::Finished(Outcome::Skipped | Outcome::Xfail | Outcome::Todo)
            | Status::Stopped
            | Status::Collected => self.skipped += 1,
            Status::Finished(Outcome::Passed | Outcome::Xpass) => {}
        }
    }
}

pub(crate) struct JunitFile {
    file: AtomicFile,
    /// [`Output::finish`] ran: the file is whole and in place.
    finished: bool,
    records: Records,
    /// The open files' suites, by flow id.
    suites: FastMap<u64, Suite>,
    /// The framework and its version, from its reporter's hello.
    framework: Option<(String, Option<String>)>,
    /// Run-level notes: errors and warnings.
    logs: Vec<(LogLevel, String)>,
    /// Run-level output, up to [`RUN_OUTPUT_LIMIT`].
    stdout: String,
    stderr: String,
}

impl JunitFile {
    /// Creates the file's temporary twin and writes the root's opening tag.
    pub(crate) fn create(mut file: AtomicFile) -> io::Result<Self> {
        write!(
            file.writer(),
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{TCRUNNER}\">\n"
        )?;
        Ok(JunitFile {
            file,
            finished: false,
            records: Records::default(),
            suites: FastMap::default(),
            framework: None,
            logs: Vec::new(),
            stdout: String::new(),
            stderr: String::new(),
        })
    }

    fn test(&mut self, record: &TestRecord) -> io::Result<()> {
        let Some(flow_at) = record.flow_at else {
            // A top-level test: a suite of its own, written now.
            let mut suite = Suite::default();
            suite.count(record);
            write_case(&mut suite.cases, record, TCRUNNER, 0);
            return write_suite(self.file.writer(), TCRUNNER, None, None, &suite);
        };
        let suite = self.suites.entry(record.flow).or_default();
        suite.count(record);
        let classname = record.suites[..=flow_at].join("/");
        write_case(&mut suite.cases, record, &classname, flow_at + 1);
        Ok(())
    }

    fn suite_closed(&mut self, closed: SuiteRecord) -> io::Result<()> {
        if !closed.is_flow {
            return Ok(());
        }
        let Some(suite) = self.suites.remove(&closed.id) else {
            return Ok(());
        };
        let package = closed.suites.join("/");
        let name = if package.is_empty() {
            closed.name
        } else {
            format!("{package}/{}", closed.name)
        };
        let package = (!package.is_empty()).then_some(package.as_str());
        write_suite(
            self.file.writer(),
            &name,
            package,
            closed.file.as_deref(),
            &suite,
        )
    }

    fn collected(&mut self, collected: Collected<'_>) -> io::Result<()> {
        match collected {
            Collected::Nothing => Ok(()),
            Collected::Test(record) => self.test(&record),
            Collected::Suite { held, suite } => {
                held.iter().try_for_each(|record| self.test(record))?;
                self.suite_closed(suite)
            }
            Collected::Output {
                suite: Some((_, flow)),
                stream,
                text,
            } => {
                let suite = self.suites.entry(flow).or_default();
                match stream {
                    Stream::Stdout => suite.stdout.push_str(text),
                    Stream::Stderr => suite.stderr.push_str(text),
                }
                Ok(())
            }
            Collected::Output { stream, text, .. } => {
                let into = match stream {
                    Stream::Stdout => &mut self.stdout,
                    Stream::Stderr => &mut self.stderr,
                };
                if into.len() + text.len() <= RUN_OUTPUT_LIMIT {
                    into.push_str(text);
                }
                Ok(())
            }
            Collected::Log { level, text } => {
                self.logs.push((level, text.to_owned()));
                Ok(())
            }
        }
    }
}

impl Output for JunitFile {
    /// The framework's name and version, from its reporter's hello.
    fn source(&mut self, event: &TestEvent) -> io::Result<()> {
        if let TestEvent::Hello { runner, version } = event {
            self.framework = Some((runner.clone(), version.clone()));
        }
        Ok(())
    }

    fn event(&mut self, event: TreeEvent<'_>) -> io::Result<()> {
        if let TreeEvent::RunEnded(end) = event {
            (self.logs).retain(|(level, text)| *level != LogLevel::Error || !end.quotes(text));
            let errors = end.errors.iter().map(|e| e.message.clone());
            self.logs.extend(errors.map(|e| (LogLevel::Error, e)));
        }
        let collected = self.records.event(event);
        self.collected(collected)
    }

    /// Writes the suites still held (the tree closes every file before
    /// this, so only a source's stray ones), the run's own `<testsuite>`
    /// and the root's end, and puts the file in place.
    /// Text printed while one test runs is that test's stdout.
    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.records.text(bytes);
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        if std::mem::replace(&mut self.finished, true) {
            return Ok(());
        }
        for record in self.records.release() {
            self.test(&record)?;
        }
        let mut left: Vec<(u64, Suite)> = self.suites.drain().collect();
        left.sort_unstable_by_key(|(id, _)| *id);
        for (_, suite) in left {
            write_suite(self.file.writer(), TCRUNNER, None, None, &suite)?;
        }
        let out = self.file.writer();
        let mut xml = Vec::new();
        xml.extend_from_slice(
            b"<testsuite name=\"tcrunner\" tests=\"0\" failures=\"0\" errors=\"0\" skipped=\"0\">\n",
        );
        let mut properties: Vec<(&str, &str)> = Vec::new();
        if let Some((name, version)) = &self.framework {
            properties.push(("framework", name));
            if let Some(version) = version {
                properties.push(("framework.version", version));
            }
        }
        for (level, text) in &self.logs {
            let name = match level {
                LogLevel::Error => "error",
                LogLevel::Warning => "warning",
                LogLevel::Info => "info",
            };
            properties.push((name, text));
        }
        write_properties(&mut xml, &properties, "  ");
        write_output(&mut xml, &self.stdout, &self.stderr, "  ");
        xml.extend_from_slice(b"</testsuite>\n</testsuites>\n");
        out.write_all(&xml)?;
        self.file.commit()
    }
}

/// Writes a `<testsuite>` with its held cases.
fn write_suite(
    out: &mut impl Write,
    name: &str,
    package: Option<&str>,
    file: Option<&str>,
    suite: &Suite,
) -> io::Result<()> {
    let mut head = Vec::with_capacity(256);
    head.extend_from_slice(b"<testsuite name=\"");
    escape(&mut head, name, true);
    head.push(b'"');
    if let Some(package) = package {
        head.extend_from_slice(b" package=\"");
        escape(&mut head, package, true);
        head.push(b'"');
    }
    if let Some(file) = file {
        head.extend_from_slice(b" file=\"");
        escape(&mut head, file, true);
        head.push(b'"');
    }
    writeln!(
        head,
        " tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{}\">",
        suite.tests,
        suite.failures,
        suite.errors,
        suite.skipped,
        seconds(suite.time_ms)
    )?;
    out.write_all(&head)?;
    out.write_all(&suite.cases)?;
    let mut tail = Vec::new();
    write_output(&mut tail, &suite.stdout, &suite.stderr, "  ");
    tail.extend_from_slice(b"</testsuite>\n");
    out.write_all(&tail)
}

/// Writes one `<testcase>`; the suites from `below` on are named in it.
fn write_case(xml: &mut Vec<u8>, record: &TestRecord, classname: &str, below: usize) {
    xml.extend_from_slice(b"  <testcase classname=\"");
    escape(xml, classname, true);
    xml.extend_from_slice(b"\" name=\"");
    for title in record.suites.get(below..).unwrap_or_default().iter() {
        escape(xml, title, true);
        xml.extend_from_slice(b" &gt; ");
    }
    escape(xml, &record.name, true);
    xml.push(b'"');
    if let Some(file) = &record.file {
        xml.extend_from_slice(b" file=\"");
        escape(xml, file, true);
        xml.push(b'"');
    }
    if let Some(line) = record.line {
        let _ = write!(xml, " line=\"{line}\"");
    }
    if let Some(ms) = record.duration_ms {
        let _ = write!(xml, " time=\"{}\"", seconds(ms));
    }
    let mut properties: Vec<(&str, &str)> =
        record.tags.iter().map(|t| ("tag", t.as_str())).collect();
    let raw = record.status.raw();
    if !matches!(raw, "passed" | "failed" | "error" | "skipped") {
        properties.push(("status", raw));
    }
    if let (Some(expected), Some(actual)) = (&record.expected, &record.actual) {
        properties.push(("expected", expected));
        properties.push(("actual", actual));
    }
    // ` > ` inside a title would read as nesting: the titles are spelled
    // out exactly beside the joined name.
    let below = record.suites.get(below..).unwrap_or_default();
    let titles = below
        .iter()
        .chain([&record.name])
        .any(|title| title.contains(" > "))
        .then(|| {
            let mut titles: Vec<&str> = below.iter().map(String::as_str).collect();
            titles.push(&record.name);
            serde_json::to_string(&titles).expect("strings serialise")
        });
    if let Some(titles) = &titles {
        properties.push(("titles", titles));
    }
    let retries = record.retries.to_string();
    if record.retries > 0 {
        properties.push(("retries", &retries));
    }
    let problem: Option<(&str, Option<&str>)> = match record.status {
        Status::Finished(Outcome::Passed | Outcome::Xpass) => None,
        Status::Finished(Outcome::Failed) => Some(("failure", None)),
        Status::Finished(Outcome::Error) => Some(("error", None)),
        Status::Finished(Outcome::Xfail) => Some(("skipped", Some("pytest.xfail"))),
        Status::Finished(Outcome::Skipped | Outcome::Todo)
        | Status::Stopped
        | Status::Collected => Some(("skipped", None)),
    };
    if properties.is_empty()
        && problem.is_none()
        && record.stdout.is_empty()
        && record.stderr.is_empty()
    {
        xml.extend_from_slice(b"/>\n");
        return;
    }
    xml.extend_from_slice(b">\n");
    write_properties(xml, &properties, "    ");
    if let Some((tag, kind)) = problem {
        let message = match record.status {
            Status::Stopped => Some("stopped: the run ended before this test finished"),
            Status::Collected => Some("collected, not run"),
            Status::Finished(_) => record.message.as_deref(),
        };
        let _ = write!(xml, "    <{tag}");
        if let Some(message) = message {
            xml.extend_from_slice(b" message=\"");
            escape(xml, message, true);
            xml.push(b'"');
        }
        if let Some(kind) = kind {
            let _ = write!(xml, " type=\"{kind}\"");
        }
        match record.details.as_deref().filter(|d| !d.is_empty()) {
            Some(details) => {
                xml.push(b'>');
                escape(xml, details, false);
                let _ = writeln!(xml, "</{tag}>");
            }
            None => xml.extend_from_slice(b"/>\n"),
        }
    }
    write_output(xml, &record.stdout, &record.stderr, "    ");
    xml.extend_from_slice(b"  </testcase>\n");
}

fn write_properties(xml: &mut Vec<u8>, properties: &[(&str, &str)], indent: &str) {
    if properties.is_empty() {
        return;
    }
    let _ = writeln!(xml, "{indent}<properties>");
    for (name, value) in properties {
        let _ = write!(xml, "{indent}  <property name=\"");
        escape(xml, name, true);
        xml.extend_from_slice(b"\" value=\"");
        escape(xml, value, true);
        xml.extend_from_slice(b"\"/>\n");
    }
    let _ = writeln!(xml, "{indent}</properties>");
}

fn write_output(xml: &mut Vec<u8>, stdout: &str, stderr: &str, indent: &str) {
    for (tag, text) in [("system-out", stdout), ("system-err", stderr)] {
        if text.is_empty() {
            continue;
        }
        let _ = write!(xml, "{indent}<{tag}>");
        escape(xml, text, false);
        let _ = writeln!(xml, "</{tag}>");
    }
}

/// Whole milliseconds as seconds, exactly (`1.005`): the reader truncates
/// to whole milliseconds again.
fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// Whether XML 1.0 can hold `c` (its `Char` production).
fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// Appends `text` escaped for an attribute value (`attr`: quotes, and line
/// breaks and tabs as character references, which attribute-value
/// normalisation would turn into spaces) or for element content.
/// Characters XML 1.0 cannot hold become `#xHH`.
pub(crate) fn escape(out: &mut Vec<u8>, text: &str, attr: bool) {
    let special = |b: u8| {
        matches!(b, b'&' | b'<' | b'>' | b'\r')
            || (attr && matches!(b, b'"' | b'\n' | b'\t'))
            || (b < 0x20 && !matches!(b, b'\t' | b'\n'))
            || b == 0xEF // U+FFFE and U+FFFF start with it
    };
    let bytes = text.as_bytes();
    if !bytes.iter().any(|&b| special(b)) {
        out.extend_from_slice(bytes);
        return;
    }
    for c in text.chars() {
        match c {
            '&' => out.extend_from_slice(b"&amp;"),
            '<' => out.extend_from_slice(b"&lt;"),
            '>' => out.extend_from_slice(b"&gt;"),
            '"' if attr => out.extend_from_slice(b"&quot;"),
            '\n' if attr => out.extend_from_slice(b"&#10;"),
            '\t' if attr => out.extend_from_slice(b"&#9;"),
            '\r' => out.extend_from_slice(b"&#13;"),
            c if !is_xml_char(c) => {
                let _ = write!(out, "#x{:02X}", c as u32);
            }
            c => {
                let mut buf = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
}

impl Drop for JunitFile {
    /// A run that ends without reaching the outputs' end (tcrunner failed
    /// to write its stream, say) still leaves a whole file, saying so.
    fn drop(&mut self) {
        if !self.finished {
            self.logs.push((
                LogLevel::Error,
                "tcrunner stopped before the end of the run".to_owned(),
            ));
            let _ = self.finish();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(text: &str, attr: bool) -> String {
        let mut out = Vec::new();
        escape(&mut out, text, attr);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn escaping_keeps_what_xml_can_hold_and_marks_the_rest() {
        assert_eq!(escaped("plain é", true), "plain é");
        assert_eq!(
            escaped("a<b>&\"c\"\n\t\r", true),
            "a&lt;b&gt;&amp;&quot;c&quot;&#10;&#9;&#13;"
        );
        assert_eq!(escaped("a\"b\n\tc\r", false), "a\"b\n\tc&#13;");
        assert_eq!(
            escaped("\u{1b}[31mred\u{0}\u{fffe}\u{ffff}\u{fffd}", false),
            "#x1B[31mred#x00#xFFFE#xFFFF\u{fffd}"
        );
        assert_eq!(seconds(1005), "1.005");
        assert_eq!(seconds(0), "0.000");
    }
}
