//! The reporters that run inside the frameworks, embedded in the binary.
//!
//! They live in `runners/` as ordinary source files (so they can be linted
//! and run by hand). Each framework's module declares the one it loads, with
//! [`runner!`], and the files that one loads from its own folder; they are
//! written out at run time by
//! [`frameworks::write_runner`](crate::frameworks::write_runner).

/// An embedded file of `runners/`: a reporter a framework loads, or a file
/// a reporter loads from its own folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Runner {
    /// The file name it is written out as, relative to the folder of the
    /// reporter that loads it.
    pub file_name: &'static str,
    /// The source.
    pub source: &'static str,
    /// The folder it and its companions are written into, below the
    /// directory of this set of files (empty: that directory).
    pub folder: &'static str,
    /// The files it loads from its own folder, written beside it.
    pub companions: &'static [Runner],
}

/// The [`Runner`] for the file `runners/NAME`, embedded:
/// `runner!("NAME")`, or `runner!("NAME", [COMPANION, ...])` for one that
/// loads other files from its folder.
macro_rules! runner {
    ($file:literal $(, [$($companion:expr),* $(,)?])?) => {
        $crate::runners::Runner {
            file_name: $file,
            source: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/runners/", $file)),
            folder: "",
            companions: &[$($($companion),*)?],
        }
    };
}
pub(crate) use runner;

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use clap::ValueEnum as _;

    use super::*;
    use crate::frameworks::FrameworkName;

    /// Every file the frameworks' reporters bring, by file name.
    fn embedded() -> BTreeMap<&'static str, Runner> {
        let mut files = BTreeMap::new();
        let mut pending: Vec<Runner> = FrameworkName::value_variants()
            .iter()
            .map(|name| name.framework().runner())
            .collect();
        while let Some(runner) = pending.pop() {
            if files.insert(runner.file_name, runner).is_none() {
                pending.extend(runner.companions);
            }
        }
        files
    }

    /// Each file in `runners/` is embedded: one a reporter loads, or loaded
    /// beside one.
    #[test]
    fn every_file_of_runners_is_embedded() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("runners");
        let on_disk: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| !name.starts_with('.') && name != "__pycache__")
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let embedded: Vec<&str> = embedded().into_keys().collect();
        assert_eq!(embedded, on_disk);
    }

    /// Each embedded file is valid source for its interpreter.
    #[test]
    fn every_runner_parses() {
        let dir = std::env::temp_dir().join(format!("tcrunner-runners-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for runner in embedded().into_values() {
            let file = dir.join(runner.file_name);
            std::fs::write(&file, runner.source).unwrap();
            let extension = file.extension().and_then(|e| e.to_str());
            let status = match extension {
                Some("py") => std::process::Command::new("python3")
                    .args(["-m", "py_compile"])
                    .arg(&file)
                    .status(),
                Some("cjs" | "mjs" | "js") => std::process::Command::new("node")
                    .arg("--check")
                    .arg(&file)
                    .status(),
                _ => panic!("{}: no parser for this kind of file", runner.file_name),
            };
            assert!(
                status.unwrap().success(),
                "{} does not parse",
                runner.file_name
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
