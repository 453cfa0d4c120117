//! FMI 2.0 `modelDescription.xml` as one typed data model, written by our exporters and read by
//! our master.
//!
//! - [`model`]: the data model (every element of `fmi2ModelDescription.xsd` we use).
//! - [`write`](mod@write): deterministic XML writer ([`to_xml`]); [`write3`] writes the same
//!   description as FMI 3.0 ([`to_xml3`]).
//! - [`read`]: tolerant reader ([`from_str`]): unknown attributes and vendor extensions are
//!   accepted, genuine errors carry line and column.
//! - [`validate`](mod@validate): the semantic rules of the standard ([`validate()`]), as a list
//!   of problems.
//!
//! ```
//! use model_description::*;
//! let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
//! <fmiModelDescription fmiVersion="2.0" modelName="m" guid="{1}">
//!   <CoSimulation modelIdentifier="m"/>
//!   <ModelVariables>
//!     <ScalarVariable name="x" valueReference="0" causality="output"><Real/></ScalarVariable>
//!   </ModelVariables>
//!   <ModelStructure><Outputs><Unknown index="1"/></Outputs>
//!     <InitialUnknowns><Unknown index="1"/></InitialUnknowns></ModelStructure>
//! </fmiModelDescription>"#;
//! let md = from_str(xml).unwrap();
//! assert_eq!(md.model_variables[0].name, "x");
//! assert!(validate(&md).iter().all(|p| p.severity != Severity::Error));
//! let again = from_str(&to_xml(&md)).unwrap();
//! assert_eq!(again.model_variables[0].causality, Causality::Output);
//! ```
#![warn(missing_docs)]

pub mod model;
pub mod read;
pub mod validate;
pub mod write;
pub mod write3;

pub use model::*;
pub use read::read3::{
    from_str3, from_str3_configured, ArrayElement, Clock3, Fmi3, ResizedArray, Structural, ARRAY_ELEMENT_VR_BASE,
    MAX_ARRAY_ELEMENTS, MAX_STRUCTURAL_VALUE,
};
pub use read::{from_str, ReadError};
pub use validate::{validate, Problem, Severity};
pub use write::to_xml;
pub use write3::{time_value_reference, to_xml3, Type3};

/// Reads an FMI 2.0 or FMI 3.0 `modelDescription.xml` into the one data model (for 3.0 the
/// [`Fmi3`] extras are dropped; use [`from_str3`] for them).
pub fn from_str_any(xml: &str) -> Result<ModelDescription, ReadError> {
    match from_str(xml) {
        Err(ReadError::UnsupportedVersion { version, .. }) if version.starts_with("3.") => {
            from_str3(xml).map(|(md, _)| md)
        }
        r => r,
    }
}
