#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The master's hot loop makes no heap allocation per communication step in steady state
//! (counted with a global allocator; the FMUs' own allocations happen in their libraries).

use fmu_harness::paths;
use master::fmu::Fmu2;
use master::observer::{BondsCsv, Observer, ResultsCsv};
use master::system::{Draft, Overrides};
use master::Slave;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn steady_state_steps_do_not_allocate() {
    let text = std::fs::read_to_string(paths::root().join("scenarios/oscillator-fd.toml")).unwrap();
    let path = paths::root().join("scenarios/oscillator-fd.toml");
    for (algorithm, order, parallel) in
        [("jacobi", 0, false), ("jacobi", 2, false), ("gauss-seidel", 1, false), ("jacobi", 1, true)]
    {
        let draft = Draft::parse(&path, &text).unwrap();
        let fmus: Vec<_> = draft.fmus().into_iter().map(|(_, p)| Fmu2::load(&p).unwrap()).collect();
        let mds: Vec<_> = fmus.iter().map(|f| f.model_description()).collect();
        let over = Overrides {
            algorithm: master::system::AlgorithmKind::parse(algorithm),
            extrapolation: Some(order),
            parallel: Some(if parallel { master::system::Parallel::On } else { master::system::Parallel::Off }),
            ..Default::default()
        };
        let sys = draft.resolve(&mds, &over).unwrap();
        let mut slaves: Vec<Box<dyn Slave>> = sys
            .instances
            .iter()
            .zip(&fmus)
            .map(|(s, f)| Box::new(f.instantiate(&s.name).unwrap()) as Box<dyn Slave>)
            .collect();
        let mut engine = master::run::initialize(&sys, &mut slaves, &mds).unwrap();
        let mut values = Vec::with_capacity(16);
        // Both CSV files recorded every step, as `cosim run` does (the writer thread's chunks
        // have circulated after 3 × 128 rows).
        let dir = std::env::temp_dir().join(format!("cosim-zero-alloc-{}-{algorithm}-{order}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let labels: Vec<String> = sys.outputs.iter().map(|v| sys.label(v)).collect();
        let names: Vec<String> = sys.bonds.iter().map(|b| b.name.clone()).collect();
        let mut observers: Vec<Box<dyn Observer>> = vec![
            Box::new(ResultsCsv::create(&dir.join("results.csv"), &labels, 1).unwrap()),
            Box::new(BondsCsv::create(&dir.join("bonds.csv"), &names, 1).unwrap()),
        ];
        let mut step = |n: u64, slaves: &mut Vec<Box<dyn Slave>>| {
            engine.step(n, slaves).unwrap();
            engine.recorded(slaves, &mut values).unwrap();
            for o in &mut observers {
                o.step(n, (n + 1) as f64 * sys.step, &values, engine.bonds()).unwrap();
            }
        };
        for n in 0..2000 {
            step(n, &mut slaves);
        }
        let before = ALLOCS.load(Ordering::Relaxed);
        for n in 2000..5000 {
            step(n, &mut slaves);
        }
        let during = ALLOCS.load(Ordering::Relaxed) - before;
        assert_eq!(during, 0, "{algorithm}, order {order}: {during} allocations in 3000 steps");
        drop(observers);
        let rows = std::fs::read_to_string(dir.join("results.csv")).unwrap().lines().count();
        assert_eq!(rows, 5001, "header and 5000 rows, complete after the writer closed");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
