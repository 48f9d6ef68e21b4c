//! One vocabulary: every metric name in the run JSON, the run CSV and the
//! sweep CSV and JSON lines comes from the one table (`qsim_kernel::METRICS`),
//! and every table entry appears wherever its scope says it should.

use qsim_kernel::{METRICS, Metric, MetricScope, Unit, metrics};
use qsim_sweep::record::columns as sweep_columns;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

/// Every scope has a member, every optional metric applies somewhere: an
/// SLA, a batch station, a spin latch, a region, two classes, a station
/// with a capacity and station tails.
const ALL_METRICS_MODEL: &str = r#"
[simulation]
replications = 2
seed = 3
stop = { jobs = 4000 }
warmup = { jobs = 400 }
sla_s = 0.002
station_tails = true

[classes.web]
type = "closed"
population = 6
think = { dist = "exponential", mean = 0.001 }
route = ["cpu", "latch", "fsync", "pool", "disk"]

[classes.batch]
type = "closed"
population = 2
think = { dist = "exponential", mean = 0.002 }
route = ["cpu", "fsync"]

[stations.cpu]
kind = "queue"
servers = 2
discipline = "ps"
service = { dist = "exponential", mean = 0.0002 }

[stations.latch]
kind = "latch"
service = { dist = "exponential", mean = 0.0001 }
spin = { spin_wait_delay = 6, pause_cycles = 140, clock_ghz = 2.5, spin_rounds = 30, context_switch_s = 1e-5, cpu = "cpu" }

[stations.fsync]
kind = "batch"
service = { dist = "deterministic", mean = 0.0005 }
max_batch = 8

[stations.pool]
kind = "queue"
service = { dist = "exponential", mean = 0.0001 }
capacity = 2

[stations.disk]
kind = "queue"
service = { dist = "exponential", mean = 0.0002 }
capacity = 1
when_full = "block"

[regions.gate]
stations = ["latch"]
limit = 3

[metrics]
power = "throughput_per_s / response_time_s"
"#;

fn model_path() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("names");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("all_metrics.toml");
    std::fs::write(&path, ALL_METRICS_MODEL).unwrap();
    path
}

fn qsim(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_qsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("qsim runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn names(scope: MetricScope) -> BTreeSet<String> {
    metrics(scope)
        .filter(|m| !crate::clients::OVERLOAD_METRICS.contains(&m.name))
        .map(|m| m.name.to_string())
        .collect()
}

/// The metric keys of one JSON object (a station's `kind` and its
/// per-class `classes` are not metrics).
fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .filter(|k| *k != "kind" && *k != "classes")
        .cloned()
        .collect()
}

/// The per-class figures this model cannot show: its capacity at `pool`
/// loses jobs, so departures per completion are no visit count and
/// `visits` is left out (tests/it/perclass.rs shows it).
fn per_class_expected() -> BTreeSet<String> {
    let mut all = names(MetricScope::StationClass);
    all.remove(qsim_kernel::names::VISITS);
    all
}

#[test]
fn the_table_has_one_entry_per_scope_and_name() {
    let mut seen = BTreeSet::new();
    for m in METRICS.iter() {
        assert!(seen.insert((m.scope.key(), m.name)), "{m:?} twice");
        // Units in names: times end in _s, rates in _per_s.
        match m.unit {
            Unit::Seconds => assert!(m.name.ends_with("_s"), "{m:?}"),
            Unit::PerSecond => assert!(m.name.ends_with("_per_s"), "{m:?}"),
            Unit::Fraction | Unit::Jobs | Unit::Visits | Unit::Attempts => {}
        }
    }
}

#[test]
fn run_json_and_csv_use_the_table_names_and_every_entry_appears() {
    let path = model_path();
    let path = path.to_str().unwrap();
    let v: Value = serde_json::from_str(&qsim(&[
        "run",
        path,
        "--format",
        "json",
        "--no-bistability-check",
    ]))
    .unwrap();
    // Every table entry appears in its scope's objects: this model makes each
    // apply somewhere (batch figures at fsync only, spin figures at the latch).
    assert_eq!(keys(&v["system"]), names(MetricScope::System));
    let mut at_stations = BTreeSet::new();
    let mut by_class = BTreeSet::new();
    for (_, s) in v["stations"].as_object().unwrap() {
        let k = keys(s);
        assert!(k.is_subset(&names(MetricScope::Station)), "{k:?}");
        at_stations.extend(k);
        if let Some(classes) = s.get("classes") {
            for (_, c) in classes.as_object().unwrap() {
                let k = keys(c);
                assert!(k.is_subset(&names(MetricScope::StationClass)), "{k:?}");
                by_class.extend(k);
            }
        }
    }
    assert_eq!(at_stations, names(MetricScope::Station));
    assert_eq!(by_class, per_class_expected());
    for (scope, key) in [
        (MetricScope::Class, "classes"),
        (MetricScope::Region, "regions"),
    ] {
        let items = v[key].as_object().unwrap();
        assert!(!items.is_empty(), "{key}");
        for (_, item) in items {
            assert_eq!(keys(item), names(scope), "{key}");
        }
    }
    assert!(v["derived"]["power"]["mean"].is_number(), "{v}");

    let csv = qsim(&["run", path, "--format", "csv", "--no-bistability-check"]);
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some(qsim_report::CSV_HEADER));
    let mut rows = BTreeSet::new();
    for line in lines {
        // Warnings are comment lines (a short run's p99.9, say).
        if line.starts_with("# warning: ") {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        if f[0] == qsim_report::DERIVED_SCOPE {
            assert_eq!(f[2], qsim_report::DERIVED_METRIC);
            continue;
        }
        let scope = MetricScope::ALL
            .into_iter()
            .find(|s| s.key() == f[0])
            .unwrap_or_else(|| panic!("scope {} in {line}", f[0]));
        // A class at a station is a row of its station, `cpu.classes.web`.
        let scope = if scope == MetricScope::Station && f[1].contains(".classes.") {
            MetricScope::StationClass
        } else {
            scope
        };
        assert!(qsim_kernel::metric(scope, f[2]).is_some(), "{line}");
        rows.insert((scope.key().to_string(), f[2].to_string()));
    }
    for m in METRICS.iter() {
        if m.scope == MetricScope::StationClass && !per_class_expected().contains(m.name) {
            continue;
        }
        // Client and overload figures: tests/it/clients.rs.
        if crate::clients::OVERLOAD_METRICS.contains(&m.name) {
            continue;
        }
        assert!(
            rows.contains(&(m.scope.key().to_string(), m.name.to_string())),
            "{m:?} missing from the run CSV"
        );
    }
}

#[test]
fn sweep_columns_and_json_lines_use_the_table_names() {
    let path = model_path();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("names-sweep");
    let _ = std::fs::remove_dir_all(&out);
    qsim(&[
        "sweep",
        path.to_str().unwrap(),
        "--vary",
        "classes.web.population=4,6",
        "--replications",
        "2",
        "-o",
        out.to_str().unwrap(),
        "--no-charts",
    ]);
    let csv = std::fs::read_to_string(out.join("points.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let not_metrics = [
        sweep_columns::INDEX,
        "classes.web.population",
        sweep_columns::SEED,
        sweep_columns::ERROR,
        sweep_columns::REPLICATIONS,
        sweep_columns::EVENTS,
        sweep_columns::POWER_PER_S2,
        sweep_columns::BOTTLENECK,
        sweep_columns::BOTTLENECK_UTILIZATION,
        // The bistability verdict's columns (a latch mechanism): not rows
        // of the metric table (docs/glossary.md).
        qsim_kernel::names::BISTABLE,
        qsim_kernel::names::OTHER_END_THROUGHPUT_PER_S,
        qsim_kernel::names::STATE,
    ];
    let mut columns = BTreeSet::new();
    for h in header {
        if not_metrics.contains(&h) || h.starts_with("derived.") {
            continue;
        }
        let h = h.strip_suffix(sweep_columns::CI95_SUFFIX).unwrap_or(h);
        if not_metrics.contains(&h) {
            continue;
        }
        columns.insert(h.to_string());
    }
    // Exactly the sweep columns the table asks for, under their key paths.
    let mut expected = BTreeSet::new();
    for m in METRICS.iter().filter(|m| m.sweep_column) {
        let items: &[&str] = match m.scope {
            MetricScope::System => &[""],
            MetricScope::Station => &["cpu", "latch", "fsync", "pool", "disk"],
            MetricScope::Region => &["gate"],
            MetricScope::Class | MetricScope::StationClass => &[],
        };
        expected.extend(items.iter().map(|i| m.path(i)));
    }
    assert_eq!(columns, expected);

    let jsonl = std::fs::read_to_string(out.join("points.jsonl")).unwrap();
    for line in jsonl.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let r = &v["results"];
        assert_eq!(keys(&r["system"]), names(MetricScope::System), "{line}");
        for (list, scope) in [
            ("stations", MetricScope::Station),
            ("regions", MetricScope::Region),
        ] {
            // Keyed by name, as in a run's JSON.
            for item in r[list].as_object().unwrap().values() {
                let k: BTreeSet<String> = keys(item).into_iter().collect();
                assert!(!k.is_empty() && k.is_subset(&names(scope)), "{k:?}");
            }
        }
    }
}

#[test]
fn derived_metric_variables_are_table_paths() {
    let model = qsim_model::load_str("all.toml", ALL_METRICS_MODEL, &[]).unwrap();
    let vars = qsim_model::metric_variables(&model.network);
    for v in &vars {
        let (scope, _, m): (MetricScope, _, &Metric) =
            qsim_model::expr::resolve_variable(v).unwrap_or_else(|| panic!("{v}"));
        assert_eq!(m.scope, scope);
        assert!(v.ends_with(m.name), "{v} is not spelled {}", m.name);
    }
    for m in metrics(MetricScope::Station) {
        assert!(vars.contains(&m.path("latch")), "{m:?}");
    }
    // Per-class figures where they are kept: a queue that only web reaches.
    for m in metrics(MetricScope::StationClass) {
        assert!(vars.contains(&m.path("pool.classes.web")), "{m:?}");
        assert!(
            !vars.contains(&m.path("pool.classes.batch")),
            "batch never reaches pool"
        );
    }
    // The spellings of 0.1 read the very same figures as the new names.
    let results = qsim_kernel::run(&model.network, &model.run).unwrap();
    let rep = &results.replication_results[0];
    let value = |name: &str| qsim_model::metric_value(&model.network, rep, name);
    for (old, new) in [
        ("throughput", "throughput_per_s"),
        ("response_time", "response_time_s"),
        ("p99", "response_time_p99_s"),
        (
            "stations.latch.throughput",
            "stations.latch.throughput_per_s",
        ),
        ("stations.latch.wait_time", "stations.latch.wait_time_s"),
        ("classes.web.response_time", "classes.web.response_time_s"),
    ] {
        assert!(value(new).is_some_and(|x| x > 0.0), "{new}");
        assert_eq!(value(old), value(new), "{old} vs {new}");
    }
    assert_eq!(value("classes.web.p99"), None, "never a valid name");
    assert_eq!(value("stations.nowhere.utilization"), None);
}

#[test]
fn a_failing_derived_metric_keeps_the_run_and_says_why() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("names");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad_derived.toml");
    // A queue has no batches: its mean batch size reads 0, so the ratio
    // divides by zero in every replication.
    std::fs::write(
        &path,
        r#"
[simulation]
replications = 2
stop = { jobs = 2000 }

[workload]
rate_per_s = 0.5
route = ["cpu"]

[stations.cpu]
kind = "queue"
service = { dist = "exponential", mean = 1.0 }

[metrics]
twice = "2 * throughput_per_s"
per_batch = "throughput_per_s / stations.cpu.mean_batch_size"
"#,
    )
    .unwrap();
    let path = path.to_str().unwrap();
    let v: Value = serde_json::from_str(&qsim(&["run", path, "--format", "json"])).unwrap();
    let x = v["system"]["throughput_per_s"]["mean"].as_f64().unwrap();
    let twice = v["derived"]["twice"]["mean"].as_f64().unwrap();
    assert!((twice - 2.0 * x).abs() <= 1e-12 * twice, "{v}");
    let why = v["derived"]["per_batch"]["error"].as_str().unwrap();
    assert!(why.contains("division by zero"), "{why}");
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("per_batch")),
        "{v}"
    );
    let csv = qsim(&["run", path, "--format", "csv"]);
    let row = csv
        .lines()
        .find(|l| l.starts_with("derived,per_batch,"))
        .unwrap();
    assert_eq!(
        row,
        format!("derived,per_batch,value,,,{why}"),
        "mean and ci95 empty, the reason in error"
    );
    let table = qsim(&["run", path]);
    assert!(
        table.contains("per_batch  error: division by zero"),
        "{table}"
    );
}

#[test]
fn run_output_never_overwrites_the_model() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("names");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("keep_me.toml");
    std::fs::write(&path, ALL_METRICS_MODEL).unwrap();
    // The same file under another spelling of its path.
    let other = dir.join(".").join("keep_me.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_qsim"))
        .args(["run", path.to_str().unwrap(), "-o", other.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is the model file itself"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), ALL_METRICS_MODEL);
}

/// The metric table of docs/glossary.md as the one table gives it: one row
/// per metric (scope, name, unit, label, meaning, sweep column).
fn glossary_table() -> String {
    let mut t = String::from(
        "| scope | name | unit | table / chart label | meaning | sweep column |\n|---|---|---|---|---|---|\n",
    );
    for m in METRICS.iter() {
        t += &format!(
            "| {} | `{}` | {} | {} | {} | {} |\n",
            m.scope.key(),
            m.name,
            m.unit.symbol(),
            m.label,
            m.doc,
            if m.sweep_column { "yes" } else { "no" }
        );
    }
    t
}

/// docs/glossary.md's metric table is the one table, row for row: a new
/// metric's row follows from its declaration. `QSIM_BLESS=1` rewrites it.
#[test]
fn the_glossary_lists_every_metric() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/glossary.md");
    let glossary = std::fs::read_to_string(path).unwrap();
    let start = glossary
        .find("| scope | name | unit |")
        .expect("docs/glossary.md has a metric table");
    let end = start
        + glossary[start..]
            .find("\n\n")
            .expect("a blank line ends it")
        + 1;
    let want = glossary_table();
    if std::env::var_os("QSIM_BLESS").is_some() {
        let new = format!("{}{want}{}", &glossary[..start], &glossary[end..]);
        std::fs::write(path, new).unwrap();
        return;
    }
    let have = &glossary[start..end];
    for (h, w) in have.lines().zip(want.lines()) {
        assert_eq!(
            h, w,
            "docs/glossary.md's metric table differs from the table (QSIM_BLESS=1 cargo test --test it names::the_glossary rewrites it)"
        );
    }
    assert_eq!(
        have.lines().count(),
        want.lines().count(),
        "docs/glossary.md's metric table has another number of rows than the table (QSIM_BLESS=1 cargo test --test it names::the_glossary rewrites it)"
    );
}
