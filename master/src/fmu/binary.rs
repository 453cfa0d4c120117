//! FMI 3.0 Binary values at the instance: `maxSize` enforced before `fmi3SetBinary` (the
//! standard leaves a longer value undefined; the master refuses it naming the variable).

use model_description::{ModelDescription, VariableKind};
use std::collections::HashMap;

/// The Binary variables that declare `maxSize`, by value reference: name and size.
pub(crate) type MaxSizes = HashMap<u32, (String, u32)>;

/// The `maxSize` of every Binary variable of `md` that declares one.
pub(crate) fn max_sizes(md: &ModelDescription) -> MaxSizes {
    md.model_variables
        .iter()
        .filter_map(|v| match v.kind {
            VariableKind::Binary { max_size: Some(max), .. } => Some((v.value_reference, (v.name.clone(), max))),
            _ => None,
        })
        .collect()
}

/// Why setting `values` is refused: the first value longer than its variable's `maxSize`.
pub(crate) fn too_big(max: &MaxSizes, vr: &[u32], values: &[&[u8]]) -> Option<String> {
    if max.is_empty() {
        return None;
    }
    vr.iter().zip(values).find_map(|(r, v)| {
        let (name, m) = max.get(r)?;
        (v.len() as u64 > u64::from(*m))
            .then(|| format!("the value of {name} has {} bytes, more than its maxSize of {m} bytes", v.len()))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn values_longer_than_max_size_are_refused_naming_the_variable() {
        let max: MaxSizes = [(7, ("key".to_owned(), 2))].into_iter().collect();
        assert_eq!(too_big(&max, &[7], &[&[1, 2]]), None);
        assert_eq!(too_big(&max, &[8], &[&[1, 2, 3]]), None, "no maxSize declared");
        assert_eq!(
            too_big(&max, &[8, 7], &[&[], &[1, 2, 3]]).unwrap(),
            "the value of key has 3 bytes, more than its maxSize of 2 bytes"
        );
    }
}
