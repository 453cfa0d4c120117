//! [`Settings`]: the settings of a run (`[simulation]` of a system file), one serde type that
//! every front end reads into and the SSP annotation writes from:
//!
//! - a system file's `[simulation]` table deserializes into it ([`super::SystemBuilder::read`]);
//! - our SSP annotation carries its TOML form (`ssp::annotation`: written with
//!   [`Settings::to_table`], read back by deserialization);
//! - Python: `cosim.System(**settings)` and `simulate(…, **settings)` hand a dict that is set key by
//!   key with [`Settings::set`];
//! - the CLI: `cosim run --set key=value` ([`Settings::set_arg`], TOML value syntax, dotted keys for
//!   nested tables such as `ecco.rtol`); its named flags (`--step`, `--algorithm`, …) are sugar
//!   serialized under the same keys and set the same way.
//!
//! Unknown keys are refused everywhere (`deny_unknown_fields`), with the key named. Every field is
//! `None` when not given: the default is taken when the system is built, where the values are
//! checked (`system::resolve`).
//!
//! **Adding a setting**: one field with its doc comment here, and its use in `resolve` (where
//! the [`super::System`] gets the value). Every front end reads it with no further code; a CLI
//! flag is optional sugar (`--set` reaches it already).

use super::{AlgorithmKind, Exchange, ExtrapolationSpec, Parallel, StepControlKind};
use serde::{Deserialize, Serialize};
use toml::{Table, Value};

/// Declares a struct with the per-bond settings (`energy_correction`, `energy_correction_law`,
/// `energy_correction_gain`, `energy_correction_flow`) among its fields, at the `;`: their keys,
/// types and docs are written once here, for [`BondSettings`], [`Settings`] (`[simulation]`) and
/// `[[bonds]]` ([`super::BondDraft`]); each gets `bond_settings()`, its four as a [`BondSettings`].
macro_rules! with_bond_settings {
    (
        $(#[$m:meta])*
        $vis:vis struct $name:ident {
            $($(#[$bm:meta])* $bvis:vis $bfield:ident : $bty:ty,)*
            ;
            $($(#[$am:meta])* $avis:vis $afield:ident : $aty:ty,)*
        }
    ) => {
        $(#[$m])*
        $vis struct $name {
            $($(#[$bm])* $bvis $bfield: $bty,)*
            /// Energy correction (default false; a `[[bonds]]` table's own wins over
            /// `[simulation]`'s).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub energy_correction: Option<bool>,
            /// Energy correction law: `"input"` (default) or `"bond"`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub energy_correction_law: Option<$crate::system::CorrectionLaw>,
            /// Gain α of the correction law (default 1).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub energy_correction_gain: Option<f64>,
            /// Floor of the conjugate variable in the correction law (default 0).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub energy_correction_flow: Option<f64>,
            $($(#[$am])* $avis $afield: $aty,)*
        }

        impl $name {
            /// The per-bond settings of this table.
            pub fn bond_settings(&self) -> $crate::system::BondSettings {
                $crate::system::BondSettings {
                    energy_correction: self.energy_correction,
                    energy_correction_law: self.energy_correction_law,
                    energy_correction_gain: self.energy_correction_gain,
                    energy_correction_flow: self.energy_correction_flow,
                }
            }
        }
    };
}
pub(crate) use with_bond_settings;

with_bond_settings! {
    /// The energy correction settings of a bond: `[[bonds]]`'s own, over `[simulation]`'s (the
    /// same keys in both tables).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct BondSettings {
        ;
    }
}

impl BondSettings {
    /// These settings, each not given taken from `base`.
    pub fn over(self, base: BondSettings) -> BondSettings {
        BondSettings {
            energy_correction: self.energy_correction.or(base.energy_correction),
            energy_correction_law: self.energy_correction_law.or(base.energy_correction_law),
            energy_correction_gain: self.energy_correction_gain.or(base.energy_correction_gain),
            energy_correction_flow: self.energy_correction_flow.or(base.energy_correction_flow),
        }
    }

    /// Nothing given.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The keys, in declaration order.
    pub fn keys() -> &'static [&'static str] {
        fill::keys::<BondSettings>()
    }
}

with_bond_settings! {
/// The settings of a run: `[simulation]` of a system file (field = key). `None`: not given.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Settings {
    /// Start time (s, default 0).
    pub start: Option<f64>,
    /// Stop time (s).
    pub stop: Option<f64>,
    /// Communication step H (s).
    pub step: Option<f64>,
    /// Coupling scheme: `"jacobi"` (default) or `"gauss-seidel"`.
    pub algorithm: Option<AlgorithmKind>,
    /// Gauss-Seidel order, every instance once (default: from the connection graph).
    pub order: Option<Vec<String>>,
    /// Default extrapolation of the connections: an order 0..4 (default 0) or `"I2"`.
    pub extrapolation: Option<ExtrapolationSpec>,
    /// Jacobi worker threads: `"auto"` (default, from measured step cost), `"on"`, `"off"`.
    pub parallel: Option<Parallel>,
    /// How the inputs at t_n are taken from the outputs: `"ordered"` (default) or `"explicit"`
    /// (the papers' explicit Jacobi: every output read once at t_n).
    pub exchange: Option<Exchange>,
    /// Write results every k-th communication point (default 1).
    pub record_every: Option<u64>,
    /// Run each instance in its own worker process (default false).
    pub isolate: Option<bool>,
    /// Isolated instances: a call that takes longer (s) ends the run as hung (default 60).
    pub worker_timeout: Option<f64>,
    /// Stop when a bond's Σ|δE| exceeds this (J; default: no bound).
    pub max_residual_energy: Option<f64>,
    /// Iterative coupling: passes per step at most (default 1: non-iterative).
    pub iterations: Option<u32>,
    /// Convergence tolerance of the iterative coupling (relative, default 1e-9).
    pub iteration_tolerance: Option<f64>,
    /// How H is chosen: `"fixed"` (default) or `"ecco"` (from the bonds' residual energy).
    pub step_control: Option<StepControlKind>,
    /// `[simulation.ecco]`: ECCO's tolerances and bounds.
    #[serde(skip_serializing_if = "EccoSettings::is_empty")]
    pub ecco: EccoSettings,
    ;
    /// Real-time pacing: simulated seconds per wall-clock second (default: as fast as possible;
    /// see [`crate::realtime`]).
    pub real_time: Option<f64>,
    /// End a paced run that reaches a communication point more than this late (s; default: no
    /// limit). Given without `real_time`: real time (factor 1).
    pub max_lateness: Option<f64>,
    /// Lock memory and run the stepping thread under SCHED_FIFO where the OS permits (default
    /// false; a note in summary.json when refused).
    pub real_time_priority: Option<bool>,
    /// The interface of FMUs that have both: `"cs"` (default; FMPy's `"CoSimulation"`) or `"me"`
    /// (`"ModelExchange"`: the master integrates the FMU, docs/model-exchange.md). An FMU with
    /// one interface runs with it.
    pub interface: Option<InterfaceKind>,
    /// The integrator of Model Exchange instances: `"bdf"` (default, variable step; FMPy's
    /// `"CVode"` names it too), `"euler"` or `"rk4"` (fixed step `solver_step`).
    pub solver: Option<SolverKind>,
    /// Relative tolerance of the variable-step integrator (default 1e-6).
    pub relative_tolerance: Option<f64>,
    /// Absolute tolerance of the variable-step integrator (default 1e-8).
    pub absolute_tolerance: Option<f64>,
    /// Largest internal step of the variable-step integrator (s; default: no limit).
    pub max_solver_step: Option<f64>,
    /// Step of the fixed-step integrators (s; default: the communication step / 10).
    pub solver_step: Option<f64>,
    /// How the Model Exchange instances of a system are integrated: `"strong"` (default: all
    /// of them as one ODE by one integrator, their connections resolved at every right-hand-side
    /// evaluation) or `"weak"` (each by its own integrator, exchanging values at communication
    /// points like Co-Simulation FMUs); an instance's `me_group` puts it in a named group.
    pub me_coupling: Option<MeCoupling>,
}
}

/// `[simulation] me_coupling`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum MeCoupling {
    /// One ODE for the Model Exchange instances (those without an `me_group` of their own).
    #[default]
    Strong,
    /// Each Model Exchange instance (without an `me_group`) integrated on its own.
    Weak,
}

/// `[simulation] interface` (FMPy's `fmi_type` names accepted too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum InterfaceKind {
    /// Co-Simulation.
    #[serde(rename = "cs", alias = "CoSimulation", alias = "co-simulation")]
    #[value(name = "cs", alias = "CoSimulation", alias = "co-simulation")]
    Cs,
    /// Model Exchange.
    #[serde(rename = "me", alias = "ModelExchange", alias = "model-exchange")]
    #[value(name = "me", alias = "ModelExchange", alias = "model-exchange")]
    Me,
}

/// `[simulation] solver` (FMPy's `solver` names accepted too: `CVode` is the BDF).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum SolverKind {
    /// Variable-step, variable-order BDF (stiff).
    #[serde(rename = "bdf", alias = "CVode", alias = "cvode", alias = "BDF")]
    #[value(name = "bdf", alias = "CVode", alias = "cvode")]
    Bdf,
    /// Explicit Euler, fixed step.
    #[serde(rename = "euler", alias = "Euler")]
    #[value(name = "euler", alias = "Euler")]
    Euler,
    /// Classical Runge–Kutta, fixed step.
    #[serde(rename = "rk4", alias = "RK4")]
    #[value(name = "rk4", alias = "RK4")]
    Rk4,
}

impl InterfaceKind {
    /// The interface.
    pub fn interface(self) -> crate::host::Interface {
        match self {
            Self::Cs => crate::host::Interface::CoSimulation,
            Self::Me => crate::host::Interface::ModelExchange,
        }
    }
}

impl Settings {
    /// The Model Exchange settings: the interface asked for and the integrator's options
    /// (`step`: the communication step, for the fixed-step default). `Err` names the key and
    /// the value.
    pub fn model_exchange(
        &self,
        step: Option<f64>,
    ) -> Result<(Option<crate::host::Interface>, crate::ode::Options), String> {
        use crate::ode::{Method, Options};
        let interface = self.interface.map(InterfaceKind::interface);
        let method = match self.solver {
            None | Some(SolverKind::Bdf) => Method::Bdf,
            Some(SolverKind::Euler) => Method::Euler,
            Some(SolverKind::Rk4) => Method::Rk4,
        };
        let mut o = Options { method, ..Options::default() };
        let positive = |key: &str, v: Option<f64>| match v {
            Some(x) if !(x.is_finite() && x > 0.0) => Err(format!("{key} = {x} must be a positive number")),
            _ => Ok(v),
        };
        if let Some(x) = positive("relative_tolerance", self.relative_tolerance)? {
            o.rtol = x;
        }
        if let Some(x) = positive("absolute_tolerance", self.absolute_tolerance)? {
            o.atol = x;
        }
        if let Some(x) = positive("max_solver_step", self.max_solver_step)? {
            o.max_step = x;
        }
        match positive("solver_step", self.solver_step)? {
            Some(x) => o.fixed_step = x,
            None => {
                if let Some(h) = step.filter(|h| h.is_finite() && *h > 0.0) {
                    o.fixed_step = h / 10.0;
                }
            }
        }
        Ok((interface, o))
    }
}

/// `[simulation.ecco]`; `None` takes [`super::EccoParams::default`] (`h_min`: the grid quantum,
/// `h_max`: 10 · `[simulation] step`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EccoSettings {
    /// Relative tolerance on a step's residual energy.
    pub rtol: Option<f64>,
    /// Absolute tolerance on a step's residual energy (J).
    pub atol: Option<f64>,
    /// Safety factor of the step-size controller.
    pub safety: Option<f64>,
    /// Proportional gain of the PI controller.
    pub p_gain: Option<f64>,
    /// Integral gain of the PI controller.
    pub i_gain: Option<f64>,
    /// Smallest communication step (s).
    pub h_min: Option<f64>,
    /// Largest communication step (s).
    pub h_max: Option<f64>,
    /// Smallest change factor of H per step.
    pub min_rate: Option<f64>,
    /// Largest change factor of H per step.
    pub max_rate: Option<f64>,
}

impl EccoSettings {
    /// Nothing given.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

impl Settings {
    /// Nothing given.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The settings as a TOML table (keys not given left out).
    pub fn to_table(&self) -> Result<Table, String> {
        Table::try_from(self).map_err(|e| e.to_string())
    }

    /// Settings from a TOML table (unknown keys refused with their name).
    pub fn from_table(table: Table) -> Result<Self, String> {
        Value::Table(table).try_into().map_err(|e: toml::de::Error| e.message().trim().to_owned())
    }

    /// Sets `key` (dotted for a nested table: `ecco.rtol`) to `value`; `Err` names the key
    /// (unknown, or a value of the wrong type).
    pub fn set(&mut self, key: &str, value: Value) -> Result<(), String> {
        let mut table = self.to_table()?;
        let mut slot = &mut table;
        let mut parts: Vec<&str> = key.split('.').collect();
        let last = parts.pop().unwrap_or_default();
        for part in parts {
            slot = slot
                .entry(part)
                .or_insert_with(|| Value::Table(Table::new()))
                .as_table_mut()
                .ok_or_else(|| format!("{key}: {part} is not a table"))?;
        }
        slot.insert(last.to_owned(), value);
        *self = Self::from_table(table).map_err(|m| format!("{key}: {m}"))?;
        Ok(())
    }

    /// `key=value` of the command line (`--set`): the value in TOML syntax (`1e-3`, `true`,
    /// `["m1", "m2"]`), a bare word taken as a string (`algorithm=gauss-seidel`).
    pub fn set_arg(&mut self, arg: &str) -> Result<(), String> {
        let (key, text) =
            arg.split_once('=').ok_or_else(|| format!("{arg}: expected key=value (e.g. step=1e-3, ecco.rtol=1e-4)"))?;
        let (key, text) = (key.trim(), text.trim());
        if text.contains(['\n', '\r']) {
            // `stop=1\nstep=2` was read as the TOML `v = 1` and `step = 2`, and step dropped.
            return Err(format!(
                "{key}: the value {text:?} holds a line break: give one setting per --set (e.g. --set stop=1 --set step=2)"
            ));
        }
        let value = toml::from_str::<Table>(&format!("v = {text}")).ok().and_then(|mut t| t.remove("v"));
        let value = match value {
            Some(v) => v,
            // An integer TOML cannot hold (`record_every=18446744073709551615`) is no string.
            None if is_integer_literal(text) => {
                return Err(format!(
                    "{key}: {text} is outside the integers a setting takes ({} to {}, TOML's 64-bit integers)",
                    i64::MIN,
                    i64::MAX
                ))
            }
            None => Value::String(text.to_owned()),
        };
        self.set(key, value)
    }

    /// The values a run refuses whatever the system, checked before anything else by the
    /// resolver and by `cosim run --print-settings`: a NaN anywhere (`ecco.rtol` too), a count
    /// of 0 (`record_every`, `iterations`), a step or a real-time factor that is not positive.
    /// `Err((key, message))`, the key as in `[simulation]` (`ecco.rtol`).
    pub fn check_values(&self) -> Result<(), (String, String)> {
        fn nan(prefix: &str, t: &Table) -> Option<String> {
            t.iter().find_map(|(k, v)| match v {
                Value::Float(x) if x.is_nan() => Some(format!("{prefix}{k}")),
                Value::Table(inner) => nan(&format!("{prefix}{k}."), inner),
                _ => None,
            })
        }
        let table = self.to_table().map_err(|m| ("simulation".to_owned(), m))?;
        if let Some(key) = nan("", &table) {
            return Err((key, "NaN is not a number".to_owned()));
        }
        let bad = |key: &str, message: String| Err((key.to_owned(), message));
        if self.record_every == Some(0) {
            return bad("record_every", "must be at least 1".into());
        }
        if self.iterations == Some(0) {
            return bad("iterations", "must be at least 1 (1 = non-iterative coupling)".into());
        }
        if let Some(h) = self.step.filter(|h| !(h.is_finite() && *h > 0.0)) {
            return bad("step", format!("communication step {h} must be positive"));
        }
        if self.real_time.is_some() || self.max_lateness.is_some() {
            let factor = self.real_time.unwrap_or(1.0);
            let rt = crate::realtime::RealTime {
                factor,
                max_lateness: self.max_lateness,
                priority: false,
                timing_csv: None,
            };
            rt.check()?;
        }
        Ok(())
    }

    /// These settings with those given in `over` put over them (a nested table key by key).
    pub fn overridden_by(&self, over: &Settings) -> Result<Settings, String> {
        fn merge(base: &mut Table, over: Table) {
            for (k, v) in over {
                match (base.get_mut(&k), v) {
                    (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
                    (_, v) => {
                        base.insert(k, v);
                    }
                }
            }
        }
        let mut base = self.to_table()?;
        merge(&mut base, over.to_table()?);
        Self::from_table(base)
    }

    /// The top-level keys (`start`, `stop`, …, `ecco`, …), in declaration order.
    pub fn keys() -> &'static [&'static str] {
        fill::keys::<Settings>()
    }

    /// Settings with every field given (a valid value of its type: the last variant of an
    /// enumeration, `true`, 0.25, 3, `["a"]`): tests check that each front end carries every
    /// setting, with no list of the fields to keep up to date.
    #[doc(hidden)]
    pub fn every_field_set() -> Result<Settings, String> {
        fill::every_field_set()
    }
}

/// `123`, `-4_000`: an integer literal (of any size).
fn is_integer_literal(text: &str) -> bool {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit() || b == b'_')
}

impl Serialize for ExtrapolationSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Order(m) => s.serialize_u64(*m as u64),
            Self::I2(_) => s.serialize_str("I2"),
        }
    }
}

impl<'de> Deserialize<'de> for ExtrapolationSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = ExtrapolationSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an integer 0..4 or \"I2\"")
            }
            fn visit_u64<E: serde::de::Error>(self, m: u64) -> Result<Self::Value, E> {
                Ok(ExtrapolationSpec::Order(usize::try_from(m).unwrap_or(usize::MAX)))
            }
            fn visit_i64<E: serde::de::Error>(self, m: i64) -> Result<Self::Value, E> {
                u64::try_from(m)
                    .map_err(|_| E::custom(format!("extrapolation = {m} must be an integer 0..4 or \"I2\"")))
                    .and_then(|m| self.visit_u64(m))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Self::Value, E> {
                match s {
                    "I2" => Ok(ExtrapolationSpec::I2(None)),
                    other => Err(E::custom(format!("extrapolation = \"{other}\" must be an integer 0..4 or \"I2\""))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Deserializers that walk the type's own description: [`Fields`] records the field names,
/// [`Filler`] gives every field a value.
pub(crate) mod fill {
    use serde::de::value::{MapDeserializer, SeqDeserializer, StrDeserializer};
    use serde::de::{Error as _, IntoDeserializer, Visitor};
    use serde::forward_to_deserialize_any;

    type Error = serde::de::value::Error;

    /// The field names of struct `T`, in declaration order.
    pub fn keys<T: serde::de::DeserializeOwned>() -> &'static [&'static str] {
        let mut keys: &'static [&'static str] = &[];
        let _ = T::deserialize(Fields(&mut keys));
        keys
    }

    /// A `T` with every field given (a struct's every field, `Some`, one element of a list or a
    /// map with key `"a"`, the last variant of an enumeration, `true`, 0.25, 3, `"a"`).
    pub fn every_field_set<T: serde::de::DeserializeOwned>() -> Result<T, String> {
        T::deserialize(Filler).map_err(|e| e.to_string())
    }

    /// Records the field names of the struct it is asked for, then fails.
    pub struct Fields<'a>(pub &'a mut &'static [&'static str]);

    impl<'de> serde::Deserializer<'de> for Fields<'_> {
        type Error = Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Error> {
            Err(Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Error> {
            *self.0 = fields;
            Err(Error::custom("fields recorded"))
        }
        forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
            bytes byte_buf option unit unit_struct newtype_struct seq tuple
            tuple_struct map enum identifier ignored_any
        }
    }

    /// A value for everything: structs with every field, `Some`, the last enum variant.
    #[derive(Clone, Copy)]
    pub struct Filler;

    impl IntoDeserializer<'_, Error> for Filler {
        type Deserializer = Self;
        fn into_deserializer(self) -> Self {
            self
        }
    }

    impl<'de> serde::Deserializer<'de> for Filler {
        type Error = Error;
        fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_u64(3)
        }
        fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_bool(true)
        }
        fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_f64(0.25)
        }
        fn deserialize_f32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_f32(0.25)
        }
        fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_str("a")
        }
        fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_str("a")
        }
        fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_some(self)
        }
        fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_seq(SeqDeserializer::new(std::iter::once(self)))
        }
        fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, v: V) -> Result<V::Value, Error> {
            v.visit_seq(SeqDeserializer::new(std::iter::repeat_n(self, len)))
        }
        fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            v.visit_map(MapDeserializer::new(std::iter::once(("a", self))))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            v: V,
        ) -> Result<V::Value, Error> {
            v.visit_map(MapDeserializer::new(fields.iter().map(|f| (*f, self))))
        }
        fn deserialize_enum<V: Visitor<'de>>(
            self,
            _: &'static str,
            variants: &'static [&'static str],
            v: V,
        ) -> Result<V::Value, Error> {
            let last = variants.last().copied().unwrap_or_default();
            v.visit_enum(StrDeserializer::<Error>::new(last))
        }
        forward_to_deserialize_any! {
            i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 char
            bytes byte_buf unit unit_struct newtype_struct
            tuple_struct identifier ignored_any
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_is_set_and_survives_toml() {
        let s = Settings::every_field_set().unwrap();
        let table = s.to_table().unwrap();
        // Every key present (`ecco` a table with all its keys).
        assert_eq!(table.keys().count(), Settings::keys().len(), "{table}");
        assert!(Settings::keys().contains(&"energy_correction_flow"));
        assert_eq!(table["ecco"].as_table().map(|t| t.len()), Some(9), "{table}");
        assert_eq!(Settings::from_table(table).unwrap(), s);
    }

    #[test]
    fn set_names_the_key_and_refuses_unknown_keys() {
        let mut s = Settings::default();
        s.set_arg("step=1e-3").unwrap();
        s.set_arg("algorithm=gauss-seidel").unwrap();
        s.set_arg("ecco.rtol = 1e-4").unwrap();
        s.set_arg("order=[\"b\", \"a\"]").unwrap();
        assert_eq!(s.step, Some(1e-3));
        assert_eq!(s.algorithm, Some(AlgorithmKind::GaussSeidel));
        assert_eq!(s.ecco.rtol, Some(1e-4));
        assert_eq!(s.order, Some(vec!["b".to_owned(), "a".to_owned()]));
        let e = s.set_arg("algoritm=jacobi").unwrap_err();
        assert!(e.contains("algoritm") && e.contains("unknown field"), "{e}");
        let e = s.set_arg("ecco.rtl=1").unwrap_err();
        assert!(e.contains("ecco.rtl") && e.contains("unknown field `rtl`"), "{e}");
        let e = s.set_arg("parallel=sometimes").unwrap_err();
        assert!(e.starts_with("parallel:") && e.contains("sometimes"), "{e}");
        let e = s.set_arg("step=fast").unwrap_err();
        assert!(e.starts_with("step:"), "{e}");
        assert_eq!(s.step, Some(1e-3), "a refused value changes nothing");
    }

    #[test]
    fn overrides_win_key_by_key() {
        let mut file = Settings::default();
        file.set_arg("step=1e-3").unwrap();
        file.set_arg("ecco.rtol=1e-3").unwrap();
        file.set_arg("ecco.atol=2.0").unwrap();
        let mut over = Settings::default();
        over.set_arg("ecco.rtol=1e-5").unwrap();
        over.set_arg("stop=2").unwrap();
        let s = file.overridden_by(&over).unwrap();
        assert_eq!((s.step, s.stop, s.ecco.rtol, s.ecco.atol), (Some(1e-3), Some(2.0), Some(1e-5), Some(2.0)));
    }
}
