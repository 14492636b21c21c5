//! `tcrunner ide install [DIR]`: the runner scripts PyCharm starts for its
//! test configurations (`python …/helpers/pycharm/_jb_<name>_runner.py`
//! with what-to-run arguments), written so that each one hands its
//! arguments and environment to tcrunner unchanged (`os.execv`: no shell,
//! so no quoting is lost), with the interpreter PyCharm started it with as
//! pytest's. A script of the IDE's own found in DIR is kept as
//! `<name>.orig`; scripts of ours are rewritten. Each new script is written
//! beside and takes the old one's name in one rename, and every refusal
//! comes before anything is written: a failure leaves the IDE's scripts as
//! they were.
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
    #[error("{}: no such folder (give the IDE's helpers folder, …/helpers/pycharm)", .0.display())]
    Missing(PathBuf),
    #[error("{}: not a folder (give the IDE's helpers folder, …/helpers/pycharm)", .0.display())]
    NotAFolder(PathBuf),
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
            IdeError::Missing(_) | IdeError::NotAFolder(_) => exit::NO_INPUT,
            IdeError::Write { .. } | IdeError::Backup { .. } | IdeError::Output(_) => {
                exit::IO_ERROR
            }
        }
    }
}

/// Writes the scripts into the folder `dir` and says what it did.
pub(crate) fn install(dir: &Path, mut out: impl Write) -> Result<i32, IdeError> {
    let exe = std::env::current_exe().map_err(IdeError::Exe)?;
    let write_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| IdeError::Write { path, source }
    };
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(IdeError::Missing(dir.to_path_buf()))
        }
        Err(e) => return Err(write_error(dir)(e)),
        Ok(meta) if !meta.is_dir() => return Err(IdeError::NotAFolder(dir.to_path_buf())),
        Ok(_) => {}
    }
    // What each script needs first: a refusal writes nothing.
    let mut planned = Vec::new();
    for (file, configuration) in SCRIPTS {
        let path = dir.join(file);
        let backup = match std::fs::read_to_string(&path) {
            Ok(existing) if !existing.contains(MARK) => {
                let mut backup = path.clone().into_os_string();
                backup.push(".orig");
                let backup = PathBuf::from(backup);
                if backup.exists() {
                    return Err(IdeError::Backup { path, backup });
                }
                Some(backup)
            }
            _ => None,
        };
        planned.push((file, path, backup, configuration));
    }
    for (file, path, backup, configuration) in planned {
        let new = dir.join(format!(".{file}.tcrunner-new"));
        let written = std::fs::File::create(&new).and_then(|mut f| {
            f.write_all(script(&exe, configuration).as_bytes())?;
            f.sync_all()
        });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&new);
            return Err(write_error(&path)(e));
        }
        // The IDE's script stays under its name until the rename below
        // puts ours there; its backup is a second name for it.
        if let Some(backup) = &backup {
            let kept = std::fs::hard_link(&path, backup)
                .or_else(|_| std::fs::copy(&path, backup).map(drop));
            if let Err(e) = kept {
                let _ = std::fs::remove_file(&new);
                return Err(write_error(backup)(e));
            }
            writeln!(out, "kept {} as {}", path.display(), backup.display())
                .map_err(IdeError::Output)?;
        }
        if let Err(e) = std::fs::rename(&new, &path) {
            let _ = std::fs::remove_file(&new);
            if let Some(backup) = &backup {
                let _ = std::fs::remove_file(backup);
            }
            return Err(write_error(&path)(e));
        }
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
