//! [`FmuCache`]: each FMU file loaded (unzipped, library opened) once however many instances and
//! runs use it — the one cache of `cosim run`, tune, bench and the validation report.

use super::load::Fmu;
use crate::error::Result;
use crate::host::Host;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Loaded FMUs by path.
#[derive(Default)]
pub struct FmuCache {
    loaded: Vec<(PathBuf, Arc<Fmu>)>,
    host: Host,
}

impl FmuCache {
    /// An empty cache whose extractions, worker processes and runs ([`crate::Execution::from_builder`])
    /// are handed `host`.
    pub fn with_host(host: Host) -> Self {
        Self { loaded: Vec::new(), host }
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
            let same_solver = self.host.solver.as_ref().is_none_or(|s| s == f.solver());
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
        self.loaded.push((path.to_path_buf(), fmu));
    }

    /// The FMU at `path` if loaded.
    pub fn get(&self, path: &Path) -> Option<&Arc<Fmu>> {
        self.loaded.iter().find(|(p, _)| p == path).map(|(_, f)| f)
    }
}
