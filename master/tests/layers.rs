//! The master's module layering, read from its sources (issue 28 item 2):
//! - no import cycle between the library's top-level modules (`crate::a` in `b` and `crate::b`
//!   in `a`, directly or through others);
//! - the library core never imports a front end (`cosim`'s commands, the signal guard, tune,
//!   precision): the dependency points one way, from the front ends down.
//!
//! An import is any path `crate::m…` (or `super::…` reaching the crate root, or a name the crate
//! root re-exports, e.g. `crate::Execution`) in code: comments, string literals and test modules
//! (`#[cfg(test)] mod …`, inline or in their own files) are left out, since tests may build their fixtures from
//! any layer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// `cosim`'s front ends inside the library crate (the binary's own modules, `main.rs`, `cli/`
/// and `bench/`, are another crate and cannot be imported by the library at all): the signal
/// guard, tune, precision, run, check and the progress bar.
const FRONT_ENDS: &[&str] = &["guard", "tune", "precision", "run", "check", "progress"];

/// Edges left out of the cycle check, each with its reason: they close a cycle through
/// `live/`, which issue 33 owns (its types `LiveSpec` and `LiveInputs` are declared there, and
/// `live` drives an `Execution`). The test below fails once one of them is gone, so that this
/// list only shrinks.
const KNOWN_UPWARD: &[(&str, &str, &str)] =
    &[("system", "live", "the [live] table's type, live::LiveSpec, is declared in live/")];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `code` with comments and the contents of string and character literals blanked (newlines
/// kept), so that neither braces nor paths inside them count.
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < c.len() {
        match c[i] {
            '/' if c.get(i + 1) == Some(&'/') => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if c.get(i + 1) == Some(&'*') => {
                let mut depth = 0;
                while i < c.len() {
                    if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if c[i] == '\n' {
                            out.push('\n');
                        }
                        i += 1;
                    }
                }
            }
            'r' if (c.get(i + 1) == Some(&'"') || c.get(i + 1) == Some(&'#'))
                && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_')) =>
            {
                // A raw string r"…" or r#"…"#.
                let mut j = i + 1;
                let mut hashes = 0;
                while c.get(j) == Some(&'#') {
                    hashes += 1;
                    j += 1;
                }
                if c.get(j) != Some(&'"') {
                    out.push(c[i]);
                    i += 1;
                    continue;
                }
                j += 1;
                loop {
                    if j >= c.len() {
                        break;
                    }
                    if c[j] == '"' && (0..hashes).all(|k| c.get(j + 1 + k) == Some(&'#')) {
                        j += 1 + hashes;
                        break;
                    }
                    if c[j] == '\n' {
                        out.push('\n');
                    }
                    j += 1;
                }
                out.push_str("\"\"");
                i = j;
            }
            '"' => {
                i += 1;
                while i < c.len() && c[i] != '"' {
                    if c[i] == '\\' {
                        i += 1;
                    }
                    if c.get(i) == Some(&'\n') {
                        out.push('\n');
                    }
                    i += 1;
                }
                i += 1;
                out.push_str("\"\"");
            }
            '\'' if c.get(i + 1) == Some(&'\\') => {
                // An escaped character literal: '\n', '\'', '\u{7b}'.
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            }
            '\'' if c.get(i + 2) == Some(&'\'') => {
                i += 3;
                out.push_str("' '");
            }
            ch => {
                out.push(ch);
                i += 1;
            }
        }
    }
    out
}

/// `code` without its `#[cfg(test)]` modules (attribute up to the module's closing brace).
fn without_test_modules(code: &str) -> String {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let next = lines[i + 1..].iter().find(|l| !l.trim().is_empty()).map(|l| l.trim());
        if lines[i].trim() == "#[cfg(test)]" && next.is_some_and(|n| n.starts_with("mod ") && n.ends_with('{')) {
            let mut depth = 0i32;
            let mut opened = false;
            i += 1;
            while i < lines.len() {
                for ch in lines[i].chars() {
                    match ch {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                i += 1;
                if opened && depth == 0 {
                    break;
                }
            }
            continue;
        }
        out.push_str(lines[i]);
        out.push('\n');
        i += 1;
    }
    out
}

fn ident_at(s: &str) -> &str {
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// The first segment of each path a `{…}` group starting at `s` (after the brace) names.
fn group_heads(s: &str) -> Vec<&str> {
    let mut depth = 0;
    let mut heads = Vec::new();
    let mut start = 0;
    for (k, ch) in s.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' if depth == 0 => {
                heads.push(ident_at(s[start..].trim_start()));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                heads.push(ident_at(s[start..k].trim_start()));
                start = k + 1;
            }
            _ => {}
        }
    }
    heads.retain(|h| !h.is_empty());
    heads
}

/// The crate-root names `code` reaches: after `crate::`, and after as many `super::` as
/// `depth` (the file's module depth below the root).
fn root_names(code: &str, depth: usize) -> Vec<String> {
    let mut names = Vec::new();
    let mut prefixes = vec!["crate::".to_owned()];
    if depth > 0 {
        prefixes.push("super::".repeat(depth));
    }
    for prefix in &prefixes {
        let mut at = 0;
        while let Some(k) = code[at..].find(prefix.as_str()) {
            let start = at + k;
            at = start + prefix.len();
            let before = code[..start].chars().next_back();
            if before.is_some_and(|b| b.is_alphanumeric() || b == '_' || b == ':') {
                continue; // part of a longer path (`x::crate::`, or `super::super::` seen as its tail)
            }
            let rest = &code[at..];
            if let Some(group) = rest.strip_prefix('{') {
                names.extend(group_heads(group).into_iter().map(str::to_owned));
            } else {
                let name = ident_at(rest);
                if !name.is_empty() && name != "super" {
                    names.push(name.to_owned());
                }
            }
        }
    }
    names
}

struct Graph {
    /// Library top-level modules.
    modules: BTreeSet<String>,
    /// module → module it imports → files that do.
    edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

fn library_graph() -> Graph {
    let src = src();
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let lib_code = code_only(&lib);
    let modules: BTreeSet<String> = lib_code
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ").or_else(|| l.trim().strip_prefix("mod ")))
        .map(|l| l.trim_end_matches(';').trim().to_owned())
        .collect();
    // Names the root re-exports: `pub use execution::Execution;`, `pub use error::{A, B};`.
    let mut reexports: BTreeMap<String, String> = BTreeMap::new();
    for line in lib_code.lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else { continue };
        let module = ident_at(rest).to_owned();
        let tail = rest[module.len()..].trim_start_matches("::").trim_end_matches(';');
        let names: Vec<&str> = match tail.strip_prefix('{') {
            Some(group) => group.trim_end_matches('}').split(',').map(str::trim).collect(),
            None => vec![tail.rsplit("::").next().unwrap_or(tail)],
        };
        for name in names.into_iter().filter(|n| !n.is_empty()) {
            let name = name.rsplit(" as ").next().unwrap_or(name).rsplit("::").next().unwrap_or(name);
            reexports.insert(name.to_owned(), module.clone());
        }
    }
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // Files that are test modules: `#[cfg(test)] mod x;` in a/mod.rs or a.rs is a/x.rs or a/x/.
    let mut test_files: Vec<PathBuf> = Vec::new();
    for file in &files {
        let code = code_only(&std::fs::read_to_string(file).unwrap());
        let lines: Vec<&str> = code.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let dir = match file.file_name().and_then(|f| f.to_str()) {
            Some("mod.rs" | "lib.rs" | "main.rs") => file.parent().unwrap().to_path_buf(),
            _ => file.with_extension(""),
        };
        for pair in lines.windows(2) {
            if let ("#[cfg(test)]", Some(name)) =
                (pair[0], pair[1].strip_prefix("mod ").and_then(|m| m.strip_suffix(';')))
            {
                test_files.push(dir.join(format!("{name}.rs")));
                test_files.push(dir.join(name));
            }
        }
    }
    let mut edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        let top = parts[0].trim_end_matches(".rs").to_owned();
        if !modules.contains(&top) || test_files.iter().any(|t| file.starts_with(t)) {
            continue;
        }
        // Module depth below the root: `a.rs`, `a/mod.rs` 1; `a/b.rs` 2.
        let depth = parts.len() - usize::from(parts.last().is_some_and(|f| f == "mod.rs"));
        let code = without_test_modules(&code_only(&std::fs::read_to_string(&file).unwrap()));
        for name in root_names(&code, depth) {
            let target = if modules.contains(&name) { Some(name) } else { reexports.get(&name).cloned() };
            if let Some(target) = target.filter(|t| *t != top) {
                edges.entry(top.clone()).or_default().entry(target).or_default().insert(rel.display().to_string());
            }
        }
    }
    Graph { modules, edges }
}

/// A cycle among `edges` (without the known ones), as the modules along it.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(m: &str, graph: &Graph, state: &mut BTreeMap<String, u8>, path: &mut Vec<String>) -> Option<Vec<String>> {
        state.insert(m.to_owned(), 1);
        path.push(m.to_owned());
        for next in graph.edges.get(m).into_iter().flat_map(|e| e.keys()) {
            if KNOWN_UPWARD.iter().any(|(a, b, _)| *a == m && b == next) {
                continue;
            }
            match state.get(next) {
                Some(1) => {
                    let from = path.iter().position(|p| p == next).unwrap();
                    let mut cycle = path[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(next, graph, state, path) {
                        return Some(c);
                    }
                }
            }
        }
        path.pop();
        state.insert(m.to_owned(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in &graph.modules {
        if !state.contains_key(m) {
            if let Some(c) = visit(m, graph, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_parser_sees_paths_in_code_only() {
    let code = code_only(
        "use crate::a; // crate::b\nlet s = \"crate::c {\"; let c = '{';\n/* crate::d */ crate::{e::X, f};\n",
    );
    assert_eq!(root_names(&code, 1), ["a", "e", "f"]);
    let code = "fn f() {}\n#[cfg(test)]\nmod tests {\n    fn g() { crate::x::y(); }\n}\nuse super::super::z::W;\n";
    assert_eq!(root_names(&without_test_modules(code), 2), ["z"]);
    assert_eq!(root_names(&code_only("let r = r#\"crate::q\"#; crate::p::f();"), 1), ["p"]);
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let graph = library_graph();
    // The graph is real: the run loop imports the layers below it.
    let execution = &graph.edges["execution"];
    for below in ["algorithm", "coupling", "bonds", "observer", "system", "fmu", "error"] {
        assert!(execution.contains_key(below), "execution does not import {below}: the parser lost it");
    }
    if let Some(cycle) = find_cycle(&graph) {
        let steps: Vec<String> = cycle
            .windows(2)
            .map(|w| {
                format!(
                    "{} -> {} ({})",
                    w[0],
                    w[1],
                    graph.edges[&w[0]][&w[1]].iter().cloned().collect::<Vec<_>>().join(", ")
                )
            })
            .collect();
        panic!("import cycle between master's modules:\n  {}", steps.join("\n  "));
    }
}

#[test]
fn the_known_upward_imports_are_still_there() {
    let graph = library_graph();
    for (from, to, why) in KNOWN_UPWARD {
        assert!(
            graph.edges.get(*from).is_some_and(|e| e.contains_key(*to)),
            "{from} no longer imports {to} ({why}): remove it from KNOWN_UPWARD"
        );
    }
}

#[test]
fn the_library_core_never_imports_a_front_end() {
    let graph = library_graph();
    for f in FRONT_ENDS {
        assert!(graph.modules.contains(*f), "front end {f} is no longer a module of lib.rs: update FRONT_ENDS");
    }
    // The binary's own modules stay out of the library (main.rs declares them).
    let main = code_only(&std::fs::read_to_string(src().join("main.rs")).unwrap());
    for m in ["cli", "bench"] {
        assert!(main.contains(&format!("mod {m};")), "main.rs no longer declares {m}");
        assert!(!graph.modules.contains(m), "{m} (the cosim binary's) is a module of the library");
    }
    let mut wrong = Vec::new();
    for (from, targets) in &graph.edges {
        if FRONT_ENDS.contains(&from.as_str()) {
            continue;
        }
        for (to, files) in targets {
            if FRONT_ENDS.contains(&to.as_str()) {
                wrong.push(format!("{from} -> {to} ({})", files.iter().cloned().collect::<Vec<_>>().join(", ")));
            }
        }
    }
    assert!(wrong.is_empty(), "library core modules import front ends:\n  {}", wrong.join("\n  "));
}
