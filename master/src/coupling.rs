//! The coupling layer every [`crate::algorithm::Algorithm`] shares: where each exchanged value
//! lives (flat per-instance tables resolved once from the [`System`]), the link histories and
//! their extrapolation/interpolation polynomials (seed 001 §2–3), setting inputs (held values,
//! input derivatives for FMUs that interpolate), feedthrough order, multirate sub-stepping of an
//! instance and reading its outputs. Schemes decide *when* instances step and which link values
//! they see; this module does the work.

use crate::error::{MasterError, Result};
use crate::extrapolation::{History, Poly, MAX_ORDER};
use crate::fmu::value::Carrier;
use crate::fmu::{FmuInstance, Value, ValueType};
pub use crate::ids::{InstanceId, LinkId};
use crate::system::{Exchange, Extrapolation, Parallel, System, VarRef};
use model_description::{BaseType, Causality, ModelDescription};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

mod tables;
pub(crate) use tables::set_signal;

/// Where a Real value lives: instance and slot in that instance's output buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    pub(crate) instance: usize,
    pub(crate) index: usize,
}

/// A Real connection, resolved.
#[derive(Debug, Clone)]
pub(crate) struct RealLink {
    pub(crate) src: Slot,
    pub(crate) dst_instance: usize,
    /// Position among the destination's inputs.
    pub(crate) dst_index: usize,
    pub(crate) gain: f64,
    pub(crate) offset: f64,
    pub(crate) order: usize,
    /// I2: slots of the source's derivative outputs.
    pub(crate) i2: Vec<Slot>,
    pub(crate) history: History,
    pub(crate) poly: Poly,
    /// Input value the destination used at the end of the step (for bonds).
    pub(crate) used_end: f64,
    /// Input value at the start of the step.
    pub(crate) used_start: f64,
    /// This step's polynomial is an interpolation (Gauss-Seidel, source already stepped).
    pub(crate) interpolated: bool,
    /// Energy correction ([`crate::bonds`]): the impulse Δe·H set by the bond after a step,
    /// and the effort correction Δe added to this step's polynomial.
    pub(crate) correction_impulse: f64,
    pub(crate) correction: f64,
    /// Per-input energy correction of this input (law `input`), if a bond asks for it.
    pub(crate) input_correction: Option<InputCorrection>,
    /// `correction` and the input correction's (start_power, h) before the newest history time
    /// was first extrapolated: extrapolating at that time again starts from them.
    before: (f64, f64, f64),
}

/// The per-input energy correction of one link ([`crate::bonds`]): after each step the input's
/// own energy error ΔE_u = ∫(ũ − u)·y dt (trapezoid from t_n, where ũ − u = 0), returned over
/// the next step as Δu = α ΔE_u y / (H (y² + y_ε²)).
#[derive(Debug, Clone, Copy)]
pub(crate) struct InputCorrection {
    /// The conjugate variable y at the same port: an output of the input's own instance.
    pub(crate) conjugate: Slot,
    /// Gain α and floor y_ε.
    pub(crate) gain: f64,
    pub(crate) floor: f64,
    /// (ũ − u)·y at the step's start (0 up to rounding) and the step's length (0 before the first).
    start_power: f64,
    h: f64,
    /// ΔE_u of the last finished step (J), set when the next step's input is extrapolated.
    pub(crate) energy: f64,
}

impl InputCorrection {
    pub(crate) fn new(conjugate: Slot, gain: f64, floor: f64) -> Self {
        Self { conjugate, gain, floor, start_power: 0.0, h: 0.0, energy: 0.0 }
    }
}

/// A non-Real connection: copied at communication points as a [`Value`] of the source's type
/// (exact: Int64, UInt64, String, Binary alike; a String or Binary buffer grows to the largest
/// value once, then every copy reuses it).
#[derive(Debug, Clone)]
struct DiscreteLink {
    from: VarRef,
    to: VarRef,
    /// The value copied; its carrier is decided at the first copy (from the source instance's
    /// [`FmuInstance::value_type`]).
    value: Value,
    typed: bool,
}

/// The carrier of variable `v` of `instance`: its own type's where the instance knows it, else
/// its base type's (an FMI 2.0 Integer is an Int32).
fn carrier(instance: &dyn FmuInstance, v: &VarRef) -> Carrier {
    instance.value_type(v.vr).unwrap_or_else(|| ValueType::of2(v.ty)).carrier()
}

/// Per-instance tables.
#[derive(Debug, Clone, Default)]
pub(crate) struct Node {
    /// Real variables read after every step (connection sources, I2 derivatives, bond and
    /// recorded variables).
    pub(crate) out_vrs: Vec<u32>,
    pub(crate) out_vals: Vec<f64>,
    /// Names of `out_vrs`, for messages.
    pub(crate) out_names: Vec<String>,
    /// Position of each value reference in `out_vrs` (a system may read 100 000 outputs).
    pub(crate) out_index: HashMap<u32, usize>,
    /// Subset of `out_vrs` positions that have direct feedthrough from inputs.
    pub(crate) ft_positions: Vec<usize>,
    pub(crate) ft_vrs: Vec<u32>,
    pub(crate) ft_vals: Vec<f64>,
    /// Subset of `out_vrs` positions that are inputs (recorded): read again once set, so that a
    /// row shows the inputs of its time.
    pub(crate) inputs_read: Vec<usize>,
    pub(crate) inputs_read_vrs: Vec<u32>,
    pub(crate) inputs_read_vals: Vec<f64>,
    /// Real inputs: first those fed by connections (`in_links`, same positions), then those
    /// driven by time tables (`in_signals`), set in one batched call per instance.
    pub(crate) in_vrs: Vec<u32>,
    pub(crate) in_vals: Vec<f64>,
    pub(crate) in_links: Vec<LinkId>,
    pub(crate) in_signals: Vec<usize>,
    /// Each time table's value at the start of the (sub-)step being set and its derivative
    /// over it ([`Coupling::evaluate_signals`]).
    pub(crate) signal_vals: Vec<(f64, f64)>,
    /// Highest extrapolation order among the inputs.
    pub(crate) max_order: usize,
    pub(crate) substeps: u64,
    /// The instance's own fixed step (s), when given: with a variable H, substeps = H / step.
    pub(crate) own_step: Option<f64>,
    pub(crate) interpolates: bool,
    /// Highest input derivative order set at the step's start (repeated at each own sub-step).
    pub(crate) derivative_order: usize,
    /// Seconds inside the timed steps, how many were timed, and all macro-step calls.
    pub(crate) step_seconds: f64,
    pub(crate) timed_calls: u64,
    pub(crate) step_calls: u64,
}

/// Steps timed in full at the start (the thread decision reads them), then every
/// `TIME_EVERY`-th: two clock reads per instance and step cost as much as a small FMU's step.
const TIME_ALL_FIRST: u64 = 64;
const TIME_EVERY: u64 = 16;

/// The coupling tables of a system: built once by [`crate::bonds::couple`], then driven by the
/// execution ([`Coupling::begin_step`]) and the algorithm (stepping, reading, interpolating).
pub struct Coupling {
    h: f64,
    start: f64,
    pub(crate) nodes: Vec<Node>,
    pub(crate) links: Vec<RealLink>,
    discrete: Vec<DiscreteLink>,
    /// Order in which inputs are set at a communication point (feedthrough dependencies first).
    input_order: Vec<usize>,
    recorded: Vec<Slot>,
    recorded_discrete: Vec<(usize, VarRef)>,
    /// The recorded non-Real variables' values, exact, in column order (read with the other
    /// values; typed at the first read, `recorded_typed`).
    recorded_exact: Vec<Value>,
    recorded_typed: bool,
    /// Inputs driven by time tables (in memory or streamed from files), with their live
    /// overrides ([`crate::live`]).
    tables: tables::Tables,
    /// Time tables of non-Real inputs (their index in `tables`): held, set at each point.
    discrete_signals: Vec<usize>,
    pub(crate) names: Vec<String>,
    /// Measure the time of each instance's steps (two clock reads per instance and step).
    timing: bool,
    /// The size of this communication step as handed to `fmi2DoStep`: t_{n+1} − t_n, so that an
    /// FMU's own clock lands exactly on the grid t_n = start + n·H (as FMPy steps); H up to
    /// rounding.
    h_step: f64,
    /// Time every one of the first steps even without `timing` (`parallel = "auto"` decides from them).
    sample_first_steps: bool,
    /// t_n, the start of the current communication step (time tables are evaluated from it).
    t_step: f64,
    /// The papers' explicit Jacobi ([`Exchange::Explicit`]): outputs are never re-read after
    /// inputs are set.
    explicit: bool,
    /// The stop request the execution was handed ([`crate::Execution::interrupt_on`]).
    pub(crate) stop: Option<std::sync::Arc<dyn crate::host::StopRequest>>,
    /// Whether any link was ever interpolated ([`Coupling::interpolate_link`]: Gauss-Seidel,
    /// iterative coupling); until then an instance's held inputs stand as set at the step's start.
    interpolating: bool,
}

fn slot_of(nodes: &mut [Node], v: &VarRef) -> Slot {
    let node = &mut nodes[v.instance];
    let next = node.out_vrs.len();
    let index = *node.out_index.entry(v.vr).or_insert(next);
    if index == next {
        node.out_vrs.push(v.vr);
        node.out_vals.push(0.0);
        node.out_names.push(v.name.clone());
    }
    Slot { instance: v.instance, index }
}

impl Coupling {
    /// Resolves the system to flat tables; `mds[i]` is instance i's description and
    /// `interpolates[i]` whether it can interpolate inputs. `ports` adds what reads these tables
    /// (the bonds, [`crate::bonds::couple`]) before the recorded outputs are resolved.
    pub(crate) fn build<T>(
        sys: &System,
        mds: &[&ModelDescription],
        interpolates: &[bool],
        ports: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<(Self, T)> {
        let names: Vec<String> = sys.instances.iter().map(|i| i.name.clone()).collect();
        let mut nodes: Vec<Node> = sys
            .instances
            .iter()
            .zip(interpolates)
            .map(|(spec, interp)| Node {
                substeps: spec.substeps,
                own_step: spec.step,
                interpolates: *interp,
                ..Node::default()
            })
            .collect();
        let mut links = Vec::new();
        let mut discrete = Vec::new();
        for c in &sys.connections {
            if c.from.ty != BaseType::Real {
                discrete.push(DiscreteLink {
                    from: c.from.clone(),
                    to: c.to.clone(),
                    value: Value::Float(0.0),
                    typed: false,
                });
                continue;
            }
            let src = slot_of(&mut nodes, &c.from);
            let i2 = match &c.extrapolation {
                Extrapolation::I2 { derivatives } => derivatives.iter().map(|d| slot_of(&mut nodes, d)).collect(),
                Extrapolation::Order(_) => Vec::new(),
            };
            let order = c.extrapolation.order().min(MAX_ORDER);
            let node = &mut nodes[c.to.instance];
            node.in_vrs.push(c.to.vr);
            node.in_vals.push(0.0);
            node.in_links.push(LinkId::new(links.len()));
            node.max_order = node.max_order.max(order);
            links.push(RealLink {
                src,
                dst_instance: c.to.instance,
                dst_index: node.in_vrs.len() - 1,
                gain: c.gain,
                offset: c.offset,
                order,
                i2,
                history: History::default(),
                poly: Poly::default(),
                used_end: 0.0,
                used_start: 0.0,
                interpolated: false,
                correction_impulse: 0.0,
                correction: 0.0,
                input_correction: None,
                before: (0.0, 0.0, 0.0),
            });
        }

        // Time tables join their instance's batched inputs, after the connections; those of
        // non-Real inputs are held values, set one by one with the discrete connections.
        let mut discrete_signals = Vec::new();
        for (k, sig) in sys.signals.iter().enumerate() {
            if sig.to.ty != BaseType::Real {
                discrete_signals.push(k);
                continue;
            }
            let node = &mut nodes[sig.to.instance];
            node.in_vrs.push(sig.to.vr);
            node.in_vals.push(0.0);
            node.in_signals.push(k);
            node.signal_vals.push((0.0, 0.0));
            if sig.linear {
                node.max_order = node.max_order.max(1);
            }
        }

        // Ports (the bonds): each port variable is an output (read) or a connected input (value used).
        let mut coupling = Self {
            h: sys.step,
            start: sys.start,
            nodes,
            links,
            discrete,
            input_order: Vec::new(),
            recorded: Vec::new(),
            recorded_discrete: Vec::new(),
            recorded_exact: Vec::new(),
            recorded_typed: false,
            tables: tables::Tables::new(&sys.signals),
            discrete_signals,
            names,
            timing: true,
            h_step: sys.step,
            sample_first_steps: sys.parallel == Parallel::Auto,
            t_step: sys.start,
            explicit: sys.exchange == Exchange::Explicit,
            interpolating: false,
            stop: None,
        };
        let bonds = ports(&mut coupling)?;
        for v in &sys.outputs {
            if v.ty == BaseType::Real {
                let s = coupling.slot_of(v);
                coupling.recorded.push(s);
            } else {
                let pos = coupling.recorded.len() + coupling.recorded_discrete.len();
                coupling.recorded_discrete.push((pos, v.clone()));
                coupling.recorded_exact.push(Value::Float(0.0));
            }
        }
        let (nodes, links, names) = (&mut coupling.nodes, &coupling.links, &coupling.names);

        // Direct feedthrough: which read outputs depend on inputs (ModelStructure/Outputs).
        let n = nodes.len();
        let mut ft_dep = vec![vec![false; n]; n]; // ft_dep[a][b]: a's inputs must be set before b reads a's output
        for (i, node) in nodes.iter_mut().enumerate() {
            let md = mds[i];
            // Real outputs by value reference, and ModelStructure/Outputs by index: looked up once
            // per read output (linear in the description's size).
            let mut output_index: HashMap<u32, usize> = HashMap::new();
            for (idx, v) in md.model_variables.iter().enumerate() {
                if v.kind.base_type() == BaseType::Real && v.causality == Causality::Output {
                    output_index.entry(v.value_reference).or_insert(idx);
                }
            }
            let mut unknowns = HashMap::new();
            for u in &md.model_structure.outputs {
                unknowns.entry(u.index as usize).or_insert(u);
            }
            let inputs: HashSet<u32> = md
                .model_variables
                .iter()
                .filter(|v| v.kind.base_type() == BaseType::Real && v.causality == Causality::Input)
                .map(|v| v.value_reference)
                .collect();
            for (pos, vr) in node.out_vrs.iter().enumerate() {
                let Some(&idx) = output_index.get(vr) else {
                    if inputs.contains(vr) {
                        node.inputs_read.push(pos);
                        node.inputs_read_vrs.push(*vr);
                        node.inputs_read_vals.push(0.0);
                    }
                    continue;
                };
                let unknown = unknowns.get(&(idx + 1));
                let has_ft = match unknown.and_then(|u| u.dependencies.as_ref()) {
                    None => true,
                    Some(deps) => {
                        deps.iter().any(|d| md.variable_by_index(*d).is_some_and(|v| v.causality == Causality::Input))
                    }
                };
                if has_ft {
                    node.ft_positions.push(pos);
                    node.ft_vrs.push(*vr);
                    node.ft_vals.push(0.0);
                }
            }
        }
        // An output with direct feedthrough connected to an input of its own instance is a loop
        // too (ft_dep[a][a]), refused like one through several instances.
        let ft: Vec<HashSet<usize>> = nodes.iter().map(|n| n.ft_positions.iter().copied().collect()).collect();
        for l in links {
            if ft[l.src.instance].contains(&l.src.index) {
                ft_dep[l.src.instance][l.dst_instance] = true;
            }
        }
        // The explicit exchange reads no output after inputs are set: any order will do, and a
        // cycle of feedthrough outputs is no loop.
        let explicit = coupling.explicit;
        let input_order =
            topological(&ft_dep).or_else(|cycle| if explicit { Ok((0..n).collect()) } else { Err(cycle) });
        let input_order = input_order.map_err(|cycle| MasterError::System {
            path: sys.path.clone(),
            key: "connections".into(),
            message: format!(
                "algebraic loop: outputs with direct feedthrough form a cycle through instances {}; \
                 break it by connecting an output without feedthrough (e.g. pressure instead of force coupling), \
                 or read every output once per step with [simulation] exchange = \"explicit\"",
                cycle.iter().map(|i| names[*i].as_str()).collect::<Vec<_>>().join(" -> ")
            ),
        })?;
        coupling.input_order = input_order;
        Ok((coupling, bonds))
    }

    /// Where the value of output `v` is kept (added to its instance's reads if new).
    pub(crate) fn slot_of(&mut self, v: &VarRef) -> Slot {
        slot_of(&mut self.nodes, v)
    }

    /// Communication step H.
    pub fn h(&self) -> f64 {
        self.h
    }

    /// Whether a stop of the run was requested (SIGINT/SIGTERM in `cosim`): a scheme that
    /// repeats work within a step (iterative coupling) checks it between passes.
    pub fn stop_requested(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.requested())
    }

    /// Sets the size of the coming communication step, t_{n+1} − t_n (H up to rounding).
    pub fn set_step_size(&mut self, h: f64) {
        self.h_step = h;
    }

    /// A variable communication step (step control): H and the step handed to `fmi2DoStep`
    /// both become `h`, and each instance with its own step h_i sub-steps H / h_i times.
    pub fn set_variable_step(&mut self, h: f64) {
        self.h = h;
        self.h_step = h;
        for node in &mut self.nodes {
            if let Some(own) = node.own_step {
                node.substeps = ((h / own).round() as u64).max(1);
            }
        }
    }

    /// The size of the current communication step handed to `fmi2DoStep`.
    pub fn step_size(&self) -> f64 {
        self.h_step
    }

    /// Number of instances.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the system has no instances.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Instance names.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Reads every instance's outputs at the start time (after initialization).
    pub fn initialize(&mut self, instances: &mut [Box<dyn FmuInstance>]) -> Result<()> {
        for i in 0..self.nodes.len() {
            self.read_outputs(InstanceId::new(i), instances, self.start)?;
        }
        Ok(())
    }

    /// Reads instance i's outputs after a step to t (a non-finite value is an error).
    pub fn read_outputs(&mut self, instance: InstanceId, instances: &mut [Box<dyn FmuInstance>], t: f64) -> Result<()> {
        let i = instance.index();
        let node = &mut self.nodes[i];
        if node.out_vrs.is_empty() {
            return Ok(());
        }
        instances[i].get_real(&node.out_vrs, &mut node.out_vals)?;
        if let Some(k) = node.out_vals.iter().position(|v| !v.is_finite()) {
            return Err(MasterError::NotFinite {
                instance: self.names[i].clone(),
                variable: node.out_names[k].clone(),
                value: node.out_vals[k],
                time: t,
            });
        }
        Ok(())
    }

    pub(crate) fn value(&self, s: Slot) -> f64 {
        self.nodes[s.instance].out_vals[s.index]
    }

    /// The polynomial a link delivers during this step (I2 uses the source's derivative outputs).
    fn extrapolate(&mut self, c: usize, t: f64) {
        // The same point again ([`Self::begin_step`] repeated): from the state before the first time.
        let l = &mut self.links[c];
        if l.history.last().is_some_and(|(t0, _)| t0.to_bits() == t.to_bits()) {
            l.correction = l.before.0;
            if let Some(ic) = &mut l.input_correction {
                (ic.start_power, ic.h) = (l.before.1, l.before.2);
            }
        } else {
            let (p, h) = l.input_correction.map_or((0.0, 0.0), |ic| (ic.start_power, ic.h));
            l.before = (l.correction, p, h);
        }
        let y = self.value(self.links[c].src) * self.links[c].gain + self.links[c].offset;
        let mut derivs = [0.0; MAX_ORDER];
        let n_derivs = self.links[c].i2.len().min(MAX_ORDER);
        for (d, s) in derivs.iter_mut().zip(&self.links[c].i2) {
            *d = self.value(*s) * self.links[c].gain;
        }
        // Per-input correction: this input's energy error over the step that just ended, with
        // ũ(t_{n+1}) the source's output now (after its feedthrough refresh) and u the value the
        // instance used (without the correction); the impulse Δu·H returns α·ΔE_u next step.
        if let Some(ic) = self.links[c].input_correction {
            let l = &self.links[c];
            let y_end = self.value(ic.conjugate);
            let energy = if ic.h > 0.0 {
                0.5 * ic.h * (ic.start_power + (y - (l.used_end - l.correction)) * y_end)
            } else {
                0.0
            };
            let denom = y_end * y_end + ic.floor * ic.floor;
            let impulse = if denom > 0.0 { ic.gain * energy * y_end / denom } else { 0.0 };
            let l = &mut self.links[c];
            l.correction_impulse = if impulse.is_finite() { impulse } else { 0.0 };
            if let Some(ic) = &mut l.input_correction {
                ic.energy = if energy.is_finite() { energy } else { 0.0 };
            }
        }
        let l = &mut self.links[c];
        l.history.push(t, y);
        l.interpolated = false;
        l.poly = if l.i2.is_empty() {
            l.history.extrapolate(l.order, self.h)
        } else {
            // Taylor polynomial from the derivative outputs: c_k = y^(k) / k!.
            let mut p = Poly::constant(y);
            let mut fact = 1.0;
            for (k, d) in derivs.iter().enumerate().take(n_derivs) {
                fact *= (k + 1) as f64;
                p.c[k + 1] = d / fact;
            }
            p.order = n_derivs;
            p
        };
        l.correction = if l.correction_impulse != 0.0 {
            // |Δe| ≤ |e|: a correction never more than reverses the effort (flow near zero).
            let cap = l.poly.c[0].abs();
            (l.correction_impulse / self.h).clamp(-cap, cap)
        } else {
            0.0
        };
        let raw_start = l.poly.c[0];
        if l.correction != 0.0 {
            l.poly.c[0] += l.correction;
        }
        let h = self.h;
        if let Some(ic) = self.links[c].input_correction {
            let start_power = (y - raw_start) * self.value(ic.conjugate);
            if let Some(ic) = &mut self.links[c].input_correction {
                ic.start_power = start_power;
                ic.h = h;
            }
        }
    }

    /// Sets instance i's inputs from the links' polynomials at τ (held value) and, when the FMU
    /// interpolates, their derivatives at τ.
    pub fn apply_inputs(
        &mut self,
        instance: InstanceId,
        instances: &mut [Box<dyn FmuInstance>],
        tau: f64,
        derivatives: bool,
    ) -> Result<()> {
        self.apply_inputs_order(instance, instances, tau, derivatives, 0)
    }

    /// [`Self::apply_inputs`] with derivatives up to at least `min_order` (iterative coupling
    /// interpolates linearly even over order-0 links).
    pub fn apply_inputs_order(
        &mut self,
        instance: InstanceId,
        instances: &mut [Box<dyn FmuInstance>],
        tau: f64,
        derivatives: bool,
        min_order: usize,
    ) -> Result<()> {
        let i = instance.index();
        if self.nodes[i].in_vrs.is_empty() {
            return Ok(());
        }
        self.evaluate_signals(i, tau)?;
        let node = &mut self.nodes[i];
        for (k, c) in node.in_links.iter().enumerate() {
            node.in_vals[k] = self.links[c.index()].poly.value(tau);
        }
        // Time tables: their value at t_n + τ, read from the table (known, not extrapolated).
        let n_links = node.in_links.len();
        for (v, (value, _)) in node.in_vals[n_links..].iter_mut().zip(&node.signal_vals) {
            *v = *value;
        }
        instances[i].set_real(&node.in_vrs, &node.in_vals)?;
        let max_order = node.max_order.max(min_order);
        node.derivative_order = max_order;
        if derivatives && node.interpolates && max_order > 0 {
            for order in 1..=max_order {
                for (k, c) in node.in_links.iter().enumerate() {
                    let poly = &self.links[c.index()].poly;
                    node.in_vals[k] =
                        if tau == 0.0 { poly.derivative_at_0(order) } else { poly.shifted(tau).derivative_at_0(order) };
                }
                // Time tables: the chord over the (sub-)step is the first derivative (0 for
                // steps), the rest are 0: the FMU's input line ends on the table's value.
                for (v, (_, slope)) in node.in_vals[n_links..].iter_mut().zip(&node.signal_vals) {
                    *v = if order == 1 { *slope } else { 0.0 };
                }
                instances[i].set_input_derivatives(&node.in_vrs, order as i32, &node.in_vals)?;
            }
        }
        Ok(())
    }

    /// Instance i's time tables for the (sub-)step that starts at t_n + τ: each table's value
    /// there and, for a linear table, the chord to its value at the end of that (sub-)step —
    /// the derivative that makes an interpolating FMU's input line end exactly on the table
    /// (a slope taken at t_n would run straight past a breakpoint inside the step). Step tables
    /// get derivative 0: the value at the (sub-)step's start holds until the next one.
    fn evaluate_signals(&mut self, i: usize, tau: f64) -> Result<()> {
        let node = &mut self.nodes[i];
        if node.in_signals.is_empty() {
            return Ok(());
        }
        let span = if node.substeps <= 1 { self.h_step } else { self.h / node.substeps as f64 };
        let t0 = self.t_step + tau;
        for (v, k) in node.signal_vals.iter_mut().zip(&node.in_signals) {
            let live = self.tables.overridden[*k];
            if !live.is_nan() {
                *v = (live, 0.0);
                continue;
            }
            let value = self.tables.at(*k, t0)?.0;
            let chord = if self.tables.signals[*k].linear && span > 0.0 {
                (self.tables.before(*k, t0 + span)? - value) / span
            } else {
                0.0
            };
            *v = (value, chord);
        }
        Ok(())
    }

    /// Time table k's value at t (the value set at initialization).
    pub(crate) fn signal_at(&mut self, k: usize, t: f64) -> Result<f64> {
        Ok(self.tables.at(k, t)?.0)
    }

    fn refresh_feedthrough(&mut self, i: usize, instances: &mut [Box<dyn FmuInstance>]) -> Result<()> {
        let node = &mut self.nodes[i];
        if node.ft_vrs.is_empty() {
            return Ok(());
        }
        instances[i].get_real(&node.ft_vrs, &mut node.ft_vals)?;
        for (k, pos) in node.ft_positions.iter().enumerate() {
            node.out_vals[*pos] = node.ft_vals[k];
        }
        Ok(())
    }

    fn copy_discrete(&mut self, instances: &mut [Box<dyn FmuInstance>]) -> Result<()> {
        for d in &mut self.discrete {
            if !d.typed {
                d.value = Value::zero(carrier(instances[d.from.instance].as_ref(), &d.from));
                d.typed = true;
            }
            d.value.read(instances[d.from.instance].as_mut(), d.from.vr)?;
            d.value.write(instances[d.to.instance].as_mut(), d.to.vr)?;
        }
        Ok(())
    }

    /// Steps one instance over [t, t + H]: one doStep when it has no sub-steps; otherwise k
    /// doSteps of its own h = H/k. Before each sub-step, an FMU that interpolates inputs gets the
    /// polynomials' values and derivatives at the sub-step's start; any other gets the inputs
    /// held at the polynomial's value there (the right end for Gauss-Seidel interpolation).
    pub fn step_instance(
        &mut self,
        instance: InstanceId,
        instances: &mut [Box<dyn FmuInstance>],
        t: f64,
    ) -> Result<()> {
        let i = instance.index();
        let k = self.nodes[i].substeps.max(1);
        let calls = self.nodes[i].step_calls;
        // `parallel = "auto"` decides from the first steps' times, with or without the summary's timing.
        let sample = if calls < TIME_ALL_FIRST {
            self.timing || self.sample_first_steps
        } else {
            self.timing && calls.is_multiple_of(TIME_EVERY)
        };
        let t0 = sample.then(Instant::now);
        if k == 1 {
            // Held inputs: the values at τ = 0 are set already ([`Self::begin_step`]); a link
            // interpolated since (Gauss-Seidel, iterative passes) is held at its right end τ = H.
            let node = &self.nodes[i];
            if self.interpolating
                && !node.interpolates
                && node.in_links.iter().any(|c| self.links[c.index()].interpolated)
            {
                self.hold_inputs(i, instances, 0.0)?;
            }
            instances[i].do_step(t, self.h_step)?;
        } else if self.nodes[i].interpolates {
            // Values and derivatives at τ = 0 are set already; each later sub-step starts from
            // the polynomials at its own start.
            let h = self.h / k as f64;
            let order = self.nodes[i].derivative_order;
            for s in 0..k {
                if s > 0 {
                    self.apply_inputs_order(instance, instances, s as f64 * h, true, order)?;
                }
                instances[i].do_step(t + s as f64 * h, h)?;
            }
        } else {
            let h = self.h / k as f64;
            for s in 0..k {
                self.hold_inputs(i, instances, s as f64 * h)?;
                instances[i].do_step(t + s as f64 * h, h)?;
            }
        }
        self.book_step(instance, t0.map(|t0| t0.elapsed().as_secs_f64()));
        Ok(())
    }

    /// Books a step of instance i over [t_n, t_n + H] done, here ([`Coupling::step_instance`]) or
    /// on a worker thread (inputs set before, one `fmi2DoStep`): its time if measured, the call
    /// count, and the input values it used at the end of the step.
    pub fn book_step(&mut self, instance: InstanceId, seconds: Option<f64>) {
        let i = instance.index();
        let Some(node) = self.nodes.get_mut(i) else { return };
        if let Some(s) = seconds {
            node.step_seconds += s;
            node.timed_calls += 1;
        }
        node.step_calls += 1;
        let k = node.substeps.max(1);
        // Input values at the end of the step, as the instance used them.
        let (interp, h_last) = (node.interpolates, self.h - self.h / k as f64);
        for c in &node.in_links {
            let l = &mut self.links[c.index()];
            l.used_end = if interp || l.interpolated {
                l.poly.value(self.h)
            } else {
                l.poly.value(if k == 1 { 0.0 } else { h_last })
            };
        }
    }

    fn hold_inputs(&mut self, i: usize, instances: &mut [Box<dyn FmuInstance>], tau: f64) -> Result<()> {
        if self.nodes[i].in_vrs.is_empty() {
            return Ok(());
        }
        self.evaluate_signals(i, tau)?;
        let node = &mut self.nodes[i];
        let sub = self.h / node.substeps.max(1) as f64;
        for (k, c) in node.in_links.iter().enumerate() {
            let l = &self.links[c.index()];
            // Gauss-Seidel interpolation knows the right end of each sub-step.
            node.in_vals[k] = l.poly.value(if l.interpolated { tau + sub } else { tau });
        }
        // Time tables: the table's value at the sub-step's start t_n + τ.
        let n_links = node.in_links.len();
        for (v, (value, _)) in node.in_vals[n_links..].iter_mut().zip(&node.signal_vals) {
            *v = *value;
        }
        instances[i].set_real(&node.in_vrs, &node.in_vals)
    }

    /// Sets every input at t_n = start + n·H: copies the discrete connections, evaluates the
    /// time tables, extrapolates each link from its history and applies it. Called again at the
    /// same t_n (a new H, an input set from outside since) it gives what one call with the
    /// final state would have given. By default
    /// ([`Exchange::Ordered`]) instances whose outputs feed through go first and those outputs
    /// are re-read after their inputs changed; with [`Exchange::Explicit`] (the papers' explicit
    /// Jacobi) every link uses the outputs as read at t_n, before any input was set.
    pub fn begin_step(&mut self, instances: &mut [Box<dyn FmuInstance>], t: f64) -> Result<()> {
        // 1. Inputs at t_n: time tables, then connections, instances whose outputs feed
        //    through first.
        self.copy_discrete(instances)?;
        self.tables.advance(t);
        for k in &self.discrete_signals {
            let x = self.tables.at(*k, t)?.0;
            let sig = &self.tables.signals[*k];
            set_signal(instances[sig.to.instance].as_mut(), sig, x)?;
        }
        self.t_step = t;
        for idx in 0..self.input_order.len() {
            let i = self.input_order[idx];
            for k in 0..self.nodes[i].in_links.len() {
                let c = self.nodes[i].in_links[k];
                self.extrapolate(c.index(), t);
                self.links[c.index()].used_start = self.links[c.index()].poly.value(0.0);
            }
            self.apply_inputs(InstanceId::new(i), instances, 0.0, true)?;
            if !self.explicit {
                self.refresh_feedthrough(i, instances)?;
            }
            let node = &mut self.nodes[i];
            if !node.inputs_read.is_empty() {
                instances[i].get_real(&node.inputs_read_vrs, &mut node.inputs_read_vals)?;
                for (k, pos) in node.inputs_read.iter().enumerate() {
                    node.out_vals[*pos] = node.inputs_read_vals[k];
                }
            }
        }
        Ok(())
    }

    /// Replaces time table `k` by `value` (held) from the next (sub-)step on, or gives it back
    /// (`None`): a live input ([`crate::live`]).
    pub(crate) fn override_signal(&mut self, k: usize, value: Option<f64>) {
        if let Some(v) = self.tables.overridden.get_mut(k) {
            *v = value.unwrap_or(f64::NAN);
        }
    }

    /// Switches the per-instance step timing of the summary on or off (default on).
    pub fn set_timing(&mut self, on: bool) {
        self.timing = on;
    }

    /// Recorded values as numbers (Real slots; the non-Real recorded variables are read here
    /// too, exactly into [`Self::recorded_exact`], and as [`Value::as_f64`] into `out`: a
    /// Binary or String one is NaN there).
    pub fn recorded(&mut self, instances: &mut [Box<dyn FmuInstance>], out: &mut Vec<f64>) -> Result<()> {
        out.clear();
        for s in &self.recorded {
            out.push(self.value(*s));
        }
        if !self.recorded_typed {
            for ((_, v), x) in self.recorded_discrete.iter().zip(&mut self.recorded_exact) {
                *x = Value::zero(carrier(instances[v.instance].as_ref(), v));
            }
            self.recorded_typed = true;
        }
        for ((pos, v), x) in self.recorded_discrete.iter().zip(&mut self.recorded_exact) {
            x.read(instances[v.instance].as_mut(), v.vr)?;
            out.insert((*pos).min(out.len()), x.as_f64());
        }
        Ok(())
    }

    /// The recorded non-Real variables' values as [`Self::recorded`] read them last, exact, with
    /// their columns (0-based among the recorded values).
    pub fn recorded_exact(&self) -> (&[Value], impl Iterator<Item = usize> + '_) {
        (&self.recorded_exact, self.recorded_discrete.iter().map(|(pos, _)| *pos))
    }

    /// Counts the doStep of instance `i` that ended the simulation (it returned before being
    /// counted in [`Self::step_instance`]).
    pub(crate) fn count_terminating_call(&mut self, i: usize) {
        if let Some(node) = self.nodes.get_mut(i) {
            node.step_calls += 1;
        }
    }

    /// Takes back the count of instance `i`'s last doStep: a step that returned before it was
    /// done ([`FmuInstance::overlap_steps`]) and then ended the simulation is counted by
    /// [`Self::count_terminating_call`] like one that returned the termination itself.
    pub fn uncount_step_call(&mut self, instance: InstanceId) {
        let i = instance.index();
        if let Some(node) = self.nodes.get_mut(i) {
            node.step_calls = node.step_calls.saturating_sub(1);
        }
    }

    /// Seconds inside doStep and doStep calls (macro-step level) per instance. The seconds are
    /// measured on every step of the first 64 and every 16th after, scaled to all steps.
    pub fn step_stats(&self) -> Vec<(f64, u64)> {
        self.nodes
            .iter()
            .map(|n| (n.step_seconds * n.step_calls as f64 / n.timed_calls.max(1) as f64, n.step_calls))
            .collect()
    }
}

/// Topological order of a dependency matrix (dep[a][b]: a before b); Err(cycle) if cyclic.
fn topological(dep: &[Vec<bool>]) -> std::result::Result<Vec<usize>, Vec<usize>> {
    let n = dep.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on stack, 2 done
    let mut order = Vec::with_capacity(n);
    fn visit(
        v: usize,
        dep: &[Vec<bool>],
        state: &mut [u8],
        order: &mut Vec<usize>,
        stack: &mut Vec<usize>,
    ) -> std::result::Result<(), Vec<usize>> {
        state[v] = 1;
        stack.push(v);
        for w in 0..dep.len() {
            if dep[w][v] {
                // w must come before v
                match state[w] {
                    1 => {
                        let from = stack.iter().position(|x| *x == w).unwrap_or(0);
                        let mut cycle = stack[from..].to_vec();
                        cycle.push(w);
                        return Err(cycle);
                    }
                    0 => visit(w, dep, state, order, stack)?,
                    _ => {}
                }
            }
        }
        stack.pop();
        state[v] = 2;
        order.push(v);
        Ok(())
    }
    let mut stack = Vec::new();
    for v in 0..n {
        if state[v] == 0 {
            visit(v, dep, &mut state, &mut order, &mut stack)?;
        }
    }
    Ok(order)
}

/// What the schemes need of the links and instances.
impl Coupling {
    /// The links (connection indices) feeding instance i.
    pub fn inputs_of(&self, instance: InstanceId) -> &[LinkId] {
        let i = instance.index();
        &self.nodes[i].in_links
    }

    /// Number of Real links.
    pub fn link_count(&self) -> usize {
        self.links.len()
    }

    /// Every instance, in the system's order.
    pub fn instances(&self) -> impl ExactSizeIterator<Item = InstanceId> + use<> {
        (0..self.nodes.len()).map(InstanceId::new)
    }

    /// Every Real link.
    pub fn links(&self) -> impl ExactSizeIterator<Item = LinkId> + use<> {
        (0..self.links.len()).map(LinkId::new)
    }

    /// The instance a link reads from.
    pub fn link_source(&self, link: LinkId) -> InstanceId {
        let link = link.index();
        InstanceId::new(self.links[link].src.instance)
    }

    /// The link's value from its source's current output: gain · y + offset.
    pub fn link_source_value(&self, link: LinkId) -> f64 {
        let link = link.index();
        let l = &self.links[link];
        self.value(l.src) * l.gain + l.offset
    }

    /// The value the link's polynomial delivers at the end of the step.
    pub fn link_end_value(&self, link: LinkId) -> f64 {
        let link = link.index();
        self.links[link].poly.value(self.h)
    }

    /// Replaces the link's polynomial for this step by the interpolation between its history and
    /// `y_end` at `t_end` (order max(its order, `min_order`); order 0 holds `y_end`).
    pub fn interpolate_link(&mut self, link: LinkId, t_end: f64, y_end: f64, min_order: usize) {
        let link = link.index();
        let h = self.h;
        let l = &mut self.links[link];
        let order = l.order.max(min_order);
        l.poly = if order == 0 { Poly::constant(y_end) } else { l.history.interpolate_with(t_end, y_end, order, h) };
        l.poly.c[0] += l.correction;
        l.interpolated = true;
        self.interpolating = true;
    }

    /// Whether instance i steps in one `fmi2DoStep` per communication step (it has no own
    /// sub-steps), so that a worker thread can step it with inputs set before.
    pub fn steps_in_one_call(&self, instance: InstanceId) -> bool {
        let i = instance.index();
        self.nodes[i].substeps <= 1
    }

    /// Mean seconds per timed step of each instance so far.
    pub fn mean_step_seconds(&self) -> Vec<f64> {
        self.nodes.iter().map(|n| n.step_seconds / n.timed_calls.max(1) as f64).collect()
    }
}
