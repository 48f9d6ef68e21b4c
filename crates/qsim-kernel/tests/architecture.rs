//! Architecture rules of the whole workspace, checked on its source files
//! (issue 11): no import circles between modules, and no file so long that
//! nobody can hold it in their head.
//!
//! The module graph of each crate is read from `use` paths and inline
//! paths starting with `crate::`, `super::` or `self::`. A module counts as
//! everything inside it, so a reference from `a::x` to `b::y` is an edge
//! between the siblings `a` and `b`. A child may use its parent and a parent
//! its children (a child is part of its parent); siblings, at every level,
//! must not depend on each other in a circle. (A path through the crate
//! root's re-exports, `crate::Name`, counts as a use of the root, which
//! every module may use.) Run with `--nocapture` to see the graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest a source file may be.
const MAX_LINES: usize = 1_000;

/// The longest a function of the kernel or the model reader may be: the
/// lines after its `fn` line up to its closing brace (issue 23: a new
/// metric was five edits in a 400-line `summarize`).
const MAX_FN_LINES: usize = 150;

/// The crates whose functions are held to [`MAX_FN_LINES`].
const SHORT_FN_CRATES: &[&str] = &["qsim-kernel", "qsim-model"];

/// Files over the limit that their owners are still shrinking: reported,
/// not failed. Empty this list once they are short.
const STILL_SHRINKING: &[&str] = &[];

/// Edges of a circle that another change is removing: (source directory,
/// from, to). Reported, not failed; empty this list once they are gone.
/// `qsim-model`: `ctx` uses `tree`, and `tree` calls `ctx::child`.
const CIRCLES_BEING_REMOVED: &[(&str, &str, &str)] = &[];

/// A module, as its path from the crate root (empty: the root).
type Module = Vec<String>;
/// Edges between sibling modules.
type Graph = BTreeMap<Module, BTreeSet<Module>>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every source directory: each crate's `src/`, and the root package's.
fn source_dirs() -> Vec<PathBuf> {
    let root = workspace();
    let mut dirs = vec![root.join("src")];
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("crates/ exists")
        .flatten()
        .map(|e| e.path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    dirs.extend(crates);
    dirs
}

/// The module a file under `src` defines: `sim/latch.rs` and
/// `sim/latch/mod.rs` are `[sim, latch]`, `lib.rs` and `main.rs` the root.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("file under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if !(stem == "mod" || (parts.is_empty() && (stem == "lib" || stem == "main"))) {
        parts.push(stem.to_string());
    }
    parts
}

/// The code of a file without comments and string literals, so that
/// documentation and messages are not read as paths. The line breaks of
/// what is left out are kept, so a line of the code is that of the file.
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let start = i;
        let breaks = |out: &mut String, end: usize| {
            let end = end.min(b.len());
            out.extend(b[start..end].iter().filter(|&&c| c == b'\n').map(|_| '\n'));
        };
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
            breaks(&mut out, i);
        } else if b[i] == b'r'
            && (i == 0 || !is_ident(b[i - 1]))
            && matches!(b.get(i + 1), Some(b'"' | b'#'))
        {
            // A raw string: r"...", r#"..."#, ...
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                out.push('r');
                i += 1;
                continue;
            }
            i += 2 + hashes;
            while i < b.len()
                && !(b[i] == b'"'
                    && b[i + 1..].iter().take(hashes).all(|&c| c == b'#')
                    && i + hashes < b.len())
            {
                i += 1;
            }
            i += 1 + hashes;
            out.push_str("\"\"");
            breaks(&mut out, i);
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') {
            // An escaped char literal like '\'' or '\n'.
            i += 2;
            while i < b.len() && b[i] != b'\'' {
                i += 1;
            }
            i += 1;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
            breaks(&mut out, i);
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            // A char literal like '"' (lifetimes have no closing quote).
            i += 3;
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Parses a path tree at `b[*i..]` (identifiers joined by `::`, maybe
/// ending in a `{...}` group) and pushes every full path onto `out`.
fn parse_tree(b: &[u8], i: &mut usize, prefix: &[String], out: &mut Vec<Vec<String>>) {
    let mut path = prefix.to_vec();
    loop {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
        if *i < b.len() && b[*i] == b'{' {
            *i += 1;
            loop {
                while *i < b.len() && (b[*i].is_ascii_whitespace() || b[*i] == b',') {
                    *i += 1;
                }
                if *i >= b.len() || b[*i] == b'}' {
                    *i += 1;
                    return;
                }
                let before = *i;
                parse_tree(b, i, &path, out);
                // Skip an alias (`as name`) up to the next item.
                while *i < b.len() && b[*i] != b',' && b[*i] != b'}' {
                    *i += 1;
                }
                if *i == before {
                    *i += 1;
                }
            }
        }
        let start = *i;
        while *i < b.len() && is_ident(b[*i]) {
            *i += 1;
        }
        if *i == start {
            // `*` or the end of the path.
            if *i < b.len() && b[*i] == b'*' {
                *i += 1;
            }
            out.push(path);
            return;
        }
        path.push(String::from_utf8_lossy(&b[start..*i]).into_owned());
        if b.get(*i) == Some(&b':') && b.get(*i + 1) == Some(&b':') {
            *i += 2;
        } else {
            out.push(path);
            return;
        }
    }
}

/// The modules of one crate and its sibling edges (after lifting every
/// reference to the children of the two modules' common ancestor).
fn module_graph(src: &Path) -> (BTreeSet<Module>, Graph) {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(src, f)).collect();
    let mut edges = Graph::new();
    for f in &files {
        let here = module_of(src, f);
        let code = code_of(&std::fs::read_to_string(f).expect("readable source"));
        let b = code.as_bytes();
        let mut paths = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if is_ident(b[i]) && (i == 0 || !is_ident(b[i - 1]) && b[i - 1] != b':') {
                let start = i;
                while i < b.len() && is_ident(b[i]) {
                    i += 1;
                }
                let word = &code[start..i];
                if matches!(word, "crate" | "super" | "self")
                    && b.get(i) == Some(&b':')
                    && b.get(i + 1) == Some(&b':')
                {
                    let mut j = start;
                    parse_tree(b, &mut j, &[], &mut paths);
                    i = j.max(i);
                }
            } else {
                i += 1;
            }
        }
        for p in paths {
            // Resolve the leading `crate` / `super` / `self` segments.
            let mut base: Vec<String> = Vec::new();
            let mut rest = p.as_slice();
            match rest.first().map(String::as_str) {
                Some("crate") => rest = &rest[1..],
                Some("self") => {
                    base = here.clone();
                    rest = &rest[1..];
                }
                Some("super") => {
                    base = here.clone();
                    while rest.first().map(String::as_str) == Some("super") {
                        base.pop();
                        rest = &rest[1..];
                    }
                }
                _ => continue,
            }
            base.extend(rest.iter().cloned());
            // The module referred to: the longest known prefix.
            let target = (0..=base.len())
                .rev()
                .map(|k| base[..k].to_vec())
                .find(|m| modules.contains(m))
                .unwrap_or_default();
            let common = here.iter().zip(&target).take_while(|(a, b)| a == b).count();
            if common == here.len() || common == target.len() {
                // Within one module, or between a module and its parent.
                continue;
            }
            edges
                .entry(here[..=common].to_vec())
                .or_default()
                .insert(target[..=common].to_vec());
        }
    }
    (modules, edges)
}

/// A circle in the graph, if there is one.
fn find_cycle(edges: &Graph) -> Option<Vec<Module>> {
    fn visit(
        n: &Vec<String>,
        edges: &Graph,
        state: &mut BTreeMap<Vec<String>, u8>,
        stack: &mut Vec<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        state.insert(n.clone(), 1);
        stack.push(n.clone());
        for m in edges.get(n).into_iter().flatten() {
            match state.get(m) {
                Some(1) => {
                    let from = stack.iter().position(|x| x == m).expect("on the stack");
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(m.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(m, edges, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(n.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in edges.keys() {
        if !state.contains_key(n) {
            let mut stack = Vec::new();
            if let Some(c) = visit(n, edges, &mut state, &mut stack) {
                return Some(c);
            }
        }
    }
    None
}

fn name(m: &[String]) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

#[test]
fn no_module_imports_another_in_a_circle() {
    let mut problems = Vec::new();
    let root = workspace();
    let mut checked = 0;
    for src in source_dirs() {
        let dir = src
            .strip_prefix(&root)
            .unwrap_or(&src)
            .to_string_lossy()
            .replace('\\', "/");
        let (modules, mut edges) = module_graph(&src);
        checked += modules.len();
        for (from, tos) in &mut edges {
            tos.retain(|to| {
                let edge = (dir.as_str(), name(from), name(to));
                let known = CIRCLES_BEING_REMOVED
                    .iter()
                    .any(|&(d, f, t)| (d, f, t) == (edge.0, edge.1.as_str(), edge.2.as_str()));
                let tag = if known { " (circle being removed)" } else { "" };
                eprintln!("{dir}: {} -> {}{tag}", edge.1, edge.2);
                !known
            });
        }
        if let Some(c) = find_cycle(&edges) {
            let c: Vec<String> = c.iter().map(|m| name(m)).collect();
            problems.push(format!("{dir}: {}", c.join(" -> ")));
        }
    }
    assert!(
        checked > 40,
        "the workspace's modules were found ({checked})"
    );
    assert!(
        problems.is_empty(),
        "import circles:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_cycle_finder_sees_a_circle() {
    // The check above can fail: sim.rs and run.rs importing each other, as
    // before issue 11, is caught.
    let m = |s: &str| vec![s.to_string()];
    let mut edges = BTreeMap::new();
    edges.insert(m("run"), BTreeSet::from([m("sim")]));
    edges.insert(m("sim"), BTreeSet::from([m("config"), m("run")]));
    let cycle = find_cycle(&edges).expect("a circle");
    assert_eq!(cycle.first(), cycle.last());
    assert!(cycle.contains(&m("run")) && cycle.contains(&m("sim")));
    edges.insert(m("sim"), BTreeSet::from([m("config")]));
    assert_eq!(find_cycle(&edges), None);
}

#[test]
fn paths_are_read_from_use_trees_and_code() {
    let code = code_of(
        "use crate::{config::RunConfig, sim::{self, latch::X as Y}};\n\
         // use crate::commented::Out;\n\
         let s = \"crate::in_a_string\"; super::super::up::f(crate::time::SimTime::ZERO);",
    );
    let b = code.as_bytes();
    let mut found = Vec::new();
    for (k, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        if k > 0 && (is_ident(b[k - 1]) || b[k - 1] == b':') {
            continue;
        }
        let mut i = k;
        parse_tree(b, &mut i, &[], &mut found);
    }
    let found: BTreeSet<String> = found.iter().map(|p| p.join("::")).collect();
    for want in [
        "crate::config::RunConfig",
        "crate::sim::self",
        "crate::sim::latch::X",
        "crate::time::SimTime::ZERO",
        "super::super::up::f",
    ] {
        assert!(found.contains(want), "{want} not in {found:?}");
    }
    assert!(
        !found
            .iter()
            .any(|p| p.contains("commented") || p.contains("in_a_string"))
    );
}

#[test]
fn no_source_file_is_over_the_limit() {
    let root = workspace();
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    rust_files(&root.join("tests"), &mut files);
    rust_files(&root.join("crates"), &mut files);
    let mut over = Vec::new();
    for f in &files {
        let lines = std::fs::read_to_string(f)
            .expect("readable")
            .lines()
            .count();
        if lines > MAX_LINES {
            let rel = f
                .strip_prefix(&root)
                .unwrap_or(f)
                .to_string_lossy()
                .replace('\\', "/");
            over.push((rel, lines));
        }
    }
    for (f, n) in &over {
        eprintln!("{f}: {n} lines (limit {MAX_LINES})");
    }
    let new: Vec<String> = over
        .iter()
        .filter(|(f, _)| !STILL_SHRINKING.contains(&f.as_str()))
        .map(|(f, n)| format!("{f} ({n} lines)"))
        .collect();
    assert!(new.is_empty(), "over {MAX_LINES} lines: {}", new.join(", "));
    assert!(files.len() > 20, "the workspace's files were found");
}

/// Every function in `code` (as [`code_of`] leaves it): its name, the
/// line of its `fn` and the line of its closing brace (1-based). A
/// declaration without a body (a trait method, an `extern` function) is
/// not a function here.
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let b = code.as_bytes();
    let line_at = |k: usize| 1 + b[..k].iter().filter(|&&c| c == b'\n').count();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 2 < b.len() {
        let at_fn = &b[i..i + 2] == b"fn"
            && (i == 0 || !is_ident(b[i - 1]))
            && b[i + 2].is_ascii_whitespace();
        if !at_fn {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = i + 2;
        while j < b.len() && b[j].is_ascii_whitespace() {
            j += 1;
        }
        let name_start = j;
        while j < b.len() && is_ident(b[j]) {
            j += 1;
        }
        let name = code[name_start..j].to_string();
        // The body: the first `{` outside parentheses and brackets, unless
        // a `;` ends the declaration first.
        let mut depth = 0i32;
        let mut body = None;
        while j < b.len() {
            match b[j] {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => break,
                b'{' if depth == 0 => {
                    body = Some(j);
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        let Some(open) = body else {
            i = j;
            continue;
        };
        let mut braces = 0i32;
        let mut end = open;
        for (k, &c) in b.iter().enumerate().skip(open) {
            match c {
                b'{' => braces += 1,
                b'}' => {
                    braces -= 1;
                    if braces == 0 {
                        end = k;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.push((name, line_at(start), line_at(end)));
        // Functions inside the body are found too.
        i = open + 1;
    }
    out
}

#[test]
fn functions_are_found_with_their_lines() {
    let code = code_of(
        "fn a() {\n    let s = \"}\n\";\n}\n\
         unsafe extern \"C\" {\n    fn ext(x: i32) -> i32;\n}\n\
         fn b<T: Fn(&[u8; 2]) -> u8>(t: T) -> u8 {\n    fn inner() {}\n    t(&[0; 2])\n}\n",
    );
    let found = functions(&code);
    let names: Vec<&str> = found.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, ["a", "b", "inner"], "{found:?}");
    assert_eq!((found[0].1, found[0].2), (1, 4));
    assert_eq!((found[1].1, found[1].2), (8, 11));
    assert_eq!((found[2].1, found[2].2), (9, 9));
}

#[test]
fn no_function_of_the_kernel_or_model_is_over_the_limit() {
    let root = workspace();
    let mut over = Vec::new();
    let mut checked = 0;
    for krate in SHORT_FN_CRATES {
        let mut files = Vec::new();
        rust_files(&root.join("crates").join(krate), &mut files);
        for f in &files {
            let code = code_of(&std::fs::read_to_string(f).expect("readable source"));
            for (name, from, to) in functions(&code) {
                checked += 1;
                let lines = to - from;
                if lines > MAX_FN_LINES {
                    let rel = f
                        .strip_prefix(&root)
                        .unwrap_or(f)
                        .to_string_lossy()
                        .replace('\\', "/");
                    over.push(format!("{rel}:{from} fn {name} ({lines} lines)"));
                }
            }
        }
    }
    assert!(checked > 500, "the functions were found ({checked})");
    assert!(
        over.is_empty(),
        "functions over {MAX_FN_LINES} lines (split them along their parts):\n{}",
        over.join("\n")
    );
}
