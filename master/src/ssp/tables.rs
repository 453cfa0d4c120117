//! `[[inputs]] file` in SSP: a signal source other tools read. SSP 1.0 has no signal-source
//! component type of its own; OMSimulator reads a CSV table as a component
//! `type="application/table"` (newer versions also `text/csv`, the MA-CSV proposal) whose
//! `ssd:Connector`s (outputs) are the file's columns, the first column the time, Real columns
//! interpolated linearly, Integer and Boolean ones held. So each input file is exported as such a
//! component: `resources/<name>.csv` with the time and one column per driven input (the file's
//! column with `scale`/`offset` applied, numbers written to round-trip exactly), connected to the
//! inputs it drives. Rows are added at the start and stop time when the file does not reach them
//! (OMSimulator refuses a time outside its table; cosim holds the first and last values, which the
//! added rows say explicitly, giving the very same values). The file is streamed into the package
//! (memory O(columns)).
//!
//! What the component cannot say travels in our annotation as the `[[inputs]]` entry, pointing
//! at the resource: `interpolation = "hold"` of a Real input (OMSimulator interpolates every Real
//! column). cosim reads the annotation's entry (and so ignores the component's connections);
//! another SSP's table component (from OMSimulator) is read as an `[[inputs]] file` with its
//! connections as `columns` (an `ssc:LinearTransformation` as `scale`/`offset`).
//! One difference stays: at a jump (a time given twice) OMSimulator takes, at exactly that time,
//! the value before the jump; cosim the value after it.

use super::ident;
use crate::error::{MasterError, Result};
use crate::system::input_stream::FileSource;
use crate::system::{System, SystemBuilder};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The component type written (the one OMSimulator 3.0 reads).
pub(super) const TABLE_TYPE: &str = "application/table";
/// The component types read as tables.
pub(super) fn is_table_type(t: &str) -> bool {
    matches!(t, "application/table" | "text/csv")
}

/// One input file as a table component.
pub(super) struct Table {
    /// Component name.
    pub name: String,
    /// `resources/<name>.csv`.
    pub resource: String,
    pub source: Arc<FileSource>,
    /// (signal index, connector name), in signal order.
    pub driven: Vec<(usize, String)>,
}

/// The tables of `sys`'s input files, one per `[[inputs]] file` (in order), named apart from
/// the instances.
pub(super) fn plan(sys: &System) -> Vec<Table> {
    let mut tables: Vec<Table> = Vec::new();
    for (k, sig) in sys.signals().iter().enumerate() {
        let Some(f) = &sig.file else { continue };
        let at = match tables.iter().position(|t| Arc::ptr_eq(&t.source, &f.source)) {
            Some(at) => at,
            None => {
                let taken = |n: &str| sys.instances().iter().any(|i| i.name == n) || tables.iter().any(|t| t.name == n);
                let stem = f.source.path.file_stem().map_or_else(|| "inputs".into(), |s| s.to_string_lossy());
                let mut name = ident::identifier(&format!("inputs_{stem}"));
                while taken(&name) {
                    name.push('_');
                }
                let resource = format!("resources/{name}.csv");
                tables.push(Table { name, resource, source: f.source.clone(), driven: Vec::new() });
                tables.len() - 1
            }
        };
        let inst = &sys.instances()[sig.to.instance].name;
        let mut conn = ident::identifier(&format!("{inst}_{}", sig.to.name));
        while tables[at].driven.iter().any(|(_, c)| *c == conn) || conn == "time" {
            conn.push('_');
        }
        tables[at].driven.push((k, conn));
    }
    tables
}

/// Points each `[[inputs]] file` entry of `b` (the k-th file entry is the k-th table) at its
/// resource, its columns the connectors, scale and offset applied already.
pub(super) fn annotate(b: &mut SystemBuilder, tables: &[Table], sys: &System) {
    for (draft, table) in b.inputs.iter_mut().filter(|i| i.file.is_some()).zip(tables) {
        draft.file = Some(table.resource.clone().into());
        draft.time = None;
        (draft.scale, draft.offset) = (None, None);
        draft.columns = table
            .driven
            .iter()
            .map(|(k, c)| {
                let to = &sys.signals()[*k].to;
                (format!("{}.{}", sys.instances()[to.instance].name, to.name), c.clone())
            })
            .collect::<BTreeMap<_, _>>();
    }
}

/// Streams `table`'s CSV into `out`: `time` and its connectors' columns, a row at `start` and at
/// `stop` added where the file does not reach them.
pub(super) fn write_csv(table: &Table, sys: &System, out: &mut impl std::io::Write) -> Result<()> {
    let src = &table.source;
    let err = |message: String| MasterError::System {
        path: src.path.clone(),
        key: "inputs".into(),
        message: format!("{}: {message}", src.path.display()),
    };
    let io = |e: std::io::Error| err(e.to_string());
    let columns: Vec<usize> =
        table.driven.iter().filter_map(|(k, _)| sys.signals()[*k].file.as_ref().map(|f| f.column)).collect();
    let mut rows =
        crate::system::input_file::Rows::open(&src.path, src.time.as_deref(), |n| src.columns.iter().any(|c| c == n))
            .map_err(|e| err(e.to_string()))?;
    let mut line = String::from("time");
    for (_, c) in &table.driven {
        line.push(',');
        line.push_str(c);
    }
    line.push('\n');
    out.write_all(line.as_bytes()).map_err(io)?;
    let mut row = |t: f64, values: &[f64], out: &mut dyn std::io::Write| -> std::io::Result<()> {
        line.clear();
        line.push_str(&format!("{t:?}"));
        for c in &columns {
            line.push_str(&format!(",{:?}", src.value(values[*c])));
        }
        line.push('\n');
        out.write_all(line.as_bytes())
    };
    let mut last = (f64::NAN, Vec::new());
    while rows.next_row().map_err(|e| err(e.to_string()))? {
        if rows.rows() == 1 && rows.time() > sys.start() {
            row(sys.start(), rows.values(), out).map_err(io)?;
        }
        row(rows.time(), rows.values(), out).map_err(io)?;
        last.0 = rows.time();
        last.1.clear();
        last.1.extend_from_slice(rows.values());
    }
    if last.0 < sys.stop() {
        row(sys.stop(), &last.1, out).map_err(io)?;
    }
    Ok(())
}
