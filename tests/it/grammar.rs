//! One command-line grammar: generated completions and manual page cover
//! every subcommand, shared options read the same everywhere, `qsim merge
//! --output`, `qsim fit --format csv`, and the 0-based shard numbering.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn qsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_qsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("qsim runs")
}

fn ok(args: &[&str]) -> String {
    let out = qsim(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("grammar")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The subcommands, read from `qsim --help` so a new one is covered too.
fn subcommands() -> Vec<String> {
    let help = ok(&["--help"]);
    let list = help
        .split("Commands:")
        .nth(1)
        .expect("a Commands: section")
        .split("Options:")
        .next()
        .unwrap();
    let names: Vec<String> = list
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| *w != "help")
        .map(str::to_string)
        .collect();
    assert!(names.len() >= 9, "{names:?}");
    names
}

/// The long options `qsim CMD --help` lists, with their value names.
fn options(cmd: &str) -> Vec<(String, String)> {
    ok(&[cmd, "--help"])
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("-o, ").unwrap_or(l);
            let rest = l.strip_prefix("--")?;
            let mut it = rest.split_whitespace();
            let name = it.next()?.to_string();
            let value = it.next().filter(|v| v.starts_with('<')).unwrap_or("");
            Some((name, value.to_string()))
        })
        .collect()
}

#[test]
fn bash_completion_is_valid_and_knows_every_subcommand() {
    let dir = scratch("completions");
    let script = ok(&["completions", "bash"]);
    let path = dir.join("qsim.bash");
    std::fs::write(&path, &script).unwrap();
    let check = Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(
        check.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    for sub in subcommands() {
        assert!(
            script.contains(&format!("qsim__subcmd__{sub}")),
            "no {sub} in the completion"
        );
    }
    for shell in ["zsh", "fish", "powershell"] {
        assert!(ok(&["completions", shell]).contains("merge"), "{shell}");
    }
}

#[test]
fn man_page_lists_every_subcommands_options() {
    let page = ok(&["man"]);
    assert!(
        page.starts_with(".ie") || page.contains(".TH qsim 1"),
        "not roff"
    );
    for sub in subcommands() {
        assert!(
            page.contains(&format!(".SH \"QSIM {}\"", sub.to_uppercase())),
            "no section for {sub}"
        );
        for (opt, _) in options(&sub) {
            // roff escapes every '-'.
            let escaped = format!("\\-\\-{}", opt.replace('-', "\\-"));
            assert!(page.contains(&escaped), "man page lacks {sub} --{opt}");
        }
    }
    let dir = scratch("man");
    ok(&["man", "--output", dir.to_str().unwrap()]);
    for sub in subcommands() {
        assert!(
            dir.join(format!("qsim-{sub}.1")).is_file(),
            "no qsim-{sub}.1"
        );
    }
}

#[test]
fn shared_options_read_the_same_in_every_subcommand() {
    let mut seen: Vec<(String, String, String)> = Vec::new();
    for sub in subcommands() {
        let help = ok(&[&sub, "--help"]);
        for (opt, value) in options(&sub) {
            if ["seed", "threads", "replications", "jobs", "time", "set"].contains(&opt.as_str()) {
                if let Some((other, _, v)) = seen.iter().find(|(_, o, _)| *o == opt) {
                    assert_eq!(*v, value, "--{opt} of {sub} and {other}");
                }
                seen.push((sub.clone(), opt.clone(), value.clone()));
            }
            if opt == "output" {
                // Always -o as well, and named for what it is.
                assert!(help.contains("-o, --output"), "{sub}: --output without -o");
                assert!(
                    ["<FILE>", "<DIR>"].contains(&value.as_str()),
                    "{sub}: {value}"
                );
            }
        }
        if help.contains("--format") {
            // A format a command lists is one it implements: the same word
            // means the same thing everywhere.
            for line in help.lines().map(str::trim) {
                if let Some(v) = line.strip_prefix("- ") {
                    let word = v.split(':').next().unwrap();
                    assert!(
                        [
                            "table",
                            "json",
                            "csv",
                            "bash",
                            "zsh",
                            "fish",
                            "powershell",
                            "elvish"
                        ]
                        .contains(&word),
                        "{sub}: format {word}"
                    );
                }
            }
        }
    }
}

fn sweep_shards(dir: &Path, n: u32) -> Vec<String> {
    (0..n)
        .map(|i| {
            let out = dir.join(format!("shard-{i}"));
            ok(&[
                "sweep",
                "models/mm1.toml",
                "--vary",
                "workload.rate_per_s=0.3,0.5,0.7",
                "--jobs",
                "2000",
                "--replications",
                "2",
                "--shard",
                &format!("{i}/{n}"),
                "--output",
                out.to_str().unwrap(),
            ]);
            out.to_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn merge_takes_output_like_the_other_commands() {
    let dir = scratch("merge");
    let shards = sweep_shards(&dir, 2);
    let new = dir.join("new");
    let mut args = vec!["merge", "--no-charts", "--output", new.to_str().unwrap()];
    args.extend(shards.iter().map(String::as_str));
    let out = qsim(&args);
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The old positional form still works, says it is deprecated, and
    // writes the same bytes.
    let old = dir.join("old");
    let mut args = vec!["merge", "--no-charts", old.to_str().unwrap()];
    args.extend(shards.iter().map(String::as_str));
    let out = qsim(&args);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("deprecated") && err.contains("--output"),
        "{err}"
    );
    for f in ["points.csv", "points.jsonl", "summary.json"] {
        assert_eq!(
            std::fs::read(new.join(f)).unwrap(),
            std::fs::read(old.join(f)).unwrap(),
            "{f}"
        );
    }

    // One directory alone is neither form: a usage error.
    let out = qsim(&["merge", &shards[0]]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_one_based_shard_is_refused_with_the_fix() {
    let out = qsim(&[
        "sweep",
        "models/mm1.toml",
        "--vary",
        "workload.rate_per_s=0.3,0.5",
        "--shard",
        "4/4",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("numbered from 0") && err.contains("--array=0-3"),
        "{err}"
    );
}

#[test]
fn fit_writes_csv_with_the_json_names() {
    let data = "examples/data/measurements.csv";
    let args = ["fit", data, "--x", "threads", "--y", "tps"];
    let json: serde_json::Value =
        serde_json::from_str(&ok(&[&args[..], &["--format", "json"]].concat())).unwrap();
    let csv = ok(&[&args[..], &["--format", "csv"]].concat());
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("metric,value,std_error,ci95"));
    let mut rows = 0;
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 4, "{line}");
        let value: f64 = f[1].parse().unwrap();
        assert_eq!(Some(value), json[f[0]].as_f64(), "{}", f[0]);
        if !f[2].is_empty() {
            let se: f64 = f[2].parse().unwrap();
            assert_eq!(Some(se), json["std_errors"][f[0]].as_f64(), "{}", f[0]);
        }
        if !f[3].is_empty() {
            let ci: f64 = f[3].parse().unwrap();
            assert_eq!(Some(ci), json["ci95"][f[0]].as_f64(), "{}", f[0]);
        }
        rows += 1;
    }
    assert_eq!(rows, 8);
    // --output writes the same bytes to a file, and never over the input.
    let dir = scratch("fit");
    let file = dir.join("fit.csv");
    let printed = ok(&[
        &args[..],
        &["--format", "csv", "-o", file.to_str().unwrap()],
    ]
    .concat());
    assert!(printed.is_empty());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), csv);
    let out = qsim(&[&args[..], &["-o", data]].concat());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn checked_in_schema_is_what_qsim_schema_prints() {
    let printed = ok(&["schema"]);
    let file = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/qsim-model.schema.json"),
    )
    .unwrap();
    assert_eq!(
        printed, file,
        "docs/qsim-model.schema.json is stale: regenerate it with `qsim schema`"
    );
    let schema: serde_json::Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["$id"], qsim_model::format::SCHEMA_ID);
    // Every station kind the format documents is in the schema, with a rule
    // that admits exactly the keys its descriptor declares.
    let station = &schema["$defs"]["station"];
    let kinds = &station["properties"]["kind"]["enum"];
    let rules = station["allOf"].as_array().unwrap();
    for k in ["delay", "queue", "latch", "batch", "link", "fork", "join"] {
        assert!(kinds.as_array().unwrap().iter().any(|v| v == k), "{k}");
        let rule = rules
            .iter()
            .find(|r| r["if"]["properties"]["kind"]["const"] == k)
            .unwrap_or_else(|| panic!("no if/then rule for kind {k}"));
        let then = rule["then"]["properties"].as_object().unwrap();
        let mut allowed: Vec<&str> = then.keys().map(String::as_str).collect();
        let mut declared = qsim_model::station_kind(k).unwrap().key_names();
        allowed.sort_unstable();
        declared.sort_unstable();
        assert_eq!(allowed, declared, "{k}");
        assert_eq!(rule["then"]["additionalProperties"], false, "{k}");
    }
}

/// Runs the generated bash completion as bash would at `words` (the last
/// being the word under the cursor) and returns what it offers.
fn bash_offers(script: &Path, words: &[&str]) -> Vec<String> {
    let exe = env!("CARGO_BIN_EXE_qsim");
    let quoted: Vec<String> = std::iter::once(exe)
        .chain(words.iter().copied())
        .map(|w| format!("'{w}'"))
        .collect();
    let cword = words.len();
    let prev = if cword >= 2 { words[cword - 2] } else { exe };
    let program = format!(
        "source '{}'\nCOMP_WORDS=({})\nCOMP_CWORD={cword}\n_qsim '{exe}' '{}' '{prev}'\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        words[cword - 1],
    );
    let out = Command::new("bash")
        .arg("-c")
        .arg(&program)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "bash: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        // `printf` prints one empty line for an empty array.
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// `--set`, `--vary`, `--change` and `--at` complete the model's key paths
/// (not file names), through the hidden `qsim complete-keys`.
#[test]
fn bash_completes_key_paths_from_the_model() {
    let dir = scratch("key-completion");
    let path = dir.join("qsim.bash");
    std::fs::write(&path, ok(&["completions", "bash"])).unwrap();
    let model = "models/cpu_two_disks.toml";
    let set = bash_offers(&path, &["run", model, "--set", "stations.cpu.s"]);
    assert!(set.iter().any(|w| w == "stations.cpu.servers="), "{set:?}");
    assert!(
        set.iter().all(|w| w.starts_with("stations.cpu.s")),
        "{set:?}"
    );
    let vary = bash_offers(&path, &["sweep", model, "--vary", "work"]);
    assert!(vary.iter().any(|w| w == "workload.population="), "{vary:?}");
    let change = bash_offers(&path, &["whatif", model, "--change", "stations.*"]);
    assert!(
        change.iter().any(|w| w == "stations.*.service.mean="),
        "{change:?}"
    );
    // Other options still complete file names.
    let out = bash_offers(&path, &["run", model, "--output", "models/mm1"]);
    assert_eq!(out, ["models/mm1.toml"]);
    // Without a model nothing is offered, and no error is printed.
    assert!(bash_offers(&path, &["run", "--set", "sta"]).is_empty());
    // zsh and fish call back the same command for the same options.
    let zsh = ok(&["completions", "zsh"]);
    assert!(zsh.contains(":PATH=VALUE:_qsim_key_paths'"), "zsh");
    assert!(zsh.contains("complete-keys"), "zsh");
    let fish = ok(&["completions", "fish"]);
    assert!(
        fish.lines().any(|l| l.contains("using_subcommand sweep\"")
            && l.contains("-l vary ")
            && l.ends_with("-a \"(__qsim_key_paths)\"")),
        "fish"
    );
    let keys = ok(&["complete-keys", model, "stations.disk"]);
    assert!(
        keys.lines().any(|l| l == "stations.disk1.service.mean"),
        "{keys}"
    );
}
