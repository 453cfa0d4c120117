//! "Did you mean …?" for unknown names: the nearest known name by edit distance.

/// `; did you mean "best"?` when one of `known` is close to `name` (at most a third of its
/// length in edits, at least one, but never the whole name; a case-only difference counts as
/// the closest), else "". Equally close names are all given (`"a" or "b"`), at most three, in
/// the order of `known`. Appended to every message that refuses an unknown variable or
/// instance name.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    let len = name.chars().count();
    let limit = (len / 3).max(1).min(len.saturating_sub(1));
    let mut best = limit + 1;
    let mut nearest: Vec<&str> = Vec::new();
    for k in known {
        if k == name {
            continue;
        }
        let d = if k.eq_ignore_ascii_case(name) { 0 } else { distance(name, k) };
        if d < best {
            best = d;
            nearest.clear();
        }
        if d == best && d <= limit && !nearest.contains(&k) {
            nearest.push(k);
        }
    }
    if nearest.is_empty() {
        return String::new();
    }
    let quoted: Vec<String> = nearest.iter().take(3).map(|k| format!("\"{k}\"")).collect();
    format!("; did you mean {}?", quoted.join(" or "))
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
/// neighbouring characters each cost one.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // d[i][j]: distance between a[..i] and b[..j], rows kept as three vectors.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut row = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(row[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            row[j] = d;
        }
        before = std::mem::replace(&mut prev, row);
    }
    prev[b.len()]
}

/// `x` rounded to 12 significant digits, in the shortest form that reads back as that value
/// (`3 × 0.1` is `0.3`, not `0.30000000000000004`).
pub fn short(x: f64) -> String {
    let r: f64 = format!("{x:.11e}").parse().unwrap_or(x);
    number(r)
}

/// A Real as a person reads it and as it parses back to the same value: the shortest
/// round-trip digits, in exponent form below 1e-4 and from 1e16 on (as Python's `repr`),
/// e.g. `-1.19e-18` rather than `-0.00000000000000000119`.
pub fn number(x: f64) -> String {
    let a = x.abs();
    if a != 0.0 && a.is_finite() && !(1e-4..1e16).contains(&a) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// What would fit where `stop - start` is not a whole number of steps `step`:
/// `"a step of 0.0025 s or 0.004 s, or a stop time of 19.998 s or 20.001 s, would fit"`.
pub fn fitting_span(start: f64, stop: f64, step: f64) -> String {
    let span = stop - start;
    let n = (span / step).floor();
    let mut stops = Vec::new();
    if n >= 1.0 {
        stops.push(format!("{} s", short(start + n * step)));
    }
    stops.push(format!("{} s", short(start + (n + 1.0) * step)));
    match fitting_steps(span, step) {
        s if s.is_empty() => format!("a stop time of {} would fit", stops.join(" or ")),
        s => format!("a step of {s}, or a stop time of {}, would fit", stops.join(" or ")),
    }
}

/// What would fit where an instance step `h` does not divide the communication step `step`:
/// the multiples of `h` next to it, `"H = 0.002 s or 0.003 s (multiples of h = 0.001 s) would fit"`.
pub fn fitting_multiples(step: f64, h: f64) -> String {
    let k = (step / h).floor();
    let mut hs = Vec::new();
    if k >= 1.0 {
        hs.push(format!("{} s", short(k * h)));
    }
    hs.push(format!("{} s", short((k + 1.0) * h)));
    format!("H = {} (multiples of h = {} s) would fit", hs.join(" or "), short(h))
}

/// Whether `whole` is a whole multiple of `part` (both positive), to 1e-9 relative.
fn divides(part: f64, whole: f64) -> bool {
    let k = (whole / part).round();
    k >= 1.0 && (k * part - whole).abs() <= 1e-9 * whole
}

/// The communication steps near `step` that fit `span` a whole number of times: the nearest
/// round value (1, 2, 2.5, 4, 5 or 8 times a power of ten) below `step` and the nearest above,
/// as `"0.0025 s or 0.004 s"`; "" when the span has no such divisor within a factor 100.
pub fn fitting_steps(span: f64, step: f64) -> String {
    if !(span.is_finite() && span > 0.0 && step.is_finite() && step > 0.0) {
        return String::new();
    }
    let mut below: Option<f64> = None;
    let mut above: Option<f64> = None;
    let e0 = step.log10().floor() as i32;
    for e in (e0 - 2)..=(e0 + 2) {
        for m in [1.0, 2.0, 2.5, 4.0, 5.0, 8.0] {
            let h: f64 = format!("{m}e{e}").parse().unwrap_or(f64::NAN);
            if !(h > 0.0 && h <= span && divides(h, span)) {
                continue;
            }
            if h < step && below.is_none_or(|b| h > b) {
                below = Some(h);
            }
            if h > step && above.is_none_or(|a| h < a) {
                above = Some(h);
            }
        }
    }
    let fits: Vec<String> = [below, above].into_iter().flatten().map(|h| format!("{} s", short(h))).collect();
    fits.join(" or ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_are_the_textbook_ones() {
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("abc", "abc"), 0);
        assert_eq!(distance("x00", "x0"), 1);
        assert_eq!(distance("ca", "ac"), 1);
        assert_eq!(distance("flaw", "lawn"), 2);
    }

    #[test]
    fn the_nearest_close_name_is_suggested_and_far_ones_are_not() {
        let known = ["x0", "v0", "m", "xi_dot", "Fext"];
        assert_eq!(did_you_mean("x00", known), "; did you mean \"x0\"?");
        assert_eq!(did_you_mean("xi_dto", known), "; did you mean \"xi_dot\"?");
        assert_eq!(did_you_mean("fext", known), "; did you mean \"Fext\"?");
        assert_eq!(did_you_mean("pressure", known), "");
        assert_eq!(did_you_mean("m", known), "", "a known name");
        assert_eq!(did_you_mean("k", known), "", "one letter is never one edit from another name");
        assert_eq!(did_you_mean("v1", known), "; did you mean \"v0\"?");
        assert_eq!(did_you_mean("xx", ["x", "v", "x0"]), "; did you mean \"x\" or \"x0\"?");
    }

    #[test]
    fn fitting_steps_divide_the_span() {
        // 20 s / 3 ms = 6666.7 steps; 2.5 ms (8000 steps) and 4 ms (5000 steps) fit.
        assert_eq!(fitting_steps(20.0, 3e-3), "0.0025 s or 0.004 s");
        assert_eq!(fitting_steps(0.1, 0.03), "0.025 s or 0.05 s");
        assert_eq!(fitting_steps(1.0, 0.3), "0.25 s or 0.5 s");
        // Only smaller steps when the span is shorter than any larger round step.
        assert_eq!(fitting_steps(0.3, 0.28), "0.1 s");
        assert_eq!(short(3.0 * 0.1), "0.3");
        assert_eq!(
            fitting_span(0.0, 20.0, 3e-3),
            "a step of 0.0025 s or 0.004 s, or a stop time of 19.998 s or 20.001 s, would fit"
        );
        assert_eq!(fitting_span(1.0, 1.25, 0.3), "a step of 0.25 s, or a stop time of 1.3 s, would fit");
        assert_eq!(fitting_span(0.0, 7.1e-17, 0.1), "a stop time of 0.1 s would fit");
        assert_eq!(fitting_multiples(3e-3, 2e-3), "H = 0.002 s or 0.004 s (multiples of h = 0.002 s) would fit");
        assert_eq!(fitting_multiples(1e-3, 3e-3), "H = 0.003 s (multiples of h = 0.003 s) would fit");
        assert_eq!(short(3.0 * 1e-5), "3e-5");
    }
}
