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
}
