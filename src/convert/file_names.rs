//! Names of the file suites of jest and vitest JSON reports: each file's
//! path below the current directory when every file of the report is in it
//! (a report converted in its project gets the names a live run gives, which
//! are relative to the project), else below the folder every file is in.
//! The paths are the reporting machine's, so a Windows path
//! (`C:\proj\src\a.test.js`) is split at `\` as well as `/`, whatever
//! system converts the report.

/// The folder every file of a report is in, to name each file below it.
#[derive(Debug, Default)]
pub(crate) struct Root(Vec<String>);

impl Root {
    /// `base` (the current directory) when every one of `names` is in it,
    /// else the deepest folder they all share (none for fewer than two).
    pub(crate) fn new<'n>(
        names: impl Iterator<Item = Option<&'n str>>,
        base: Option<&str>,
    ) -> Root {
        let mut common: Option<Vec<&str>> = None;
        let mut count = 0;
        for name in names {
            count += 1;
            let parts = parts(name.unwrap_or(""));
            let dir = &parts[..parts.len().saturating_sub(1)];
            common = Some(match common {
                None => dir.to_vec(),
                Some(mut common) => {
                    let keep = common.iter().zip(dir).take_while(|(a, b)| a == b).count();
                    common.truncate(keep);
                    common
                }
            });
        }
        let base = base
            .map(parts)
            .filter(|base| !base.is_empty() && is_absolute(base));
        match (common, base) {
            (Some(common), Some(base)) if common.starts_with(&base) => {
                Root(base.into_iter().map(str::to_string).collect())
            }
            (Some(common), _) if count >= 2 => {
                Root(common.into_iter().map(str::to_string).collect())
            }
            _ => Root::default(),
        }
    }

    /// A file suite's name: the file's path below the root, with `/`
    /// between folders, else its basename.
    pub(crate) fn display_name(&self, name: &str) -> String {
        let parts = parts(name);
        let root = &self.0;
        let below = !root.is_empty()
            && parts.len() > root.len()
            && parts.iter().zip(root).all(|(part, dir)| part == dir);
        let shown = if below {
            parts[root.len()..].join("/")
        } else {
            parts.last().copied().unwrap_or_default().to_string()
        };
        if shown.is_empty() {
            "(unnamed file)".to_string()
        } else {
            shown
        }
    }
}

/// A path's root, folders and name. An absolute path starts with its root
/// (`""` for `/`, `C:` for a drive), so only paths on one root share a
/// folder; doubled separators and `.` folders are left out.
fn parts(path: &str) -> Vec<&str> {
    let windows = is_windows_path(path);
    let mut parts = path.split(|c| c == '/' || (windows && c == '\\'));
    let first = parts.next().unwrap_or_default();
    std::iter::once(first)
        .chain(parts.filter(|p| !p.is_empty() && *p != "."))
        .collect()
}

/// Whether a path's [`parts`] start at a root (`/`, a drive, a UNC share).
fn is_absolute(parts: &[&str]) -> bool {
    parts.len() > 1 && (parts[0].is_empty() || parts[0].ends_with(':'))
}

/// Whether `path` is written as Windows writes paths: with a drive (`C:\`,
/// `C:/`), as a UNC path (`\\server\share`), or with `\` and no `/`. A `\`
/// in other paths is part of a name, as on Unix.
fn is_windows_path(path: &str) -> bool {
    let bytes = path.as_bytes();
    let drive = bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'\\' | b'/');
    drive || path.starts_with(r"\\") || (path.contains('\\') && !path.contains('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(root: &Root, paths: &[&str]) -> Vec<String> {
        paths.iter().map(|p| root.display_name(p)).collect()
    }

    #[test]
    fn file_names_are_relative_to_the_common_root() {
        let paths = ["/p/a/x.test.js", "/p/b/y.test.js"];
        let root = Root::new(paths.iter().copied().map(Some), None);
        assert_eq!(root.0, ["", "p"]);
        assert_eq!(names(&root, &paths), ["a/x.test.js", "b/y.test.js"]);
        // Only the root is shared: named below it, as before.
        let apart = ["/a/x.test.js", "/b//./y.test.js"];
        let root = Root::new(apart.iter().copied().map(Some), None);
        assert_eq!(names(&root, &apart), ["a/x.test.js", "b/y.test.js"]);
        let one = Root::new([Some("/p/a/x.test.js")].into_iter(), None);
        assert_eq!(one.display_name("/p/a/x.test.js"), "x.test.js");
        assert_eq!(one.display_name(""), "(unnamed file)");
        let relative = ["x.test.js", "y.test.js"];
        let root = Root::new(relative.iter().copied().map(Some), None);
        assert_eq!(names(&root, &relative), relative);
    }

    #[test]
    fn files_in_the_current_directory_are_named_below_it() {
        let paths = ["/p/src/a/x.test.js", "/p/src/b/y.test.js"];
        let root = Root::new(paths.iter().copied().map(Some), Some("/p"));
        assert_eq!(names(&root, &paths), ["src/a/x.test.js", "src/b/y.test.js"]);
        let one = Root::new([Some("/p/src/x.test.js")].into_iter(), Some("/p/"));
        assert_eq!(one.display_name("/p/src/x.test.js"), "src/x.test.js");
        // A file elsewhere: below the common folder, as without a base.
        let apart = ["/p/src/x.test.js", "/q/y.test.js"];
        let root = Root::new(apart.iter().copied().map(Some), Some("/p"));
        assert_eq!(names(&root, &apart), ["p/src/x.test.js", "q/y.test.js"]);
        let root = Root::new(paths.iter().copied().map(Some), Some("/elsewhere"));
        assert_eq!(names(&root, &paths), ["a/x.test.js", "b/y.test.js"]);
        // Relative names are never below the base.
        let relative = ["src/x.test.js", "src/y.test.js"];
        let root = Root::new(relative.iter().copied().map(Some), Some("/p"));
        assert_eq!(names(&root, &relative), ["x.test.js", "y.test.js"]);
    }

    #[test]
    fn windows_paths_split_at_backslashes() {
        let paths = [
            r"C:\proj\src\math.test.js",
            r"C:\proj\src\deep\hook.test.js",
        ];
        let root = Root::new(paths.iter().copied().map(Some), None);
        assert_eq!(names(&root, &paths), ["math.test.js", "deep/hook.test.js"]);
        let unc = [r"\\srv\share\a\x.test.js", r"\\srv\share\b\y.test.js"];
        let root = Root::new(unc.iter().copied().map(Some), None);
        assert_eq!(names(&root, &unc), ["a/x.test.js", "b/y.test.js"]);
        // Other drives share no folder.
        let drives = [r"C:\p\x.test.js", r"D:\p\y.test.js"];
        let root = Root::new(drives.iter().copied().map(Some), None);
        assert_eq!(names(&root, &drives), ["x.test.js", "y.test.js"]);
        // On Unix a `\` is part of a name.
        let unix = [r"/p/a\b.test.js", "/p/c.test.js"];
        let root = Root::new(unix.iter().copied().map(Some), None);
        assert_eq!(names(&root, &unix), [r"a\b.test.js", "c.test.js"]);
    }
}
