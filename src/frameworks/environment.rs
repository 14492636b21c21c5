//! The framework's environment: `--env-clear`, `--env KEY=VALUE` and `--ci`
//! applied around what each framework's launch adds for our reporter.
use std::ffi::OsString;

use super::{Framework, Request};
use crate::process::Spec;

/// What `--env-clear` keeps of tcrunner's own environment. Nothing else is
/// needed to start any framework: the interpreter and node are found before
/// the environment is cleared, and what the reporters need is added by
/// tcrunner after it.
pub(crate) const KEPT_BY_CLEAR: [&str; 5] = ["PATH", "HOME", "LANG", "TMPDIR", "TERM"];

impl Request {
    /// `key` as the framework will find it before tcrunner's own additions:
    /// `--env` first, then tcrunner's environment unless `--env-clear`
    /// left it out.
    pub(crate) fn var(&self, key: &str) -> Option<OsString> {
        if let Some((_, value)) = self.env.iter().rev().find(|(k, _)| k == key) {
            return Some(value.clone());
        }
        if self.env_clear && !KEPT_BY_CLEAR.contains(&key) {
            return None;
        }
        std::env::var_os(key)
    }
}

/// Puts the user's environment under what the framework's launch added
/// (`spec.env`, which wins: the reporter cannot work without it): with
/// `--env-clear` only [`KEPT_BY_CLEAR`] of tcrunner's own, then `--ci`'s
/// variables unless the environment gives them already, then `--env`.
pub(crate) fn apply(spec: &mut Spec, request: &Request, framework: &dyn Framework) {
    let mut env: Vec<(OsString, OsString)> = Vec::new();
    if request.env_clear {
        env.extend(
            KEPT_BY_CLEAR
                .iter()
                .filter_map(|key| Some((OsString::from(key), std::env::var_os(key)?))),
        );
    }
    if request.ci {
        for (key, value) in framework.ci_env() {
            // `CI` is what `--ci` asks for; the others only fill a gap.
            if *key == "CI" {
                if !request.env.iter().any(|(k, _)| k == key) {
                    env.push((key.into(), value.into()));
                }
            } else if request.var(key).is_none() {
                env.push((key.into(), value.into()));
            }
        }
    }
    env.extend(request.env.iter().cloned());
    env.append(&mut spec.env);
    spec.env = last_of_each(env);
    spec.env_clear = request.env_clear;
}

/// Each variable once, with its last value, where it was first set.
fn last_of_each(env: Vec<(OsString, OsString)>) -> Vec<(OsString, OsString)> {
    let mut kept: Vec<(OsString, OsString)> = Vec::with_capacity(env.len());
    for (key, value) in env {
        match kept.iter_mut().find(|(k, _)| k == &key) {
            Some(slot) => slot.1 = value,
            None => kept.push((key, value)),
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frameworks::{Jest, Pytest};
    use std::ffi::OsStr;

    /// Whether `key` is set to `value` in `env`.
    fn has(env: &[(OsString, OsString)], key: &str, value: &str) -> bool {
        env.iter()
            .any(|(k, v)| k == OsStr::new(key) && v == OsStr::new(value))
    }

    fn spec(env: &[(&str, &str)]) -> Spec {
        Spec {
            program: "true".into(),
            args: Vec::new(),
            env: env.iter().map(|(k, v)| (k.into(), v.into())).collect(),
            cwd: "/".into(),
            env_clear: false,
            sandbox: None,
        }
    }

    fn request(env: &[(&str, &str)], clear: bool, ci: bool) -> Request {
        Request {
            env: env.iter().map(|(k, v)| (k.into(), v.into())).collect(),
            env_clear: clear,
            ci,
            ..Request::default()
        }
    }

    #[test]
    fn the_launchs_own_variables_win_and_each_is_set_once() {
        let mut spec = spec(&[("PYTHONPATH", "/runner")]);
        let request = request(
            &[("A", "1"), ("PYTHONPATH", "/mine"), ("A", "2")],
            false,
            false,
        );
        apply(&mut spec, &request, &Pytest);
        assert_eq!(
            spec.env,
            [
                ("A".into(), "2".into()),
                ("PYTHONPATH".into(), "/runner".into())
            ]
        );
        assert!(!spec.env_clear);
        assert_eq!(request.var("PYTHONPATH"), Some("/mine".into()));
    }

    #[test]
    fn clearing_keeps_only_the_documented_variables() {
        let mut spec = spec(&[]);
        let request = request(&[("A", "1")], true, false);
        apply(&mut spec, &request, &Jest);
        assert!(spec.env_clear);
        for (key, _) in &spec.env {
            assert!(
                key == OsStr::new("A") || KEPT_BY_CLEAR.iter().any(|k| key == OsStr::new(k)),
                "{key:?}"
            );
        }
        assert!(has(&spec.env, "A", "1"));
        // PATH is set wherever cargo runs the tests.
        assert!(spec.env.iter().any(|(k, _)| k == OsStr::new("PATH")));
        assert_eq!(request.var("CARGO_MANIFEST_DIR"), None);
    }

    #[test]
    fn ci_sets_ci_and_fills_node_env_for_js_only() {
        let mut js = spec(&[]);
        apply(&mut js, &request(&[], true, true), &Jest);
        assert!(has(&js.env, "CI", "true"));
        assert!(has(&js.env, "NODE_ENV", "test"));
        let mut py = spec(&[]);
        apply(&mut py, &request(&[], true, true), &Pytest);
        assert!(has(&py.env, "CI", "true"));
        assert!(!py.env.iter().any(|(k, _)| k == OsStr::new("NODE_ENV")));
        // Given values stand.
        let mut given = spec(&[]);
        let asked = request(&[("NODE_ENV", "production"), ("CI", "1")], true, true);
        apply(&mut given, &asked, &Jest);
        assert!(has(&given.env, "NODE_ENV", "production"));
        assert!(has(&given.env, "CI", "1"));
        assert!(!has(&given.env, "CI", "true"));
    }
}
