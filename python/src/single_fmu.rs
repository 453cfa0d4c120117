//! One FMU the way FMPy runs it (issue 36): `cosim.info(fmu)` (the model description as plain
//! data: variables with type, causality, unit, start and enumeration items) and
//! `cosim.simulate_fmu` (bare variable names, `start_time`, `output_interval`), both on the same
//! path as `cosim run X.fmu` (`master::single`).

use super::{bad, err, run_to_end, Inner, Options, Source};
use master::fmu::FmuCache;
use model_description::{ModelDescription, SimpleTypeKind, VariableKind};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

fn read(fmu: &Path) -> PyResult<ModelDescription> {
    let listing = master::fmu::Archive::read_model_description(fmu).map_err(err)?;
    model_description::from_str_any(&listing.model_description)
        .map_err(|e| bad(format!("{}: modelDescription.xml: {e}", fmu.display())))
}

/// The items of the enumeration type `name`.
fn items(md: &ModelDescription, name: &str) -> Json {
    match md.simple_type(name).map(|t| &t.kind) {
        Some(SimpleTypeKind::Enumeration { items, .. }) => {
            items.iter().map(|i| json!({ "name": i.name, "value": i.value, "description": i.description })).collect()
        }
        _ => Json::Array(Vec::new()),
    }
}

/// The model description as JSON: model, instance name `cosim run X.fmu` gives it, default
/// experiment, variables (with the unit of their declared type when they have none) and the
/// enumeration types with their items.
fn info_json(fmu: &Path, md: &ModelDescription) -> Json {
    let instance = master::single::from_description(fmu, md, &Default::default()).map(|s| s.instance).ok();
    let variables: Vec<Json> = md
        .model_variables
        .iter()
        .map(|v| {
            let declared = v.kind.declared_type();
            let mut o = json!({
                "name": v.name,
                "value_reference": v.value_reference,
                "type": v.kind.base_type().to_string(),
                "causality": v.causality.as_str(),
                "variability": v.variability.as_str(),
                "initial": v.effective_initial().map(|i| i.as_str()),
                "declared_type": declared,
                "description": v.description,
                "unit": Json::Null,
                "start": Json::Null,
            });
            match &v.kind {
                VariableKind::Real { attrs, start, .. } => {
                    let unit = attrs.unit.clone().or_else(|| {
                        match declared.and_then(|t| md.simple_type(t)).map(|t| &t.kind) {
                            Some(SimpleTypeKind::Real(a)) => a.unit.clone(),
                            _ => None,
                        }
                    });
                    o["unit"] = json!(unit);
                    o["start"] = json!(start);
                    o["min"] = json!(attrs.min);
                    o["max"] = json!(attrs.max);
                    o["nominal"] = json!(attrs.nominal);
                }
                VariableKind::Integer { attrs, start, .. } => {
                    o["start"] = json!(start);
                    o["min"] = json!(attrs.min);
                    o["max"] = json!(attrs.max);
                }
                VariableKind::Boolean { start, .. } => o["start"] = json!(start),
                VariableKind::String { start, .. } => o["start"] = json!(start),
                // FMI 3.0 Binary: the start value in hexadecimal (as `start_values` takes it).
                VariableKind::Binary { mime_type, max_size, start, .. } => {
                    o["start"] = json!(start.as_deref().map(model_description::to_hex));
                    o["mime_type"] = json!(mime_type.as_deref().unwrap_or(model_description::BINARY_MIME_TYPE));
                    o["max_size"] = json!(max_size);
                }
                VariableKind::Enumeration { declared_type, start, min, max, .. } => {
                    let items = items(md, declared_type);
                    let item = start.and_then(|s| {
                        items.as_array()?.iter().find(|i| i["value"] == json!(s)).map(|i| i["name"].clone())
                    });
                    o["start"] = json!(start);
                    o["start_item"] = item.unwrap_or(Json::Null);
                    o["min"] = json!(min);
                    o["max"] = json!(max);
                    o["items"] = items;
                }
            }
            o
        })
        .collect();
    let enumerations: Vec<Json> = md
        .type_definitions
        .iter()
        .filter(|t| matches!(t.kind, SimpleTypeKind::Enumeration { .. }))
        .map(|t| json!({ "name": t.name, "description": t.description, "items": items(md, &t.name) }))
        .collect();
    let de = md.default_experiment.as_ref();
    json!({
        "fmu": fmu.display().to_string(),
        "model_name": md.model_name,
        "fmi_version": md.fmi_version,
        "guid": md.guid,
        "description": md.description,
        "generation_tool": md.generation_tool,
        "model_identifier": md.co_simulation.as_ref().map(|c| c.model_identifier.clone()),
        "instance": instance,
        "default_experiment": de.map(|d| json!({
            "start_time": d.start_time, "stop_time": d.stop_time, "step_size": d.step_size, "tolerance": d.tolerance,
        })),
        "variables": variables,
        "enumerations": enumerations,
    })
}

/// `cosim.info`: the model description of `fmu` as JSON text.
#[pyfunction]
fn _info(fmu: PathBuf) -> PyResult<String> {
    let md = read(&fmu)?;
    Ok(info_json(&fmu, &md).to_string())
}

/// `cosim.simulate_fmu`: one FMU as `cosim run X.fmu` runs it; `start_values` as `name=value`
/// texts typed by the model description, `output` bare names. Returns what `_simulate` returns
/// (column names are `instance.variable`; the Python side strips the instance).
/// The instance name, the recorded columns (each (name, NumPy type)), the rows' bytes and the
/// summary (JSON).
type InstanceRows<'py> = (String, Vec<(String, &'static str)>, Bound<'py, PyBytes>, String);

#[pyfunction]
#[pyo3(signature = (fmu, start_time=None, stop_time=None, step_size=None, output_interval=None, start_values=Vec::new(), output=None, check=true, settings=None, input_file=None))]
#[allow(clippy::too_many_arguments)]
fn _simulate_fmu<'py>(
    py: Python<'py>,
    fmu: PathBuf,
    start_time: Option<f64>,
    stop_time: Option<f64>,
    step_size: Option<f64>,
    output_interval: Option<f64>,
    start_values: Vec<String>,
    output: Option<Vec<String>>,
    check: bool,
    settings: Option<Bound<'py, pyo3::types::PyDict>>,
    input_file: Option<PathBuf>,
) -> PyResult<InstanceRows<'py>> {
    super::register_worker(py)?;
    let opts = master::single::FmuOptions {
        start: start_time,
        stop: stop_time,
        step: step_size,
        start_values,
        output_interval,
        output_variables: output,
        input_file,
    };
    let single = master::single::builder(&fmu, &opts).map_err(err)?;
    let src = Source { builder: single.builder, fmus: FmuCache::with_host(crate::host()), ssp: None };
    let none = Options {
        stop_time: None,
        step: None,
        start_values: None,
        output: None,
        fmus: None,
        extrapolation: None,
        settings: settings.as_ref(),
    };
    let (names, rows, summary) = run_to_end(py, Inner::from_source(src, none, true)?, check)?;
    Ok((single.instance, names, rows, summary))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_info, m)?)?;
    m.add_function(wrap_pyfunction!(_simulate_fmu, m)?)?;
    Ok(())
}
