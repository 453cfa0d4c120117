//! The one rule for a test whose third-party tool or input file is missing (issue 51 item 4):
//!
//! - under CI (`CI=true`, which `.ci/run` sets and every CI service sets), the test **fails**
//!   with what is missing and how to install it: a missing tool never turns into a pass;
//! - elsewhere it is skipped **visibly**: one `SKIPPED:` line on the terminal's stderr even when
//!   cargo's test harness captures the test's output (the harness captures `print!`/`eprint!`,
//!   not writes to `std::io::stderr()`), and the test returns.
//!
//! The Python tests follow the same rule through `python/tests/conftest.py`'s `require`.
//!
//! ```no_run
//! fn fmpy_available() -> bool { false }
//! #[test]
//! fn against_fmpy() {
//!     if !fmpy_available() {
//!         return missing_tool::skip_or_fail("FMPy (import fmpy)", "`cargo xtask test` makes .venv with FMPy");
//!     }
//!     // … the test
//! }
//! ```
#![warn(missing_docs)]

use std::io::Write;

/// Whether the tests run under CI: `$CI` is `true` or `1` (any case).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// The message of a missing `what` and how to `install` it.
pub fn message(what: &str, install: &str) -> String {
    format!("{what} is missing: {install}")
}

/// `what` (a tool or a file) is missing; `install` says how to get it. Under CI this panics
/// with both (the test fails); elsewhere it prints a visible `SKIPPED:` line and returns, and the
/// caller returns from the test.
///
/// # Panics
/// Under CI, always.
#[allow(clippy::panic)] // the rule: a missing tool fails the test under CI
#[track_caller] // the panic names the test's line, not this one
pub fn skip_or_fail(what: &str, install: &str) {
    let text = message(what, install);
    if in_ci() {
        panic!("{text} (CI=true: a missing tool fails the test instead of skipping it)");
    }
    let test = std::thread::current().name().unwrap_or("test").to_owned();
    // Straight to the file descriptor: visible even when the harness captures the output.
    let _ = writeln!(std::io::stderr(), "\n*** SKIPPED {test}: {text} (under CI=true this test fails) ***");
}

/// [`skip_or_fail`] when `present` is false; returns `present` (`if !require(…) { return; }`).
#[track_caller]
pub fn require(present: bool, what: &str, install: &str) -> bool {
    if !present {
        skip_or_fail(what, install);
    }
    present
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_what_is_missing_and_how_to_install_it() {
        assert_eq!(message("FMPy", "pip install fmpy"), "FMPy is missing: pip install fmpy");
    }

    #[test]
    fn present_tools_pass_through() {
        assert!(require(true, "x", "y"));
    }

    #[test]
    fn under_ci_a_missing_tool_fails_and_elsewhere_it_is_skipped() {
        // Each case in a child process of this test binary with CI set or unset (the
        // environment is process-wide: no set_var in a threaded test).
        if let Ok(mode) = std::env::var("MISSING_TOOL_CHILD") {
            assert_eq!(in_ci(), mode == "ci");
            assert!(!require(false, "FMPy", "pip install fmpy"));
            return;
        }
        let exe = std::env::current_exe().unwrap_or_default();
        let run = |ci: Option<&str>| {
            let mut c = std::process::Command::new(&exe);
            c.args(["--exact", "tests::under_ci_a_missing_tool_fails_and_elsewhere_it_is_skipped", "--nocapture"]);
            c.env("MISSING_TOOL_CHILD", if ci.is_some() { "ci" } else { "local" });
            match ci {
                Some(v) => c.env("CI", v),
                None => c.env_remove("CI"),
            };
            c.output().expect("the test binary runs")
        };
        let ci = run(Some("true"));
        let text = String::from_utf8_lossy(&ci.stdout).into_owned() + &String::from_utf8_lossy(&ci.stderr);
        assert!(!ci.status.success(), "CI=true: must fail\n{text}");
        assert!(text.contains("FMPy is missing: pip install fmpy"), "{text}");
        let local = run(None);
        let text = String::from_utf8_lossy(&local.stderr);
        assert!(local.status.success(), "{text}");
        assert!(text.contains("*** SKIPPED") && text.contains("FMPy is missing"), "{text}");
    }
}
