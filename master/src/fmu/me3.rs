//! FMI 3.0 Model Exchange: the [`ModelExchange`] calls of an [`Fmi3Instance`] instantiated with
//! `fmi3InstantiateModelExchange` (FMI 3.0.1 §3.2; the C calls are in `ffi3/me.rs`). The
//! integration, the events and the inputs are version-neutral ([`super::me::MeInstance`]); the
//! getters and setters of variables are the Co-Simulation instance's ([`Fmi3Instance`]).
//!
//! The number of continuous states and of event indicators is what the description declares
//! (`<ContinuousStateDerivative>` and `<EventIndicator>` elements of `<ModelStructure>`), checked
//! against `fmi3GetNumberOfContinuousStates` and `fmi3GetNumberOfEventIndicators` of the
//! instance: a binary that disagrees with its description is an error naming both numbers.

use super::instance3::Fmi3Instance;
use super::me::{EventInfo, ModelExchange, Vector};
use crate::error::Result;

impl ModelExchange for Fmi3Instance {
    fn sizes(&mut self) -> Result<(usize, usize)> {
        let md = self.core.fmu.0.model_description();
        let declared_x = md.model_structure.derivatives.len();
        let declared_z = md.number_of_event_indicators.unwrap_or(0) as usize;
        for (states, declared) in [(true, declared_x), (false, declared_z)] {
            let (function, what, elements) = if states {
                ("fmi3GetNumberOfContinuousStates", "continuous states", "<ContinuousStateDerivative>")
            } else {
                ("fmi3GetNumberOfEventIndicators", "event indicators", "<EventIndicator>")
            };
            let mut n = 0;
            let s = self.call(|i| {
                let (s, k) = i.number_of(states);
                n = k;
                s
            });
            self.check(|| function, s)?;
            if n != declared {
                let why = format!(
                    "the FMU has {n} {what}, its modelDescription.xml declares {declared} ({elements} elements of \
                     <ModelStructure>): the binary and its description disagree"
                );
                return Err(self.refuse(function, why));
            }
        }
        Ok((declared_x, declared_z))
    }
    fn vector(&mut self, which: Vector, out: &mut [f64]) -> Result<()> {
        let s = self.call(|i| i.get_vector(which, out));
        let function = || match which {
            Vector::States => "fmi3GetContinuousStates",
            Vector::Derivatives => "fmi3GetContinuousStateDerivatives",
            Vector::EventIndicators => "fmi3GetEventIndicators",
            Vector::Nominals => "fmi3GetNominalsOfContinuousStates",
        };
        self.check(function, s)
    }
    fn set_time(&mut self, t: f64) -> Result<()> {
        self.core.time = t;
        let s = self.call(|i| i.set_time(t));
        self.check(|| "fmi3SetTime", s)
    }
    fn set_states(&mut self, x: &[f64]) -> Result<()> {
        let s = self.call(|i| i.set_continuous_states(x));
        self.check(|| "fmi3SetContinuousStates", s)
    }
    fn enter_event_mode(&mut self) -> Result<()> {
        let s = self.call(|i| i.me_enter_event_mode());
        self.check(|| "fmi3EnterEventMode", s)
    }
    fn update_discrete_states(&mut self) -> Result<EventInfo> {
        let mut info = EventInfo::default();
        let s = self.call(|i| i.me_update_discrete_states(&mut info));
        self.check(|| "fmi3UpdateDiscreteStates", s)?;
        Ok(info)
    }
    fn enter_continuous_time_mode(&mut self) -> Result<()> {
        let s = self.call(|i| i.enter_continuous_time_mode());
        self.check(|| "fmi3EnterContinuousTimeMode", s)
    }
    fn completed_integrator_step(&mut self) -> Result<(bool, bool)> {
        let mut out = (false, false);
        let s = self.call(|i| i.completed_integrator_step(&mut out));
        self.check(|| "fmi3CompletedIntegratorStep", s)?;
        Ok(out)
    }
}
