//! FMI 3.0 structural parameters (`causality="structuralParameter"`): each one set to another
//! value within its bounds in Configuration Mode, the instance runs the short run with its arrays
//! at the sizes that value gives (every output element read, the array getters asked for the new
//! number of values), and configured back to its start value it gives the default run bit for
//! bit (the round trip).

use super::probe::Probe;
use super::Outcome;

/// At most this many structural parameters are varied (each costs three runs).
const MAX_PARAMETERS: usize = 3;

/// Another value than `v` within [min, max]: v + 1, else v − 1.
fn other(v: i128, min: Option<i128>, max: Option<i128>) -> Option<i128> {
    [v + 1, v - 1].into_iter().find(|x| min.is_none_or(|m| *x >= m) && max.is_none_or(|m| *x <= m))
}

/// The structural parameters against the array sizes and the Configuration Mode round trip.
pub fn structural(p: &mut Probe) -> Outcome {
    if !p.fmi3() {
        return Outcome::skip("FMI 2.0 has no structural parameters");
    }
    let params: Vec<_> = p.fmu.structural().to_vec();
    if params.is_empty() {
        return Outcome::skip("no structural parameters");
    }
    let n = p.plan.short_steps.max(1);
    let go = || -> Result<Outcome, String> {
        let default = p.fresh_run("default", n)?;
        let mut seen = Vec::new();
        for sp in params.iter().take(MAX_PARAMETERS) {
            let Some(v0) = sp.value.or(sp.start) else { continue };
            let Some(v1) = other(v0, sp.min, sp.max) else { continue };
            let name = sp.name.as_str();
            p.note(format_args!(
                "configuring {name} = {v1} (fmi3EnterConfigurationMode, fmi3SetInt*, fmi3ExitConfigurationMode)"
            ));
            let configured = p
                .fmu
                .configured(&[(name, v1)])
                .map_err(|e| format!("{name} = {v1} (within its bounds) is refused: {e}"))?;
            let q = p.with_fmu(configured);
            let rows = q.fresh_run("configured", n).map_err(|e| format!("with {name} = {v1}: {e}"))?;
            if let Some((k, j)) =
                rows.iter().enumerate().find_map(|(k, r)| r.iter().position(|x| !x.is_finite()).map(|j| (k, j)))
            {
                return Ok(Outcome::fail(format!(
                    "with {name} = {v1}: {} = {} at t = {}",
                    q.outputs[j].name,
                    rows[k][j],
                    q.time(k as u64)
                )));
            }
            let sizes = format!("{name} = {v1}: {} outputs ({} with {v0})", q.outputs.len(), p.outputs.len());
            let back = p.with_fmu(p.fmu.configured(&[(name, v0)]).map_err(|e| format!("{name} = {v0}: {e}"))?);
            let again = back.fresh_run("configured back", n).map_err(|e| format!("with {name} = {v0} again: {e}"))?;
            if let Some(d) = p.diff(&default, &again, 0) {
                return Ok(Outcome::fail(format!(
                    "{sizes}; configured back to {name} = {v0} the run differs from the default one {d}: the configuration does not round-trip"
                )));
            }
            seen.push(sizes);
        }
        if seen.is_empty() {
            return Ok(Outcome::skip("no structural parameter with a start value and room for another value"));
        }
        Ok(Outcome::pass(format!(
            "{n} steps each: {}; every output element read after every step and finite; configured back to the start values, bit-identical to the default run",
            seen.join("; ")
        )))
    };
    go().unwrap_or_else(Outcome::fail)
}

#[cfg(test)]
mod tests {
    #[test]
    fn another_value_stays_within_the_bounds() {
        assert_eq!(super::other(3, Some(1), Some(10)), Some(4));
        assert_eq!(super::other(10, Some(1), Some(10)), Some(9));
        assert_eq!(super::other(1, Some(1), Some(1)), None);
    }
}
