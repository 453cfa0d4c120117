//! No import cycle between the top-level modules of the crates outside `master` and `xtask`
//! (issue 42 item 6; `master/tests/layers.rs` checks `master`): `crate::a` in module `b` and
//! `crate::b` in `a`, directly or through others, including `$crate::` paths of macros. The
//! parser is the one of `master/tests/layers.rs` (comments, string literals and `#[cfg(test)]`
//! modules left out); a workspace-wide layers test can replace both.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates checked (every library crate of the workspace but `master`, whose layers.rs checks
/// it), as directories of the workspace: each has `src/lib.rs`.
const CRATES: &[&str] = &[
    "fmu-export",
    "model-description",
    "fmu-multibody",
    "fmu-hydraulics",
    "fmu-semirecursive",
    "fmu-unified",
    "fmu-oscillator",
    "fmu-testing",
    "fmi-api",
    "fmu-harness",
    "validation",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
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

/// Top-level module → module it imports → files that do.
type Edges = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// The top-level modules of the crate at `src` and their imports.
fn module_graph(src: &Path) -> (BTreeSet<String>, Edges) {
    let lib_code = code_only(&std::fs::read_to_string(src.join("lib.rs")).unwrap());
    let modules: BTreeSet<String> = lib_code
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod ").or_else(|| l.trim().strip_prefix("mod ")))
        .map(|l| l.trim_end_matches(';').trim().to_owned())
        .collect();
    // Names the root re-exports: `pub use a::X;`, `pub use a::{X, Y};`, `pub use a::b::{X, Y};`.
    let mut reexports: BTreeMap<String, String> = BTreeMap::new();
    for line in lib_code.lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else { continue };
        let module = ident_at(rest).to_owned();
        let tail = rest.trim_end_matches(';');
        let names: Vec<&str> = match tail.find('{') {
            Some(k) => tail[k + 1..].trim_end_matches('}').split(',').map(str::trim).collect(),
            None => vec![tail.rsplit("::").next().unwrap_or(tail)],
        };
        for name in names.into_iter().filter(|n| !n.is_empty() && *n != "*") {
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
            Some("mod.rs" | "lib.rs") => file.parent().unwrap().to_path_buf(),
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
    let mut edges = Edges::new();
    for file in files {
        let rel = file.strip_prefix(src).unwrap();
        let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        let top = parts[0].trim_end_matches(".rs").to_owned();
        if !modules.contains(&top) || test_files.iter().any(|t| file.starts_with(t)) {
            continue;
        }
        let depth = parts.len() - usize::from(parts.last().is_some_and(|f| f == "mod.rs"));
        let code = without_test_modules(&code_only(&std::fs::read_to_string(&file).unwrap()));
        for name in root_names(&code, depth) {
            let target = if modules.contains(&name) { Some(name) } else { reexports.get(&name).cloned() };
            if let Some(target) = target.filter(|t| *t != top) {
                edges.entry(top.clone()).or_default().entry(target).or_default().insert(rel.display().to_string());
            }
        }
    }
    (modules, edges)
}

/// A cycle among `edges`, as the modules along it.
fn find_cycle(modules: &BTreeSet<String>, edges: &Edges) -> Option<Vec<String>> {
    fn visit(m: &str, edges: &Edges, state: &mut BTreeMap<String, u8>, path: &mut Vec<String>) -> Option<Vec<String>> {
        state.insert(m.to_owned(), 1);
        path.push(m.to_owned());
        for next in edges.get(m).into_iter().flat_map(|e| e.keys()) {
            match state.get(next) {
                Some(1) => {
                    let from = path.iter().position(|p| p == next).unwrap();
                    let mut cycle = path[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(next, edges, state, path) {
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
    for m in modules {
        if !state.contains_key(m) {
            if let Some(c) = visit(m, edges, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn the_parser_finds_a_cycle_and_macro_paths() {
    let dir = std::env::temp_dir().join(format!("import-cycles-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(dir.join("lib.rs"), "pub mod a;\npub mod b;\npub mod c;\npub use c::Z;\n").unwrap();
    std::fs::write(dir.join("a.rs"), "use crate::b::X; // crate::c\n").unwrap();
    std::fs::write(dir.join("b/mod.rs"), "mod d;\n").unwrap();
    std::fs::write(dir.join("b/d.rs"), "macro_rules! m { () => { $crate::Z } }\n").unwrap();
    std::fs::write(dir.join("c.rs"), "#[cfg(test)]\nmod tests {\n    use crate::b::X;\n}\nfn f() { super::a::g() }\n")
        .unwrap();
    let (modules, edges) = module_graph(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(edges["a"].keys().collect::<Vec<_>>(), ["b"]);
    assert_eq!(edges["b"].keys().collect::<Vec<_>>(), ["c"], "$crate::Z is c's, through the root");
    assert_eq!(edges["c"].keys().collect::<Vec<_>>(), ["a"], "super:: from a top-level file is the root");
    assert_eq!(find_cycle(&modules, &edges).unwrap(), ["a", "b", "c", "a"]);
}

#[test]
fn no_import_cycle_between_top_level_modules() {
    let mut found = Vec::new();
    for name in CRATES {
        let src = workspace().join(name).join("src");
        let (modules, edges) = module_graph(&src);
        if let Some(cycle) = find_cycle(&modules, &edges) {
            let steps: Vec<String> = cycle
                .windows(2)
                .map(|w| {
                    let files: Vec<String> = edges[&w[0]][&w[1]].iter().cloned().collect();
                    format!("{} -> {} ({})", w[0], w[1], files.join(", "))
                })
                .collect();
            found.push(format!("{name}:\n  {}", steps.join("\n  ")));
        }
    }
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

/// The layering of the export layer: the instance handle and the calls both FMI versions share
/// are below the 2.0 and 3.0 entry points, which do not import each other.
#[test]
fn the_fmi2_and_fmi3_entry_points_sit_beside_each_other() {
    let (_, edges) = module_graph(&workspace().join("fmu-export/src"));
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
