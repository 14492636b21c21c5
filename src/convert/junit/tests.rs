//! Unit tests of the JUnit reader against the samples and hand-made fixtures.
use std::collections::HashMap;
use std::io::{self, Read};

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::ant::SUITE_FAILURE;
use super::fast::{self, attr_value, plain_attributes, Slot};
use super::pytest;
use super::read::{attr, attrs, read};
use crate::convert::common::{Emitter, ReadError, Sink};
use crate::convert::testing::{check_tree, counts, events_of, sample};
use crate::event::{Node, NodeKind, Outcome, Stream, TestEvent, TestResult};

/// `tests`, `failures`, `errors`, `skipped` summed over the outermost
/// `<testsuite>` elements, the report's own count.
fn declared_counts(xml: &str) -> [u64; 4] {
    let mut reader = Reader::from_str(xml);
    let mut depth = 0;
    let mut sums = [0; 4];
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) if e.name().as_ref() == b"testsuite" => {
                if depth == 0 {
                    add_counts(&mut sums, &e);
                }
                depth += 1;
            }
            Event::Empty(e) if e.name().as_ref() == b"testsuite" && depth == 0 => {
                add_counts(&mut sums, &e)
            }
            Event::End(e) if e.name().as_ref() == b"testsuite" => depth -= 1,
            Event::Eof => return sums,
            _ => {}
        }
    }
}

fn add_counts(sums: &mut [u64; 4], e: &BytesStart<'_>) {
    for (i, key) in ["tests", "failures", "errors", "skipped"]
        .iter()
        .enumerate()
    {
        sums[i] += attr(e, key.as_bytes())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
    }
    // gtest counts its DISABLED_ tests apart from skipped ones.
    sums[3] += attr(e, b"disabled")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
}

fn read_sample(name: &str) -> Vec<TestEvent> {
    let bytes = sample(name);
    events_of(|out| read(&bytes[..], out)).unwrap_or_else(|(_, e)| panic!("{name}: {e}"))
}

fn tests_by_name(events: &[TestEvent]) -> HashMap<String, Node> {
    events
        .iter()
        .filter_map(|e| match e {
            TestEvent::Test(n) | TestEvent::Suite(n) => Some((n.name.clone(), n.clone())),
            _ => None,
        })
        .collect()
}

fn result_of<'e>(
    events: &'e [TestEvent],
    nodes: &HashMap<String, Node>,
    name: &str,
) -> &'e TestResult {
    let id = &nodes[name].id;
    events
        .iter()
        .find_map(|e| match e {
            TestEvent::Finished(r) if &r.id == id => Some(r),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{name} never finished"))
}

/// An [`ancestry`] link: a folder, a file, or a suite (a class, a describe).
fn dir(name: &str) -> (String, NodeKind) {
    (name.to_string(), NodeKind::Dir)
}

fn file(name: &str) -> (String, NodeKind) {
    (name.to_string(), NodeKind::File)
}

fn suite(name: &str) -> (String, NodeKind) {
    (name.to_string(), NodeKind::Suite)
}

/// The chain of suite names above a node.
fn ancestry(events: &[TestEvent], node: &Node) -> Vec<(String, NodeKind)> {
    let by_id: HashMap<&str, &Node> = events
        .iter()
        .filter_map(|e| match e {
            TestEvent::Suite(n) => Some((n.id.as_str(), n)),
            _ => None,
        })
        .collect();
    let mut chain = Vec::new();
    let mut parent = node.parent.as_deref();
    while let Some(id) = parent {
        let suite = by_id[id];
        chain.push((suite.name.clone(), suite.kind));
        parent = suite.parent.as_deref();
    }
    chain.reverse();
    chain
}

#[test]
fn counts_match_the_reports() {
    let files = [
        "pytest-junit.xml",
        "pytest-junit-xunit1-logall.xml",
        "vitest-junit.xml",
        "jest-junit.xml",
        "surefire-nested.xml",
        "single-testsuite.xml",
        "unicode-cdata.xml",
        "gtest.xml",
        "phpunit.xml",
        "mocha-junit.xml",
    ];
    for name in files {
        let events = read_sample(name);
        let xml = String::from_utf8(sample(name)).unwrap();
        let [tests, failures, errors, skipped] = declared_counts(&xml);
        let c = counts(&events);
        let total: u64 = c.values().sum();
        assert_eq!(total, tests, "{name}: tests");
        assert_eq!(c[&Outcome::Failed], failures, "{name}: failures");
        assert_eq!(c[&Outcome::Error], errors, "{name}: errors");
        assert_eq!(
            c[&Outcome::Skipped] + c[&Outcome::Xfail],
            skipped,
            "{name}: skipped"
        );
    }
}

#[test]
fn pytest_classnames_nest_module_and_classes() {
    let events = read_sample("pytest-junit.xml");
    let nodes = tests_by_name(&events);
    let chain = ancestry(&events, &nodes["test_add[2-3-6]"]);
    assert_eq!(
        chain,
        [
            ("test_sample.py".to_string(), NodeKind::File),
            ("TestOuter".to_string(), NodeKind::Suite),
            ("TestInner".to_string(), NodeKind::Suite),
        ]
    );
    // The collection error (a case named by the module, with no classname)
    // is the module's `<collection error>`, as in a live run; pytest's own
    // `pytest` suite is the run and not reported.
    assert!(!nodes.contains_key("test_broken"));
    assert_eq!(
        ancestry(&events, &nodes["<collection error>"]),
        [("test_broken.py".to_string(), NodeKind::File)]
    );
    let broken = result_of(&events, &nodes, "<collection error>");
    assert_eq!(broken.outcome, Outcome::Error);
    assert!(
        broken
            .message
            .as_deref()
            .is_some_and(|m| m.starts_with("ModuleNotFoundError: ")),
        "{broken:?}"
    );
    assert!(!nodes.contains_key("pytest"));
    let setup = result_of(&events, &nodes, "test_setup_throws");
    assert_eq!(setup.outcome, Outcome::Error);
    assert_eq!(
        setup.message.as_deref(),
        Some("failed on setup with \"RuntimeError: setup boom (fixture)\"")
    );
    let xfail = result_of(&events, &nodes, "test_expected_failure");
    assert_eq!(
        (xfail.outcome, xfail.message.as_deref()),
        (Outcome::Xfail, Some("known bug #123"))
    );
    let skip = result_of(&events, &nodes, "test_is_skipped");
    assert_eq!(skip.message.as_deref(), Some("not implemented yet"));
    assert!(skip
        .details
        .as_deref()
        .unwrap()
        .ends_with("not implemented yet"));
    let failed = result_of(&events, &nodes, "test_fails_with_unequal_values");
    assert_eq!(
        failed.message.as_deref(),
        Some("assert 2 == 3\n +  where 2 = add(1, 1)")
    );
    assert!(failed
        .details
        .as_deref()
        .unwrap()
        .ends_with("test_sample.py:17: AssertionError"));
    // Every TestOuter/TestInner test shares one pair of class suites.
    let class_suites = events
        .iter()
        .filter(|e| matches!(e, TestEvent::Suite(n) if n.name == "TestInner"))
        .count();
    assert_eq!(class_suites, 1);
}

#[test]
fn xunit1_lines_become_one_based_and_output_is_kept() {
    let events = read_sample("pytest-junit-xunit1-logall.xml");
    let nodes = tests_by_name(&events);
    let passes = &nodes["test_passes"];
    assert_eq!(
        (passes.file.as_deref(), passes.line),
        (Some("test_sample.py"), Some(13))
    );
    let printer = &nodes["test_prints_to_stdout"].id;
    let outputs: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            TestEvent::Output {
                id: Some(id),
                stream: Stream::Stderr,
                text,
            } if id == printer => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(outputs.len(), 1);
    assert!(outputs[0].contains("hello from test stderr\n"));
}

/// With xunit1's `file`, the classname's folders and module are the file's,
/// whatever the case of the folders and classes (a capitalised folder was a
/// class, a lowercase class the module).
#[test]
fn xunit1_files_tell_the_module_from_classes() {
    let xml = r#"<testsuites name="pytest tests"><testsuite name="pytest">
      <testcase classname="Tests.test_x" name="test_a" file="Tests/test_x.py" line="0"/>
      <testcase classname="tests.test_lc.lower_case" name="test_m" file="tests/test_lc.py" line="2"/>
      <testcase classname="tests.test_lc" name="test_f" file="tests/test_lc.py" line="3"/>
      <testcase classname="pkg.test_w.TestW" name="test_w" file="pkg	est_w.py" line="3"/>
      <testcase classname="Other.test_y" name="test_y" line="3"/>
      </testsuite></testsuites>"#;
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    let nodes = tests_by_name(&events);
    assert_eq!(
        ancestry(&events, &nodes["test_a"]),
        [dir("Tests"), file("test_x.py")]
    );
    assert_eq!(
        ancestry(&events, &nodes["test_m"]),
        [dir("tests"), file("test_lc.py"), suite("lower_case")]
    );
    assert_eq!(
        ancestry(&events, &nodes["test_f"]),
        [dir("tests"), file("test_lc.py")]
    );
    assert_eq!(
        ancestry(&events, &nodes["test_w"]),
        [dir("pkg"), file("test_w.py"), suite("TestW")]
    );
    // Without `file`, the case of the parts decides, as before.
    assert_eq!(
        ancestry(&events, &nodes["test_y"]),
        [file("Other.py"), suite("test_y")]
    );
    // A suite named by the classname's front (not pytest's) leaves it out.
    let module = |end| pytest::Module {
        end,
        text_file: false,
    };
    assert_eq!(
        pytest::class_parts(
            "tests.test_a.TestX",
            "tests",
            "test_x",
            Some("tests/test_a.py")
        ),
        (vec!["test_a", "TestX"], module(1))
    );
    assert_eq!(
        pytest::class_parts("a.b", "s", "t", Some("elsewhere/b.py")),
        (vec!["a", "b"], module(2))
    );
}

/// unittest-xml-reporting writes `file` on the suite too, and 1-based lines.
#[test]
fn xmlrunner_lines_stay_one_based() {
    let xml = r#"<testsuites><testsuite name="test_ut.TestAlpha-20261122021442" tests="1" file="test_ut.py">
      <testcase classname="test_ut.TestAlpha" name="test_pass" time="0.000" file="test_ut.py" line="3"/>
      </testsuite></testsuites>"#;
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    let nodes = tests_by_name(&events);
    assert_eq!(nodes["test_pass"].line, Some(3));
}

/// vitest's classname is the file; its names join the describe titles and
/// the test's by ` > `, and they nest as in a live run.
#[test]
fn file_path_classnames_stay_one_suite() {
    let events = read_sample("vitest-junit.xml");
    let nodes = tests_by_name(&events);
    let chain = ancestry(&events, &nodes["passes"]);
    assert_eq!(
        chain,
        [suite("math.test.js"), suite("outer"), suite("inner")]
    );
    assert_eq!(
        ancestry(&events, &nodes["prints to stdout"]),
        [suite("math.test.js"), suite("outer")]
    );
    check_tree(&events);
    let failed = result_of(&events, &nodes, "fails with unequal values");
    assert_eq!(
        failed.message.as_deref(),
        Some("expected 2 to be 3 // Object.is equality")
    );
    let details = failed.details.as_deref().unwrap();
    assert!(
        details.starts_with("AssertionError: expected 2 to be 3"),
        "{details:?}"
    );
    assert!(details.ends_with("❯ math.test.js:13:25"), "{details:?}");
    assert_eq!(result_of(&events, &nodes, "passes").duration_ms, Some(1));

    let jest = read_sample("jest-junit.xml");
    let nodes = tests_by_name(&jest);
    // classname equal to the name adds no level; `1.5` is not a dotted identifier.
    assert_eq!(
        ancestry(&jest, &nodes["math handles 1.5 values"]),
        [("math".to_string(), NodeKind::Suite)]
    );
    let failed = result_of(&jest, &nodes, "math fails with unequal values");
    assert_eq!(
        failed.message.as_deref(),
        Some("Error: expect(received).toBe(expected) // Object.is equality")
    );
}

/// PHPUnit, gtest and mocha-junit-reporter repeat a suite's or the test's
/// name in the classname; it adds no suite. gtest's disabled tests are skips.
#[test]
fn classnames_repeating_a_suite_or_the_title_add_no_suite() {
    let names = |events: &[TestEvent], nodes: &HashMap<String, Node>, test: &str| -> Vec<String> {
        ancestry(events, &nodes[test])
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    };
    let php = read_sample("phpunit.xml");
    let nodes = tests_by_name(&php);
    assert_eq!(names(&php, &nodes, "testAdd"), ["Unit", r"Tests\CalcTest"]);
    assert_eq!(
        names(&php, &nodes, "testData with data set #0"),
        ["Unit", r"Tests\CalcTest", r"Tests\CalcTest::testData"]
    );
    check_tree(&php);

    let mocha = read_sample("mocha-junit.xml");
    let nodes = tests_by_name(&mocha);
    assert_eq!(
        names(&mocha, &nodes, "Array #indexOf() should fail"),
        ["Array #indexOf()"]
    );
    check_tree(&mocha);

    let gtest = read_sample("gtest.xml");
    let nodes = tests_by_name(&gtest);
    assert_eq!(names(&gtest, &nodes, "Adds"), ["MathTest"]);
    assert_eq!(
        result_of(&gtest, &nodes, "DISABLED_Off").outcome,
        Outcome::Skipped
    );
    assert_eq!(result_of(&gtest, &nodes, "Adds").outcome, Outcome::Passed);
    check_tree(&gtest);

    // mocha-junit-reporter with testCaseSwitchClassnameAndName: the full
    // title is the classname of the title.
    let xml = r#"<testsuites><testsuite name="Root Suite"><testcase name="top" classname="top"/></testsuite>
      <testsuite name="inner.dots"><testcase name="passes" classname="Outer inner.dots passes"/>
      <testcase name="fails deep" classname="Outer inner.dots fails deep"/></testsuite></testsuites>"#;
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    let nodes = tests_by_name(&events);
    assert_eq!(names(&events, &nodes, "top"), ["Root Suite"]);
    assert_eq!(names(&events, &nodes, "passes"), ["inner.dots"]);
    assert_eq!(names(&events, &nodes, "fails deep"), ["inner.dots"]);
    check_tree(&events);

    // ...and with jenkinsMode, the suite holds the root's title in front.
    let xml = r#"<testsuites><testsuite name="Root Suite.Outer.inner">
      <testcase name="passes" classname="Outer.inner"/></testsuite></testsuites>"#;
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    let nodes = tests_by_name(&events);
    assert_eq!(names(&events, &nodes, "passes"), ["Root Suite.Outer.inner"]);

    // A class named like a word of its tests' names still nests them.
    let xml = r#"<testsuite name="s"><testcase classname="Foo" name="test_Foo"/></testsuite>"#;
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    let nodes = tests_by_name(&events);
    assert_eq!(names(&events, &nodes, "test_Foo"), ["s", "Foo"]);
}

/// Consecutive cases share their classname suites; a case whose classname is
/// its own name adds none, and the next case of the previous class still
/// gets its class (in a suite of its own, as the stream is in order).
#[test]
fn classname_changes_open_and_close_class_suites() {
    let xml = r#"<testsuite name="s">
        <testcase classname="pkg.A" name="a1"/>
        <testcase classname="pkg.A" name="a2"/>
        <testcase classname="pkg.A" name="pkg.A"/>
        <testcase classname="pkg.A" name="a3"/>
        <testcase classname="pkg.B" name="b1"/>
        <testcase classname="pkg.A" name="a4"/>
        <testcase classname="s.pkg.A" name="a5"/>
    </testsuite>"#;
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    let nodes = tests_by_name(&events);
    let chain = |name: &str| -> Vec<String> {
        let node = &nodes[name];
        let mut names: Vec<String> = ancestry(&events, node)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        names.push(node.parent.clone().unwrap_or_default());
        names
    };
    let a1 = chain("a1");
    assert_eq!(a1[..3], ["s", "pkg", "A"]);
    assert_eq!(chain("a2"), a1, "one class suite for consecutive cases");
    assert_eq!(
        chain("pkg.A")[..1],
        ["s"],
        "a classname naming the case adds no suite"
    );
    assert_eq!(
        chain("a3"),
        a1,
        "a case outside the class does not split it"
    );
    assert_eq!(chain("b1")[..3], ["s", "pkg", "B"]);
    assert_eq!(
        chain("a4"),
        a1,
        "cases of a class written apart (parallel workers) share its suite"
    );
    assert_eq!(
        chain("a5"),
        a1,
        "the suite's name in front is the same class"
    );
    check_tree(&events);
}

#[test]
fn classes_left_behind_are_done_a_bounded_number_at_a_time() {
    // Ever-new classnames: the suites they leave are done in batches, so a
    // class that comes back after more than a batch gets a new suite.
    let mut xml =
        String::from(r#"<testsuite name="s"><testcase classname="pkg.First" name="early"/>"#);
    for n in 0..1100 {
        xml.push_str(&format!(r#"<testcase classname="pkg.C{n}" name="t{n}"/>"#));
    }
    xml.push_str(r#"<testcase classname="pkg.C1050" name="again"/><testcase classname="pkg.First" name="late"/></testsuite>"#);
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    let nodes = tests_by_name(&events);
    assert_eq!(
        nodes["again"].parent, nodes["t1050"].parent,
        "left since the last batch"
    );
    assert_ne!(
        nodes["late"].parent, nodes["early"].parent,
        "done in an earlier batch"
    );
    let done = events
        .iter()
        .filter(|e| matches!(e, TestEvent::SuiteDone { .. }))
        .count();
    let suites = events
        .iter()
        .filter(|e| matches!(e, TestEvent::Suite(_)))
        .count();
    assert_eq!(
        suites,
        1 + 1 + 1 + 1100 + 1,
        "s, pkg, First, the others, First again"
    );
    assert_eq!(done, suites, "every suite is done once");
    check_tree(&events);
}

#[test]
fn nested_suites_duplicates_and_suite_output() {
    let events = read_sample("surefire-nested.xml");
    let nodes = tests_by_name(&events);
    let chain = ancestry(&events, &nodes["addsTwoNumbers"]);
    let names: Vec<&str> = chain.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["com.example.unit", "com.example.CalculatorTest"]);
    let chain = ancestry(&events, &nodes["sameName"]);
    let names: Vec<&str> = chain.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["com.example.it", "ApiIT"]);
    let same: Vec<&Node> = events
        .iter()
        .filter_map(|e| match e {
            TestEvent::Test(n) if n.name == "sameName" => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(same.len(), 2);
    assert_ne!(same[0].id, same[1].id);
    assert_eq!(
        result_of(&events, &nodes, "subtracts").duration_ms,
        Some(1_000_500)
    );
    let suite_id = &nodes["com.example.CalculatorTest"].id;
    assert!(events.iter().any(|e| matches!(e,
        TestEvent::Output { id: Some(id), text, .. } if id == suite_id && text.starts_with("suite-level"))));
    let error = result_of(&events, &nodes, "dividesByZero");
    assert_eq!(
        (error.outcome, error.message.as_deref()),
        (Outcome::Error, Some("/ by zero"))
    );
}

#[test]
fn a_problem_directly_in_a_testsuite_is_a_test_of_it() {
    // Ant's XMLJUnitResultFormatter on a class whose static initialiser threw.
    let ant = r#"<testsuite name="com.x.BrokenTest" tests="1" failures="0" errors="1"><error message="class init failed" type="java.lang.ExceptionInInitializerError">stack</error></testsuite>"#;
    let events = events_of(|out| read(ant.as_bytes(), out)).unwrap();
    let nodes = tests_by_name(&events);
    let error = result_of(&events, &nodes, "java.lang.ExceptionInInitializerError");
    assert_eq!(
        (
            error.outcome,
            error.message.as_deref(),
            error.details.as_deref()
        ),
        (Outcome::Error, Some("class init failed"), Some("stack"))
    );
    let chain = ancestry(&events, &nodes["java.lang.ExceptionInInitializerError"]);
    assert_eq!(chain, [("com.x.BrokenTest".to_string(), NodeKind::Suite)]);
    // Among cases of a class, untyped: in the suite, not in the class, and
    // the class's cases after it stay in one class suite.
    let xml = r#"<testsuite name="s"><testcase classname="a.B" name="t1"/><failure>boom
at x</failure><testcase classname="a.B" name="t2"/></testsuite>"#;
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    let nodes = tests_by_name(&events);
    let failure = result_of(&events, &nodes, SUITE_FAILURE);
    assert_eq!(
        (failure.outcome, failure.message.as_deref()),
        (Outcome::Failed, Some("boom"))
    );
    assert_eq!(ancestry(&events, &nodes[SUITE_FAILURE]).len(), 1);
    assert_eq!(
        ancestry(&events, &nodes["t2"]),
        ancestry(&events, &nodes["t1"])
    );
    let suites = events.iter().filter(|e| matches!(e, TestEvent::Suite(_)));
    assert_eq!(suites.count(), 3);
}

#[test]
fn single_testsuite_root() {
    let events = read_sample("single-testsuite.xml");
    let nodes = tests_by_name(&events);
    let chain = ancestry(&events, &nodes["test_post"]);
    let kinds: Vec<NodeKind> = chain.iter().map(|(_, k)| *k).collect();
    assert_eq!(
        kinds,
        [
            NodeKind::Suite,
            NodeKind::Dir,
            NodeKind::File,
            NodeKind::Suite
        ]
    );
    // Not under a `pytest` suite, but a .py file: still pytest's 0-based line.
    assert_eq!(nodes["test_post"].line, Some(15));
    assert_eq!(ancestry(&events, &nodes["test_module_level"]).len(), 3);
}

#[test]
fn cdata_entities_and_unicode() {
    let events = read_sample("unicode-cdata.xml");
    let nodes = tests_by_name(&events);
    assert!(nodes.contains_key("test_grüße[日本語-🎉]"));
    assert!(nodes.contains_key("TestÜmlaut"));
    let id = &nodes["test_grüße[日本語-🎉]"].id;
    let out = events.iter().find_map(|e| match e {
        TestEvent::Output {
            id: Some(i), text, ..
        } if i == id => Some(text.as_str()),
        _ => None,
    });
    // The block ends its line, as every block of output does.
    assert_eq!(
        out,
        Some("raw <xml> & stuff ]] that is not markup\nsecond line ✓\n")
    );
    let name = "test_entities & <tags> \"quoted\" 'single'";
    let failed = result_of(&events, &nodes, name);
    assert_eq!(
        failed.message.as_deref(),
        Some("expected ☃ got ☃\nnext line")
    );
    assert_eq!(
        failed.details.as_deref(),
        Some("line one & two\n<b>not a tag</b> & no entity &amp;\ntail €")
    );
    let both = result_of(&events, &nodes, "test_both_failure_and_error");
    assert_eq!(
        (both.outcome, both.message.as_deref()),
        (Outcome::Failed, Some("assert 1 == 2"))
    );
    assert!(both.details.as_deref().unwrap().contains("teardown trace"));
}

#[test]
fn nested_report_roots_are_transparent() {
    let xml = "<testsuites><testsuites name='shard 1'><testsuite name='s'>\
               <testcase name='a'/></testsuite></testsuites></testsuites>";
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    let nodes = tests_by_name(&events);
    assert_eq!(
        ancestry(&events, &nodes["a"]),
        [("s".to_string(), NodeKind::Suite)]
    );
}

#[test]
fn truncation_reports_position_and_keeps_what_was_read() {
    let xml = "<testsuites>\n<testsuite name=\"s\">\n<testcase name=\"a\"/>\n<testcase name=\"b\">\n<failure>x";
    let (events, err) = events_of(|out| read(xml.as_bytes(), out)).unwrap_err();
    let c = counts(&events);
    assert_eq!(c[&Outcome::Passed], 1);
    assert_eq!(
        c.values().sum::<u64>(),
        1,
        "the unfinished case is not reported"
    );
    let ReadError::Malformed { line, problem, .. } = err else {
        panic!("{err}")
    };
    assert_eq!(line, 5, "{problem}");
    assert!(problem.contains("end of file"), "{problem}");
}

#[test]
fn syntax_errors_report_line_and_column() {
    let xml = "<testsuites>\n  <testsuite name=\"s\">\n    <testcase name=\"a\"/>\n  </testsuitx>\n</testsuites>\n";
    let (events, err) = events_of(|out| read(xml.as_bytes(), out)).unwrap_err();
    assert_eq!(counts(&events)[&Outcome::Passed], 1);
    let ReadError::Malformed { line, column, .. } = err else {
        panic!("{err}")
    };
    assert_eq!((line, column), (4, 3));
}

#[test]
fn not_junit_is_an_error_not_a_panic() {
    for input in [
        &b""[..],
        b"   \n",
        b"<html><body/></html>",
        b"\x00\x01\x02\xff\xfe garbage",
        b"<testsuites><testcase name=\"\xff\xfe\"/></testsuites>",
        b"<<<>>>",
        b"<testsuite><testcase name='a'></testsuite>",
    ] {
        let result = events_of(|out| read(input, out));
        if let Err((_, err)) = &result {
            assert!(matches!(err, ReadError::Malformed { .. }), "{err}");
        }
    }
    let (_, err) = events_of(|out| read(&b"<html/>"[..], out)).unwrap_err();
    assert!(err.to_string().contains("found <html>"), "{err}");
}

/// Counts events without keeping them.
#[derive(Default)]
struct CountingSink {
    finished: u64,
    suites: u64,
}

impl Sink for CountingSink {
    fn event(&mut self, event: TestEvent) -> io::Result<()> {
        match event {
            TestEvent::Finished(_) => self.finished += 1,
            TestEvent::Suite(_) => self.suites += 1,
            _ => {}
        }
        Ok(())
    }

    fn text(&mut self, _: &[u8]) -> io::Result<()> {
        Ok(())
    }
}

/// A JUnit document made on the fly: never held whole, so the reader's
/// memory is all that grows if anything does.
struct Generated {
    cases: u64,
    next: u64,
    pending: Vec<u8>,
    at: usize,
    done: bool,
}

impl Generated {
    fn new(cases: u64) -> Self {
        let head = b"<?xml version=\"1.0\"?>\n<testsuites name=\"big\">\n<testsuite name=\"s\">\n"
            .to_vec();
        Generated {
            cases,
            next: 0,
            pending: head,
            at: 0,
            done: false,
        }
    }
}

impl Read for Generated {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.pending.len() {
            self.pending.clear();
            self.at = 0;
            if self.next < self.cases {
                let n = self.next;
                self.next += 1;
                let body = match n % 4 {
                    0 => String::new(),
                    1 => "<failure message=\"assert 1 == 2\">trace line &amp; more\n  at x</failure>".to_string(),
                    2 => "<skipped message=\"why\"/>".to_string(),
                    _ => "<system-out><![CDATA[printed output of some length, for realism]]></system-out>".to_string(),
                };
                let case = format!(
                    "<testcase classname=\"tests.test_mod{}.TestClass\" name=\"test_{n}[param-{n}]\" time=\"0.001\">{body}</testcase>\n",
                    n / 1000
                );
                self.pending.extend_from_slice(case.as_bytes());
            } else if !self.done {
                self.done = true;
                self.pending
                    .extend_from_slice(b"</testsuite>\n</testsuites>\n");
            } else {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.pending.len() - self.at);
        buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[test]
fn streams_a_50_mb_report() {
    // ~150 bytes a case: 350k cases is about 50 MB.
    let cases = 350_000;
    let mut sink = CountingSink::default();
    let input = io::BufReader::new(Generated::new(cases));
    read(input, &mut Emitter::new(&mut sink, "")).unwrap();
    assert_eq!(sink.finished, cases);
    // The suite and the `tests` package, then per module (a new one every
    // 1000 cases) the module and its class.
    assert_eq!(sink.suites, 1 + 1 + 2 * cases.div_ceil(1000));
}

#[test]
fn the_generator_is_valid_junit() {
    let mut text = String::new();
    Generated::new(8).read_to_string(&mut text).unwrap();
    let events = events_of(|out| read(text.as_bytes(), out)).unwrap();
    check_tree(&events);
    let c = counts(&events);
    assert_eq!(
        (
            c[&Outcome::Passed],
            c[&Outcome::Failed],
            c[&Outcome::Skipped]
        ),
        (4, 2, 2)
    );
}

#[test]
fn a_time_with_a_decimal_comma_is_read_as_one() {
    let xml = r#"<testsuite name="S"><testcase classname="S" name="a" time="0,002"/></testsuite>"#;
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    let nodes = tests_by_name(&events);
    assert_eq!(result_of(&events, &nodes, "a").duration_ms, Some(2));
}

#[test]
fn plain_attributes_are_split_as_quick_xml_splits_them() {
    // (tag, whether the direct split takes it)
    let tags = [
        (r#"<t a="1" b='2'/>"#, true),
        (r#"<t a="1"b="2">"#, true),
        ("<t\ta='v'\r\n b=\"w\" >", true),
        (
            r#"<t x:a="1" y:z:b="2" :c="3" a="&amp;" a="dup" e="">"#,
            true,
        ),
        ("<t>", true),
        (r#"<t a = "1" b="2">"#, false),
        (r#"<t ="x" b="2">"#, false),
        (r#"<t a b="2">"#, false),
        (r#"<t a=1 b="2">"#, false),
        (r#"<t a= >"#, false),
        (r#"<t a="x' b='y">"#, true),
    ];
    for (tag, plain) in tags {
        let mut reader = quick_xml::Reader::from_str(tag);
        let e = match reader.read_event().unwrap() {
            Event::Start(e) | Event::Empty(e) => e,
            other => panic!("{tag}: {other:?}"),
        };
        let theirs = quick_xml_pairs(&e);
        let mut ours = Vec::new();
        let split = plain_attributes(e.attributes_raw(), |k, v| {
            ours.push((k.to_vec(), v.raw().to_vec()))
        });
        assert_eq!(split, plain, "{tag}");
        if split {
            assert_eq!(ours, theirs, "{tag}");
        }
    }
}

/// The (qualified name, raw value) pairs quick-xml's attribute iterator reads.
fn quick_xml_pairs(e: &quick_xml::events::BytesStart<'_>) -> Vec<(Vec<u8>, Vec<u8>)> {
    e.attributes()
        .with_checks(false)
        .flatten()
        .map(|a| (a.key.into_inner().to_vec(), a.value.to_vec()))
        .collect()
}

#[test]
fn attributes_taken_in_one_pass_are_those_found_one_by_one() {
    let tags = [
        r#"<failure message="m" type="t">"#,
        r#"<failure type='t' message="a &amp; b&#10;c">"#,
        r#"<failure x:message="m" message="n" type="t" type="u">"#,
        r#"<failure message = "spaced" type="t">"#,
        r#"<failure message="caf&#233;" other="o">"#,
        "<failure>",
        r#"<skipped type="pytest.xfail"/>"#,
    ];
    for tag in tags {
        let mut reader = quick_xml::Reader::from_str(tag);
        let e = match reader.read_event().unwrap() {
            Event::Start(e) | Event::Empty(e) => e,
            other => panic!("{tag}: {other:?}"),
        };
        let one_by_one = [attr(&e, b"message"), attr(&e, b"type")];
        assert_eq!(attrs(&e, [b"message", b"type"]), one_by_one, "{tag}");
    }
}

#[test]
fn attribute_values_decode_as_unescape_value_does() {
    assert_eq!(attr_value(b"plain"), "plain");
    assert_eq!(attr_value(b"a &lt;b&gt; &#10;"), "a <b> \n");
    assert_eq!(attr_value(b"&bogus;"), "&bogus;");
    assert_eq!(attr_value(b"caf\xc3\xa9"), "caf\u{e9}");
    assert_eq!(attr_value(b"\xff"), "\u{fffd}");
}

#[test]
fn plain_empty_test_cases_are_taken_as_quick_xml_reads_them() {
    // (bytes, the attribute text when taken directly)
    let cases: [(&[u8], Option<&[u8]>); 18] = [
        (
            b"<testcase classname=\"a\" name=\"a\"/>",
            Some(b" classname=\"a\" name=\"a\""),
        ),
        (
            b"<testcase classname='a.b' classname=\"ab\"/>",
            Some(b" classname='a.b' classname=\"ab\""),
        ),
        (
            b"<testcase classname='a\" y' x:classname=\"a\"/>",
            Some(b" classname='a\" y' x:classname=\"a\""),
        ),
        (
            b"<testcase classname=\"a&amp;b\" name='a b'/>",
            Some(b" classname=\"a&amp;b\" name='a b'"),
        ),
        (b"<testcase classname=\"a", None),
        (b"<testcase classname=\"a\"", None),
        (
            b"\n<testcase name=\"a\" time='1'/>",
            Some(b" name=\"a\" time='1'"),
        ),
        (b"<testcase/>", Some(b"")),
        (
            b" \r\n\t<testcase\n  a=\"1\"b=\"x/>y\"  />rest",
            Some(b"\n  a=\"1\"b=\"x/>y\"  "),
        ),
        (b"<testcase a=\"1\">", None),
        (b"<testcase a = \"1\"/>", None),
        (b"<testcasex a=\"1\"/>", None),
        (b"<testcase a=\"1\" / >", None),
        (b"<testcase a=\"1", None),
        (b"x<testcase/>", None),
        (b"<testcase a\"b=\"1\"/>", None),
        (
            b"<testcase names=\"a\" classname2='b' time:x=\"1\" file=\"\" line=\"&amp;\" name=\"\xc3\xa9\"/>",
            Some(b" names=\"a\" classname2='b' time:x=\"1\" file=\"\" line=\"&amp;\" name=\"\xc3\xa9\""),
        ),
        (b"<testcase name=\"a\" time/>", None),
    ];
    let split = |bytes, classname| {
        let mut pairs = Vec::new();
        let taken = fast::empty_testcase(bytes, classname, |k, slot, v| {
            // The slot found with the name is the one it names.
            if slot.is_some() {
                assert_eq!(slot, Slot::of(k));
            }
            pairs.push((k.to_vec(), v.raw().to_vec(), v.decode().into_owned()))
        });
        (taken, pairs)
    };
    for (bytes, expected) in cases {
        let (taken, pairs) = split(bytes, b"");
        let shown = String::from_utf8_lossy(bytes);
        // The classname the case before had, whatever it is, changes nothing.
        for classname in [
            &b"a"[..],
            b"a.b",
            b"b",
            b"a b",
            b"x\" y",
            b"a&amp;b",
            b"ab",
            b"a=b",
        ] {
            if classname
                .iter()
                .all(|&b| b.is_ascii() && !b"&'\"".contains(&b))
            {
                assert_eq!(split(bytes, classname), (taken, pairs.clone()), "{shown}");
            }
        }
        let pairs: Vec<_> = pairs.into_iter().map(|(k, v, _)| (k, v)).collect();
        assert_eq!(taken.is_some(), expected.is_some(), "{shown}");
        if let (Some(len), Some(attrs)) = (taken, expected) {
            // quick-xml reads the same element from the same bytes.
            let mut reader = quick_xml::Reader::from_reader(bytes);
            let mut buf = Vec::new();
            loop {
                match reader.read_event_into(&mut buf).unwrap() {
                    Event::Text(_) => {}
                    Event::Empty(e) => {
                        assert_eq!(e.name().as_ref(), b"testcase");
                        assert_eq!(e.attributes_raw(), attrs);
                        assert_eq!(pairs, quick_xml_pairs(&e), "{shown}");
                        break;
                    }
                    other => panic!("{other:?}"),
                }
                buf.clear();
            }
            assert_eq!(reader.buffer_position(), len as u64);
        }
    }
}

#[test]
fn a_failed_case_held_for_its_teardown_error_is_never_lost() {
    let failed = "<testcase classname='m' name='t' time='0.5'><failure message='assert 0'>call</failure></testcase>";
    let teardown = "<testcase classname='m' name='t' time='0.25'>\
                    <error message='failed on teardown with &quot;E: x&quot;'>td</error></testcase>";
    let other = "<testcase classname='m' name='u'><error message='failed on teardown with &quot;E: y&quot;'/></testcase>";
    let cases = [
        // Merged: one test, the call's verdict, both durations.
        (format!("{failed}{teardown}</testsuite>"), Some(1), Ok(())),
        // Another test's teardown error, a suite, the end: each its own.
        (format!("{failed}{other}</testsuite>"), Some(2), Ok(())),
        (
            format!("{failed}<testsuite name='inner'/></testsuite>"),
            Some(1),
            Ok(()),
        ),
        (format!("{failed}</testsuite>"), Some(1), Ok(())),
        // Cut off after it: still reported.
        (format!("{failed}<testcase name='x'"), None, Err(())),
    ];
    for (body, failures, result) in cases {
        let xml = format!("<testsuite name='s'>{body}");
        let events = match events_of(|out| read(xml.as_bytes(), out)) {
            Ok(events) => {
                assert_eq!(result, Ok(()), "{xml}");
                events
            }
            Err((events, _)) => {
                assert_eq!(result, Err(()), "{xml}");
                events
            }
        };
        let c = counts(&events);
        let nodes = tests_by_name(&events);
        let t = result_of(&events, &nodes, "t");
        assert_eq!(t.outcome, Outcome::Failed, "{xml}");
        assert_eq!(t.message.as_deref(), Some("assert 0"), "{xml}");
        if let Some(failures) = failures {
            assert_eq!(c[&Outcome::Failed] + c[&Outcome::Error], failures, "{xml}");
        }
        if body.contains("0.25") {
            assert_eq!(t.duration_ms, Some(750));
            assert_eq!(
                t.details.as_deref(),
                Some("call\n\nfailed on teardown with \"E: x\"\n\ntd")
            );
        }
    }
}

/// pytest's classname is the node id with each `/` made a dot: a folder
/// named `my-tests` or `my dir` is a folder all the same, with and without
/// xunit1's `file` (which also keeps a dot in a folder's name). Cases from
/// pytest 9.2.0 runs of `my-tests/test_a.py` (`test_one` and `TestK.test_two`).
#[test]
fn pytest_folders_that_are_not_identifiers_nest_as_folders() {
    let xunit2 = r#"<testsuites name="pytest tests"><testsuite name="pytest" tests="3">
      <testcase classname="my-tests.test_a" name="test_one" time="0.000" />
      <testcase classname="my-tests.test_a.TestK" name="test_two" time="0.000" />
      <testcase classname="my dir.test-b" name="test_three" time="0.000" />
      </testsuite></testsuites>"#;
    let xunit1 = r#"<testsuites name="pytest tests"><testsuite name="pytest" tests="4">
      <testcase classname="my-tests.test_a" name="test_one" file="my-tests/test_a.py" line="0" time="0.000" />
      <testcase classname="my-tests.test_a.TestK" name="test_two" file="my-tests/test_a.py" line="5" time="0.000" />
      <testcase classname="my dir.test-b" name="test_three" file="my dir/test-b.py" line="0" time="0.000" />
      <testcase classname="v1.2.test_c.lower" name="test_four" file="v1.2/test_c.py" line="3" time="0.000" />
      </testsuite></testsuites>"#;
    for xml in [xunit2, xunit1] {
        let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
        let nodes = tests_by_name(&events);
        assert_eq!(
            ancestry(&events, &nodes["test_one"]),
            [dir("my-tests"), file("test_a.py")]
        );
        assert_eq!(
            ancestry(&events, &nodes["test_two"]),
            [dir("my-tests"), file("test_a.py"), suite("TestK")]
        );
        assert_eq!(
            ancestry(&events, &nodes["test_three"]),
            [dir("my dir"), file("test-b.py")]
        );
        // One suite per folder, module and class.
        assert_eq!(
            crate::convert::testing::suite_names(&events)[..4],
            ["my-tests", "test_a.py", "TestK", "my dir"]
        );
    }
    let events = events_of(|out| read(xunit1.as_bytes(), out)).unwrap();
    let nodes = tests_by_name(&events);
    assert_eq!(
        ancestry(&events, &nodes["test_four"]),
        [dir("v1.2"), file("test_c.py"), suite("lower")]
    );
}

/// Doctests as pytest 9.2.0 writes them (`--doctest-glob='*.txt'
/// --doctest-modules`): a text file's case is named by the file, with its
/// dotted path (extension kept) as the classname, and is a test of that
/// name in the file's suite, as in a live run; a module's docstring is a
/// test named by the module in its file, even at the top, where the
/// classname is the test's name.
#[test]
fn pytest_doctests_are_tests_of_their_file() {
    let xunit2 = r#"<testsuites name="pytest tests"><testsuite name="pytest" tests="5">
      <testcase classname="README.txt" name="README.txt" time="0.000" />
      <testcase classname="docs.guide.txt" name="guide.txt" time="0.000" />
      <testcase classname="mod2" name="mod2" time="0.000" />
      <testcase classname="pkg.mod" name="mod.Box.size" time="0.000" />
      <testcase classname="pkg.mod" name="mod.double" time="0.000" />
      </testsuite></testsuites>"#;
    let xunit1 = r#"<testsuites name="pytest tests"><testsuite name="pytest" tests="5">
      <testcase classname="README.txt" name="README.txt" file="README.txt" line="0" time="0.001" />
      <testcase classname="docs.guide.txt" name="guide.txt" file="docs/guide.txt" line="0" time="0.000" />
      <testcase classname="mod2" name="mod2" file="mod2.py" line="0" time="0.000" />
      <testcase classname="pkg.mod" name="mod.Box.size" file="pkg/mod.py" line="10" time="0.000" />
      <testcase classname="pkg.mod" name="mod.double" file="pkg/mod.py" line="1" time="0.000" />
      </testsuite></testsuites>"#;
    for xml in [xunit2, xunit1] {
        let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
        let nodes = tests_by_name(&events);
        let test = |name: &str| {
            events
                .iter()
                .find_map(|e| match e {
                    TestEvent::Test(n) if n.name == name => Some(n.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("no test {name}"))
        };
        assert_eq!(ancestry(&events, &test("README.txt")), [file("README.txt")]);
        assert_eq!(
            ancestry(&events, &test("guide.txt")),
            [dir("docs"), file("guide.txt")]
        );
        assert_eq!(ancestry(&events, &nodes["mod2"]), [file("mod2.py")]);
        assert_eq!(
            ancestry(&events, &nodes["mod.double"]),
            [dir("pkg"), file("mod.py")]
        );
        if xml == xunit1 {
            // Text files' lines are 0-based too.
            let guide = test("guide.txt");
            assert_eq!(
                (guide.file.as_deref(), guide.line),
                (Some("docs/guide.txt"), Some(1))
            );
        }
    }
}

/// A module that skipped itself (`pytest.skip(..., allow_module_level=True)`)
/// is a case named by the module with no classname, as pytest 9.2.0 writes
/// it: the module's `<collection skipped>` test with the skip's reason, as
/// in a live run, like a module that failed to collect.
#[test]
fn a_module_level_skip_is_the_modules_collection_skipped_test() {
    let xml = r#"<testsuites name="pytest tests"><testsuite name="pytest" skipped="2" tests="3">
      <testcase classname="" name="tests.test_modskip" time="0.000"><skipped message="collection skipped">('/tmp/p/tests/test_modskip.py', 3, 'Skipped: not here')</skipped></testcase>
      <testcase classname="" name="tests.test_odd" file="tests/test_odd.py" time="0.000"><skipped message="collection skipped">('/tmp/p/tests/test_odd.py', 3, 'Skipped: it\'s "odd", \\ \xe9\n2nd')</skipped></testcase>
      <testcase classname="tests.test_ok" name="test_ok" time="0.000" />
      </testsuite></testsuites>"#;
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    let skips: Vec<&Node> = events
        .iter()
        .filter_map(|e| match e {
            TestEvent::Test(n) if n.name == "<collection skipped>" => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(skips.len(), 2, "{events:?}");
    assert_eq!(
        ancestry(&events, skips[0]),
        [dir("tests"), file("test_modskip.py")]
    );
    assert_eq!(
        ancestry(&events, skips[1]),
        [dir("tests"), file("test_odd.py")]
    );
    let results: Vec<&TestResult> = skips
        .iter()
        .map(|n| {
            events
                .iter()
                .find_map(|e| match e {
                    TestEvent::Finished(r) if r.id == n.id => Some(r),
                    _ => None,
                })
                .unwrap()
        })
        .collect();
    assert_eq!(results[0].outcome, Outcome::Skipped);
    assert_eq!(
        (results[0].message.as_deref(), results[0].details.as_deref()),
        (Some("not here"), None)
    );
    assert_eq!(
        results[1].message.as_deref(),
        Some("it's \"odd\", \\ é\n2nd")
    );
    // Anything else keeps the text as pytest wrote it.
    let xml = r#"<testsuite name="pytest"><testcase classname="" name="m"><skipped message="collection skipped">odd</skipped></testcase></testsuite>"#;
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    let nodes = tests_by_name(&events);
    let odd = result_of(&events, &nodes, "<collection skipped>");
    assert_eq!(
        (odd.message.as_deref(), odd.details.as_deref()),
        (Some("collection skipped"), Some("odd"))
    );
}

/// pytest-rerunfailures 16.7 on pytest 9.2.0 (`@pytest.mark.flaky(reruns=N)`)
/// writes each attempt it reruns as an empty case of the test's name, right
/// before the next: one test with the last attempt's verdict and a note
/// per earlier attempt, as in a live run. Elsewhere two cases of one name
/// stay two tests.
#[test]
fn pytest_reruns_are_one_test_with_the_last_verdict() {
    let xml = r#"<testsuites name="pytest tests"><testsuite name="pytest" failures="1" tests="4">
      <testcase classname="test_flaky" name="test_always_fails" time="0.001" />
      <testcase classname="test_flaky" name="test_always_fails" time="0.005"><failure message="assert 1 == 2">    def test_always_fails():
&gt;       assert 1 == 2
E       assert 1 == 2

test_flaky.py:7: AssertionError</failure></testcase>
      <testcase classname="test_flaky" name="test_passes_third" time="0.000" />
      <testcase classname="test_flaky" name="test_passes_third" time="0.000" />
      <testcase classname="test_flaky" name="test_passes_third" time="0.002" />
      <testcase classname="test_flaky" name="test_plain" time="0.000" />
      </testsuite></testsuites>"#;
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    assert_eq!(
        crate::convert::testing::test_names(&events),
        ["test_always_fails", "test_passes_third", "test_plain"]
    );
    let nodes = tests_by_name(&events);
    let failed = result_of(&events, &nodes, "test_always_fails");
    assert_eq!(
        (
            failed.outcome,
            failed.message.as_deref(),
            failed.duration_ms
        ),
        (Outcome::Failed, Some("assert 1 == 2"), Some(5))
    );
    let passed = result_of(&events, &nodes, "test_passes_third");
    assert_eq!(
        (passed.outcome, passed.duration_ms),
        (Outcome::Passed, Some(2))
    );
    let notes = |name: &str| -> Vec<&str> {
        let id = &nodes[name].id;
        events
            .iter()
            .filter_map(|e| match e {
                TestEvent::Output {
                    id: Some(of),
                    stream: Stream::Stderr,
                    text,
                } if of == id => Some(text.as_str()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(notes("test_always_fails"), ["Attempt 1 failed\n"]);
    assert_eq!(
        notes("test_passes_third"),
        ["Attempt 1 failed\n", "Attempt 2 failed\n"]
    );
    assert!(notes("test_plain").is_empty());
    // Not pytest's: each case is a test.
    let xml = r#"<testsuites><testsuite name="S"><testcase classname="S" name="t"/><testcase classname="S" name="t"/></testsuite></testsuites>"#;
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    assert_eq!(crate::convert::testing::test_names(&events), ["t", "t"]);
}

/// Each `<system-out>` and `<system-err>` block ends its line, in a case and
/// in a suite, so that `out` and `err` shown one after the other do not
/// share one; a block that ends its line already is left as it is.
#[test]
fn blocks_of_output_end_their_lines() {
    let xml = "<testsuite name='s'><testcase classname='s' name='t'>\
               <system-out>case out</system-out><system-err>case err\n</system-err></testcase>\
               <system-out>suite out</system-out><system-err>suite err</system-err></testsuite>";
    let events = events_of(|out| read(xml.as_bytes(), out)).unwrap();
    let texts: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            TestEvent::Output { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        ["case out\n", "case err\n", "suite out\n", "suite err\n"]
    );
}

/// pytest writes a test that skipped in its body and then failed in its
/// teardown as one case with a `<skipped>` and an `<error>`: it is an error,
/// and its skip is not the next case's.
#[test]
fn a_case_skipped_then_broken_leaves_nothing_to_the_next() {
    let xml = br#"<testsuite name="pytest">
<testcase classname="test_td" name="test_skip_then_teardown"><skipped type="pytest.skip" message="skipped in body">test_td.py:14: skipped in body</skipped><error message="failed on teardown with &quot;RuntimeError: boom&quot;">RuntimeError: boom</error></testcase>
<testcase classname="test_td" name="test_xfail"><skipped type="pytest.xfail" message="known bug" /></testcase>
<testcase classname="test_td" name="test_skip"><skipped type="pytest.skip" message="its own reason" /></testcase>
<testcase classname="test_td" name="test_passes" />
</testsuite>"#;
    let events = events_of(|out| read(&xml[..], out)).unwrap();
    let nodes = tests_by_name(&events);
    let verdict = |name| {
        let result = result_of(&events, &nodes, name);
        (result.outcome, result.message.as_deref())
    };
    assert_eq!(
        verdict("test_skip_then_teardown"),
        (
            Outcome::Error,
            Some("failed on teardown with \"RuntimeError: boom\"")
        )
    );
    assert_eq!(verdict("test_xfail"), (Outcome::Xfail, Some("known bug")));
    assert_eq!(
        verdict("test_skip"),
        (Outcome::Skipped, Some("its own reason"))
    );
    assert_eq!(verdict("test_passes"), (Outcome::Passed, None));
}

/// tcrunner's own file says in a `status` property what its elements do
/// not: an unexpected pass, a placeholder. They are read back as such.
#[test]
fn a_tcrunner_files_status_property_is_read_back() {
    let xml = br#"<testsuites name="tcrunner"><testsuite name="test_x.py">
<testcase classname="test_x" name="test_xpass"><properties><property name="status" value="xpass"/></properties></testcase>
<testcase classname="test_x" name="test_todo"><properties><property name="status" value="todo"/></properties><skipped message="Todo"/></testcase>
<testcase classname="test_x" name="test_plain" />
</testsuite></testsuites>"#;
    let events = events_of(|out| read(&xml[..], out)).unwrap();
    let nodes = tests_by_name(&events);
    let outcome = |name| result_of(&events, &nodes, name).outcome;
    assert_eq!(outcome("test_xpass"), Outcome::Xpass);
    assert_eq!(outcome("test_todo"), Outcome::Todo);
    assert_eq!(outcome("test_plain"), Outcome::Passed);
}
