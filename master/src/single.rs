//! `cosim run X.fmu`: one FMU as a system of one instance, the way `fmpy simulate` and `fmusim`
//! run an FMU — a front end that only produces a [`SystemBuilder`] (the run is the ordinary
//! [`crate::Execution`]).
//!
//! - the instance is named after the Co-Simulation `modelIdentifier` (the Model Exchange one
//!   for an FMU without Co-Simulation; `model` when that is not a valid instance name), so results.csv's columns are `<modelIdentifier>.<variable>`;
//! - the experiment is the FMU's `DefaultExperiment` unless overridden; without one, as FMPy:
//!   start 0, stop start + 1 s, a step dividing stop − start into 500–1000 steps. Where each
//!   value came from is in [`Single::notes`];
//! - `--start-value name=value` is typed by the model description (Real, Integer, Boolean
//!   `true`/`false`, String, Enumeration item name or number); a whole FMI 3.0 array takes a
//!   bracketed list, `name=[1,2,3]` (row-major);
//! - `--output-interval` (a multiple of the step) and `--output-variables` (default: every
//!   output).

use crate::error::{MasterError, Result};
use crate::fmu::Archive;
use crate::suggest::did_you_mean;
use crate::system::{SystemBuilder, Value};
use model_description::{BaseType, Causality, ModelDescription, SimpleTypeKind, Variability};
use std::path::Path;

/// What the command line says about a single-FMU run (every field optional).
#[derive(Debug, Clone, Default)]
pub struct FmuOptions {
    /// Start time (s); default `DefaultExperiment.startTime`, else 0.
    pub start: Option<f64>,
    /// Stop time (s); default `DefaultExperiment.stopTime`, else start + 1 s.
    pub stop: Option<f64>,
    /// Communication step (s); default `DefaultExperiment.stepSize`, else (stop − start)/N with
    /// N in 500..1000 (FMPy's choice).
    pub step: Option<f64>,
    /// `name=value` start values, typed by the model description.
    pub start_values: Vec<String>,
    /// Time between rows of results.csv (s): a whole multiple of the step.
    pub output_interval: Option<f64>,
    /// Recorded variables (names in the FMU); default every output.
    pub output_variables: Option<Vec<String>>,
    /// `--input-file`: a CSV file driving the inputs named by its columns (FMPy's and fmusim's
    /// format: the first column the time; Real inputs interpolated linearly, others held).
    pub input_file: Option<std::path::PathBuf>,
}

/// One FMU put together as a system.
#[derive(Debug, Clone)]
pub struct Single {
    /// The system of one instance.
    pub builder: SystemBuilder,
    /// The instance's name.
    pub instance: String,
    /// What was chosen and why, one line each (the experiment and where its values came from).
    pub notes: Vec<String>,
}

/// Reads the model description of the FMU at `fmu` (without extracting or loading anything)
/// and builds its system ([`from_description`]).
pub fn builder(fmu: &Path, opts: &FmuOptions) -> Result<Single> {
    let listing = Archive::read_model_description(fmu)?;
    let (md, x) = crate::fmu::load::read_description(fmu, &listing.model_description)?;
    // The variables cosim does not address (String and Binary arrays, …): named when asked for,
    // and said to be left out of results.csv otherwise.
    let unaddressed = x.as_ref().map(|x| x.skipped.clone()).unwrap_or_default();
    if let Some(names) = &opts.output_variables {
        for name in names {
            let bare = name.rsplit_once('.').map_or(name.as_str(), |(_, n)| n);
            if let Some(why) = unaddressed.iter().find(|u| u.contains(&format!(" name=\"{bare}\">"))) {
                return Err(MasterError::System {
                    path: fmu.to_path_buf(),
                    key: format!("--output-variables {}", names.join(",")),
                    message: format!("{bare} cannot be recorded: cosim does not address this {why}"),
                });
            }
        }
    }
    let md = match x {
        Some(x) if !x.structural.is_empty() => {
            configured_description(fmu, &listing.model_description, &x, opts)?.unwrap_or(md)
        }
        _ => md,
    };
    let mut single = from_description(fmu, &md, opts)?;
    if opts.output_variables.is_none() && !unaddressed.is_empty() {
        single.notes.push(format!(
            "not in results.csv (cosim does not address them, `cosim info` lists them): {}",
            unaddressed.join("; ")
        ));
    }
    Ok(single)
}

/// The description of an FMI 3.0 FMU read again with the structural parameters the
/// `--start-value`s set (its arrays sized by them), `None` when they set none. A value that is
/// not an integer, or outside its parameter's bounds, is an error naming the option.
fn configured_description(
    fmu: &Path,
    xml: &str,
    x: &model_description::Fmi3,
    opts: &FmuOptions,
) -> Result<Option<ModelDescription>> {
    let err = |key: String, message: String| MasterError::System { path: fmu.to_path_buf(), key, message };
    let mut values = Vec::new();
    let mut keys = Vec::new();
    for arg in &opts.start_values {
        let Some((name, text)) = arg.split_once('=') else { continue };
        let name = name.trim();
        // Bare (`n`) or qualified with the instance (`statespace.n`).
        let Some(s) = x
            .structural
            .iter()
            .find(|s| name == s.name || name.strip_suffix(s.name.as_str()).is_some_and(|p| p.ends_with('.')))
        else {
            continue;
        };
        let key = format!("--start-value {arg}");
        let v = text.trim().parse::<i128>().map_err(|_| {
            err(
                key.clone(),
                format!("structural parameter {} is a {}: {text:?} is not an integer", s.name, s.ty.as_str()),
            )
        })?;
        values.push((s.name.as_str(), v));
        keys.push(key);
    }
    if values.is_empty() {
        return Ok(None);
    }
    model_description::from_str3_configured(xml, &values).map(|(md, _)| Some(md)).map_err(|m| err(keys.join(", "), m))
}

/// FMPy's `auto_interval`: a round step dividing `t` into roughly 500–1000 steps.
fn auto_interval(t: f64) -> f64 {
    let h = 10f64.powf(t.log10().round() - 3.0);
    let n = t / h;
    if n >= 2500.0 {
        h * 5.0
    } else if n >= 2000.0 {
        h * 4.0
    } else if n >= 1000.0 {
        h * 2.0
    } else if n <= 200.0 {
        h / 5.0
    } else if n <= 250.0 {
        h / 4.0
    } else if n <= 500.0 {
        h / 2.0
    } else {
        h
    }
}

/// The system of one instance of the FMU whose description is `md` (`fmu`: its file, named in
/// errors and used as the instance's FMU). Every error is [`MasterError::System`] naming the
/// file, the option (`--start-value x0=abc`) and what is wrong with the value.
pub fn from_description(fmu: &Path, md: &ModelDescription, opts: &FmuOptions) -> Result<Single> {
    let err = |key: String, message: String| MasterError::System { path: fmu.to_path_buf(), key, message };
    // Named after the interface that runs: Co-Simulation where the FMU has it, else Model
    // Exchange (integrated by the master, see fmu::me).
    let id = match (&md.co_simulation, &md.model_exchange) {
        (Some(cs), _) => cs.model_identifier.as_str(),
        (None, Some(me)) => me.model_identifier.as_str(),
        (None, None) => {
            return Err(MasterError::Fmu {
                path: fmu.to_path_buf(),
                message: "neither <CoSimulation> nor <ModelExchange>: cosim runs FMI 2.0 and 3.0 Co-Simulation \
                          FMUs and FMI 2.0 Model Exchange FMUs"
                    .into(),
            })
        }
    };
    let instance = if !id.is_empty() && !id.contains('.') { id.to_owned() } else { "model".to_owned() };

    // The experiment, and where each value came from.
    let de = md.default_experiment.as_ref();
    let pick = |given: Option<f64>, option: &str, default: Option<f64>, attribute: &str| match (given, default) {
        (Some(x), _) => Some((x, option.to_owned())),
        (None, Some(x)) => Some((x, format!("DefaultExperiment {attribute}"))),
        (None, None) => None,
    };
    let (start, start_from) = pick(opts.start, "--start-time", de.and_then(|d| d.start_time), "startTime")
        .unwrap_or((0.0, "no DefaultExperiment startTime: 0".into()));
    if !start.is_finite() {
        return Err(err("start time".into(), format!("{start} ({start_from}) is not finite")));
    }
    let (stop, stop_from) = pick(opts.stop, "--stop-time", de.and_then(|d| d.stop_time), "stopTime")
        .unwrap_or((start + 1.0, "no DefaultExperiment stopTime: start + 1 s, as FMPy".into()));
    if !(stop.is_finite() && stop > start) {
        return Err(err("stop time".into(), format!("{stop} s ({stop_from}) must be after the start time {start} s")));
    }
    let (step, step_from) = match pick(opts.step, "--step", de.and_then(|d| d.step_size), "stepSize") {
        Some(s) => s,
        None => {
            let t = stop - start;
            let n = (t / auto_interval(t)).round().max(1.0);
            (t / n, format!("no DefaultExperiment stepSize: (stop - start)/{n}, as FMPy"))
        }
    };
    if !(step.is_finite() && step > 0.0) {
        return Err(err("step".into(), format!("communication step {step} s ({step_from}) must be positive")));
    }
    let n = ((stop - start) / step).round();
    if (n * step - (stop - start)).abs() > 1e-9 * (stop - start).max(step) {
        return Err(err(
            "step".into(),
            format!(
                "stop - start = {} s ({stop_from}; {start_from}) is not a whole number of communication steps \
                 {step} s ({step_from}): {}",
                crate::suggest::short(stop - start),
                crate::suggest::fitting_span(start, stop, step)
            ),
        ));
    }
    let mut notes = vec![format!(
        "experiment: start {start} s ({start_from}), stop {stop} s ({stop_from}), step {step} s ({step_from})"
    )];

    let mut b = SystemBuilder::new();
    b.source(fmu).start(start).stop(stop).step(step);
    let draft = b.instance(&instance, fmu);
    draft.set_fmu(fmu);
    for arg in &opts.start_values {
        let key = format!("--start-value {arg}");
        let (name, text) = arg
            .split_once('=')
            .ok_or_else(|| err(key.clone(), "expected name=value (e.g. --start-value x0=0.1)".into()))?;
        let name = bare(md, &instance, name.trim());
        if md.variable(name).is_none() && !is_array(md, name) {
            let hint = suggest(md, &instance, name);
            return Err(err(key, format!("no variable \"{name}\" in {}{hint}", md.model_name)));
        }
        let value = start_value(md, name, text).map_err(|m| err(key.clone(), m))?;
        draft.start(name, value);
    }

    if let Some(file) = &opts.input_file {
        input_file(&mut b, md, &instance, file, &mut notes).map_err(|m| err("--input-file".into(), m))?;
    }
    if let Some(interval) = opts.output_interval {
        let k = (interval / step).round();
        if !(interval.is_finite() && k >= 1.0 && (k * step - interval).abs() <= 1e-9 * interval) {
            return Err(err(
                "--output-interval".into(),
                format!("{interval} s is not a whole multiple of the communication step {step} s ({step_from})"),
            ));
        }
        b.record_every(k as u64);
        notes.push(format!("output interval {interval} s: every {k} steps"));
    }
    if let Some(names) = &opts.output_variables {
        let mut dotted = Vec::with_capacity(names.len());
        for name in names {
            let name = bare(md, &instance, name);
            let v = md.variable(name).ok_or_else(|| {
                err(
                    format!("--output-variables {}", names.join(",")),
                    format!(
                        "no variable \"{name}\" in {} ({}){}",
                        md.model_name,
                        fmu.display(),
                        suggest(md, &instance, name)
                    ),
                )
            })?;
            if v.kind.base_type() == BaseType::String {
                return Err(err(
                    format!("--output-variables {}", names.join(",")),
                    format!("{name} is a String and cannot be recorded in results.csv"),
                ));
            }
            dotted.push(format!("{instance}.{name}"));
        }
        b.outputs(dotted);
    }
    Ok(Single { builder: b, instance, notes })
}

/// `--input-file`: one `[[inputs]] file` whose columns are the inputs they name (bare, or
/// qualified with the instance as in results.csv); a column naming no input is left out, with a
/// note (FMPy ignores them too); an input without a column keeps its start value.
fn input_file(
    b: &mut SystemBuilder,
    md: &ModelDescription,
    instance: &str,
    file: &Path,
    notes: &mut Vec<String>,
) -> std::result::Result<(), String> {
    let mut first = true;
    let mut ignored = Vec::new();
    let mut pairs = Vec::new();
    crate::system::input_file::header_names(file, |name| {
        if std::mem::take(&mut first) {
            return false; // the time
        }
        let own = bare(md, instance, name);
        match md.variable(own) {
            Some(v) if v.causality == Causality::Input => pairs.push((format!("{instance}.{own}"), name.to_owned())),
            _ if ignored.len() < 5 => ignored.push(name.to_owned()),
            _ => {}
        }
        false
    })
    .map_err(|e| format!("{}: {e}", file.display()))?;
    if !ignored.is_empty() {
        notes.push(format!("{}: columns naming no input, not used: {}", file.display(), ignored.join(", ")));
    }
    if pairs.is_empty() {
        return Err(format!("{}: no column names an input of {}", file.display(), md.model_name));
    }
    notes.push(format!(
        "inputs from {}: {}",
        file.display(),
        pairs.iter().map(|(_, c)| c.as_str()).collect::<Vec<_>>().join(", ")
    ));
    let d = b.input_file(std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf()));
    for (to, column) in &pairs {
        d.column(to, column);
    }
    Ok(())
}

/// The variable's own name in `md` for a name given either bare (`x0`) or qualified with the
/// run's instance (`VanDerPol.x0`, the results.csv column): the naming rule of [`crate::names`]
/// for one instance. A name the FMU has as it is wins (an FMI name may contain dots).
fn bare<'a>(md: &ModelDescription, instance: &str, name: &'a str) -> &'a str {
    match name.strip_prefix(instance).and_then(|rest| rest.strip_prefix('.')) {
        Some(own) if md.variable(name).is_none() && (md.variable(own).is_some() || is_array(md, own)) => own,
        _ => name,
    }
}

/// `; did you mean …?` for a name `md` does not have, in the form it was given: qualified with
/// the run's instance (`VanDerPol.xx` → `"VanDerPol.x"`) or bare (`xx` → `"x"`).
fn suggest(md: &ModelDescription, instance: &str, name: &str) -> String {
    let own = md.model_variables.iter().map(|v| v.name.as_str());
    if name.strip_prefix(instance).is_some_and(|rest| rest.starts_with('.')) {
        let qualified: Vec<String> = own.map(|v| format!("{instance}.{v}")).collect();
        did_you_mean(name, qualified.iter().map(String::as_str))
    } else {
        did_you_mean(name, own)
    }
}

fn is_array(md: &ModelDescription, name: &str) -> bool {
    crate::system::arrays::array(md, name).is_some()
}

/// `text` as the start value of `name`: a scalar ([`typed_value`]), or, when `name` is a whole
/// FMI 3.0 array (its elements `name[1]`, …), a bracketed list of as many values, row-major
/// (`[1, 2, 3]`; nested brackets `[[1, 2], [3, 4]]` read row by row), each typed by its element.
fn start_value(md: &ModelDescription, name: &str, text: &str) -> std::result::Result<Value, String> {
    let array = match crate::system::arrays::array(md, name) {
        Some(a) => a,
        None => return typed_value(md, name, text),
    };
    let raw = text.trim();
    let balanced = raw.matches('[').count() == raw.matches(']').count();
    let Some(inside) = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']')).filter(|_| balanced) else {
        return Err(format!(
            "{name} is an array of shape {}: give its {} values in brackets, row-major (e.g. {name}=[{}]), or \
             name an element, e.g. {}",
            array.shape_text(),
            array.elements.len(),
            vec!["0"; array.elements.len()].join(","),
            array.elements[0]
        ));
    };
    let flat = inside.replace(['[', ']'], "");
    let items: Vec<&str> = if flat.trim().is_empty() { Vec::new() } else { flat.split(',').map(str::trim).collect() };
    if items.len() != array.elements.len() {
        return Err(format!(
            "{name} has shape {} ({} elements) but {} values were given: {raw}",
            array.shape_text(),
            array.elements.len(),
            items.len()
        ));
    }
    let values = array.elements.iter().zip(items).map(|(element, item)| typed_value(md, element, item));
    Ok(Value::Array(values.collect::<std::result::Result<_, _>>()?))
}

/// `text` as a start value of the variable `name` of `md`, typed by its declaration; the error
/// names the variable, its type and the value.
fn typed_value(md: &ModelDescription, name: &str, text: &str) -> std::result::Result<Value, String> {
    let v = md.variable(name).ok_or_else(|| {
        let hint = did_you_mean(name, md.model_variables.iter().map(|v| v.name.as_str()));
        format!("no variable \"{name}\" in {}{hint}", md.model_name)
    })?;
    if matches!(v.causality, Causality::Output | Causality::CalculatedParameter | Causality::Independent) {
        return Err(format!("{name} has causality {} and cannot be given a start value", v.causality));
    }
    if v.variability == Variability::Constant {
        return Err(format!("{name} is a constant and cannot be given a start value"));
    }
    let ty = v.kind.base_type();
    let raw = text.trim();
    let bad = |want: &str| format!("\"{text}\" is not {want} ({name} is {ty})");
    match ty {
        BaseType::Real => match raw.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Value::Real(x)),
            _ => Err(bad("a finite number")),
        },
        // FMI 3.0: up to 64 bits (the instance checks the variable's own type when it sets it).
        BaseType::Integer if md.fmi_version.starts_with("3.") => {
            match (raw.parse::<i64>(), raw.parse::<u64>()) {
                (Ok(k), _) => Ok(Value::Integer(k)),
                // A UInt64 above 2^63 − 1: its digits, as a system file gives it.
                (_, Ok(_)) => Ok(Value::String(raw.to_string())),
                _ => Err(bad("a 64-bit integer")),
            }
        }
        BaseType::Integer => raw.parse::<i32>().map(Value::from).map_err(|_| bad("a 32-bit integer")),
        BaseType::Boolean => match raw.to_ascii_lowercase().as_str() {
            "true" | "1" => Ok(Value::Boolean(true)),
            "false" | "0" => Ok(Value::Boolean(false)),
            _ => Err(bad("true or false")),
        },
        BaseType::String => Ok(Value::String(text.to_owned())),
        // Hexadecimal, decoded (and checked) with the system's start values.
        BaseType::Binary => Ok(Value::String(raw.to_owned())),
        BaseType::Enumeration => {
            let items = v
                .kind
                .declared_type()
                .and_then(|t| md.simple_type(t))
                .and_then(|t| match &t.kind {
                    SimpleTypeKind::Enumeration { items, .. } => Some(items),
                    _ => None,
                })
                .ok_or_else(|| format!("{name} is an Enumeration without a declared type"))?;
            let listed = || items.iter().map(|i| format!("{} = {}", i.name, i.value)).collect::<Vec<_>>().join(", ");
            if let Ok(k) = raw.parse::<i32>() {
                if items.iter().any(|i| i.value == k) {
                    return Ok(Value::from(k));
                }
                return Err(format!("{k} is not an item of {name} ({})", listed()));
            }
            match items.iter().find(|i| i.name == raw) {
                Some(i) => Ok(Value::from(i.name.as_str())),
                None => Err(format!("\"{raw}\" is not an item of {name} ({})", listed())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    const XML: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="M" guid="{g}">
  <CoSimulation modelIdentifier="m_id"/>
  <TypeDefinitions>
    <SimpleType name="Mode"><Enumeration><Item name="slow" value="1"/><Item name="fast" value="2"/></Enumeration></SimpleType>
  </TypeDefinitions>
  <ModelVariables>
    <ScalarVariable name="r" valueReference="0" causality="parameter" variability="fixed" initial="exact"><Real start="1"/></ScalarVariable>
    <ScalarVariable name="i" valueReference="1" causality="parameter" variability="fixed" initial="exact"><Integer start="1"/></ScalarVariable>
    <ScalarVariable name="b" valueReference="2" causality="parameter" variability="fixed" initial="exact"><Boolean start="false"/></ScalarVariable>
    <ScalarVariable name="s" valueReference="3" causality="parameter" variability="fixed" initial="exact"><String start="a"/></ScalarVariable>
    <ScalarVariable name="e" valueReference="4" causality="parameter" variability="fixed" initial="exact"><Enumeration declaredType="Mode" start="1"/></ScalarVariable>
    <ScalarVariable name="y" valueReference="5" causality="output"><Real/></ScalarVariable>
    <ScalarVariable name="txt" valueReference="6" causality="output" variability="discrete"><String/></ScalarVariable>
  </ModelVariables>
  <ModelStructure><Outputs><Unknown index="6"/><Unknown index="7"/></Outputs></ModelStructure>
</fmiModelDescription>"#;

    fn md(default_experiment: &str) -> ModelDescription {
        model_description::from_str(&XML.replace("<ModelVariables>", &format!("{default_experiment}<ModelVariables>")))
            .unwrap()
    }

    fn single(de: &str, opts: &FmuOptions) -> Result<Single> {
        from_description(Path::new("dir/m.fmu"), &md(de), opts)
    }

    fn error(de: &str, opts: &FmuOptions) -> String {
        match single(de, opts) {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn start_values_are_typed_by_the_model_description() {
        let m = md("");
        let ok = |name: &str, text: &str| typed_value(&m, name, text).unwrap();
        assert_eq!(ok("r", "0.1"), Value::Real(0.1));
        assert_eq!(ok("r", "2"), Value::Real(2.0));
        assert_eq!(ok("i", "-3"), Value::Integer(-3));
        assert_eq!(ok("b", "true"), Value::Boolean(true));
        assert_eq!(ok("b", "False"), Value::Boolean(false));
        assert_eq!(ok("s", "x=y"), Value::String("x=y".into()));
        assert_eq!(ok("e", "fast"), Value::String("fast".into()));
        assert_eq!(ok("e", "2"), Value::Integer(2));
        let bad = |name: &str, text: &str| typed_value(&m, name, text).unwrap_err();
        assert_eq!(bad("r", "abc"), "\"abc\" is not a finite number (r is Real)");
        assert_eq!(bad("r", "inf"), "\"inf\" is not a finite number (r is Real)");
        assert_eq!(bad("i", "1.5"), "\"1.5\" is not a 32-bit integer (i is Integer)");
        assert_eq!(bad("b", "yes"), "\"yes\" is not true or false (b is Boolean)");
        assert_eq!(bad("e", "medium"), "\"medium\" is not an item of e (slow = 1, fast = 2)");
        assert_eq!(bad("e", "3"), "3 is not an item of e (slow = 1, fast = 2)");
        assert_eq!(bad("q", "1"), "no variable \"q\" in M");
        assert_eq!(bad("rr", "1"), "no variable \"rr\" in M; did you mean \"r\"?");
        assert!(bad("y", "1").contains("causality output"));
    }

    #[test]
    fn the_experiment_comes_from_the_options_the_default_experiment_or_fmpy_defaults() {
        let de = r#"<DefaultExperiment startTime="1" stopTime="3" stepSize="0.5"/>"#;
        let s = single(de, &FmuOptions::default()).unwrap();
        let sys = s.builder.build(&[&md(de)]).unwrap();
        assert_eq!((sys.start(), sys.stop(), sys.step(), sys.steps()), (1.0, 3.0, 0.5, 4));
        assert_eq!(s.instance, "m_id");
        assert_eq!(sys.instances()[0].fmu, Path::new("dir/m.fmu"));
        assert!(s.notes[0].contains("stop 3 s (DefaultExperiment stopTime)"), "{:?}", s.notes);
        // Default outputs: every output that is not a String.
        assert_eq!(sys.outputs().iter().map(|v| sys.label(v)).collect::<Vec<_>>(), ["m_id.y"]);

        let opts = FmuOptions {
            stop: Some(2.0),
            step: Some(0.25),
            start_values: vec!["r=0.5".into(), "e=fast".into(), "b=true".into()],
            output_interval: Some(0.5),
            output_variables: Some(vec!["r".into(), "y".into()]),
            ..Default::default()
        };
        let sys = single(de, &opts).unwrap().builder.build(&[&md(de)]).unwrap();
        assert_eq!((sys.start(), sys.stop(), sys.step(), sys.record_every()), (1.0, 2.0, 0.25, 2));
        assert_eq!(sys.outputs().iter().map(|v| sys.label(v)).collect::<Vec<_>>(), ["m_id.r", "m_id.y"]);
        assert_eq!(sys.instances()[0].starts.len(), 3);

        // The naming rule: the results.csv column's qualified name works where the bare one does.
        let opts = FmuOptions {
            start_values: vec!["m_id.r=0.5".into()],
            output_variables: Some(vec!["m_id.r".into(), "y".into()]),
            ..Default::default()
        };
        let sys = single(de, &opts).unwrap().builder.build(&[&md(de)]).unwrap();
        assert_eq!(sys.outputs().iter().map(|v| sys.label(v)).collect::<Vec<_>>(), ["m_id.r", "m_id.y"]);
        assert_eq!(sys.instances()[0].starts.len(), 1);

        // Without a DefaultExperiment: FMPy's choices, said so.
        let s = single("", &FmuOptions::default()).unwrap();
        let sys = s.builder.build(&[&md("")]).unwrap();
        assert_eq!((sys.start(), sys.stop(), sys.steps()), (0.0, 1.0, 500));
        assert!(s.notes[0].contains("start + 1 s, as FMPy") && s.notes[0].contains("stepSize"), "{:?}", s.notes);
    }

    #[test]
    fn option_errors_name_the_file_the_option_and_the_value() {
        let de = r#"<DefaultExperiment startTime="0" stopTime="1" stepSize="0.1"/>"#;
        let with = |f: fn(&mut FmuOptions)| {
            let mut o = FmuOptions::default();
            f(&mut o);
            error(de, &o)
        };
        let e = with(|o| o.start_values = vec!["r=abc".into()]);
        assert_eq!(e, "dir/m.fmu: --start-value r=abc: \"abc\" is not a finite number (r is Real)");
        let e = with(|o| o.start_values = vec!["r".into()]);
        assert!(e.contains("--start-value r: expected name=value"), "{e}");
        let e = with(|o| o.output_interval = Some(0.15));
        assert!(
            e.contains("--output-interval") && e.contains("0.15 s is not a whole multiple") && e.contains("0.1 s"),
            "{e}"
        );
        let e = with(|o| o.output_variables = Some(vec!["y".into(), "zz".into()]));
        assert!(e.contains("--output-variables y,zz") && e.contains("no variable \"zz\""), "{e}");
        // Unknown names get the nearest one in the form they were given (issue 49: everywhere).
        let e = with(|o| o.output_variables = Some(vec!["yy".into()]));
        assert!(e.ends_with("no variable \"yy\" in M (dir/m.fmu); did you mean \"y\"?"), "{e}");
        let e = with(|o| o.output_variables = Some(vec!["m_id.yy".into()]));
        assert!(e.ends_with("no variable \"m_id.yy\" in M (dir/m.fmu); did you mean \"m_id.y\"?"), "{e}");
        let e = with(|o| o.start_values = vec!["m_id.rr=1".into()]);
        assert_eq!(e, "dir/m.fmu: --start-value m_id.rr=1: no variable \"m_id.rr\" in M; did you mean \"m_id.r\"?");
        let e = with(|o| o.start_values = vec!["rr=1".into()]);
        assert_eq!(e, "dir/m.fmu: --start-value rr=1: no variable \"rr\" in M; did you mean \"r\"?");
        let e = with(|o| o.output_variables = Some(vec!["txt".into()]));
        assert!(e.contains("txt is a String"), "{e}");
        let e = with(|o| o.step = Some(0.3));
        assert!(e.contains("not a whole number of communication steps 0.3 s (--step)"), "{e}");
        // stop − start = 0.3 − 0.1 = 0.19999999999999998 as a double: printed rounded.
        let e = with(|o| (o.start, o.stop, o.step) = (Some(0.1), Some(0.3), Some(0.15)));
        assert!(e.contains("stop - start = 0.2 s (--stop-time; --start-time) is not a whole number"), "{e}");
        let e = with(|o| o.stop = Some(-1.0));
        assert!(e.contains("-1 s (--stop-time) must be after the start time 0 s"), "{e}");
    }

    #[test]
    fn auto_interval_matches_fmpy() {
        // fmpy.util.auto_interval
        for (t, h) in [(1.0, 2e-3), (10.0, 0.02), (3.0, 5e-3), (0.5, 5e-4), (100.0, 0.2)] {
            assert!((auto_interval(t) - h).abs() < 1e-12 * h, "auto_interval({t}) = {}", auto_interval(t));
        }
    }
}
