//! Runs the checked-in scenarios in process on a directory of packaged FMUs (each FMU loaded
//! once), after text edits of the system file, and reads what the master wrote.

use anyhow::{anyhow, bail, Context, Result};
use master::system::{Draft, Overrides};
use master::{Fmu2, Slave};
use model_description::ModelDescription;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The checked-in scenarios.
pub fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

/// A CSV file written by the master: header and numeric rows.
pub struct Csv {
    /// Column names.
    pub header: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<f64>>,
}

impl Csv {
    /// Reads a CSV written by the master (header, then numbers).
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut lines = text.lines();
        let header = lines.next().unwrap_or_default().split(',').map(str::to_owned).collect();
        let rows = lines
            .enumerate()
            .map(|(i, l)| {
                l.split(',')
                    .map(|x| x.parse::<f64>().with_context(|| format!("{}:{}: {x:?}", path.display(), i + 2)))
                    .collect::<Result<Vec<f64>>>()
            })
            .collect::<Result<_>>()?;
        Ok(Self { header, rows })
    }

    /// Index of the column `name`.
    pub fn column(&self, name: &str) -> Result<usize> {
        self.header.iter().position(|h| h == name).ok_or_else(|| anyhow!("no column {name} in {:?}", self.header))
    }
}

/// What one co-simulation produced.
pub struct RunOutput {
    /// The run reached the stop time (`summary.status == "ok"`).
    pub ok: bool,
    /// The master's message when it did not.
    pub message: String,
    /// `results.csv`.
    pub results: Csv,
    /// `bonds.csv`.
    pub bonds: Csv,
}

/// Runs checked-in scenarios on the FMUs of one directory, loading each FMU once.
pub struct Runner {
    fmu_dir: PathBuf,
    loaded: HashMap<PathBuf, Arc<Fmu2>>,
}

impl Runner {
    /// FMUs from `fmu_dir` (made absolute, so the scenarios' `../target/fmu/` can point there).
    pub fn new(fmu_dir: &Path) -> Result<Self> {
        let fmu_dir = std::path::absolute(fmu_dir).with_context(|| format!("resolving {}", fmu_dir.display()))?;
        Ok(Self { fmu_dir, loaded: HashMap::new() })
    }

    /// Runs `scenarios/<scenario>` after the text replacements `edits` (e.g. a damping case),
    /// with `over`, in a temporary output directory; returns the CSVs.
    pub fn run(&mut self, scenario: &str, edits: &[(&str, &str)], over: &Overrides) -> Result<RunOutput> {
        let path = scenarios_dir().join(scenario);
        let mut text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        text = text.replace("../target/fmu/", &format!("{}/", self.fmu_dir.display()));
        for (from, to) in edits {
            if !text.contains(from) {
                bail!("{}: no {from:?} to replace", path.display());
            }
            text = text.replace(from, to);
        }
        let draft = Draft::parse(&path, &text)?;
        let mut fmus = Vec::new();
        for (_, fmu_path) in draft.fmus() {
            let fmu = match self.loaded.get(&fmu_path) {
                Some(f) => Arc::clone(f),
                None => {
                    let f = Fmu2::load(&fmu_path)
                        .with_context(|| format!("{}: run `cargo xtask fmus` first", fmu_path.display()))?;
                    self.loaded.insert(fmu_path.clone(), Arc::clone(&f));
                    f
                }
            };
            fmus.push(fmu);
        }
        let mds: Vec<&ModelDescription> = fmus.iter().map(|f| f.model_description()).collect();
        let sys = draft.resolve(&mds, over)?;
        let mut slaves: Vec<Box<dyn Slave>> = Vec::with_capacity(fmus.len());
        for (spec, fmu) in sys.instances.iter().zip(&fmus) {
            slaves.push(Box::new(fmu.instantiate(&spec.name)?));
        }
        // One directory per run in this process (sections may run on several threads at once).
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        let run_id = RUNS.fetch_add(1, Ordering::Relaxed);
        let out = std::env::temp_dir().join(format!("validation-{}-{run_id}", std::process::id()));
        let summary = master::run::run(&sys, &mut slaves, &mds, &out)?;
        drop(slaves);
        let results = Csv::read(&out.join("results.csv"));
        let bonds = Csv::read(&out.join("bonds.csv"));
        // Best effort: a leftover temp directory is harmless.
        let _ = std::fs::remove_dir_all(&out);
        Ok(RunOutput { ok: summary.status == "ok", message: summary.message, results: results?, bonds: bonds? })
    }
}
