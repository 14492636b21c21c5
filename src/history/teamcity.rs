//! TeamCity's Parallel Tests build feature: the batch of test classes this
//! agent runs, from the filter file the feature names in the build's
//! properties.
//!
//! The agent's build properties file (`TEAMCITY_BUILD_PROPERTIES_FILE`, Java
//! properties) names `teamcity.build.parallelTests.includesFile` (the
//! classes to run) or `…excludesFile` (the classes the other batches run).
//! The filter file starts with `#`-prefixed header lines (`#version=1`,
//! `#algorithm=…`, `#current_batch=N`, `#total_batches=M`), then holds one
//! test class per line.
//!
//! A tcrunner test's class, as TeamCity records it from the teamcity
//! dialect, is taken to be its file suite: the test file's path relative to
//! the project (`tests/test_a.py`, `src/math.test.ts`). A listed class
//! selects that file; what follows a `:` or a space in it (`tests/test_a.py:
//! TestX`, `tests/test_a.py::TestX`) is left out, so the whole file runs.
use std::path::Path;

/// The filter file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Batch {
    /// The classes are this batch's (an includes file), or the other
    /// batches' (an excludes file).
    pub include: bool,
    pub classes: Vec<String>,
    /// `#current_batch` and `#total_batches`, when the header says.
    pub current: Option<u32>,
    pub total: Option<u32>,
}

impl Batch {
    /// Whether the test file `file` (relative, `/`-separated) runs in
    /// this batch.
    pub(crate) fn runs(&self, file: &str) -> bool {
        self.files().any(|listed| listed == file) == self.include
    }

    /// The test files the classes name.
    pub(crate) fn files(&self) -> impl Iterator<Item = &str> {
        self.classes
            .iter()
            .map(|class| class.split([':', ' ']).next().unwrap_or(class))
    }
}

/// A value of a Java properties file (`key=value` or `key:value`, `\`
/// escapes); the last definition wins.
fn property(text: &str, key: &str) -> Option<String> {
    let mut found = None;
    for line in text.lines() {
        let line = line.trim_start();
        if line.starts_with('#') || line.starts_with('!') {
            continue;
        }
        let Some(at) = line.find(['=', ':']) else {
            continue;
        };
        if unescape(line[..at].trim_end()) == key {
            found = Some(unescape(line[at + 1..].trim_start()));
        }
    }
    found
}

/// Java properties escapes: `\:` → `:`, `\\` → `\`, `\t`, `\n`.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Reads the filter file's content.
pub(crate) fn parse(text: &str, include: bool) -> Batch {
    let mut batch = Batch {
        include,
        classes: Vec::new(),
        current: None,
        total: None,
    };
    for line in text.lines() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('#') {
            if let Some((key, value)) = header.split_once('=') {
                match key.trim() {
                    "current_batch" => batch.current = value.trim().parse().ok(),
                    "total_batches" => batch.total = value.trim().parse().ok(),
                    _ => {}
                }
            }
        } else if !line.is_empty() {
            batch.classes.push(line.to_owned());
        }
    }
    batch
}

/// The batch this build runs, when the build's properties (the file
/// `properties_file` names) name a Parallel Tests filter file. Build properties that cannot be read name no batch (`warn` says so, and
/// every test runs); a filter file named but unreadable is an error.
pub(crate) fn batch(
    properties_file: &Path,
    warn: impl FnOnce(String),
) -> Result<Option<Batch>, String> {
    let properties = match std::fs::read_to_string(properties_file) {
        Ok(text) => text,
        Err(e) => {
            warn(format!(
                "cannot read the TeamCity build properties {}: {e}",
                properties_file.display()
            ));
            return Ok(None);
        }
    };
    for (key, include) in [
        ("teamcity.build.parallelTests.includesFile", true),
        ("teamcity.build.parallelTests.excludesFile", false),
    ] {
        if let Some(file) = property(&properties, key).filter(|f| !f.is_empty()) {
            let text = std::fs::read_to_string(&file)
                .map_err(|e| format!("cannot read the TeamCity parallel tests file {file}: {e}"))?;
            return Ok(Some(parse(&text, include)));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_file_gives_its_classes_and_batch() {
        let text = "#version=1\n#algorithm=duration\n#current_batch=2\n#total_batches=3\n\
                    tests/test_a.py\nsrc/b.test.ts: outer\n\n";
        let batch = parse(text, false);
        assert_eq!(batch.classes, ["tests/test_a.py", "src/b.test.ts: outer"]);
        assert_eq!((batch.current, batch.total), (Some(2), Some(3)));
        // Excluded: the listed files are the other batches'.
        assert!(!batch.runs("tests/test_a.py"));
        assert!(!batch.runs("src/b.test.ts"));
        assert!(batch.runs("tests/test_ab.py"));
        assert!(batch.runs("src/b.test.tsx"));
        assert_eq!(
            batch.files().collect::<Vec<_>>(),
            ["tests/test_a.py", "src/b.test.ts"]
        );
        let included = parse(text, true);
        assert!(included.runs("tests/test_a.py"));
        assert!(!included.runs("tests/test_c.py"));
    }

    #[test]
    fn properties_read_as_java_writes_them() {
        let text = "# comment\nteamcity.build.parallelTests.excludesFile=C\\:\\\\agent\\\\x.txt\n\
                    other : value\n";
        assert_eq!(
            property(text, "teamcity.build.parallelTests.excludesFile").as_deref(),
            Some("C:\\agent\\x.txt")
        );
        assert_eq!(property(text, "other").as_deref(), Some("value"));
        assert_eq!(property(text, "missing"), None);
    }
}
