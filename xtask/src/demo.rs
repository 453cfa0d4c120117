//! `cargo xtask demo`: package the FMUs, then co-simulate the double oscillator of seed 001 §A.1
//! from the packaged `.fmu` files and compare with the analytical solution.

use anyhow::{Context, Result};
use fmu_harness::oscillator::{run_displacement_displacement, run_force_displacement, Scheme};
use fmu_harness::Fmu;

pub fn run() -> Result<()> {
    crate::package::fmus()?;
    let dir = crate::target_dir().join("fmu");
    let load = |name: &str| {
        let p = dir.join(format!("{name}.fmu"));
        Fmu::load(&p).with_context(|| format!("loading {}", p.display()))
    };
    let (fd1, fd2) = (load("oscillator-fd-m1")?, load("oscillator-fd-m2")?);
    let (dd1, dd2) = (load("oscillator-dd-m1")?, load("oscillator-dd-m2")?);
    println!("\nDouble oscillator (seed 001 A.1, damping case 2), 10 s, packaged FMUs driven through the C API.");
    println!("Max error of x1, x2 against the analytical solution e^(At) z0:\n");
    println!(
        "{:<26} {:>8} {:>6} {:>12} {:>12}",
        "coupling / scheme", "H [ms]", "extrap", "max|dx1| [m]", "max|dx2| [m]"
    );
    for h in [0.01, 0.005, 0.002, 0.001] {
        for order in [0, 1] {
            for (label, scheme) in
                [("force-displ. Jacobi", Scheme::Jacobi), ("force-displ. Gauss-Seidel", Scheme::GaussSeidel)]
            {
                let e = run_force_displacement(&fd1, &fd2, 2, h, 10.0, order, scheme)?;
                println!("{label:<26} {:>8} {order:>6} {:>12.3e} {:>12.3e}", h * 1e3, e.x1, e.x2);
            }
            let e = run_displacement_displacement(&dd1, &dd2, 2, h, 10.0, order)?;
            println!("{:<26} {:>8} {order:>6} {:>12.3e} {:>12.3e}", "displ.-displ. Jacobi", h * 1e3, e.x1, e.x2);
        }
    }
    println!(
        "\nFMUs are in {}; try: fmpy simulate {}/oscillator-fd-m2.fmu --interface-type CoSimulation",
        dir.display(),
        dir.display()
    );
    Ok(())
}
