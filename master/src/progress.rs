//! A progress bar on a terminal: an observer of `cosim run`'s (a front end; the library core
//! does not attach it, see `master/tests/layers.rs`).

use crate::bonds::BondState;
use crate::error::Result;
use crate::observer::{Observer, Summary};
use std::io::IsTerminal;

/// A progress bar on stderr, only when stderr is a terminal.
pub struct Progress {
    total: u64,
    shown: u64,
    enabled: bool,
}

impl Progress {
    /// For `total` steps.
    pub fn new(total: u64) -> Self {
        Self { total: total.max(1), shown: u64::MAX, enabled: std::io::stderr().is_terminal() }
    }
}

impl Observer for Progress {
    fn step(&mut self, n: u64, t: f64, _v: &[f64], _b: &[BondState]) -> Result<()> {
        if !self.enabled {
            return Ok(());
        }
        let pct = (n + 1) * 100 / self.total;
        if pct != self.shown {
            self.shown = pct;
            let bar = "#".repeat((pct / 4) as usize);
            eprint!("\r[{bar:<25}] {pct:>3}%  t = {t:.4}");
        }
        Ok(())
    }
    fn finish(&mut self, _s: &Summary) -> Result<()> {
        if self.enabled {
            eprintln!();
        }
        Ok(())
    }
}
