//! `tcrunner ide install [DIR]`: the runner scripts PyCharm starts for its
//! test configurations (`python …/helpers/pycharm/_jb_<name>_runner.py`
//! with what-to-run arguments), written so that each one hands its
//! arguments and environment to tcrunner unchanged (`os.execv`: no shell,
//! so no quoting is lost), with the interpreter PyCharm started it with as
//! pytest's. A script of the IDE's own found in DIR is kept as
//! `<name>.orig`; scripts of ours are rewritten in place.
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::exit;

/// What every script of ours holds, so that a second install knows it.
const MARK: &str = "# Written by `tcrunner ide install`";

/// The IDE's runner scripts tcrunner stands in for. unittest
/// configurations run under pytest, which runs unittest's tests (and reads
/// their dotted `--target`s).
const SCRIPTS: &[(&str, &str)] = &[
    ("_jb_pytest_runner.py", "pytest"),
    ("_jb_unittest_runner.py", "unittest"),
];

/// Why the scripts could not be written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum IdeError {
    #[error("cannot tell where the tcrunner binary is")]
    Exe(#[source] io::Error),
    #[error("{}", .path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{} is not tcrunner's and {} already exists: move one of them away first", .path.display(), .backup.display())]
    Backup { path: PathBuf, backup: PathBuf },
    #[error("writing the output failed")]
    Output(#[source] io::Error),
}

impl IdeError {
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            IdeError::Exe(_) => exit::INTERNAL,
            IdeError::Write { .. } | IdeError::Backup { .. } | IdeError::Output(_) => {
                exit::IO_ERROR
            }
        }
    }
}

/// Writes the scripts into `dir` (made if missing) and says what it did.
pub(crate) fn install(dir: &Path, mut out: impl Write) -> Result<i32, IdeError> {
    let exe = std::env::current_exe().map_err(IdeError::Exe)?;
    let write_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| IdeError::Write { path, source }
    };
    std::fs::create_dir_all(dir).map_err(write_error(dir))?;
    for (file, configuration) in SCRIPTS {
        let path = dir.join(file);
        if let Ok(existing) = std::fs::read_to_string(&path) {
            if !existing.contains(MARK) {
                let mut backup = path.clone().into_os_string();
                backup.push(".orig");
                let backup = PathBuf::from(backup);
                if backup.exists() {
                    return Err(IdeError::Backup { path, backup });
                }
                std::fs::rename(&path, &backup).map_err(write_error(&path))?;
                writeln!(out, "kept {} as {}", path.display(), backup.display())
                    .map_err(IdeError::Output)?;
            }
        }
        std::fs::write(&path, script(&exe, configuration)).map_err(write_error(&path))?;
        writeln!(out, "wrote {}", path.display()).map_err(IdeError::Output)?;
    }
    out.flush().map_err(IdeError::Output)?;
    Ok(exit::SUCCESS)
}

/// The script for PyCharm's `configuration` runner, starting `exe`.
fn script(exe: &Path, configuration: &str) -> String {
    use std::os::unix::ffi::OsStrExt;
    format!(
        "{MARK}: PyCharm's {configuration} runner, replaced by tcrunner.\n\
         # PyCharm starts this file with its what-to-run arguments (--path, --target,\n\
         # --offset, then -- and the raw arguments): they and the environment go to\n\
         # tcrunner unchanged, and the interpreter PyCharm started this file with\n\
         # runs pytest. `tcrunner ide install` again rewrites it.\n\
         import os\n\
         import sys\n\
         \n\
         TCRUNNER = os.fsdecode({})\n\
         os.execv(TCRUNNER, [TCRUNNER, \"--framework\", \"pytest\", \"--python\", sys.executable] + sys.argv[1:])\n",
        python_bytes(exe.as_os_str().as_bytes())
    )
}

/// `bytes` as a Python bytes literal: a path whatever its encoding.
fn python_bytes(bytes: &[u8]) -> String {
    let mut literal = String::from("b'");
    for &b in bytes {
        match b {
            b'\\' | b'\'' => {
                literal.push('\\');
                literal.push(b as char);
            }
            0x20..=0x7e => literal.push(b as char),
            _ => literal.push_str(&format!("\\x{b:02x}")),
        }
    }
    literal.push('\'');
    literal
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_a_bytes_literal_whatever_it_holds() {
        assert_eq!(python_bytes(b"/usr/bin/tcrunner"), "b'/usr/bin/tcrunner'");
        assert_eq!(
            python_bytes("/o'k\\ä".as_bytes()),
            "b'/o\\'k\\\\\\xc3\\xa4'"
        );
    }
}
