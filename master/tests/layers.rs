//! Module layering of every crate of the workspace, read from the sources (issue 28 item 2,
//! issue 42 item 6): no import cycle between a crate's top-level modules (`crate::a` in `b` and
//! `crate::b` in `a`, directly or through others), in every workspace member (library and binary
//! roots alike); and the direction between the library and its front ends, which Cargo enforces:
//! `master` depends on no front end, the Python extension on the library only.
//!
//! An import is any path `crate::m…` (or `super::…` reaching the crate root, or a name the crate
//! root re-exports, e.g. `crate::Execution`) in code: comments, string literals and test modules
//! (`#[cfg(test)] mod …`, inline or in their own files) are left out, since tests may build their fixtures from
//! any layer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Edges left out of the cycle check, (crate folder, from, to, why): each closes a circle that
/// another branch of issue 42 / 45 removes. A test fails once one of them is gone, so that this
/// list only shrinks (drop the entry then).
const KNOWN_UPWARD: &[(&str, &str, &str, &str)] =
    &[("master", "system", "live", "the [live] table's type, live::LiveSpec, is declared in live/ (issue 45)")];

/// Circles left out of the cycle check, (crate folder, its modules, why): imports among these
/// modules are not followed. A test fails once they no longer form one circle (drop the entry,
/// or narrow it to what is left).
const KNOWN_CIRCLES: &[(&str, &[&str], &str)] = &[];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The workspace members' folders (root Cargo.toml).
fn members() -> Vec<String> {
    let ws: toml::Table = std::fs::read_to_string(root().join("Cargo.toml")).unwrap().parse().unwrap();
    ws["workspace"]["members"].as_array().unwrap().iter().map(|m| m.as_str().unwrap().to_owned()).collect()
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
    /// The crate's folder and root file (`master`, `src/lib.rs`).
    krate: String,
    /// The root's top-level modules.
    modules: BTreeSet<String>,
    /// module → module it imports → files that do.
    edges: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

/// The module graph of each crate root (`src/lib.rs`, `src/main.rs`) of every workspace member.
fn workspace_graphs() -> Vec<Graph> {
    let mut graphs = Vec::new();
    for member in members() {
        let src = root().join(&member).join("src");
        for file in ["lib.rs", "main.rs"] {
            if src.join(file).exists() {
                graphs.push(crate_graph(&member, &src, file));
            }
        }
    }
    graphs
}

fn crate_graph(krate: &str, src: &Path, root_file: &str) -> Graph {
    let lib = std::fs::read_to_string(src.join(root_file)).unwrap();
    let lib_code = code_only(&lib);
    let modules: BTreeSet<String> = lib_code
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            l.strip_prefix("pub mod ").or_else(|| l.strip_prefix("mod "))
        })
        .filter(|l| l.ends_with(';'))
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
    rust_files(src, &mut files);
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
        let rel = file.strip_prefix(src).unwrap();
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
    Graph { krate: format!("{krate}/src/{root_file}"), modules, edges }
}

fn graph_of(krate: &str) -> Graph {
    workspace_graphs().into_iter().find(|g| g.krate == format!("{krate}/src/lib.rs")).unwrap()
}

fn known(krate: &str, from: &str, to: &str) -> bool {
    let here = |k: &str| krate.starts_with(&format!("{k}/src/"));
    KNOWN_UPWARD.iter().any(|(k, a, b, _)| here(k) && *a == from && *b == to)
        || KNOWN_CIRCLES.iter().any(|(k, set, _)| here(k) && set.contains(&from) && set.contains(&to))
}

/// The modules `from` reaches through `graph`'s imports (itself included).
fn reach(graph: &Graph, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_owned()];
    while let Some(m) = stack.pop() {
        if seen.insert(m.clone()) {
            stack.extend(graph.edges.get(&m).into_iter().flat_map(|e| e.keys().cloned()));
        }
    }
    seen
}

/// A cycle among `edges` (without the known ones), as the modules along it.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(m: &str, graph: &Graph, state: &mut BTreeMap<String, u8>, path: &mut Vec<String>) -> Option<Vec<String>> {
        state.insert(m.to_owned(), 1);
        path.push(m.to_owned());
        for next in graph.edges.get(m).into_iter().flat_map(|e| e.keys()) {
            if known(&graph.krate, m, next) {
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

/// The cycle as "a -> b (files)" lines.
fn describe(graph: &Graph, cycle: &[String]) -> String {
    cycle
        .windows(2)
        .map(|w| {
            format!(
                "{} -> {} ({})",
                w[0],
                w[1],
                graph.edges[&w[0]][&w[1]].iter().cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n  ")
}

#[test]
fn no_import_cycle_between_top_level_modules_of_any_crate() {
    let graphs = workspace_graphs();
    assert!(graphs.len() >= 20, "{} crate roots", graphs.len());
    // The graph is real: the run loop imports the layers below it.
    let master = graph_of("master");
    let execution = &master.edges["execution"];
    for below in ["algorithm", "coupling", "bonds", "observer", "system", "fmu", "error"] {
        assert!(execution.contains_key(below), "execution does not import {below}: the parser lost it");
    }
    let cycles: Vec<String> =
        graphs.iter().filter_map(|g| find_cycle(g).map(|c| format!("{}:\n  {}", g.krate, describe(g, &c)))).collect();
    assert!(cycles.is_empty(), "import cycles between a crate's modules:\n{}", cycles.join("\n"));
}

/// The layering of the export layer (issue 42 item 2): the instance handle and the calls both FMI
/// versions share are below the 2.0 and 3.0 entry points, which do not import each other.
#[test]
fn the_fmi2_and_fmi3_entry_points_sit_beside_each_other() {
    let export = graph_of("fmu-export");
    let edges = &export.edges;
    for (api, other) in [("fmi2", "fmi3"), ("fmi3", "fmi2")] {
        assert!(edges[api].contains_key("handle"), "{api} does not use the handle: the parser lost it");
        assert!(!edges[api].contains_key(other), "{api} imports {other}: {:?}", edges[api][other]);
    }
    for below in ["handle", "common", "instance", "component", "logger", "factory", "types", "types3"] {
        for api in ["fmi2", "fmi3"] {
            assert!(!edges.get(below).is_some_and(|e| e.contains_key(api)), "{below} imports {api}");
        }
    }
}

#[test]
fn the_known_upward_imports_are_still_there() {
    let graphs = workspace_graphs();
    for (krate, from, to, why) in KNOWN_UPWARD {
        let g = graphs.iter().find(|g| g.krate.starts_with(&format!("{krate}/src/"))).unwrap();
        assert!(
            g.edges.get(*from).is_some_and(|e| e.contains_key(*to)),
            "{krate}: {from} no longer imports {to} ({why}): remove it from KNOWN_UPWARD"
        );
        // And it still closes a circle: `to` reaches `from` again.
        assert!(
            reach(g, to).contains(*from),
            "{krate}: {from} -> {to} no longer closes a circle ({why}): remove it from KNOWN_UPWARD"
        );
    }
    for (krate, set, why) in KNOWN_CIRCLES {
        let g = graphs.iter().find(|g| g.krate.starts_with(&format!("{krate}/src/"))).unwrap();
        for a in *set {
            let r = reach(g, a);
            let missing: Vec<&&str> = set.iter().filter(|b| !r.contains(**b)).collect();
            assert!(
                missing.is_empty(),
                "{krate}: {a} no longer reaches {missing:?}: the circle {set:?} is broken ({why}); update KNOWN_CIRCLES"
            );
        }
    }
}

#[test]
fn the_library_depends_on_no_front_end_and_python_on_the_library_only() {
    let deps = |dir: &str| -> Vec<String> {
        let t: toml::Table = std::fs::read_to_string(root().join(dir).join("Cargo.toml")).unwrap().parse().unwrap();
        t.get("dependencies").and_then(|d| d.as_table()).map(|d| d.keys().cloned().collect()).unwrap_or_default()
    };
    let master = deps("master");
    assert!(!master.iter().any(|d| d == "cosim-cli"), "master depends on the CLI: {master:?}");
    let python = deps("python");
    assert!(python.iter().any(|d| d == "master") && !python.iter().any(|d| d == "cosim-cli"), "{python:?}");
    assert!(deps("cosim-cli").iter().any(|d| d == "master"));
    // The command line's own modules are not the library's.
    let lib = graph_of("master");
    for m in ["cli", "guard", "run", "precision", "bench", "plot", "progress"] {
        assert!(!lib.modules.contains(m), "{m} (the command line's) is a module of the library");
    }
}
