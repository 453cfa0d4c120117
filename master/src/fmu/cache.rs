//! [`FmuCache`]: each FMU file loaded (unzipped, library opened) once however many instances and
//! runs use it — the one cache of `cosim run`, tune, bench and the validation report.

use super::load::Fmu;
use crate::error::Result;
use crate::host::Host;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The structural parameters an FMU is configured with, by name (FMI 3.0; empty: the start
/// values).
pub type Configuration = Vec<(String, i128)>;

/// Loaded FMUs by path (and by configuration of their structural parameters).
#[derive(Default)]
pub struct FmuCache {
    loaded: Vec<(PathBuf, Arc<Fmu>)>,
    configured: Vec<(PathBuf, Configuration, Arc<Fmu>)>,
    host: Host,
}

impl FmuCache {
    /// An empty cache whose extractions, worker processes and runs ([`crate::Execution::from_builder`])
    /// are handed `host`.
    pub fn with_host(host: Host) -> Self {
        Self { loaded: Vec::new(), configured: Vec::new(), host }
    }

    /// The host handed in ([`Host::default`] unless [`FmuCache::with_host`]).
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// Model Exchange: the interface to load FMUs that have both for (`None`: Co-Simulation)
    /// and the integrator of their ME instances, for the FMUs loaded from now on (and their
    /// isolated workers); an FMU loaded before with other choices is loaded again.
    pub fn set_model_exchange(&mut self, interface: Option<super::Interface>, solver: crate::ode::Options) {
        self.host.interface = interface;
        self.host.solver = Some(solver);
    }

    /// The FMU at `path`, loaded now if it was not before.
    pub fn load(&mut self, path: &Path) -> Result<Arc<Fmu>> {
        let wanted = |f: &Fmu| {
            // The solver matters to Model Exchange only: a Co-Simulation FMU is kept as it is.
            let same_solver = f.interface() == super::Interface::CoSimulation
                || self.host.solver.as_ref().is_none_or(|s| s == f.solver());
            let same_interface = match self.host.interface {
                Some(i) => f.interface() == i,
                None => true,
            };
            same_solver && same_interface
        };
        if let Some(f) = self.get(path).filter(|f| wanted(f)) {
            return Ok(Arc::clone(f));
        }
        self.loaded.retain(|(p, _)| p != path);
        let f = Fmu::load_in(path, &self.host)?;
        self.loaded.push((path.to_path_buf(), Arc::clone(&f)));
        Ok(f)
    }

    /// Uses `fmu` (loaded elsewhere, e.g. by a front end's cache across runs) for `path`.
    pub fn insert(&mut self, path: &Path, fmu: Arc<Fmu>) {
        self.loaded.retain(|(p, _)| p != path);
        self.configured.retain(|(p, _, _)| p != path);
        self.loaded.push((path.to_path_buf(), fmu));
    }

    /// The FMU at `path` configured with the structural parameters `values` ([`Fmu::configured`]),
    /// loaded and configured now if it was not before; with no values, [`FmuCache::load`].
    pub fn load_configured(&mut self, path: &Path, values: &[(String, i128)]) -> Result<Arc<Fmu>> {
        let base = self.load(path)?;
        if values.is_empty() {
            return Ok(base);
        }
        if let Some(f) = self.get_configured(path, values) {
            return Ok(Arc::clone(f));
        }
        let named: Vec<(&str, i128)> = values.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let f = base.configured(&named)?;
        self.configured.push((path.to_path_buf(), values.to_vec(), Arc::clone(&f)));
        Ok(f)
    }

    /// The FMU at `path` configured with `values` if loaded ([`FmuCache::get`] with no values).
    pub fn get_configured(&self, path: &Path, values: &[(String, i128)]) -> Option<&Arc<Fmu>> {
        if values.is_empty() {
            return self.get(path);
        }
        self.configured.iter().find(|(p, c, _)| p == path && c.as_slice() == values).map(|(_, _, f)| f)
    }

    /// The FMU at `path` if loaded.
    pub fn get(&self, path: &Path) -> Option<&Arc<Fmu>> {
        self.loaded.iter().find(|(p, _)| p == path).map(|(_, f)| f)
    }
}
