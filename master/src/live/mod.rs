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

pub mod hub;
pub mod policy;
pub mod protocol;
pub mod replay;
pub mod server;
pub mod udp;

pub use hub::{Hub, InputInfo, LiveInputs, LiveOutputs, RunState};
pub use replay::replay;

use crate::error::{MasterError, Result};
use crate::observer::Status;
use crate::system::System;
use hub::Target;
use model_description::{BaseType, Causality};
use std::collections::BTreeMap;
use std::sync::Arc;

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
    /// Range of an input, `"hyd.U_ref" = [-10, 10]`: the slider's, and the values a client may
    /// set (within the FMU's min/max; without it: the FMU's, or a slider of [-1, 1]); of an
    /// output: its plot's fixed y axis.
    #[serde(default)]
    pub range: BTreeMap<String, [f64; 2]>,
    /// Keyboard keys of the dashboard: `"hyd.U_ref" = ["ArrowUp", "ArrowDown"]` raise and
    /// lower an input by a twentieth of its range.
    #[serde(default)]
    pub keys: BTreeMap<String, [String; 2]>,
    /// Origins (`http://host:port`) besides the server's own whose pages may use it (its
    /// WebSocket, its page under that host name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow_origins: Vec<String>,
    /// The access token set, release, pause and reset need on every protocol (8–128 of
    /// `A-Za-z0-9-_.`); a server bound beyond loopback without one makes a random one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Clamp a value outside an input's range to it (the reply says so) instead of refusing it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub clamp: bool,
    /// An SVG drawing of the machine for the dashboard (path from the system file's folder),
    /// its elements bound to outputs by `data-*` attributes (docs/live.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schematic: Option<String>,
}

/// The names a `[live]` table needs recorded (its inputs and outputs), to add to a system's
/// `[outputs]` list.
pub fn recorded_names(spec: &LiveSpec) -> impl Iterator<Item = &String> {
    spec.outputs.iter().chain(&spec.inputs)
}

/// What the FMUs declare of the recorded columns: units and min/max.
#[derive(Debug, Clone, Default)]
pub struct Declared {
    /// Unit of each recorded column that has one.
    pub units: BTreeMap<String, String>,
    /// min/max of each recorded Real column that declares either.
    pub ranges: BTreeMap<String, (Option<f64>, Option<f64>)>,
}

impl Declared {
    /// What `execution`'s model descriptions declare.
    pub fn of(execution: &crate::Execution) -> Self {
        Self { units: execution.units().clone(), ranges: execution.declared_ranges().clone() }
    }
}

/// Largest schematic read (bytes).
const MAX_SCHEMATIC: u64 = 1 << 20;

/// The hub, the run's mailbox and the publishing observer for `spec` on `sys`. Every name is
/// checked: inputs must be Real inputs not fed by a connection, columns must be recorded.
/// `path` and the key (`live.inputs[k]`) name a bad entry.
pub fn connect(sys: &System, spec: &LiveSpec, declared: &Declared) -> Result<(Arc<Hub>, LiveInputs, LiveOutputs)> {
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
        let (fmu_min, fmu_max) = declared.ranges.get(name).copied().unwrap_or((None, None));
        let (fmu_min, fmu_max) = (fmu_min.unwrap_or(f64::NEG_INFINITY), fmu_max.unwrap_or(f64::INFINITY));
        let given = spec.range.get(name).copied();
        if let Some([min, max]) = given {
            if !(min.is_finite() && max.is_finite() && min < max) {
                return Err(err(
                    format!("live.range.\"{name}\""),
                    format!("[{min}, {max}] is not a range (min < max)"),
                ));
            }
            if max < fmu_min || min > fmu_max {
                return Err(err(
                    format!("live.range.\"{name}\""),
                    format!("[{min}, {max}] is outside the FMU's min/max [{fmu_min}, {fmu_max}] of {name}"),
                ));
            }
        }
        let limit = match given {
            Some([min, max]) => (min.max(fmu_min), max.min(fmu_max)),
            None => (fmu_min, fmu_max),
        };
        let [min, max] = match given {
            Some(r) => r,
            None if limit.0.is_finite() && limit.1.is_finite() => [limit.0, limit.1],
            None => [-1.0, 1.0],
        };
        inputs.push(InputInfo { name: name.clone(), min, max, keys: spec.keys.get(name).cloned(), limit });
        targets.push(Target { var, signal });
    }
    for name in spec.keys.keys() {
        if !spec.inputs.contains(name) {
            return Err(err(format!("live.keys.\"{name}\""), format!("{name} is not in live.inputs")));
        }
    }
    for (name, [min, max]) in &spec.range {
        if !spec.inputs.contains(name) && !spec.outputs.contains(name) {
            return Err(err(format!("live.range.\"{name}\""), format!("{name} is not in live.inputs or live.outputs")));
        }
        if !(min.is_finite() && max.is_finite() && min < max) {
            return Err(err(format!("live.range.\"{name}\""), format!("[{min}, {max}] is not a range (min < max)")));
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
    // Axes: a column's [live] range, else what the FMU declares (both ends).
    let mut ranges = BTreeMap::new();
    for c in &columns {
        let r = match (spec.range.get(c), declared.ranges.get(c)) {
            (Some(r), _) => Some(*r),
            (None, Some((Some(lo), Some(hi)))) if lo < hi && lo.is_finite() && hi.is_finite() => Some([*lo, *hi]),
            _ => None,
        };
        if let Some(r) = r {
            ranges.insert(c.clone(), r);
        }
    }
    let mut units: BTreeMap<String, String> =
        columns.iter().filter_map(|c| Some((c.clone(), declared.units.get(c)?.clone()))).collect();
    for b in sys.bonds() {
        units.insert(format!("{}.energy", b.name), "J".into());
    }
    let schematic = match &spec.schematic {
        None => None,
        Some(file) => Some(read_schematic(sys, file).map_err(|m| err("live.schematic".into(), m))?),
    };
    let mut hub = Hub::new(inputs, columns, sys.step(), sys.stop(), sys.start());
    hub.clamp = spec.clamp;
    hub.units = units;
    hub.ranges = ranges;
    hub.schematic = schematic;
    let width = 1 + hub.columns().len();
    let hub = Arc::new(hub);
    let live_in = LiveInputs { hub: Arc::clone(&hub), targets };
    let live_out = LiveOutputs { hub: Arc::clone(&hub), picks, bonds, row: Vec::with_capacity(width) };
    Ok((hub, live_in, live_out))
}

/// The schematic `file` (relative to the system file's folder): SVG text of at most 1 MiB.
fn read_schematic(sys: &System, file: &str) -> std::result::Result<String, String> {
    use std::io::Read;
    let path = sys.path().parent().unwrap_or(std::path::Path::new(".")).join(file);
    let mut text = String::new();
    std::fs::File::open(&path)
        .and_then(|f| f.take(MAX_SCHEMATIC + 1).read_to_string(&mut text))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if text.len() as u64 > MAX_SCHEMATIC {
        return Err(format!("{}: larger than {MAX_SCHEMATIC} bytes", path.display()));
    }
    if !text.contains("<svg") {
        return Err(format!("{}: not an SVG drawing (no <svg> element)", path.display()));
    }
    Ok(text)
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

/// The `[live]` table served when a system has none: every recorded variable readable,
/// nothing settable.
fn read_only(sys: &System) -> LiveSpec {
    LiveSpec { outputs: sys.outputs().iter().map(|v| sys.label(v)).collect(), ..LiveSpec::default() }
}

impl Served {
    /// Attaches a new execution of the same system to this server (after a reset): its
    /// mailbox, its publishing observer and the pacer sharing pause and statistics.
    pub fn reattach(&self, execution: &mut crate::Execution, spec: Option<&LiveSpec>) -> Result<()> {
        let sys = execution.system();
        let spec = spec.cloned().unwrap_or_else(|| read_only(sys));
        let (_, live_in, live_out) = connect(sys, &spec, &Declared::of(execution))?;
        share(execution, &self.hub);
        // The inputs as set now apply from the new run's first step.
        self.hub.mark_all_dirty();
        execution.live_inputs(Box::new(live_in.rebind(&self.hub)));
        execution.observe(Box::new(live_out.rebind(&self.hub)));
        self.hub.set_status(Status::Running, "");
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
/// its address printed (with the token in the page's URL). A server bound beyond loopback
/// without `[live] token` gets a random one (and a warning). `None` when nothing is served.
pub fn attach(
    execution: &mut crate::Execution,
    spec: Option<&LiveSpec>,
    opts: &ServeOptions,
) -> Result<Option<Served>> {
    if spec.is_none() && !opts.serve && opts.addr.is_none() {
        return Ok(None);
    }
    let sys = execution.system();
    let spec = spec.cloned().unwrap_or_else(|| read_only(sys));
    let path = sys.path().to_path_buf();
    let addr = opts.addr.clone().or_else(|| spec.addr.clone()).unwrap_or_else(|| DEFAULT_ADDR.to_owned());
    if let Some(t) = &spec.token {
        policy::check_token(t).map_err(|message| MasterError::System {
            path: path.clone(),
            key: "live.token".into(),
            message,
        })?;
    }
    let (hub, live_in, live_out) = connect(sys, &spec, &Declared::of(execution))?;
    let bound = {
        use std::net::ToSocketAddrs;
        addr.to_socket_addrs().ok().and_then(|mut a| a.next())
    };
    let mut token = spec.token.clone();
    if token.is_none() && bound.is_some_and(policy::beyond_loopback) {
        let t = policy::random_token().map_err(|source| MasterError::Io { path: "/dev/urandom".into(), source })?;
        eprintln!(
            "live: warning: {addr} serves beyond this machine and [live] token is not set: set, release, pause \
             and reset need this random token (in the page's URL below); anyone on the network can watch"
        );
        token = Some(t);
    }
    share(execution, &hub);
    hub.control.set_paused(opts.paused);
    execution.live_inputs(Box::new(live_in));
    execution.observe(Box::new(live_out));
    let server = server::Server::start(Arc::clone(&hub), &addr, &spec.allow_origins, token.clone())?;
    let query = token.as_ref().map(|t| format!("?token={t}")).unwrap_or_default();
    eprintln!(
        "live: dashboard on http://{0}/{query} (WebSocket ws://{0}/ws, JSON lines on tcp {0}, JSON datagrams on udp {0})",
        server.addr()
    );
    if opts.paused {
        eprintln!("live: paused until a client starts the run (the page's Start, or {{\"pause\": false}})");
    }
    Ok(Some(Served { hub, server }))
}
