#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Issue 30 item 14: every packaged FMU survives load → instantiate → initialize → terminate →
//! free → unload cycles without leaking. Before, each cycle leaked the library's description
//! table (≈ 12–23 KB: a cdylib's statics are unmapped by `dlclose` without being dropped), and a
//! Python process running `cosim.simulate` 1000 times grew by ≈ 65 MB.
//!
//! The heap in use (glibc `mallinfo2`) after the cycles must equal the heap before to within a
//! few hundred bytes per cycle (the dynamic loader's own bookkeeping); `cargo xtask test` also runs
//! this binary under valgrind (no definite or indirect leak). One test in its own binary, so no
//! other test allocates meanwhile. `UNLOAD_CYCLES` sets the cycles per FMU (default 8),
//! `UNLOAD_FMUS` (comma-separated file stems) the FMUs (default: every packaged one).

use fmu_harness::{paths, Fmu};

#[repr(C)]
#[derive(Default)]
struct Mallinfo2 {
    arena: usize,
    ordblks: usize,
    smblks: usize,
    hblks: usize,
    hblkhd: usize,
    usmblks: usize,
    fsmblks: usize,
    uordblks: usize,
    fordblks: usize,
    keepcost: usize,
}

unsafe extern "C" {
    fn mallinfo2() -> Mallinfo2;
}

/// Bytes of heap in use (allocated chunks, including mmapped ones).
fn in_use() -> usize {
    // SAFETY: glibc's mallinfo2 has no preconditions.
    let m = unsafe { mallinfo2() };
    m.uordblks + m.hblkhd
}

fn cycle(path: &std::path::Path) {
    let fmu = Fmu::load(path).unwrap();
    {
        let mut inst = fmu.instantiate("leak").unwrap();
        inst.setup(0.0, Some(1.0));
        inst.enter_init();
        inst.exit_init();
        inst.terminate();
        inst.free();
    }
    fmu.unload();
}

#[test]
fn our_fmus_leak_nothing_over_load_unload_cycles() {
    if std::env::var_os("GLIBC_TUNABLES").is_none() {
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "our_fmus_leak_nothing_over_load_unload_cycles", "--nocapture", "--test-threads=1"])
            .env("GLIBC_TUNABLES", "glibc.malloc.tcache_count=0")
            .status()
            .unwrap();
        assert!(status.success(), "the test run with glibc's tcache off failed: {status}");
        return;
    }
    let cycles: usize = std::env::var("UNLOAD_CYCLES").ok().and_then(|c| c.parse().ok()).unwrap_or(8);
    let mut report = Vec::new();
    let only: Option<Vec<String>> =
        std::env::var("UNLOAD_FMUS").ok().map(|l| l.split(',').map(|s| format!("{}.fmu", s.trim())).collect());
    let fmus: Vec<_> = paths::all_fmus()
        .into_iter()
        .filter(|p| only.as_ref().is_none_or(|o| o.iter().any(|n| p.file_name().is_some_and(|f| f == n.as_str()))))
        .collect();
    assert!(!fmus.is_empty(), "no FMU selected by UNLOAD_FMUS");
    for path in &fmus {
        cycle(path); // first use: the harness's and the loader's lazily built state
    }
    for path in fmus {
        let before = in_use();
        for _ in 0..cycles {
            cycle(&path);
        }
        let grown = in_use().saturating_sub(before);
        report.push((path.file_name().unwrap().to_string_lossy().into_owned(), grown / cycles.max(1)));
    }
    eprintln!("heap growth per load/unload cycle (bytes): {report:?}");
    // Before the fix: 12 000 – 23 000 bytes per cycle.
    let worst = report.iter().max_by_key(|(_, b)| *b).unwrap();
    assert!(worst.1 < 256, "{} grows the heap by {} bytes per load/unload cycle", worst.0, worst.1);
}
