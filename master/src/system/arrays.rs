//! Whole-array addressing of FMI 3.0 array variables: the model description lists an array
//! `a` of shape [2, 3] as its elements `a[1,1]` … `a[2,3]` (row-major, 1-based); a connection
//! or start value that names `a` itself addresses every element — a connection element by
//! element between arrays of equal shape, a start value from a TOML array (row-major; nested
//! arrays are read row by row).

use super::schema::Value;
use model_description::ModelDescription;

/// An array variable of a model description: its shape and its elements' names, row-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Array {
    pub shape: Vec<usize>,
    pub elements: Vec<String>,
}

impl Array {
    /// `[2, 3]`.
    pub fn shape_text(&self) -> String {
        format!("[{}]", self.shape.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))
    }
}

/// The array `name` of `md`, when `name` is not a scalar variable but the name of array
/// elements `name[i,j,…]`.
pub(crate) fn array(md: &ModelDescription, name: &str) -> Option<Array> {
    if md.variable(name).is_some() {
        return None;
    }
    let prefix = format!("{name}[");
    let mut shape: Vec<usize> = Vec::new();
    let mut elements = Vec::new();
    for v in &md.model_variables {
        let Some(inside) = v.name.strip_prefix(&prefix).and_then(|r| r.strip_suffix(']')) else { continue };
        let Some(index) = inside.split(',').map(|s| s.parse::<usize>().ok()).collect::<Option<Vec<_>>>() else {
            continue;
        };
        if shape.is_empty() {
            shape = index;
        } else if shape.len() == index.len() {
            for (s, i) in shape.iter_mut().zip(index) {
                *s = (*s).max(i);
            }
        } else {
            continue;
        }
        elements.push(v.name.clone());
    }
    (!elements.is_empty()).then_some(Array { shape, elements })
}

/// The values of a TOML array start value, row-major (nested arrays flattened row by row).
pub(super) fn flatten(value: &Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items.iter().flat_map(flatten).collect(),
        other => vec![other.clone()],
    }
}
