#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! docs/glossary.md (issue 36 item 6): every seed, Publication and SPEC section the README,
//! docs/*.md and the Rust sources cite has an entry; every configuration key it names exists in
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

#[test]
fn every_cited_seed_publication_and_spec_section_is_in_the_glossary() {
    let glossary = read(&root().join("docs/glossary.md"));
    let mut checked = 0;
    for (name, text) in docs() {
        for n in cited(&text, "seed ", |c| c.is_ascii_digit()).into_iter().filter(|n| n.len() == 3) {
            assert!(glossary.contains(&format!("**seed {n}**")), "{name} cites seed {n}: not in docs/glossary.md");
            checked += 1;
        }
        for n in cited(&text, "Publication ", |c| matches!(c, 'I' | 'V')) {
            assert!(
                glossary.contains(&format!("**Publication {n}**")),
                "{name} cites Publication {n}: not in docs/glossary.md"
            );
            checked += 1;
        }
        for n in cited(&text, "SPEC §", |c| c.is_ascii_digit() || c == '.') {
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
    assert!(readme.contains("cargo install --path master"), "install command missing");
    assert!(readme.contains("(docs/glossary.md)"), "glossary link missing");
    // What `cargo install --path master` installs: the package's binary `cosim`.
    let manifest = read(&root().join("master/Cargo.toml"));
    assert!(manifest.contains("[[bin]]\nname = \"cosim\""), "{manifest}");
}
