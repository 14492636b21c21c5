//! `tcrunner history`: what the history holds, for a person: each
//! framework's failures, its slowest tests and where `--sw` stands.
use std::io::{self, Write};
use std::path::Path;

use super::store::{load, path, Verdict};
use crate::report::printable;

/// How many of the slowest tests are shown.
const SLOWEST: usize = 10;

/// Prints the histories in `dir` (of `framework`, or of every framework
/// with one); returns the exit code.
pub(crate) fn show(dir: &Path, framework: Option<&str>, mut out: impl Write) -> io::Result<i32> {
    let names: Vec<&str> = match framework {
        Some(name) => vec![name],
        None => vec!["pytest", "jest", "vitest"],
    };
    let mut shown = 0;
    for name in names {
        let file = path(dir, name);
        if !file.is_file() {
            continue;
        }
        shown += 1;
        let history = load(&file, name, |warning| {
            let _ = writeln!(io::stderr().lock(), "tcrunner: warning: {warning}");
        });
        writeln!(
            out,
            "{name}: {} tests in {}",
            history.tests.len(),
            file.display()
        )?;
        let failed: Vec<&String> = history.failed().map(|(id, _)| id).collect();
        writeln!(out, "  failed last time: {}", failed.len())?;
        for id in &failed {
            writeln!(out, "    {}", printable(id))?;
        }
        let mut slowest: Vec<(&String, u64)> = history
            .tests
            .iter()
            .filter(|(_, e)| e.verdict != Verdict::Skipped)
            .map(|(id, e)| (id, e.duration_ms))
            .collect();
        slowest.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        let total: u64 = history
            .tests
            .values()
            .map(|e| e.duration_ms)
            .fold(0, u64::saturating_add);
        writeln!(out, "  slowest (of {:.3} s in all):", total as f64 / 1000.0)?;
        for (id, ms) in slowest.into_iter().take(SLOWEST) {
            writeln!(out, "    {:>9.3} s  {}", ms as f64 / 1000.0, printable(id))?;
        }
        match &history.stepwise.failed {
            Some(test) => writeln!(
                out,
                "  stepwise: stopped at {}, {} tests done before it",
                printable(test),
                history.stepwise.passed.len()
            )?,
            None => writeln!(out, "  stepwise: no position recorded")?,
        }
    }
    if shown == 0 {
        writeln!(out, "no test history in {}", dir.display())?;
    }
    out.flush()?;
    Ok(crate::exit::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_control_characters_are_shown_escaped() {
        let dir = std::env::temp_dir().join(format!("tcrunner-show-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let history = r#"{"version": 1, "framework": "jest", "tests": {
            "a.test.js::multi\nline\u001b[2J": {"file": "a.test.js", "verdict": "failed",
                "duration_ms": 7, "first_seen": 1, "last_run": 2}}}"#;
        std::fs::write(path(&dir, "jest"), history).unwrap();
        let mut out = Vec::new();
        show(&dir, Some("jest"), &mut out).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("  failed last time: 1\n    a.test.js::multi\\nline\\x1b[2J\n"),
            "{text}"
        );
        assert!(
            text.contains(" s  a.test.js::multi\\nline\\x1b[2J\n"),
            "{text}"
        );
    }
}
