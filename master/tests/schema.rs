#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! One schema for the whole system file (`master::system::SystemFile`): a system with every key
//! of the schema given (checked against a value the type fills itself, so a new key fails this
//! test until it is given here) is the same system read from its TOML file and from the SSP it
//! exports (written and read back); an unknown key is refused by each front end, with its name.
//! (Python builds the same system from the same file: python/tests/test_schema.py.)

use master::fmu::FmuCache;
use master::ssp::annotation;
use master::system::{SystemBuilder, SystemFile};
use std::path::{Path, PathBuf};

mod support;
use support::tmp;

/// The `[[inputs]] file` of every-key.toml, written next to it.
pub const EVERY_KEY_INPUT: &str = "t,force\n0,0\n0.25,1\n0.25,2\n";

/// The system with every key given (master/tests/every-key.toml; FMU paths below `fmus`). Its
/// values are valid together: it resolves.
pub fn every_key_toml(fmus: &Path) -> String {
    include_str!("every-key.toml").replace("{fmus}", &fmus.display().to_string())
}

/// Every key path of `every` (a value the type filled itself; map entries under the key "a")
/// is given in `given`; `Err`: the first one missing.
fn covers(every: &toml::Value, given: &toml::Value, path: &str) -> Result<(), String> {
    match (every, given) {
        (toml::Value::Table(e), toml::Value::Table(g)) => {
            for (k, ev) in e {
                if k == "a" && !g.is_empty() {
                    // A map (instance names, start values, live ranges): every entry's keys together.
                    let merged = merge(g.values());
                    covers(ev, &merged, &format!("{path}.*"))?;
                } else {
                    let gv = g.get(k).ok_or_else(|| format!("{path}.{k} is not given"))?;
                    covers(ev, gv, &format!("{path}.{k}"))?;
                }
            }
            Ok(())
        }
        (toml::Value::Array(e), toml::Value::Array(g)) => match e.first() {
            Some(ev @ toml::Value::Table(_)) => covers(ev, &merge(g.iter()), &format!("{path}[]")),
            _ if g.is_empty() => Err(format!("{path} is empty")),
            _ => Ok(()),
        },
        (toml::Value::Table(_), _) => Err(format!("{path} is not a table")),
        _ => Ok(()),
    }
}

/// The union of tables (and of their nested tables).
fn merge<'a>(values: impl Iterator<Item = &'a toml::Value>) -> toml::Value {
    let mut out = toml::Table::new();
    for v in values {
        if let toml::Value::Table(t) = v {
            for (k, x) in t {
                let merged = match (out.remove(k), x) {
                    (Some(prev @ toml::Value::Table(_)), toml::Value::Table(_)) => merge([&prev, x].into_iter()),
                    (_, x) => x.clone(),
                };
                out.insert(k.clone(), merged);
            }
        }
    }
    toml::Value::Table(out)
}

fn fmu_dir() -> PathBuf {
    fmu_harness::paths::fmu_dir()
}

/// The content of a builder without what the SSP keeps its own way (FMU paths: extracted from
/// the package; start values: typed parameter bindings, an enumeration item as its value; an
/// input file: a table component of the package with the scale and offset applied and its own
/// column names — the inputs it drives and their interpolation stay, the values it gives are
/// compared by `System::describe`).
fn without_paths_and_starts(b: &SystemBuilder) -> toml::Value {
    let mut v = toml::Value::try_from(b.to_file()).unwrap();
    for (_, i) in v["instances"].as_table_mut().unwrap().iter_mut() {
        let i = i.as_table_mut().unwrap();
        i.remove("fmu");
        i.remove("start");
    }
    for input in v["inputs"].as_array_mut().unwrap() {
        let input = input.as_table_mut().unwrap();
        if input.remove("file").is_some() {
            for key in ["time", "scale", "offset"] {
                input.remove(key);
            }
            let driven: Vec<toml::Value> =
                input["columns"].as_table().unwrap().keys().map(|k| toml::Value::String(k.clone())).collect();
            input.insert("columns".into(), toml::Value::Array(driven));
        }
    }
    v
}

#[test]
fn every_schema_key_gives_the_same_system_from_toml_and_the_ssp_round_trip() {
    let dir = tmp("schema");
    let text = every_key_toml(&fmu_dir());
    let path = dir.join("every.toml");
    std::fs::write(&path, &text).unwrap();
    std::fs::write(dir.join("every-key-input.csv"), EVERY_KEY_INPUT).unwrap();

    // Every key of the schema is given above (the type's own list of keys).
    let every = toml::Value::try_from(SystemFile::every_field_set().unwrap()).unwrap();
    let given: toml::Value = toml::from_str(&text).unwrap();
    covers(&every, &given, "").unwrap();

    // The TOML reader: the file's content is the schema value, whole.
    let b = SystemBuilder::read(&path).unwrap();
    let file = SystemFile::from_toml(&text).unwrap();
    assert_eq!(b.settings(), &file.simulation);
    assert_eq!(toml::Value::try_from(&file).unwrap(), given, "the schema value writes back the file's keys");
    let mut fmus = FmuCache::default();
    let from_toml = b.load(&mut fmus).unwrap();
    assert!(from_toml.real_time().is_some() && from_toml.live().is_some());

    // The SSP round trip: exported, read back, the same system (and the same schema value but
    // for the FMU paths and the typed start values).
    let ssp = dir.join("every.ssp");
    master::ssp::export(&path, &ssp).unwrap();
    let read = master::ssp::read(&ssp).unwrap();
    let mut fmus2 = FmuCache::default();
    let from_ssp = read.builder.load(&mut fmus2).unwrap();
    assert_eq!(from_ssp.describe(), from_toml.describe());
    assert_eq!(without_paths_and_starts(&read.builder), without_paths_and_starts(&b));
}

#[test]
fn an_unknown_key_is_refused_by_each_front_end_with_its_name() {
    let text = every_key_toml(&fmu_dir());
    for (table, bad) in [
        ("[simulation]\n", "stepp = 1.0\n"),
        ("[instances.m2]\n", "fmuu = \"x.fmu\"\n"),
        ("[[connections]]\nfrom = \"m1.F\"\n", "gian = 1.0\n"),
        ("[[inputs]]\nto = \"m1.xi_dot\"\n", "interpolaton = \"linear\"\n"),
        ("[[bonds]]\nname = \"coupling\"\n", "energy_corection = true\n"),
        ("[live]\n", "port = 1\n"),
        ("[outputs]\n", "variable = []\n"),
    ] {
        let name = bad.split(' ').next().unwrap();
        // A system file.
        let wrong = text.replacen(table, &format!("{table}{bad}"), 1);
        assert_ne!(wrong, text, "{table}");
        let e = SystemBuilder::parse(Path::new("every.toml"), &wrong).unwrap_err().to_string();
        assert!(e.contains(&format!("unknown field `{name}`")), "{e}");
        // `every.toml:LINE:COLUMN: key: …`.
        let at: Vec<&str> = e.splitn(4, ':').collect();
        assert!(at[0] == "every.toml" && at[1].parse::<usize>().is_ok() && at[2].parse::<usize>().is_ok(), "{e}");
        // Our SSP annotation.
        let e = annotation::apply(&mut SystemBuilder::new(), &format!("{table}{bad}")).unwrap_err();
        assert!(e.1.contains(&format!("unknown field `{name}`")), "{e:?}");
    }
    // A table the schema does not have.
    let e = SystemBuilder::parse(Path::new("every.toml"), &format!("{text}[simulations]\nstop = 1.0\n"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown field `simulations`"), "{e}");
}

#[test]
fn an_instance_without_an_fmu_is_refused_with_its_key() {
    let e = SystemBuilder::parse(Path::new("s.toml"), "[simulation]\nstop = 1.0\n[instances.a]\nstep = 0.1\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("instances.a.fmu") && e.contains("no FMU"), "{e}");
}
