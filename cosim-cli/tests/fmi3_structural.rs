#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! FMI 3.0 structural parameters (issue 43 item 1) on a C FMU of our own (`cfmu3/statespace.c`,
//! built here with the system's `cc`): x' = A x + B u with A = diag(-i), i = 1…n, whose size n is
//! a structural parameter. The arrays follow n (results.csv columns `x[1]`…`x[n]`, `A[i,j]`), the
//! results match the closed form for n = 1…5 and FMPy's run of the same FMU bit for bit, and every
//! hostile configuration is refused before the FMU is instantiated, naming the variable.

use master::fmu::{Fmu, FmuInstance};
use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::{cosim, python, tmp};

#[path = "../../master/tests/cfmu3/build.rs"]
mod cfmu3_build;
use cfmu3_build::{build_statespace, STATESPACE_XML};

fn run(dir: &Path, fmu: &Path, flags: &[&str]) -> (Option<i32>, String, PathBuf) {
    let out = dir.join("out");
    let _ = std::fs::remove_dir_all(&out);
    let mut args = vec!["run", fmu.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(flags);
    let o = cosim(&args);
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned(), out)
}

/// results.csv: header and rows of numbers.
fn results(out: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    // Column names with a comma (`A[1,2]`) are quoted.
    let mut header = Vec::new();
    let (mut cell, mut quoted) = (String::new(), false);
    for c in lines.next().unwrap().chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => header.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    header.push(cell);
    (header, lines.map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect())
}

/// x_i(t) for u = 1, x0 = 1: 1/i + (1 - 1/i) e^{-i t}.
fn closed_form(i: usize, t: f64) -> f64 {
    let k = i as f64;
    1.0 / k + (1.0 - 1.0 / k) * (-k * t).exp()
}

#[test]
fn the_arrays_follow_n_and_the_results_match_the_closed_form_for_n_1_to_5() {
    let dir = tmp("structural-closed-form");
    let fmu = build_statespace(&dir, "statespace", STATESPACE_XML);
    for n in 1..=5usize {
        let (code, stderr, out) = run(&dir, &fmu, &["--start-value", &format!("n={n}")]);
        assert_eq!(code, Some(0), "n = {n}: {stderr}");
        let (header, rows) = results(&out);
        let mut expected = vec!["time".to_owned()];
        expected.extend((1..=n).map(|i| format!("statespace.x[{i}]")));
        let a: Vec<String> = (1..=n).flat_map(|i| (1..=n).map(move |j| format!("statespace.A[{i},{j}]"))).collect();
        for column in expected.iter().chain(&a).chain(std::iter::once(&"statespace.y".to_owned())) {
            assert!(header.contains(column), "n = {n}: no column {column} in {header:?}");
        }
        assert!(!header.contains(&format!("statespace.x[{}]", n + 1)), "n = {n}: {header:?}");
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        assert_eq!(rows.len(), 11, "n = {n}");
        for row in &rows {
            let t = row[0];
            let mut sum = 0.0;
            for i in 1..=n {
                let x = row[col(&format!("statespace.x[{i}]"))];
                assert!((x - closed_form(i, t)).abs() < 1e-12, "n = {n}, t = {t}: x[{i}] = {x}");
                sum += x;
                for j in 1..=n {
                    let aij = row[col(&format!("statespace.A[{i},{j}]"))];
                    assert_eq!(aij, if i == j { -(i as f64) } else { 0.0 }, "A[{i},{j}]");
                }
            }
            assert!((row[col("statespace.y")] - sum).abs() < 1e-12);
        }
    }
    // Without --start-value: the start value n = 3.
    let (code, stderr, out) = run(&dir, &fmu, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let (header, _) = results(&out);
    assert!(header.contains(&"statespace.x[3]".to_owned()) && !header.contains(&"statespace.x[4]".to_owned()));
}

#[test]
fn fmpy_configuring_the_same_fmu_gives_the_same_results_bit_for_bit() {
    let dir = tmp("structural-fmpy");
    let fmu = build_statespace(&dir, "statespace", STATESPACE_XML);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../master/tests/cfmu3/fmpy_statespace.py");
    for n in [1usize, 4] {
        let o = Command::new(python()).arg(&script).arg(&fmu).args([&n.to_string(), "10", "0.1"]).output().unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
        let fmpy: Vec<Vec<f64>> = stdout.lines().map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
        let mut columns: Vec<String> = (1..=n).map(|i| format!("statespace.x[{i}]")).collect();
        columns.push("statespace.y".into());
        let (code, stderr, out) =
            run(&dir, &fmu, &["--start-value", &format!("n={n}"), "--output-variables", &columns.join(",")]);
        assert_eq!(code, Some(0), "{stderr}");
        let (header, rows) = results(&out);
        assert_eq!(header.len(), n + 2, "{header:?}");
        assert_eq!(rows.len(), fmpy.len());
        for (ours, theirs) in rows.iter().zip(&fmpy) {
            assert!((ours[0] - theirs[0]).abs() < 1e-12, "time {} vs {}", ours[0], theirs[0]);
            // Bit for bit: the same FMU code with the same h.
            assert_eq!(ours[1..], theirs[1..], "n = {n}, t = {}", ours[0]);
        }
    }
}

#[test]
fn two_instances_of_one_fmu_have_their_own_sizes_from_toml_start_values() {
    let dir = tmp("structural-toml");
    let fmu = build_statespace(&dir, "statespace", STATESPACE_XML);
    let sys = dir.join("system.toml");
    std::fs::write(
        &sys,
        format!(
            "[simulation]\nstop = 0.5\nstep = 0.1\n\n[instances.a]\nfmu = \"{f}\"\nstart = {{ n = 2 }}\n\n\
             [instances.b]\nfmu = \"{f}\"\nstart = {{ n = 5 }}\n\n[[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\n",
            f = fmu.display()
        ),
    )
    .unwrap();
    let out = dir.join("out");
    let o = cosim(&["run", sys.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (header, rows) = results(&out);
    for c in ["a.x[2]", "b.x[5]", "a.A[2,2]", "b.A[5,5]"] {
        assert!(header.contains(&c.to_owned()), "{c}: {header:?}");
    }
    assert!(!header.contains(&"a.x[3]".to_owned()), "{header:?}");
    assert_eq!(rows.len(), 6);
    // In the library: the configured FMU's instance holds n = 5 and five values of x.
    let base = Fmu::load(&fmu).unwrap();
    assert_eq!(base.structural()[0].value, Some(3));
    let five = base.configured(&[("n", 5)]).unwrap();
    assert_eq!(five.structural()[0].value, Some(5));
    assert!(five.model_description().variable("x[5]").is_some() && base.model_description().variable("x[4]").is_none());
    let mut i = five.instantiate("five").unwrap();
    let mut n = [0u64];
    let vr_n = five.model_description().variable("n").unwrap().value_reference;
    i.get_uint64(&[vr_n], &mut n).unwrap();
    assert_eq!(n, [5]);
    // The configured value again is no change; another one is refused, naming the parameter.
    i.set_uint64(&[vr_n], &[5]).unwrap();
    let e = i.set_uint64(&[vr_n], &[4]).unwrap_err().to_string();
    assert!(e.contains("structural parameter n is configured as 5") && e.contains("cannot be set to 4"), "{e}");
}

#[test]
fn hostile_configurations_are_refused_before_instantiation_naming_the_variable() {
    let dir = tmp("structural-hostile");
    let fmu = build_statespace(&dir, "statespace", STATESPACE_XML);
    for (n, expected) in [
        ("0", "structural parameter n = 0 is below its bounds: min 1, max 5 (modelDescription.xml line 12)"),
        ("6", "structural parameter n = 6 is above its bounds: min 1, max 5"),
        ("9223372036854775808", "n"),
        ("-1", "n"),
    ] {
        let (code, stderr, out) = run(&dir, &fmu, &["--start-value", &format!("n={n}")]);
        assert_ne!(code, Some(0), "n = {n}");
        assert!(stderr.contains(expected) && stderr.contains(n), "n = {n}: {stderr}");
        assert!(!out.join("results.csv").exists(), "n = {n}");
    }
    // Without max: the element limit, named (A has n² elements: 400² > 100000 before any allocation).
    let open = build_statespace(&dir, "open", &STATESPACE_XML.replace(" max=\"5\"", ""));
    let (code, stderr, _) = run(&dir, &open, &["--start-value", "n=400"]);
    assert_ne!(code, Some(0));
    assert!(
        stderr.contains("array variable <Float64 name=\"A\">") && stderr.contains("(more than 100000)"),
        "{stderr}"
    );
    let (code, stderr, _) = run(&dir, &open, &["--start-value", "n=4000000000"]);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("n = 4000000000 is larger than cosim's limit of 100000 elements"), "{stderr}");
    // A dimension that names a missing or an ordinary variable: the FMU is refused by run and by info.
    for (xml, expected) in [
        (
            STATESPACE_XML.replace("<Dimension valueReference=\"1\"/></Float64>", "<Dimension valueReference=\"77\"/></Float64>"),
            "array variable <Float64 name=\"x\"> (line 9): its <Dimension valueReference=\"77\"> (line 9) names no variable",
        ),
        (
            STATESPACE_XML.replace("<Dimension valueReference=\"1\"/></Float64>", "<Dimension valueReference=\"3\"/></Float64>"),
            "names x0, which is neither a structural parameter nor a constant of an integer type",
        ),
    ] {
        let bad = build_statespace(&dir, "bad", &xml);
        let (code, stderr, _) = run(&dir, &bad, &[]);
        assert_ne!(code, Some(0));
        assert!(stderr.contains(expected), "{stderr}");
        let o = cosim(&["info", bad.to_str().unwrap()]);
        let info = String::from_utf8_lossy(&o.stdout);
        assert!(info.contains("Runs with cosim:  no") && info.contains(expected), "{info}");
    }
}

#[test]
fn info_lists_the_structural_parameters_and_the_arrays_they_size() {
    let dir = tmp("structural-info");
    let fmu = build_statespace(&dir, "statespace", STATESPACE_XML);
    let o = cosim(&["info", fmu.to_str().unwrap()]);
    let info = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{info}{}", String::from_utf8_lossy(&o.stderr));
    assert!(info.contains("Runs with cosim:  yes"), "{info}");
    assert!(info.contains("Structural parameters"), "{info}");
    assert!(info.contains("n (UInt64, start 3, min 1, max 5): sizes x [n] = [3], A [n, n] = [3, 3]"), "{info}");
    assert!(info.contains("cosim uses:       Co-Simulation"), "{info}");
    // The variable table: n's causality and type as the FMU declares them.
    let n = info.lines().rfind(|l| l.trim_start().starts_with("n ")).unwrap();
    for cell in ["UInt64", "structuralParameter", "fixed", "3"] {
        assert!(n.split_whitespace().any(|c| c == cell), "{cell} not in {n}");
    }
}
