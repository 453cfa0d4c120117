#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! `cosim run X.fmu --input-file in.csv` (issue 44) against FMPy's `simulate_fmu(input=…)` on
//! the same FMU and file: our oscillator (interpolates its inputs: a ramp as input derivatives,
//! FMPy's `set_input_derivatives=True`), piecewise-constant inputs with jumps (repeated time
//! stamps) on the grid, the OpenModelica Mass_Damper (gemseo-fmu), a ramp through a C integrator
//! FMU (the closed form); a malformed file refused before anything runs.

use fmu_harness::paths;
use std::path::{Path, PathBuf};
use std::process::Command;

mod cfmu;
mod support;
use support::{cosim, tmp};

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(|s| s.trim_matches('"').to_owned()).collect();
    let num = |x: &str| match x {
        "True" => 1.0,
        "False" => 0.0,
        x => x.parse().unwrap_or_else(|_| panic!("{x:?} in {}", path.display())),
    };
    (header, lines.map(|l| l.split(',').map(num).collect()).collect())
}

/// `cosim run FMU --input-file FILE` with `flags`; the run's folder.
fn run(tag: &str, fmu: &Path, file: &Path, flags: &[&str]) -> PathBuf {
    let out = tmp(tag).join("out");
    let mut args = vec!["run", fmu.to_str().unwrap(), "--input-file", file.to_str().unwrap(), "--out"];
    args.push(out.to_str().unwrap());
    args.extend_from_slice(flags);
    let o = cosim(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// FMPy's `simulate_fmu` with the file as `input` (FMPy's own `read_csv`), sampled every `h`.
fn fmpy(fmu: &Path, file: &Path, stop: f64, h: f64, derivatives: bool, output: &[&str], csv: &Path) {
    // FMPy 0.3.32 allocates 9 input derivatives whatever the number of inputs (`set_input_derivatives`
    // fails with 2): the buffer is resized to the inputs' number after `Input.__init__`.
    let script = "import sys, json\n\
                  import fmpy.simulation as S\n\
                  init = S.Input.__init__\n\
                  def fixed(self, *a, **k):\n    \
                  init(self, *a, **k)\n    \
                  self.continuous = [c._replace(derivatives=(c.values._type_ * len(c.vrs))()) for c in getattr(self, 'continuous', [])]\n\
                  S.Input.__init__ = fixed\n\
                  from fmpy import simulate_fmu\n\
                  from fmpy.util import read_csv, write_csv\n\
                  a = sys.argv\n\
                  out = json.loads(a[6]) or None\n\
                  r = simulate_fmu(a[1], input=read_csv(a[2]), stop_time=float(a[3]), output_interval=float(a[4]), \
                  set_input_derivatives=a[5] == '1', output=out)\n\
                  write_csv(a[7], r)\n";
    let o = Command::new(paths::python())
        .args(["-c", script])
        .arg(fmu)
        .arg(file)
        .arg(format!("{stop:e}"))
        .arg(format!("{h:e}"))
        .arg(if derivatives { "1" } else { "0" })
        .arg(serde_json::to_string(output).unwrap())
        .arg(csv)
        .output()
        .expect("running FMPy");
    assert!(o.status.success(), "FMPy failed: {}", String::from_utf8_lossy(&o.stderr));
}

/// Largest difference between our results.csv and FMPy's CSV over FMPy's columns, relative to
/// each column's range (at least 1), leaving out the rows at `skip` times.
fn worst(ours: &Path, theirs: &Path, instance: &str) -> f64 {
    worst_but(ours, theirs, instance, &[])
}

fn worst_but(ours: &Path, theirs: &Path, instance: &str, skip: &[f64]) -> f64 {
    let (h, rows) = read_csv(&ours.join("results.csv"));
    let (fh, frows) = read_csv(theirs);
    assert_eq!(rows.len(), frows.len(), "FMPy samples the same points");
    let mut worst: f64 = 0.0;
    for (j, name) in fh.iter().enumerate() {
        let ours = if name == "time" { name.clone() } else { format!("{instance}.{name}") };
        let k = h.iter().position(|c| *c == ours).unwrap_or_else(|| panic!("no {ours} in {h:?}"));
        let range = frows.iter().map(|r| r[j].abs()).fold(1.0, f64::max);
        for (a, b) in rows.iter().zip(&frows).filter(|(a, _)| !skip.contains(&a[0])) {
            worst = worst.max((a[k] - b[j]).abs() / range);
        }
    }
    worst
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_ramp_into_an_interpolating_fmu_is_fmpys_with_input_derivatives() {
    // One straight segment over the run (from before its start: FMPy sets no derivative at the
    // first row): the chord over each step is the ramp's slope, FMPy's input derivative.
    let dir = tmp("in-ramp");
    let file = write(&dir, "ramp.csv", "time,xi,xi_dot\n-1,-0.1,0.1\n2,0.2,0.1\n");
    let fmu = paths::fmu("oscillator-fd-m1");
    let out = run("in-ramp", &fmu, &file, &["--stop-time", "1", "--step", "0.0009765625"]);
    let theirs = dir.join("fmpy.csv");
    fmpy(&fmu, &file, 1.0, 0.0009765625, true, &[], &theirs);
    let w = worst(&out, &theirs, "oscillator_fd_m1");
    assert!(w <= 1e-12, "cosim and FMPy differ by {w} (relative)");
}

#[test]
fn jumps_on_the_grid_are_fmpys_discontinuities() {
    // Piecewise constant with repeated time stamps at grid points (H = 2^-10 s): FMPy holds
    // u(t_n) over each step (no input derivatives), the value after the jump at its time; so do
    // we (the chord to the value just before the next jump is 0).
    let dir = tmp("in-jumps");
    let text = "time,xi,xi_dot\n0,0,0\n0.25,0,0\n0.25,0.01,0\n0.5,0.01,0\n0.5,-0.02,0.5\n0.75,-0.02,0.5\n0.75,0,0\n";
    let file = write(&dir, "jumps.csv", text);
    let fmu = paths::fmu("oscillator-fd-m1");
    let out = run("in-jumps", &fmu, &file, &["--stop-time", "1", "--step", "0.0009765625"]);
    let theirs = dir.join("fmpy.csv");
    fmpy(&fmu, &file, 1.0, 0.0009765625, false, &[], &theirs);
    // The rows at the jumps differ in the feedthrough output F only: ours shows the inputs of
    // its time (after the jump), FMPy's row is read before it sets them (before the jump).
    let w = worst_but(&out, &theirs, "oscillator_fd_m1", &[0.25, 0.5, 0.75]);
    assert!(w <= 1e-12, "cosim and FMPy differ by {w} (relative)");
}

#[test]
fn the_openmodelica_mass_damper_driven_from_a_file_is_fmpys() {
    let fmu = paths::root().join("target/thirdparty/gemseo/Mass_Damper.fmu");
    assert!(fmu.exists(), "{} missing: run `cargo xtask test` (it extracts gemseo-fmu's FMUs)", fmu.display());
    let dir = tmp("in-md");
    let file = write(&dir, "f.csv", "time,f\n0,0\n0.5,0\n0.5,2\n1,2\n");
    let out = run("in-md", &fmu, &file, &["--step", "0.0009765625"]);
    let theirs = dir.join("fmpy.csv");
    fmpy(&fmu, &file, 1.0, 0.0009765625, false, &[], &theirs);
    let w = worst(&out, &theirs, "Mass_Damper");
    assert!(w <= 1e-12, "cosim and FMPy differ by {w} (relative)");
}

#[test]
fn a_ramp_through_an_integrator_is_the_closed_form_and_fmpys() {
    // The C integrator x' = u (explicit Euler over each step, cannot interpolate inputs): u is
    // held at u(t_n) over each step, so x(t_N) = H Σ u(t_n), n < N, for u = 1 + 2t on a line
    // through two rows, 3 t² inside the second segment: exactly the left Riemann sum.
    let dir = tmp("in-integrator");
    let fmu = cfmu::Spec::new("integrator").build(&dir);
    let file = write(&dir, "u.csv", "time,u\n0,1\n0.5,2\n0.5,2\n1,2.5\n");
    let out = run("in-integrator", &fmu, &file, &["--step", "0.0625"]);
    let (h, rows) = read_csv(&out.join("results.csv"));
    let x = h.iter().position(|c| c == "integrator.x").unwrap();
    let u = |t: f64| if t <= 0.5 { 1.0 + 2.0 * t } else { 2.0 + (t - 0.5) };
    let mut sum = 0.0;
    for (n, r) in rows.iter().enumerate() {
        assert!((r[x] - sum).abs() <= 1e-14, "x({}) = {}, closed form {sum}", r[0], r[x]);
        sum += 0.0625 * u(n as f64 * 0.0625);
    }
    let theirs = dir.join("fmpy.csv");
    fmpy(&fmu, &file, 1.0, 0.0625, false, &[], &theirs);
    let w = worst(&out, &theirs, "integrator");
    assert!(w <= 1e-14, "cosim and FMPy differ by {w} (relative)");
}

#[test]
fn a_malformed_file_is_refused_with_its_line_and_column_before_the_run() {
    let dir = tmp("in-bad");
    let fmu = paths::fmu("oscillator-fd-m1");
    for (text, expected) in [
        ("time,xi\n0,1\n0.5,1e\n", "line 3, column 2 (\"xi\"): \"1e\" is not a number"),
        ("time,xi\n0,1\n0.5,nan\n", "line 3, column 2 (\"xi\"): \"nan\" is not a finite number"),
        ("time,xi\n0,1\n0.5,1\n0.4,1\n", "line 4, column 1 (\"time\"): time 0.4 is before the previous row's 0.5"),
        ("time,xi\n0,1\n0.5\n", "line 3: 1 fields, but the header has 2"),
        ("time,nothing\n0,1\n", "no column names an input of"),
    ] {
        let file = write(&dir, "bad.csv", text);
        let out = dir.join("out");
        let o = cosim(
            &["run", fmu.to_str().unwrap(), "--input-file", file.to_str().unwrap(), "--out"]
                .into_iter()
                .chain([out.to_str().unwrap()])
                .collect::<Vec<_>>(),
        );
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(expected) && stderr.contains("bad.csv"), "{expected:?} not in {stderr}");
        assert!(!out.join("results.csv").exists(), "nothing of the run started: {stderr}");
    }
}

#[test]
fn a_streamed_file_of_many_rows_per_step_is_the_same_table_in_memory_byte_for_byte() {
    // 40 001 rows over 1 s (≈ 39 a step of 2^-10 s, 4 a sub-step of the multirate instance):
    // the run reads them through its window (rows dropped and shifted as it goes), the inline
    // table holds them all; results.csv must be identical byte for byte, with an interpolating
    // FMU (the chords) and a held one at own sub-steps, linear and hold.
    let dir = tmp("in-stream");
    let n = 40_000;
    let times: Vec<f64> = (0..=n).map(|k| k as f64 / n as f64).collect();
    let values: Vec<f64> = times.iter().map(|t| (37.0 * t).sin() * 0.01 + (5.0 * t).cos() * 0.02).collect();
    let mut csv = String::from("time,u\n");
    for (t, v) in times.iter().zip(&values) {
        csv.push_str(&format!("{t:?},{v:?}\n"));
    }
    write(&dir, "u.csv", &csv);
    let list = |x: &[f64]| x.iter().map(|v| format!("{v:?}")).collect::<Vec<_>>().join(", ");
    let fmu = paths::fmu("oscillator-fd-m1");
    for interpolation in ["linear", "hold"] {
        let head = format!(
            "[simulation]\nstop = 1.0\nstep = 0.0009765625\n[instances.a]\nfmu = {:?}\n\
             [instances.b]\nfmu = {:?}\nstep = 0.0001220703125\n",
            fmu.to_str().unwrap(),
            fmu.to_str().unwrap()
        );
        let inline = format!(
            "{head}[[inputs]]\nto = \"a.xi\"\ntimes = [{}]\nvalues = [{}]\ninterpolation = {interpolation:?}\n\
             [[inputs]]\nto = \"b.xi\"\ntimes = [{}]\nvalues = [{}]\ninterpolation = {interpolation:?}\n",
            list(&times),
            list(&values),
            list(&times),
            list(&values)
        );
        let file = format!(
            "{head}[[inputs]]\nfile = \"u.csv\"\ncolumns = {{ \"a.xi\" = \"u\", \"b.xi\" = \"u\" }}\n\
             interpolation = {interpolation:?}\n"
        );
        let mut results = Vec::new();
        for (name, text) in [("inline", inline), ("file", file)] {
            let sys = write(&dir, &format!("{name}.toml"), &text);
            let out = dir.join(format!("out-{name}-{interpolation}"));
            let o = cosim(&["run", sys.to_str().unwrap(), "--out", out.to_str().unwrap()]);
            assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
            results.push(std::fs::read(out.join("results.csv")).unwrap());
        }
        assert!(results[0].len() > 1000);
        assert!(results[0] == results[1], "{interpolation}: the streamed file's results differ from the table's");
    }
}
