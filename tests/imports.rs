//! The crate's modules import each other in one direction: no module names
//! a module (through `crate::`, `super::` or `self::` paths) that names it
//! back, directly or around a longer loop, so each can be read knowing only
//! the ones it uses.
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Loops not undone yet, each as its modules in order; the test fails if
/// one of them is gone (take it out then) or another appears.
const KNOWN_LOOPS: &[&[&str]] = &[];

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// The module path of a file under `src/` (`convert::junit::read`; the
/// crate root is empty).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The code of a file without its comments and its test module, which
/// uses whatever it tests.
fn code(text: &str) -> String {
    let text = text
        .split_once("#[cfg(test)]\nmod tests {")
        .map_or(text, |(code, _)| code);
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a file names that start at `crate`, `super` or `self`, with
/// `use` groups (`super::{a, b::c}`) spread out, as lists of segments.
fn paths(code: &str) -> Vec<Vec<String>> {
    let bytes = code.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .any(|s| bytes[at..].starts_with(s.as_bytes()))
            && (at == 0 || !word(bytes[at - 1]) && bytes[at - 1] != b':');
        if !starts {
            at += 1;
            continue;
        }
        let end = path_end(code, at);
        spread(&code[at..end], &mut found);
        at = end;
    }
    found
}

/// Where the path starting at `at` ends, a `use` group with it.
fn path_end(code: &str, at: usize) -> usize {
    let bytes = code.as_bytes();
    let mut end = at;
    let mut depth = 0;
    while end < bytes.len() {
        match bytes[end] {
            b'{' => depth += 1,
            b'}' if depth == 0 => break,
            b'}' => depth -= 1,
            b if b.is_ascii_alphanumeric() || b == b'_' || b == b':' || b == b'*' => {}
            b',' | b' ' | b'\n' if depth > 0 => {}
            _ => break,
        }
        end += 1;
        if depth == 0 && bytes.get(end - 1) == Some(&b'}') {
            break;
        }
    }
    end
}

/// `a::{b, c::{d}}` as `a::b`, `a::c::d`; a plain path as itself.
fn spread(path: &str, found: &mut Vec<Vec<String>>) {
    let segments = |text: &str| -> Vec<String> {
        text.split("::")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    let Some(open) = path.find('{') else {
        found.push(segments(path));
        return;
    };
    let prefix = segments(&path[..open]);
    found.push(prefix.clone());
    let inner = &path[open + 1..path.rfind('}').unwrap_or(path.len())];
    // Split the group at its top-level commas.
    let (mut depth, mut start) = (0, 0);
    let mut items = Vec::new();
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    for item in items.into_iter().map(str::trim).filter(|i| !i.is_empty()) {
        let mut more = Vec::new();
        spread(item, &mut more);
        for tail in more {
            let mut full = prefix.clone();
            full.extend(tail);
            found.push(full);
        }
    }
}

/// The module a path names, from the module `here`: its longest front that
/// is a module of the crate.
fn target(
    here: &[String],
    path: &[String],
    modules: &BTreeSet<Vec<String>>,
) -> Option<Vec<String>> {
    let (mut base, mut rest) = match path.first().map(String::as_str) {
        Some("crate") => (Vec::new(), &path[1..]),
        Some("self") => (here.to_vec(), &path[1..]),
        Some("super") => (here.to_vec(), path),
        _ => return None,
    };
    while rest.first().map(String::as_str) == Some("super") {
        base.pop();
        rest = &rest[1..];
    }
    base.extend(rest.iter().filter(|s| *s != "self").cloned());
    (0..=base.len())
        .rev()
        .map(|n| base[..n].to_vec())
        .find(|m| modules.contains(m))
}

/// Each module's imports of other modules.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut edges = BTreeMap::new();
    for file in &files {
        let here = module_of(&src, file);
        let code = code(&fs::read_to_string(file).unwrap());
        let used: BTreeSet<String> = paths(&code)
            .iter()
            .filter_map(|p| target(&here, p, &modules))
            .filter(|m| *m != here && !m.is_empty())
            .map(|m| m.join("::"))
            .collect();
        edges.insert(here.join("::"), used);
    }
    edges
}

/// The loops among `edges`: each strongly connected set of two or more
/// modules, sorted.
fn loops(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let reaches = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for next in edges.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|m| (m, reaches(m))).collect();
    let mut found: BTreeSet<Vec<String>> = BTreeSet::new();
    for (m, from_m) in &reach {
        let mut set: Vec<String> = from_m
            .iter()
            .filter(|n| reach.get(n).is_some_and(|r| r.contains(*m)))
            .cloned()
            .collect();
        if set.len() > 1 {
            set.sort();
            found.insert(set);
        }
    }
    found.into_iter().collect()
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let edges = imports();
    // The scan sees imports at all: the checker uses the report module.
    assert!(edges["check::checker"].contains("check::report"));
    let known: Vec<Vec<String>> = KNOWN_LOOPS
        .iter()
        .map(|l| l.iter().map(|m| m.to_string()).collect())
        .collect();
    assert_eq!(
        loops(&edges),
        known,
        "loops among the modules (left) against KNOWN_LOOPS (right)"
    );
}

#[test]
fn a_loop_is_found() {
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_string(), to.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(loops(&edges), [["a", "b", "c"]]);
    let mut found = Vec::new();
    spread("super::{a::{b, c}, d, self}", &mut found);
    let joined: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        joined,
        [
            "super",
            "super::a",
            "super::a::b",
            "super::a::c",
            "super::d",
            "super::self"
        ]
    );
}
