//! FMI 3.0 Binary values at the instance: `maxSize` enforced before `fmi3SetBinary` (the
//! standard leaves a longer value undefined; the master refuses it naming the variable), and the
//! sizes `fmi3GetBinary` reports checked before a byte is copied ([`reported_size`]).

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

/// The largest Binary value cosim copies from an FMU (256 MiB, the frame limit of the isolated
/// worker protocol): a larger reported size is an error naming the variable, not an allocation.
pub(crate) const BINARY_VALUE_LIMIT: usize = 256 << 20;

/// Why the size `fmi3GetBinary` reported for `vr` (variable `name`) is refused before copying:
/// more than its `maxSize`, more than [`BINARY_VALUE_LIMIT`], or a NULL pointer with a nonzero
/// size (FMI 3.0 §2.2.6.2: the pointer points to `size` bytes).
pub(crate) fn reported_size(max: &MaxSizes, vr: u32, name: &str, size: usize, null: bool) -> Option<String> {
    // Formatted only when refused: this runs on every get of every Binary output (no allocation
    // per step, master/tests/zero_alloc.rs).
    let what = || format!("{name} (value reference {vr}): the FMU reported a value of {size} bytes");
    if null && size > 0 {
        return Some(format!("{} at a NULL pointer", what()));
    }
    if let Some((_, m)) = max.get(&vr) {
        if size as u64 > u64::from(*m) {
            return Some(format!("{}, more than its maxSize of {m} bytes", what()));
        }
    }
    (size > BINARY_VALUE_LIMIT).then(|| {
        format!("{}, more than cosim's limit of {BINARY_VALUE_LIMIT} bytes (256 MiB) for one Binary value", what())
    })
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
    fn reported_sizes_are_checked_before_copying() {
        let max: MaxSizes = [(7, ("key".to_owned(), 2))].into_iter().collect();
        assert_eq!(reported_size(&max, 7, "key", 2, false), None);
        assert_eq!(reported_size(&max, 8, "b", 0, true), None, "NULL and 0: empty");
        let e = reported_size(&max, 8, "b", 5, true).unwrap();
        assert_eq!(e, "b (value reference 8): the FMU reported a value of 5 bytes at a NULL pointer");
        assert!(reported_size(&max, 7, "key", 3, false).unwrap().ends_with("more than its maxSize of 2 bytes"));
        let e = reported_size(&max, 8, "b", 1_000_000_000_000, false).unwrap();
        assert!(e.contains("1000000000000 bytes, more than cosim's limit of 268435456 bytes"), "{e}");
    }

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
