//! The rules of `<ModelStructure>` (FMI 2.0.4 §2.2.8): every `index` and dependency exists, no
//! unknown depends on itself, outputs and derivatives do not depend on parameters, the
//! `dependenciesKind` match the `dependencies`, and `<Outputs>`, `<Derivatives>` and
//! `<InitialUnknowns>` list exactly the variables the standard requires, in ascending order.

use super::{var_ref, Validator};
use crate::model::*;
use std::collections::{BTreeMap, BTreeSet};

impl Validator<'_> {
    /// `ModelStructure/Outputs, <Unknown index="3"> (line 40) of variable "y"`.
    fn unknown_ref(&self, list: &str, u: &Unknown) -> String {
        let line = if u.line > 0 { format!(" (line {})", u.line) } else { String::new() };
        match self.md.variable_by_index(u.index) {
            Some(v) => {
                format!("ModelStructure/{list}, <Unknown index=\"{}\">{line} of variable \"{}\"", u.index, v.name)
            }
            None => format!("ModelStructure/{list}, <Unknown index=\"{}\">{line}", u.index),
        }
    }

    fn unknown_line(&self, u: &Unknown) -> u32 {
        if u.line > 0 {
            u.line
        } else {
            self.md.variable_by_index(u.index).map_or(0, |v| v.line)
        }
    }

    fn unknown_error(&mut self, list: &str, u: &Unknown, what: String) {
        let prefix = self.unknown_ref(list, u);
        self.error(self.unknown_line(u), format!("{prefix}: {what}"));
    }

    pub(super) fn model_structure(&mut self) {
        let md = self.md;
        let ms = &md.model_structure;
        for (list, unknowns) in
            [("Outputs", &ms.outputs), ("Derivatives", &ms.derivatives), ("InitialUnknowns", &ms.initial_unknowns)]
        {
            for u in unknowns {
                self.unknown(list, u);
            }
            self.ascending(list, unknowns);
        }
        self.outputs();
        self.derivatives();
        self.initial_unknowns();
    }

    /// Index, dependencies and kinds of one `<Unknown>`.
    fn unknown(&mut self, list: &str, u: &Unknown) {
        let md = self.md;
        if md.variable_by_index(u.index).is_none() {
            self.unknown_error(
                list,
                u,
                format!("index {} refers to no variable (there are {})", u.index, md.model_variables.len()),
            );
            return;
        }
        if let Some(deps) = &u.dependencies {
            for &d in deps {
                match md.variable_by_index(d) {
                    None => self.unknown_error(list, u, format!("dependency {d} refers to no variable")),
                    Some(_) if d == u.index => self.unknown_error(list, u, "depends on itself".into()),
                    Some(dv)
                        if list != "InitialUnknowns"
                            && matches!(dv.variability, Variability::Fixed | Variability::Tunable) =>
                    {
                        self.unknown_error(
                            list,
                            u,
                            format!(
                                "depends on the parameter {} (variability=\"{}\"); outputs and \
                                 derivatives depend only on inputs, continuous states and the \
                                 independent variable",
                                var_ref(d as usize, dv),
                                dv.variability
                            ),
                        )
                    }
                    Some(_) => {}
                }
            }
        }
        match (&u.dependencies, &u.dependencies_kind) {
            (None, Some(_)) => self.unknown_error(list, u, "has dependenciesKind but no dependencies".into()),
            (Some(d), Some(k)) if d.len() != k.len() => self.unknown_error(
                list,
                u,
                format!("has {} dependencies but {} dependenciesKind entries", d.len(), k.len()),
            ),
            _ => {}
        }
    }

    fn ascending(&mut self, list: &str, unknowns: &[Unknown]) {
        if list == "Derivatives" {
            return; // its order is the order of the state vector, chosen by the exporter
        }
        for pair in unknowns.windows(2) {
            if let [prev, u] = pair {
                if u.index < prev.index {
                    self.unknown_error(
                        list,
                        u,
                        format!("is not in ascending index order (it follows index {})", prev.index),
                    );
                } else if u.index == prev.index {
                    self.unknown_error(list, u, "is listed twice".into());
                }
            }
        }
    }

    fn outputs(&mut self) {
        let md = self.md;
        let listed: BTreeSet<u32> = md.model_structure.outputs.iter().map(|u| u.index).collect();
        for u in &md.model_structure.outputs {
            if let Some(v) = md.variable_by_index(u.index) {
                if v.causality != Causality::Output {
                    self.unknown_error(
                        "Outputs",
                        u,
                        format!("the variable has causality=\"{}\", only outputs belong in Outputs", v.causality),
                    );
                }
            }
        }
        for (i, v) in md.model_variables.iter().enumerate() {
            let index = u32::try_from(i + 1).unwrap_or(u32::MAX);
            if v.causality == Causality::Output && !listed.contains(&index) {
                self.var_error(i + 1, v, "is an output but has no <Unknown> in ModelStructure/Outputs".into());
            }
        }
    }

    fn derivatives(&mut self) {
        let md = self.md;
        for u in &md.model_structure.derivatives {
            if let Some(v) = md.variable_by_index(u.index) {
                if !matches!(v.kind, VariableKind::Real { derivative: Some(_), .. }) {
                    self.unknown_error(
                        "Derivatives",
                        u,
                        "the variable is not a Real with a derivative attribute".into(),
                    );
                }
            }
        }
    }

    fn initial_unknowns(&mut self) {
        let md = self.md;
        let approx_or_calc =
            |v: &ScalarVariable| matches!(v.effective_initial(), Some(Initial::Approx | Initial::Calculated));
        // index → why it must be listed
        let mut expected: BTreeMap<u32, &'static str> = BTreeMap::new();
        for (i, v) in md.model_variables.iter().enumerate() {
            let index = u32::try_from(i + 1).unwrap_or(u32::MAX);
            if v.causality == Causality::Output && approx_or_calc(v) {
                expected.insert(index, "an output with initial approx or calculated");
            }
            if v.causality == Causality::CalculatedParameter {
                expected.insert(index, "a calculated parameter");
            }
        }
        for u in &md.model_structure.derivatives {
            let Some(der) = md.variable_by_index(u.index) else {
                continue;
            };
            if approx_or_calc(der) {
                expected.insert(u.index, "a state derivative with initial approx or calculated");
            }
            if let VariableKind::Real { derivative: Some(s), .. } = der.kind {
                if md.variable_by_index(s).is_some_and(approx_or_calc) {
                    expected.insert(s, "a continuous state with initial approx or calculated");
                }
            }
        }
        let listed: BTreeSet<u32> = md.model_structure.initial_unknowns.iter().map(|u| u.index).collect();
        for (&index, why) in &expected {
            if !listed.contains(&index) {
                if let Some(v) = md.variable_by_index(index) {
                    self.var_error(
                        index as usize,
                        v,
                        format!("is {why} but is missing from ModelStructure/InitialUnknowns"),
                    );
                }
            }
        }
        for u in &md.model_structure.initial_unknowns {
            if md.variable_by_index(u.index).is_some() && !expected.contains_key(&u.index) {
                self.unknown_error(
                    "InitialUnknowns",
                    u,
                    "the variable does not belong in InitialUnknowns (only outputs, calculated \
                     parameters, states and derivatives with initial approx or calculated do)"
                        .into(),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::*;
    use crate::validate::tests::*;
    use crate::validate::validate;
    use crate::write::tests::rich;

    #[test]
    fn unknown_indices_must_exist() {
        let mut md = rich();
        md.model_structure.derivatives.push(Unknown::new(99, vec![]));
        assert_error(
            &md,
            &["ModelStructure/Derivatives, <Unknown index=\"99\">", "index 99 refers to no variable (there are 17)"],
        );
    }

    #[test]
    fn dependencies_must_exist_and_be_knowns() {
        let mut md = rich();
        md.model_structure.outputs[0].dependencies = Some(vec![2, 0]);
        md.model_structure.outputs[0].dependencies_kind = None;
        assert_error(
            &md,
            &["ModelStructure/Outputs, <Unknown index=\"12\"> of variable \"y\"", "dependency 0 refers to no variable"],
        );

        let mut md = rich();
        md.model_structure.initial_unknowns[3].dependencies = Some(vec![2, 12]);
        assert_error(&md, &["ModelStructure/InitialUnknowns, <Unknown index=\"12\">", "depends on itself"]);

        // Outputs and derivatives do not depend on parameters; initial unknowns may.
        let mut md = rich();
        md.model_structure.outputs[0].dependencies = Some(vec![2, 7]);
        assert_error(
            &md,
            &["ModelStructure/Outputs", "depends on the parameter variable \"k\" (index 7) (variability=\"fixed\")"],
        );
        let mut md = rich();
        md.model_structure.derivatives[0].dependencies = Some(vec![15]);
        assert_error(&md, &["ModelStructure/Derivatives", "depends on the parameter variable \"area\""]);
    }

    #[test]
    fn dependencies_kind_matches_dependencies() {
        let mut md = rich();
        md.model_structure.outputs[0].dependencies_kind = Some(vec![DependencyKind::Dependent]);
        assert_error(&md, &["<Unknown index=\"12\">", "has 2 dependencies but 1 dependenciesKind entries"]);
        let mut md = rich();
        md.model_structure.outputs[2].dependencies_kind = Some(vec![]);
        assert_error(&md, &["<Unknown index=\"17\">", "has dependenciesKind but no dependencies"]);
    }

    #[test]
    fn outputs_one_unknown_per_output_in_order() {
        let mut md = rich();
        md.model_structure.outputs.remove(1);
        assert_error(&md, &["variable \"count\"", "is an output but has no <Unknown> in ModelStructure/Outputs"]);

        let mut md = rich();
        md.model_structure.outputs.push(Unknown::new(16, vec![]));
        assert_error(
            &md,
            &["<Unknown index=\"16\"> of variable \"y_alias\"", "causality=\"local\", only outputs belong in Outputs"],
        );

        let mut md = rich();
        md.model_structure.outputs.swap(0, 1);
        assert_error(&md, &["<Unknown index=\"12\">", "is not in ascending index order (it follows index 13)"]);

        let mut md = rich();
        let again = md.model_structure.outputs[0].clone();
        md.model_structure.outputs.insert(1, again);
        assert_error(&md, &["ModelStructure/Outputs, <Unknown index=\"12\">", "is listed twice"]);
    }

    #[test]
    fn derivatives_are_reals_with_derivative_attribute() {
        let mut md = rich();
        md.model_structure.derivatives[0].index = 8;
        assert_error(
            &md,
            &[
                "ModelStructure/Derivatives, <Unknown index=\"8\"> of variable \"x\"",
                "not a Real with a derivative attribute",
            ],
        );
        // The order of Derivatives is free (it is the state order).
        let mut md = rich();
        md.model_structure.derivatives.swap(0, 1);
        assert_eq!(validate(&md), vec![]);
    }

    #[test]
    fn initial_unknowns_are_exactly_the_required_set() {
        // Missing: the calculated parameter, the approx state, an output.
        for (position, name, why) in [
            (4, "area", "is a calculated parameter"),
            (1, "v", "is a continuous state with initial approx or calculated"),
            (0, "der(x)", "is a state derivative"),
            (3, "y", "is an output with initial approx or calculated"),
        ] {
            let mut md = rich();
            md.model_structure.initial_unknowns.remove(position);
            assert_error(&md, &[&format!("variable \"{name}\""), why, "missing from ModelStructure/InitialUnknowns"]);
        }
        // Extra: an output with initial exact, a state with initial exact, an input.
        for index in [13, 8, 2] {
            let mut md = rich();
            let list = &mut md.model_structure.initial_unknowns;
            list.push(Unknown::new(index, vec![]));
            list.sort_by_key(|u| u.index);
            assert_error(&md, &[&format!("<Unknown index=\"{index}\">"), "does not belong in InitialUnknowns"]);
        }
        // Order.
        let mut md = rich();
        md.model_structure.initial_unknowns.swap(2, 3);
        assert_error(
            &md,
            &["ModelStructure/InitialUnknowns, <Unknown index=\"11\">", "is not in ascending index order"],
        );
    }
}
