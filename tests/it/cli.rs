//! The `qsim` binary: exit codes, located errors, determinism across threads.

use crate::support::{qsim, qsim_json, refused, stderr};
use std::path::PathBuf;

/// Writes `text` to a fresh file under the target directory's temp area.
fn model_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-models");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Runs `qsim run` on a bad model and checks: exit code 2, no panic, and a
/// message naming `file:line:col`, the key path and the word expected.
fn check_rejected(name: &str, text: &str, line_col: &str, key_path: &str) {
    let path = model_file(name, text);
    let at = format!("{name}:{line_col}");
    refused(
        &["run", path.to_str().unwrap(), "--jobs", "1000"],
        &[&at, key_path],
    );
    // `qsim check` reports the same problem the same way.
    let out = qsim(&["check", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{name}: check exit code");
}

const HEAD: &str = "[workload]\ntype = \"open\"\narrival = { dist = \"exponential\", mean = 2.0 }\nroute = [\"cpu\"]\n\n";

#[test]
fn malformed_toml_is_located() {
    let path = model_file("malformed.toml", "[workload\ntype = \"open\"\n");
    let out = qsim(&["run", path.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("malformed.toml:1:"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn unknown_station_kind_is_located() {
    let text = format!(
        "{HEAD}[stations.cpu]\nkind = \"quueue\"\nservice = {{ dist = \"exponential\", mean = 1.0 }}\n"
    );
    check_rejected("kind.toml", &text, "7:8", "stations.cpu.kind");
}

#[test]
fn negative_rate_is_located() {
    let text = format!(
        "{HEAD}[stations.cpu]\nkind = \"queue\"\nservice = {{ dist = \"exponential\", mean = 1.0 }}\nspeed = {{ table = [{{ n = 1, rate = 2.0 }}, {{ n = 5, rate = -3.0 }}] }}\n"
    );
    check_rejected(
        "negative.toml",
        &text,
        "9:",
        "stations.cpu.speed.table[1].rate",
    );
}

#[test]
fn route_to_missing_station_is_located() {
    let text = "[workload]\ntype = \"open\"\narrival = { dist = \"exponential\", mean = 2.0 }\nroute = [\"cpu\", \"disk\"]\n\n[stations.cpu]\nkind = \"queue\"\nservice = { dist = \"exponential\", mean = 1.0 }\n";
    check_rejected("missing.toml", text, "4:", "workload.route");
}

#[test]
fn probabilities_not_summing_to_one_are_located() {
    let text = "[workload]\ntype = \"closed\"\npopulation = 3\n\n[workload.routing]\nsource = { cpu = 1.0 }\ncpu = { cpu = 0.5, sink = 0.4 }\n\n[stations.cpu]\nkind = \"queue\"\nservice = { dist = \"exponential\", mean = 1.0 }\n";
    check_rejected("sum.toml", text, "7:", "workload.routing.cpu");
}

#[test]
fn unstable_open_workload_is_reported_not_run() {
    // Arrivals every 0.5 s on average at a 1 s server: utilization 2.
    let text = format!("{HEAD}[stations.cpu]\nkind = \"queue\"\nservice = {{ dist = \"exponential\", mean = 1.0 }}\n").replace("mean = 2.0", "mean = 0.5");
    let path = model_file("unstable.toml", &text);
    let out = qsim(&["run", path.to_str().unwrap()]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("unstable"), "{err}");
    assert!(err.contains("unstable.toml:3:"), "{err}");
}

#[test]
fn same_seed_gives_identical_json_at_any_thread_count() {
    let run = |threads: &str| {
        let out = qsim(&[
            "run",
            "models/cpu_two_disks.toml",
            "--format",
            "json",
            "--seed",
            "42",
            "--replications",
            "6",
            "--jobs",
            "20000",
            "--threads",
            threads,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        out.stdout
    };
    let one = run("1");
    let two = run("2");
    assert!(!one.is_empty());
    assert_eq!(one, two, "JSON differs between --threads 1 and --threads 2");
    let other_seed = qsim(&[
        "run",
        "models/cpu_two_disks.toml",
        "--format",
        "json",
        "--seed",
        "43",
        "--replications",
        "6",
        "--jobs",
        "20000",
    ]);
    assert_ne!(one, other_seed.stdout, "the seed must matter");
}

#[test]
fn json_has_the_documented_shape() {
    let v = qsim_json(&[
        "run",
        "models/mm1.toml",
        "--format",
        "json",
        "--jobs",
        "20000",
    ]);
    for key in ["mean", "ci95"] {
        assert!(v["system"]["throughput_per_s"][key].is_number(), "{v}");
    }
    for p in ["p50", "p90", "p95", "p99", "p999"] {
        let key = format!("response_time_{p}_s");
        assert!(v["system"][&key]["mean"].is_number(), "{key} in {v}");
    }
    let stations = v["stations"].as_object().unwrap();
    assert!(!stations.is_empty());
    for (_, s) in stations {
        for key in [
            "throughput_per_s",
            "utilization",
            "mean_jobs",
            "response_time_s",
        ] {
            assert!(
                s[key]["mean"].is_number() && s[key]["ci95"].is_number(),
                "{key} in {s}"
            );
        }
    }
    assert!(v["classes"].is_object());
}

#[test]
fn spin_latches_report_spinning_and_sleeping_threads() {
    let path = model_file(
        "spin_metrics.toml",
        r#"
[simulation]
replications = 2
seed = 1
stop = { jobs = 20000 }
warmup = { jobs = 2000 }

[workload]
type = "closed"
population = 20
think = { dist = "exponential", mean = 0.0005 }
route = ["cpu", "latch"]

[stations.cpu]
kind = "queue"
servers = 4
discipline = "ps"
service = { dist = "exponential", mean = 0.0005 }

[stations.latch]
kind = "latch"
service = { dist = "exponential", mean = 0.0001 }
spin = { spin_wait_delay = 6, pause_cycles = 140, clock_ghz = 2.5, spin_rounds = 30, context_switch_s = 1e-5, cpu = "cpu" }

[metrics]
waiters = "stations.latch.mean_spinning + stations.latch.mean_sleeping"
"#,
    );
    let v = qsim_json(&["run", path.to_str().unwrap(), "--format", "json"]);
    let latch = &v["stations"]["latch"];
    for key in ["mean_spinning", "mean_sleeping"] {
        assert!(
            latch[key]["mean"].as_f64().unwrap() > 0.0 && latch[key]["ci95"].is_number(),
            "{key} in {latch}"
        );
        // Not a spin latch: no such keys.
        assert!(v["stations"]["cpu"].get(key).is_none(), "{key} at cpu");
    }
    let waiters = v["derived"]["waiters"]["mean"].as_f64().unwrap();
    let sum = latch["mean_spinning"]["mean"].as_f64().unwrap()
        + latch["mean_sleeping"]["mean"].as_f64().unwrap();
    assert!((waiters - sum).abs() <= 1e-9 * sum, "{waiters} vs {sum}");
    // A plain queue model has none either.
    let v = qsim_json(&[
        "run",
        "models/mm1.toml",
        "--format",
        "json",
        "--jobs",
        "5000",
    ]);
    let server = &v["stations"]["server"];
    assert!(server["mean_jobs"].is_object() && server.get("mean_spinning").is_none());
    assert!(server.get("mean_sleeping").is_none(), "{server}");
}

#[test]
fn bad_arguments_exit_with_2() {
    let out = qsim(&["run", "models/mm1.toml", "--set", "workload.no_such_key=3"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no_such_key"));
    let out = qsim(&["run", "models/does_not_exist.toml"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = qsim(&["run", "models/mm1.toml", "--jobs", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn set_with_a_pattern_changes_every_matching_station() {
    // Two network hops and a disk, each a fixed time: a hop's response time
    // is exactly its service value.
    let text = format!(
        "{HEAD}[stations.hop1]\nkind = \"delay\"\nservice = {{ dist = \"deterministic\", value = 0.01 }}\n\n\
         [stations.hop2]\nkind = \"delay\"\nservice = {{ dist = \"deterministic\", value = 0.01 }}\n\n\
         [stations.cpu]\nkind = \"delay\"\nservice = {{ dist = \"deterministic\", value = 0.01 }}\n"
    )
    .replace("route = [\"cpu\"]", "route = [\"hop1\", \"cpu\", \"hop2\"]");
    let path = model_file("hops.toml", &text);
    let path = path.to_str().unwrap();
    let v = qsim_json(&[
        "run",
        path,
        "--set",
        "stations.hop?.service.value=0.25",
        "--format",
        "json",
        "--jobs",
        "200",
        "--replications",
        "2",
    ]);
    let response = |name: &str| {
        v["stations"][name]["response_time_s"]["mean"]
            .as_f64()
            .unwrap()
    };
    for (name, want) in [("hop1", 0.25), ("hop2", 0.25), ("cpu", 0.01)] {
        let got = response(name);
        assert!((got - want).abs() < 1e-9, "{name}: {got}, expected {want}");
    }

    // A pattern that matches nothing: exit 2, the pattern and what is there.
    let out = qsim(&["check", path, "--set", "stations.hip*.service.value=1"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no key matches the pattern stations.hip*; the keys there are stations.hop1, stations.hop2, stations.cpu"),
        "{err}"
    );

    // All 32 latches of the fan-out model's station group: one problem in
    // the template is reported once, for every member.
    let out = qsim(&[
        "check",
        "models/spin_fanout.toml",
        "--set",
        "stations.instance.latch.spin.spin_wait_delay=30",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = qsim(&[
        "check",
        "models/spin_fanout.toml",
        "--set",
        "stations.instance.latch.spin.spin_wait_delay=-30",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.matches(": expected").count(), 1, "{err}");
    assert!(
        err.contains(": stations.instance[0].latch.spin.spin_wait_delay: expected"),
        "{err}"
    );
    assert!(
        err.contains("(and in 31 more members of the group)"),
        "{err}"
    );
}

#[test]
fn bistable_model_is_reported_with_both_answers() {
    // Fast state: ~10 jobs at the latch, arrivals (120-10)/0.15 = 733/s below
    // its 1000/s. Collapsed state: ~112 jobs at the latch, which then serves
    // 50/s, matched by (120-112)/0.15 = 53/s of arrivals. Both are stable.
    let text = "[workload]\ntype = \"closed\"\npopulation = 120\nthink = { dist = \"exponential\", mean = 0.15 }\nroute = [\"latch\"]\n\n[stations.latch]\nkind = \"latch\"\nservice = { dist = \"exponential\", mean = 0.001 }\nspeed = { table = [{ n = 50, rate = 1000 }, { n = 100, rate = 50 }] }\n";
    let path = model_file("bistable.toml", text);
    let v = qsim_json(&[
        "run",
        path.to_str().unwrap(),
        "--format",
        "json",
        "--jobs",
        "50000",
    ]);
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("bistable")),
        "{v}"
    );
    // A model whose speed does not fall gets no such warning.
    let out = qsim(&[
        "run",
        "models/cpu_two_disks.toml",
        "--format",
        "json",
        "--jobs",
        "20000",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["warnings"].as_array().unwrap().is_empty(), "{v}");
}

#[test]
fn solve_compare_agrees_with_simulation_on_every_product_form_model() {
    let mut checked = 0;
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/models")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let out = qsim(&[
            "solve",
            path.to_str().unwrap(),
            "--compare",
            "--format",
            "json",
            "--replications",
            "10",
        ]);
        if stderr(&out).contains("qsim solve has no method for client or overload behaviour") {
            // A model with clients that time out and retry (retry_storm):
            // refused as a usage error, with the command that does apply.
            assert_eq!(out.status.code(), Some(2), "{}", path.display());
            assert!(stderr(&out).contains("qsim run"), "{}", stderr(&out));
            continue;
        }
        assert!(out.status.success(), "{}: {}", path.display(), stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if v["rows"].is_null() {
            // Outside the exact methods: says why.
            assert_eq!(v["product_form"], serde_json::Value::Bool(false), "{v}");
            assert!(!v["reasons"].as_array().unwrap().is_empty(), "{v}");
            continue;
        }
        checked += 1;
        for row in v["rows"].as_array().unwrap() {
            let exact = row["analytic"].as_f64().unwrap();
            let mean = row["simulation"]["mean"].as_f64().unwrap();
            let ci = row["simulation"]["ci95"].as_f64().unwrap();
            // 10 replications: t(0.9995, 9) / t(0.975, 9) = 4.781 / 2.262 widens
            // the 95% half-width to 99.9%; 1e-6 covers a utilization of exactly
            // 1 (zero variance) against an MVA value of 1 - 1e-7.
            let half = ci * 4.781 / 2.262 + 1e-6 * exact.abs().max(1.0);
            assert!(
                (mean - exact).abs() <= half,
                "{}: {} analytic {exact}, simulated {mean} ± {ci}",
                path.display(),
                row["metric"]
            );
        }
    }
    assert!(
        checked >= 4,
        "only {checked} product-form models were compared"
    );
}

#[test]
fn fit_reports_coefficients_and_rejects_bad_csv() {
    // Exact USL data with sigma 0.05, kappa 0.001, lambda 100: the fit must
    // recover them (noise-free, so to many digits) and the peak sqrt((1-s)/k).
    let mut csv = String::from("concurrency,throughput\n");
    for n in [1.0f64, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0] {
        let x = 100.0 * n / (1.0 + 0.05 * (n - 1.0) + 0.001 * n * (n - 1.0));
        csv.push_str(&format!("{n},{x}\n"));
    }
    let path = model_file("usl.csv", &csv);
    let v = qsim_json(&["fit", path.to_str().unwrap(), "--format", "json"]);
    for (key, want) in [("sigma", 0.05), ("kappa", 0.001), ("lambda", 100.0)] {
        let got = v[key].as_f64().unwrap();
        assert!((got / want - 1.0).abs() < 1e-4, "{key}: {got}");
    }
    let peak = v["peak_concurrency"].as_f64().unwrap();
    assert!((peak - (0.95f64 / 0.001).sqrt()).abs() < 0.01, "{peak}");
    assert!(
        v["speed_toml"]
            .as_str()
            .unwrap()
            .contains("speed = { usl = {")
    );

    for (name, text, needle) in [
        ("few.csv", "concurrency,throughput\n1,10\n2,19\n", "point"),
        (
            "nan.csv",
            "concurrency,throughput\n1,10\n2,abc\n3,25\n4,30\n",
            "abc",
        ),
        (
            "neg.csv",
            "concurrency,throughput\n1,10\n-2,19\n3,25\n4,30\n",
            "-2",
        ),
        (
            "cols.csv",
            "threads,tps\n1,10\n2,19\n3,25\n4,30\n",
            "threads",
        ),
    ] {
        let path = model_file(name, text);
        let out = qsim(&["fit", path.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(name) && err.contains(needle), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
}

#[test]
fn model_warnings_are_printed_located_and_kept_in_json() {
    // One replication and a station no class visits: the model runs, and
    // both warnings are said on stderr (check and run) and in the JSON.
    let text = "[simulation]\nreplications = 1\n\n[workload]\ntype = \"closed\"\npopulation = 2\nroute = [\"cpu\"]\n\n[stations.cpu]\nkind = \"queue\"\nservice = { dist = \"exponential\", mean = 0.01 }\n\n[stations.idle]\nkind = \"delay\"\nservice = { dist = \"exponential\", mean = 1.0 }\n";
    let path = model_file("warned.toml", text);
    let p = path.to_str().unwrap();
    let wanted = [
        "warned.toml:2:16: warning: simulation.replications: one replication gives no confidence interval",
        "warned.toml:13:11: warning: stations.idle: station idle is never visited by any class",
    ];
    let out = qsim(&["check", p]);
    assert!(out.status.success(), "{}", stderr(&out));
    for w in wanted {
        assert!(stderr(&out).contains(w), "no `{w}` in:\n{}", stderr(&out));
    }
    let out = qsim(&["run", p, "--format", "json", "--jobs", "2000"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let json: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    for w in wanted {
        assert!(stderr(&out).contains(w), "no `{w}` in:\n{}", stderr(&out));
        // In JSON's `warnings` (and the table's `warning:` lines) the word
        // is not repeated inside the entry.
        let entry = w.replacen(": warning: ", ": ", 1);
        assert!(
            json.iter().any(|j| j.contains(&entry)),
            "no `{entry}` in {json:?}"
        );
    }
    let table = qsim(&["run", p, "--jobs", "2000"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        !text.contains("warning: warning") && !text.contains(": warning: "),
        "{text}"
    );
    assert!(
        text.contains("warning: ") && text.contains("warned.toml:13:11: stations.idle"),
        "{text}"
    );
}

const MM1: &str = "models/mm1.toml";

#[test]
fn a_slowed_station_passes_the_stability_check_of_a_loaded_model() {
    // mm1: arrivals 0.9/s at a 1 s server. Half as fast: rho = 0.9 * 1 / 0.5
    // = 1.8, the same refusal as the doubled mean given by --set.
    refused(
        &["whatif", MM1, "--speedup=-50%", "--jobs", "1000"],
        &["utilization 1.8 at station server", "unstable"],
    );
    refused(
        &["run", MM1, "--set", "stations.server.service.mean=*2"],
        &["utilization 1.8 at station server", "unstable"],
    );
    // 10% slower: rho = 0.9 / 0.9 = 1, still no steady state.
    refused(
        &["whatif", MM1, "--speedup=-10%", "--jobs", "1000"],
        &["utilization 1 at station server"],
    );
    // A factor of 1 compares the model with itself.
    refused(
        &["whatif", MM1, "--speedup", "0%", "--jobs", "1000"],
        &["--speedup 0%", "changes nothing", "hint:"],
    );
}

#[test]
fn budget_refusals_blame_the_key_where_it_was_set() {
    // 10^6 closed jobs need far more than 1 MiB: refused at the population
    // key (line 3, column 14), by check as by run.
    let text = "[workload]\ntype = \"closed\"\npopulation = 1000000\nthink = { dist = \"exponential\", mean = 1.0 }\nroute = [\"cpu\"]\n\n[stations.cpu]\nkind = \"queue\"\nservice = { dist = \"exponential\", mean = 0.001 }\n";
    let path = model_file("huge.toml", text);
    let p = path.to_str().unwrap();
    for cmd in ["check", "run"] {
        refused(
            &[cmd, p, "--max-memory", "1M"],
            &["huge.toml:3:14: workload.population", "raise --max-memory"],
        );
    }
    // Set by --set: the override is named.
    refused(
        &[
            "check",
            MM1,
            "--set",
            "workload.rate_per_s=0.5",
            "--max-memory",
            "1K",
        ],
        &["mm1.toml"],
    );
    // Set by a flag: the flag is blamed, not the model's key.
    let out = refused(
        &["run", MM1, "--jobs", "1000000000000"],
        &["--jobs 1000000000000:", "(lower --jobs)"],
    );
    assert!(
        !stderr(&out).contains("simulation.stop"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn run_flags_out_of_range_are_usage_errors_naming_the_flag() {
    refused(
        &["run", MM1, "--time", "1e15"],
        &["--time must be at most 1e12 s"],
    );
    refused(
        &[
            "sweep",
            MM1,
            "--vary",
            "workload.rate_per_s=0.1,0.2",
            "--time",
            "1e15",
        ],
        &["--time"],
    );
    refused(
        &["whatif", MM1, "--speedup", "10%", "--time", "1e15"],
        &["--time"],
    );
    refused(&["solve", MM1, "--time", "1e15"], &["--time"]);
    refused(
        &["run", MM1, "--threads", "100000"],
        &["--threads must be at most"],
    );
    refused(&["run", MM1, "--jobs", "0"], &["--jobs must be at least 1"]);
}

#[test]
fn outputs_are_checked_before_anything_runs() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let trace = tmp.join("early-trace.csv");
    let trace = trace.to_str().unwrap();
    let missing = "/nonexistent-qsim-dir/sub/f";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "run", MM1, "--jobs", "1000", "--trace", trace, "--plot", "x.jpg",
            ],
            "--plot x.jpg",
        ),
        (
            vec!["run", MM1, "--jobs", "1000", "--output", missing],
            "does not exist",
        ),
        (
            vec!["run", MM1, "--jobs", "1000", "--output", "models"],
            "is a directory",
        ),
        (
            vec!["run", MM1, "--jobs", "1000", "--trace", missing],
            "--trace",
        ),
        (
            vec![
                "whatif",
                MM1,
                "--speedup",
                "10%",
                "--jobs",
                "1000",
                "--output",
                missing,
            ],
            "does not exist",
        ),
        (
            vec![
                "sweep",
                MM1,
                "--vary",
                "workload.rate_per_s=0.1,0.2",
                "--jobs",
                "1000",
                "--output",
                "models/mm1.toml/x",
            ],
            "is a file",
        ),
        (
            vec!["fit", "examples/data/measurements.csv", "--plot", "fit.gif"],
            "--plot fit.gif",
        ),
        (
            vec!["merge", "--output", "models/mm1.toml/x", "a", "b"],
            "is a file",
        ),
        (vec!["plot", "/nonexistent-qsim-dir"], "no such sweep"),
    ];
    for (args, wanted) in cases {
        let out = refused(&args, &[wanted]);
        // Nothing ran: no table on stdout.
        assert!(out.stdout.is_empty(), "{args:?}: printed before refusing");
    }
}

#[test]
fn errors_caused_by_an_override_name_it() {
    refused(
        &["run", MM1, "--set", "stations.server.service.mean=-2"],
        &[
            "stations.server.service",
            "(set by --set stations.server.service.mean=-2)",
        ],
    );
    refused(
        &["run", MM1, "--set", "stations.server.service.mean=*2"],
        &["(set by --set stations.server.service.mean=*2)"],
    );
}

#[test]
fn hinted_override_paths_work() {
    let out = refused(
        &[
            "check",
            "models/pgo.toml",
            "--set",
            "stations.latch.service.mean=*0.5",
        ],
        &["hint:"],
    );
    let err = stderr(&out);
    // The path the hint gives, with its value, must be accepted as --set.
    let start = err
        .find("stations.latch.speed")
        .expect("hint names the curve");
    let hinted: String = err[start..]
        .chars()
        .take_while(|c| !c.is_whitespace())
        .collect();
    assert_eq!(hinted, "stations.latch.speed.usl.lambda=*1.25", "{err}");
    let ok = qsim(&["check", "models/pgo.toml", "--set", &hinted]);
    assert!(ok.status.success(), "{hinted}: {}", stderr(&ok));
}

#[test]
fn hints_say_what_to_write() {
    let open = |station: &str| {
        format!(
            "[workload]\ntype = \"open\"\nrate_per_s = 0.5\nroute = [\"cpu\"]\n\n[stations.cpu]\nkind = \"queue\"\n{station}service = {{ dist = \"exponential\", mean = 1.0 }}\n"
        )
    };
    let quoted = model_file(
        "quoted.toml",
        "[workload]\ntype = \"closed\"\npopulation = \"20\"\nroute = [\"cpu\"]\n\n[stations.cpu]\nkind = \"queue\"\nservice = { dist = \"exponential\", mean = 1.0 }\n",
    );
    refused(
        &["check", quoted.to_str().unwrap()],
        &[
            "quoted.toml:3:14: workload.population",
            "hint: remove the quotes",
            "population = 20",
        ],
    );
    let fifo = model_file("fifo.toml", &open("discipline = \"FIFO\"\n"));
    refused(
        &["check", fifo.to_str().unwrap()],
        &[
            "fifo.toml:8:14: stations.cpu.discipline",
            "did you mean \"fcfs\"?",
        ],
    );
    let plain = model_file("plain.toml", &open(""));
    let out = refused(
        &[
            "check",
            plain.to_str().unwrap(),
            "--set",
            "stations.cpu.servers=+50%",
        ],
        &["not written in the model", "--set stations.cpu.servers=N"],
    );
    assert!(
        !stderr(&out).contains("expected one of"),
        "{}",
        stderr(&out)
    );
    let csv = model_file(
        "threads.csv",
        "threads,throughput\n1,10\n2,19\n4,35\n8,60\n",
    );
    refused(
        &["fit", csv.to_str().unwrap(), "--x", "thread"],
        &["did you mean --x threads?"],
    );
}

#[test]
fn counts_agree_in_number_and_short_runs_say_so() {
    let out = qsim(&["check", MM1]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("(1 station, 1 class, 0 regions)"), "{text}");
    assert!(text.contains("(under a second on "), "{text}");
    assert!(!text.contains("about 0 s"), "{text}");
}

/// The CSV columns a command's --help lists are the header it writes.
#[test]
fn help_lists_the_csv_columns_each_command_writes() {
    let header = |args: &[&str]| {
        let out = qsim(args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .to_string()
    };
    let help = |cmd: &str| String::from_utf8_lossy(&qsim(&[cmd, "--help"]).stdout).into_owned();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "run",
            vec![
                "run",
                MM1,
                "--jobs",
                "1000",
                "--replications",
                "2",
                "--format",
                "csv",
            ],
        ),
        ("solve", vec!["solve", MM1, "--format", "csv"]),
        (
            "solve",
            vec![
                "solve",
                "models/cpu_two_disks.toml",
                "--population-range",
                "1..3:1",
                "--format",
                "csv",
            ],
        ),
        (
            "fit",
            vec![
                "fit",
                "examples/data/measurements.csv",
                "--x",
                "threads",
                "--y",
                "tps",
                "--format",
                "csv",
            ],
        ),
        (
            "whatif",
            vec![
                "whatif",
                MM1,
                "--speedup",
                "10%",
                "--jobs",
                "1000",
                "--replications",
                "2",
                "--format",
                "csv",
            ],
        ),
    ];
    for (cmd, args) in cases {
        let h = header(&args);
        assert!(h.contains(','), "{args:?}: no CSV header: {h}");
        assert!(
            help(cmd).contains(&h),
            "qsim {cmd} --help does not list the columns {h}"
        );
    }
}
