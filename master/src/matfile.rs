//! `results.mat` (`cosim run --mat`): the results in the MATLAB v4 result layout that Dymola
//! and OpenModelica write ("dsres", `binTrans`) and Modelica tools, OMSimulator's readers and
//! `scipy.io.loadmat` read. Written from results.csv and summary.json after the run, so its numbers
//! are the CSV's (shortest round-trip text: the same doubles).
//!
//! Matrices (MATLAB v4: a 20-byte header `type, mrows, ncols, imagf, namlen`, the name with its
//! NUL, the data column-major, little-endian):
//! - `Aclass` (text): `Atrajectory`, `1.1`, ``, `binTrans`;
//! - `name`, `description` (text, one column per variable, `time` first; the description holds
//!   the unit as `[m]`);
//! - `dataInfo` (int32, 4 × n): `[2, column, 0, -1]` per variable, `[0, 1, 0, -1]` for time;
//! - `data_1` (double, 1 × 2): start and stop time (no parameters);
//! - `data_2` (double, n × rows): every row of results.csv, one column per time point.

use crate::error::{MasterError, Result};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

const DOUBLE: i32 = 0;
const INT32: i32 = 20;
const TEXT: i32 = 51;

fn header(out: &mut Vec<u8>, ty: i32, rows: usize, cols: usize, name: &str) {
    for x in [ty, rows as i32, cols as i32, 0, name.len() as i32 + 1] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    out.push(0);
}

/// A text matrix with one string per column (`binTrans`), padded with spaces.
fn text_columns(out: &mut Vec<u8>, name: &str, strings: &[String]) {
    let len = strings.iter().map(String::len).max().unwrap_or(0).max(1);
    header(out, TEXT, len, strings.len(), name);
    for s in strings {
        out.extend_from_slice(s.as_bytes());
        out.extend(std::iter::repeat_n(b' ', len - s.len()));
    }
}

/// The dsres bytes of columns `names` (`time` first) with `rows` (row-major, `names.len()` values
/// per row) and the units of `units` (by column name).
pub fn dsres(names: &[String], units: &BTreeMap<String, String>, rows: &[f64]) -> Vec<u8> {
    let n = names.len().max(1);
    let count = rows.len() / n;
    let mut out = Vec::with_capacity(rows.len() * 8 + 1024);
    let aclass: Vec<String> = ["Atrajectory", "1.1", "", "binTrans"].iter().map(|s| s.to_string()).collect();
    // Aclass is stored row-wise in the files Dymola writes: 4 rows of 11 characters.
    header(&mut out, TEXT, 4, 11, "Aclass");
    for col in 0..11 {
        for s in &aclass {
            out.push(*s.as_bytes().get(col).unwrap_or(&b' '));
        }
    }
    text_columns(&mut out, "name", names);
    let descriptions: Vec<String> =
        names.iter().map(|c| units.get(c).map(|u| format!("[{u}]")).unwrap_or_default()).collect();
    text_columns(&mut out, "description", &descriptions);
    header(&mut out, INT32, 4, names.len(), "dataInfo");
    for k in 0..names.len() {
        let info: [i32; 4] = if k == 0 { [0, 1, 0, -1] } else { [2, k as i32 + 1, 0, -1] };
        for x in info {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
    let (t0, t1) = (rows.first().copied().unwrap_or(0.0), rows.get((count.max(1) - 1) * n).copied().unwrap_or(0.0));
    header(&mut out, DOUBLE, 1, 2, "data_1");
    out.extend_from_slice(&t0.to_le_bytes());
    out.extend_from_slice(&t1.to_le_bytes());
    header(&mut out, DOUBLE, names.len(), count, "data_2");
    for x in &rows[..count * n] {
        out.extend_from_slice(&x.to_le_bytes());
    }
    out
}

/// Writes `dir/results.mat` from `dir/results.csv` and the units of `dir/summary.json`; the
/// columns summary.json lists as `binary_columns` (FMI 3.0 Binary values in hexadecimal) are
/// left out.
pub fn write_from_csv(dir: &Path) -> Result<()> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| MasterError::Io { path, source }
    };
    let csv_path = dir.join("results.csv");
    let text = std::fs::read_to_string(&csv_path).map_err(io(&csv_path))?;
    let summary = std::fs::read_to_string(dir.join("summary.json"))
        .ok()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        .unwrap_or_default();
    let binary: Vec<String> = serde_json::from_value(summary["binary_columns"].clone()).unwrap_or_default();
    let mut lines = text.lines();
    let all: Vec<String> = lines.next().unwrap_or("time").split(',').map(str::to_owned).collect();
    let keep: Vec<bool> = all.iter().map(|n| !binary.contains(n)).collect();
    let names: Vec<String> = all.into_iter().filter(|n| !binary.contains(n)).collect();
    let mut rows = Vec::new();
    for (i, line) in lines.enumerate() {
        for (field, _) in line.split(',').zip(keep.iter().chain(std::iter::repeat(&true))).filter(|(_, k)| **k) {
            rows.push(field.trim().parse::<f64>().map_err(|_| MasterError::System {
                path: csv_path.clone(),
                key: format!("line {}", i + 2),
                message: format!("{field:?} is not a number"),
            })?);
        }
    }
    let units: BTreeMap<String, String> = serde_json::from_value(summary["units"].clone()).unwrap_or_default();
    let mat = dir.join("results.mat");
    let mut f = std::fs::File::create(&mat).map_err(io(&mat))?;
    f.write_all(&dsres(&names, &units, &rows)).map_err(io(&mat))
}
