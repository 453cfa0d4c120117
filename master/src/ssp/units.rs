//! Units of SSP parameter values: `<ssv:Real value="1" unit="mm"/>` is converted to the unit of
//! the variable it sets (its connector's `ssc:Real unit`), through the `ssc:Unit` definitions
//! (`ssc:BaseUnit`: SI exponents, factor, offset) of the parameter set (`ssv:Units`) and of the
//! SSD (`ssd:Units`). A value whose unit cannot be converted is refused, never taken as is.

use super::xml::{parse_f64, Node, SSC};
use std::collections::BTreeMap;

/// A unit as SI base-unit exponents (kg, m, s, A, K, mol, cd, rad) and value_SI = factor·x + offset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Def {
    exponents: [i64; 8],
    factor: f64,
    offset: f64,
}

/// Unit definitions by name.
pub(super) type Defs = BTreeMap<String, Def>;

/// The `ssc:Unit` children of a `Units` element (`None`: no definitions). Definitions that are
/// malformed (non-numeric, a zero or non-finite factor) are left out, so that a value in such a
/// unit is refused.
pub(super) fn defs(units: Option<&Node>) -> Defs {
    let mut out = Defs::new();
    for u in units.into_iter().flat_map(|u| u.children.iter()).filter(|u| u.is(SSC, "Unit")) {
        let (Some(name), Some(base)) = (u.attr("name"), u.first(SSC, "BaseUnit")) else { continue };
        let num = |k: &str, default: f64| base.attr(k).map_or(Some(default), parse_f64);
        let mut exponents = [0; 8];
        let mut ok = true;
        for (e, k) in exponents.iter_mut().zip(["kg", "m", "s", "A", "K", "mol", "cd", "rad"]) {
            match base.attr(k).map(|v| v.trim().parse::<i64>()) {
                None => {}
                Some(Ok(v)) => *e = v,
                Some(Err(_)) => ok = false,
            }
        }
        let (Some(factor), Some(offset)) = (num("factor", 1.0), num("offset", 0.0)) else { continue };
        if ok && factor.is_finite() && factor != 0.0 && offset.is_finite() {
            out.insert(name.to_owned(), Def { exponents, factor, offset });
        }
    }
    out
}

/// `x` in unit `from` expressed in unit `to`, looking the units up in `defs` (first match);
/// `Err` says why it cannot be converted.
pub(super) fn convert(x: f64, from: &str, to: Option<&str>, defs: &[&Defs]) -> Result<f64, String> {
    let Some(to) = to else {
        return Err(format!(
            "the value is in \"{from}\", and the variable's unit is not declared (no ssd:Connector with an \
             ssc:Real unit for it), so cosim cannot convert it; give the value without a unit in the \
             variable's unit, or declare the connector's unit"
        ));
    };
    if from == to {
        return Ok(x);
    }
    let find = |u: &str| defs.iter().find_map(|d| d.get(u).copied());
    let (Some(a), Some(b)) = (find(from), find(to)) else {
        let missing = if find(from).is_none() { from } else { to };
        return Err(format!(
            "the value is in \"{from}\", the variable in \"{to}\", and unit \"{missing}\" has no ssc:Unit \
             definition with an ssc:BaseUnit (in ssv:Units or ssd:Units), so cosim cannot convert it"
        ));
    };
    if a.exponents != b.exponents {
        return Err(format!("unit \"{from}\" cannot be converted to \"{to}\": different dimensions"));
    }
    let y = ((a.factor * x + a.offset) - b.offset) / b.factor;
    if y.is_finite() || !x.is_finite() {
        Ok(y)
    } else {
        Err(format!("{x} {from} is not representable in \"{to}\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(m: i64, factor: f64, offset: f64) -> Def {
        Def { exponents: [0, m, 0, 0, 0, 0, 0, 0], factor, offset }
    }

    #[test]
    fn conversions_go_through_si() {
        let d: Defs = [("mm".to_owned(), def(1, 1e-3, 0.0)), ("m".to_owned(), def(1, 1.0, 0.0))].into();
        assert_eq!(convert(1.0, "mm", Some("m"), &[&d]), Ok(1e-3));
        assert_eq!(convert(2.0, "m", Some("m"), &[]), Ok(2.0), "same unit: no definition needed");
        let t: Defs = [("degC".to_owned(), Def { exponents: [0, 0, 0, 0, 1, 0, 0, 0], factor: 1.0, offset: 273.15 })]
            .into_iter()
            .chain([("K".to_owned(), Def { exponents: [0, 0, 0, 0, 1, 0, 0, 0], factor: 1.0, offset: 0.0 })])
            .collect();
        assert_eq!(convert(20.0, "degC", Some("K"), &[&t]), Ok(293.15));
        assert!(convert(1.0, "mm", Some("K"), &[&d, &t]).unwrap_err().contains("different dimensions"));
        assert!(convert(1.0, "mm", Some("m"), &[]).unwrap_err().contains("no ssc:Unit definition"));
        assert!(convert(1.0, "mm", None, &[&d]).unwrap_err().contains("not declared"));
    }
}
