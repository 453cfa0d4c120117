//! Names as identifiers (`[a-zA-Z][a-zA-Z0-9_]*`) for the SSD's `name`, the system's and the
//! components' names. SSP 1.0 allows any non-empty name; OMSimulator requires identifiers
//! ("\"oscillator-fd\" is not a valid ident"). The original name is kept where SSP allows it:
//! the element's `description` attribute.

use crate::system::SystemBuilder;
use std::collections::BTreeMap;

/// Whether `name` is an identifier.
pub(super) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic()) && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `name` as an identifier: other characters become `_`, and a name that does not start with a
/// letter gets the prefix `n_`.
pub(super) fn identifier(name: &str) -> String {
    let mut s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        s.insert_str(0, "n_");
    }
    s
}

/// Renames every instance of `b` whose name is not an identifier, everywhere the name occurs
/// (connections, inputs, bonds, outputs, the Gauss-Seidel order); a clash gets `_2`, `_3`, ….
/// Returns new name → original name for the renamed ones.
pub(super) fn rename_instances(b: &mut SystemBuilder) -> BTreeMap<String, String> {
    let mut renamed = BTreeMap::new();
    let names: Vec<String> = b.instances.keys().cloned().collect();
    let mut map: BTreeMap<String, String> = BTreeMap::new();
    for old in names.iter().filter(|n| !is_identifier(n)) {
        let base = identifier(old);
        let mut new = base.clone();
        let mut k = 2;
        while b.instances.contains_key(&new) || map.values().any(|v| *v == new) {
            new = format!("{base}_{k}");
            k += 1;
        }
        map.insert(old.clone(), new);
    }
    if map.is_empty() {
        return renamed;
    }
    let var = |s: &str| match s.split_once('.') {
        Some((inst, v)) => map.get(inst).map_or_else(|| s.to_owned(), |n| format!("{n}.{v}")),
        None => s.to_owned(),
    };
    for (old, new) in &map {
        if let Some(inst) = b.instances.remove(old) {
            b.instances.insert(new.clone(), inst);
        }
        renamed.insert(new.clone(), old.clone());
    }
    for c in &mut b.connections {
        c.from = var(&c.from);
        c.to = var(&c.to);
    }
    for i in &mut b.inputs {
        i.to = var(&i.to);
    }
    for bond in &mut b.bonds {
        for p in &mut bond.ports {
            if let Some(n) = map.get(&p.instance) {
                p.instance.clone_from(n);
            }
        }
    }
    if let Some(outputs) = &mut b.outputs {
        for o in outputs {
            *o = var(o);
        }
    }
    if let Some(order) = &mut b.settings.order {
        for o in order {
            if let Some(n) = map.get(o) {
                o.clone_from(n);
            }
        }
    }
    renamed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert!(is_identifier("oscillator_fd") && is_identifier("m1") && !is_identifier("oscillator-fd"));
        assert!(!is_identifier("1a") && !is_identifier("") && !is_identifier("a.b") && !is_identifier("_a"));
        assert_eq!(identifier("oscillator-fd"), "oscillator_fd");
        assert_eq!(identifier("2nd stage"), "n_2nd_stage");
        assert_eq!(identifier("_x"), "n__x");
    }

    #[test]
    fn instances_are_renamed_everywhere() {
        let mut b = SystemBuilder::new();
        b.instance("mass-1", "a.fmu");
        b.instance("mass_1", "b.fmu");
        b.connect("mass-1.x", "mass_1.u");
        b.outputs(["mass-1.x"]);
        let renamed = rename_instances(&mut b);
        assert_eq!(renamed.get("mass_1_2").map(String::as_str), Some("mass-1"));
        assert!(b.instances.contains_key("mass_1_2") && b.instances.contains_key("mass_1"));
        assert_eq!((b.connections[0].from.as_str(), b.connections[0].to.as_str()), ("mass_1_2.x", "mass_1.u"));
        assert_eq!(b.outputs.as_deref(), Some(&["mass_1_2.x".to_owned()][..]));
    }
}
