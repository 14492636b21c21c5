//! What a `<testcase>`'s `classname` says, producer by producer: the suites
//! it adds under its `<testsuite>`, if any.
//!
//! - A dotted identifier (pytest `tests.test_a.TestX`, Java `com.x.FooTest`)
//!   is one nested suite per part ([`class_parts`]).
//! - Maven Surefire names each `<testsuite>` after its class, aggregators
//!   after the package: a classname that is its suite's name adds nothing,
//!   one that starts with it and a dot (`pkg` → `pkg.FooTest`) adds only the
//!   rest, and so does one that goes on with a `$`: Surefire 3.0.0-M4 to
//!   3.5.2 write a JUnit 5 `@Nested` class `pkg.Outer$Inner`'s cases in
//!   `pkg.Outer`'s suite, where it is `Inner` ([`own_classname`]).
//! - jest-junit 16's default is `{classname} {title}` for both attributes,
//!   and mocha-junit-reporter writes the title as the classname of the full
//!   title, or with `testCaseSwitchClassnameAndName` the full title as the
//!   classname of the title: a classname that names the test adds no suite
//!   ([`names_the_test`]).
//! - PHPUnit 10 and gtest name suites with other separators (`Tests\FooTest`,
//!   `Foo::Bar`) than the classname's dots, PHPUnit's data-provider suite is
//!   `Tests\FooTest::testData`, and mocha-junit-reporter's `jenkinsMode`
//!   writes cases of class `Outer.inner` in suite `Root Suite.Outer.inner`:
//!   a classname that names an enclosing suite so adds none
//!   ([`names_a_suite`]).
//! - vitest 5 `--reporter=junit` names the class by the test file's path
//!   (`math.test.js`, [`is_file_path`]), which stays one suite or none, and
//!   the test by its describe titles and its own, joined by ` > `, which
//!   nest as in a live run ([`titles_end`]). A classname that is not a
//!   dotted identifier stays one suite too.
//!
//! pytest's classnames have rules of their own on top (which parts are
//! folders, a module and classes): [`pytest`](super::pytest).

/// `classname` without its `<testsuite>`'s name in front: Surefire names the
/// suite after the class, aggregators after the package, and Surefire
/// 3.0.0-M4 to 3.5.2 write the cases of a JUnit 5 `@Nested` class
/// `pkg.Outer$Inner` in `pkg.Outer`'s suite, where it is `Inner`.
pub(super) fn own_classname<'c>(classname: &'c str, suite: &str) -> &'c str {
    let classname = trim(classname);
    classname
        .strip_prefix(suite)
        .and_then(|r| r.strip_prefix('.').or_else(|| r.strip_prefix('$')))
        .unwrap_or(classname)
}

/// `text.trim()`, without its search for Unicode whitespace at both ends
/// when they are plainly not whitespace, as in nearly every classname (this
/// runs for every test case).
fn trim(text: &str) -> &str {
    match text.as_bytes() {
        [first, .., last] if first.is_ascii_graphic() && last.is_ascii_graphic() => text,
        _ => text.trim(),
    }
}

/// Whether the classname whose [`own_classname`] is `own` is the test's
/// own name (so it adds no suite):
/// equal to it (jest-junit's `{classname} {title}` for both), or its last
/// words (mocha-junit-reporter's title as the classname of its full title),
/// or the suite's name, a space and the test's name
/// (mocha-junit-reporter's `testCaseSwitchClassnameAndName`: the full
/// title as the classname of the title).
pub(super) fn names_the_test(own: &str, suite: &str, test: &str) -> bool {
    let ends_with_words = |text: &str, words: &str| {
        !words.is_empty()
            && text
                .strip_suffix(words)
                .is_some_and(|front| front.ends_with(' '))
    };
    // Nearly always, neither ends with a space and the other: then neither
    // need be compared with the other's end.
    let space_before = |text: &str, end: &str| {
        text.len()
            .checked_sub(end.len() + 1)
            .is_some_and(|at| text.as_bytes()[at] == b' ')
    };
    if own.len() != test.len() && !space_before(test, own) && !space_before(own, test) {
        return false;
    }
    own == test
        || ends_with_words(test, own)
        || own
            .strip_suffix(test)
            .and_then(|front| front.strip_suffix(' '))
            .is_some_and(|front| front == suite || ends_with_words(front, suite))
}

/// Whether the `classname` names an enclosing `<testsuite>` with other
/// separators (PHPUnit and gtest suites are `Tests\FooTest` or `Foo::Bar`
/// where the classname has dots), or is the front of the innermost one's
/// name (PHPUnit's data-provider suite `Tests\FooTest::testData`) or its
/// back after a dot (mocha-junit-reporter's full suite titles). `suites`
/// are the names of the enclosing suites, outermost first.
pub(super) fn names_a_suite<'s>(
    classname: &str,
    suites: impl DoubleEndedIterator<Item = &'s str>,
) -> bool {
    let dotted = |name: &str| name.trim().replace("::", ".").replace(['\\', '/'], ".");
    let class = dotted(classname);
    if class.is_empty() {
        return false;
    }
    let mut names = suites.map(dotted);
    let innermost = names.next_back();
    innermost.as_deref().is_some_and(|n| {
        n.strip_prefix(&class)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
            // mocha-junit-reporter's jenkinsMode: `Root Suite.Outer.inner`
            // holds cases of class `Outer.inner`.
            || n.strip_suffix(&class).is_some_and(|rest| rest.ends_with('.'))
    }) || names.any(|n| n == class)
}

/// The suites a `classname` adds under its `<testsuite>`.
pub(super) fn class_parts<'c>(classname: &'c str, suite: &str) -> Vec<&'c str> {
    let classname = own_classname(classname, suite);
    if classname.is_empty() || classname == suite {
        return Vec::new();
    }
    let is_path = is_file_path(classname);
    let identifier = |part: &str| {
        part.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
            && part
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    };
    if !is_path && classname.split('.').all(identifier) {
        classname.split('.').collect()
    } else {
        vec![classname]
    }
}

/// Whether a classname is a file's path (vitest's `math.test.js`).
pub(super) fn is_file_path(classname: &str) -> bool {
    const FILE_EXTENSIONS: &[&str] = &[
        "js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts", "vue", "svelte", "py", "rb", "go",
        "java", "kt", "cs", "php", "rs",
    ];
    classname.contains(['/', '\\'])
        || classname
            .rsplit_once('.')
            .is_some_and(|(_, ext)| FILE_EXTENSIONS.contains(&ext))
}

/// Where the describe titles end in the name of a test whose classname is
/// a file path: vitest names a test by its describe blocks' titles and its
/// own, joined by ` > ` (`outer > inner > passes` is test `passes` in
/// suites `outer` and `inner`, as in a live run and in vitest's JSON).
pub(super) fn titles_end(name: &str) -> Option<usize> {
    name.rfind(TITLE_SEPARATOR)
}

/// What vitest joins a test's describe titles and its own with.
pub(super) const TITLE_SEPARATOR: &str = " > ";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_test_is_named_by_its_classname_as_without_the_shortcut() {
        // names_the_test as it reads, with no early answer.
        let plainly = |own: &str, suite: &str, test: &str| {
            let ends_with_words = |text: &str, words: &str| {
                !words.is_empty()
                    && text
                        .strip_suffix(words)
                        .is_some_and(|front| front.ends_with(' '))
            };
            own == test
                || ends_with_words(test, own)
                || own
                    .strip_suffix(test)
                    .and_then(|front| front.strip_suffix(' '))
                    .is_some_and(|front| front == suite || ends_with_words(front, suite))
        };
        let words = [
            "", " ", "a", "b a", "s", "s a", "x s a", "é a", "a é", "s b a", "  a",
        ];
        for own in words {
            for suite in ["", "s", "x s"] {
                for test in words {
                    assert_eq!(
                        names_the_test(own, suite, test),
                        plainly(own, suite, test),
                        "{own:?} {suite:?} {test:?}"
                    );
                }
            }
        }
    }
}
