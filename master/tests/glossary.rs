#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! docs/glossary.md (issue 36 item 6, issue 28 item 4): every seed, Publication (also "Pub III"),
//! SPEC section (also "SPEC 3.6") and author the README, docs/*.md and the Rust sources cite has
//! an entry; every configuration key it names exists in
//! the code; the README says how to put `cosim` on the PATH and links the glossary.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// README.md, docs/*.md except the glossary, and the Rust sources of every crate (their doc
/// comments cite the papers and SPEC sections too), as (name, text).
fn docs() -> Vec<(String, String)> {
    let mut out = vec![("README.md".to_owned(), read(&root().join("README.md")))];
    for e in std::fs::read_dir(root().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") && !p.ends_with("glossary.md") {
            out.push((p.file_name().unwrap().to_string_lossy().into_owned(), read(&p)));
        }
    }
    let mut dirs: Vec<PathBuf> = ["master", "validation", "xtask", "python", "fmu-harness", "model-description"]
        .iter()
        .map(|c| root().join(c))
        .collect();
    for e in std::fs::read_dir(root()).unwrap().chain(std::fs::read_dir(root().join("fmus")).unwrap()) {
        let p = e.unwrap().path();
        if p.join("Cargo.toml").exists() && !dirs.contains(&p) && p != root() {
            dirs.push(p);
        }
    }
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && !p.ends_with("target") && !p.ends_with(".venv") {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push((p.strip_prefix(root()).unwrap().display().to_string(), read(&p)));
            }
        }
    }
    out
}

/// Every "PREFIX X" in `text` where X is the longest run of characters of `allowed` after it.
fn cited(text: &str, prefix: &str, allowed: impl Fn(char) -> bool) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = lower[from..].find(&prefix.to_lowercase()) {
        let start = from + i + prefix.len();
        let tail: String = text[start..].chars().take_while(|&c| allowed(c)).collect();
        let tail = tail.trim_end_matches('.').to_owned();
        if !tail.is_empty() {
            out.push(tail);
        }
        from = start;
    }
    out
}

/// "Publication N" written short: "Pub N", "Pub. N".
fn cited_publications(text: &str) -> Vec<String> {
    let roman = |c: char| matches!(c, 'I' | 'V');
    let mut out = cited(text, "Publication ", roman);
    for prefix in ["Pub ", "Pub. "] {
        // Whole words only ("Pub I" and not "Pub Intro"): the numeral ends the word.
        for (i, _) in text.match_indices(prefix) {
            let tail: String = text[i + prefix.len()..].chars().take_while(|&c| roman(c)).collect();
            let next = text[i + prefix.len() + tail.len()..].chars().next();
            if !tail.is_empty() && !next.is_some_and(char::is_alphanumeric) {
                out.push(tail);
            }
        }
    }
    out
}

/// "SPEC §3.6" and "SPEC 3.6" (FMU variable descriptions, which stay as they are, write it
/// without §): the section numbers.
fn cited_spec_sections(text: &str) -> Vec<String> {
    let number = |c: char| c.is_ascii_digit() || c == '.';
    let mut out = cited(text, "SPEC §", number);
    out.extend(cited(text, "SPEC ", number));
    out
}

/// "seed 004", "seed-004", "seed004" (identifiers such as `seed004_section`), "seeds 001 …":
/// the three-digit numbers.
fn cited_seeds(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for prefix in ["seed ", "seed-", "seed", "seeds "] {
        out.extend(cited(text, prefix, |c| c.is_ascii_digit()).into_iter().filter(|n| n.len() == 3));
    }
    out
}

/// The authors a text cites: the surname before "et al.", and the names of a list that ends in a
/// year ("Naya, Cuadrado, Dopico, Lugrís 2011", "Merritt 1967", "Benedikt, Watzenig, Hofer,
/// *Title*, … 2013" gives only the names just before the year).
fn cited_authors(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let name = |w: &str| {
        let w = w.trim_start_matches(['(', '[', '*']).trim_end_matches([',', '*']);
        let mut cs = w.chars();
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
        (cs.next().is_some_and(char::is_uppercase)
            && w.chars().count() > 2
            && cs.all(|c| c.is_alphabetic() && c.is_lowercase())
            && !months.contains(&w))
        .then(|| w.to_owned())
    };
    let year = |w: &str| {
        let y = w.trim_end_matches([')', ',', ';', '.', ':', ']']);
        y.len() == 4 && y.parse::<u32>().is_ok_and(|y| (1950..2030).contains(&y))
    };
    let mut out = Vec::new();
    for i in 1..words.len() {
        if words[i] == "et" && words.get(i + 1).is_some_and(|w| w.starts_with("al")) {
            out.extend(name(words[i - 1]));
        }
        if year(words[i]) {
            // Back from the year over the names: "A, B and C 2011".
            let mut j = i;
            while let Some(n) = name(words[j - 1]) {
                out.push(n);
                j -= 1;
                match j.checked_sub(1).map(|k| words[k]) {
                    Some("and" | "&") if j > 1 => j -= 1,
                    Some(prev) if prev.ends_with(',') => {}
                    _ => break,
                }
            }
        }
    }
    out
}

#[test]
fn every_cited_author_is_in_the_glossary() {
    let glossary = read(&root().join("docs/glossary.md"));
    let (mut checked, mut missing) = (0, std::collections::BTreeSet::new());
    for (name, text) in docs() {
        for a in cited_authors(&text) {
            if !glossary.contains(&a) {
                missing.insert(format!("{name} cites {a}"));
            }
            checked += 1;
        }
    }
    assert!(missing.is_empty(), "no reference of docs/glossary.md names them:\n{}", Vec::from_iter(missing).join("\n"));
    assert!(checked > 30, "only {checked} author citations found: the scan is broken");
}

#[test]
fn the_citation_scans_find_every_form() {
    let text = "Pub III eq. 30, Pub. II, (Pub I), Pub IV. Publication III; Pub Intro; SPEC 3.6, SPEC §3.7. \
                seed-002 four-bar, seed004(), seeds 001 and 004; (Naya, Cuadrado, Dopico, Lugrís 2011), Merritt 1967, \
                Sadjina et al. 2017, 26 Nov 2026";
    assert_eq!(cited_publications(text), ["III", "III", "I", "IV", "II"]);
    assert_eq!(cited_spec_sections(text), ["3.7", "3.6"]);
    assert_eq!(cited_seeds(text), ["002", "004", "001"]);
    assert_eq!(cited_authors(text), ["Lugrís", "Dopico", "Cuadrado", "Naya", "Merritt", "Sadjina"]);
}

#[test]
fn every_cited_seed_publication_and_spec_section_is_in_the_glossary() {
    let glossary = read(&root().join("docs/glossary.md"));
    let mut checked = 0;
    for (name, text) in docs() {
        for n in cited_seeds(&text) {
            assert!(glossary.contains(&format!("**seed {n}**")), "{name} cites seed {n}: not in docs/glossary.md");
            checked += 1;
        }
        for n in cited_publications(&text) {
            assert!(
                glossary.contains(&format!("**Publication {n}**")),
                "{name} cites Publication {n}: not in docs/glossary.md"
            );
            checked += 1;
        }
        for n in cited_spec_sections(&text) {
            assert!(glossary.contains(&format!("| SPEC §{n} |")), "{name} cites SPEC §{n}: not in docs/glossary.md");
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} citations found: the scan is broken");
}

#[test]
fn the_glossary_names_only_keys_that_exist() {
    let glossary = read(&root().join("docs/glossary.md"));
    let mut sources = String::new();
    for dir in ["master/src", "master/src/system", "fmu-hydraulics/src"] {
        for e in std::fs::read_dir(root().join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "rs") {
                sources.push_str(&read(&p));
            }
        }
    }
    // Every `snake_case` key in code spans (`max_residual_energy`, `im_mode = true`, …).
    let keys: Vec<&str> = glossary
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|span| span.split([' ', '=']).next())
        .filter(|k| k.contains('_') && k.chars().all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit()))
        .collect();
    assert!(keys.len() >= 5, "{keys:?}");
    for k in keys {
        assert!(
            sources.contains(&format!("\"{k}\"")) || sources.contains(k),
            "docs/glossary.md names `{k}`: not in the code"
        );
    }
}

#[test]
fn the_readme_says_how_to_put_cosim_on_the_path_and_links_the_glossary() {
    let readme = read(&root().join("README.md"));
    assert!(readme.contains("cargo install --path cosim-cli"), "install command missing");
    assert!(readme.contains("(docs/glossary.md)"), "glossary link missing");
    // What `cargo install --path cosim-cli` installs: the package's binary `cosim`.
    let manifest = read(&root().join("cosim-cli/Cargo.toml"));
    assert!(manifest.contains("[[bin]]\nname = \"cosim\""), "{manifest}");
}
