//! Runs the checked-in scenarios in process on a directory of packaged FMUs (each FMU loaded
//! once), changed through the system builder, and keeps what the master recorded in memory.

use anyhow::{anyhow, Context, Result};
use master::fmu::FmuCache;
use master::observer::{SharedRecorder, Status};
use master::system::{Overrides, SystemBuilder};
use master::Execution;
use std::path::{Path, PathBuf};

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
    fmus: FmuCache,
}

impl Runner {
    /// FMUs from `fmu_dir` (instead of the scenarios' `../target/fmu/`).
    pub fn new(fmu_dir: &Path) -> Result<Self> {
        let fmu_dir = std::path::absolute(fmu_dir).with_context(|| format!("resolving {}", fmu_dir.display()))?;
        Ok(Self { fmu_dir, fmus: FmuCache::default() })
    }

    /// Runs `scenarios/<scenario>` after `edit` changed it (e.g. a damping case, an integrator),
    /// with `over`, in memory; returns what `cosim run` would have written to its CSV files.
    pub fn run(
        &mut self,
        scenario: &str,
        edit: impl FnOnce(&mut SystemBuilder),
        over: &Overrides,
    ) -> Result<RunOutput> {
        let path = scenarios_dir().join(scenario);
        let mut b = SystemBuilder::read(&path)?;
        for (name, fmu) in b.fmus() {
            if let (Some(file), Some(inst)) = (fmu.file_name(), b.instance_mut(&name)) {
                inst.set_fmu(self.fmu_dir.join(file));
            }
        }
        edit(&mut b);
        for (_, fmu) in b.fmus() {
            self.fmus.load(&fmu).with_context(|| format!("{}: run `cargo xtask fmus` first", fmu.display()))?;
        }
        let sys = b.load_with(&mut self.fmus, over)?;
        let every = sys.record_every() as usize;
        let last = sys.steps() as usize;
        let mut header = vec!["time".to_owned()];
        header.extend(sys.outputs().iter().map(|v| sys.label(v)));
        let mut bond_header = vec!["time".to_owned()];
        for bond in sys.bonds() {
            let n = &bond.name;
            bond_header.extend([format!("{n}.dP"), format!("{n}.dE"), format!("{n}.E"), format!("{n}.E_abs")]);
            bond_header.extend([format!("{n}.E_uncorrected"), format!("{n}.E_abs_uncorrected")]);
            bond_header.extend([format!("{n}.dE_correction"), format!("{n}.E_correction")]);
        }
        let trace = SharedRecorder::default();
        let mut run = Execution::new(sys, &self.fmus)?;
        run.set_timing(false);
        run.observe(Box::new(trace.clone()));
        // A failed run keeps its rows; the summary says why it stopped.
        let _ = run.run();
        let summary = run.finish()?;
        let trace = std::mem::take(&mut *trace.lock().map_err(|_| anyhow!("recorder poisoned"))?);
        // As the CSV observers write them: results at the start, every k-th point and the last,
        // bonds the same after the start.
        let rows = (0..trace.times.len()).filter(|k| k % every == 0 || *k == last);
        let results = rows
            .clone()
            .map(|k| std::iter::once(trace.times[k]).chain(trace.values[k].iter().copied()).collect())
            .collect();
        let bonds = rows
            .filter(|k| *k > 0)
            .map(|k| {
                std::iter::once(trace.times[k])
                    .chain(trace.bonds[k].iter().flat_map(|b| {
                        [
                            b.dp,
                            b.de,
                            b.e,
                            b.e_abs,
                            b.e_uncorrected,
                            b.e_abs_uncorrected,
                            b.de_correction,
                            b.e_correction,
                        ]
                    }))
                    .collect()
            })
            .collect();
        Ok(RunOutput {
            ok: summary.status == Status::Ok,
            message: summary.message,
            results: Csv { header, rows: results },
            bonds: Csv { header: bond_header, rows: bonds },
        })
    }
}
