//! Docs that run: the README and docs/*.md are one tour, run in order in ONE
//! scratch workspace, as a reader who follows them would (a command may find
//! what an earlier one wrote). For each file, in order of appearance:
//!
//! - every `qsim ...` line of a ```sh block, and every `$ qsim ...` line of
//!   any block, runs with the built binary and succeeds; where a `$` line is
//!   followed by output, the figures shown are what it prints (within the
//!   confidence interval printed beside them);
//! - a file name the prose after a ```sh block names (`` `hysteresis.json` ``)
//!   was written while that block ran;
//! - every ```toml block parses as TOML, and one that is a whole model
//!   (stations and a workload or classes) passes `qsim check`;
//! - a `qsim` command inside a ```yaml block (a Kubernetes Job's `args`)
//!   runs too, with the pod's environment and mounts replaced by index 0 and
//!   workspace directories, and a short run length added.
//!
//! A block preceded by `<!-- needs: cluster -->` is skipped: it needs Slurm
//! or Kubernetes (.ci/slurm-test.sh runs the Slurm recipe byte for byte).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// A command found in the docs, with what the docs show it printing.
struct DocCommand {
    file: String,
    line: usize,
    text: String,
    shown: Vec<String>,
    /// The code block it is in (numbered within its file).
    block: usize,
}

/// Something in the docs the tour checks, in reading order.
enum Item {
    /// A command to run (from a sh block, a `$` line, or a YAML block).
    Run(DocCommand),
    /// File names the prose after sh block `block` names: written by it.
    Written {
        file: String,
        line: usize,
        block: usize,
        names: Vec<String>,
    },
    /// A TOML block: parses; a whole model passes `qsim check`.
    Toml {
        file: String,
        line: usize,
        text: String,
    },
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// File names in the `code spans` of prose: a name with an extension of
/// what qsim writes, no spaces, braces or wildcards. A path that names a
/// checked-in file of the repository is not something a command writes.
fn named_files(prose: &str) -> Vec<String> {
    const WRITTEN: [&str; 6] = [".json", ".jsonl", ".csv", ".png", ".svg", ".html"];
    prose
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            let checked_in = s.contains('/') && root().join(s).exists();
            let plain = !s.starts_with(['.', '-'])
                && !s.contains(|c: char| c.is_whitespace() || "{}*<>$=".contains(c));
            WRITTEN.iter().any(|e| s.ends_with(e)) && plain && !checked_in
        })
        .map(str::to_string)
        .collect()
}

/// A `qsim` command in a YAML block: the line starting with `qsim` and the
/// lines below it at the same indentation (a folded scalar), joined.
fn yaml_command(lines: &[&str], at: usize) -> String {
    let indent = lines[at].len() - lines[at].trim_start().len();
    let mut text = lines[at].trim().to_string();
    for l in &lines[at + 1..] {
        let i = l.len() - l.trim_start().len();
        if l.trim().is_empty() || i != indent {
            break;
        }
        text.push(' ');
        text.push_str(l.trim());
    }
    text
}

/// The command a Kubernetes pod with completion index 0 would run, in the
/// workspace: `$JOB_COMPLETION_INDEX` is 0, the mounts `/models` and
/// `/results` are the workspace's `models` and `results`, and a short run
/// length is added (the tour checks that the recipe works, not its figures).
fn pod_command(text: &str) -> String {
    let t = text
        .replace("$JOB_COMPLETION_INDEX", "0")
        .replace("${JOB_COMPLETION_INDEX}", "0")
        .replace(" /models/", " models/")
        .replace("\"/results/", "\"results/")
        .replace(" /results/", " results/");
    format!("{t} --replications 2 --jobs 2000")
}

/// The items of a markdown file, in order.
fn items(file: &str) -> Vec<Item> {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<Item> = Vec::new();
    let mut block: Option<(String, bool, usize)> = None; // (language, skipped, first line)
    let mut blocks = 0;
    let mut pending: Option<DocCommand> = None; // a command continued with '\'
    let mut showing = false; // lines after `$ qsim` belong to its output
    let mut ran = false; // the open block has commands
    let mut prose: Option<(usize, usize, String)> = None; // after a sh block that ran
    for (i, line) in lines.iter().enumerate() {
        if let Some(fence) = line.strip_prefix("```") {
            block = match block.take() {
                Some((lang, skipped, first)) => {
                    if lang == "toml" && !skipped {
                        out.push(Item::Toml {
                            file: file.to_string(),
                            line: first + 1,
                            text: lines[first..i].join("\n"),
                        });
                    }
                    if lang == "sh" && ran {
                        prose = Some((i + 1, blocks, String::new()));
                    }
                    None
                }
                None => {
                    if let Some((line, block, text)) = prose.take() {
                        push_written(&mut out, file, line, block, &text);
                    }
                    let before = lines[..i].iter().rev().find(|l| !l.trim().is_empty());
                    let skipped = before.is_some_and(|l| l.contains("needs: cluster"));
                    blocks += 1;
                    ran = false;
                    Some((fence.trim().to_string(), skipped, i + 1))
                }
            };
            showing = false;
            continue;
        }
        let Some((lang, skipped, _)) = &block else {
            if line.starts_with('#') {
                if let Some((line, block, text)) = prose.take() {
                    push_written(&mut out, file, line, block, &text);
                }
            } else if let Some((_, _, text)) = &mut prose {
                text.push_str(line);
                text.push('\n');
            }
            continue;
        };
        if *skipped {
            continue;
        }
        if lang == "yaml" && line.trim_start().starts_with("qsim ") {
            out.push(Item::Run(DocCommand {
                file: file.to_string(),
                line: i + 1,
                text: pod_command(&yaml_command(&lines, i)),
                shown: Vec::new(),
                block: blocks,
            }));
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
                    out.push(Item::Run(cmd));
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
                ran = true;
                let new = DocCommand {
                    file: file.to_string(),
                    line: i + 1,
                    text: c.trim_end_matches('\\').trim().to_string(),
                    shown: Vec::new(),
                    block: blocks,
                };
                showing = prompt.is_some();
                if c.trim_end().ends_with('\\') {
                    pending = Some(new);
                } else {
                    out.push(Item::Run(new));
                }
            }
            None if showing && !line.trim().is_empty() => {
                if let Some(Item::Run(last)) = out.last_mut() {
                    last.shown.push(line.to_string());
                }
            }
            None => {}
        }
    }
    if let Some((line, block, text)) = prose.take() {
        push_written(&mut out, file, line, block, &text);
    }
    out
}

fn push_written(out: &mut Vec<Item>, file: &str, line: usize, block: usize, text: &str) {
    let names = named_files(text);
    if !names.is_empty() {
        out.push(Item::Written {
            file: file.to_string(),
            line,
            block,
            names,
        });
    }
}

/// The commands of a file (for the extractor's own test).
fn commands(file: &str) -> Vec<DocCommand> {
    items(file)
        .into_iter()
        .filter_map(|i| match i {
            Item::Run(c) => Some(c),
            _ => None,
        })
        .collect()
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

/// Files under `dir` (recursively) modified at or after `since`, by name.
fn written_since(dir: &Path, since: SystemTime, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let meta = entry.metadata().unwrap();
        if meta.is_dir() {
            written_since(&path, since, out);
        } else if meta.modified().is_ok_and(|m| m >= since) {
            out.push(path);
        }
    }
}

/// The time by the file system's own clock: the modification time of a
/// marker file touched now, beside the workspace. File times come from a
/// coarse clock that can lag `SystemTime::now()` by a tick, so a file
/// written right after a block starts could look older than its start.
fn file_clock_now(dir: &Path) -> SystemTime {
    let marker = dir.with_extension("clock");
    std::fs::write(&marker, b"").expect("marker file");
    std::fs::metadata(&marker)
        .and_then(|m| m.modified())
        .expect("marker time")
}

/// Whether `text` is a whole model: stations, and a workload or classes.
fn is_model(text: &str) -> bool {
    let has = |t: &str| text.lines().any(|l| l.trim_start().starts_with(t));
    has("[stations.") && (has("[workload]") || has("[classes."))
}

/// Runs `qsim ARGS` in `dir`.
fn qsim(dir: &Path, args: &[String]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_qsim"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("qsim runs")
}

/// Runs the items of `files` in order in one workspace and returns every
/// failure, each located at file:line.
fn tour(files: &[String]) -> Vec<String> {
    let dir = workspace("tour");
    let mut failures = Vec::new();
    let mut started: HashMap<(String, usize), SystemTime> = HashMap::new();
    for file in files {
        let items = items(file);
        assert!(!items.is_empty(), "nothing to check in {file}");
        for item in items {
            match item {
                Item::Run(c) => {
                    started
                        .entry((c.file.clone(), c.block))
                        .or_insert_with(|| file_clock_now(&dir));
                    let args = words(&c.text);
                    assert_eq!(args[0], "qsim", "{}:{}", c.file, c.line);
                    let out = qsim(&dir, &args[1..]);
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
                Item::Written {
                    file,
                    line,
                    block,
                    names,
                } => {
                    let Some(&since) = started.get(&(file.clone(), block)) else {
                        continue;
                    };
                    let mut written = Vec::new();
                    written_since(&dir, since, &mut written);
                    for name in names {
                        let base = Path::new(&name).file_name().unwrap();
                        if !written.iter().any(|p| p.file_name() == Some(base)) {
                            failures.push(format!(
                                "{file}:{line}: the prose names `{name}`, but the commands above it wrote no such file (they wrote: {})",
                                written
                                    .iter()
                                    .filter_map(|p| p.file_name())
                                    .map(|n| n.to_string_lossy().into_owned())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ));
                        }
                    }
                }
                Item::Toml { file, line, text } => {
                    if let Err(e) = text.parse::<toml::Table>() {
                        failures.push(format!("{file}:{line}: the TOML block does not parse: {e}"));
                        continue;
                    }
                    if is_model(&text) {
                        let name = format!("{}-{line}.toml", file.replace(['/', '.'], "_"));
                        let path = dir.join("doc-blocks").join(&name);
                        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                        std::fs::write(&path, &text).unwrap();
                        let out = qsim(&dir, &["check".into(), format!("doc-blocks/{name}")]);
                        if !out.status.success() {
                            failures.push(format!(
                                "{file}:{line}: the model in the TOML block fails `qsim check`:\n{}",
                                String::from_utf8_lossy(&out.stderr)
                            ));
                        }
                    }
                }
            }
        }
    }
    failures
}

/// README.md, then docs/*.md in name order.
fn tour_files() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.ends_with(".md").then(|| format!("docs/{name}"))
        })
        .collect();
    files.sort();
    files.insert(0, "README.md".to_string());
    files
}

#[test]
fn the_readme_and_docs_tour_runs_in_one_workspace_in_order() {
    let failures = tour(&tour_files());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_extractor_sees_commands_skips_clusters_and_compares_figures() {
    let sweeps = commands("docs/sweeps.md");
    assert!(sweeps.iter().any(|c| {
        c.text.contains(
            "--vary regions.throttle.limit=none,50,100,200 --vary workload.population=100..1000:100",
        )
    }));
    assert!(
        sweeps.iter().all(|c| !c.text.contains("SLURM")),
        "the cluster-only recipe is not run locally"
    );
    // The Kubernetes Job's command, as pod 0 runs it.
    let pod = sweeps
        .iter()
        .find(|c| c.text.contains("--shard"))
        .expect("the YAML block's command is extracted");
    assert!(pod.text.starts_with("qsim sweep models/"), "{}", pod.text);
    assert!(pod.text.contains("--shard \"0/16\""), "{}", pod.text);
    assert!(
        pod.text.contains("--output \"results/shard-0\""),
        "{}",
        pod.text
    );
    assert_eq!(
        words(r#"qsim run m.toml --set 'a={ x = "y" }'   # note"#),
        ["qsim", "run", "m.toml", "--set", r#"a={ x = "y" }"#]
    );
    assert_eq!(
        named_files(
            "writes `summary.json` and `x.png`/`.svg`, `{a,b}.csv`, `--trace FILE.csv`, `README.md`"
        ),
        ["summary.json", "x.png"]
    );
    assert!(is_model("[workload]\ntype = \"closed\"\n[stations.cpu]\n"));
    assert!(!is_model("[stations.cpu]\nkind = \"queue\"\n"));
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
