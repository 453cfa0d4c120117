//! A system → `.ssp`: `SystemStructure.ssd`, the FMUs under `resources/`, the start values in
//! `resources/start-values.ssv` (bound at the system level, names `instance.variable`), gain and
//! offset as `ssc:LinearTransformation`, start/stop as `ssd:DefaultExperiment`, the rest in our
//! annotation (see `annotation`).
//!
//! Written so that OMSimulator, FMPy, libcosim and ecos load it, within SSP 1.0: names are
//! identifiers (`ident`; the original in `description`), and the system's `ssd:Annotations`
//! (the last child of `ssd:System`, as the schema orders it) hold OMSimulator's
//! `org.openmodelica` annotation first (`oms:FixedStepMaster` with the system's step: without it
//! OMSimulator fails or hangs), then ours; nothing under the root's `ssd:Annotations`, which
//! OMSimulator refuses ("wrong xml schema detected").

use super::xml::{escape, SSC, SSD, SSV};
use super::{annotation, ident, tables};
use crate::error::{MasterError, Result};
use crate::fmu::FmuCache;
use crate::system::{StartValue, SystemBuilder};
use model_description::{BaseType, ModelDescription, SimpleTypeKind, Unit, VariableKind};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// Where the start values go inside the package.
const SSV_PATH: &str = "resources/start-values.ssv";

/// OMSimulator's namespace for its annotations (prefix `oms`, which it requires literally).
pub(super) const OMS: &str = "https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd";
/// The `type` of OMSimulator's annotations.
pub(super) const OMS_TYPE: &str = "org.openmodelica";

/// How start values of FMI enumeration variables are written in the `.ssv`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EnumerationForm {
    /// `ssv:Enumeration value="item"`: SSP 1.0's form (the item's name), on request
    /// (`cosim export-ssp --enumerations name`). cosim applies it; FMPy's `simulate_ssp` fails
    /// on it (it sets `int(value)`), OMSimulator ignores it ("Unknown ParameterBinding-type")
    /// and simulates the FMU's default.
    Name,
    /// `ssv:Integer value="k"` (the item's value), the default: the form every reader tested
    /// takes — cosim, FMPy and OMSimulator apply it with `fmi2SetInteger`, as FMI 2.0 sets
    /// enumerations; libcosim and ecos load it without error (they apply no enumeration in any
    /// form, so the FMU's default stays).
    #[default]
    Integer,
}

/// Options of [`export_with`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ExportOptions {
    /// How enumeration start values are written.
    pub enumerations: EnumerationForm,
}

/// What [`export`] wrote.
#[derive(Debug, Clone)]
pub struct Exported {
    /// Instances (components).
    pub components: usize,
    /// Distinct FMU files embedded.
    pub fmus: usize,
    /// Connections.
    pub connections: usize,
    /// Start values in the `.ssv`.
    pub parameters: usize,
}

fn xs_double(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x == f64::INFINITY {
        "INF".into()
    } else if x == f64::NEG_INFINITY {
        "-INF".into()
    } else {
        format!("{x:?}")
    }
}

/// The unit of a Real variable (its own or its declared type's).
fn unit_of(md: &ModelDescription, name: &str) -> Option<String> {
    let v = md.variable(name)?;
    match &v.kind {
        VariableKind::Real { attrs, declared_type, .. } => {
            attrs.unit.clone().or_else(|| match &md.simple_type(declared_type.as_deref()?)?.kind {
                SimpleTypeKind::Real(a) => a.unit.clone(),
                _ => None,
            })
        }
        _ => None,
    }
}

fn enumeration_item(md: &ModelDescription, name: &str, value: i128) -> Option<String> {
    let ty = md.variable(name)?.kind.declared_type()?;
    match &md.simple_type(ty)?.kind {
        SimpleTypeKind::Enumeration { items, .. } => {
            items.iter().find(|i| i128::from(i.value) == value).map(|i| i.name.clone())
        }
        _ => None,
    }
}

fn unit_xml(out: &mut String, u: &Unit) {
    let _ = write!(out, "    <ssc:Unit name=\"{}\">\n      <ssc:BaseUnit", escape(&u.name));
    if let Some(b) = &u.base_unit {
        for (k, v) in
            [("kg", b.kg), ("m", b.m), ("s", b.s), ("A", b.a), ("K", b.k), ("mol", b.mol), ("cd", b.cd), ("rad", b.rad)]
        {
            if v != 0 {
                let _ = write!(out, " {k}=\"{v}\"");
            }
        }
        if b.factor != 1.0 {
            let _ = write!(out, " factor=\"{}\"", xs_double(b.factor));
        }
        if b.offset != 0.0 {
            let _ = write!(out, " offset=\"{}\"", xs_double(b.offset));
        }
    }
    out.push_str("/>\n    </ssc:Unit>\n");
}

/// Writes the system file `system` (TOML) as an SSP at `out`, with its FMUs embedded. The system
/// is validated first (its FMUs loaded), so only runnable systems are exported.
pub fn export(system: &Path, out: &Path) -> Result<Exported> {
    export_with(system, out, &ExportOptions::default())
}

/// [`export`] with options.
pub fn export_with(system: &Path, out: &Path, opts: &ExportOptions) -> Result<Exported> {
    let mut b = SystemBuilder::read(system)?;
    let original_names = ident::rename_instances(&mut b);
    let mut fmus = FmuCache::default();
    let sys = b.load(&mut fmus)?;
    let stem = system.file_stem().map_or_else(|| "system".to_owned(), |s| s.to_string_lossy().into_owned());
    let name = ident::identifier(&stem);
    let described = |original: &str, name: &str| {
        if original == name {
            String::new()
        } else {
            format!(" description=\"{}\"", escape(original))
        }
    };
    let mds: Vec<&ModelDescription> = sys
        .instances()
        .iter()
        .map(|i| {
            fmus.get(&i.fmu)
                .map(|f| f.model_description())
                .ok_or_else(|| MasterError::Fmu { path: i.fmu.clone(), message: "not loaded".into() })
        })
        .collect::<Result<_>>()?;

    // One resource per distinct FMU file; names made unique when two files share one.
    let resources = resource_names(sys.instances().iter().map(|i| (i.name.as_str(), i.fmu.as_path())));
    refuse_input_as_output(system, resources.keys(), out)?;

    // Connectors: both ends of every connection.
    let mut connectors: Vec<BTreeMap<String, (&str, String)>> = vec![BTreeMap::new(); mds.len()];
    let mut units: BTreeMap<String, Unit> = BTreeMap::new();
    let connector_type = |md: &ModelDescription, var: &str, ty: BaseType, units: &mut BTreeMap<String, Unit>| match ty {
        BaseType::Real => match unit_of(md, var) {
            Some(u) => {
                let def = md.unit_definitions.iter().find(|d| d.name == u).cloned();
                units.entry(u.clone()).or_insert_with(|| def.unwrap_or(Unit { name: u.clone(), ..Unit::default() }));
                format!("<ssc:Real unit=\"{}\"/>", escape(&u))
            }
            None => "<ssc:Real/>".to_owned(),
        },
        BaseType::Integer => "<ssc:Integer/>".to_owned(),
        BaseType::Boolean => "<ssc:Boolean/>".to_owned(),
        BaseType::String => "<ssc:String/>".to_owned(),
        BaseType::Binary => "<ssc:Binary/>".to_owned(),
        BaseType::Enumeration => String::new(),
    };
    for c in sys.connections() {
        for (v, kind) in [(&c.from, "output"), (&c.to, "input")] {
            let md = mds[v.instance];
            let ty = connector_type(md, &v.name, v.ty, &mut units);
            connectors[v.instance].insert(v.name.clone(), (kind, ty));
        }
    }
    // Input files: table components (see `tables`), their inputs connectors of the instances.
    let tables = tables::plan(&sys);
    let mut table_connectors: Vec<Vec<String>> = Vec::new();
    for t in &tables {
        let mut types = Vec::new();
        for (k, _) in &t.driven {
            let v = &sys.signals()[*k].to;
            let ty = connector_type(mds[v.instance], &v.name, v.ty, &mut units);
            connectors[v.instance].insert(v.name.clone(), ("input", ty.clone()));
            types.push(ty);
        }
        table_connectors.push(types);
    }

    let mut ssd = String::new();
    let _ = writeln!(ssd, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
    let _ = writeln!(
        ssd,
        "<ssd:SystemStructureDescription xmlns:ssd=\"{SSD}\" xmlns:ssc=\"{SSC}\" xmlns:oms=\"{OMS}\" version=\"1.0\" name=\"{}\"{} generationTool=\"cosim {}\">",
        escape(&name),
        described(&stem, &name),
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(ssd, "  <ssd:System name=\"{}\"{}>", escape(&name), described(&stem, &name));
    let parameters: usize = sys.instances().iter().map(|i| i.starts.len()).sum();
    if parameters > 0 {
        let _ = writeln!(
            ssd,
            "    <ssd:ParameterBindings>\n      <ssd:ParameterBinding source=\"{SSV_PATH}\"/>\n    </ssd:ParameterBindings>"
        );
    }
    ssd.push_str("    <ssd:Elements>\n");
    for (i, inst) in sys.instances().iter().enumerate() {
        let source = resources.get(&inst.fmu).map_or("", String::as_str);
        let _ = write!(
            ssd,
            "      <ssd:Component name=\"{}\"{} type=\"application/x-fmu-sharedlibrary\" source=\"{}\" implementation=\"CoSimulation\"",
            escape(&inst.name),
            original_names.get(&inst.name).map_or_else(String::new, |o| described(o, &inst.name)),
            escape(source)
        );
        if connectors[i].is_empty() {
            ssd.push_str("/>\n");
            continue;
        }
        ssd.push_str(">\n        <ssd:Connectors>\n");
        for (var, (kind, ty)) in &connectors[i] {
            let _ =
                writeln!(ssd, "          <ssd:Connector name=\"{}\" kind=\"{kind}\">{ty}</ssd:Connector>", escape(var));
        }
        ssd.push_str("        </ssd:Connectors>\n      </ssd:Component>\n");
    }
    for (t, types) in tables.iter().zip(&table_connectors) {
        let _ = writeln!(
            ssd,
            "      <ssd:Component name=\"{}\" type=\"{}\" source=\"{}\">\n        <ssd:Connectors>",
            escape(&t.name),
            tables::TABLE_TYPE,
            escape(&t.resource)
        );
        for ((_, c), ty) in t.driven.iter().zip(types) {
            let _ =
                writeln!(ssd, "          <ssd:Connector name=\"{}\" kind=\"output\">{ty}</ssd:Connector>", escape(c));
        }
        ssd.push_str("        </ssd:Connectors>\n      </ssd:Component>\n");
    }
    ssd.push_str("    </ssd:Elements>\n");
    if !sys.connections().is_empty() || !tables.is_empty() {
        ssd.push_str("    <ssd:Connections>\n");
        for t in &tables {
            for (k, c) in &t.driven {
                let v = &sys.signals()[*k].to;
                let _ = writeln!(
                    ssd,
                    "      <ssd:Connection startElement=\"{}\" startConnector=\"{}\" endElement=\"{}\" endConnector=\"{}\"/>",
                    escape(&t.name),
                    escape(c),
                    escape(&sys.instances()[v.instance].name),
                    escape(&v.name)
                );
            }
        }
        for c in sys.connections() {
            let (fi, ti) = (&sys.instances()[c.from.instance].name, &sys.instances()[c.to.instance].name);
            let (fu, tu) = (unit_of(mds[c.from.instance], &c.from.name), unit_of(mds[c.to.instance], &c.to.name));
            let suppress =
                if fu.is_some() && tu.is_some() && fu != tu { " suppressUnitConversion=\"true\"" } else { "" };
            let _ = write!(
                ssd,
                "      <ssd:Connection startElement=\"{}\" startConnector=\"{}\" endElement=\"{}\" endConnector=\"{}\"{suppress}",
                escape(fi),
                escape(&c.from.name),
                escape(ti),
                escape(&c.to.name)
            );
            if c.gain != 1.0 || c.offset != 0.0 {
                let _ = writeln!(
                    ssd,
                    ">\n        <ssc:LinearTransformation factor=\"{}\" offset=\"{}\"/>\n      </ssd:Connection>",
                    xs_double(c.gain),
                    xs_double(c.offset)
                );
            } else {
                ssd.push_str("/>\n");
            }
        }
        ssd.push_str("    </ssd:Connections>\n");
    }
    // OMSimulator's annotation first, then ours (see the module documentation).
    let mut annotated = b.clone();
    tables::annotate(&mut annotated, &tables, &sys);
    let settings = annotation::to_toml(&annotated).replace("]]>", "]]]]><![CDATA[>");
    let _ = writeln!(
        ssd,
        "    <ssd:Annotations>\n      <ssc:Annotation type=\"{OMS_TYPE}\">\n        <oms:Annotations>\n          <oms:SimulationInformation>\n            <oms:FixedStepMaster description=\"oms-ma\" stepSize=\"{}\"/>\n          </oms:SimulationInformation>\n        </oms:Annotations>\n      </ssc:Annotation>\n      <ssc:Annotation type=\"{}\">\n        <cosim:Settings xmlns:cosim=\"{}\"><![CDATA[\n{settings}]]></cosim:Settings>\n      </ssc:Annotation>\n    </ssd:Annotations>",
        xs_double(sys.step()),
        annotation::TYPE,
        annotation::NS
    );
    ssd.push_str("  </ssd:System>\n");
    if !units.is_empty() {
        ssd.push_str("  <ssd:Units>\n");
        for u in units.values() {
            unit_xml(&mut ssd, u);
        }
        ssd.push_str("  </ssd:Units>\n");
    }
    let _ = writeln!(
        ssd,
        "  <ssd:DefaultExperiment startTime=\"{}\" stopTime=\"{}\"/>",
        xs_double(sys.start()),
        xs_double(sys.stop())
    );
    ssd.push_str("</ssd:SystemStructureDescription>\n");

    // The parameter set.
    let mut ssv = String::new();
    let _ = writeln!(ssv, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
    let _ = writeln!(
        ssv,
        "<ssv:ParameterSet xmlns:ssv=\"{SSV}\" version=\"1.0\" name=\"start-values\">\n  <ssv:Parameters>"
    );
    for (i, inst) in sys.instances().iter().enumerate() {
        for (v, value) in &inst.starts {
            let element = match (v.ty, value) {
                (BaseType::Real, StartValue::Real(x)) => format!("<ssv:Real value=\"{}\"/>", xs_double(*x)),
                (BaseType::Enumeration, StartValue::Integer(k)) => match enumeration_item(mds[i], &v.name, *k) {
                    Some(item) if opts.enumerations == EnumerationForm::Name => {
                        format!("<ssv:Enumeration value=\"{}\"/>", escape(&item))
                    }
                    _ => format!("<ssv:Integer value=\"{k}\"/>"),
                },
                (_, StartValue::Real(x)) => format!("<ssv:Real value=\"{}\"/>", xs_double(*x)),
                (_, StartValue::Integer(k)) => format!("<ssv:Integer value=\"{k}\"/>"),
                (_, StartValue::Boolean(x)) => format!("<ssv:Boolean value=\"{x}\"/>"),
                (_, StartValue::String(s)) => format!("<ssv:String value=\"{}\"/>", escape(s)),
                (_, StartValue::Binary(b)) => format!("<ssv:Binary value=\"{}\"/>", model_description::to_hex(b)),
            };
            let _ = writeln!(
                ssv,
                "    <ssv:Parameter name=\"{}.{}\">{element}</ssv:Parameter>",
                escape(&inst.name),
                escape(&v.name)
            );
        }
    }
    ssv.push_str("  </ssv:Parameters>\n</ssv:ParameterSet>\n");

    // The package.
    let io = |source| MasterError::Io { path: out.to_path_buf(), source };
    let zerr = |e: zip::result::ZipError| MasterError::Io { path: out.to_path_buf(), source: std::io::Error::other(e) };
    // Written to a temporary file beside `out` and renamed: a failed export leaves no package
    // (and no half-written one in place of an earlier).
    let tmp = Temp(out.with_file_name(format!(
        ".{}.cosim-{}.tmp",
        out.file_name().map_or_else(|| "ssp".into(), |n| n.to_string_lossy()),
        std::process::id()
    )));
    let file = std::fs::File::create(&tmp.0).map_err(io)?;
    let mut zip = zip::ZipWriter::new(file);
    let deflated = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("SystemStructure.ssd", deflated).map_err(zerr)?;
    zip.write_all(ssd.as_bytes()).map_err(io)?;
    if parameters > 0 {
        zip.start_file(SSV_PATH, deflated).map_err(zerr)?;
        zip.write_all(ssv.as_bytes()).map_err(io)?;
    }
    for (fmu, res) in &resources {
        let bytes = std::fs::read(fmu).map_err(|source| MasterError::Io { path: fmu.clone(), source })?;
        zip.start_file(res.as_str(), stored).map_err(zerr)?;
        zip.write_all(&bytes).map_err(io)?;
    }
    for t in &tables {
        zip.start_file(t.resource.as_str(), deflated).map_err(zerr)?;
        let mut w = std::io::BufWriter::new(&mut zip);
        tables::write_csv(t, &sys, &mut w)?;
        w.flush().map_err(io)?;
    }
    zip.finish().map_err(zerr)?;
    std::fs::rename(&tmp.0, out).map_err(io)?;
    Ok(Exported {
        components: sys.instances().len(),
        fmus: resources.len(),
        connections: sys.connections().len(),
        parameters,
    })
}

/// A temporary file removed on drop (after a successful rename there is nothing to remove).
struct Temp(PathBuf);

impl Drop for Temp {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `resources/<file name>` per distinct FMU file (in instance order), never two alike and never
/// the parameter set's name: a clash takes the instance name as a prefix, then a number.
fn resource_names<'a>(instances: impl Iterator<Item = (&'a str, &'a Path)>) -> BTreeMap<PathBuf, String> {
    let mut resources: BTreeMap<PathBuf, String> = BTreeMap::new();
    let mut used: std::collections::BTreeSet<String> = [SSV_PATH.to_owned()].into();
    for (name, fmu) in instances {
        if resources.contains_key(fmu) {
            continue;
        }
        let file = fmu.file_name().map_or_else(|| "model.fmu".to_owned(), |f| f.to_string_lossy().into_owned());
        let mut res = format!("resources/{file}");
        let mut k = 1;
        while used.contains(&res) {
            res = if k == 1 { format!("resources/{name}-{file}") } else { format!("resources/{name}-{k}-{file}") };
            k += 1;
        }
        used.insert(res.clone());
        resources.insert(fmu.to_path_buf(), res);
    }
    resources
}

/// Refuses an output file that is the system file or one of its FMUs (the export would replace
/// an input by the package): compared as files (device and inode), so another spelling of the
/// path or a hard link is caught too.
fn refuse_input_as_output<'a>(system: &'a Path, fmus: impl Iterator<Item = &'a PathBuf>, out: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Ok(o) = std::fs::metadata(out) else { return Ok(()) };
    for input in std::iter::once(system).chain(fmus.map(PathBuf::as_path)) {
        if std::fs::metadata(input).is_ok_and(|m| (m.dev(), m.ino()) == (o.dev(), o.ino())) {
            return Err(MasterError::Io {
                path: out.to_path_buf(),
                source: std::io::Error::other(format!(
                    "--out names an input of the export ({}): choose another file for the package",
                    input.display()
                )),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_names_never_collide() {
        // Issue 30 item 7: a/x.fmu, b/x.fmu (→ resources/m2-x.fmu) and a file named m2-x.fmu
        // collided ("Duplicate filename").
        let p = |s: &str| PathBuf::from(s);
        let (a, b, c, d) = (p("a/x.fmu"), p("b/x.fmu"), p("c/m2-x.fmu"), p("d/start-values.ssv"));
        let r = resource_names(
            [("m1", a.as_path()), ("m2", b.as_path()), ("m3", c.as_path()), ("m4", d.as_path()), ("m5", a.as_path())]
                .into_iter(),
        );
        let names: std::collections::BTreeSet<&String> = r.values().collect();
        assert_eq!(names.len(), 4, "{r:?}");
        assert!(!names.contains(&SSV_PATH.to_owned()), "{r:?}");
        assert_eq!(r[&a], "resources/x.fmu");
        assert_eq!(r[&b], "resources/m2-x.fmu");
        assert_eq!(r[&c], "resources/m3-m2-x.fmu");
    }
}
