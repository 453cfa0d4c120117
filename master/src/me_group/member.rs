//! [`GroupMember`]: one member of a [`Group`] as the schemes see it — an [`FmuInstance`] under
//! its own name, so that connections, recorded columns, bonds and the summary stay per
//! instance. Getters and setters go to the member's FMU; the first `do_step(t, h)` of a
//! communication step integrates the whole group to t + h, the other members' steps find it
//! there. Inputs fed by connections within the group are set by the group at every evaluation
//! of the right-hand side: once running, the scheme's values for them are ignored.

use super::group::Group;
use crate::error::{MasterError, Result};
use crate::fmu::call::status_kind;
use crate::fmu::{Call, FmuInstance, ValueType, Version};
use std::sync::{Arc, Mutex, MutexGuard};

/// One member of a group (see the module's text).
pub(crate) struct GroupMember {
    group: Arc<Mutex<Group>>,
    /// Position in the group.
    index: usize,
    name: String,
    version: Version,
    /// `do_step` calls.
    steps: u64,
    /// Scratch: the inputs from outside the group of one setter call.
    vr: Vec<u32>,
    values: Vec<f64>,
}

impl GroupMember {
    pub(crate) fn new(group: Arc<Mutex<Group>>, index: usize, name: String, version: Version) -> Self {
        Self { group, index, name, version, steps: 0, vr: Vec::new(), values: Vec::new() }
    }
}

/// The group, locked. No FMU call unwinds (the FMU layer turns every failure into an error): a
/// poisoned lock can only follow a panic elsewhere, and the group's data is still whole.
fn lock(group: &Mutex<Group>) -> MutexGuard<'_, Group> {
    group.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl FmuInstance for GroupMember {
    fn name(&self) -> &str {
        &self.name
    }
    fn version(&self) -> Version {
        self.version
    }
    fn do_step(&mut self, t: f64, h: f64) -> Result<()> {
        // The group's termination names the member that asked for it (not a discard of this one).
        self.execute(Call::DoStep { t, h })
    }
    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        let k = self.index;
        let mut g = lock(&self.group);
        match call {
            Call::Setup { start, stop } => {
                g.time = start;
                g.core.members[k].fmu.execute(Call::Setup { start, stop })
            }
            Call::ExitInitialization => {
                g.core.members[k].fmu.execute(Call::ExitInitialization)?;
                g.core.members[k].initialized = true;
                if g.core.members.iter().all(|m| m.initialized) {
                    g.start()?;
                }
                Ok(())
            }
            Call::DoStep { t, h } => {
                drop(g);
                self.steps += 1;
                lock(&self.group).integrate(t, h)
            }
            Call::GetBooleanStatus { kind: status_kind::TERMINATED, out } => {
                *out = g.terminated.is_some();
                Ok(())
            }
            Call::GetRealStatus { kind: status_kind::LAST_SUCCESSFUL_TIME, out } => {
                *out = g.terminated.map_or(g.time, |(_, t)| t);
                Ok(())
            }
            Call::SetFloat64 { vr, values } if g.running => {
                // Inputs from outside the group: kept (a change restarts the integrator) and set.
                let (vrs, vals) = (&mut self.vr, &mut self.values);
                vrs.clear();
                vals.clear();
                let member = &mut g.core.members[k];
                let mut restart = false;
                for (r, v) in vr.iter().zip(values) {
                    if member.internal.contains(r) {
                        continue;
                    }
                    let i = member.inputs.slot(*r);
                    if member.inputs.u0[i].to_bits() != v.to_bits() {
                        restart = true;
                    }
                    member.inputs.u0[i] = *v;
                    member.inputs.du[i] = 0.0;
                    vrs.push(*r);
                    vals.push(*v);
                }
                g.restart |= restart;
                if vrs.is_empty() {
                    return Ok(());
                }
                g.core.members[k].fmu.execute(Call::SetFloat64 { vr: vrs, values: vals })
            }
            Call::SetInputDerivatives { vr, order, values } => {
                if order != 1 {
                    return Err(MasterError::Worker {
                        instance: self.name.clone(),
                        function: "SetInputDerivatives",
                        time: g.time,
                        message: format!(
                            "a Model Exchange instance extrapolates its inputs linearly (order 1), not with order {order}"
                        ),
                    });
                }
                let member = &mut g.core.members[k];
                let mut restart = false;
                for (r, v) in vr.iter().zip(values) {
                    if member.internal.contains(r) {
                        continue;
                    }
                    let i = member.inputs.slot(*r);
                    if member.inputs.du[i] != *v {
                        restart = true;
                    }
                    member.inputs.du[i] = *v;
                }
                g.restart |= restart;
                Ok(())
            }
            c @ (Call::SetInt64 { vr, .. }
            | Call::SetBoolean { vr, .. }
            | Call::SetString { vr, .. }
            | Call::SetUInt64 { vr, .. })
                if g.running =>
            {
                // Discrete connections within the group are copied by its event iteration.
                if vr.iter().all(|r| g.core.members[k].internal.contains(r)) {
                    return Ok(());
                }
                // Discrete inputs change in Event Mode (FMI 2.0.4 §3.2.3): every member enters
                // it, and the group's event comes before the next step.
                if !g.event_pending {
                    g.enter_event_mode()?;
                    g.event_pending = true;
                }
                g.core.members[k].fmu.execute(c)
            }
            Call::SaveState => {
                g.core.members[k].fmu.execute(Call::SaveState)?;
                g.save();
                Ok(())
            }
            Call::RestoreState => {
                g.core.members[k].fmu.execute(Call::RestoreState)?;
                g.restore()
            }
            other => g.core.members[k].fmu.execute(other),
        }
    }
    fn value_type(&self, vr: u32) -> Option<ValueType> {
        lock(&self.group).core.members[self.index].fmu.value_type(vr)
    }
    fn can_interpolate_inputs(&self) -> bool {
        true
    }
    fn call_stats(&self) -> (f64, u64) {
        (lock(&self.group).core.members[self.index].fmu.call_stats().0, self.steps)
    }
    fn fmu_warnings(&self) -> u64 {
        lock(&self.group).core.members[self.index].fmu.fmu_warnings()
    }
    fn solver_stats(&mut self) -> Option<crate::fmu::me::MeStats> {
        Some(lock(&self.group).stats())
    }
    fn set_timing(&mut self, on: bool) {
        lock(&self.group).core.members[self.index].fmu.set_timing(on);
    }
}
