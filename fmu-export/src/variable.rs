//! The variable table: one declaration per variable produces its value reference, its
//! get/set dispatch in the C API and its `<ScalarVariable>` in `modelDescription.xml`.
//!
//! The value reference of a variable is its position in the table; start values are read from
//! the model's `Default` value through the getter, so a start value is never typed twice.

use crate::input::InputSignal;
use model_description::{Causality, DependencyKind, Initial, Variability};

/// An enumeration type (`<SimpleType><Enumeration>`), e.g. a solver choice.
#[derive(Debug)]
pub struct EnumType {
    /// Type name used as `declaredType`.
    pub name: &'static str,
    /// Description of the type.
    pub description: &'static str,
    /// Items: (name, value, description).
    pub items: &'static [(&'static str, i32, &'static str)],
}

impl EnumType {
    /// The item name for a value.
    pub fn item_name(&self, value: i32) -> Option<&'static str> {
        self.items.iter().find(|(_, v, _)| *v == value).map(|(n, _, _)| *n)
    }
}

/// Getter of a string variable.
pub type StrGetter<M> = for<'a> fn(&'a M) -> &'a str;
/// Derivative of a real output: `(model, order) -> d^order y / dt^order` at the current time.
pub type OutputDerivative<M> = fn(&M, u32) -> f64;

/// How a variable's value is read and written.
pub enum Access<M> {
    /// An fmi2Real.
    Real {
        /// Unit name ("" for none), defined in the unit table of [`crate::units`].
        unit: &'static str,
        /// Lower bound.
        min: Option<f64>,
        /// Upper bound.
        max: Option<f64>,
        /// Nominal value.
        nominal: Option<f64>,
        /// Getter.
        get: fn(&M) -> f64,
        /// Setter, for parameters.
        set: Option<fn(&mut M, f64)>,
        /// The input signal, for inputs (value and derivatives).
        input: Option<fn(&mut M) -> &mut InputSignal>,
        /// Highest output derivative order provided and how to compute it.
        derivative: Option<(u32, OutputDerivative<M>)>,
    },
    /// An fmi2Integer.
    Integer {
        /// Lower bound.
        min: Option<i32>,
        /// Upper bound.
        max: Option<i32>,
        /// Getter.
        get: fn(&M) -> i32,
        /// Setter.
        set: Option<fn(&mut M, i32)>,
    },
    /// An fmi2Boolean.
    Boolean {
        /// Getter.
        get: fn(&M) -> bool,
        /// Setter.
        set: Option<fn(&mut M, bool)>,
    },
    /// An fmi2String.
    String {
        /// Getter.
        get: StrGetter<M>,
        /// Setter.
        set: Option<fn(&mut M, &str)>,
    },
    /// An enumeration, accessed through fmi2Integer.
    Enumeration {
        /// Its type.
        ty: &'static EnumType,
        /// Getter.
        get: fn(&M) -> i32,
        /// Setter.
        set: Option<fn(&mut M, i32)>,
    },
}

/// One model variable.
pub struct Variable<M> {
    /// Name (structured naming convention).
    pub name: &'static str,
    /// Description, with unit meaning and the equation it comes from.
    pub description: &'static str,
    /// Causality.
    pub causality: Causality,
    /// Variability.
    pub variability: Variability,
    /// Explicit `initial`, where it differs from the standard's default.
    pub initial: Option<Initial>,
    /// Value access.
    pub access: Access<M>,
    /// For outputs: the inputs it depends on directly (direct feedthrough), by name, with the
    /// kind of dependency. Empty: no direct feedthrough.
    pub feedthrough: &'static [(&'static str, DependencyKind)],
    /// A Real output that costs real work to evaluate and follows from outputs that are checked
    /// (see [`Variable::on_demand`]): fmi2DoStep does not evaluate it to check its value.
    pub on_demand: bool,
    /// An output whose initial value the model computes from every input when it leaves
    /// Initialization Mode (accelerations from the applied forces), though after a step it
    /// has no direct feedthrough: `ModelStructure/InitialUnknowns` lists every input for it
    /// (see [`Variable::initially_from_inputs`]).
    pub initially_from_inputs: bool,
}

impl<M> Variable<M> {
    fn real(
        name: &'static str,
        unit: &'static str,
        description: &'static str,
        causality: Causality,
        variability: Variability,
        get: fn(&M) -> f64,
    ) -> Self {
        Self {
            name,
            description,
            causality,
            variability,
            initial: None,
            access: Access::Real {
                unit,
                min: None,
                max: None,
                nominal: None,
                get,
                set: None,
                input: None,
                derivative: None,
            },
            feedthrough: &[],
            on_demand: false,
            initially_from_inputs: false,
        }
    }

    /// A real parameter (fixed: settable until `fmi2ExitInitializationMode`).
    pub fn parameter(
        name: &'static str,
        unit: &'static str,
        description: &'static str,
        get: fn(&M) -> f64,
        set: fn(&mut M, f64),
    ) -> Self {
        let mut v = Self::real(name, unit, description, Causality::Parameter, Variability::Fixed, get);
        if let Access::Real { set: s, .. } = &mut v.access {
            *s = Some(set);
        }
        v
    }

    /// A calculated parameter: computed at initialization from the parameters.
    pub fn calculated_parameter(
        name: &'static str,
        unit: &'static str,
        description: &'static str,
        get: fn(&M) -> f64,
    ) -> Self {
        Self::real(name, unit, description, Causality::CalculatedParameter, Variability::Fixed, get)
    }

    /// A continuous real input; the model reads it through its [`InputSignal`].
    pub fn input(
        name: &'static str,
        unit: &'static str,
        description: &'static str,
        get: fn(&M) -> f64,
        signal: fn(&mut M) -> &mut InputSignal,
    ) -> Self {
        let mut v = Self::real(name, unit, description, Causality::Input, Variability::Continuous, get);
        if let Access::Real { input, .. } = &mut v.access {
            *input = Some(signal);
        }
        v
    }

    /// A continuous real output.
    pub fn output(name: &'static str, unit: &'static str, description: &'static str, get: fn(&M) -> f64) -> Self {
        Self::real(name, unit, description, Causality::Output, Variability::Continuous, get)
    }

    /// A continuous real local variable (e.g. a state derivative of a Model Exchange model).
    pub fn local(name: &'static str, unit: &'static str, description: &'static str, get: fn(&M) -> f64) -> Self {
        Self::real(name, unit, description, Causality::Local, Variability::Continuous, get)
    }

    /// An enumeration parameter.
    pub fn enumeration(
        name: &'static str,
        ty: &'static EnumType,
        description: &'static str,
        get: fn(&M) -> i32,
        set: fn(&mut M, i32),
    ) -> Self {
        Self {
            name,
            description,
            causality: Causality::Parameter,
            variability: Variability::Fixed,
            initial: None,
            access: Access::Enumeration { ty, get, set: Some(set) },
            feedthrough: &[],
            on_demand: false,
            initially_from_inputs: false,
        }
    }

    /// An integer parameter.
    pub fn integer(name: &'static str, description: &'static str, get: fn(&M) -> i32, set: fn(&mut M, i32)) -> Self {
        Self {
            name,
            description,
            causality: Causality::Parameter,
            variability: Variability::Fixed,
            initial: None,
            access: Access::Integer { min: None, max: None, get, set: Some(set) },
            feedthrough: &[],
            on_demand: false,
            initially_from_inputs: false,
        }
    }

    /// A boolean parameter.
    pub fn boolean(name: &'static str, description: &'static str, get: fn(&M) -> bool, set: fn(&mut M, bool)) -> Self {
        Self {
            name,
            description,
            causality: Causality::Parameter,
            variability: Variability::Fixed,
            initial: None,
            access: Access::Boolean { get, set: Some(set) },
            feedthrough: &[],
            on_demand: false,
            initially_from_inputs: false,
        }
    }

    /// A string parameter.
    pub fn string(name: &'static str, description: &'static str, get: StrGetter<M>, set: fn(&mut M, &str)) -> Self {
        Self {
            name,
            description,
            causality: Causality::Parameter,
            variability: Variability::Fixed,
            initial: None,
            access: Access::String { get, set: Some(set) },
            feedthrough: &[],
            on_demand: false,
            initially_from_inputs: false,
        }
    }

    /// Turns this variable into a discrete output (for Integer/Boolean/String/Enumeration
    /// diagnostics such as iteration counts): drops the setter.
    pub fn discrete_output(mut self) -> Self {
        self.causality = Causality::Output;
        self.variability = Variability::Discrete;
        match &mut self.access {
            Access::Real { set, .. } => *set = None,
            Access::Integer { set, .. } | Access::Enumeration { set, .. } => *set = None,
            Access::Boolean { set, .. } => *set = None,
            Access::String { set, .. } => *set = None,
        }
        self
    }

    /// Makes a parameter tunable (settable between steps).
    pub fn tunable(mut self) -> Self {
        self.variability = Variability::Tunable;
        self
    }

    /// Lower bound (Real or Integer).
    pub fn min(mut self, value: f64) -> Self {
        match &mut self.access {
            Access::Real { min, .. } => *min = Some(value),
            Access::Integer { min, .. } => *min = Some(value as i32),
            _ => {}
        }
        self
    }

    /// Upper bound (Real or Integer).
    pub fn max(mut self, value: f64) -> Self {
        match &mut self.access {
            Access::Real { max, .. } => *max = Some(value),
            Access::Integer { max, .. } => *max = Some(value as i32),
            _ => {}
        }
        self
    }

    /// Nominal value (Real).
    pub fn nominal(mut self, value: f64) -> Self {
        if let Access::Real { nominal, .. } = &mut self.access {
            *nominal = Some(value);
        }
        self
    }

    /// Direct feedthrough from these inputs (outputs only).
    pub fn depends_on(mut self, inputs: &'static [(&'static str, DependencyKind)]) -> Self {
        self.feedthrough = inputs;
        self
    }

    /// The initial value (Initialization Mode) depends on every input of the model, e.g. an
    /// acceleration computed from the applied forces when Initialization Mode ends; after a
    /// step the output is a result of the step (no direct feedthrough).
    pub fn initially_from_inputs(mut self) -> Self {
        self.initially_from_inputs = true;
        self
    }

    /// An output evaluated only when it is read. fmi2DoStep checks that every Real output is
    /// finite after the step, which evaluates each getter; an output whose getter is expensive
    /// (a linear solve) and that is finite whenever the checked outputs are may opt out.
    pub fn on_demand(mut self) -> Self {
        self.on_demand = true;
        self
    }

    /// Output derivatives up to `max_order` through `f` (`fmi2GetRealOutputDerivatives`).
    pub fn output_derivatives(mut self, max_order: u32, f: OutputDerivative<M>) -> Self {
        if let Access::Real { derivative, .. } = &mut self.access {
            *derivative = Some((max_order, f));
        }
        self
    }

    /// Whether this variable has a start value in the model description: parameters, inputs
    /// and variables with `initial` exact or approx.
    pub fn has_start(&self) -> bool {
        matches!(self.causality, Causality::Parameter | Causality::Input)
            || matches!(self.initial, Some(Initial::Exact | Initial::Approx))
    }

    /// Whether `fmi2Set*` may write it at all (in some state).
    pub fn is_settable(&self) -> bool {
        match &self.access {
            Access::Real { set, input, .. } => set.is_some() || input.is_some(),
            Access::Integer { set, .. } | Access::Enumeration { set, .. } => set.is_some(),
            Access::Boolean { set, .. } => set.is_some(),
            Access::String { set, .. } => set.is_some(),
        }
    }

    /// The FMI base type name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self.access {
            Access::Real { .. } => "Real",
            Access::Integer { .. } => "Integer",
            Access::Boolean { .. } => "Boolean",
            Access::String { .. } => "String",
            Access::Enumeration { .. } => "Enumeration",
        }
    }

    /// Unit of a Real ("" otherwise).
    pub fn unit(&self) -> &'static str {
        match self.access {
            Access::Real { unit, .. } => unit,
            _ => "",
        }
    }
}
