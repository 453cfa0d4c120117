#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! FMPy's Python API drives `multibody-crane.fmu` with an input table (F sampled every 1 ms):
//! at each communication point FMPy sets the sample (held over the step). The same sequence
//! through the Rust library gives the same s, ṡ, s̈, bit for bit. Then the same for the I1AL
//! solver, set as a start value through FMPy.

use fmu_export::{CoSimModel, Context};
use fmu_harness::paths;
use std::process::Command;

fn fmpy_run(solver: i32, dir: &std::path::Path, input: &std::path::Path) -> Vec<Vec<f64>> {
    let output = dir.join(format!("output-{solver}.csv"));
    let script = r#"
import sys, numpy as np
from fmpy import simulate_fmu
inp = np.genfromtxt(sys.argv[2], delimiter=',', names=True)
r = simulate_fmu(sys.argv[1], fmi_type='CoSimulation', stop_time=0.5, step_size=1e-3, output_interval=1e-3,
                 input=inp, start_values={'solver': int(sys.argv[4])}, output=['s', 's_dot', 's_ddot'])
with open(sys.argv[3], 'w') as f:
    for row in r:
        f.write('%r,%r,%r,%r\n' % (float(row['time']), float(row['s']), float(row['s_dot']), float(row['s_ddot'])))
"#;
    let out = Command::new(paths::python())
        .args(["-c", script])
        .arg(paths::fmu("multibody-crane"))
        .arg(input)
        .arg(&output)
        .arg(solver.to_string())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::read_to_string(&output)
        .unwrap()
        .lines()
        .map(|l| l.split(',').map(|x| x.parse().unwrap()).collect())
        .collect()
}

#[test]
fn fmpy_and_the_rust_library_give_identical_crane_motions() {
    let dir = std::env::temp_dir().join(format!("fmpy-crane-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (h, n) = (1e-3, 500usize);
    let t: Vec<f64> = (0..=n).map(|k| k as f64 * h).collect();
    let f: Vec<f64> = t.iter().map(|t| 8829.0 + 1500.0 * (2.0 * std::f64::consts::PI * 2.0 * t).sin()).collect();
    let input = dir.join("input.csv");
    let rows: Vec<String> = (0..=n).map(|k| format!("{:?},{:?}", t[k], f[k])).collect();
    std::fs::write(&input, format!("time,F\n{}\n", rows.join("\n"))).unwrap();
    for solver in [1, 2] {
        let fmpy_rows = fmpy_run(solver, &dir, &input);
        assert_eq!(fmpy_rows.len(), n + 1);

        let mut m = fmu_multibody::CraneFmu::default();
        m.solver = solver;
        // FMPy applies the first input row in initialization mode, before fmi2ExitInitializationMode.
        m.inputs[0].value = f[0];
        m.initialize(0.0, &mut Context::default()).unwrap();
        let kin = m.kinematics(0);
        let mut ours = vec![[0.0, kin.s, kin.s_dot, kin.s_ddot]];
        for k in 0..n {
            m.inputs[0].value = f[k];
            // FMPy's step is t_{k+1} − t_k with t_k = k·h (not exactly h).
            let step = t[k + 1] - t[k];
            m.do_step(t[k], step, &mut Context::default()).unwrap();
            m.inputs[0].end_step(step);
            let kin = m.kinematics(0);
            ours.push([t[k + 1], kin.s, kin.s_dot, kin.s_ddot]);
        }
        for (a, b) in fmpy_rows.iter().zip(&ours) {
            assert!((a[0] - b[0]).abs() < 1e-12, "time grid differs: {} vs {}", a[0], b[0]);
            for i in 1..4 {
                assert_eq!(
                    a[i].to_bits(),
                    b[i].to_bits(),
                    "solver {solver}, t = {}: column {i}: {} vs {}",
                    a[0],
                    a[i],
                    b[i]
                );
            }
        }
        // The motion is not trivial.
        let swing =
            ours.iter().map(|r| r[1]).fold(f64::MIN, f64::max) - ours.iter().map(|r| r[1]).fold(f64::MAX, f64::min);
        assert!(swing > 1e-3, "s swing {swing} m");
    }
    let _ = std::fs::remove_dir_all(dir);
}
