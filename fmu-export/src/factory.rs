//! The FMUs a library serves: one [`Factory`] per model, dispatched on the GUID.

use crate::component::Component;
use crate::description::{describe, DescribeError, Description};
use crate::instance::{Instance, Table};
use crate::logger::Logger;
use crate::model::{CoSimModel, ModelInfo};
use crate::variable::Variable;
use std::sync::OnceLock;

/// A model as the C layer and the packager see it, with its type erased.
pub trait Fmu: Sync {
    /// Names and documentation.
    fn info(&self) -> ModelInfo;
    /// The description (built once per process).
    fn description(&self) -> Result<&Description, DescribeError>;
    /// A new instance.
    fn instantiate(&'static self, resource_location: &str, log: Logger) -> Result<Box<dyn Component>, DescribeError>;
    /// `documentation/index.html`.
    fn documentation(&self) -> Result<String, DescribeError>;
}

/// The [`Fmu`] of model `M`; `const`-constructible so it can live in a `static`.
pub struct Factory<M> {
    table: OnceLock<Result<Table<M>, DescribeError>>,
}

impl<M> Factory<M> {
    /// A factory; the table is built on first use.
    pub const fn new() -> Self {
        Self { table: OnceLock::new() }
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
        self.table
            .get_or_init(|| {
                let vars: Vec<Variable<M>> = M::variables();
                describe::<M>(&vars).map(|description| Table::new(vars, description))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A typed instance, for in-process use (tests, monolithic solvers).
    pub fn instance(&'static self, log: Logger) -> Result<Instance<M>, DescribeError> {
        Ok(Instance::new(self.table()?, "", log))
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

    fn documentation(&self) -> Result<String, DescribeError> {
        let t = self.table()?;
        Ok(crate::documentation::html::<M>(&t.vars, &t.description))
    }
}
