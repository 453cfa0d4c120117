#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! One settings type for every front end: a `Settings` with every field given (built from the
//! type itself, so a new field is covered without touching this test) comes out the same from a
//! system file's `[simulation]`, our SSP annotation (written and read back) and `cosim run
//! --set`; an unknown key is refused by each, with its name. (Python: python/tests/test_settings.py.)

use master::ssp::annotation;
use master::system::{AlgorithmKind, Settings, SystemBuilder};
use std::path::Path;

mod support;
use support::{cosim, tmp};

const INSTANCE: &str = "[instances.a]\nfmu = \"a.fmu\"\n";

fn every() -> Settings {
    let s = Settings::every_field_set().unwrap();
    // Every top-level key has a value (the nested `ecco` table too).
    let table = s.to_table().unwrap();
    assert_eq!(table.len(), Settings::keys().len(), "{table}");
    assert_ne!(s, Settings::default());
    s
}

fn simulation_toml(s: &Settings) -> String {
    let mut doc = toml::Table::new();
    doc.insert("simulation".into(), toml::Value::Table(s.to_table().unwrap()));
    toml::to_string(&doc).unwrap()
}

/// `key=value` for `--set`, dotted for the nested tables.
fn set_args(prefix: &str, t: &toml::Table, out: &mut Vec<String>) {
    for (k, v) in t {
        match v {
            toml::Value::Table(inner) => set_args(&format!("{prefix}{k}."), inner, out),
            v => out.push(format!("{prefix}{k}={v}")),
        }
    }
}

#[test]
fn every_setting_reaches_the_same_settings_from_toml_the_ssp_annotation_and_the_cli() {
    let s = every();

    // A system file.
    let text = simulation_toml(&s) + INSTANCE;
    let b = SystemBuilder::parse(Path::new("every.toml"), &text).unwrap();
    assert_eq!(b.settings(), &s, "{text}");

    // The SSP annotation: written from the builder and read back (start and stop are written
    // in ssd:DefaultExperiment instead, so they are not in it).
    let text = annotation::to_toml(&b);
    let mut c = SystemBuilder::new();
    annotation::apply(&mut c, &text).unwrap();
    assert_eq!(c.settings(), &Settings { start: None, stop: None, ..s.clone() }, "{text}");
    assert!(!text.contains("start =") && !text.contains("stop ="), "{text}");

    // The command line: every setting as `--set key=value` over a file that gives others.
    let dir = tmp("settings");
    let file = dir.join("sys.toml");
    std::fs::write(&file, format!("[simulation]\nstop = 9.0\nstep = 0.5\nalgorithm = \"jacobi\"\n{INSTANCE}")).unwrap();
    let mut args = Vec::new();
    set_args("", &s.to_table().unwrap(), &mut args);
    let mut cmd = vec!["run".to_owned(), file.display().to_string(), "--print-settings".into()];
    for a in &args {
        cmd.push("--set".into());
        cmd.push(a.clone());
    }
    let o = cosim(&cmd.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let printed = String::from_utf8_lossy(&o.stdout);
    let b = SystemBuilder::parse(Path::new("printed.toml"), &(printed.to_string() + INSTANCE)).unwrap();
    assert_eq!(b.settings(), &s, "{printed}");
}

#[test]
fn the_cli_flags_are_the_same_settings_as_set() {
    let dir = tmp("flags");
    let file = dir.join("sys.toml");
    std::fs::write(&file, format!("[simulation]\nstop = 9.0\nstep = 0.5\n{INSTANCE}")).unwrap();
    let f = file.display().to_string();
    let print = |args: &[&str]| {
        let mut all = vec!["run", f.as_str(), "--print-settings"];
        all.extend_from_slice(args);
        let o = cosim(&all);
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let flags = print(&[
        "--start-time",
        "1",
        "--step",
        "0.25",
        "--algorithm",
        "gauss-seidel",
        "--isolate",
        "--ecco-rtol",
        "1e-4",
        "--h-max",
        "0.5",
        "--energy-correction-law",
        "bond",
    ]);
    let set = print(&[
        "--set",
        "start=1.0",
        "--set",
        "step=0.25",
        "--set",
        "algorithm=gauss-seidel",
        "--set",
        "isolate=true",
        "--set",
        "ecco.rtol=1e-4",
        "--set",
        "ecco.h_max=0.5",
        "--set",
        "energy_correction_law=\"bond\"",
    ]);
    assert_eq!(flags, set);
    let b = SystemBuilder::parse(Path::new("printed.toml"), &(flags.clone() + INSTANCE)).unwrap();
    let s = b.settings();
    assert_eq!((s.start, s.stop, s.step), (Some(1.0), Some(9.0), Some(0.25)), "{flags}");
    assert_eq!(s.algorithm, Some(AlgorithmKind::GaussSeidel));
    assert_eq!((s.isolate, s.ecco.rtol, s.ecco.h_max), (Some(true), Some(1e-4), Some(0.5)));
}

#[test]
fn an_unknown_key_is_refused_by_every_front_end_with_its_name() {
    // System file.
    let e = SystemBuilder::parse(Path::new("bad.toml"), &format!("[simulation]\nstop = 1.0\nstepp = 0.1\n{INSTANCE}"))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("bad.toml:3:1: simulation.stepp: unknown field `stepp`; did you mean \"step\"?"), "{e}");
    let e = SystemBuilder::parse(
        Path::new("bad.toml"),
        &format!("[simulation]\nstop = 1.0\n[simulation.ecco]\nrtl = 1\n{INSTANCE}"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("unknown field `rtl`"), "{e}");
    // SSP annotation.
    let e = annotation::apply(&mut SystemBuilder::new(), "[simulation]\nalgoritm = \"jacobi\"\n").unwrap_err();
    assert!(e.1.contains("unknown field `algoritm`"), "{e:?}");
    // Command line.
    let dir = tmp("unknown");
    let file = dir.join("sys.toml");
    std::fs::write(&file, format!("[simulation]\nstop = 1.0\nstep = 0.5\n{INSTANCE}")).unwrap();
    let o = cosim(&["run", file.to_str().unwrap(), "--print-settings", "--set", "iteratons=3"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("--set iteratons: unknown field `iteratons`"), "{err}");
    // A bad value names its key.
    let o = cosim(&["run", file.to_str().unwrap(), "--print-settings", "--set", "ecco.rtol=tight"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("--set ecco.rtol:"), "{err}");
}
