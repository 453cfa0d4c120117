//! `[simulation] step_control` with `[simulation.ecco]`: ECCO's grid, bounds and breakpoints.

use super::*;

impl Resolver<'_> {
    /// `[simulation] step_control` with `[simulation.ecco]`: the grid quantum Δ (the least
    /// common multiple of the instances' fixed steps), H_min, H_max, H_0 on it, the time-table
    /// breakpoints, and every FMU able to take variable steps.
    pub(super) fn step_control(
        &self,
        sim: &super::Settings,
        (start, stop, step): (f64, f64, f64),
        instances: &[InstanceSpec],
        signals: &[Signal],
        bonds: usize,
    ) -> Result<StepControl> {
        if sim.step_control.unwrap_or(StepControlKind::Fixed) == StepControlKind::Fixed {
            return Ok(StepControl::Fixed);
        }
        for (i, inst) in instances.iter().enumerate() {
            let variable =
                self.mds[i].co_simulation.as_ref().is_some_and(|cs| cs.can_handle_variable_communication_step_size);
            if !variable {
                return Err(self.err(
                    format!("instances.{}", inst.name),
                    format!(
                        "step_control = \"ecco\" changes the communication step, but {} ({}) does not declare \
                         canHandleVariableCommunicationStepSize; use step_control = \"fixed\"",
                        inst.name,
                        inst.fmu.display()
                    ),
                ));
            }
        }
        if bonds == 0 {
            return Err(self.err(
                "simulation.step_control",
                "step_control = \"ecco\" sizes the step from the residual energy of the [[bonds]], and this system has none",
            ));
        }
        let d = &sim.ecco;
        let p = EccoParams {
            rtol: d.rtol.unwrap_or(EccoParams::default().rtol),
            atol: d.atol.unwrap_or(EccoParams::default().atol),
            safety: d.safety.unwrap_or(EccoParams::default().safety),
            p_gain: d.p_gain.unwrap_or(EccoParams::default().p_gain),
            i_gain: d.i_gain.unwrap_or(EccoParams::default().i_gain),
            h_min: d.h_min.unwrap_or(0.0),
            h_max: d.h_max.unwrap_or(10.0 * step),
            min_rate: d.min_rate.unwrap_or(EccoParams::default().min_rate),
            max_rate: d.max_rate.unwrap_or(EccoParams::default().max_rate),
        };
        let positive = [("rtol", p.rtol), ("safety", p.safety), ("max_rate", p.max_rate), ("h_max", p.h_max)];
        for (key, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Err(self.err(format!("simulation.ecco.{key}"), format!("{v} must be positive and finite")));
            }
        }
        let non_negative = [("atol", p.atol), ("p_gain", p.p_gain), ("i_gain", p.i_gain), ("h_min", p.h_min)];
        for (key, v) in non_negative {
            if !(v.is_finite() && v >= 0.0) {
                return Err(self.err(format!("simulation.ecco.{key}"), format!("{v} must be finite and non-negative")));
            }
        }
        if !(p.min_rate > 0.0 && p.min_rate <= 1.0 && p.max_rate >= 1.0) {
            return Err(self.err(
                "simulation.ecco.min_rate",
                format!(
                    "the change factors must satisfy 0 < min_rate = {} ≤ 1 ≤ max_rate = {}",
                    p.min_rate, p.max_rate
                ),
            ));
        }
        // Derived numbers (the grid, its multiples, the default h_max) are printed rounded to 12
        // significant digits: Δ = 0.0001 s, not 0.00009999999999999999 s.
        let short = crate::suggest::short;
        let h_max = match d.h_max {
            Some(v) => format!("{v} s"),
            None => format!("{} s (the default, 10 × step)", short(p.h_max)),
        };
        if p.h_min > p.h_max {
            return Err(self.err("simulation.ecco.h_min", format!("h_min = {} s exceeds h_max = {h_max}", p.h_min)));
        }
        let steps: Vec<f64> = instances.iter().filter_map(|i| i.fixed_step).collect();
        let quantum = crate::step_control::quantum(&steps).ok_or_else(|| {
            self.err(
                "instances",
                format!(
                    "the instances' fixed steps {:?} s have no common multiple on a 1 ps grid; step_control = \"ecco\" \
                     keeps H a whole multiple of each",
                    steps
                ),
            )
        })?;
        // Without fixed internal steps the grid is H_min (given), else H_0 / 100.
        let q = quantum.unwrap_or(if p.h_min > 0.0 { p.h_min } else { step / 100.0 });
        let units = |x: f64| x / q;
        let h0 = units(step).round();
        if h0 < 1.0 || (h0 * q - step).abs() > 1e-9 * step {
            return Err(self.err(
                "simulation.step",
                match quantum {
                    Some(_) => format!(
                        "the initial step H_0 = {step} s is not a whole multiple of the instances' common step Δ = {} s",
                        short(q)
                    ),
                    None => format!(
                        "the initial step H_0 = {step} s is not a whole multiple of the grid Δ = h_min = {} s",
                        short(q)
                    ),
                },
            ));
        }
        let span = units(stop - start).round();
        if (span * q - (stop - start)).abs() > 1e-9 * (stop - start) {
            return Err(self.err(
                "simulation.stop",
                format!(
                    "stop - start = {} s is not a whole multiple of the grid Δ = {} s",
                    short(stop - start),
                    short(q)
                ),
            ));
        }
        let min_units = (units(p.h_min) - 1e-9).ceil().max(1.0);
        let max_units = (units(p.h_max) + 1e-9).floor();
        if max_units < min_units {
            return Err(self.err(
                "simulation.ecco.h_max",
                format!("h_max = {h_max} is below the smallest step the grid allows ({} s)", short(min_units * q)),
            ));
        }
        let mut times: Vec<f64> = signals.iter().flat_map(|s| s.times.iter().copied()).collect();
        // A file's times: read again (ECCO only; 8 bytes a row).
        let mut read: Vec<*const crate::system::input_stream::FileSource> = Vec::new();
        for f in signals.iter().filter_map(|s| s.file.as_ref()) {
            if read.contains(&std::sync::Arc::as_ptr(&f.source)) {
                continue;
            }
            read.push(std::sync::Arc::as_ptr(&f.source));
            let mut rows = crate::system::input_file::Rows::open(&f.source.path, f.source.time.as_deref(), |_| false)
                .map_err(|e| self.err("inputs", format!("{}: {e}", f.source.path.display())))?;
            while rows.next_row().map_err(|e| self.err("inputs", format!("{}: {e}", f.source.path.display())))? {
                times.push(rows.time());
            }
        }
        let mut breakpoints: Vec<u64> = times
            .iter()
            .map(|t| units(t - start).round())
            .filter(|k| *k > 0.0 && *k < span)
            .map(|k| k as u64)
            .collect();
        breakpoints.sort_unstable();
        breakpoints.dedup();
        Ok(StepControl::Ecco {
            params: p,
            quantum: q,
            units: (min_units as u64, max_units as u64, (h0 as u64).clamp(min_units as u64, max_units as u64)),
            breakpoints,
        })
    }
}
