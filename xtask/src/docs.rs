//! `cargo xtask docs [--long] [--bless] [FILE…]`: the doc-runner. Every fenced block tagged `sh`,
//! `python` or `toml` in README.md and docs/*.md is run unless marked `skip` (with its reason) or
//! `long`, and its standard output compared with
//! the block tagged `text` that follows it, when there is one. `cargo xtask test` runs it after the
//! FMUs, the release `cosim` and the Python wheel are built (`cargo xtask docs` builds them too).
//!
//! Conventions (also in README.md, "Docs that run"):
//! - `sh`: a bash script (`set -euo pipefail`); `cosim` is the release binary; `cargo run --release
//!   -p cosim-cli --bin cosim --` runs that binary, `cargo xtask fmus` is already done (the runner built
//!   them); any other `cargo` command is refused (mark the block).
//! - `python`: a script run by the workspace's `.venv/bin/python`.
//! - `toml`: a system file (FMU paths relative to a file in `scenarios/`), run by `cosim run`, which
//!   must succeed; marked `fragment`, only parsed as TOML (key lists that are not a whole system).
//! - Blocks run in order, one scratch directory per Markdown file (`target/doc-runner/<file>/`,
//!   holding links to the repository's top-level entries: `scenarios/…`, `target/fmu/…` resolve and
//!   what a block writes stays out of the tree).
//! - A `text` block right after a run block (blank lines between allowed) is its expected stdout:
//!   compared line by line and token by token (whitespace runs are one separator); tokens that are
//!   both numbers compare by value, within the block's `tolerance` (relative, default 0); a token
//!   `…` in the expected output stands for any one token (a wall time).
//! - An HTML comment on the line before the fence holds directives, separated by `;`:
//!   `<!-- doc-runner: skip: REASON -->` (never run; the reason is the rest of the comment), `<!-- doc-runner: long -->` (run only with
//!   `--long`: long runs, clusters), `<!-- doc-runner: fragment -->`, `<!-- doc-runner: tolerance: 1e-6 -->`,
//!   `<!-- doc-runner: timeout: 600 -->` (seconds, default 300).
//! - `--bless` rewrites the `text` blocks with the actual output (keeping `…` tokens), so shown
//!   output is never edited by hand.
//! - A `text` block after a `skip` or `long` block is refused: every shown output is compared on
//!   every run. Blocks marked `skip` are listed with their reasons at the end of each run.

use anyhow::{bail, Context, Result};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What the directives of a block say.
#[derive(Debug, Default, Clone)]
struct Directives {
    skip: Option<String>,
    long: bool,
    fragment: bool,
    tolerance: f64,
    timeout_s: Option<u64>,
}

/// One fenced block to run.
#[derive(Debug)]
struct Block {
    lang: String,
    /// 1-based line of the opening fence.
    line: usize,
    body: String,
    directives: Directives,
    /// The expected-output block: 0-based line range of its content and the text.
    expected: Option<(usize, usize, String)>,
}

const RUN_LANGS: &[&str] = &["sh", "python", "toml"];
const MARK: &str = "<!-- doc-runner:";

fn parse_directives(comment: &str, file: &str, line: usize) -> Result<Directives> {
    let inner = comment.trim().trim_start_matches(MARK).trim_end_matches("-->").trim();
    let mut d = Directives::default();
    // A skip reason is free text (it may hold `;`): the whole rest of the comment.
    if let Some(reason) = inner.strip_prefix("skip:") {
        d.skip = Some(reason.trim().to_string()).filter(|r| !r.is_empty());
        if d.skip.is_none() {
            bail!("{file}:{line}: doc-runner skip needs a reason (`skip: why`)");
        }
        return Ok(d);
    }
    for part in inner.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = match part.split_once(':') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (part, ""),
        };
        match key {
            "skip" if !value.is_empty() => d.skip = Some(value.to_string()),
            "skip" => bail!("{file}:{line}: doc-runner skip needs a reason (`skip: why`)"),
            "long" => d.long = true,
            "fragment" => d.fragment = true,
            "tolerance" => {
                d.tolerance =
                    value.parse().with_context(|| format!("{file}:{line}: doc-runner tolerance {value:?}"))?
            }
            "timeout" => {
                d.timeout_s =
                    Some(value.parse().with_context(|| format!("{file}:{line}: doc-runner timeout {value:?}"))?)
            }
            other => bail!(
                "{file}:{line}: unknown doc-runner directive {other:?} (skip: REASON, long, fragment, tolerance: X, timeout: S)"
            ),
        }
    }
    Ok(d)
}

/// The runnable blocks of one Markdown text.
fn blocks(text: &str, file: &str) -> Result<Vec<Block>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    // The closing fence of the previous block and the index of that block in `out`, if it runs.
    let mut last_run: Option<(usize, usize)> = None;
    while i < lines.len() {
        let line = lines[i].trim_start();
        let Some(lang) = line.strip_prefix("```") else {
            i += 1;
            continue;
        };
        let lang = lang.trim().to_string();
        let start = i;
        let mut end = i + 1;
        while end < lines.len() && lines[end].trim() != "```" {
            end += 1;
        }
        if end == lines.len() {
            bail!("{file}:{}: unclosed code fence", start + 1);
        }
        let body: String = lines[start + 1..end].iter().map(|l| format!("{l}\n")).collect();
        // An output block: right after a run block, only blank lines between.
        if lang == "text" {
            if let Some((close, idx)) = last_run {
                if lines[close + 1..start].iter().all(|l| l.trim().is_empty()) {
                    let block: &mut Block = &mut out[idx];
                    // Shown output is compared on every run: never after a block that is not.
                    if block.directives.skip.is_some() || block.directives.long {
                        bail!(
                            "{file}:{}: output shown after a block the doc-runner does not run on every run \
                             (skip or long, line {}): run the block, or show no output",
                            start + 1,
                            block.line
                        );
                    }
                    block.expected = Some((start + 1, end, body));
                }
            }
            last_run = None;
            i = end + 1;
            continue;
        }
        last_run = None;
        let prev = lines[..start].iter().rev().find(|l| !l.trim().is_empty()).map(|l| l.trim());
        let directives = match prev {
            Some(p) if p.starts_with(MARK) => parse_directives(p, file, start)?,
            _ => Directives::default(),
        };
        if RUN_LANGS.contains(&lang.as_str()) {
            out.push(Block { lang, line: start + 1, body, directives, expected: None });
            last_run = Some((end, out.len() - 1));
        }
        i = end + 1;
    }
    Ok(out)
}

/// Whether two tokens agree: equal text, or both numbers within `tol` (relative).
fn token_eq(expected: &str, actual: &str, tol: f64) -> bool {
    if expected == actual || expected == "…" {
        return true;
    }
    let num = |s: &str| s.trim_end_matches([',', ')', ';', ':']).trim_start_matches('(').parse::<f64>().ok();
    match (num(expected), num(actual)) {
        (Some(a), Some(b)) if a.is_finite() && b.is_finite() => (a - b).abs() <= tol * a.abs().max(b.abs()),
        _ => false,
    }
}

fn out_lines(s: &str) -> Vec<&str> {
    let mut v: Vec<&str> = s.lines().map(str::trim_end).collect();
    while v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

/// Compares the shown output with the actual one; the first difference as an error message.
fn compare(expected: &str, actual: &str, tol: f64) -> std::result::Result<(), String> {
    let (e, a) = (out_lines(expected), out_lines(actual));
    for (n, (el, al)) in e.iter().zip(&a).enumerate() {
        let (et, at): (Vec<&str>, Vec<&str>) = (el.split_whitespace().collect(), al.split_whitespace().collect());
        if et.len() != at.len() || !et.iter().zip(&at).all(|(x, y)| token_eq(x, y, tol)) {
            return Err(format!("output line {}:\n  shown:  {el}\n  actual: {al}", n + 1));
        }
    }
    if e.len() != a.len() {
        return Err(format!(
            "the doc shows {} output lines, the block printed {}{}",
            e.len(),
            a.len(),
            a.get(e.len()).map(|l| format!(" (first extra: {l})")).unwrap_or_default()
        ));
    }
    Ok(())
}

/// `actual` with the tokens at the positions where `expected` has `…` replaced by `…`.
fn keep_ellipses(expected: &str, actual: &str) -> String {
    let (e, a) = (out_lines(expected), out_lines(actual));
    let mut out = String::new();
    for (n, al) in a.iter().enumerate() {
        let et: Vec<&str> = e.get(n).map(|l| l.split_whitespace().collect()).unwrap_or_default();
        let mut line = String::new();
        let mut k = 0;
        let mut rest = *al;
        while !rest.is_empty() {
            let ws = rest.len() - rest.trim_start().len();
            line.push_str(&rest[..ws]);
            rest = &rest[ws..];
            let tok = rest.split_whitespace().next().unwrap_or("");
            line.push_str(if et.get(k) == Some(&"…") { "…" } else { tok });
            rest = &rest[tok.len()..];
            k += 1;
        }
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The scratch directory of one Markdown file: links to the repository's top-level entries and a
/// `bin/` with `cosim` and the `cargo` shim.
fn scratch(root: &Path, name: &str) -> Result<PathBuf> {
    let dir = crate::target_dir().join("doc-runner").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(".doc-runner/bin"))?;
    for entry in std::fs::read_dir(root)? {
        let entry = entry?;
        std::os::unix::fs::symlink(entry.path(), dir.join(entry.file_name()))?;
    }
    let bin = dir.join(".doc-runner/bin");
    std::os::unix::fs::symlink(crate::target_dir().join("release/cosim"), bin.join("cosim"))?;
    let shim = bin.join("cargo");
    std::fs::write(
        &shim,
        "#!/bin/sh\n\
         # doc-runner: the cargo commands the docs show, mapped to what the runner has built\n\
         case \"$*\" in\n\
         \"xtask fmus\") exit 0 ;;\n\
         \"run --release -p cosim-cli --bin cosim -- \"*) shift 7; exec cosim \"$@\" ;;\n\
         *) echo \"doc-runner: 'cargo $*' is not run in doc blocks: mark the block <!-- doc-runner: skip: REASON --> or long\" >&2; exit 2 ;;\n\
         esac\n",
    )?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755))?;
    Ok(dir)
}

/// Runs `cmd` in `dir` with a timeout; (success, stdout, stderr).
fn run_cmd(mut cmd: Command, dir: &Path, timeout: Duration) -> Result<(bool, String, String)> {
    let (out_path, err_path) = (dir.join(".doc-runner/stdout"), dir.join(".doc-runner/stderr"));
    let mut child = cmd
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path)?)
        .stderr(std::fs::File::create(&err_path)?)
        .spawn()
        .with_context(|| format!("starting {cmd:?}"))?;
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break Some(s);
        }
        if t0.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let mut stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    if status.is_none() {
        stderr.push_str(&format!("\n(doc-runner: killed after {} s)", timeout.as_secs()));
    }
    Ok((status.is_some_and(|s| s.success()), stdout, stderr))
}

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Runs one block in `dir`; Ok(stdout) or Err(message).
fn run_block(block: &Block, n: usize, dir: &Path, python: &Path) -> Result<std::result::Result<String, String>> {
    let path = format!("/usr/local/bin:/usr/bin:/bin:{}", std::env::var("PATH").unwrap_or_default());
    let path = format!(
        "{}:{}:{path}",
        dir.join(".doc-runner/bin").display(),
        python.parent().map(Path::display).map(|d| d.to_string()).unwrap_or_default()
    );
    let cmd = match block.lang.as_str() {
        "sh" => {
            let file = dir.join(format!(".doc-runner/block-{n}.sh"));
            std::fs::write(&file, format!("set -euo pipefail\n{}", block.body))?;
            let mut c = Command::new("bash");
            c.arg(&file);
            c
        }
        "python" => {
            let file = dir.join(format!(".doc-runner/block-{n}.py"));
            std::fs::write(&file, &block.body)?;
            let mut c = Command::new(python);
            c.arg(&file);
            c
        }
        "toml" if block.directives.fragment => {
            return Ok(match block.body.parse::<toml::Table>() {
                Ok(_) => Ok(String::new()),
                Err(e) => Err(format!("not TOML: {e}")),
            });
        }
        "toml" => {
            // A system file beside the scenarios: its FMU paths are relative to scenarios/.
            let sys = dir.join(format!("doc-block-{n}"));
            std::fs::create_dir_all(&sys)?;
            let file = sys.join("system.toml");
            std::fs::write(&file, &block.body)?;
            let mut c = Command::new(dir.join(".doc-runner/bin/cosim"));
            c.arg("run").arg(&file).arg("--out").arg(sys.join("out"));
            c
        }
        other => bail!("no runner for {other}"),
    };
    let mut cmd = cmd;
    cmd.env("PATH", path).env("MPLBACKEND", "Agg").env("PYTHONDONTWRITEBYTECODE", "1");
    let timeout = Duration::from_secs(block.directives.timeout_s.unwrap_or(300));
    let (ok, stdout, stderr) = run_cmd(cmd, dir, timeout)?;
    if !ok {
        return Ok(Err(format!("failed:\n{}\n{}", tail(&stdout, 10), tail(&stderr, 20))));
    }
    Ok(Ok(stdout))
}

/// The Markdown files the runner reads: README.md and docs/*.md, sorted.
fn doc_files(root: &Path) -> Result<Vec<PathBuf>> {
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    Ok(files)
}

/// Runs the blocks of `files` (all docs when empty); the FMUs, the release `cosim` and the wheel
/// in `python`'s venv must be built.
pub fn run_blocks(python: &Path, long: bool, bless: bool, only: &[String]) -> Result<()> {
    let root = crate::root();
    let files = doc_files(&root)?;
    let files: Vec<PathBuf> = if only.is_empty() {
        files
    } else {
        files.into_iter().filter(|f| only.iter().any(|o| f.ends_with(o))).collect()
    };
    let t_all = Instant::now();
    let (mut ran, mut skipped, mut long_left, mut failures) = (0, Vec::new(), 0, Vec::new());
    for file in &files {
        let rel = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        let text = std::fs::read_to_string(file).with_context(|| format!("reading {rel}"))?;
        let list = blocks(&text, &rel)?;
        if list.is_empty() {
            continue;
        }
        let dir = scratch(&root, &rel.replace('/', "_"))?;
        let mut rewrites: Vec<(usize, usize, String)> = Vec::new();
        for (n, block) in list.iter().enumerate() {
            let at = format!("{rel}:{} ({})", block.line, block.lang);
            if let Some(reason) = &block.directives.skip {
                skipped.push(format!("{at}: {reason}"));
                continue;
            }
            if block.directives.long && !long {
                long_left += 1;
                continue;
            }
            let t0 = Instant::now();
            let result = run_block(block, n, &dir, python)?;
            ran += 1;
            eprintln!("doc-runner: {at} {:.1} s", t0.elapsed().as_secs_f64());
            match (result, &block.expected) {
                (Err(msg), _) => failures.push(format!("{at}: {msg}")),
                (Ok(stdout), Some((from, to, shown))) => {
                    if let Err(msg) = compare(shown, &stdout, block.directives.tolerance) {
                        if bless {
                            eprintln!("doc-runner: {at}: output rewritten ({msg})");
                            rewrites.push((*from, *to, keep_ellipses(shown, &stdout)));
                        } else {
                            failures.push(format!("{at}: {msg}"));
                        }
                    }
                }
                (Ok(_), None) => {}
            }
        }
        if !rewrites.is_empty() {
            let mut lines: Vec<String> = text.lines().map(String::from).collect();
            for (from, to, new) in rewrites.into_iter().rev() {
                lines.splice(from..to, new.lines().map(String::from));
            }
            std::fs::write(file, lines.join("\n") + "\n")?;
        }
    }
    eprintln!(
        "doc-runner: {ran} blocks run in {:.0} s, {} skipped, {long_left} long ones not run (--long), {} failing",
        t_all.elapsed().as_secs_f64(),
        skipped.len(),
        failures.len()
    );
    for s in &skipped {
        eprintln!("  skipped {s}");
    }
    if !failures.is_empty() {
        bail!("doc-runner: {} failing blocks:\n{}", failures.len(), failures.join("\n"));
    }
    Ok(())
}

/// `cargo xtask docs [--long] [--bless] [FILE…]`: builds what the blocks use, then runs them.
pub fn run(args: &[String]) -> Result<()> {
    let long = args.iter().any(|a| a == "--long");
    let bless = args.iter().any(|a| a == "--bless");
    let only: Vec<String> = args.iter().filter(|a| !a.starts_with("--")).cloned().collect();
    let python = crate::python::venv()?;
    crate::package::fmus()?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    if !args.iter().any(|a| a == "--no-build") {
        crate::python::install_wheel(&cargo, &crate::root(), &python)?;
    }
    run_blocks(&python, long, bless, &only)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_blocks_directives_and_outputs() {
        let md = "x\n<!-- doc-runner: skip: needs a cluster -->\n```sh\nls\n```\n\n```python\nprint(1)\n```\n\n```text\n1\n```\n```toml\n<x>\n```\n```rust\nfn\n```\n";
        let b = blocks(md, "t.md").unwrap_or_default();
        assert_eq!(b.len(), 3);
        assert_eq!(b[0].directives.skip.as_deref(), Some("needs a cluster"));
        assert_eq!(b[1].expected.as_ref().map(|e| e.2.as_str()), Some("1\n"));
        assert!(b[2].expected.is_none());
        assert!(blocks("<!-- doc-runner: skip -->\n```sh\nls\n```\n", "t.md").is_err());
        assert!(blocks("<!-- doc-runner: fast -->\n```sh\nls\n```\n", "t.md").is_err());
        // Output shown after a block that does not run every time: refused.
        for d in ["skip: slow", "long"] {
            let md = format!("<!-- doc-runner: {d} -->\n```sh\necho 1\n```\n\n```text\n1\n```\n");
            assert!(blocks(&md, "t.md").is_err(), "{d}");
        }
    }

    #[test]
    fn compares_tokens_numbers_and_ellipses() {
        assert!(compare("a  1.0  b\n", "a 1 b\n\n", 0.0).is_ok());
        assert!(compare("a 1.0\n", "a 1.001\n", 0.0).is_err());
        assert!(compare("a 1.0\n", "a 1.001\n", 1e-2).is_ok());
        assert!(compare("20001 ok … s\n", "20001 ok 0.17 s\n", 0.0).is_ok());
        assert!(compare("x NaN\n", "x NaN\n", 0.0).is_ok());
        assert!(compare("x NaN\n", "x 1.0\n", 0.0).is_err());
        assert!(compare("a\n", "a\nb\n", 0.0).is_err());
        assert_eq!(keep_ellipses("20001 ok … s\n", "20001 ok  0.17 s\n"), "20001 ok  … s\n");
    }
}
