//! Names of the file suites of jest and vitest JSON reports: each file's
//! path below the folder every file of the report is in. The paths are the
//! reporting machine's, so a Windows path (`C:\proj\src\a.test.js`) is
//! split at `\` as well as `/`, whatever system converts the report.

/// The folder every file of a report is in, to name each file below it.
#[derive(Debug, Default)]
pub(crate) struct Root(Vec<String>);

impl Root {
    /// The deepest folder all `names` share; none for fewer than two names.
    pub(crate) fn common<'n>(names: impl Iterator<Item = Option<&'n str>>) -> Root {
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
        match common {
            Some(common) if count >= 2 => Root(common.into_iter().map(str::to_string).collect()),
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
        let root = Root::common(paths.iter().copied().map(Some));
        assert_eq!(root.0, ["", "p"]);
        assert_eq!(names(&root, &paths), ["a/x.test.js", "b/y.test.js"]);
        // Only the root is shared: named below it, as before.
        let apart = ["/a/x.test.js", "/b//./y.test.js"];
        let root = Root::common(apart.iter().copied().map(Some));
        assert_eq!(names(&root, &apart), ["a/x.test.js", "b/y.test.js"]);
        let one = Root::common([Some("/p/a/x.test.js")].into_iter());
        assert_eq!(one.display_name("/p/a/x.test.js"), "x.test.js");
        assert_eq!(one.display_name(""), "(unnamed file)");
        let relative = ["x.test.js", "y.test.js"];
        let root = Root::common(relative.iter().copied().map(Some));
        assert_eq!(names(&root, &relative), relative);
    }

    #[test]
    fn windows_paths_split_at_backslashes() {
        let paths = [
            r"C:\proj\src\math.test.js",
            r"C:\proj\src\deep\hook.test.js",
        ];
        let root = Root::common(paths.iter().copied().map(Some));
        assert_eq!(names(&root, &paths), ["math.test.js", "deep/hook.test.js"]);
        let unc = [r"\\srv\share\a\x.test.js", r"\\srv\share\b\y.test.js"];
        let root = Root::common(unc.iter().copied().map(Some));
        assert_eq!(names(&root, &unc), ["a/x.test.js", "b/y.test.js"]);
        // Other drives share no folder.
        let drives = [r"C:\p\x.test.js", r"D:\p\y.test.js"];
        let root = Root::common(drives.iter().copied().map(Some));
        assert_eq!(names(&root, &drives), ["x.test.js", "y.test.js"]);
        // On Unix a `\` is part of a name.
        let unix = [r"/p/a\b.test.js", "/p/c.test.js"];
        let root = Root::common(unix.iter().copied().map(Some));
        assert_eq!(names(&root, &unix), [r"a\b.test.js", "c.test.js"]);
    }
}
