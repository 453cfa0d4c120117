//! SI units used by our models, with their base-unit exponents for `<UnitDefinitions>`.

use model_description::{BaseUnit, DisplayUnit, Unit};

/// (name, [kg, m, s, A, K, mol, cd, rad], display units (name, factor, offset)).
type UnitRow = (&'static str, [i32; 8], &'static [(&'static str, f64, f64)]);

const UNITS: &[UnitRow] = &[
    ("m", [0, 1, 0, 0, 0, 0, 0, 0], &[("mm", 1000.0, 0.0)]),
    ("m/s", [0, 1, -1, 0, 0, 0, 0, 0], &[]),
    ("m/s2", [0, 1, -2, 0, 0, 0, 0, 0], &[]),
    ("m2", [0, 2, 0, 0, 0, 0, 0, 0], &[]),
    ("m3", [0, 3, 0, 0, 0, 0, 0, 0], &[]),
    ("m3/s", [0, 3, -1, 0, 0, 0, 0, 0], &[("l/min", 60000.0, 0.0)]),
    ("kg", [1, 0, 0, 0, 0, 0, 0, 0], &[]),
    ("kg.m2", [1, 2, 0, 0, 0, 0, 0, 0], &[]),
    ("kg/m3", [1, -3, 0, 0, 0, 0, 0, 0], &[]),
    ("s", [0, 0, 1, 0, 0, 0, 0, 0], &[("ms", 1000.0, 0.0)]),
    ("1/s", [0, 0, -1, 0, 0, 0, 0, 0], &[]),
    ("Hz", [0, 0, -1, 0, 0, 0, 0, 0], &[]),
    ("N", [1, 1, -2, 0, 0, 0, 0, 0], &[("kN", 0.001, 0.0)]),
    ("N/m", [1, 0, -2, 0, 0, 0, 0, 0], &[]),
    ("N.s/m", [1, 0, -1, 0, 0, 0, 0, 0], &[]),
    ("N/s", [1, 1, -3, 0, 0, 0, 0, 0], &[]),
    ("Pa", [1, -1, -2, 0, 0, 0, 0, 0], &[("bar", 1e-5, 0.0), ("MPa", 1e-6, 0.0)]),
    ("Pa/s", [1, -1, -3, 0, 0, 0, 0, 0], &[]),
    ("1/Pa", [-1, 1, 2, 0, 0, 0, 0, 0], &[]),
    ("1/Pa2", [-2, 2, 4, 0, 0, 0, 0, 0], &[]),
    ("J", [1, 2, -2, 0, 0, 0, 0, 0], &[]),
    ("W", [1, 2, -3, 0, 0, 0, 0, 0], &[]),
    ("rad", [0, 0, 0, 0, 0, 0, 0, 1], &[("deg", 57.295_779_513_082_32, 0.0)]),
    ("rad/s", [0, 0, -1, 0, 0, 0, 0, 1], &[]),
    ("rad/s2", [0, 0, -2, 0, 0, 0, 0, 1], &[]),
    ("V", [1, 2, -3, -1, 0, 0, 0, 0], &[]),
    ("V/s", [1, 2, -4, -1, 0, 0, 0, 0], &[]),
    ("1", [0, 0, 0, 0, 0, 0, 0, 0], &[]),
];

/// The `<Unit>` definition of a unit name, or `None` if the name is not one of ours.
pub fn definition(name: &str) -> Option<Unit> {
    UNITS.iter().find(|(n, _, _)| *n == name).map(|(n, exp, display)| Unit {
        name: (*n).to_owned(),
        base_unit: Some(BaseUnit::si(*exp)),
        display_units: display
            .iter()
            .map(|(d, factor, offset)| DisplayUnit { name: (*d).to_owned(), factor: *factor, offset: *offset })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn derived_units_are_consistent() {
        // N·s/m times m/s is N.
        let ns_m = super::definition("N.s/m").and_then(|u| u.base_unit).unwrap();
        let m_s = super::definition("m/s").and_then(|u| u.base_unit).unwrap();
        let n = super::definition("N").and_then(|u| u.base_unit).unwrap();
        assert_eq!((ns_m.kg + m_s.kg, ns_m.m + m_s.m, ns_m.s + m_s.s), (n.kg, n.m, n.s));
        // Pa times m3/s is W.
        let pa = super::definition("Pa").and_then(|u| u.base_unit).unwrap();
        let q = super::definition("m3/s").and_then(|u| u.base_unit).unwrap();
        let w = super::definition("W").and_then(|u| u.base_unit).unwrap();
        assert_eq!((pa.kg + q.kg, pa.m + q.m, pa.s + q.s), (w.kg, w.m, w.s));
        assert!(super::definition("furlong").is_none());
    }
}
