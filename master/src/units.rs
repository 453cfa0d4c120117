//! Units of the recorded variables (issue 36): the unit a model description gives a Real
//! variable (its own `unit`, else its declared type's), for `summary.json`'s `units`, the
//! Python result's `units` and the `.mat` and plot writers.

use crate::system::System;
use model_description::{ModelDescription, ScalarVariable, SimpleTypeKind, VariableKind};
use std::collections::{BTreeMap, HashMap};

/// The unit of variable `name` of `md`: `None` for non-Reals and Reals without a unit.
pub fn unit_of(md: &ModelDescription, name: &str) -> Option<String> {
    unit_of_variable(md, md.variable(name)?)
}

/// The unit of variable `v` of `md` (as [`unit_of`]).
fn unit_of_variable(md: &ModelDescription, v: &ScalarVariable) -> Option<String> {
    let VariableKind::Real { attrs, declared_type, .. } = &v.kind else { return None };
    attrs.unit.clone().or_else(|| match declared_type.as_deref().and_then(|t| md.simple_type(t)).map(|t| &t.kind) {
        Some(SimpleTypeKind::Real(a)) => a.unit.clone(),
        _ => None,
    })
}

/// The declared `min` and `max` of Real variable `v` of `md` (its own, else its declared type's).
fn range_of_variable(md: &ModelDescription, v: &ScalarVariable) -> (Option<f64>, Option<f64>) {
    let VariableKind::Real { attrs, declared_type, .. } = &v.kind else { return (None, None) };
    let ty = match declared_type.as_deref().and_then(|t| md.simple_type(t)).map(|t| &t.kind) {
        Some(SimpleTypeKind::Real(a)) => Some(a),
        _ => None,
    };
    (attrs.min.or(ty.and_then(|a| a.min)), attrs.max.or(ty.and_then(|a| a.max)))
}

/// Column → declared (min, max) for the recorded Real columns of `system` that declare either
/// (the live server's ranges and axes). `mds[i]` is instance i's model description.
pub fn output_ranges(system: &System, mds: &[&ModelDescription]) -> BTreeMap<String, (Option<f64>, Option<f64>)> {
    let index: Vec<HashMap<&str, &ScalarVariable>> =
        mds.iter().map(|md| md.model_variables.iter().map(|v| (v.name.as_str(), v)).collect()).collect();
    let mut out = BTreeMap::new();
    for v in system.outputs() {
        let found = index.get(v.instance).and_then(|ix| ix.get(v.name.as_str())).map(|sv| (mds[v.instance], *sv));
        if let Some(r) = found.map(|(md, sv)| range_of_variable(md, sv)).filter(|r| r.0.is_some() || r.1.is_some()) {
            out.insert(system.label(v), r);
        }
    }
    out
}

/// Column → unit for the recorded columns of `system` (`time` in s; columns without a unit are
/// left out). `mds[i]` is instance i's model description.
pub fn output_units(system: &System, mds: &[&ModelDescription]) -> BTreeMap<String, String> {
    let mut units = BTreeMap::from([("time".to_owned(), "s".to_owned())]);
    // One name index per description: a run may record 100 000 outputs of one FMU, and a search
    // per output made setting the run up quadratic (cosim-cli/tests/hostile.rs).
    let index: Vec<HashMap<&str, &ScalarVariable>> =
        mds.iter().map(|md| md.model_variables.iter().map(|v| (v.name.as_str(), v)).collect()).collect();
    for v in system.outputs() {
        let found = index.get(v.instance).and_then(|ix| ix.get(v.name.as_str())).map(|sv| (mds[v.instance], *sv));
        if let Some(u) = found.and_then(|(md, sv)| unit_of_variable(md, sv)).filter(|u| !u.is_empty()) {
            units.insert(system.label(v), u);
        }
    }
    units
}
