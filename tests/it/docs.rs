//! Docs that run: every `qsim ...` command in a ```sh block of README.md and
//! docs/*.md runs with the built binary and succeeds, and where README.md
//! shows a command's output, the figures shown are what it prints (within
//! the confidence interval printed beside them).
//!
//! A block preceded by `<!-- needs: cluster -->` is skipped: it needs Slurm
//! or Kubernetes (.ci/slurm-test.sh runs the Slurm recipe for real).

use std::path::{Path, PathBuf};
use std::process::Command;

/// A command found in the docs, with what the docs show it printing.
struct DocCommand {
    file: String,
    line: usize,
    text: String,
    shown: Vec<String>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Commands of a markdown file: lines starting `qsim ` in ```sh blocks, and
/// `$ qsim ...` lines (with the output that follows them) in any block.
fn commands(file: &str) -> Vec<DocCommand> {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<DocCommand> = Vec::new();
    let mut block: Option<(String, bool)> = None; // (language, skipped)
    let mut pending: Option<DocCommand> = None; // a command continued with '\'
    let mut showing = false; // lines after `$ qsim` belong to its output
    for (i, line) in lines.iter().enumerate() {
        if let Some(fence) = line.strip_prefix("```") {
            block = match block {
                Some(_) => None,
                None => {
                    let before = lines[..i].iter().rev().find(|l| !l.trim().is_empty());
                    let skipped = before.is_some_and(|l| l.contains("needs: cluster"));
                    Some((fence.trim().to_string(), skipped))
                }
            };
            showing = false;
            continue;
        }
        let Some((lang, skipped)) = &block else {
            continue;
        };
        if *skipped {
            continue;
        }
        if let Some(mut cmd) = pending.take() {
            let part = line.trim();
            match part.strip_suffix('\\') {
                Some(p) => {
                    cmd.text.push(' ');
                    cmd.text.push_str(p.trim());
                    pending = Some(cmd);
                }
                None => {
                    cmd.text.push(' ');
                    cmd.text.push_str(part);
                    out.push(cmd);
                }
            }
            continue;
        }
        let prompt = line.strip_prefix("$ ");
        let cmd = match prompt {
            Some(c) if c.starts_with("qsim ") => Some(c),
            _ if lang == "sh" && line.starts_with("qsim ") => Some(*line),
            _ => None,
        };
        match cmd {
            Some(c) => {
                let new = DocCommand {
                    file: file.to_string(),
                    line: i + 1,
                    text: c.trim_end_matches('\\').trim().to_string(),
                    shown: Vec::new(),
                };
                showing = prompt.is_some();
                if c.trim_end().ends_with('\\') {
                    pending = Some(new);
                } else {
                    out.push(new);
                }
            }
            None if showing && !line.trim().is_empty() => {
                out.last_mut().unwrap().shown.push(line.to_string());
            }
            None => {}
        }
    }
    out
}

/// Splits a command line like sh: whitespace-separated words, '...' and
/// "..." quoting, and a `#` comment at the start of a word.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                cur.get_or_insert_with(String::new);
            }
            (None, c) if c.is_whitespace() => out.extend(cur.take()),
            (None, '#') if cur.is_none() => break,
            (None, c) => cur.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(quote.is_none(), "unclosed quote in {line}");
    out.extend(cur);
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A scratch copy of what the documented commands read: the models and the
/// example data.
fn workspace(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("docs-run")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&root().join("models"), &dir.join("models"));
    copy_dir(&root().join("examples/data"), &dir.join("examples/data"));
    dir
}

/// A line of table output as words and figures: `451.0 ± 2.4 ms` is the
/// figure (451.0, Some(2.4)) followed by the word `ms`.
#[derive(Debug)]
enum Token {
    Word(String),
    Figure(f64, Option<f64>, usize), // value, CI half-width, decimals shown
}

fn tokens(line: &str) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::new();
    let mut ci_next = false;
    for raw in line.split_whitespace() {
        if raw == "±" {
            ci_next = true;
            continue;
        }
        let core = raw.trim_matches(|c: char| "():,%".contains(c));
        match core.parse::<f64>() {
            Ok(v) if !core.is_empty() => {
                let decimals = core.split_once('.').map_or(0, |(_, d)| d.len());
                match (ci_next, out.last_mut()) {
                    (true, Some(Token::Figure(_, ci, _))) => *ci = Some(v),
                    _ => out.push(Token::Figure(v, None, decimals)),
                }
            }
            _ => out.push(Token::Word(raw.to_string())),
        }
        ci_next = false;
    }
    out
}

fn words_of(t: &[Token]) -> Vec<&str> {
    t.iter()
        .filter_map(|t| match t {
            Token::Word(w) => Some(w.as_str()),
            Token::Figure(..) => None,
        })
        .collect()
}

/// Whether `printed` says what `shown` says: the same words, and each
/// figure within the larger of the two confidence intervals, widened by
/// the rounding of the shown digits (or, for a
/// figure shown without one, within its last shown digit and 1%).
fn agrees(shown: &str, printed: &str) -> bool {
    let (s, p) = (tokens(shown), tokens(printed));
    if words_of(&s) != words_of(&p) {
        return false;
    }
    let figures = |t: &[Token]| -> Vec<(f64, Option<f64>, usize)> {
        t.iter()
            .filter_map(|t| match t {
                Token::Figure(v, ci, d) => Some((*v, *ci, *d)),
                Token::Word(_) => None,
            })
            .collect()
    };
    let (fs, fp) = (figures(&s), figures(&p));
    fs.len() == fp.len()
        && fs.iter().zip(&fp).all(|(&(a, ca, d), &(b, cb, _))| {
            let rounding = 0.5 * 10f64.powi(-(d as i32));
            let tol = match (ca, cb) {
                (None, None) => rounding + 0.01 * a.abs(),
                // The CI is rounded to the same digit as the mean.
                _ => ca.unwrap_or(0.0).max(cb.unwrap_or(0.0)) + 2.0 * rounding,
            };
            (a - b).abs() <= tol * (1.0 + 1e-9)
        })
}

fn check_file(file: &str) {
    let cmds = commands(file);
    assert!(!cmds.is_empty(), "no qsim commands found in {file}");
    let dir = workspace(&file.replace('/', "_"));
    let mut failures = Vec::new();
    for c in &cmds {
        let args = words(&c.text);
        assert_eq!(args[0], "qsim", "{}:{}", c.file, c.line);
        let out = Command::new(env!("CARGO_BIN_EXE_qsim"))
            .args(&args[1..])
            .current_dir(&dir)
            .output()
            .expect("qsim runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            failures.push(format!(
                "{}:{}: `{}` exited with {:?}:\n{}",
                c.file,
                c.line,
                c.text,
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        for shown in &c.shown {
            if !stdout.lines().any(|l| agrees(shown, l)) {
                failures.push(format!(
                    "{}:{}: `{}` does not print (within its CIs) the line shown:\n  {}\nit prints:\n{}",
                    c.file, c.line, c.text, shown, stdout
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn readme_commands_run_and_print_what_is_shown() {
    check_file("README.md");
}

#[test]
fn docs_commands_run() {
    let mut files: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.ends_with(".md").then(|| format!("docs/{name}"))
        })
        .collect();
    files.sort();
    for f in files {
        check_file(&f);
    }
}

#[test]
fn the_extractor_sees_commands_skips_clusters_and_compares_figures() {
    let sweeps = commands("docs/sweeps.md");
    assert!(sweeps.iter().any(|c| {
        c.text
            .contains("--vary workload.population=100..1000:100 --vary")
    }));
    assert!(
        sweeps.iter().all(|c| !c.text.contains("SLURM")),
        "the cluster-only recipe is not run locally"
    );
    assert_eq!(
        words(r#"qsim run m.toml --set 'a={ x = "y" }'   # note"#),
        ["qsim", "run", "m.toml", "--set", r#"a={ x = "y" }"#]
    );
    assert!(agrees(
        "  throughput  1996 ± 9 /s",
        "  throughput        2001 ± 9 /s"
    ));
    assert!(!agrees(
        "  throughput  1996 ± 9 /s",
        "  throughput        2010 ± 9 /s"
    ));
    assert!(!agrees(
        "  response time  9.869 ± 0.048 s",
        "  response time  9.869 ± 0.048 ms"
    ));
    assert!(agrees("batch 15.90 (900.7 /s)", "batch 15.91 (901.0 /s)"));
}
