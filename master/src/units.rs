//! Units of the recorded variables (issue 36): the unit a model description gives a Real
//! variable (its own `unit`, else its declared type's), for `summary.json`'s `units`, the
//! Python result's `units` and the `.mat` and plot writers.

use crate::system::System;
use model_description::{ModelDescription, SimpleTypeKind, VariableKind};
use std::collections::BTreeMap;

/// The unit of variable `name` of `md`: `None` for non-Reals and Reals without a unit.
pub fn unit_of(md: &ModelDescription, name: &str) -> Option<String> {
    let v = md.variable(name)?;
    let VariableKind::Real { attrs, declared_type, .. } = &v.kind else { return None };
    attrs.unit.clone().or_else(|| match declared_type.as_deref().and_then(|t| md.simple_type(t)).map(|t| &t.kind) {
        Some(SimpleTypeKind::Real(a)) => a.unit.clone(),
        _ => None,
    })
}

/// Column → unit for the recorded columns of `system` (`time` in s; columns without a unit are
/// left out). `mds[i]` is instance i's model description.
pub fn output_units(system: &System, mds: &[&ModelDescription]) -> BTreeMap<String, String> {
    let mut units = BTreeMap::from([("time".to_owned(), "s".to_owned())]);
    for v in system.outputs() {
        if let Some(u) = mds.get(v.instance).and_then(|md| unit_of(md, &v.name)).filter(|u| !u.is_empty()) {
            units.insert(system.label(v), u);
        }
    }
    units
}
