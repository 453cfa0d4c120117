//! SSD → [`SystemBuilder`]: components, connectors, connections (with linear transformations),
//! parameter bindings (`.ssv`, inline parameter values, `.ssm` mappings), the default experiment
//! and our settings annotation. Everything the master cannot do is refused naming the element
//! and its line; everything else is checked by [`SystemBuilder::build`] as for a system file.

use super::annotation;
use super::xml::{self, parse_f64, Node, SSC, SSD, SSM, SSV};
use crate::error::{MasterError, Result};
use crate::system::{SystemBuilder, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Where the SSD is and how it is named in messages.
pub(super) struct Source {
    /// The SSD as named in messages (`x.ssp/SystemStructure.ssd` or `x.ssd`).
    pub shown: PathBuf,
    /// The SSD file on disk.
    pub real: PathBuf,
    /// The folder relative URIs resolve against.
    pub base: PathBuf,
    /// That folder as named in messages.
    pub shown_base: PathBuf,
    /// Inside an `.ssp` (URIs may not leave the package).
    pub package: bool,
}

fn err(shown: &Path, node: &Node, attr: Option<&str>, message: impl Into<String>) -> MasterError {
    let key = match attr {
        Some(a) => node.at_attr(a),
        None => node.at(),
    };
    MasterError::System { path: shown.to_path_buf(), key, message: message.into() }
}

fn required<'a>(shown: &Path, node: &'a Node, attr: &str) -> Result<&'a str> {
    node.attr(attr).ok_or_else(|| err(shown, node, Some(attr), "required attribute missing"))
}

fn double(shown: &Path, node: &Node, attr: &str) -> Result<Option<f64>> {
    node.attr(attr)
        .map(|s| {
            // Times, factors and offsets must be finite (issue 30 item 11: INF/NaN were taken).
            let x = parse_f64(s).ok_or_else(|| err(shown, node, Some(attr), format!("\"{s}\" is not a number")))?;
            if x.is_finite() {
                Ok(x)
            } else {
                Err(err(shown, node, Some(attr), format!("\"{s}\" is not a finite number")))
            }
        })
        .transpose()
}

/// A declared connector of a component.
struct Connector {
    kind: String,
    ty: Option<String>,
    unit: Option<String>,
}

struct Component {
    line: usize,
    column: usize,
    connectors: BTreeMap<String, Connector>,
}

impl Source {
    /// A relative URI of a file next to (or below) the SSD: the file and its name in messages.
    fn file(&self, node: &Node, attr: &str, uri: &str) -> Result<(PathBuf, PathBuf)> {
        let e = |m: String| err(&self.shown, node, Some(attr), m);
        if uri.contains("://") || uri.starts_with("file:") {
            return Err(e(format!("\"{uri}\": only relative URIs are supported")));
        }
        if uri.contains('#') {
            return Err(e(format!("\"{uri}\": fragment identifiers are not supported")));
        }
        let rel = Path::new(uri);
        if uri.is_empty() || rel.is_absolute() {
            return Err(e(format!("\"{uri}\": a relative path is required")));
        }
        if self.package && rel.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
            return Err(e(format!("\"{uri}\": \"..\" may not leave the package")));
        }
        let real = self.base.join(rel);
        let shown = self.shown_base.join(rel);
        if !real.is_file() {
            return Err(e(format!("\"{uri}\": file not found ({})", shown.display())));
        }
        Ok((real, shown))
    }

    /// Reads and parses an XML file named by a URI (`.ssv`, `.ssm`); the root must be `ns:name`.
    fn document(&self, node: &Node, attr: &str, uri: &str, ns: &str, name: &str) -> Result<(Node, PathBuf)> {
        let (real, shown) = self.file(node, attr, uri)?;
        let text = std::fs::read_to_string(&real)
            .map_err(|e| err(&self.shown, node, Some(attr), format!("\"{uri}\" cannot be read as UTF-8 text: {e}")))?;
        // The file's own error, and which reference of which SSD led to it.
        let by = format!("(named by {} of {})", node.at_attr(attr), self.shown.display());
        let root = xml::parse(&text).map_err(|m| MasterError::System {
            path: shown.clone(),
            key: "XML".into(),
            message: format!("{m} {by}"),
        })?;
        if !root.is(ns, name) {
            let want = Node { ns: ns.into(), name: name.into(), ..Node::default() }.label();
            return Err(err(&shown, &root, None, format!("the root element must be {want} (namespace {ns}) {by}")));
        }
        Ok((root, shown))
    }
}

/// Reads an SSD's text into a builder, with notes for the user (what was read leniently).
pub(super) fn read_ssd(text: &str, src: &Source) -> Result<(SystemBuilder, Vec<String>)> {
    let shown = src.shown.as_path();
    let root = xml::parse(text).map_err(|m| MasterError::System {
        path: shown.to_path_buf(),
        key: "XML".into(),
        message: m,
    })?;
    if !root.is(SSD, "SystemStructureDescription") {
        return Err(err(
            shown,
            &root,
            None,
            format!("the root element must be ssd:SystemStructureDescription (namespace {SSD})"),
        ));
    }
    let version = required(shown, &root, "version")?;
    let mut notes = Vec::new();
    if version.starts_with("2.") {
        // OMSimulator writes version="2.0" with the SSP 1.0 namespaces checked above.
        notes.push(format!(
            "warning: version=\"{version}\" with the SSP 1.0 namespaces (as OMSimulator writes): read as SSP 1.0"
        ));
    } else if !version.starts_with("1.") {
        return Err(err(shown, &root, Some("version"), format!("\"{version}\": only SSP 1.x is supported")));
    }
    let mut b = SystemBuilder::new();
    b.source(shown);
    let mut system = None;
    let mut settings: Vec<&Node> = Vec::new();
    let mut oms_step: Option<(f64, &Node)> = None;
    for child in &root.children {
        match (child.ns.as_str(), child.name.as_str()) {
            (SSD, "System") => {
                if system.is_some() {
                    return Err(err(shown, child, None, "more than one ssd:System: an SSD describes one system"));
                }
                system = Some(child);
            }
            (SSD, "Enumerations") | (SSD, "Units") | (SSD, "MetaData") => {}
            (SSD, "DefaultExperiment") => {
                if let Some(t) = double(shown, child, "startTime")? {
                    b.start(t);
                }
                if let Some(t) = double(shown, child, "stopTime")? {
                    b.stop(t);
                }
            }
            (SSD, "Annotations") => {
                settings.extend(our_annotations(child));
                oms_step = oms_step.or(fixed_step_master(shown, child)?);
            }
            _ => return Err(err(shown, child, None, "unsupported element")),
        }
    }
    let system = system.ok_or_else(|| err(shown, &root, None, "no ssd:System"))?;
    let mut components: BTreeMap<String, Component> = BTreeMap::new();
    let mut tables: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut table_inputs: Vec<crate::system::InputDraft> = Vec::new();
    let mut connections = None;
    let mut bindings = None;
    for child in &system.children {
        match (child.ns.as_str(), child.name.as_str()) {
            (SSD, "Connectors") | (SSD, "ElementGeometry") | (SSD, "SystemGeometry") | (SSD, "GraphicalElements") => {}
            (SSD, "Annotations") => {
                settings.extend(our_annotations(child));
                oms_step = fixed_step_master(shown, child)?.or(oms_step);
            }
            (SSD, "ParameterBindings") => bindings = Some(child),
            (SSD, "Connections") => connections = Some(child),
            (SSD, "Elements") => {
                for e in &child.children {
                    match (e.ns.as_str(), e.name.as_str()) {
                        (SSD, "Component") => component(src, e, &mut b, &mut components, &mut tables)?,
                        (SSD, "System") => return Err(err(
                            shown,
                            e,
                            None,
                            "nested systems are not supported: flatten the system into one ssd:System of components",
                        )),
                        (SSD, "SignalDictionaryReference") => {
                            return Err(err(shown, e, None, "signal dictionaries are not supported"))
                        }
                        _ => return Err(err(shown, e, None, "unsupported element")),
                    }
                }
            }
            (SSD, "SignalDictionaries") => {
                return Err(err(shown, child, None, "signal dictionaries are not supported"))
            }
            _ => return Err(err(shown, child, None, "unsupported element")),
        }
    }
    // Parameter bindings: the system's first (names component.variable), then each component's.
    if let Some(pb) = bindings {
        apply_bindings(src, pb, None, (&components, root.first(SSD, "Units")), &mut b)?;
    }
    for e in system.all(SSD, "Elements").flat_map(|e| e.all(SSD, "Component")) {
        if let (Some(name), Some(pb)) = (e.attr("name"), e.first(SSD, "ParameterBindings")) {
            apply_bindings(src, pb, Some(name), (&components, root.first(SSD, "Units")), &mut b)?;
        }
    }
    if let Some(cs) = connections {
        for c in &cs.children {
            if c.is(SSD, "Connection") {
                connection(shown, c, &components, (&tables, &mut table_inputs), &mut b)?;
            } else {
                return Err(err(shown, c, None, "unsupported element"));
            }
        }
    }
    for a in settings {
        annotation::apply(&mut b, &a.text).map_err(|(key, message)| {
            let key = if key.is_empty() { a.at() } else { format!("{} {key}", a.at()) };
            MasterError::System { path: shown.to_path_buf(), key, message }
        })?;
    }
    // Our annotation's input files name resources of the package; a table component not in
    // the annotation (another tool's) is an input file of its own.
    for i in &mut b.inputs {
        if let Some(f) = i.file.as_mut().filter(|f| f.is_relative() && src.base.join(&**f).is_file()) {
            *f = src.base.join(&*f);
        }
    }
    for t in table_inputs {
        if !b.inputs.iter().any(|i| i.file.is_some() && i.file == t.file) {
            b.inputs.push(t);
        }
    }
    if let (None, Some((h, node))) = (b.settings.step, oms_step) {
        b.step(h);
        notes.push(format!(
            "communication step H = {h} s from OMSimulator's annotation oms:FixedStepMaster (line {}, column {})",
            node.line, node.column
        ));
    }
    Ok((b, notes))
}

/// The `stepSize` of OMSimulator's `oms:FixedStepMaster` in an `ssd:Annotations` element
/// (`ssc:Annotation type="org.openmodelica"`, at any depth below it), with the element.
fn fixed_step_master<'a>(shown: &Path, annotations: &'a Node) -> Result<Option<(f64, &'a Node)>> {
    // Depth first with an explicit stack: annotation content is arbitrary XML.
    fn find(n: &Node) -> Option<&Node> {
        let mut stack = vec![n];
        while let Some(n) = stack.pop() {
            if n.name == "FixedStepMaster" {
                return Some(n);
            }
            stack.extend(n.children.iter().rev());
        }
        None
    }
    let Some(master) = annotations
        .all(SSC, "Annotation")
        .filter(|a| a.attr("type") == Some(super::write::OMS_TYPE))
        .find_map(|a| a.children.iter().find_map(find))
    else {
        return Ok(None);
    };
    match double(shown, master, "stepSize")? {
        Some(h) if h.is_finite() && h > 0.0 => Ok(Some((h, master))),
        Some(h) => Err(err(shown, master, Some("stepSize"), format!("{h}: the step must be positive and finite"))),
        None => Ok(None),
    }
}

/// The content elements of our annotations (`ssc:Annotation type="org.hydraulic-cosim.settings"`).
fn our_annotations(annotations: &Node) -> Vec<&Node> {
    annotations
        .all(SSC, "Annotation")
        .filter(|a| a.attr("type") == Some(annotation::TYPE))
        .map(|a| a.children.first().unwrap_or(a))
        .collect()
}

fn component(
    src: &Source,
    e: &Node,
    b: &mut SystemBuilder,
    components: &mut BTreeMap<String, Component>,
    tables: &mut BTreeMap<String, PathBuf>,
) -> Result<()> {
    let shown = src.shown.as_path();
    let name = required(shown, e, "name")?;
    if let Some(prev) = components.get(name) {
        return Err(err(
            shown,
            e,
            Some("name"),
            format!("duplicate element name \"{name}\" (also at line {}, column {})", prev.line, prev.column),
        ));
    }
    if name.is_empty() || name.contains('.') {
        return Err(err(shown, e, Some("name"), format!("\"{name}\": component names must be non-empty without '.'")));
    }
    let source = required(shown, e, "source")?;
    let mut table = None;
    match e.attr("type").unwrap_or("application/x-fmu-sharedlibrary") {
        "application/x-fmu-sharedlibrary" => {}
        t if super::tables::is_table_type(t) => table = Some(src.file(e, "source", source)?.0),
        t @ ("application/x-ssp-definition" | "application/x-ssp-package") => {
            let target = src.file(e, "source", source).ok().and_then(|(p, _)| p.canonicalize().ok());
            if target.is_some() && target == src.real.canonicalize().ok() {
                return Err(err(
                    shown,
                    e,
                    Some("source"),
                    format!("cyclic import: component \"{name}\" ({t}) refers to this SSD itself"),
                ));
            }
            return Err(err(
                shown,
                e,
                Some("type"),
                format!(
                    "\"{t}\": components that are systems (SSD/SSP) are not supported, only FMUs: flatten the system"
                ),
            ));
        }
        t => return Err(err(shown, e, Some("type"), format!("\"{t}\": unsupported component type (only FMUs)"))),
    }
    if e.attr("implementation") == Some("ModelExchange") {
        return Err(err(shown, e, Some("implementation"), "Model Exchange is not supported (Co-Simulation FMUs only)"));
    }
    match &table {
        // A signal source (OMSimulator's CSV table): its connections become an input file.
        Some(csv) => {
            tables.insert(name.to_owned(), csv.clone());
        }
        None => {
            let (fmu, _) = src.file(e, "source", source)?;
            b.instance(name, fmu);
        }
    }
    let mut connectors = BTreeMap::new();
    for child in &e.children {
        match (child.ns.as_str(), child.name.as_str()) {
            (SSD, "Connectors") => {
                for c in &child.children {
                    if !c.is(SSD, "Connector") {
                        return Err(err(shown, c, None, "unsupported element"));
                    }
                    let cname = required(shown, c, "name")?;
                    let kind = required(shown, c, "kind")?;
                    if !matches!(kind, "input" | "output" | "parameter" | "calculatedParameter" | "inout") {
                        return Err(err(shown, c, Some("kind"), format!("\"{kind}\" is not a connector kind")));
                    }
                    let mut ty = None;
                    let mut unit = None;
                    for t in &c.children {
                        match (t.ns.as_str(), t.name.as_str()) {
                            (
                                SSC,
                                n @ ("Real" | "Integer" | "Boolean" | "String" | "Enumeration" | "Binary" | "Clock"),
                            ) => {
                                ty = Some(n.to_owned());
                                unit = t.attr("unit").map(str::to_owned);
                            }
                            (SSD, "ConnectorGeometry") | (SSD, "Annotations") => {}
                            _ => return Err(err(shown, t, None, "unsupported element")),
                        }
                    }
                    if connectors.insert(cname.to_owned(), Connector { kind: kind.to_owned(), ty, unit }).is_some() {
                        return Err(err(
                            shown,
                            c,
                            Some("name"),
                            format!("duplicate connector \"{cname}\" of \"{name}\""),
                        ));
                    }
                }
            }
            (SSD, "ElementGeometry") | (SSD, "Annotations") | (SSD, "ParameterBindings") => {}
            _ => return Err(err(shown, child, None, "unsupported element")),
        }
    }
    components.insert(name.to_owned(), Component { line: e.line, column: e.column, connectors });
    Ok(())
}

fn connection(
    shown: &Path,
    c: &Node,
    components: &BTreeMap<String, Component>,
    (tables, table_inputs): (&BTreeMap<String, PathBuf>, &mut Vec<crate::system::InputDraft>),
    b: &mut SystemBuilder,
) -> Result<()> {
    let end = |el: &str, co: &str| -> Result<(String, String, &Connector)> {
        let Some(element) = c.attr(el) else {
            return Err(err(
                shown,
                c,
                Some(co),
                "connections to the system's own connectors are not supported (give startElement and endElement)",
            ));
        };
        let connector = required(shown, c, co)?;
        let comp = components.get(element).ok_or_else(|| {
            let names: Vec<&str> = components.keys().map(String::as_str).collect();
            err(
                shown,
                c,
                Some(el),
                format!(
                    "unknown element \"{element}\" (components: {}){}",
                    names.join(", "),
                    crate::suggest::did_you_mean(element, names.iter().copied())
                ),
            )
        })?;
        let k = comp.connectors.get(connector).ok_or_else(|| {
            let names: Vec<&str> = comp.connectors.keys().map(String::as_str).collect();
            err(
                shown,
                c,
                Some(co),
                format!(
                    "unknown connector \"{connector}\" of \"{element}\" (declared connectors: {}){}",
                    if names.is_empty() { "none".to_owned() } else { names.join(", ") },
                    crate::suggest::did_you_mean(connector, names.iter().copied())
                ),
            )
        })?;
        Ok((element.to_owned(), connector.to_owned(), k))
    };
    let start = end("startElement", "startConnector")?;
    let stop = end("endElement", "endConnector")?;
    let (from, to) = match (start.2.kind.as_str(), stop.2.kind.as_str()) {
        ("output", "input") => (start, stop),
        ("input", "output") => (stop, start),
        (a, z) => {
            return Err(err(
                shown,
                c,
                None,
                format!(
                    "{}.{} ({a}) → {}.{} ({z}): only output → input connections are supported",
                    start.0, start.1, stop.0, stop.1
                ),
            ))
        }
    };
    let (f, t) = (format!("{}.{}", from.0, from.1), format!("{}.{}", to.0, to.1));
    if let (Some(a), Some(z)) = (&from.2.ty, &to.2.ty) {
        if a != z {
            return Err(err(shown, c, None, format!("type mismatch: {f} is {a}, {t} is {z}")));
        }
    }
    let suppress = matches!(c.attr("suppressUnitConversion"), Some("true" | "1"));
    if let (Some(a), Some(z)) = (&from.2.unit, &to.2.unit) {
        if a != z && !suppress {
            return Err(err(
                shown,
                c,
                None,
                format!(
                    "unit mismatch: {f} is in \"{a}\", {t} in \"{z}\"; cosim does not convert units \
                     (use one unit, or suppressUnitConversion=\"true\" with an ssc:LinearTransformation)"
                ),
            ));
        }
    }
    let mut gain = None;
    let mut offset = None;
    let mut linear = false;
    for child in &c.children {
        match (child.ns.as_str(), child.name.as_str()) {
            (SSC, "LinearTransformation") if linear => {
                return Err(err(shown, child, None, "a second ssc:LinearTransformation: a connection has at most one"))
            }
            (SSC, "LinearTransformation") => {
                linear = true;
                gain = double(shown, child, "factor")?;
                offset = double(shown, child, "offset")?;
            }
            (
                SSC,
                n @ ("BooleanMappingTransformation"
                | "IntegerMappingTransformation"
                | "EnumerationMappingTransformation"),
            ) => return Err(err(shown, child, None, format!("{n} is not supported (only ssc:LinearTransformation)"))),
            (SSD, "ConnectionGeometry") | (SSD, "Annotations") => {}
            _ => return Err(err(shown, child, None, "unsupported element")),
        }
    }
    if let Some(csv) = tables.get(&from.0) {
        // From a table component: its column drives the input (a transformation as scale/offset).
        let mut d = crate::system::InputDraft::from_file(csv.clone());
        d.column(&t, &from.1);
        (d.scale, d.offset) = (gain, offset);
        table_inputs.push(d);
        return Ok(());
    }
    let conn = b.connect(&f, &t);
    if let Some(g) = gain {
        conn.gain(g);
    }
    if let Some(o) = offset {
        conn.offset(o);
    }
    Ok(())
}

/// A mapping entry: target name and an optional linear transformation of Real values.
type Mapping = BTreeMap<String, (String, Option<(f64, f64)>)>;

fn mapping(src: &Source, pm: &Node) -> Result<Mapping> {
    let shown = src.shown.as_path();
    if let Some(t) = pm.attr("type").filter(|t| *t != "application/x-ssp-parameter-mapping") {
        return Err(err(
            shown,
            pm,
            Some("type"),
            format!("\"{t}\": only application/x-ssp-parameter-mapping is supported"),
        ));
    }
    if pm.attr("sourceBase") == Some("component") {
        return Err(err(shown, pm, Some("sourceBase"), "sourceBase=\"component\" is not supported"));
    }
    let (root, file) = match pm.attr("source") {
        Some(uri) => src.document(pm, "source", uri, SSM, "ParameterMapping")?,
        None => {
            let inline = pm
                .first(SSM, "ParameterMapping")
                .ok_or_else(|| err(shown, pm, None, "neither a source nor an inline ssm:ParameterMapping"))?;
            (inline.clone(), src.shown.clone())
        }
    };
    let mut map = Mapping::new();
    for m in &root.children {
        match (m.ns.as_str(), m.name.as_str()) {
            (SSM, "MappingEntry") => {
                let source = required(&file, m, "source")?;
                let target = required(&file, m, "target")?;
                let mut lin = None;
                for t in &m.children {
                    match (t.ns.as_str(), t.name.as_str()) {
                        (SSC, "LinearTransformation") if lin.is_some() => {
                            return Err(err(
                                &file,
                                t,
                                None,
                                "a second ssc:LinearTransformation: a mapping entry has at most one",
                            ))
                        }
                        (SSC, "LinearTransformation") => {
                            lin = Some((
                                double(&file, t, "factor")?.unwrap_or(1.0),
                                double(&file, t, "offset")?.unwrap_or(0.0),
                            ))
                        }
                        (SSC, n) if n.ends_with("MappingTransformation") => {
                            return Err(err(
                                &file,
                                t,
                                None,
                                format!("ssc:{n} is not supported (only ssc:LinearTransformation)"),
                            ))
                        }
                        (SSM, "Annotations") => {}
                        _ => return Err(err(&file, t, None, "unsupported element")),
                    }
                }
                if map.insert(source.to_owned(), (target.to_owned(), lin)).is_some() {
                    return Err(err(&file, m, Some("source"), format!("\"{source}\" is mapped twice")));
                }
            }
            (SSM, "Annotations") => {}
            _ => return Err(err(&file, m, None, "unsupported element")),
        }
    }
    Ok(map)
}

fn apply_bindings(
    src: &Source,
    bindings: &Node,
    scope: Option<&str>,
    (components, ssd_units): (&BTreeMap<String, Component>, Option<&Node>),
    b: &mut SystemBuilder,
) -> Result<()> {
    let ssd_units = super::units::defs(ssd_units);
    let shown = src.shown.as_path();
    for pb in &bindings.children {
        if !pb.is(SSD, "ParameterBinding") {
            return Err(err(shown, pb, None, "unsupported element"));
        }
        if let Some(t) = pb.attr("type").filter(|t| *t != "application/x-ssp-parameter-set") {
            return Err(err(
                shown,
                pb,
                Some("type"),
                format!("\"{t}\": only application/x-ssp-parameter-set is supported"),
            ));
        }
        if pb.attr("sourceBase") == Some("component") {
            return Err(err(shown, pb, Some("sourceBase"), "sourceBase=\"component\" is not supported"));
        }
        let prefix = pb.attr("prefix").unwrap_or("");
        let inline = pb.first(SSD, "ParameterValues");
        let (set, file) = match (pb.attr("source"), inline) {
            (Some(_), Some(_)) => {
                return Err(err(shown, pb, None, "both a source and inline ssd:ParameterValues: give one"))
            }
            (Some(uri), None) => src.document(pb, "source", uri, SSV, "ParameterSet")?,
            (None, Some(values)) => {
                let set = values
                    .first(SSV, "ParameterSet")
                    .ok_or_else(|| err(shown, values, None, "no inline ssv:ParameterSet"))?;
                (set.clone(), src.shown.clone())
            }
            (None, None) => return Err(err(shown, pb, None, "neither a source nor inline ssd:ParameterValues")),
        };
        let map = match pb.first(SSD, "ParameterMapping") {
            Some(pm) => mapping(src, pm)?,
            None => Mapping::new(),
        };
        for p in set.all(SSV, "Parameters").flat_map(|ps| ps.children.iter()) {
            if !p.is(SSV, "Parameter") {
                return Err(err(&file, p, None, "unsupported element"));
            }
            let name = required(&file, p, "name")?;
            let Some(v) = p.children.iter().find(|c| c.ns == SSV) else {
                return Err(err(&file, p, None, format!("parameter \"{name}\" has no value element")));
            };
            let raw = required(&file, v, "value")?;
            let bad =
                |what: &str| err(&file, v, Some("value"), format!("\"{raw}\" is not {what} (parameter \"{name}\")"));
            let mut value = match v.name.as_str() {
                "Real" => match parse_f64(raw) {
                    Some(x) if x.is_finite() => Value::Real(x),
                    Some(_) => return Err(bad("a finite number")),
                    None => return Err(bad("a number")),
                },
                "Integer" => match raw.trim().parse() {
                    Ok(k) => Value::Integer(k),
                    // A UInt64 above 2^63 − 1: its digits, as the system file writes it.
                    Err(_) if raw.trim().parse::<u64>().is_ok() => Value::String(raw.trim().to_string()),
                    Err(_) => return Err(bad("an integer")),
                },
                "Boolean" => Value::Boolean(match raw.trim() {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    _ => return Err(bad("a boolean")),
                }),
                "String" | "Enumeration" => Value::String(raw.to_owned()),
                // xs:hexBinary, decoded (and checked) with the system's start values.
                "Binary" => Value::String(raw.trim().to_owned()),
                other => return Err(err(&file, v, None, format!("ssv:{other} parameters are not supported"))),
            };
            let mut target = name.to_owned();
            if let Some((t, lin)) = map.get(name) {
                target.clone_from(t);
                if let Some((factor, offset)) = lin {
                    match value {
                        Value::Real(x) => value = Value::Real(factor * x + offset),
                        _ => {
                            return Err(err(
                                &file,
                                p,
                                None,
                                format!("a linear transformation applies to Real parameters only (\"{name}\")"),
                            ))
                        }
                    }
                }
            }
            let Some(rest) = target.strip_prefix(prefix) else { continue };
            let (comp, var) = match scope {
                Some(c) => (c.to_owned(), rest.to_owned()),
                None => match rest.split_once('.') {
                    Some((c, v)) => (c.to_owned(), v.to_owned()),
                    None => {
                        return Err(err(
                            &file,
                            p,
                            Some("name"),
                            format!("\"{rest}\": a parameter bound at the system level is named component.variable"),
                        ))
                    }
                },
            };
            if !components.contains_key(&comp) {
                let names: Vec<&str> = components.keys().map(String::as_str).collect();
                return Err(err(
                    &file,
                    p,
                    Some("name"),
                    format!(
                        "\"{name}\": unknown component \"{comp}\" (components: {}){}",
                        names.join(", "),
                        crate::suggest::did_you_mean(&comp, names.iter().copied())
                    ),
                ));
            }
            if let (Some(unit), Value::Real(x)) = (v.attr("unit"), &value) {
                let to = components.get(&comp).and_then(|c| c.connectors.get(&var)).and_then(|c| c.unit.as_deref());
                let set_units = super::units::defs(set.first(SSV, "Units"));
                let x = super::units::convert(*x, unit, to, &[&set_units, &ssd_units])
                    .map_err(|m| err(&file, v, Some("unit"), format!("parameter \"{name}\": {m}")))?;
                value = Value::Real(x);
            }
            if let Some(inst) = b.instance_mut(&comp) {
                inst.start(&var, value);
            }
        }
    }
    Ok(())
}
