//! The one naming rule for variables, on every front end (`--output-variables`, `--start-value`,
//! `cosim plot`, Python `simulate*`, `Execution.value/set`): a variable is named
//! instance-qualified (`VanDerPol.x0`, the results.csv column) or bare (`x0`) where that is
//! unambiguous, i.e. one instance only has a variable of that name (always so in a single-FMU
//! run). The qualified form is tried first, so an FMI name with dots (`a.b`) is never misread.
//! An unknown name gets the nearest known names, bare and qualified ([`crate::suggest`]).

/// The position in `vars` — (instance, variable) pairs — of the variable `name` names: the pair
/// whose `instance.variable` is `name`, else the one pair whose variable is `name`. Errors: no
/// such variable (with "did you mean"), or a bare name several instances have (naming them).
pub fn resolve<'a, I>(name: &str, vars: I) -> Result<usize, String>
where
    I: Iterator<Item = (&'a str, &'a str)> + Clone,
{
    let qualified = |(i, v): (&str, &str)| {
        name.len() == i.len() + 1 + v.len()
            && name.starts_with(i)
            && name[i.len()..].starts_with('.')
            && name.ends_with(v)
    };
    if let Some(k) = vars.clone().position(qualified) {
        return Ok(k);
    }
    let mut bare = vars.clone().enumerate().filter(|(_, (_, v))| *v == name);
    match (bare.next(), bare.next()) {
        (Some((k, _)), None) => Ok(k),
        (Some(first), Some(second)) => {
            let owners: Vec<String> =
                [first, second].into_iter().chain(bare).map(|(_, (i, v))| format!("{i}.{v}")).collect();
            Err(format!(
                "\"{name}\" is a variable of several instances ({}): name it as instance.variable",
                owners.join(", ")
            ))
        }
        (None, _) => {
            let known: Vec<String> = vars.flat_map(|(i, v)| [format!("{i}.{v}"), v.to_owned()]).collect();
            Err(format!(
                "no variable \"{name}\" (instance.variable, or a variable name one instance has){}",
                crate::suggest::did_you_mean(name, known.iter().map(String::as_str))
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::resolve;

    const VARS: [(&str, &str); 5] = [("vdp", "x0"), ("vdp", "mu"), ("ft", "x0"), ("ft", "y"), ("ft", "a.b")];

    #[test]
    fn qualified_first_then_a_unique_bare_name() {
        assert_eq!(resolve("vdp.x0", VARS.iter().copied()), Ok(0));
        assert_eq!(resolve("ft.x0", VARS.iter().copied()), Ok(2));
        assert_eq!(resolve("mu", VARS.iter().copied()), Ok(1));
        assert_eq!(resolve("y", VARS.iter().copied()), Ok(3));
        // a dotted FMI name: bare and qualified
        assert_eq!(resolve("a.b", VARS.iter().copied()), Ok(4));
        assert_eq!(resolve("ft.a.b", VARS.iter().copied()), Ok(4));
    }

    #[test]
    fn ambiguous_and_unknown_names_say_what_to_write() {
        let e = resolve("x0", VARS.iter().copied()).unwrap_err();
        assert!(e.contains("several instances (vdp.x0, ft.x0)") && e.contains("instance.variable"), "{e}");
        let e = resolve("muu", VARS.iter().copied()).unwrap_err();
        assert!(e.contains("no variable \"muu\"") && e.contains("did you mean \"mu\""), "{e}");
        let e = resolve("vdp.muu", VARS.iter().copied()).unwrap_err();
        assert!(e.contains("did you mean \"vdp.mu\""), "{e}");
    }
}
