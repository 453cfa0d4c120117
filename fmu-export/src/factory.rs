//! The FMUs a library serves: one [`Factory`] per model, dispatched on the GUID.

use crate::component::Component;
use crate::description::{describe, DescribeError, Description};
use crate::instance::{Instance, Table};
use crate::logger::Logger;
use crate::model::{CoSimModel, ModelInfo};
use crate::variable::Variable;
use std::sync::atomic::{AtomicPtr, Ordering};

/// A model as the C layer and the packager see it, with its type erased.
pub trait Fmu: Sync {
    /// Names and documentation.
    fn info(&self) -> ModelInfo;
    /// The description (built once per process).
    fn description(&self) -> Result<&Description, DescribeError>;
    /// A new instance (Co-Simulation).
    fn instantiate(&'static self, resource_location: &str, log: Logger) -> Result<Box<dyn Component>, DescribeError>;
    /// A new Model Exchange instance; `Err` with the reason when the model has no continuous
    /// states (its description has no `<ModelExchange>`).
    fn instantiate_model_exchange(
        &'static self,
        resource_location: &str,
        log: Logger,
    ) -> Result<Box<dyn Component>, String>;
    /// `documentation/index.html`.
    fn documentation(&self) -> Result<String, DescribeError>;
    /// Frees the description built by [`Fmu::description`] (run when the library is unloaded,
    /// see [`crate::export_fmi2`]: a cdylib's statics are unmapped by `dlclose` without being
    /// dropped, so every load/unload cycle used to leak the table, ≈ 12 KB).
    ///
    /// # Safety
    /// No instance of this model and no reference from [`Fmu::description`] may be used after.
    unsafe fn release(&self);
}

/// The [`Fmu`] of model `M`; `const`-constructible so it can live in a `static`.
pub struct Factory<M> {
    /// The table, built on first use (a leaked `Box`, null before; freed by [`Fmu::release`]).
    table: AtomicPtr<Result<Table<M>, DescribeError>>,
    /// Shared between threads as the table is (`Sync` only when the table is).
    _table: std::marker::PhantomData<Result<Table<M>, DescribeError>>,
}

impl<M> Factory<M> {
    /// A factory; the table is built on first use.
    pub const fn new() -> Self {
        Self { table: AtomicPtr::new(std::ptr::null_mut()), _table: std::marker::PhantomData }
    }
}

impl<M> Drop for Factory<M> {
    fn drop(&mut self) {
        // SAFETY: `&mut self`: no reference into the table is alive.
        unsafe { self.free() }
    }
}

impl<M> Factory<M> {
    /// Drops the table, if built.
    ///
    /// # Safety
    /// No reference into the table may be used after.
    unsafe fn free(&self) {
        let p = self.table.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !p.is_null() {
            // SAFETY: `p` came from `Box::into_raw` in `table` and was swapped out exactly once.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

impl<M> Default for Factory<M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M: CoSimModel> Factory<M> {
    /// The variable table and description.
    pub fn table(&self) -> Result<&Table<M>, DescribeError> {
        let mut p = self.table.load(Ordering::Acquire);
        if p.is_null() {
            let vars: Vec<Variable<M>> = M::variables();
            let built = Box::into_raw(Box::new(describe::<M>(&vars).map(|description| Table::new(vars, description))));
            p = match self.table.compare_exchange(std::ptr::null_mut(), built, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => built,
                Err(other) => {
                    // Another thread built it first: keep theirs.
                    // SAFETY: `built` came from `Box::into_raw` above and was not published.
                    drop(unsafe { Box::from_raw(built) });
                    other
                }
            };
        }
        // SAFETY: a published table lives until `release` (library unload) or drop.
        unsafe { &*p }.as_ref().map_err(Clone::clone)
    }

    /// A typed instance, for in-process use (tests, monolithic solvers).
    pub fn instance(&'static self, log: Logger) -> Result<Instance<M>, DescribeError> {
        Ok(Instance::new(self.table()?, "", log))
    }

    /// A typed Model Exchange instance, for in-process use (the model must have
    /// [`CoSimModel::model_exchange`]; its calls are refused otherwise).
    pub fn instance_model_exchange(&'static self, log: Logger) -> Result<Instance<M>, DescribeError> {
        Ok(Instance::new_model_exchange(self.table()?, "", log))
    }
}

impl<M: CoSimModel> Fmu for Factory<M> {
    fn info(&self) -> ModelInfo {
        M::info()
    }

    fn description(&self) -> Result<&Description, DescribeError> {
        self.table().map(|t| &t.description)
    }

    fn instantiate(&'static self, resource_location: &str, log: Logger) -> Result<Box<dyn Component>, DescribeError> {
        Ok(Box::new(Instance::new(self.table()?, resource_location, log)))
    }

    fn instantiate_model_exchange(
        &'static self,
        resource_location: &str,
        log: Logger,
    ) -> Result<Box<dyn Component>, String> {
        if M::model_exchange().is_none() {
            return Err("this FMU supports Co-Simulation only".into());
        }
        let table = self.table().map_err(|e| e.to_string())?;
        Ok(Box::new(Instance::new_model_exchange(table, resource_location, log)))
    }

    fn documentation(&self) -> Result<String, DescribeError> {
        let t = self.table()?;
        Ok(crate::documentation::html::<M>(&t.vars, &t.description))
    }

    unsafe fn release(&self) {
        // SAFETY: the caller guarantees that nothing uses the table any more.
        unsafe { self.free() }
    }
}

/// Defines `pub static FMUS: &[&dyn fmu_export::Fmu]`, the FMUs a physics library serves: the
/// list the packager (`cargo xtask fmus`) reads and that [`crate::export_fmi2`] dispatches on. It
/// exports no `fmi2*` symbol, so any number of physics libraries can be linked into one binary.
///
/// ```ignore
/// fmu_export::define_fmus!(crate::oscillator::ForceDisplacementM1, crate::oscillator::ForceDisplacementM2);
/// ```
#[macro_export]
macro_rules! define_fmus {
    ($($model:ty),+ $(,)?) => {
        /// The FMUs this library serves.
        pub static FMUS: &[&dyn $crate::Fmu] = &[$({
            static F: $crate::Factory<$model> = $crate::Factory::new();
            &F
        }),+];
    };
}
