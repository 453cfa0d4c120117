//! Power-bond accounting (SPEC §3.6): the residual power δP = Σ ports' sign·effort·flow of each
//! bond at both ends of every communication step, as the instances saw the values, its energy
//! δE over the step, the totals Σ δE and Σ|δE|, and the divergence bound on Σ|δE|.
//!
//! **Energy correction** (`energy_correction = true`, per bond or for the system) returns the
//! energy the coupling created in step n over step n+1, from the exchanged variables only (like
//! the energy monitoring and correction of B. Rodríguez, F. González et al., Multibody Syst. Dyn.
//! 55, 2022). Two laws (`energy_correction_law`, docs/system-description.md has the equations):
//!
//! - `input` (default; the input correction of NEPCE — M. Benedikt, D. Watzenig, A. Hofer,
//!   "Modelling and analysis of the non-iterative coupling process for co-simulation", Math.
//!   Comput. Model. Dyn. Syst. 19(5), 2013 — and T. Moshagen's energy balance corrections,
//!   arXiv:1706.07273): every port variable u fed by a connection whose conjugate y its own
//!   instance outputs gets back its own energy error ΔE_u = ∫(ũ − u)·y dt (trapezoid from
//!   ũ − u = 0 at t_n) as Δu = α ΔE_u y / (H (y² + y_ε²)). The link computes it when the next
//!   step's inputs are set (`coupling::InputCorrection`), when ũ(t_{n+1}) is the source's
//!   output after its feedthrough refresh; [`Bonds::begin`] sums the bond's −σ ΔE_u for bonds.csv.
//! - `bond` (issue 18's law, for comparison; power bonds as in S. Sadjina, E. Pedersen, "Energy
//!   conservation and coupling error reduction in non-iterative co-simulations", Engineering with
//!   Computers 36, 2020): the bond's whole residual into the port j whose effort e_j is a connected
//!   input and whose flow f_j its own instance outputs,
//!
//! ```text
//! Δe_{n+1} = −α · δE_n · σ_j f_j(t_{n+1}) / ( H_{n+1} · (f_j(t_{n+1})² + f_ε²) )
//! ```
//!
//! Both are held over step n+1 on top of the extrapolated value and limited to |Δu| ≤ |u| (a
//! conjugate near zero cannot make them explode). Both use the *consistent* residual of the
//! *uncorrected* values: the trapezoid from the zero residual at t_n, also at order 0, where
//! Publication III's bookkeeping (`de`: δP(t_{n+1})·H) counts each step twice; feeding back the
//! net residual (correction included) makes the correction chase itself (it diverged on the A.1
//! oscillator at order 0). bonds.csv's `dE`, `E`, `E_abs` are Publication III's bookkeeping as the
//! instances saw the values (correction included); `dE_uncorrected`, `E_uncorrected`,
//! `E_abs_uncorrected` the same without it (what ECCO's error uses); `dE_correction`,
//! `E_correction` the consistent residual the correction returns (× α) over the step.

use crate::coupling::{Coupling, InputCorrection, Slot};
use crate::error::{MasterError, Result};
use crate::system::{CorrectionLaw, System, VarRef};
use model_description::{Causality, ModelDescription};

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
    /// δE of the last step from the exchanged values without the energy correction (J; = `de`
    /// for a bond without correction).
    pub de_uncorrected: f64,
    /// Σ δE without the correction (J).
    pub e_uncorrected: f64,
    /// Σ |δE| without the correction (J).
    pub e_abs_uncorrected: f64,
    /// Effort correction Δe held over the last step (effort unit; 0 without correction; law
    /// `bond` only).
    pub correction: f64,
    /// The consistent residual energy the correction returns (× α) over the last step: the
    /// previous step's, by the trapezoid from the zero residual at its start (law `bond`: the
    /// bond's δE; law `input`: Σ over the bond's corrected inputs of ΔE_u) (J).
    pub de_correction: f64,
    /// Σ `de_correction` (J).
    pub e_correction: f64,
    /// Power level at the end of the last step: the larger |sign·e·f| of the two ports (W);
    /// ECCO's energy level is level·H.
    pub level: f64,
    dp_start: f64,
    dp_start_raw: f64,
    /// Law `bond`: the consistent δE of the step just ended, returned over the next one.
    pending: f64,
}

/// Where a port's value is: an output read after the step, or the value a connected input used.
#[derive(Debug, Clone, Copy)]
enum PortValue {
    Output(Slot),
    Input(usize),
}

#[derive(Debug, Clone)]
struct BondPlan {
    ports: [(PortValue, PortValue, f64); 2],
    /// Energy correction, law `bond`: (the link feeding the corrected effort, that port's flow,
    /// its sign).
    correct: Option<(usize, Slot, f64)>,
    /// Energy correction, law `input`: the links of the corrected inputs and their ports' signs.
    inputs: Vec<(usize, f64)>,
    /// Gain α and floor of the correction.
    gain: f64,
    flow_floor: f64,
}

/// Every bond of a system and its state.
#[derive(Debug, Clone, Default)]
pub struct Bonds {
    plans: Vec<BondPlan>,
    state: Vec<BondState>,
    /// Both input ports held constant over the step (δE = δP(t_{n+1})·H, else trapezoidal).
    order0: Vec<bool>,
    /// `bond "name" between a and b`, for the divergence message.
    labels: Vec<String>,
    /// Divergence bound on each bond's Σ|δE| (J).
    max_residual_energy: Option<f64>,
}

/// The coupling tables of `sys` and its bonds, whose ports read them (`Coupling::build`):
/// `mds[i]` is instance i's description and `interpolates[i]` whether it can interpolate inputs.
pub fn couple(sys: &System, mds: &[&ModelDescription], interpolates: &[bool]) -> Result<(Coupling, Bonds)> {
    Coupling::build(sys, mds, interpolates, |c| Bonds::new(sys, c))
}

impl Bonds {
    /// Resolves each port variable to an output slot of `c` or to the link feeding it.
    pub(crate) fn new(sys: &System, c: &mut Coupling) -> Result<Self> {
        let names = &c.names;
        let mut bonds = Vec::new();
        let mut bond_order0 = Vec::new();
        let labels: Vec<String> = sys
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
                        return Ok(PortValue::Output(c.slot_of(v)));
                    }
                    let link = c
                        .links
                        .iter()
                        .position(|l| l.dst_instance == v.instance && c.nodes[v.instance].in_vrs[l.dst_index] == v.vr)
                        .ok_or_else(|| MasterError::System {
                            path: sys.path.clone(),
                            key: format!("bonds.{}", b.name),
                            message: format!(
                                "port variable {}.{} is an input without a connection: its value is unknown",
                                c.names[v.instance], v.name
                            ),
                        })?;
                    if c.links[link].order > 0 {
                        order0 = false;
                    }
                    Ok(PortValue::Input(link))
                };
                let e = value(&p.effort)?;
                let f = value(&p.flow)?;
                ports.push((e, f, p.sign));
            }
            let ports: [(PortValue, PortValue, f64); 2] = [ports[0], ports[1]];
            let law = b.correction;
            let missing = |message: &str| MasterError::System {
                path: sys.path.clone(),
                key: format!("bonds.{}.energy_correction", b.name),
                message: message.into(),
            };
            let mut inputs = Vec::new();
            if b.energy_correction && law.law == CorrectionLaw::Input {
                // Every port variable fed by a connection whose conjugate its own instance
                // outputs; the flow floor regularizes an effort input (whose conjugate is a flow).
                for (e, f, sign) in &ports {
                    for (u, y, floor) in [(e, f, law.flow_floor), (f, e, 0.0)] {
                        if let (PortValue::Input(link), PortValue::Output(conjugate)) = (u, y) {
                            c.links[*link].input_correction = Some(InputCorrection::new(*conjugate, law.gain, floor));
                            inputs.push((*link, *sign));
                        }
                    }
                }
                if inputs.is_empty() {
                    return Err(missing(
                        "energy correction (law \"input\") changes the inputs of the ports: one port needs a \
                         variable that is a connected input and a conjugate its instance outputs (e.g. the force \
                         input and velocity output of a mechanism in force coupling)",
                    ));
                }
            }
            let correct = if b.energy_correction && law.law == CorrectionLaw::Bond {
                let port = ports.iter().find_map(|p| match p {
                    (PortValue::Input(link), PortValue::Output(flow), sign) => Some((*link, *flow, *sign)),
                    _ => None,
                });
                Some(port.ok_or_else(|| {
                    missing(
                        "energy correction (law \"bond\") changes the effort a port receives: one port needs an effort \
                         that is a connected input and a flow its instance outputs (e.g. the force input of the \
                         mechanism in force coupling)",
                    )
                })?)
            } else {
                None
            };
            bonds.push(BondPlan { ports, correct, inputs, gain: law.gain, flow_floor: law.flow_floor });
            bond_order0.push(order0);
        }

        Ok(Self {
            state: vec![BondState::default(); bonds.len()],
            plans: bonds,
            order0: bond_order0,
            labels,
            max_residual_energy: sys.max_residual_energy,
        })
    }

    /// Whether bond b corrects its residual energy.
    pub fn corrects(&self, b: usize) -> bool {
        self.plans.get(b).is_some_and(|p| p.correct.is_some() || !p.inputs.is_empty())
    }

    /// States after the last step.
    pub fn states(&self) -> &[BondState] {
        &self.state
    }

    /// δP at the step's start, from the inputs just set (call after [`Coupling::begin_step`]),
    /// and the residual energy the correction returns over this step.
    pub fn begin(&mut self, c: &Coupling) {
        for b in 0..self.plans.len() {
            let (dp, raw) = self.bond_power(c, b, false);
            let plan = &self.plans[b];
            let s = &mut self.state[b];
            s.dp_start = dp;
            s.dp_start_raw = raw;
            if plan.correct.is_some() {
                s.de_correction = std::mem::take(&mut s.pending);
            } else if !plan.inputs.is_empty() {
                // The residual an input leaves is σ(u − ũ)·y = −σ ΔE_u.
                s.de_correction = plan
                    .inputs
                    .iter()
                    .filter_map(|(l, sign)| c.links[*l].input_correction.map(|ic| -sign * ic.energy))
                    .sum();
            }
            s.e_correction += s.de_correction;
        }
    }

    /// δP at t_{n+1}, δE over the step of length h and the totals; then the divergence check:
    /// a bond's Σ|δE| beyond the bound (NaN included) stops the run at `t_end`. Bonds with
    /// energy correction hand the next step's correction to the link of their corrected effort.
    pub fn end(&mut self, c: &mut Coupling, h: f64, t_end: f64) -> Result<()> {
        for b in 0..self.plans.len() {
            let (dp, raw) = self.bond_power(c, b, true);
            let level = self.plans[b].ports.iter().map(|p| Self::port_power(c, p, true).abs()).fold(0.0, f64::max);
            let s = &mut self.state[b];
            s.dp = dp;
            s.level = level;
            let trapezoid = |a: f64, z: f64| if self.order0[b] { z * h } else { 0.5 * h * (a + z) };
            s.de = trapezoid(s.dp_start, dp);
            s.de_uncorrected = trapezoid(s.dp_start_raw, raw);
            s.e += s.de;
            s.e_abs += s.de.abs();
            s.e_uncorrected += s.de_uncorrected;
            s.e_abs_uncorrected += s.de_uncorrected.abs();
            let plan = &self.plans[b];
            if let Some((link, flow, sign)) = plan.correct {
                s.correction = c.links[link].correction;
                // The consistent residual: the trapezoid from δP(t_n) also at order 0, where
                // Pub III's bookkeeping (`de`) takes δP(t_{n+1})·H and counts it twice.
                s.pending = 0.5 * h * (s.dp_start_raw + raw);
                // Δe_{n+1}·H_{n+1} = −α δE_n σ f / (f² + f_ε²): the impulse, spread over the next step.
                let f = c.value(flow);
                let denom = f * f + plan.flow_floor * plan.flow_floor;
                let impulse = if denom > 0.0 { -plan.gain * s.pending * sign * f / denom } else { 0.0 };
                c.links[link].correction_impulse = if impulse.is_finite() { impulse } else { 0.0 };
            }
        }
        if let Some(max) = self.max_residual_energy {
            if let Some(b) = self.state.iter().position(|s| s.e_abs.is_nan() || s.e_abs > max) {
                let message = format!(
                    "{}: residual energy Σ|δE| = {:.6e} J exceeds max_residual_energy = {max} J",
                    self.labels[b], self.state[b].e_abs
                );
                return Err(if self.state[b].e_abs.is_nan() {
                    MasterError::Diverged { time: t_end, message }
                } else {
                    MasterError::ResidualEnergyBound {
                        time: t_end,
                        message: format!(
                            "{message} (the cumulative residual energy the coupling has created; \
                             raise the bound or reduce the step if the run is healthy)"
                        ),
                    }
                });
            }
        }
        Ok(())
    }

    fn port_power(c: &Coupling, port: &(PortValue, PortValue, f64), end: bool) -> f64 {
        Self::port_power_with(c, port, end, false)
    }

    /// Port power; `raw`: the input values without the energy correction.
    fn port_power_with(c: &Coupling, port: &(PortValue, PortValue, f64), end: bool, raw: bool) -> f64 {
        let get = |p: PortValue| match p {
            PortValue::Output(s) => c.value(s),
            PortValue::Input(k) => {
                let l = &c.links[k];
                let used = if end { l.used_end } else { l.used_start };
                if raw {
                    used - l.correction
                } else {
                    used
                }
            }
        };
        port.2 * get(port.0) * get(port.1)
    }

    /// δP as the instances saw the values, and without the energy correction.
    fn bond_power(&self, c: &Coupling, b: usize, end: bool) -> (f64, f64) {
        let plan = &self.plans[b];
        let p = |raw| {
            Self::port_power_with(c, &plan.ports[0], end, raw) + Self::port_power_with(c, &plan.ports[1], end, raw)
        };
        if plan.correct.is_some() || !plan.inputs.is_empty() {
            (p(false), p(true))
        } else {
            let dp = p(false);
            (dp, dp)
        }
    }
}
