//! What a served run and its clients share ([`Hub`]): the inputs' lock-free mailbox (one atomic
//! value and flag per input), the ring of the latest rows, pause/reset control, the real-time
//! figures and the run's status. The run's side: [`LiveInputs`] (an input hook of the
//! execution) and [`LiveOutputs`] (an observer).

use crate::bonds::BondState;
use crate::coupling::Coupling;
use crate::error::Result;
use crate::execution::InputHook;
use crate::fmu::FmuInstance;
use crate::observer::{Observer, Status, Summary};
use crate::realtime::{Control, LiveStats};
use crate::system::VarRef;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One live input's mailbox: the value (f64 bits), whether it is set (overrides), and whether
/// it changed since the run last looked.
#[derive(Debug, Default)]
pub(super) struct Slot {
    bits: AtomicU64,
    set: AtomicBool,
    dirty: AtomicBool,
}

/// A live input as clients see it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct InputInfo {
    /// `instance.variable`.
    pub name: String,
    /// Slider range.
    pub min: f64,
    /// Slider range.
    pub max: f64,
    /// Keys raising and lowering it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys: Option<[String; 2]>,
    /// Values a client may set: `[live] range` within the FMU's min/max (±∞ where neither says).
    #[serde(skip)]
    pub limit: (f64, f64),
}

/// Rows kept for clients at least (at 1 kHz: 8 s) …
const MIN_RING_ROWS: usize = 8192;
/// … and as many as the dashboard's largest window needs (with some to spare), …
pub const HISTORY_S: f64 = 32.0;
/// … within this memory.
const MAX_RING_BYTES: usize = 32 << 20;

/// The latest rows: time then the streamed columns.
#[derive(Debug)]
pub(super) struct Ring {
    width: usize,
    rows: usize,
    data: Vec<f64>,
    /// Rows written in all.
    head: u64,
}

impl Ring {
    /// A ring of `width` columns holding [`HISTORY_S`] of steps of `step` s.
    pub(super) fn new(width: usize, step: f64) -> Self {
        let want = if step > 0.0 { (HISTORY_S / step).ceil().min(1e9) as usize } else { 0 };
        let rows = want.max(MIN_RING_ROWS).min((MAX_RING_BYTES / (8 * width.max(1))).max(1024));
        Self { width, rows, data: vec![f64::NAN; width * rows], head: 0 }
    }
}

/// How a run is doing, as clients see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// Stepping.
    Running,
    /// Paused by a client (or waiting for the first Start).
    Paused,
    /// Ended: the summary's status.
    #[serde(untagged)]
    Ended(Status),
}

/// What the run and the server share.
#[derive(Debug)]
pub struct Hub {
    pub(super) inputs: Vec<InputInfo>,
    pub(super) slots: Vec<Slot>,
    /// Names of the streamed columns after the time.
    columns: Vec<String>,
    ring: Mutex<Ring>,
    /// Rows the stepping thread could not publish because a reader held the ring.
    pub skipped: AtomicU64,
    /// Pause / resume.
    pub control: Arc<Control>,
    /// Real-time figures.
    pub stats: Arc<LiveStats>,
    /// The summary's status and message once the run ended (`Running` before).
    status: Mutex<(Status, String)>,
    /// Communication step (s).
    pub step: f64,
    /// Stop time (s).
    pub stop: f64,
    /// Start time (s).
    pub start: f64,
    /// Clamp a value outside an input's range instead of refusing it (`[live] clamp`).
    pub clamp: bool,
    /// Unit of each streamed column (from the model descriptions; columns without one left out).
    pub units: BTreeMap<String, String>,
    /// Axis range of each streamed column: `[live] range` of an input, the FMU's min/max.
    pub ranges: BTreeMap<String, [f64; 2]>,
    /// The machine schematic (`[live] schematic`, SVG text), served as `/schematic.svg`.
    pub schematic: Option<String>,
}

/// A value refused or clamped by [`Hub::set`].
#[derive(Debug, Clone, PartialEq)]
pub enum Applied {
    /// Set as given.
    Exact,
    /// Clamped to the range (`[live] clamp = true`): the value applied.
    Clamped(f64),
}

impl Hub {
    pub(super) fn new(inputs: Vec<InputInfo>, columns: Vec<String>, step: f64, stop: f64, start: f64) -> Self {
        let width = 1 + columns.len();
        Self {
            slots: inputs.iter().map(|_| Slot::default()).collect(),
            inputs,
            columns,
            ring: Mutex::new(Ring::new(width, step)),
            skipped: AtomicU64::new(0),
            control: Arc::new(Control::default()),
            stats: Arc::new(LiveStats::default()),
            status: Mutex::new((Status::Running, String::new())),
            step,
            stop,
            start,
            clamp: false,
            units: BTreeMap::new(),
            ranges: BTreeMap::new(),
            schematic: None,
        }
    }

    /// The live inputs.
    pub fn inputs(&self) -> &[InputInfo] {
        &self.inputs
    }

    /// The streamed columns (after the time).
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Checks a value for input `name` without setting it: the value that would be applied.
    pub fn check(&self, name: &str, value: f64) -> std::result::Result<Applied, String> {
        let k = self.input(name)?;
        if !value.is_finite() {
            return Err(format!("set: {name} = {value} is not a finite number"));
        }
        let (lo, hi) = self.inputs[k].limit;
        if value >= lo && value <= hi {
            return Ok(Applied::Exact);
        }
        if self.clamp {
            return Ok(Applied::Clamped(value.clamp(lo, hi)));
        }
        Err(format!("set: {name} = {value} is outside its range [{lo}, {hi}] ([live] range and the FMU's min/max); nothing was set"))
    }

    /// Sets input `name` (it overrides its time table from the next communication point),
    /// refused outside its range (or clamped to it with `[live] clamp = true`).
    pub fn set(&self, name: &str, value: f64) -> std::result::Result<Applied, String> {
        let applied = self.check(name, value)?;
        let value = match applied {
            Applied::Exact => value,
            Applied::Clamped(v) => v,
        };
        let s = &self.slots[self.input(name)?];
        s.bits.store(value.to_bits(), Ordering::Relaxed);
        s.set.store(true, Ordering::Relaxed);
        s.dirty.store(true, Ordering::Release);
        Ok(applied)
    }

    /// Releases input `name`: its time table (or its last value) drives it again.
    pub fn release(&self, name: &str) -> std::result::Result<(), String> {
        let k = self.input(name)?;
        let s = &self.slots[k];
        s.set.store(false, Ordering::Relaxed);
        s.dirty.store(true, Ordering::Release);
        Ok(())
    }

    /// Input `name`'s live value, if a client set it (else the table or the last value drives it).
    pub fn live_value(&self, name: &str) -> Option<f64> {
        let s = &self.slots[self.input(name).ok()?];
        s.set.load(Ordering::Relaxed).then(|| f64::from_bits(s.bits.load(Ordering::Relaxed)))
    }

    pub(super) fn input(&self, name: &str) -> std::result::Result<usize, String> {
        self.inputs.iter().position(|i| i.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.inputs.iter().map(|i| i.name.as_str()).collect();
            format!("\"{name}\" is not a live input (live inputs: {})", names.join(", "))
        })
    }

    /// Rows after `cursor` (rows written so far counted from 1), every `every`-th: the new
    /// cursor and the rows (time first). Rows older than the ring are gone.
    pub fn rows_since(&self, cursor: u64, every: u64) -> (u64, Vec<Vec<f64>>) {
        let Ok(ring) = self.ring.lock() else { return (cursor, Vec::new()) };
        let first = cursor.max(ring.head.saturating_sub(ring.rows as u64));
        let every = every.max(1);
        let mut rows = Vec::new();
        for n in first..ring.head {
            if n % every != 0 && n + 1 != ring.head {
                continue;
            }
            let at = (n as usize % ring.rows) * ring.width;
            rows.push(ring.data[at..at + ring.width].to_vec());
        }
        (ring.head, rows)
    }

    /// Rows written so far and the latest row (empty before the first).
    pub fn latest(&self) -> (u64, Vec<f64>) {
        let Ok(ring) = self.ring.lock() else { return (0, Vec::new()) };
        if ring.head == 0 {
            return (0, Vec::new());
        }
        let at = ((ring.head - 1) as usize % ring.rows) * ring.width;
        (ring.head, ring.data[at..at + ring.width].to_vec())
    }

    /// How the run is doing and the summary's message once it ended.
    pub fn state(&self) -> (RunState, String) {
        let (status, message) = self.status.lock().map(|s| s.clone()).unwrap_or((Status::Running, String::new()));
        match status {
            Status::Running if self.control.paused() => (RunState::Paused, message),
            Status::Running => (RunState::Running, message),
            s => (RunState::Ended(s), message),
        }
    }

    pub(super) fn set_status(&self, status: Status, message: &str) {
        if let Ok(mut s) = self.status.lock() {
            *s = (status, message.to_owned());
        }
    }

    pub(super) fn mark_all_dirty(&self) {
        for s in &self.slots {
            s.dirty.store(true, Ordering::Release);
        }
    }
}

/// Where a live input goes: a time table's override or the input itself.
#[derive(Debug, Clone)]
pub(super) struct Target {
    pub(super) var: VarRef,
    pub(super) signal: Option<usize>,
}

/// The run's side of the mailbox: an [`InputHook`] of the execution.
#[derive(Debug)]
pub struct LiveInputs {
    pub(super) hub: Arc<Hub>,
    pub(super) targets: Vec<Target>,
}

impl InputHook for LiveInputs {
    /// Takes the values set since the last communication point: an input with a time table
    /// has the table overridden (held, derivative 0) while set, and released back to it;
    /// one without gets the value set (and keeps the last one when released).
    fn apply(&mut self, coupling: &mut Coupling, instances: &mut [Box<dyn FmuInstance>]) -> Result<()> {
        for (slot, target) in self.hub.slots.iter().zip(&self.targets) {
            if !slot.dirty.swap(false, Ordering::Acquire) {
                continue;
            }
            let set = slot.set.load(Ordering::Relaxed);
            let value = f64::from_bits(slot.bits.load(Ordering::Relaxed));
            match target.signal {
                Some(k) => coupling.override_signal(k, set.then_some(value)),
                None if set => instances[target.var.instance].set_real(&[target.var.vr], &[value])?,
                None => {}
            }
        }
        Ok(())
    }
}

/// Publishes the streamed columns after every step (an observer; never waits for a reader).
#[derive(Debug)]
pub struct LiveOutputs {
    pub(super) hub: Arc<Hub>,
    /// Position in the recorded values of each column (bond columns after them).
    pub(super) picks: Vec<usize>,
    pub(super) bonds: usize,
    pub(super) row: Vec<f64>,
}

impl LiveOutputs {
    fn publish(&mut self, t: f64, values: &[f64], bonds: &[BondState]) {
        self.row.clear();
        self.row.push(t);
        self.row.extend(self.picks.iter().map(|k| values.get(*k).copied().unwrap_or(f64::NAN)));
        self.row.extend(bonds.iter().take(self.bonds).map(|b| b.e));
        let Ok(mut ring) = self.hub.ring.try_lock() else {
            self.hub.skipped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let at = (ring.head as usize % ring.rows) * ring.width;
        let width = ring.width;
        ring.data[at..at + width].copy_from_slice(&self.row);
        ring.head += 1;
    }
}

impl Observer for LiveOutputs {
    fn start(&mut self, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        self.publish(t, values, bonds);
        Ok(())
    }
    fn step(&mut self, _n: u64, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        self.publish(t, values, bonds);
        Ok(())
    }
    fn end_early(&mut self, t: f64, values: &[f64], bonds: &[BondState]) -> Result<()> {
        self.publish(t, values, bonds);
        Ok(())
    }
    fn finish(&mut self, s: &Summary) -> Result<()> {
        self.hub.set_status(s.status, &s.message);
        Ok(())
    }
}
