//! Live inputs and outputs: the `[live]` table of a system file names inputs an external
//! program may set and outputs it may read while the run goes on (docs/live.md).
//!
//! - [`Hub`]: what the run and the server share. Inputs go through a lock-free mailbox (one
//!   atomic value and flag per input), the run takes them at its next communication point
//!   ([`LiveInputs`], called by [`crate::Execution`] before the step's inputs are set); a live
//!   input overrides its time table while set and is recorded in results.csv like any input.
//!   Outputs go the other way through a ring of the latest rows ([`LiveOutputs`], an observer),
//!   which the stepping thread only ever `try_lock`s: a server or client never makes it wait.
//! - [`server`]: one TCP port on 127.0.0.1 (default): the dashboard page and WebSocket for
//!   browsers, JSON lines for other programs; [`udp`]: the same messages in UDP datagrams on
//!   the same port number.

pub mod server;
pub mod udp;
pub mod ws;

use crate::bonds::BondState;
use crate::coupling::Coupling;
use crate::error::{MasterError, Result};
use crate::fmu::FmuInstance;
use crate::observer::{Observer, Summary};
use crate::realtime::{Control, LiveStats};
use crate::system::{System, VarRef};
use model_description::{BaseType, Causality};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The address served when `[live]` gives none.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8033";

/// The `[live]` table of a system file.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct LiveSpec {
    /// Inputs an external program may set (`instance.variable`: Real inputs not fed by a
    /// connection).
    #[serde(default)]
    pub inputs: Vec<String>,
    /// Outputs it may read (any recorded variable, `instance.variable`).
    #[serde(default)]
    pub outputs: Vec<String>,
    /// Where to serve (default 127.0.0.1:8033; port 0 picks a free one).
    #[serde(default)]
    pub addr: Option<String>,
    /// Slider range of an input, `"hyd.U_ref" = [-10, 10]` (default [-1, 1]).
    #[serde(default)]
    pub range: BTreeMap<String, [f64; 2]>,
    /// Keyboard keys of the dashboard: `"hyd.U_ref" = ["ArrowUp", "ArrowDown"]` raise and
    /// lower an input by a twentieth of its range.
    #[serde(default)]
    pub keys: BTreeMap<String, [String; 2]>,
}

/// One live input's mailbox: the value (f64 bits), whether it is set (overrides), and whether
/// it changed since the run last looked.
#[derive(Debug, Default)]
struct Slot {
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
}

/// Rows kept for clients (at 1 kHz: 8 s).
const RING_ROWS: usize = 8192;

/// The latest rows: time then the streamed columns.
#[derive(Debug)]
struct Ring {
    width: usize,
    data: Vec<f64>,
    /// Rows written in all.
    head: u64,
}

/// What the run and the server share.
#[derive(Debug)]
pub struct Hub {
    inputs: Vec<InputInfo>,
    slots: Vec<Slot>,
    /// Names of the streamed columns after the time.
    columns: Vec<String>,
    ring: Mutex<Ring>,
    /// Rows the stepping thread could not publish because a reader held the ring.
    pub skipped: AtomicU64,
    /// Pause / resume.
    pub control: Arc<Control>,
    /// Real-time figures.
    pub stats: Arc<LiveStats>,
    /// `running`, then the summary's status and message.
    status: Mutex<(String, String)>,
    /// Communication step and stop time (for the page's axes).
    pub step: f64,
    /// Stop time (s).
    pub stop: f64,
    /// Start time (s).
    pub start: f64,
}

impl Hub {
    /// The live inputs.
    pub fn inputs(&self) -> &[InputInfo] {
        &self.inputs
    }

    /// The streamed columns (after the time).
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Sets input `name` (it overrides its time table from the next communication point).
    pub fn set(&self, name: &str, value: f64) -> std::result::Result<(), String> {
        let k = self.input(name)?;
        if !value.is_finite() {
            return Err(format!("{name}: {value} is not a finite number"));
        }
        let s = &self.slots[k];
        s.bits.store(value.to_bits(), Ordering::Relaxed);
        s.set.store(true, Ordering::Relaxed);
        s.dirty.store(true, Ordering::Release);
        Ok(())
    }

    /// Releases input `name`: its time table (or its last value) drives it again.
    pub fn release(&self, name: &str) -> std::result::Result<(), String> {
        let k = self.input(name)?;
        let s = &self.slots[k];
        s.set.store(false, Ordering::Relaxed);
        s.dirty.store(true, Ordering::Release);
        Ok(())
    }

    fn input(&self, name: &str) -> std::result::Result<usize, String> {
        self.inputs.iter().position(|i| i.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.inputs.iter().map(|i| i.name.as_str()).collect();
            format!("\"{name}\" is not a live input (live inputs: {})", names.join(", "))
        })
    }

    /// Rows after `cursor` (rows written so far counted from 1), every `every`-th: the new
    /// cursor and the rows (time first). Rows older than the ring are gone.
    pub fn rows_since(&self, cursor: u64, every: u64) -> (u64, Vec<Vec<f64>>) {
        let Ok(ring) = self.ring.lock() else { return (cursor, Vec::new()) };
        let first = cursor.max(ring.head.saturating_sub(RING_ROWS as u64));
        let every = every.max(1);
        let mut rows = Vec::new();
        for n in first..ring.head {
            if n % every != 0 && n + 1 != ring.head {
                continue;
            }
            let at = (n as usize % RING_ROWS) * ring.width;
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
        let at = ((ring.head - 1) as usize % RING_ROWS) * ring.width;
        (ring.head, ring.data[at..at + ring.width].to_vec())
    }

    /// The status and message (`running` while the run goes).
    pub fn status(&self) -> (String, String) {
        self.status.lock().map(|s| s.clone()).unwrap_or_default()
    }

    pub(crate) fn set_status(&self, status: &str, message: &str) {
        if let Ok(mut s) = self.status.lock() {
            *s = (status.to_owned(), message.to_owned());
        }
    }
}

/// Where a live input goes: a time table's override or the input itself.
#[derive(Debug, Clone)]
struct Target {
    var: VarRef,
    signal: Option<usize>,
}

/// The run's side of the mailbox ([`crate::Execution::live_inputs`]).
#[derive(Debug)]
pub struct LiveInputs {
    hub: Arc<Hub>,
    targets: Vec<Target>,
}

impl LiveInputs {
    /// Takes the values set since the last communication point: an input with a time table
    /// has the table overridden (held, derivative 0) while set, and released back to it;
    /// one without gets the value set (and keeps the last one when released).
    pub(crate) fn apply(&mut self, coupling: &mut Coupling, instances: &mut [Box<dyn FmuInstance>]) -> Result<()> {
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
    hub: Arc<Hub>,
    /// Position in the recorded values of each column (bond columns after them).
    picks: Vec<usize>,
    bonds: usize,
    row: Vec<f64>,
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
        let at = (ring.head as usize % RING_ROWS) * ring.width;
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
        let status = serde_json::to_value(s.status).ok().and_then(|v| v.as_str().map(str::to_owned));
        self.hub.set_status(status.as_deref().unwrap_or("finished"), &s.message);
        Ok(())
    }
}

/// The names a `[live]` table needs recorded (its inputs and outputs), to add to a system's
/// `[outputs]` list.
pub fn recorded_names(spec: &LiveSpec) -> impl Iterator<Item = &String> {
    spec.outputs.iter().chain(&spec.inputs)
}

/// The hub, the run's mailbox and the publishing observer for `spec` on `sys`. Every name is
/// checked: inputs must be Real inputs not fed by a connection, columns must be recorded.
/// `path` and the key (`live.inputs[k]`) name a bad entry.
pub fn connect(sys: &System, spec: &LiveSpec) -> Result<(Arc<Hub>, LiveInputs, LiveOutputs)> {
    let err = |key: String, message: String| MasterError::System { path: sys.path().to_path_buf(), key, message };
    let recorded: Vec<String> = sys.outputs().iter().map(|v| sys.label(v)).collect();
    let mut targets = Vec::new();
    let mut inputs = Vec::new();
    for (k, name) in spec.inputs.iter().enumerate() {
        let key = format!("live.inputs[{k}]");
        let var = sys
            .variable(name)
            .cloned()
            .ok_or_else(|| err(key.clone(), format!("no variable \"{name}\" (instance.variable) in this system")))?;
        if var.ty != BaseType::Real || var.causality != Causality::Input {
            return Err(err(key, format!("{name} is a {} {}, not a Real input", var.ty, var.causality)));
        }
        if sys.connections().iter().any(|c| c.to.instance == var.instance && c.to.vr == var.vr) {
            return Err(err(
                key,
                format!("{name} is fed by a connection; a live input must be free or a time table's"),
            ));
        }
        let signal = sys.signals().iter().position(|s| s.to.instance == var.instance && s.to.vr == var.vr);
        let [min, max] = spec.range.get(name).copied().unwrap_or([-1.0, 1.0]);
        if !(min.is_finite() && max.is_finite() && min < max) {
            return Err(err(format!("live.range.\"{name}\""), format!("[{min}, {max}] is not a range (min < max)")));
        }
        inputs.push(InputInfo { name: name.clone(), min, max, keys: spec.keys.get(name).cloned() });
        targets.push(Target { var, signal });
    }
    for name in spec.range.keys().chain(spec.keys.keys()) {
        if !spec.inputs.contains(name) {
            return Err(err(format!("live.range.\"{name}\""), format!("{name} is not in live.inputs")));
        }
    }
    // Columns: the live outputs, then the live inputs, then each bond's Σ δE.
    let mut picks = Vec::new();
    let mut columns = Vec::new();
    let names: Vec<(String, &String)> = spec
        .outputs
        .iter()
        .enumerate()
        .map(|(k, n)| (format!("live.outputs[{k}]"), n))
        .chain(spec.inputs.iter().enumerate().map(|(k, n)| (format!("live.inputs[{k}]"), n)))
        .collect();
    for (key, name) in names {
        if columns.contains(name) {
            continue;
        }
        let k = recorded.iter().position(|r| r == name).ok_or_else(|| {
            err(key, format!("{name} is not recorded; list it in [outputs] variables (or leave [outputs] out)"))
        })?;
        picks.push(k);
        columns.push(name.clone());
    }
    let bonds = sys.bonds().len();
    columns.extend(sys.bonds().iter().map(|b| format!("{}.energy", b.name)));
    let width = 1 + columns.len();
    let hub = Arc::new(Hub {
        slots: inputs.iter().map(|_| Slot::default()).collect(),
        inputs,
        columns,
        ring: Mutex::new(Ring { width, data: vec![f64::NAN; width * RING_ROWS], head: 0 }),
        skipped: AtomicU64::new(0),
        control: Arc::new(Control::default()),
        stats: Arc::new(LiveStats::default()),
        status: Mutex::new(("running".into(), String::new())),
        step: sys.step(),
        stop: sys.stop(),
        start: sys.start(),
    });
    let live_in = LiveInputs { hub: Arc::clone(&hub), targets };
    let live_out = LiveOutputs { hub: Arc::clone(&hub), picks, bonds, row: Vec::with_capacity(width) };
    Ok((hub, live_in, live_out))
}

impl LiveInputs {
    /// The same inputs feeding `hub` (a run started again after a reset).
    fn rebind(self, hub: &Arc<Hub>) -> Self {
        Self { hub: Arc::clone(hub), targets: self.targets }
    }
}

impl LiveOutputs {
    /// The same columns published to `hub`.
    fn rebind(self, hub: &Arc<Hub>) -> Self {
        Self { hub: Arc::clone(hub), ..self }
    }
}

/// A served run: the hub its clients share and the server (stops when dropped).
#[derive(Debug)]
pub struct Served {
    /// What the run and the clients share.
    pub hub: Arc<Hub>,
    /// The server.
    pub server: server::Server,
}

impl Served {
    /// Attaches a new execution of the same system to this server (after a reset): its
    /// mailbox, its publishing observer and the pacer sharing pause and statistics.
    pub fn reattach(&self, execution: &mut crate::Execution, spec: Option<&LiveSpec>) -> Result<()> {
        let sys = execution.system();
        let spec = spec.cloned().unwrap_or_else(|| LiveSpec {
            outputs: sys.outputs().iter().map(|v| sys.label(v)).collect(),
            ..LiveSpec::default()
        });
        let (_, live_in, live_out) = connect(sys, &spec)?;
        share(execution, &self.hub);
        // The inputs as set now apply from the new run's first step.
        for s in &self.hub.slots {
            s.dirty.store(true, Ordering::Release);
        }
        execution.live_inputs(live_in.rebind(&self.hub));
        execution.observe(Box::new(live_out.rebind(&self.hub)));
        self.hub.set_status("running", "");
        Ok(())
    }
}

/// The pacer of `execution` (made, in real time, if there is none) shares the hub's control
/// and statistics.
fn share(execution: &mut crate::Execution, hub: &Arc<Hub>) {
    let (t0, steps) = (execution.system().start(), execution.system().steps());
    if execution.pacer_mut().is_none() {
        eprintln!("live: a served run goes in real time (factor 1; --real-time FACTOR to change)");
        execution.pace(crate::realtime::Pacer::new(crate::realtime::RealTime::new(1.0), t0, steps));
    }
    if let Some(p) = execution.pacer_mut() {
        p.share(Arc::clone(&hub.control), Arc::clone(&hub.stats));
    }
}

/// How `cosim run` serves a run (`--serve`, `--paused`, `[live]`).
#[derive(Debug, Clone, Default)]
pub struct ServeOptions {
    /// Serve even without a `[live]` table (`--serve`).
    pub serve: bool,
    /// Address from the command line (over `[live] addr`).
    pub addr: Option<String>,
    /// Start paused: the run waits for a client's `{"pause": false}` (the page's Start).
    pub paused: bool,
}

/// Serves `execution` when the system has a `[live]` table or an address is given: the
/// mailbox and the publishing observer are attached, the pacer shares pause and statistics
/// (a served run without a real-time factor runs in real time), the server is started and
/// its address printed. `None` when nothing is to be served.
pub fn attach(
    execution: &mut crate::Execution,
    spec: Option<&LiveSpec>,
    opts: &ServeOptions,
) -> Result<Option<Served>> {
    if spec.is_none() && !opts.serve && opts.addr.is_none() {
        return Ok(None);
    }
    let sys = execution.system();
    let default_spec;
    let spec = match spec {
        Some(s) => s,
        None => {
            // No [live] table: every recorded variable may be read, nothing set.
            default_spec =
                LiveSpec { outputs: sys.outputs().iter().map(|v| sys.label(v)).collect(), ..LiveSpec::default() };
            &default_spec
        }
    };
    let addr = opts.addr.clone().or_else(|| spec.addr.clone()).unwrap_or_else(|| DEFAULT_ADDR.to_owned());
    let (hub, live_in, live_out) = connect(sys, spec)?;
    share(execution, &hub);
    hub.control.set_paused(opts.paused);
    execution.live_inputs(live_in);
    execution.observe(Box::new(live_out));
    let server = server::Server::start(Arc::clone(&hub), &addr)?;
    eprintln!(
        "live: dashboard on http://{0}/ (WebSocket ws://{0}/ws, JSON lines on tcp {0}, JSON datagrams on udp {0})",
        server.addr()
    );
    if opts.paused {
        eprintln!("live: paused until a client starts the run (the page's Start, or {{\"pause\": false}})");
    }
    Ok(Some(Served { hub, server }))
}
