//! The Promptfoo provider that `tcrunner promptfoo-provider` prints, run
//! by real Promptfoo (installed by scripts/setup-promptfoo.sh) on the
//! grading fixture: an eval whose assertions read the result passes and
//! fails as the tests do.
mod util;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use util::{output, tcrunner, Project};

fn promptfoo() -> PathBuf {
    let bin = util::path("target/node/promptfoo/node_modules/.bin/promptfoo");
    assert!(
        bin.exists(),
        "{} missing: run scripts/setup-promptfoo.sh",
        bin.display()
    );
    bin
}

/// Writes the provider into `dir`, as a user would.
fn write_provider(dir: &Path) -> PathBuf {
    let printed = output(&mut tcrunner(&["promptfoo-provider"]));
    assert_eq!(printed.status.code(), Some(0));
    let path = dir.join("provider.py");
    std::fs::write(&path, &printed.stdout).unwrap();
    path
}

/// The pytest 9 virtualenv: tcrunner finds its interpreter through
/// `VIRTUAL_ENV`, as in an activated environment.
fn venv() -> PathBuf {
    util::pytest9()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_owned()
}

#[test]
fn an_eval_passes_and_fails_as_the_tests_do() {
    let project = Project::copy("pytest-grading");
    let dir = project.path().join("eval");
    std::fs::create_dir_all(&dir).unwrap();
    write_provider(&dir);
    let config = format!(
        r#"prompts: ["run the tests"]
providers:
  - id: file://provider.py
    config:
      test_dir: {project}
      framework: pytest
      tcrunner: {bin}
      current: test_checkpoint_2.py
tests:
  - description: the passing tests only
    vars:
      args: -k 'not feature and not edge'
    assert:
      - type: javascript
        value: output.summary.failed + output.summary.errors === 0 && output.summary.passed === 5
  - description: every test
    assert:
      - type: javascript
        value: output.summary.failed + output.summary.errors === 0
  - description: every test, graded on its core group
    assert:
      - type: javascript
        value: output.groups.CORE.passed === output.groups.CORE.total && output.run.framework === 'pytest'
"#,
        project = project.path().display(),
        bin = util::bin().display(),
    );
    std::fs::write(dir.join("promptfooconfig.yaml"), config).unwrap();
    let node22 = util::node22().expect("node 22: run scripts/setup-node.sh");
    let path = format!(
        "{}:{}",
        node22.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let eval = Command::new(promptfoo())
        .args([
            "eval",
            "-c",
            "promptfooconfig.yaml",
            "--no-cache",
            "--no-progress-bar",
        ])
        .args(["-j", "1", "-o", "out.json"])
        .current_dir(&dir)
        .env("PATH", path)
        .env("VIRTUAL_ENV", venv())
        .env("PROMPTFOO_DISABLE_TELEMETRY", "1")
        .env("PROMPTFOO_DISABLE_UPDATE", "1")
        .env("PROMPTFOO_CONFIG_DIR", dir.join(".promptfoo"))
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&eval.stdout).into_owned() + &String::from_utf8_lossy(&eval.stderr);
    // Promptfoo's exit code for an eval with failed assertions.
    assert_eq!(eval.status.code(), Some(100), "{said}");
    let out: Value = util::json(&dir.join("out.json"));
    let verdicts: Vec<(String, bool)> = out["results"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["testCase"]["description"].as_str().unwrap().to_owned(),
                r["success"].as_bool().unwrap(),
            )
        })
        .collect();
    let expected = [
        ("the passing tests only", true),
        ("every test", false),
        ("every test, graded on its core group", true),
    ];
    for (description, success) in expected {
        assert!(
            verdicts.contains(&(description.to_owned(), success)),
            "{description}: {verdicts:?}\n{said}"
        );
    }
}

/// The provider's own failure paths, called as Promptfoo calls it.
#[test]
fn the_provider_says_why_there_is_no_result() {
    let dir = util::path("target/tmp").join(util::unique("provider"));
    std::fs::create_dir_all(&dir).unwrap();
    write_provider(&dir);
    let script = r#"
import json, sys
sys.path.insert(0, sys.argv[1])
import provider
print(json.dumps([
    provider.call_api("p", {"config": {}}, {"vars": {}}),
    provider.call_api("p", {"config": {"test_dir": "/nonexistent", "tcrunner": sys.argv[2]}}, {}),
    provider.command({"test_dir": "d", "framework": "jest", "args": "-t 'x y'", "timeout": 5,
                      "group": "slow=SLOW", "pass_policy": "core"}, "r.json"),
]))
"#;
    let run = Command::new(util::pytest9())
        .args(["-c", script])
        .arg(&dir)
        .arg(util::bin())
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let answers: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(
        answers[0]["error"],
        "the provider's config names no test_dir"
    );
    let missing = answers[1]["error"].as_str().unwrap();
    assert!(missing.contains("exited with 66"), "{missing}");
    assert!(
        missing.contains("/nonexistent: no such directory"),
        "{missing}"
    );
    assert_eq!(
        answers[2],
        serde_json::json!([
            "tcrunner",
            "--project",
            "d",
            "--json",
            "r.json",
            "--format",
            "none",
            "--framework",
            "jest",
            "--session-timeout",
            "5",
            "--pass-policy",
            "core",
            "--group",
            "slow=SLOW",
            "--",
            "-t",
            "x y"
        ])
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
