#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Issue 49 item 5: the system file's common mistakes (a misspelt key, a value of the wrong type or
//! a misspelt keyword, an unknown instance, an unknown variable, a wrong FMU path), each refused with where it is
//! (`file:line:column` for what the TOML reader finds, `file:line` of the key for what is checked
//! against the FMUs) and the nearest known name.

use fmu_harness::paths;
use std::path::{Path, PathBuf};

mod support;
use support::{cosim, scenario, tmp};

/// `oscillator-fd.toml` with `from` replaced by `to`, run: the error line of `cosim run`, and
/// the system file.
fn refused(name: &str, from: &str, to: &str) -> (String, PathBuf) {
    paths::fmu("oscillator-fd-m1");
    paths::fmu("oscillator-fd-m2");
    let dir = tmp(name);
    let toml = scenario("oscillator-fd.toml", &dir);
    let text = std::fs::read_to_string(&toml).unwrap();
    assert!(text.contains(from), "{from}");
    std::fs::write(&toml, text.replacen(from, to, 1)).unwrap();
    let o = cosim(&["run", s(&toml), "--out", s(&dir.join("out"))]);
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    let line = e.lines().find(|l| l.starts_with("error:")).unwrap_or_else(|| panic!("{e}")).to_owned();
    (line, toml)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn an_unknown_key_names_its_line_and_column_and_the_key_meant() {
    let (e, toml) = refused("stpe", "step = 1e-3", "stpe = 1e-3");
    let want = format!("error: {}:8:1: simulation.stpe: unknown field `stpe`; did you mean \"step\"?", toml.display());
    assert_eq!(e, want);
    // The suggestion instead of the list of every key of [simulation].
    assert!(!e.contains("expected one of"), "{e}");
}

#[test]
fn a_value_of_the_wrong_type_or_a_misspelt_keyword_names_its_line_and_column() {
    let (e, toml) = refused("type", "stop = 10.0", "stop = \"10\"");
    assert_eq!(e, format!("error: {}:7:8: simulation.stop: invalid type: string \"10\", expected f64", toml.display()));
    let (e, toml) = refused("variant", "algorithm = \"jacobi\"", "algorithm = \"jacobbi\"");
    let want = format!(
        "error: {}:9:13: simulation.algorithm: unknown variant `jacobbi`; did you mean \"jacobi\"?",
        toml.display()
    );
    assert_eq!(e, want);
}

#[test]
fn an_unknown_instance_in_a_connection_names_the_instance_meant() {
    let (e, toml) = refused("instance", "from = \"m2.x\"", "from = \"m22.x\"");
    let want = format!(
        "error: {}:21: connections[0].from: unknown instance \"m22\" (instances: m1, m2); did you mean \"m2\"?",
        toml.display()
    );
    assert_eq!(e, want);
}

#[test]
fn an_unknown_variable_in_a_connection_names_the_variables_meant() {
    let (e, toml) = refused("variable", "from = \"m2.x\"", "from = \"m2.xx\"");
    let want = format!(
        "error: {}:21: connections[0].from: instance \"m2\" (OscillatorFdM2) has no variable \"xx\"; did you mean \"x0\" or \"x\"?",
        toml.display()
    );
    assert_eq!(e, want);
}

#[test]
fn a_wrong_fmu_path_names_the_nearest_fmu_of_its_folder() {
    let (e, toml) = refused("fmu", "oscillator-fd-m1.fmu", "oscilator-fd-m1.fmu");
    assert!(e.starts_with(&format!("error: {}:13: instances.m1.fmu: ", toml.display())), "{e}");
    assert!(e.contains("oscilator-fd-m1.fmu: No such file or directory"), "{e}");
    assert!(e.ends_with("; did you mean \"oscillator-fd-m1.fmu\"?"), "{e}");
    // Nothing near: no suggestion.
    let (e, _) = refused("fmu-far", "oscillator-fd-m1.fmu", "zzzzzzzzzzzzzzz.fmu");
    assert!(e.contains("zzzzzzzzzzzzzzz.fmu") && !e.contains("did you mean"), "{e}");
}
