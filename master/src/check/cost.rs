//! Family 8, cost: wall time per `fmi2DoStep` over the experiment (at most 1000 steps; median and
//! max), and the resident memory over instantiate → initialize → terminate → free cycles (a
//! growth of more than 4 KiB per cycle and 1 MiB in total is a leak WARN).

use super::probe::{rss, Probe};
use super::Outcome;
use crate::fmu::FmuInstance;
use std::time::Instant;

/// Time per step and memory over [`super::Plan::cycles`] instantiate/free cycles.
pub fn cost(p: &mut Probe) -> Outcome {
    let steps = p.plan.steps.min(1000);
    let go = || -> Result<Outcome, String> {
        let mut s = p.instantiate("cost")?;
        p.init(&mut s)?;
        p.note(format_args!("{steps} fmi2DoStep calls, timed"));
        let mut times = Vec::with_capacity(steps as usize);
        for k in 0..steps {
            let t0 = Instant::now();
            let r = s.do_step(p.time(k), p.plan.step);
            times.push(t0.elapsed().as_secs_f64());
            if let Err(e) = r {
                if matches!(e, crate::MasterError::Terminated { .. }) {
                    break;
                }
                return Err(e.to_string());
            }
        }
        s.terminate().map_err(|e| e.to_string())?;
        drop(s);
        times.sort_by(f64::total_cmp);
        let median = times.get(times.len() / 2).copied().unwrap_or(0.0);
        let max = times.last().copied().unwrap_or(0.0);
        let cycles = p.plan.cycles;
        let cycle = || -> Result<(), String> {
            let mut s = p.fmu.instantiate("cycle").map_err(|e| e.to_string())?;
            p.init(&mut s)?;
            s.terminate().map_err(|e| e.to_string())
        };
        p.note(format_args!("{cycles} cycles of fmi2Instantiate … fmi2FreeInstance"));
        let warmup = cycles.min(20);
        for _ in 0..warmup {
            cycle()?;
        }
        let (m0, t0) = (rss().unwrap_or(0), Instant::now());
        for _ in 0..cycles {
            cycle()?;
        }
        let per_cycle = t0.elapsed().as_secs_f64() / cycles.max(1) as f64;
        let m1 = rss().unwrap_or(0);
        let growth = m1.saturating_sub(m0);
        let text = format!(
            "fmi2DoStep median {:.3e} s, max {:.3e} s over {} steps; {cycles} instantiate/initialize/free cycles \
             ({per_cycle:.2e} s each): resident memory {:.1} → {:.1} MiB",
            median,
            max,
            times.len(),
            m0 as f64 / 1048576.0,
            m1 as f64 / 1048576.0
        );
        if cycles > 0 && growth > (1 << 20) && growth / cycles > 4096 {
            return Ok(Outcome::warn(format!("{text}: grows {} bytes per cycle (a leak?)", growth / cycles)));
        }
        Ok(Outcome::pass(text))
    };
    go().unwrap_or_else(Outcome::fail)
}
