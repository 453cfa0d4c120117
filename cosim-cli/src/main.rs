//! `cosim`: the co-simulation master's command line (the commands are [`cosim_cli::cli`], one
//! file each; `cosim --help` lists them).

use anyhow::Result;
use clap::Parser;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counts heap allocations (one relaxed atomic add each), for `cosim bench`.
struct CountingAllocator;
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl std::alloc::GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { std::alloc::System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: as above.
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { std::alloc::System.realloc(ptr, layout, size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

fn main() {
    // This binary serves `cosim worker` itself: `guard::host()` names it as the worker command
    // of isolated instances.
    let code = match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", error_chain(&e));
            // Interrupted before the run started (e.g. while an FMU was loading).
            cosim_cli::guard::signal().map_or(1, cosim_cli::guard::exit_code)
        }
    };
    // A normal end: the run guard's atexit handler must not take it for an FMU calling exit().
    cosim_cli::guard::disarm();
    std::process::exit(code);
}

/// The error and its causes as "a: b: c", each said once: a cause whose text its parent's
/// message already ends with (an OS error in `MasterError::Io`'s message and again as its
/// source) is left out, and so is the context "running x.toml" before a message that starts
/// with "x.toml: " or "x.toml:7:1: ".
fn error_chain(e: &anyhow::Error) -> String {
    // Bounded: a message quoting a million start values was 7.9 MB.
    let messages: Vec<String> = e.chain().map(|m| master::error::bounded(m.to_string())).collect();
    let mut out = String::new();
    for (i, m) in messages.iter().enumerate() {
        if out.ends_with(m.as_str()) {
            continue;
        }
        let file = m.strip_prefix("running ").unwrap_or_default();
        if messages.get(i + 1).is_some_and(|next| !file.is_empty() && next.starts_with(&format!("{file}:"))) {
            continue;
        }
        if !out.is_empty() {
            out += ": ";
        }
        out += m;
    }
    out
}

fn run() -> Result<i32> {
    cosim_cli::cli::run_command(cosim_cli::cli::Cli::parse().command, allocations)
}
