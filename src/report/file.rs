//! A result file written atomically: into a temporary file beside it, then
//! renamed over it, so a reader never sees half a file and an old file
//! stays whole until the new one is complete.
use std::fs::File;
use std::io::{self, BufWriter, Seek};
use std::path::{Path, PathBuf};

/// Why an output file cannot be written.
#[derive(Debug, thiserror::Error)]
#[error("{option} {}: cannot write", path.display())]
pub(crate) struct FileError {
    /// The option that named the file.
    pub option: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

pub(crate) struct AtomicFile {
    /// The option that named the file, for errors.
    option: &'static str,
    path: PathBuf,
    /// `None` where the path is no regular file (a pipe, a device such as
    /// `/dev/stdout`): written straight through, since a rename would
    /// replace it.
    temporary: Option<PathBuf>,
    out: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Creates the temporary file now, so that a path that cannot be
    /// written is found before anything runs.
    pub(crate) fn create(option: &'static str, path: &Path) -> Result<Self, FileError> {
        let error = |source| FileError {
            option,
            path: path.to_owned(),
            source,
        };
        // A symbolic link is written through: its target is the file
        // replaced. A path that is no regular file takes the bytes as
        // they come (a pipe cannot be renamed over; a device must not be).
        let path = match std::fs::metadata(path) {
            Ok(meta) if !meta.is_file() && !meta.is_dir() => {
                let file = File::options().write(true).open(path).map_err(error)?;
                return Ok(AtomicFile {
                    option,
                    path: path.to_owned(),
                    temporary: None,
                    out: Some(BufWriter::with_capacity(1 << 16, file)),
                });
            }
            Ok(_) => std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned()),
            Err(_) => path.to_owned(),
        };
        let path = path.as_path();
        let name = path.file_name().ok_or_else(|| {
            error(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a file name",
            ))
        })?;
        let mut temporary_name = std::ffi::OsString::from(".");
        temporary_name.push(name);
        temporary_name.push(format!(".tcrunner-{}.tmp", std::process::id()));
        let temporary = path.with_file_name(temporary_name);
        // Readable too: see `commit`.
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temporary)
            .map_err(error)?;
        Ok(AtomicFile {
            option,
            path: path.to_owned(),
            temporary: Some(temporary),
            out: Some(BufWriter::with_capacity(1 << 16, file)),
        })
    }

    /// Where the content goes until [`AtomicFile::commit`].
    pub(crate) fn writer(&mut self) -> &mut BufWriter<File> {
        self.out.as_mut().expect("written only before commit")
    }

    /// Writes the rest out and puts the file in its place; an error names
    /// the file and its option.
    pub(crate) fn commit(&mut self) -> io::Result<()> {
        self.put_in_place().map_err(|source| {
            io::Error::new(
                source.kind(),
                FileError {
                    option: self.option,
                    path: self.path.clone(),
                    source,
                },
            )
        })
    }

    fn put_in_place(&mut self) -> io::Result<()> {
        let Some(out) = self.out.take() else {
            return Ok(());
        };
        let mut file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        let Some(temporary) = &self.temporary else {
            return Ok(()); // written straight through
        };
        file.sync_all()?;
        if !names(temporary, &file)? {
            // Something removed or replaced the temporary file while the
            // run went on (a test writing in the folder): what tcrunner
            // wrote is still in the file it holds, and goes in place, not
            // what now bears the name.
            match std::fs::remove_file(temporary) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            // The whole folder may have gone (a test cleaning up after
            // itself): it is made again, as the file was asked for there.
            if let Some(folder) = temporary.parent().filter(|f| !f.exists()) {
                std::fs::create_dir_all(folder)?;
            }
            let mut again = File::options()
                .write(true)
                .create_new(true)
                .open(temporary)?;
            file.seek(io::SeekFrom::Start(0))?;
            io::copy(&mut file, &mut again)?;
            again.sync_all()?;
        }
        drop(file);
        std::fs::rename(temporary, &self.path)
    }
}

/// Whether `path` names `file` itself (the same device and inode).
fn names(path: &Path, file: &File) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let ours = file.metadata()?;
    Ok(std::fs::symlink_metadata(path)
        .is_ok_and(|there| (there.dev(), there.ino()) == (ours.dev(), ours.ino())))
}

impl Drop for AtomicFile {
    /// A file never committed (tcrunner failed before the end) still puts
    /// what it holds in place: what was known is worth more than nothing.
    fn drop(&mut self) {
        if self.out.is_some() && self.commit().is_err() {
            if let Some(temporary) = &self.temporary {
                let _ = std::fs::remove_file(temporary);
            }
        }
    }
}
