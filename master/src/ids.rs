//! Typed indices of the coupling API a scheme uses ([`crate::coupling::Coupling`]): an
//! [`InstanceId`] is never taken for a [`LinkId`] or the other way round. Each is the plain index
//! underneath (no cost per step): instance i of [`crate::System::instances`] (and of the instance
//! list an [`crate::Execution`] steps), link k of the Real connections.
//!
//! ```compile_fail
//! // A link is not an instance: this does not compile.
//! fn f(c: &mut master::coupling::Coupling, link: master::ids::LinkId) {
//!     c.uncount_step_call(link);
//! }
//! ```
//!
//! ```
//! // What a scheme writes instead: the ids the coupling hands out.
//! fn sources(c: &master::coupling::Coupling) -> Vec<usize> {
//!     c.instances().flat_map(|i| c.inputs_of(i).iter().map(|l| c.link_source(*l).index())).collect()
//! }
//! ```

/// One instance of the system: its position in [`crate::System::instances`] and in the list of
/// instances handed to an [`crate::algorithm::Algorithm`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstanceId(usize);

/// One Real link (a connection from an output to an input) of the coupling tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(usize);

impl InstanceId {
    /// Instance `index` (its position in [`crate::System::instances`]).
    pub const fn new(index: usize) -> Self {
        Self(index)
    }
    /// Its position in [`crate::System::instances`] and the instance list.
    pub const fn index(self) -> usize {
        self.0
    }
}

impl LinkId {
    /// Link `index` of the coupling tables.
    pub const fn new(index: usize) -> Self {
        Self(index)
    }
    /// Its position in the coupling tables.
    pub const fn index(self) -> usize {
        self.0
    }
}

impl std::fmt::Display for InstanceId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "instance {}", self.0)
    }
}

impl std::fmt::Display for LinkId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "link {}", self.0)
    }
}
