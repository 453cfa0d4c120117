//! FMI 3.0 clocks in Co-Simulation (issue 43, FMI 3.0 §2.2.9 and §4.2): what an [`Fmi3Instance`]
//! of an FMU with `<Clock>` variables and `hasEventMode` does besides event mode (`events.rs`).
//!
//! - **Time-based input clocks** (`intervalVariability` constant, fixed, tunable): the master
//!   activates them at their ticks `start + shift + k · interval` (k = 0, 1, …; from k, never
//!   accumulated). The interval of a constant clock is its `intervalDecimal`; fixed and tunable
//!   clocks are asked with `fmi3GetIntervalDecimal` (and `fmi3GetShiftDecimal` where the binary
//!   exports it; `fmi3GetIntervalFraction` and `fmi3GetShiftFraction` for a clock that
//!   `supportsFraction`, and a constant clock's `intervalCounter` / `resolution` is used as such:
//!   the ticks are then base + (k · counter) / resolution, exact up to one rounding) in the event mode after initialization, tunable ones again after every event
//!   (a changed interval counts from the clock's last tick). A tick inside a communication step
//!   cuts the step there (as a `nextEventTime` does): `fmi3DoStep` to the tick, event mode,
//!   `fmi3SetClock`, the event iteration, step mode, then on to the step's end.
//! - **Aperiodic input clocks** (countdown, changing): after every event the master asks
//!   `fmi3GetIntervalDecimal`; when the FMU answers `fmi3IntervalChanged` the clock ticks that
//!   interval later (activated like a time-based tick). An interval that is not positive and
//!   finite (a countdown that would fire at once forever, or never) is an error naming the
//!   function and the clock.
//! - **Triggered input clocks** are activated from a connected output clock (a clock connection
//!   of the system file or SSP): `fmi3SetClock(true)` by the master between steps (a
//!   [`Call::SetClock`]) marks the clock; the instance activates it in event mode at the start
//!   of its next step, i.e. at the communication point after the step in which the output
//!   clock ticked (at the same time when that tick lies on the communication point).
//! - **Output clocks**: `fmi3GetClock` after every event iteration; a tick is kept until the
//!   master reads it with [`Call::GetClock`] (the connection's copy at the next communication
//!   point), and counted.
//! - **Clocked variables** are set and read only while one of their clocks is active: a value
//!   the master sets on a clocked input is kept and set in event mode when its clock is
//!   activated; a clocked output is read in event mode whenever its clock was active, and the
//!   master's reads answer that value (its start value before the first activation; read
//!   through once when it has none).
//!
//! `fmi3Terminate` logs the activations per clock (level info); an aperiodic clock that never
//! fired is a warning naming it.

use super::call::Call;
use super::ffi::{OK, WARNING};
use super::instance3::Fmi3Instance;
use super::value::Value;
use super::FmuInstance;
use crate::error::Result;
use std::collections::HashMap;

/// An interval as (counter, resolution): counter / resolution s.
type Fraction = (u64, u64);

/// How a clock is activated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// constant, fixed, tunable: at `base + k · interval`.
    Periodic { tunable: bool, asked: bool },
    /// countdown, changing: at the time the FMU gives with `fmi3IntervalChanged`.
    Aperiodic,
    /// triggered (or an output clock of any kind).
    Triggered,
}

/// One clock as run.
#[derive(Debug, Clone)]
struct Run {
    vr: u32,
    name: String,
    input: bool,
    kind: Kind,
    interval: f64,
    /// The interval as intervalCounter / resolution, when the FMU gives it so: the ticks are
    /// base + (k · counter) / resolution, exact up to one rounding.
    frac: Option<Fraction>,
    /// `supportsFraction`: fixed and tunable intervals are asked with `fmi3GetIntervalFraction`.
    fraction: bool,
    base: f64,
    k: u64,
    /// The next time the master activates it (time-based and aperiodic input clocks).
    next: Option<f64>,
    /// The time of its last activation.
    last: Option<f64>,
    /// Triggered input: activation asked for by a connection.
    pending: bool,
    /// Output: ticked since the master last read it.
    ticked: bool,
    activations: u64,
}

impl Run {
    /// Its k-th tick from `base`.
    fn tick(&self, k: u64) -> f64 {
        match self.frac {
            Some((n, r)) => self.base + (u128::from(k) * u128::from(n)) as f64 / r as f64,
            None => self.base + k as f64 * self.interval,
        }
    }
}

/// One clocked variable: its clocks, whether an input, the value the master sees.
#[derive(Debug, Clone)]
struct Clocked {
    clocks: Vec<u32>,
    input: bool,
    value: Option<Value>,
    pending: bool,
}

/// The clocks of an instance (empty for an FMU without clocks in Co-Simulation).
#[derive(Debug, Clone, Default)]
pub(crate) struct ClockSet {
    runs: Vec<Run>,
    vars: HashMap<u32, Clocked>,
    /// The clocks active at the current event.
    active: Vec<u32>,
    /// Calls that go to the FMU as they are (the instance's own reads and writes in event mode,
    /// every call before initialization ends: start values are set as usual).
    pub(super) bypass: bool,
}

/// Two times within this (relative, at least 1 ns) are the same tick.
pub(super) fn close(t: f64) -> f64 {
    1e-9 * t.abs().max(1.0)
}

/// The most `fmi3GetIntervalDecimal` qualifiers: `fmi3IntervalChanged`.
const INTERVAL_CHANGED: i32 = 2;

impl ClockSet {
    pub(crate) fn new(types: &super::instance3::Types3) -> Self {
        if !types.cs_clocks {
            return Self::default();
        }
        let runs = types
            .clocks
            .iter()
            .map(|c| Run {
                vr: c.vr,
                name: c.name.clone(),
                input: c.input,
                kind: match c.interval_variability.as_str() {
                    _ if !c.input => Kind::Triggered,
                    "constant" => Kind::Periodic { tunable: false, asked: false },
                    "fixed" => Kind::Periodic { tunable: false, asked: true },
                    "tunable" => Kind::Periodic { tunable: true, asked: true },
                    "countdown" | "changing" => Kind::Aperiodic,
                    _ => Kind::Triggered,
                },
                interval: c.interval_decimal.unwrap_or(f64::NAN),
                frac: match (c.interval_counter, c.resolution) {
                    (Some(n), Some(r)) if c.interval_variability == "constant" && n > 0 && r > 0 => Some((n, r)),
                    _ => None,
                },
                fraction: c.supports_fraction,
                base: match c.resolution {
                    Some(r) if r > 0 && c.shift_counter > 0 => c.shift_counter as f64 / r as f64,
                    _ => c.shift_decimal,
                },
                k: 0,
                next: None,
                last: None,
                pending: false,
                ticked: false,
                activations: 0,
            })
            .collect();
        let vars = types
            .clocked
            .iter()
            .map(|(vr, clocks, input, start)| {
                (*vr, Clocked { clocks: clocks.clone(), input: *input, value: start.clone(), pending: false })
            })
            .collect();
        Self { runs, vars, active: Vec::new(), bypass: true }
    }

    /// The first time after `now` the master activates an input clock.
    pub(super) fn next_tick(&self, now: f64) -> Option<f64> {
        self.runs.iter().filter_map(|r| r.next).filter(|t| *t > now + close(now)).min_by(f64::total_cmp)
    }

    /// Whether an input clock is due at `t` (a tick up to `t`, or a triggered activation asked for).
    pub(super) fn due(&self, t: f64) -> bool {
        self.runs.iter().any(|r| r.pending || r.next.is_some_and(|n| n <= t + close(t)))
    }

    fn run(&self, vr: u32) -> Option<usize> {
        self.runs.iter().position(|r| r.vr == vr)
    }
}

impl Fmi3Instance {
    /// A call the master makes, bypassing the clocked-variable rules.
    fn through(&mut self, call: Call<'_>) -> Result<()> {
        let before = std::mem::replace(&mut self.clockset.bypass, true);
        let r = self.execute(call);
        self.clockset.bypass = before;
        r
    }

    /// The interval of periodic clock `k` from the FMU: `fmi3GetIntervalFraction` where the clock
    /// `supportsFraction` and the binary exports it, else `fmi3GetIntervalDecimal`; (interval,
    /// fraction, qualifier), the interval checked.
    fn ask_periodic(&mut self, k: usize) -> Result<(f64, Option<Fraction>, i32)> {
        const F: &str = "fmi3GetIntervalFraction";
        if !(self.clockset.runs[k].fraction && self.raw.api().get_interval_fraction.is_some()) {
            let (interval, qualifier) = self.ask_interval(k)?;
            return Ok((interval, None, qualifier));
        }
        let vr = self.clockset.runs[k].vr;
        let mut out = (0, 0, 0);
        let s = self.call(|i| {
            let (status, n, r, q) = i.get_interval_fraction(vr);
            out = (n, r, q);
            status
        });
        self.check(|| F, s)?;
        let (n, r, q) = out;
        if q == INTERVAL_CHANGED && (n == 0 || r == 0) {
            let name = self.clockset.runs[k].name.clone();
            let why = format!("clock \"{name}\": interval {n} / {r} is not a positive interval");
            return Err(self.refuse(F, why));
        }
        Ok((n as f64 / r.max(1) as f64, Some((n, r.max(1))), q))
    }

    /// `fmi3GetIntervalDecimal` of clock `k`: (interval, qualifier).
    fn ask_interval(&mut self, k: usize) -> Result<(f64, i32)> {
        const F: &str = "fmi3GetIntervalDecimal";
        self.present(F, self.raw.api().get_interval_decimal.is_some())?;
        let vr = self.clockset.runs[k].vr;
        let mut out = (0.0, 0);
        let s = self.call(|i| {
            let (status, interval, qualifier) = i.get_interval_decimal(vr);
            out = (interval, qualifier);
            status
        });
        self.check(|| F, s)?;
        Ok(out)
    }

    /// An interval the FMU gave that is no interval: the error naming the clock.
    fn bad_interval(&self, k: usize, interval: f64) -> crate::error::MasterError {
        let r = &self.clockset.runs[k];
        let why = if interval.is_infinite() {
            format!("clock \"{}\": interval {interval}: a clock that never fires", r.name)
        } else {
            format!("clock \"{}\": interval {interval} is not a positive interval", r.name)
        };
        self.refuse("fmi3GetIntervalDecimal", why)
    }

    /// After initialization (in event mode): the time-based clocks' intervals and shifts, their
    /// first ticks.
    fn clocks_start(&mut self, start: f64) -> Result<()> {
        for k in 0..self.clockset.runs.len() {
            let Kind::Periodic { asked, .. } = self.clockset.runs[k].kind else { continue };
            if asked {
                let (interval, frac, _) = self.ask_periodic(k)?;
                if !(interval.is_finite() && interval > 0.0) {
                    return Err(self.bad_interval(k, interval));
                }
                self.clockset.runs[k].interval = interval;
                self.clockset.runs[k].frac = frac;
                if frac.is_some() && self.raw.api().get_shift_fraction.is_some() {
                    let vr = self.clockset.runs[k].vr;
                    let mut shift = (0, 0);
                    let s = self.call(|i| {
                        let (status, n, r) = i.get_shift_fraction(vr);
                        shift = (n, r);
                        status
                    });
                    self.check(|| "fmi3GetShiftFraction", s)?;
                    self.clockset.runs[k].base = shift.0 as f64 / shift.1.max(1) as f64;
                } else if self.raw.api().get_shift_decimal.is_some() {
                    let vr = self.clockset.runs[k].vr;
                    let mut shift = 0.0;
                    let s = self.call(|i| {
                        let (status, s) = i.get_shift_decimal(vr);
                        shift = s;
                        status
                    });
                    self.check(|| "fmi3GetShiftDecimal", s)?;
                    if !(shift.is_finite() && shift >= 0.0) {
                        let name = self.clockset.runs[k].name.clone();
                        let why = format!("clock \"{name}\": shift {shift} is not a time >= 0");
                        return Err(self.refuse("fmi3GetShiftDecimal", why));
                    }
                    self.clockset.runs[k].base = shift;
                }
            }
            let r = &mut self.clockset.runs[k];
            r.base += start;
            r.next = Some(r.base);
        }
        Ok(())
    }

    /// In event mode at `time`, before `fmi3UpdateDiscreteStates`: `fmi3SetClock` of the input
    /// clocks due, then the values kept for their clocked inputs.
    pub(super) fn clocks_before_update(&mut self, time: f64, after_initialization: bool) -> Result<()> {
        if after_initialization {
            self.clocks_start(time)?;
            // From now on clocked variables follow their clocks.
            self.clockset.bypass = false;
        }
        let mut active = std::mem::take(&mut self.clockset.active);
        active.clear();
        for r in &mut self.clockset.runs {
            let due = r.pending || r.next.is_some_and(|n| n <= time + close(time));
            if !(r.input && due) {
                continue;
            }
            r.pending = false;
            r.activations += 1;
            r.last = Some(time);
            match r.kind {
                Kind::Periodic { .. } => {
                    r.k += 1;
                    r.next = Some(r.tick(r.k));
                }
                Kind::Aperiodic => r.next = None,
                Kind::Triggered => {}
            }
            active.push(r.vr);
        }
        if !active.is_empty() {
            self.present("fmi3SetClock", self.raw.api().set_clock.is_some())?;
            let on = vec![true; active.len()];
            let s = self.call(|i| i.set_clock(&active, &on));
            self.check(|| "fmi3SetClock", s)?;
            let inputs: Vec<u32> = self
                .clockset
                .vars
                .iter()
                .filter(|(_, v)| v.input && v.pending && v.clocks.iter().any(|c| active.contains(c)))
                .map(|(vr, _)| *vr)
                .collect();
            for vr in inputs {
                let value = self.clockset.vars.get_mut(&vr).and_then(|v| {
                    v.pending = false;
                    v.value.clone()
                });
                if let Some(value) = value {
                    let before = std::mem::replace(&mut self.clockset.bypass, true);
                    let r = value.write(self, vr);
                    self.clockset.bypass = before;
                    r?;
                }
            }
        }
        self.clockset.active = active;
        Ok(())
    }

    /// In event mode at `time`, after the event iteration: `fmi3GetClock` of the output clocks,
    /// the clocked outputs of the active clocks, the aperiodic and tunable clocks' intervals.
    pub(super) fn clocks_after_update(&mut self, time: f64) -> Result<()> {
        let outputs: Vec<u32> = self.clockset.runs.iter().filter(|r| !r.input).map(|r| r.vr).collect();
        let mut active = std::mem::take(&mut self.clockset.active);
        if !outputs.is_empty() {
            self.present("fmi3GetClock", self.raw.api().get_clock.is_some())?;
            let mut ticks = vec![false; outputs.len()];
            let s = self.call(|i| i.get_clock(&outputs, &mut ticks));
            self.check(|| "fmi3GetClock", s)?;
            for (vr, tick) in outputs.iter().zip(ticks) {
                if let (true, Some(k)) = (tick, self.clockset.run(*vr)) {
                    let r = &mut self.clockset.runs[k];
                    r.ticked = true;
                    r.activations += 1;
                    r.last = Some(time);
                    active.push(*vr);
                }
            }
        }
        let outputs: Vec<u32> = self
            .clockset
            .vars
            .iter()
            .filter(|(_, v)| !v.input && v.clocks.iter().any(|c| active.contains(c)))
            .map(|(vr, _)| *vr)
            .collect();
        for vr in outputs {
            let Some(mut value) = self.value_type(vr).map(|t| Value::zero(t.carrier())) else { continue };
            let before = std::mem::replace(&mut self.clockset.bypass, true);
            let r = value.read(self, vr);
            self.clockset.bypass = before;
            r?;
            if let Some(v) = self.clockset.vars.get_mut(&vr) {
                v.value = Some(value);
            }
        }
        active.clear();
        self.clockset.active = active;
        for k in 0..self.clockset.runs.len() {
            let r = &self.clockset.runs[k];
            let tunable = matches!(r.kind, Kind::Periodic { tunable: true, .. });
            if !r.input || !(tunable || r.kind == Kind::Aperiodic) {
                continue;
            }
            let (interval, frac, qualifier) =
                if tunable { self.ask_periodic(k)? } else { self.ask_interval(k).map(|(i, q)| (i, None, q))? };
            if qualifier != INTERVAL_CHANGED {
                continue;
            }
            if !(interval.is_finite() && interval > 0.0) {
                return Err(self.bad_interval(k, interval));
            }
            let r = &mut self.clockset.runs[k];
            if tunable {
                r.interval = interval;
                r.frac = frac;
                r.base = r.last.unwrap_or(r.base);
                r.k = 1;
                r.next = Some(r.tick(1));
            } else {
                r.next = Some(time + interval);
            }
        }
        Ok(())
    }

    /// The activations per clock, to the log at `fmi3Terminate` (level info); an aperiodic clock
    /// that never fired, a warning.
    pub(super) fn note_clock_counts(&mut self) {
        let counts: Vec<String> = self.clockset.runs.iter().map(|r| format!("{} {}", r.name, r.activations)).collect();
        self.raw.env().note(OK, &format!("clock activations: {}", counts.join(", ")));
        let silent: Vec<String> = self
            .clockset
            .runs
            .iter()
            .filter(|r| r.kind == Kind::Aperiodic && r.input && r.activations == 0)
            .map(|r| format!("\"{}\"", r.name))
            .collect();
        if !silent.is_empty() {
            self.core.warnings += 1;
            self.raw.env().note(
                WARNING,
                &format!(
                    "clock {}: a countdown clock that never fired (fmi3GetIntervalDecimal never answered \
                     fmi3IntervalChanged)",
                    silent.join(", ")
                ),
            );
        }
    }

    /// The master's [`Call::GetClock`] and [`Call::SetClock`], and its reads and writes of
    /// clocked variables (module documentation); `None`: the call goes to the FMU as it is.
    pub(super) fn clocked_call(&mut self, call: &mut Call<'_>) -> Option<Result<()>> {
        macro_rules! per_value {
            ($vr:expr, $out:expr, $variant:ident, $carrier:ident) => {{
                if !$vr.iter().any(|r| self.clockset.vars.contains_key(r)) {
                    return None;
                }
                for (r, o) in $vr.iter().zip($out.iter_mut()) {
                    let cached = self.clockset.vars.get(r).map(|v| v.value.clone());
                    let res = match cached {
                        Some(Some(Value::$carrier(x))) => {
                            *o = x;
                            Ok(())
                        }
                        Some(_) => self
                            .through(Call::$variant { vr: std::slice::from_ref(r), out: std::slice::from_mut(o) })
                            .map(|()| {
                                if let Some(v) = self.clockset.vars.get_mut(r) {
                                    v.value = Some(Value::$carrier(*o));
                                }
                            }),
                        None => {
                            self.through(Call::$variant { vr: std::slice::from_ref(r), out: std::slice::from_mut(o) })
                        }
                    };
                    if let Err(e) = res {
                        return Some(Err(e));
                    }
                }
                Some(Ok(()))
            }};
        }
        macro_rules! set_value {
            ($vr:expr, $values:expr, $variant:ident, $carrier:ident) => {{
                if !$vr.iter().any(|r| self.clockset.vars.contains_key(r)) {
                    return None;
                }
                for (r, x) in $vr.iter().zip($values.iter()) {
                    let res = match self.clockset.vars.get_mut(r) {
                        Some(v) => {
                            v.value = Some(Value::$carrier(*x));
                            v.pending = true;
                            Ok(())
                        }
                        None => self
                            .through(Call::$variant { vr: std::slice::from_ref(r), values: std::slice::from_ref(x) }),
                    };
                    if let Err(e) = res {
                        return Some(Err(e));
                    }
                }
                Some(Ok(()))
            }};
        }
        match call {
            Call::GetFloat64 { vr, out } => per_value!(vr, out, GetFloat64, Float),
            Call::GetInt64 { vr, out } => per_value!(vr, out, GetInt64, Int),
            Call::GetUInt64 { vr, out } => per_value!(vr, out, GetUInt64, UInt),
            Call::GetBoolean { vr, out } => per_value!(vr, out, GetBoolean, Boolean),
            Call::SetFloat64 { vr, values } => set_value!(vr, values, SetFloat64, Float),
            Call::SetInt64 { vr, values } => set_value!(vr, values, SetInt64, Int),
            Call::SetUInt64 { vr, values } => set_value!(vr, values, SetUInt64, UInt),
            Call::SetBoolean { vr, values } => set_value!(vr, values, SetBoolean, Boolean),
            Call::GetClock { vr, out } => {
                for (r, o) in vr.iter().zip(out.iter_mut()) {
                    let Some(k) = self.clockset.run(*r) else {
                        return Some(Err(self.refuse("fmi3GetClock", format!("value reference {r} is no clock"))));
                    };
                    let run = &mut self.clockset.runs[k];
                    *o = std::mem::take(&mut run.ticked);
                }
                Some(Ok(()))
            }
            Call::SetClock { vr, values } => {
                for (r, on) in vr.iter().zip(values.iter()) {
                    let Some(k) = self.clockset.run(*r) else {
                        return Some(Err(self.refuse("fmi3SetClock", format!("value reference {r} is no clock"))));
                    };
                    let run = &mut self.clockset.runs[k];
                    if !(run.input && run.kind == Kind::Triggered) {
                        let why = format!(
                            "clock \"{}\" is {}: only triggered input clocks are activated from a connection",
                            run.name,
                            if run.input {
                                "a time-based input clock the master activates at its ticks"
                            } else {
                                "an output clock"
                            }
                        );
                        return Some(Err(self.refuse("fmi3SetClock", why)));
                    }
                    run.pending |= *on;
                }
                Some(Ok(()))
            }
            _ => None,
        }
    }
}
