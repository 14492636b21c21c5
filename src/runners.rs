//! The reporters that run inside the frameworks, embedded in the binary.
//!
//! They live in `runners/` as ordinary source files (so they can be linted
//! and run by hand) and are written out at run time by
//! [`frameworks::write_runner`](crate::frameworks::write_runner).

/// An embedded reporter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runner {
    /// The module pytest loads with `-p`: a few lines that import
    /// [`Runner::PytestReporter`] from its own folder.
    Pytest,
    /// The pytest reporter itself.
    PytestReporter,
    Jest,
    /// What starts jest with the jest reporter, written beside it.
    JestLaunch,
    Vitest,
    /// The test runner the vitest reporter gives vitest's workers.
    VitestWorker,
    /// What the jest and vitest reporters share, loaded from their folder.
    JsCommon,
}

impl Runner {
    #[cfg(test)]
    pub(crate) const ALL: [Runner; 7] = [
        Runner::Pytest,
        Runner::PytestReporter,
        Runner::Jest,
        Runner::JestLaunch,
        Runner::Vitest,
        Runner::VitestWorker,
        Runner::JsCommon,
    ];

    /// The file name it is written out as, relative to the folder of the
    /// reporter that loads it.
    pub(crate) fn file_name(self) -> &'static str {
        match self {
            Runner::Pytest => "tcrunner_pytest.py",
            Runner::PytestReporter => "_tcrunner_pytest.py",
            Runner::Jest => "tcrunner-jest.cjs",
            Runner::JestLaunch => "tcrunner-jest-launch.cjs",
            Runner::Vitest => "tcrunner-vitest.mjs",
            Runner::VitestWorker => "tcrunner-vitest-runner.mjs",
            Runner::JsCommon => "tcrunner-common.cjs",
        }
    }

    /// The source.
    pub(crate) fn source(self) -> &'static str {
        match self {
            Runner::Pytest => include_str!("../runners/tcrunner_pytest.py"),
            Runner::PytestReporter => include_str!("../runners/_tcrunner_pytest.py"),
            Runner::Jest => include_str!("../runners/tcrunner-jest.cjs"),
            Runner::JestLaunch => include_str!("../runners/tcrunner-jest-launch.cjs"),
            Runner::Vitest => include_str!("../runners/tcrunner-vitest.mjs"),
            Runner::VitestWorker => include_str!("../runners/tcrunner-vitest-runner.mjs"),
            Runner::JsCommon => include_str!("../runners/tcrunner-common.cjs"),
        }
    }

    /// The folder it and its companions are written into, below the
    /// directory of this set of files.
    pub(crate) fn folder(self) -> &'static str {
        match self {
            // vitest loads a reporter, and its workers their runner, through
            // vite's transform unless the file is under a node_modules
            // folder; there they are imported natively, as vitest itself is:
            // no transform of the reporter in the main process (a tenth of a
            // second of CPU) nor of the runner in every worker, and one copy
            // of vitest's modules.
            Runner::Vitest => "node_modules",
            Runner::Pytest
            | Runner::PytestReporter
            | Runner::Jest
            | Runner::JestLaunch
            | Runner::VitestWorker
            | Runner::JsCommon => "",
        }
    }

    /// The files it loads from its own folder, written beside it.
    pub(crate) fn companions(self) -> &'static [Runner] {
        match self {
            Runner::Pytest => &[Runner::PytestReporter],
            Runner::Jest => &[Runner::JsCommon, Runner::JestLaunch],
            Runner::Vitest => &[Runner::JsCommon, Runner::VitestWorker],
            Runner::PytestReporter
            | Runner::JestLaunch
            | Runner::VitestWorker
            | Runner::JsCommon => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each embedded reporter is valid source for its interpreter.
    #[test]
    fn every_runner_parses() {
        let dir = std::env::temp_dir().join(format!("tcrunner-runners-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for runner in Runner::ALL {
            let file = dir.join(runner.file_name());
            std::fs::write(&file, runner.source()).unwrap();
            let status = match runner {
                Runner::Pytest | Runner::PytestReporter => std::process::Command::new("python3")
                    .args(["-m", "py_compile"])
                    .arg(&file)
                    .status(),
                Runner::Jest
                | Runner::JestLaunch
                | Runner::Vitest
                | Runner::VitestWorker
                | Runner::JsCommon => std::process::Command::new("node")
                    .arg("--check")
                    .arg(&file)
                    .status(),
            };
            assert!(
                status.unwrap().success(),
                "{} does not parse",
                runner.file_name()
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
