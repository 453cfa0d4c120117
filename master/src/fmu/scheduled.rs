//! FMI 3.0 Scheduled Execution (issue 43 item 3) for an FMU that offers only it: the instance
//! (`fmi3InstantiateScheduledExecution`) is one participant of the run; its [`Call::DoStep`] from
//! t to t + h activates the model partition of each time-based input clock at every tick in
//! (t, t + h] with `fmi3ActivateModelPartition(clock, tick)`, in time order and, at the same
//! tick, by `priority` (the smaller first, FMI 3.0 §2.4.7.1); ticks at the start time are
//! activated after initialization. A clock ticks at `start + shiftDecimal + k intervalDecimal`
//! (k = 0, 1, …; computed from k, never accumulated); `constant` clocks take `intervalDecimal`
//! from the description, `fixed` and `tunable` clocks ask `fmi3GetIntervalDecimal` after
//! initialization (tunable ones again at every communication point). Other clocks (triggered,
//! changing, countdown, output clocks) are refused at load naming the clock.
//!
//! [`Call::DoStep`]: super::Call::DoStep

use super::instance3::Fmi3Instance;
use crate::error::Result;
use model_description::Fmi3;

/// The clock checks at load (a description error names the variable, its line and the value):
/// every `clocks` attribute names `<Clock>` variables; in Scheduled Execution (`scheduled`) every
/// clock is a time-based input clock cosim can activate.
pub(crate) fn check_clocks(x: &Fmi3, scheduled: bool) -> Result<(), String> {
    for (name, line, refs) in &x.clocked {
        for r in refs {
            if !x.clocks.iter().any(|c| c.vr == *r) {
                let shown =
                    if *r == u32::MAX { "a value that is not a value reference".to_owned() } else { r.to_string() };
                return Err(format!(
                    "variable \"{name}\" (line {line}): clocks names {shown}, which is no <Clock> variable of the FMU"
                ));
            }
        }
    }
    // Clocks in Co-Simulation (`clocks.rs`): any kind; the time-based input clocks' intervals
    // and shifts are checked as in Scheduled Execution.
    let cs = x.has_co_simulation && x.has_event_mode;
    if !scheduled && !cs {
        return Ok(());
    }
    for c in &x.clocks {
        let time_based = matches!(c.interval_variability.as_str(), "constant" | "fixed" | "tunable");
        if cs && !scheduled && !(c.input && time_based) {
            continue;
        }
        if !c.input || !time_based {
            return Err(format!(
                "clock \"{}\" (line {}): {} clock with intervalVariability=\"{}\": cosim's Scheduled Execution \
                 activates time-based input clocks (constant, fixed, tunable) only",
                c.name,
                c.line,
                if c.input { "an input" } else { "an output or local" },
                c.interval_variability
            ));
        }
        match (c.interval_counter, c.resolution) {
            (Some(n), Some(r)) if n == 0 || r == 0 => {
                return Err(format!(
                    "clock \"{}\" (line {}): intervalCounter=\"{n}\" / resolution=\"{r}\" is not a positive interval",
                    c.name, c.line
                ))
            }
            _ => {}
        }
        let fraction = c.interval_counter.is_some() && c.resolution.is_some();
        match c.interval_decimal {
            Some(i) if !(i.is_finite() && i > 0.0) => {
                return Err(format!(
                    "clock \"{}\" (line {}): intervalDecimal=\"{i}\" is not a positive interval",
                    c.name, c.line
                ))
            }
            None if c.interval_variability == "constant" && !fraction => {
                return Err(format!("clock \"{}\" (line {}): a constant clock without intervalDecimal", c.name, c.line))
            }
            _ => {}
        }
        if !c.shift_decimal.is_finite() || c.shift_decimal < 0.0 {
            return Err(format!(
                "clock \"{}\" (line {}): shiftDecimal=\"{}\" is not a time >= 0",
                c.name, c.line, c.shift_decimal
            ));
        }
    }
    Ok(())
}

/// The most partition activations in one communication step.
const MAX_TICKS_PER_STEP: usize = 10_000_000;

/// One clock as scheduled: value reference, interval, shift, priority, activations so far.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scheduled {
    vr: u32,
    interval: f64,
    shift: f64,
    priority: u32,
    tunable: bool,
    activations: u64,
}

/// The clocks of a Scheduled Execution instance (resolved after initialization).
#[derive(Debug, Clone, Default)]
pub(crate) struct Schedule {
    clocks: Vec<Scheduled>,
    start: f64,
}

impl Fmi3Instance {
    /// `fmi3GetIntervalDecimal` of `clock` named `name`: a positive interval or the error.
    fn interval_of(&mut self, vr: u32, name: &str) -> Result<f64> {
        const F: &str = "fmi3GetIntervalDecimal";
        self.present(F, self.raw.api().get_interval_decimal.is_some())?;
        let mut out = (0.0, 0);
        let s = self.call(|i| {
            let (status, interval, qualifier) = i.get_interval_decimal(vr);
            out = (interval, qualifier);
            status
        });
        self.check(|| F, s)?;
        if !(out.0.is_finite() && out.0 > 0.0) {
            return Err(self.refuse(F, format!("clock \"{name}\": interval {} is not a positive interval", out.0)));
        }
        Ok(out.0)
    }

    /// After `fmi3ExitInitializationMode`: the clocks' intervals, then the ticks at the start time.
    pub(super) fn start_scheduled(&mut self) -> Result<()> {
        let clocks = self.clocks().to_vec();
        let mut schedule = Schedule { clocks: Vec::with_capacity(clocks.len()), start: self.core.time };
        for c in &clocks {
            let interval = match (c.interval_decimal, c.interval_counter, c.resolution) {
                (Some(i), ..) if c.interval_variability == "constant" => i,
                (None, Some(n), Some(r)) if c.interval_variability == "constant" => n as f64 / r as f64,
                _ => self.interval_of(c.vr, &c.name)?,
            };
            schedule.clocks.push(Scheduled {
                vr: c.vr,
                interval,
                shift: c.shift_decimal,
                priority: c.priority.unwrap_or(u32::MAX),
                tunable: c.interval_variability == "tunable",
                activations: 0,
            });
        }
        self.schedule = schedule;
        let t = self.core.time;
        self.activate_ticks(|tick| tick == t)
    }

    /// The activation counts, to the log at `fmi3Terminate` (level info).
    pub(super) fn note_activations(&self) {
        let counts: Vec<String> =
            self.schedule.clocks.iter().map(|c| format!("clock {}: {}", c.vr, c.activations)).collect();
        self.raw.env().note(super::ffi::OK, &format!("model partitions activated: {}", counts.join(", ")));
    }

    /// `fmi3DoStep(t, h)` of a Scheduled Execution instance (module documentation).
    pub(super) fn step_scheduled(&mut self, t: f64, h: f64) -> Result<()> {
        let names: Vec<(u32, String)> = self.clocks().iter().map(|c| (c.vr, c.name.clone())).collect();
        for k in 0..self.schedule.clocks.len() {
            if self.schedule.clocks[k].tunable {
                let vr = self.schedule.clocks[k].vr;
                let name = names.iter().find(|(v, _)| *v == vr).map_or("", |(_, n)| n.as_str());
                self.schedule.clocks[k].interval = self.interval_of(vr, name)?;
            }
        }
        let end = t + h;
        self.core.steps += 1;
        self.activate_ticks(|tick| tick > t && tick <= end)?;
        self.core.time = end;
        self.last_time = end;
        Ok(())
    }

    /// Activates every tick for which `due` holds, in time order, then by priority.
    fn activate_ticks(&mut self, due: impl Fn(f64) -> bool) -> Result<()> {
        const F: &str = "fmi3ActivateModelPartition";
        let now = self.core.time;
        let start = self.schedule.start;
        // (tick, priority, index) of the due ticks: from k = the first tick not before `now`.
        let mut ticks: Vec<(f64, u32, usize)> = Vec::new();
        for (i, c) in self.schedule.clocks.iter().enumerate() {
            let first = ((now - start - c.shift) / c.interval).floor().max(0.0) as u64;
            for k in first.. {
                let tick = start + c.shift + k as f64 * c.interval;
                if due(tick) {
                    ticks.push((tick, c.priority, i));
                    if ticks.len() > MAX_TICKS_PER_STEP {
                        let why = format!(
                            "more than {MAX_TICKS_PER_STEP} clock ticks in one communication step (interval {} s)",
                            c.interval
                        );
                        return Err(self.refuse(F, why));
                    }
                } else if tick > now {
                    break;
                }
            }
        }
        // Ticks within a nanosecond are the same tick (k·0.1 and j·0.2 may differ in the last
        // bit): ordered by priority there.
        let same = |t: f64| (t * 1e9).round() as i64;
        ticks.sort_by(|a, b| same(a.0).cmp(&same(b.0)).then(a.1.cmp(&b.1)).then(a.0.total_cmp(&b.0)));
        self.present(F, self.raw.api().activate_model_partition.is_some())?;
        for (tick, _, i) in ticks {
            let vr = self.schedule.clocks[i].vr;
            self.core.time = tick;
            let s = self.call(|inst| inst.activate_model_partition(vr, tick));
            self.check(|| F, s)?;
            self.schedule.clocks[i].activations += 1;
        }
        self.core.time = now;
        Ok(())
    }
}
