//! Strong coupling of Model Exchange instances (issue 52 item 2): a group of ME instances is
//! integrated as one ODE by one integrator, their connections resolved at every evaluation of the
//! right-hand side ([`group`]). To the schemes the group is one participant: each member stays an
//! instance under its own name ([`member`]), the first member's step of a communication step
//! integrates the whole group, inputs from outside the group are set (held or extrapolated) at
//! communication points exactly as for any instance, and outputs are read there.
//!
//! Which instances form groups ([`assemble`]): the ME instances with the same
//! `[instances.x] me_group`; the others together when `[simulation] me_coupling = "strong"` (the
//! default), each alone when `"weak"`. A group of one is a plain ME instance
//! ([`crate::fmu::MeInstance`]). Isolated runs (`isolate`) keep every instance in its own worker
//! process, so there every ME instance is integrated on its own.

mod group;
mod member;

use crate::error::{MasterError, Result};
use crate::fmu::{FmuInstance, Instance, Interface};
use crate::system::{MeCoupling, System};
use group::{DiscreteLink, Group, Link, Member};
use member::GroupMember;
use model_description::{BaseType, Causality, ModelDescription};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

/// The system's instances as the execution holds them: the members of every group of two or more
/// Model Exchange instances wrapped as [`GroupMember`]s of one [`Group`], every other instance
/// boxed as it is. `mds[i]` is instance i's description. An algebraic loop among a group's
/// members is refused, the loop named (`a.y → b.u → b.z → a.v → a.y`).
pub fn assemble(
    system: &System,
    instances: Vec<Instance>,
    mds: &[&ModelDescription],
) -> Result<Vec<Box<dyn FmuInstance>>> {
    let groups = groups(system, &instances)?;
    let mut slots: Vec<Option<Instance>> = instances.into_iter().map(Some).collect();
    let mut out: Vec<Option<Box<dyn FmuInstance>>> = (0..slots.len()).map(|_| None).collect();
    for members in groups.values().filter(|m| m.len() > 1) {
        let position: HashMap<usize, usize> = members.iter().enumerate().map(|(k, i)| (*i, k)).collect();
        let (links, discrete) = links(system, mds, members, &position)?;
        let mut fmus = Vec::new();
        let mut options = None;
        let mut versions = Vec::new();
        for (k, i) in members.iter().enumerate() {
            let Some(instance) = slots[*i].take() else { continue };
            let version = instance.version();
            let (fmu, o) = instance.into_model_exchange().map_err(|i| MasterError::System {
                path: system.path().to_path_buf(),
                key: format!("instances.{}", i.name()),
                message: "not a Model Exchange instance".into(),
            })?;
            let internal: Vec<u32> = links
                .iter()
                .filter(|l| l.dst == k)
                .map(|l| l.dst_vr)
                .chain(discrete.iter().filter(|d| d.dst == k).map(|d| d.dst_vr))
                .collect();
            options.get_or_insert(o);
            versions.push(version);
            fmus.push(Member::new(fmu, internal));
        }
        let names: Vec<String> = fmus.iter().map(|m| m.name.clone()).collect();
        let group = Arc::new(Mutex::new(Group::new(fmus, links, discrete, options.unwrap_or_default())));
        for (k, i) in members.iter().enumerate() {
            out[*i] = Some(Box::new(GroupMember::new(Arc::clone(&group), k, names[k].clone(), versions[k])));
        }
    }
    Ok(slots
        .into_iter()
        .zip(out)
        .filter_map(|(instance, member)| member.or_else(|| instance.map(Instance::boxed)))
        .collect())
}

/// The groups by name ("" for the default group of `me_coupling = "strong"`), each its
/// instances' indices in system order; an `me_group` on a Co-Simulation instance is an error.
fn groups(system: &System, instances: &[Instance]) -> Result<BTreeMap<String, Vec<usize>>> {
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, (spec, instance)) in system.instances().iter().zip(instances).enumerate() {
        let me = instance.fmu().interface() == Interface::ModelExchange;
        match (&spec.me_group, me) {
            (Some(g), true) => groups.entry(format!("group {g}")).or_default().push(i),
            (Some(g), false) => {
                return Err(MasterError::System {
                    path: system.path().to_path_buf(),
                    key: format!("instances.{}.me_group", spec.name),
                    message: format!(
                        "instance {} runs as Co-Simulation: me_group = \"{g}\" groups Model Exchange instances \
                         (an FMU that has both interfaces runs as Model Exchange with [simulation] interface = \"me\")",
                        spec.name
                    ),
                });
            }
            (None, true) if system.me_coupling() == MeCoupling::Strong => {
                groups.entry(String::new()).or_default().push(i)
            }
            _ => {}
        }
    }
    Ok(groups)
}

/// The connections within a group (member positions in `position`): the Real ones in dependency
/// order (a source output after every connection into an input it depends on), the others as
/// they come. A cycle is an algebraic loop, refused with its variables named.
fn links(
    system: &System,
    mds: &[&ModelDescription],
    members: &[usize],
    position: &HashMap<usize, usize>,
) -> Result<(Vec<Link>, Vec<DiscreteLink>)> {
    let mut real = Vec::new();
    let mut discrete = Vec::new();
    for c in system.connections() {
        let (Some(&src), Some(&dst)) = (position.get(&c.from.instance), position.get(&c.to.instance)) else {
            continue;
        };
        if c.from.ty == BaseType::Real {
            real.push((c, src, dst));
        } else {
            discrete.push(DiscreteLink { src, src_vr: c.from.vr, dst, dst_vr: c.to.vr, ty: c.from.ty, value: None });
        }
    }
    // depends[a] = the links a's source output depends on (they set an input of its instance
    // that the output depends on).
    let inputs_of_output: Vec<Vec<u32>> =
        real.iter().map(|(c, _, _)| feedthrough(mds[c.from.instance], c.from.vr)).collect();
    let depends: Vec<Vec<usize>> = real
        .iter()
        .enumerate()
        .map(|(a, (c, _, _))| {
            (0..real.len())
                .filter(|b| {
                    let (d, _, _) = real[*b];
                    d.to.instance == c.from.instance && inputs_of_output[a].contains(&d.to.vr)
                })
                .collect()
        })
        .collect();
    let order = order(&depends).map_err(|cycle| {
        let names = system.instances();
        let var = |v: &crate::system::VarRef| format!("{}.{}", names[v.instance].name, v.name);
        // Each link of the cycle depends on the next one: written in the direction values flow.
        let mut steps: Vec<String> = Vec::new();
        for l in cycle.iter().rev() {
            let (c, _, _) = real[*l];
            steps.push(var(&c.from));
            steps.push(var(&c.to));
        }
        if let Some(first) = steps.first().cloned() {
            steps.push(first);
        }
        MasterError::System {
            path: system.path().to_path_buf(),
            key: "connections".into(),
            message: format!(
                "algebraic loop among the strongly coupled Model Exchange instances {}: {} (each output \
                 depends directly on the input before it, ModelStructure); break the loop, or integrate \
                 these instances on their own ([simulation] me_coupling = \"weak\", or different \
                 [instances.x] me_group)",
                members.iter().map(|i| names[*i].name.as_str()).collect::<Vec<_>>().join(", "),
                steps.join(" → ")
            ),
        }
    })?;
    let links = order
        .into_iter()
        .map(|k| {
            let (c, src, dst) = real[k];
            Link { src, src_vr: c.from.vr, dst, dst_vr: c.to.vr, gain: c.gain, offset: c.offset, last: f64::NAN }
        })
        .collect();
    Ok((links, discrete))
}

/// The value references of the inputs that output `vr` depends on directly (ModelStructure):
/// none for a variable that is not an output, every input when the output declares no
/// dependencies.
fn feedthrough(md: &ModelDescription, vr: u32) -> Vec<u32> {
    let real_input = |v: &&model_description::ScalarVariable| {
        v.causality == Causality::Input && v.kind.base_type() == BaseType::Real
    };
    let Some(index) = md.model_variables.iter().position(|v| {
        v.value_reference == vr && v.causality == Causality::Output && v.kind.base_type() == BaseType::Real
    }) else {
        return Vec::new();
    };
    let unknown = md.model_structure.outputs.iter().find(|u| u.index as usize == index + 1);
    match unknown.and_then(|u| u.dependencies.as_ref()) {
        None => md.model_variables.iter().filter(real_input).map(|v| v.value_reference).collect(),
        Some(deps) => deps
            .iter()
            .filter_map(|d| md.variable_by_index(*d))
            .filter(|v| real_input(v))
            .map(|v| v.value_reference)
            .collect(),
    }
}

/// A topological order of `depends` (each index after those it depends on); `Err`: a cycle, each
/// element depending on the next, the last on the first.
fn order(depends: &[Vec<usize>]) -> std::result::Result<Vec<usize>, Vec<usize>> {
    let n = depends.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on the path, 2 done
    let mut out = Vec::with_capacity(n);
    let mut path: Vec<usize> = Vec::new();
    fn visit(
        v: usize,
        depends: &[Vec<usize>],
        state: &mut [u8],
        out: &mut Vec<usize>,
        path: &mut Vec<usize>,
    ) -> std::result::Result<(), Vec<usize>> {
        state[v] = 1;
        path.push(v);
        for &w in &depends[v] {
            match state[w] {
                1 => {
                    let from = path.iter().position(|x| *x == w).unwrap_or(0);
                    return Err(path[from..].to_vec());
                }
                0 => visit(w, depends, state, out, path)?,
                _ => {}
            }
        }
        path.pop();
        state[v] = 2;
        out.push(v);
        Ok(())
    }
    for v in 0..n {
        if state[v] == 0 {
            visit(v, depends, &mut state, &mut out, &mut path)?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::order;

    #[test]
    fn order_puts_dependencies_first_and_names_a_cycle() {
        // 0 depends on 1, 1 on 2.
        assert_eq!(order(&[vec![1], vec![2], vec![]]), Ok(vec![2, 1, 0]));
        // 0 → 1 → 2 → 0.
        let cycle = order(&[vec![1], vec![2], vec![0]]).unwrap_err();
        assert_eq!(cycle, vec![0, 1, 2]);
    }
}
