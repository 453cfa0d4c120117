//! *How* the system is simulated: Jacobi and Gauss-Seidel macro steps, multirate sub-stepping,
//! input extrapolation/interpolation and power-bond residuals (seed 001 §2–3; SPEC §3.6, §4).
//!
//! Call order: [`Engine::new`] (resolves everything to flat index tables once), then
//! [`Engine::initialize`] after the instances left initialization mode, then [`Engine::step`]
//! for n = 0, 1, …. The engine borrows the instances, it never owns them.

use crate::error::{MasterError, Result};
use crate::extrapolation::{History, Poly, MAX_ORDER};
use crate::fmu::Slave;
use crate::system::{AlgorithmKind, Extrapolation, Parallel, System, VarRef};
use model_description::{BaseType, Causality, ModelDescription};
use std::time::Instant;

/// Where a Real value lives: instance and slot in that instance's output buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Slot {
    instance: usize,
    index: usize,
}

/// A Real connection, resolved.
#[derive(Debug, Clone)]
struct RealLink {
    src: Slot,
    dst_instance: usize,
    /// Position among the destination's inputs.
    dst_index: usize,
    gain: f64,
    offset: f64,
    order: usize,
    /// I2: slots of the source's derivative outputs.
    i2: Vec<Slot>,
    history: History,
    poly: Poly,
    /// Input value the destination used at the end of the step (for bonds).
    used_end: f64,
    /// Input value at the start of the step.
    used_start: f64,
    /// This step's polynomial is an interpolation (Gauss-Seidel, source already stepped).
    interpolated: bool,
}

/// A non-Real connection: copied at communication points.
#[derive(Debug, Clone)]
struct DiscreteLink {
    from: VarRef,
    to: VarRef,
}

/// Per-instance tables.
#[derive(Debug, Clone, Default)]
struct Node {
    /// Real variables read after every step (connection sources, I2 derivatives, bond and
    /// recorded variables).
    out_vrs: Vec<u32>,
    out_vals: Vec<f64>,
    /// Names of `out_vrs`, for messages.
    out_names: Vec<String>,
    /// Subset of `out_vrs` positions that have direct feedthrough from inputs and feed others.
    ft_positions: Vec<usize>,
    ft_vrs: Vec<u32>,
    ft_vals: Vec<f64>,
    /// Real inputs: first those fed by connections (`in_links`, same positions), then those
    /// driven by time tables (`in_signals`), set in one batched call per instance.
    in_vrs: Vec<u32>,
    in_vals: Vec<f64>,
    in_links: Vec<usize>,
    in_signals: Vec<usize>,
    /// Each time table's value and slope at the step's start.
    signal_vals: Vec<(f64, f64)>,
    /// Highest extrapolation order among the inputs.
    max_order: usize,
    substeps: u64,
    interpolates: bool,
    /// Seconds inside the timed steps, how many were timed, and all macro-step calls.
    step_seconds: f64,
    timed_calls: u64,
    step_calls: u64,
}

/// Steps timed in full at the start (the thread decision reads them), then every
/// `TIME_EVERY`-th: two clock reads per instance and step cost as much as a small FMU's step.
const TIME_ALL_FIRST: u64 = 64;
const TIME_EVERY: u64 = 16;

/// Residual power of one bond.
#[derive(Debug, Clone, Copy, Default)]
pub struct BondState {
    /// δP at the end of the last step (W).
    pub dp: f64,
    /// δE of the last step (J).
    pub de: f64,
    /// Σ δE (J).
    pub e: f64,
    /// Σ |δE| (J).
    pub e_abs: f64,
    dp_start: f64,
}

#[derive(Debug, Clone, Copy)]
enum PortValue {
    Output(Slot),
    Input(usize),
}

#[derive(Debug, Clone)]
struct BondPlan {
    ports: [(PortValue, PortValue, f64); 2],
}

/// The co-simulation algorithm with all its tables.
pub struct Engine {
    kind: AlgorithmKind,
    h: f64,
    start: f64,
    nodes: Vec<Node>,
    links: Vec<RealLink>,
    discrete: Vec<DiscreteLink>,
    /// Order in which inputs are set at a communication point (feedthrough dependencies first).
    input_order: Vec<usize>,
    /// Gauss-Seidel stepping order.
    gs_order: Vec<usize>,
    bonds: Vec<BondPlan>,
    bond_state: Vec<BondState>,
    bond_order0: Vec<bool>,
    recorded: Vec<Slot>,
    /// Inputs driven by time tables.
    signals: Vec<crate::system::Signal>,
    recorded_discrete: Vec<(usize, VarRef)>,
    parallel: Parallel,
    use_threads: bool,
    pool: Option<crate::pool::Pool>,
    /// Measure the time of each instance's steps (two clock reads per instance and step).
    timing: bool,
    pool_results: Vec<(usize, f64, Result<()>)>,
    /// Instances stepped by the workers (one doStep per macro step) and those sub-stepped here.
    parallel_jobs: Vec<usize>,
    sequential_jobs: Vec<usize>,
    stepped: Vec<bool>,
    names: Vec<String>,
    /// `bond "name" between a and b`, for the divergence message.
    bond_labels: Vec<String>,
    /// Divergence bound on each bond's Σ|δE| (J).
    max_residual_energy: Option<f64>,
    /// Iterative coupling: passes per step at most (1: non-iterative) and the tolerance.
    iterations: u32,
    iteration_tolerance: f64,
    /// Each link's end value of the previous pass (iterative coupling; reused buffer).
    pass_end: Vec<f64>,
    /// Passes done, and steps that reached the pass limit unconverged.
    passes: u64,
    unconverged: u64,
}

fn labelled(names: &[String], v: &VarRef) -> String {
    format!("{}.{}", names[v.instance], v.name)
}

impl Engine {
    /// Resolves the system to flat tables; `mds[i]` is instance i's description and
    /// `interpolates[i]` whether it can interpolate inputs.
    pub fn new(sys: &System, mds: &[&ModelDescription], interpolates: &[bool]) -> Result<Self> {
        let names: Vec<String> = sys.instances.iter().map(|i| i.name.clone()).collect();
        let mut nodes: Vec<Node> = sys
            .instances
            .iter()
            .zip(interpolates)
            .map(|(spec, interp)| Node { substeps: spec.substeps, interpolates: *interp, ..Node::default() })
            .collect();
        fn slot_of(nodes: &mut [Node], v: &VarRef) -> Slot {
            let node = &mut nodes[v.instance];
            let index = node.out_vrs.iter().position(|vr| *vr == v.vr).unwrap_or_else(|| {
                node.out_vrs.push(v.vr);
                node.out_vals.push(0.0);
                node.out_names.push(v.name.clone());
                node.out_vrs.len() - 1
            });
            Slot { instance: v.instance, index }
        }
        let mut links = Vec::new();
        let mut discrete = Vec::new();
        for c in &sys.connections {
            if c.from.ty != BaseType::Real {
                discrete.push(DiscreteLink { from: c.from.clone(), to: c.to.clone() });
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
            node.in_links.push(links.len());
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
            });
        }

        // Time tables join their instance's batched inputs, after the connections.
        for (k, sig) in sys.signals.iter().enumerate() {
            let node = &mut nodes[sig.to.instance];
            node.in_vrs.push(sig.to.vr);
            node.in_vals.push(0.0);
            node.in_signals.push(k);
            node.signal_vals.push((0.0, 0.0));
            if sig.linear {
                node.max_order = node.max_order.max(1);
            }
        }

        // Bonds: each port variable is an output (read) or a connected input (value used).
        let mut bonds = Vec::new();
        let mut bond_order0 = Vec::new();
        let bond_labels = sys
            .bonds
            .iter()
            .map(|b| {
                let [p, q] = &b.ports;
                format!("bond \"{}\" between {} and {}", b.name, names[p.effort.instance], names[q.effort.instance])
            })
            .collect();
        for b in &sys.bonds {
            let mut ports = Vec::new();
            let mut order0 = true;
            for p in &b.ports {
                let mut value = |v: &VarRef| -> Result<PortValue> {
                    if v.causality == Causality::Output {
                        return Ok(PortValue::Output(slot_of(&mut nodes, v)));
                    }
                    let link = links
                        .iter()
                        .position(|l| l.dst_instance == v.instance && nodes[v.instance].in_vrs[l.dst_index] == v.vr)
                        .ok_or_else(|| MasterError::System {
                            path: sys.path.clone(),
                            key: format!("bonds.{}", b.name),
                            message: format!(
                                "port variable {} is an input without a connection: its value is unknown",
                                labelled(&names, v)
                            ),
                        })?;
                    if links[link].order > 0 {
                        order0 = false;
                    }
                    Ok(PortValue::Input(link))
                };
                let e = value(&p.effort)?;
                let f = value(&p.flow)?;
                ports.push((e, f, p.sign));
            }
            let ports: [(PortValue, PortValue, f64); 2] = [ports[0], ports[1]];
            bonds.push(BondPlan { ports });
            bond_order0.push(order0);
        }

        let mut recorded = Vec::new();
        let mut recorded_discrete = Vec::new();
        for v in &sys.outputs {
            if v.ty == BaseType::Real {
                recorded.push(slot_of(&mut nodes, v));
            } else {
                recorded_discrete.push((recorded.len() + recorded_discrete.len(), v.clone()));
            }
        }

        // Direct feedthrough: which read outputs depend on inputs (ModelStructure/Outputs).
        let n = nodes.len();
        let mut ft_dep = vec![vec![false; n]; n]; // ft_dep[a][b]: a's inputs must be set before b reads a's output
        for (i, node) in nodes.iter_mut().enumerate() {
            let md = mds[i];
            for (pos, vr) in node.out_vrs.iter().enumerate() {
                let Some(idx) = md.model_variables.iter().position(|v| {
                    v.value_reference == *vr && v.kind.base_type() == BaseType::Real && v.causality == Causality::Output
                }) else {
                    continue;
                };
                let unknown = md.model_structure.outputs.iter().find(|u| u.index as usize == idx + 1);
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
        for l in &links {
            if nodes[l.src.instance].ft_positions.contains(&l.src.index) && l.src.instance != l.dst_instance {
                ft_dep[l.src.instance][l.dst_instance] = true;
            }
        }
        let input_order = topological(&ft_dep).map_err(|cycle| MasterError::System {
            path: sys.path.clone(),
            key: "connections".into(),
            message: format!(
                "algebraic loop: outputs with direct feedthrough form a cycle through instances {}; \
                 break it by connecting an output without feedthrough (e.g. pressure instead of force coupling)",
                cycle.iter().map(|i| names[*i].as_str()).collect::<Vec<_>>().join(" -> ")
            ),
        })?;
        let gs_order = match &sys.order {
            Some(o) => o.clone(),
            None => gauss_seidel_order(&links, n),
        };
        Ok(Self {
            kind: sys.algorithm,
            h: sys.step,
            start: sys.start,
            bond_state: vec![BondState::default(); bonds.len()],
            bonds,
            bond_order0,
            nodes,
            links,
            discrete,
            input_order,
            gs_order,
            recorded,
            recorded_discrete,
            signals: sys.signals.clone(),
            parallel: sys.parallel,
            use_threads: sys.parallel == Parallel::On,
            pool: None,
            timing: true,
            pool_results: Vec::with_capacity(n),
            parallel_jobs: (0..n).filter(|i| interpolates[*i] || sys.instances[*i].substeps <= 1).collect(),
            sequential_jobs: (0..n).filter(|i| !(interpolates[*i] || sys.instances[*i].substeps <= 1)).collect(),
            stepped: vec![false; n],
            names,
            bond_labels,
            max_residual_energy: sys.max_residual_energy,
            iterations: sys.iterations,
            iteration_tolerance: sys.iteration_tolerance,
            pass_end: Vec::new(),
            passes: 0,
            unconverged: 0,
        })
    }

    /// The Gauss-Seidel order (instance indices).
    pub fn gauss_seidel_order(&self) -> &[usize] {
        &self.gs_order
    }

    /// Reads every instance's outputs at the start time (after initialization).
    pub fn initialize(&mut self, slaves: &mut [Box<dyn Slave>]) -> Result<()> {
        for i in 0..self.nodes.len() {
            self.read_outputs(i, slaves, self.start)?;
        }
        Ok(())
    }

    fn read_outputs(&mut self, i: usize, slaves: &mut [Box<dyn Slave>], t: f64) -> Result<()> {
        let node = &mut self.nodes[i];
        if node.out_vrs.is_empty() {
            return Ok(());
        }
        slaves[i].get_real(&node.out_vrs, &mut node.out_vals)?;
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

    fn value(&self, s: Slot) -> f64 {
        self.nodes[s.instance].out_vals[s.index]
    }

    /// The polynomial a link delivers during this step (I2 uses the source's derivative outputs).
    fn extrapolate(&mut self, c: usize, t: f64) {
        let y = self.value(self.links[c].src) * self.links[c].gain + self.links[c].offset;
        let mut derivs = [0.0; MAX_ORDER];
        let n_derivs = self.links[c].i2.len().min(MAX_ORDER);
        for (d, s) in derivs.iter_mut().zip(&self.links[c].i2) {
            *d = self.value(*s) * self.links[c].gain;
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
    }

    /// Sets instance i's inputs from the links' polynomials at τ (held value) and, when the FMU
    /// interpolates, the derivatives at τ = 0.
    fn apply_inputs(&mut self, i: usize, slaves: &mut [Box<dyn Slave>], tau: f64, derivatives: bool) -> Result<()> {
        self.apply_inputs_order(i, slaves, tau, derivatives, 0)
    }

    /// [`Self::apply_inputs`] with derivatives up to at least `min_order` (iterative coupling
    /// interpolates linearly even over order-0 links).
    fn apply_inputs_order(
        &mut self,
        i: usize,
        slaves: &mut [Box<dyn Slave>],
        tau: f64,
        derivatives: bool,
        min_order: usize,
    ) -> Result<()> {
        let node = &mut self.nodes[i];
        if node.in_vrs.is_empty() {
            return Ok(());
        }
        for (k, c) in node.in_links.iter().enumerate() {
            node.in_vals[k] = self.links[*c].poly.value(tau);
        }
        let n_links = node.in_links.len();
        for (v, (value, _)) in node.in_vals[n_links..].iter_mut().zip(&node.signal_vals) {
            *v = *value;
        }
        slaves[i].set_real(&node.in_vrs, &node.in_vals)?;
        let max_order = node.max_order.max(min_order);
        if derivatives && node.interpolates && max_order > 0 {
            for order in 1..=max_order {
                for (k, c) in node.in_links.iter().enumerate() {
                    node.in_vals[k] = self.links[*c].poly.derivative_at_0(order);
                }
                // Time tables: the slope (0 for steps) is the first derivative, the rest are 0.
                for (v, (_, slope)) in node.in_vals[n_links..].iter_mut().zip(&node.signal_vals) {
                    *v = if order == 1 { *slope } else { 0.0 };
                }
                slaves[i].set_input_derivatives(&node.in_vrs, order as i32, &node.in_vals)?;
            }
        }
        Ok(())
    }

    fn refresh_feedthrough(&mut self, i: usize, slaves: &mut [Box<dyn Slave>]) -> Result<()> {
        let node = &mut self.nodes[i];
        if node.ft_vrs.is_empty() {
            return Ok(());
        }
        slaves[i].get_real(&node.ft_vrs, &mut node.ft_vals)?;
        for (k, pos) in node.ft_positions.iter().enumerate() {
            node.out_vals[*pos] = node.ft_vals[k];
        }
        Ok(())
    }

    fn copy_discrete(&mut self, slaves: &mut [Box<dyn Slave>]) -> Result<()> {
        for d in &self.discrete {
            match d.from.ty {
                BaseType::Boolean => {
                    let mut v = [false];
                    slaves[d.from.instance].get_boolean(&[d.from.vr], &mut v)?;
                    slaves[d.to.instance].set_boolean(&[d.to.vr], &v)?;
                }
                BaseType::String => {
                    let v = slaves[d.from.instance].get_string(&[d.from.vr])?;
                    let refs: Vec<&str> = v.iter().map(String::as_str).collect();
                    slaves[d.to.instance].set_string(&[d.to.vr], &refs)?;
                }
                _ => {
                    let mut v = [0];
                    slaves[d.from.instance].get_integer(&[d.from.vr], &mut v)?;
                    slaves[d.to.instance].set_integer(&[d.to.vr], &v)?;
                }
            }
        }
        Ok(())
    }

    fn port_power(&self, port: &(PortValue, PortValue, f64), end: bool) -> f64 {
        let get = |p: PortValue| match p {
            PortValue::Output(s) => self.value(s),
            PortValue::Input(c) => {
                if end {
                    self.links[c].used_end
                } else {
                    self.links[c].used_start
                }
            }
        };
        port.2 * get(port.0) * get(port.1)
    }

    fn bond_power(&self, b: usize, end: bool) -> f64 {
        let plan = &self.bonds[b];
        self.port_power(&plan.ports[0], end) + self.port_power(&plan.ports[1], end)
    }

    /// Steps one instance over [t, t + H]: one doStep when it interpolates inputs or has no
    /// sub-steps; otherwise k doSteps of h = H/k with the inputs held at the polynomial's value at
    /// each sub-step (the right end for Gauss-Seidel interpolation).
    fn step_instance(&mut self, i: usize, slaves: &mut [Box<dyn Slave>], t: f64) -> Result<()> {
        let k = self.nodes[i].substeps.max(1);
        let calls = self.nodes[i].step_calls;
        // `parallel = "auto"` decides from the first steps' times, with or without the summary's timing.
        let sample = if calls < TIME_ALL_FIRST {
            self.timing || self.parallel == Parallel::Auto
        } else {
            self.timing && calls.is_multiple_of(TIME_EVERY)
        };
        let t0 = sample.then(Instant::now);
        if self.nodes[i].interpolates || k == 1 {
            if !self.nodes[i].interpolates {
                // Held inputs: the value at τ = 0, or at τ = H for interpolated links.
                self.hold_inputs(i, slaves, 0.0)?;
            }
            slaves[i].do_step(t, self.h)?;
        } else {
            let h = self.h / k as f64;
            for s in 0..k {
                self.hold_inputs(i, slaves, s as f64 * h)?;
                slaves[i].do_step(t + s as f64 * h, h)?;
            }
        }
        let node = &mut self.nodes[i];
        if let Some(t0) = t0 {
            node.step_seconds += t0.elapsed().as_secs_f64();
            node.timed_calls += 1;
        }
        node.step_calls += 1;
        // Input values at the end of the step, as the instance used them.
        let (interp, h_last) = (node.interpolates, self.h - self.h / k as f64);
        for c in &node.in_links {
            let l = &mut self.links[*c];
            l.used_end = if interp || l.interpolated {
                l.poly.value(self.h)
            } else {
                l.poly.value(if k == 1 { 0.0 } else { h_last })
            };
        }
        Ok(())
    }

    fn hold_inputs(&mut self, i: usize, slaves: &mut [Box<dyn Slave>], tau: f64) -> Result<()> {
        let node = &mut self.nodes[i];
        if node.in_vrs.is_empty() {
            return Ok(());
        }
        let sub = self.h / node.substeps.max(1) as f64;
        for (k, c) in node.in_links.iter().enumerate() {
            let l = &self.links[*c];
            // Gauss-Seidel interpolation knows the right end of each sub-step.
            node.in_vals[k] = l.poly.value(if l.interpolated { tau + sub } else { tau });
        }
        // Time tables stay at their value at the macro step's start.
        let n_links = node.in_links.len();
        for (v, (value, _)) in node.in_vals[n_links..].iter_mut().zip(&node.signal_vals) {
            *v = *value;
        }
        slaves[i].set_real(&node.in_vrs, &node.in_vals)
    }

    /// One macro step from t_n = start + n·H.
    pub fn step(&mut self, n: u64, slaves: &mut [Box<dyn Slave>]) -> Result<()> {
        let t = self.start + n as f64 * self.h;
        // 1. Inputs at t_n: time tables, then connections, instances whose outputs feed
        //    through first.
        self.copy_discrete(slaves)?;
        for node in &mut self.nodes {
            for (v, k) in node.signal_vals.iter_mut().zip(&node.in_signals) {
                *v = self.signals[*k].at(t);
            }
        }
        for idx in 0..self.input_order.len() {
            let i = self.input_order[idx];
            for k in 0..self.nodes[i].in_links.len() {
                let c = self.nodes[i].in_links[k];
                self.extrapolate(c, t);
                self.links[c].used_start = self.links[c].poly.value(0.0);
            }
            self.apply_inputs(i, slaves, 0.0, true)?;
            self.refresh_feedthrough(i, slaves)?;
        }
        for b in 0..self.bonds.len() {
            self.bond_state[b].dp_start = self.bond_power(b, false);
        }
        // 2. Step.
        match self.kind {
            AlgorithmKind::Jacobi if self.iterations > 1 => self.step_iterative(slaves, t)?,
            AlgorithmKind::Jacobi => {
                if self.use_threads {
                    self.step_parallel(slaves, t)?;
                } else {
                    for i in 0..self.nodes.len() {
                        self.step_instance(i, slaves, t)?;
                    }
                }
                for i in 0..self.nodes.len() {
                    self.read_outputs(i, slaves, t + self.h)?;
                }
                if self.parallel == Parallel::Auto && n == 20 {
                    self.decide_threads();
                }
            }
            AlgorithmKind::GaussSeidel => {
                self.stepped.iter_mut().for_each(|s| *s = false);
                for idx in 0..self.gs_order.len() {
                    let i = self.gs_order[idx];
                    let mut changed = false;
                    for k in 0..self.nodes[i].in_links.len() {
                        let c = self.nodes[i].in_links[k];
                        let src = self.links[c].src;
                        if self.stepped[src.instance] {
                            let y_new = self.value(src) * self.links[c].gain + self.links[c].offset;
                            let l = &mut self.links[c];
                            l.poly = if l.order == 0 {
                                Poly::constant(y_new)
                            } else {
                                l.history.interpolate_with(t + self.h, y_new, l.order, self.h)
                            };
                            l.interpolated = true;
                            changed = true;
                        }
                    }
                    if changed {
                        self.apply_inputs(i, slaves, 0.0, true)?;
                    }
                    self.step_instance(i, slaves, t)?;
                    self.read_outputs(i, slaves, t + self.h)?;
                    self.stepped[i] = true;
                }
            }
        }
        // 3. Bonds at t_{n+1}.
        for b in 0..self.bonds.len() {
            let dp = self.bond_power(b, true);
            let s = &mut self.bond_state[b];
            s.dp = dp;
            s.de = if self.bond_order0[b] { dp * self.h } else { 0.5 * self.h * (s.dp_start + dp) };
            s.e += s.de;
            s.e_abs += s.de.abs();
        }
        // 4. Divergence: a bond's accumulated |residual energy| beyond the bound (NaN included).
        if let Some(max) = self.max_residual_energy {
            if let Some(b) = self.bond_state.iter().position(|s| s.e_abs.is_nan() || s.e_abs > max) {
                return Err(MasterError::Diverged {
                    time: t + self.h,
                    message: format!(
                        "{}: residual energy Σ|δE| = {:.6e} J exceeds max_residual_energy = {max} J",
                        self.bond_labels[b], self.bond_state[b].e_abs
                    ),
                });
            }
        }
        Ok(())
    }

    /// Iterative (implicit) Jacobi coupling: the step is repeated from the saved FMU states, each
    /// pass with every connection interpolated between its value at t_n and the source's newest
    /// t_{n+1} output (order max(m, 1) through the history), until no connection's end value
    /// changes by more than the tolerance (relative to max(|y|, 1)) or the pass limit is reached.
    /// Converged, every instance has seen the others' end-of-step values: the coupling error of
    /// the explicit schemes is gone (seed 001 §2: iterative co-simulation).
    fn step_iterative(&mut self, slaves: &mut [Box<dyn Slave>], t: f64) -> Result<()> {
        for s in slaves.iter_mut() {
            s.save_state()?;
        }
        self.pass_end.clear();
        for c in 0..self.links.len() {
            let y = self.links[c].poly.value(self.h);
            self.pass_end.push(y);
        }
        for pass in 1..=self.iterations {
            for i in 0..self.nodes.len() {
                self.step_instance(i, slaves, t)?;
            }
            for i in 0..self.nodes.len() {
                self.read_outputs(i, slaves, t + self.h)?;
            }
            self.passes += 1;
            let mut change: f64 = 0.0;
            for c in 0..self.links.len() {
                let y = self.value(self.links[c].src) * self.links[c].gain + self.links[c].offset;
                change = change.max((y - self.pass_end[c]).abs() / y.abs().max(1.0));
                self.pass_end[c] = y;
            }
            if change <= self.iteration_tolerance {
                return Ok(());
            }
            if pass == self.iterations {
                self.unconverged += 1;
                return Ok(());
            }
            for s in slaves.iter_mut() {
                s.restore_state()?;
            }
            for c in 0..self.links.len() {
                let y = self.pass_end[c];
                let l = &mut self.links[c];
                l.poly = l.history.interpolate_with(t + self.h, y, l.order.max(1), self.h);
                l.interpolated = true;
            }
            for i in 0..self.nodes.len() {
                self.apply_inputs_order(i, slaves, 0.0, true, 1)?;
            }
        }
        Ok(())
    }

    /// Iterative coupling: (passes done, steps that ended unconverged at the pass limit).
    pub fn iteration_stats(&self) -> (u64, u64) {
        (self.passes, self.unconverged)
    }

    fn step_parallel(&mut self, slaves: &mut [Box<dyn Slave>], t: f64) -> Result<()> {
        // Instances that are sub-stepped by the master with held inputs run here; the others'
        // inputs were set already, so the workers only call fmi2DoStep.
        let h = self.h;
        if self.pool.is_none() {
            let workers = self
                .parallel_jobs
                .len()
                .saturating_sub(1)
                .min(std::thread::available_parallelism().map_or(1, |n| n.get()).saturating_sub(1).max(1));
            self.pool = Some(crate::pool::Pool::new(workers).map_err(|e| MasterError::Diverged {
                time: t,
                message: format!("cannot start worker threads: {e}"),
            })?);
        }
        let mut results = std::mem::take(&mut self.pool_results);
        if let Some(pool) = &self.pool {
            pool.step(slaves, &self.parallel_jobs, t, h, &mut results);
        }
        for (i, dt, r) in results.drain(..) {
            r?;
            if let Some(node) = self.nodes.get_mut(i) {
                node.step_seconds += dt;
                node.timed_calls += 1;
                node.step_calls += 1;
                let interp = node.interpolates;
                for c in &node.in_links {
                    let l = &mut self.links[*c];
                    l.used_end = l.poly.value(if interp { h } else { 0.0 });
                }
            }
        }
        self.pool_results = results;
        for k in 0..self.sequential_jobs.len() {
            let i = self.sequential_jobs[k];
            self.step_instance(i, slaves, t)?;
        }
        Ok(())
    }

    /// After 20 sequential steps: threads pay when at least two instances each cost more than
    /// the ~20 µs a scoped thread costs to start and join.
    fn decide_threads(&mut self) {
        let mut costs: Vec<f64> = self.nodes.iter().map(|n| n.step_seconds / n.timed_calls.max(1) as f64).collect();
        costs.sort_by(|a, b| b.total_cmp(a));
        self.use_threads = costs.len() >= 2 && costs[1] > 50e-6;
    }

    /// Switches the per-instance step timing of the summary on or off (default on).
    pub fn set_timing(&mut self, on: bool) {
        self.timing = on;
    }

    /// Whether Jacobi steps run on worker threads now.
    pub fn uses_threads(&self) -> bool {
        self.use_threads
    }

    /// Recorded values (Real slots; non-Real recorded variables are read here too).
    pub fn recorded(&self, slaves: &mut [Box<dyn Slave>], out: &mut Vec<f64>) -> Result<()> {
        out.clear();
        for s in &self.recorded {
            out.push(self.value(*s));
        }
        for (pos, v) in &self.recorded_discrete {
            let x = match v.ty {
                BaseType::Boolean => {
                    let mut b = [false];
                    slaves[v.instance].get_boolean(&[v.vr], &mut b)?;
                    f64::from(u8::from(b[0]))
                }
                _ => {
                    let mut k = [0];
                    slaves[v.instance].get_integer(&[v.vr], &mut k)?;
                    f64::from(k[0])
                }
            };
            out.insert((*pos).min(out.len()), x);
        }
        Ok(())
    }

    /// Bond states after the last step.
    pub fn bonds(&self) -> &[BondState] {
        &self.bond_state
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

/// Gauss-Seidel order from the connection graph: repeatedly take the instance with the fewest
/// inputs from instances not yet placed (ties: declaration order), which is a topological
/// order when the graph is acyclic and breaks cycles at the fewest extrapolated inputs.
fn gauss_seidel_order(links: &[RealLink], n: usize) -> Vec<usize> {
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for _ in 0..n {
        let pick = (0..n)
            .filter(|i| !placed[*i])
            .min_by_key(|i| {
                links.iter().filter(|l| l.dst_instance == *i && !placed[l.src.instance] && l.src.instance != *i).count()
            })
            .unwrap_or(0);
        placed[pick] = true;
        order.push(pick);
    }
    order
}
