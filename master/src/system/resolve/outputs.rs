//! The recorded variables and every variable of an instance.

use super::*;

impl Resolver<'_> {
    /// The recorded variables: `[outputs] variables`, or every output.
    pub(super) fn outputs(&self) -> Result<Vec<VarRef>> {
        Ok(match &self.b.outputs {
            None => self.all_outputs(),
            Some(names) => {
                let mut v = Vec::new();
                let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
                for (k, name) in names.iter().enumerate() {
                    let key = format!("outputs.variables[{k}]");
                    let r = self.var(&key, name)?;
                    if r.ty == BaseType::String {
                        return Err(self.err(&key, format!("{name} is a String and cannot be recorded in CSV")));
                    }
                    // Two columns of one name: refused here, not after the run (issue 30 item 17).
                    if let Some(first) = seen.insert(name.as_str(), k) {
                        return Err(self.err(
                            &key,
                            format!("{name} is listed twice (also outputs.variables[{first}]): each output once"),
                        ));
                    }
                    v.push(r);
                }
                v
            }
        })
    }

    /// Every variable of instance i.
    pub(super) fn variables(&self, i: usize) -> Vec<VarRef> {
        self.mds[i]
            .model_variables
            .iter()
            .map(|sv| VarRef {
                instance: i,
                name: sv.name.clone(),
                vr: sv.value_reference,
                ty: sv.kind.base_type(),
                causality: sv.causality,
            })
            .collect()
    }

    pub(super) fn all_outputs(&self) -> Vec<VarRef> {
        let mut v = Vec::new();
        for (i, md) in self.mds.iter().enumerate() {
            for sv in &md.model_variables {
                if sv.causality == Causality::Output
                    && !matches!(sv.kind, VariableKind::String { .. } | VariableKind::Binary { .. })
                {
                    v.push(VarRef {
                        instance: i,
                        name: sv.name.clone(),
                        vr: sv.value_reference,
                        ty: sv.kind.base_type(),
                        causality: sv.causality,
                    });
                }
            }
        }
        v
    }
}
