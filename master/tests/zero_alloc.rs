#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The master's hot loop makes no heap allocation per communication step in steady state
//! (counted with a global allocator; the FMUs' own allocations happen in their libraries).

use fmu_harness::paths;
use master::fmu::FmuCache;
use master::observer::{BondsCsv, ResultsCsv};
use master::system::{AlgorithmKind, Overrides, Parallel, Settings, SystemBuilder};
use master::Execution;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The allocations of this thread only (the test harness's own thread reports finished
    /// tests meanwhile, which the process-wide count would take for the integrator's).
    static MINE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn count() {
    ALLOCS.fetch_add(1, Ordering::Relaxed);
    let _ = MINE.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[path = "cfmu3/build.rs"]
mod cfmu3_build;

/// One test at a time: the count is global to the process.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Steps `run` 2000 times (warm-up), then counts the allocations of the next 3000 steps.
fn allocations_in_steps(run: &mut Execution) -> u64 {
    for _ in 0..2000 {
        run.step().unwrap();
    }
    let before = ALLOCS.load(Ordering::Relaxed);
    for _ in 2000..5000 {
        run.step().unwrap();
    }
    ALLOCS.load(Ordering::Relaxed) - before
}

#[test]
fn steady_state_steps_do_not_allocate() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let path = paths::root().join("scenarios/oscillator-fd.toml");
    let builder = SystemBuilder::read(&path).unwrap();
    let mut fmus = FmuCache::default();
    for (algorithm, order, parallel) in [
        (AlgorithmKind::Jacobi, 0, false),
        (AlgorithmKind::Jacobi, 2, false),
        (AlgorithmKind::GaussSeidel, 1, false),
        (AlgorithmKind::Jacobi, 1, true),
    ] {
        let over = Overrides {
            settings: Settings {
                algorithm: Some(algorithm),
                parallel: Some(if parallel { Parallel::On } else { Parallel::Off }),
                ..Default::default()
            },
            extrapolation: Some(order),
            ..Default::default()
        };
        let sys = builder.load_with(&mut fmus, &over).unwrap();
        // Both CSV files recorded every step, as `cosim run` does (the writer thread's chunks
        // have circulated after 3 × 128 rows).
        let dir = std::env::temp_dir().join(format!("cosim-zero-alloc-{}-{algorithm:?}-{order}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let labels: Vec<String> = sys.outputs().iter().map(|v| sys.label(v)).collect();
        let names: Vec<String> = sys.bonds().iter().map(|b| b.name.clone()).collect();
        let mut run = Execution::new(sys, &fmus).unwrap();
        run.observe(Box::new(ResultsCsv::create(&dir.join("results.csv"), &labels, 1).unwrap()));
        run.observe(Box::new(BondsCsv::create(&dir.join("bonds.csv"), &names, 1).unwrap()));
        let during = allocations_in_steps(&mut run);
        assert_eq!(during, 0, "{algorithm:?}, order {order}: {during} allocations in 3000 steps");
        run.finish().unwrap();
        let rows = std::fs::read_to_string(dir.join("results.csv")).unwrap().lines().count();
        assert_eq!(rows, 5002, "header, start and 5000 rows, complete after the writer closed");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn paced_steps_with_live_inputs_and_outputs_do_not_allocate() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // The operator scenario (crane-pub3, [live]) paced at 10× real time with timing.csv, its
    // live input set and released between steps and its rows published to the live ring.
    let path = paths::root().join("scenarios/crane-pub3-operator.toml");
    let builder = SystemBuilder::read(&path).unwrap();
    let mut fmus = FmuCache::default();
    let over = Overrides::settings(Settings { real_time: Some(10.0), ..Default::default() });
    let mut run = Execution::from_builder(&builder, &over, &mut fmus).unwrap();
    let dir = std::env::temp_dir().join(format!("cosim-zero-alloc-rt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    run.pacer_mut().expect("real_time paces the run").set_timing_csv(dir.join("timing.csv"));
    let declared = master::live::Declared::of(&run);
    let (hub, live_in, live_out) =
        master::live::connect(run.system(), builder.live.as_ref().unwrap(), &declared).unwrap();
    run.live_inputs(Box::new(live_in));
    run.observe(Box::new(live_out));
    let drive = |k: u32| match k % 300 {
        0 => hub.release("hyd.U_ref").unwrap(),
        k if k % 100 == 0 => {
            hub.set("hyd.U_ref", f64::from(k) / 50.0).unwrap();
        }
        _ => {}
    };
    for k in 0..2000 {
        drive(k);
        run.step().unwrap();
    }
    let before = ALLOCS.load(Ordering::Relaxed);
    for k in 2000..5000 {
        drive(k);
        run.step().unwrap();
    }
    let during = ALLOCS.load(Ordering::Relaxed) - before;
    assert_eq!(during, 0, "{during} allocations in 3000 paced steps");
    assert_eq!(hub.latest().0, 5001, "every row published");
    let s = run.finish().unwrap();
    assert_eq!(s.real_time.unwrap().steps, 5000);
    let rows = std::fs::read_to_string(dir.join("timing.csv")).unwrap().lines().count();
    assert_eq!(rows, 5001, "header and every step");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn binary_and_int64_connections_and_exact_columns_do_not_allocate_per_step() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = std::env::temp_dir().join(format!("cosim-zero-alloc-binary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fmu = cfmu3_build::build(&dir, "cfmu3", &[]);
    let toml = dir.join("system.toml");
    let text = format!(
        "[simulation]\nstop = 1000.0\nstep = 0.1\n\n[instances.a]\nfmu = \"{f}\"\nstart = {{ bin_in = \"0a0b0c0d\", big_in = 5000000000 }}\n\n\
         [instances.b]\nfmu = \"{f}\"\n\n[[connections]]\nfrom = \"a.bin_out\"\nto = \"b.bin_in\"\n\n\
         [[connections]]\nfrom = \"a.big_echo\"\nto = \"b.big_in\"\n\n\
         [outputs]\nvariables = [\"a.x\", \"a.bin_out\", \"b.bin_out\", \"b.big_echo\", \"a.huge\"]\n",
        f = fmu.display()
    );
    std::fs::write(&toml, text).unwrap();
    let mut fmus = FmuCache::default();
    let sys = SystemBuilder::read(&toml).unwrap().load_with(&mut fmus, &Overrides::default()).unwrap();
    let labels: Vec<String> = sys.outputs().iter().map(|v| sys.label(v)).collect();
    let mut run = Execution::new(sys, &fmus).unwrap();
    let csv = dir.join("results.csv");
    run.observe(Box::new(ResultsCsv::with_exact(&csv, &labels, 1, &[1, 2, 3, 4]).unwrap()));
    let during = allocations_in_steps(&mut run);
    assert_eq!(during, 0, "{during} allocations in 3000 steps with Binary and Int64 connections and exact columns");
    run.finish().unwrap();
    // The bytes went through: after 5000 steps the count byte is 5000 mod 256 = 0x88; b's input is
    // a's output of the row's time (exchanged before the row, issue 47), b.bin_out its reverse.
    let last = std::fs::read_to_string(&csv).unwrap().lines().last().unwrap().to_owned();
    assert!(last.ends_with(",0d0c0b0a88,880a0b0c0d88,5000000000.0,9223372036854775809"), "{last}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn steps_driven_by_a_streamed_input_file_do_not_allocate() {
    // Issue 44: a file's rows are read during the run into a window reused for the whole run
    // (rows parsed into fixed buffers, dropped rows shifted out in place): 4 rows a step, jumps
    // (repeated times), an interpolating FMU (the chord) at own sub-steps.
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = std::env::temp_dir().join(format!("cosim-zero-alloc-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut csv = String::from("time,u,v\n");
    for k in 0..24_000 {
        let t = k as f64 * 2.5e-4;
        csv.push_str(&format!("{t:?},{:?},{:?}\n", (t * 3.0).sin() * 0.01, k % 3));
        if k % 100 == 50 {
            csv.push_str(&format!("{t:?},0.02,1\n"));
        }
    }
    std::fs::write(dir.join("u.csv"), csv).unwrap();
    let toml = dir.join("system.toml");
    let text = format!(
        "[simulation]\nstop = 6.0\nstep = 1e-3\n\n[instances.a]\nfmu = \"{f}\"\nstep = 2.5e-4\n\n\
         [[inputs]]\nfile = \"u.csv\"\ncolumns = {{ \"a.xi\" = \"u\", \"a.xi_dot\" = \"v\" }}\n",
        f = paths::fmu("oscillator-fd-m1").display()
    );
    std::fs::write(&toml, text).unwrap();
    let mut fmus = FmuCache::default();
    let sys = SystemBuilder::read(&toml).unwrap().load_with(&mut fmus, &Overrides::default()).unwrap();
    let labels: Vec<String> = sys.outputs().iter().map(|v| sys.label(v)).collect();
    let mut run = Execution::new(sys, &fmus).unwrap();
    run.observe(Box::new(ResultsCsv::create(&dir.join("results.csv"), &labels, 1).unwrap()));
    let during = allocations_in_steps(&mut run);
    assert_eq!(during, 0, "{during} allocations in 3000 steps driven by a streamed input file");
    run.finish().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ode_integrator_steps_do_not_allocate() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    use master::ode::{integrator, Method, OdeError, OdeProblem, Options};
    /// Van der Pol, μ = 10, with a root function that never changes sign.
    struct Vdp;
    impl OdeProblem for Vdp {
        fn dim(&self) -> usize {
            2
        }
        fn n_roots(&self) -> usize {
            1
        }
        fn rhs(&mut self, _: f64, y: &[f64], dy: &mut [f64]) -> Result<(), OdeError> {
            dy[0] = y[1];
            dy[1] = 10.0 * (1.0 - y[0] * y[0]) * y[1] - y[0];
            Ok(())
        }
        fn roots(&mut self, _: f64, y: &[f64], g: &mut [f64]) -> Result<(), OdeError> {
            g[0] = 10.0 + y[0];
            Ok(())
        }
    }
    for method in [Method::Bdf, Method::Rk4, Method::Euler] {
        let opts = Options { method, fixed_step: 1e-3, ..Options::default() };
        let mut it = integrator(2, 1, &opts).unwrap();
        let mut p = Vdp;
        it.reset(&mut p, 0.0, &[2.0, 0.0]).unwrap();
        // Communication points every 0.01 s: steps clamped onto them, then the wanted step back.
        let mut stop = 0.0;
        let mut advance = |it: &mut Box<dyn master::ode::Integrator>, steps: u32| {
            for _ in 0..steps {
                if it.time() >= stop {
                    stop += 0.01;
                }
                it.step(&mut p, stop).unwrap();
            }
        };
        advance(&mut it, 500);
        // The integrator runs on this thread: its allocations are this thread's.
        let before = MINE.with(std::cell::Cell::get);
        advance(&mut it, 3000);
        let during = MINE.with(std::cell::Cell::get) - before;
        assert_eq!(during, 0, "{method:?}: {during} allocations in 3000 steps ({:?})", it.stats());
        assert!(it.stats().steps > 1000);
    }
}

#[test]
fn model_exchange_steps_and_rhs_evaluations_do_not_allocate() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    // The crane as two ME FMUs strongly coupled (one ODE) and weakly coupled (inputs set at every
    // communication point: each BDF lands on each), and the crane mechanism alone (no inputs set:
    // the BDF steps past the communication points and interpolates), each with BDF and RK4.
    let dir = std::env::temp_dir().join(format!("cosim-zero-alloc-me-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let alone = dir.join("alone.toml");
    let fmu = paths::root().join("target/fmu/multibody-crane-me.fmu");
    std::fs::write(
        &alone,
        format!(
            "[simulation]\nstop = 100.0\nstep = 1e-3\ninterface = \"me\"\n\n[instances.mech]\nfmu = \"{}\"\nstart = {{ F = 9000.0 }}\n",
            fmu.display()
        ),
    )
    .unwrap();
    let scenarios = paths::root().join("scenarios");
    for path in [scenarios.join("crane-pub3-me.toml"), scenarios.join("crane-pub3-me-weak.toml"), alone] {
        let builder = SystemBuilder::read(&path).unwrap();
        for solver in ["bdf", "rk4"] {
            let mut settings = Settings::default();
            settings.set("solver", solver.into()).unwrap();
            settings.set("relative_tolerance", 1e-6.into()).unwrap();
            settings.set("parallel", "off".into()).unwrap();
            let mut fmus = FmuCache::default();
            let mut run = Execution::from_builder(&builder, &Overrides::settings(settings), &mut fmus).unwrap();
            let during = allocations_in_steps(&mut run);
            assert_eq!(during, 0, "{} with {solver}: {during} allocations in 3000 steps", path.display());
            run.finish().unwrap();
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
