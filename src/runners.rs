//! The reporters that run inside the frameworks, embedded in the binary.
//!
//! They live in `runners/` as ordinary source files (so they can be linted
//! and run by hand) and are written out at run time by
//! [`frameworks::write_runner`](crate::frameworks::write_runner).

/// An embedded reporter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runner {
    Pytest,
    Jest,
    Vitest,
}

impl Runner {
    pub(crate) const ALL: [Runner; 3] = [Runner::Pytest, Runner::Jest, Runner::Vitest];

    /// The file name it is written out as.
    pub(crate) fn file_name(self) -> &'static str {
        match self {
            Runner::Pytest => "tcrunner_pytest.py",
            Runner::Jest => "tcrunner-jest.cjs",
            Runner::Vitest => "tcrunner-vitest.mjs",
        }
    }

    /// The source.
    pub(crate) fn source(self) -> &'static str {
        match self {
            Runner::Pytest => include_str!("../runners/tcrunner_pytest.py"),
            Runner::Jest => include_str!("../runners/tcrunner-jest.cjs"),
            Runner::Vitest => include_str!("../runners/tcrunner-vitest.mjs"),
        }
    }
}
