//! A whole simulation of a model with one integrator, recording what the checks and plots need.

use crate::circuit::Drive;
use crate::double_step::DoubleStep;
use crate::models::Model;
use crate::penalty::{Penalty, Settings, Tangent};
use crate::state::{State, StepStats};

/// Which formulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formulation {
    /// Penalty (augmented Lagrangian), Pub I / 002 §2.3.
    Penalty(Tangent),
    /// Double-step (coordinate partitioning), 002 §2.2.
    DoubleStep,
}

/// One integrator for one model.
#[derive(Debug, Clone)]
pub enum Integrator<'m> {
    /// Penalty.
    Penalty(Penalty<'m>),
    /// Double-step.
    DoubleStep(DoubleStep<'m>),
}

impl<'m> Integrator<'m> {
    /// The formulation with the papers' settings at Δt.
    pub fn new(model: &'m Model, formulation: Formulation, dt: f64) -> Self {
        match formulation {
            Formulation::Penalty(t) => Self::Penalty(Penalty::new(model, Settings::paper(model, dt, t))),
            Formulation::DoubleStep => {
                Self::DoubleStep(DoubleStep::new(model, Settings::paper(model, dt, Tangent::Numerical)))
            }
        }
    }

    /// One monolithic step.
    pub fn step(&self, st: &mut State) -> Result<StepStats, String> {
        self.step_driven(st, Drive::Circuit)
    }

    /// One step driven by `drive`.
    pub fn step_driven(&self, st: &mut State, drive: Drive) -> Result<StepStats, String> {
        match self {
            Self::Penalty(p) => p.step_driven(st, drive),
            Self::DoubleStep(d) => d.step_driven(st, drive),
        }
    }

    /// Builds an integrator from explicit settings.
    pub fn with_settings(model: &'m Model, formulation: Formulation, set: Settings) -> Self {
        match formulation {
            Formulation::Penalty(t) => Self::Penalty(Penalty::new(model, Settings { tangent: t, ..set })),
            Formulation::DoubleStep => Self::DoubleStep(DoubleStep::new(model, set)),
        }
    }
}

/// One recorded time point.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// t (s).
    pub t: f64,
    /// z (rad).
    pub z: Vec<f64>,
    /// p (Pa).
    pub p: [f64; 3],
    /// s, ṡ, s̈.
    pub s: [f64; 3],
    /// E_kin, ΔE_pot, W_act (J).
    pub energy: [f64; 3],
    /// Step diagnostics.
    pub stats: StepStats,
}

impl Sample {
    /// E_kin + ΔE_pot − W_act (J).
    pub fn energy_error(&self) -> f64 {
        self.energy[0] + self.energy[1] - self.energy[2]
    }
}

/// A finished run.
#[derive(Debug, Clone)]
pub struct Run {
    /// Every step (and t = 0).
    pub samples: Vec<Sample>,
}

fn sample(model: &Model, st: &State, stats: StepStats) -> Sample {
    Sample {
        t: st.t,
        z: st.z.clone(),
        p: st.p,
        s: st.s,
        energy: [st.kinetic(model), st.potential(model), st.w_act],
        stats,
    }
}

impl Run {
    /// Simulates `model` over `duration` with step `dt`.
    pub fn simulate(model: &Model, formulation: Formulation, dt: f64, duration: f64) -> Result<Self, String> {
        let integ = Integrator::new(model, formulation, dt);
        let mut st = State::initial(model);
        let steps = (duration / dt).round() as usize;
        let mut samples = Vec::with_capacity(steps + 1);
        samples.push(sample(model, &st, StepStats::default()));
        for _ in 0..steps {
            let stats = integ.step(&mut st).map_err(|e| format!("model {}: {e}", model.name))?;
            samples.push(sample(model, &st, stats));
        }
        Ok(Self { samples })
    }

    /// Average and maximum Newton iterations per step.
    pub fn iterations(&self) -> (f64, usize) {
        let it: Vec<usize> = self.samples[1..].iter().map(|s| s.stats.iterations).collect();
        (it.iter().sum::<usize>() as f64 / it.len().max(1) as f64, it.iter().copied().max().unwrap_or(0))
    }

    /// Peak |E_kin + ΔE_pot − W_act| (J).
    pub fn energy_peak(&self) -> f64 {
        self.samples.iter().fold(0.0, |a, s| a.max(s.energy_error().abs()))
    }

    /// Largest |W_act| (J).
    pub fn max_work(&self) -> f64 {
        self.samples.iter().fold(0.0, |a, s| a.max(s.energy[2].abs()))
    }

    /// Largest ‖Φ‖∞ over the run.
    pub fn max_phi(&self) -> f64 {
        self.samples.iter().fold(0.0, |a, s| a.max(s.stats.phi))
    }

    /// Largest |z_a − z_b| (rad) and largest |p_a − p_b|/|p_b| over common time points.
    pub fn difference(&self, other: &Run) -> (f64, f64) {
        let (mut dz, mut dp) = (0.0f64, 0.0f64);
        for (a, b) in self.samples.iter().zip(&other.samples) {
            for (x, y) in a.z.iter().zip(&b.z) {
                dz = dz.max((x - y).abs());
            }
            for (x, y) in a.p.iter().zip(&b.p) {
                dp = dp.max((x - y).abs() / y.abs().max(1e5));
            }
        }
        (dz, dp)
    }

    /// Lowest pressure of any volume (Pa).
    pub fn min_pressure(&self) -> f64 {
        self.samples.iter().fold(f64::INFINITY, |a, s| a.min(s.p[0]).min(s.p[1]).min(s.p[2]))
    }
}
