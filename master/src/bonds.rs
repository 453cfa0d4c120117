//! Power-bond accounting (SPEC §3.6): the residual power δP = Σ ports' sign·effort·flow of each
//! bond at both ends of every communication step, as the instances saw the values, its energy
//! δE over the step, the totals Σ δE and Σ|δE|, and the divergence bound on Σ|δE|.

use crate::coupling::{Coupling, Slot};
use crate::error::{MasterError, Result};
use crate::system::{System, VarRef};
use model_description::Causality;

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

/// Where a port's value is: an output read after the step, or the value a connected input used.
#[derive(Debug, Clone, Copy)]
enum PortValue {
    Output(Slot),
    Input(usize),
}

#[derive(Debug, Clone)]
struct BondPlan {
    ports: [(PortValue, PortValue, f64); 2],
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
            bonds.push(BondPlan { ports });
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

    /// States after the last step.
    pub fn states(&self) -> &[BondState] {
        &self.state
    }

    /// δP at the step's start, from the inputs just set (call after [`Coupling::begin_step`]).
    pub fn begin(&mut self, c: &Coupling) {
        for b in 0..self.plans.len() {
            self.state[b].dp_start = self.bond_power(c, b, false);
        }
    }

    /// δP at t_{n+1}, δE over the step of length h and the totals; then the divergence check:
    /// a bond's Σ|δE| beyond the bound (NaN included) stops the run at `t_end`.
    pub fn end(&mut self, c: &Coupling, h: f64, t_end: f64) -> Result<()> {
        for b in 0..self.plans.len() {
            let dp = self.bond_power(c, b, true);
            let s = &mut self.state[b];
            s.dp = dp;
            s.de = if self.order0[b] { dp * h } else { 0.5 * h * (s.dp_start + dp) };
            s.e += s.de;
            s.e_abs += s.de.abs();
        }
        if let Some(max) = self.max_residual_energy {
            if let Some(b) = self.state.iter().position(|s| s.e_abs.is_nan() || s.e_abs > max) {
                return Err(MasterError::Diverged {
                    time: t_end,
                    message: format!(
                        "{}: residual energy Σ|δE| = {:.6e} J exceeds max_residual_energy = {max} J",
                        self.labels[b], self.state[b].e_abs
                    ),
                });
            }
        }
        Ok(())
    }

    fn port_power(c: &Coupling, port: &(PortValue, PortValue, f64), end: bool) -> f64 {
        let get = |p: PortValue| match p {
            PortValue::Output(s) => c.value(s),
            PortValue::Input(k) => {
                if end {
                    c.links[k].used_end
                } else {
                    c.links[k].used_start
                }
            }
        };
        port.2 * get(port.0) * get(port.1)
    }

    fn bond_power(&self, c: &Coupling, b: usize, end: bool) -> f64 {
        let plan = &self.plans[b];
        Self::port_power(c, &plan.ports[0], end) + Self::port_power(c, &plan.ports[1], end)
    }
}
