//! `--sandbox` where tcrunner has no sandbox: a clear refusal.
use std::io;
use std::path::{Path, PathBuf};

/// What a sandboxed run may write and must still see.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sandbox {
    pub writable: Vec<PathBuf>,
    pub visible: Vec<PathBuf>,
    pub scratch: Vec<PathBuf>,
}

/// Never made: [`probe`] refuses first.
pub(crate) struct Prepared;

impl Sandbox {
    pub(crate) fn for_spec(_spec: &super::Spec, writable: Vec<PathBuf>) -> Sandbox {
        Sandbox {
            writable,
            visible: Vec::new(),
            scratch: Vec::new(),
        }
    }

    pub(crate) fn prepare(&self, _cwd: &Path) -> io::Result<Prepared> {
        Err(io::Error::other("--sandbox is only available on Linux"))
    }
}

/// Always the refusal.
pub(crate) fn probe(_sandbox: &Sandbox, _cwd: &Path) -> Result<(), String> {
    Err("--sandbox: only available on Linux (user, mount, network and PID namespaces)".into())
}

pub(crate) fn enter_for_exec(_prepared: &Prepared) -> io::Result<()> {
    Err(io::Error::other("--sandbox is only available on Linux"))
}
