//! Helpers for the readers' unit tests.
use std::collections::{HashMap, HashSet};

use super::common::{Emitter, ReadError};
use crate::cli::InputFormat;
use crate::event::{Outcome, TestEvent, TestResult};

/// Every report in `tests/fixtures/reports/` that is a whole, valid report,
/// with its format.
pub(crate) const SAMPLES: [(&str, InputFormat); 18] = [
    ("jest.json", InputFormat::JestJson),
    ("jest-afterall.json", InputFormat::JestJson),
    ("jest-two-failures.json", InputFormat::JestJson),
    ("vitest.json", InputFormat::VitestJson),
    ("vitest1.json", InputFormat::VitestJson),
    ("vitest-typecheck.json", InputFormat::VitestJson),
    ("vitest-junit.xml", InputFormat::Junit),
    ("pytest-junit.xml", InputFormat::Junit),
    ("pytest-junit-xunit1-logall.xml", InputFormat::Junit),
    ("pytest-report.json", InputFormat::PytestJson),
    ("pytest-ctrf.json", InputFormat::Ctrf),
    ("jest-junit.xml", InputFormat::Junit),
    ("surefire-nested.xml", InputFormat::Junit),
    ("single-testsuite.xml", InputFormat::Junit),
    ("unicode-cdata.xml", InputFormat::Junit),
    ("gtest.xml", InputFormat::Junit),
    ("phpunit.xml", InputFormat::Junit),
    ("mocha-junit.xml", InputFormat::Junit),
];

/// A report from `tests/fixtures/reports/`.
pub(crate) fn sample(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/reports/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Runs a reader into a vector; the events are returned with the result.
pub(crate) fn events_of(
    read: impl FnOnce(&mut Emitter<'_>) -> Result<(), ReadError>,
) -> Result<Vec<TestEvent>, (Vec<TestEvent>, ReadError)> {
    let mut events = Vec::new();
    let result = read(&mut Emitter::new(&mut events, "1:"));
    check_tree(&events);
    match result {
        Ok(()) => Ok(events),
        Err(err) => Err((events, err)),
    }
}

/// Finished tests per outcome, every outcome present.
pub(crate) fn counts(events: &[TestEvent]) -> HashMap<Outcome, u64> {
    let mut counts: HashMap<Outcome, u64> = Outcome::ALL.iter().map(|o| (*o, 0)).collect();
    for event in events {
        if let TestEvent::Finished(result) = event {
            *counts.get_mut(&result.outcome).expect("all outcomes") += 1;
        }
    }
    counts
}

/// The stream obeys the event rules: unique ids, parents declared and
/// open, tests declared before they start/finish, every suite closed once.
pub(crate) fn check_tree(events: &[TestEvent]) {
    let mut ids = HashSet::new();
    let mut open_suites = HashSet::new();
    let mut tests = HashSet::new();
    let mut finished = HashSet::new();
    for event in events {
        match event {
            TestEvent::Suite(node) | TestEvent::Test(node) => {
                assert!(ids.insert(node.id.clone()), "duplicate id {}", node.id);
                if let Some(parent) = &node.parent {
                    assert!(open_suites.contains(parent), "parent {parent} not open");
                }
                if matches!(event, TestEvent::Suite(_)) {
                    open_suites.insert(node.id.clone());
                } else {
                    tests.insert(node.id.clone());
                }
            }
            TestEvent::Started { id } => assert!(tests.contains(id), "start of {id}"),
            TestEvent::Finished(r) => {
                assert!(tests.contains(&r.id), "finish of undeclared {}", r.id);
                assert!(finished.insert(r.id.clone()), "{} finished twice", r.id);
                assert_eq!(
                    r.expected.is_some(),
                    r.actual.is_some(),
                    "expected without actual"
                );
            }
            TestEvent::SuiteDone { id } => {
                assert!(
                    open_suites.remove(id),
                    "suite {id} closed twice or never opened"
                )
            }
            TestEvent::Output { id: Some(id), .. } => {
                assert!(
                    tests.contains(id) || ids.contains(id),
                    "output to unknown {id}"
                )
            }
            _ => {}
        }
    }
    assert!(open_suites.is_empty(), "suites left open: {open_suites:?}");
}

/// The names of the tests among `events`, in order.
pub(crate) fn test_names(events: &[TestEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            TestEvent::Test(n) => Some(n.name.as_str()),
            _ => None,
        })
        .collect()
}

/// The first result among `events` with `outcome`.
pub(crate) fn first_result(events: &[TestEvent], outcome: Outcome) -> Option<&TestResult> {
    events.iter().find_map(|e| match e {
        TestEvent::Finished(r) if r.outcome == outcome => Some(r),
        _ => None,
    })
}

/// The names of the suites among `events`, in order.
pub(crate) fn suite_names(events: &[TestEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            TestEvent::Suite(n) => Some(n.name.as_str()),
            _ => None,
        })
        .collect()
}
