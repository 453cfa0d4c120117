//! Gauss-Seidel: instances step one after the other in a fixed order; an instance whose source
//! already stepped sees that source's t_{n+1} output (interpolated between the history and the
//! new value, seed 001 §2), the others see extrapolated values.

use super::{Algorithm, Coupling, InstanceId, LinkId};
use crate::error::Result;
use crate::fmu::FmuInstance;

/// The Gauss-Seidel scheme.
pub struct GaussSeidel {
    /// Stepping order (instance indices).
    order: Vec<usize>,
    stepped: Vec<bool>,
}

impl GaussSeidel {
    /// With the user's order, else one from the connection graph ([`gauss_seidel_order`]).
    pub fn new(order: Option<&[usize]>, c: &Coupling) -> Self {
        let order = order.map_or_else(|| gauss_seidel_order(c), <[usize]>::to_vec);
        Self { stepped: vec![false; c.len()], order }
    }

    /// The stepping order (instance indices).
    pub fn order(&self) -> &[usize] {
        &self.order
    }
}

impl Algorithm for GaussSeidel {
    fn name(&self) -> &'static str {
        "gauss-seidel"
    }

    fn step(&mut self, c: &mut Coupling, instances: &mut [Box<dyn FmuInstance>], _n: u64, t: f64) -> Result<()> {
        let t_end = t + c.h();
        self.stepped.iter_mut().for_each(|s| *s = false);
        for &i in &self.order {
            let id = InstanceId::new(i);
            let mut changed = false;
            for k in 0..c.inputs_of(id).len() {
                let link = c.inputs_of(id)[k];
                if self.stepped[c.link_source(link).index()] {
                    let y_new = c.link_source_value(link);
                    c.interpolate_link(link, t_end, y_new, 0);
                    changed = true;
                }
            }
            if changed {
                c.apply_inputs(id, instances, 0.0, true)?;
            }
            c.step_instance(id, instances, t)?;
            c.read_outputs(id, instances, t_end)?;
            self.stepped[i] = true;
        }
        Ok(())
    }
}

/// Gauss-Seidel order from the connection graph: repeatedly take the instance with the fewest
/// inputs from instances not yet placed (ties: declaration order), which is a topological
/// order when the graph is acyclic and breaks cycles at the fewest extrapolated inputs.
fn gauss_seidel_order(c: &Coupling) -> Vec<usize> {
    let n = c.len();
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for _ in 0..n {
        let pick = (0..n)
            .filter(|i| !placed[*i])
            .min_by_key(|i| {
                let from = |l: &LinkId| c.link_source(*l).index();
                c.inputs_of(InstanceId::new(*i)).iter().filter(|l| !placed[from(l)] && from(l) != *i).count()
            })
            .unwrap_or(0);
        placed[pick] = true;
        order.push(pick);
    }
    order
}
