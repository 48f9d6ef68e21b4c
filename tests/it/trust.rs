//! Figures that say when they cannot be trusted (issue 10): steady-state
//! warnings, the warm-up following the stop rule, intervals from one
//! replication, and models that can never advance time.

use crate::support::model;
use qsim_kernel::{RunConfig, RunWarning, Stop, Warmup, names};
use std::path::PathBuf;

use crate::support::qsim;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const MM1: &str = "[workload]\ntype = \"open\"\nrate_per_s = 0.5\nroute = [\"server\"]\n\
[stations.server]\nkind = \"queue\"\nservice = { dist = \"exponential\", mean = 1.0 }\n";

/// 10^5 terminals start thinking together: the disks' queues are still
/// filling after 2·10^5 jobs, and X (~8/s) is above the bound 1/D_max = 7.41/s.
#[test]
fn transient_of_a_huge_population_is_reported() {
    let out = qsim(&[
        "run",
        "models/cpu_two_disks.toml",
        "--set",
        "workload.population=100000",
        "--jobs",
        "200000",
        "--replications",
        "2",
        "--no-bistability-check",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("warning: not in steady state"), "{err}");
    assert!(err.contains("run longer"), "{err}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = json["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("not in steady state")),
        "{json}"
    );
    // The measured X is also above the bound 1/D_max, which says the same.
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("asymptotic bound")),
        "{json}"
    );
}

/// Well-behaved models, several seeds: no steady-state warning.
#[test]
fn steady_models_raise_no_false_alarm() {
    let two_disks = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/models/cpu_two_disks.toml"
    ))
    .unwrap();
    let cases = [
        (MM1.to_string(), vec![]),
        (MM1.to_string(), vec!["workload.rate_per_s=0.9"]),
        (
            MM1.to_string(),
            vec!["stations.server.servers=4", "workload.rate_per_s=3"],
        ),
        (two_disks, vec![]),
    ];
    for (text, set) in &cases {
        let m = model(text, set);
        for seed in 1..=4 {
            for reps in [1, 5] {
                let config = RunConfig {
                    seed,
                    replications: reps,
                    stop: Stop::Jobs(50_000),
                    warmup: Warmup::Fraction(0.1),
                    ..RunConfig::default()
                };
                let r = qsim_kernel::run(&m.network, &config).unwrap();
                let alarms: Vec<&RunWarning> = r
                    .warnings
                    .iter()
                    .filter(|w| matches!(w, RunWarning::NotSteady { .. }))
                    .collect();
                assert!(
                    alarms.is_empty(),
                    "{set:?} seed {seed} reps {reps}: {alarms:?}"
                );
            }
        }
    }
}

/// `--jobs 1000` discards 10% of 1000 jobs, not 10% of the file's stop.
#[test]
fn default_warmup_follows_the_stop_rule() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("trust");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mm1.toml");
    std::fs::write(
        &path,
        format!("[simulation]\nstop = {{ jobs = 100000 }}\n{MM1}"),
    )
    .unwrap();
    let out = qsim(&[
        "run",
        path.to_str().unwrap(),
        "--jobs",
        "1000",
        "--replications",
        "2",
        "--format",
        "json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["run"]["warmup"], serde_json::json!({ "jobs": 100 }));
}

/// One replication: no zero-width interval in any format.
#[test]
fn one_replication_has_no_zero_width_interval() {
    let args = [
        "run",
        "models/mm1.toml",
        "--replications",
        "1",
        "--jobs",
        "20000",
    ];
    let csv = qsim(&[&args[..], &["--format", "csv"]].concat());
    assert!(csv.status.success(), "{}", text(&csv.stderr));
    for line in text(&csv.stdout)
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with('#'))
    {
        let ci = line.rsplit(',').next().unwrap();
        assert!(ci.is_empty() || ci.parse::<f64>().unwrap() > 0.0, "{line}");
    }
    let table = text(&qsim(&args).stdout);
    for half in table.split("± ").skip(1) {
        let h = half.split_whitespace().next().unwrap();
        // "(± is the half-width ...)" explains the sign.
        assert!(
            h == "is" || h == "n/a" || h.parse::<f64>().unwrap() > 0.0,
            "{table}"
        );
    }
    assert!(table.contains("± n/a"), "{table}");
    let json = qsim(&[&args[..], &["--format", "json"]].concat());
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let ci = &v["system"]["throughput_per_s"]["ci95"];
    assert!(ci.as_f64().unwrap() > 0.0, "{v}");
}

/// The segment-means interval of one replication covers the exact M/M/1
/// mean response 1/(mu - lambda) = 2 s at rho = 0.5. Nominal coverage is
/// 95%; requiring 16 of 20 seeds fails with probability < 2% even if the
/// true coverage were only 90% (binomial), and a zero or far too narrow
/// interval fails almost surely.
#[test]
fn one_replication_batch_means_cover_the_exact_answer() {
    let m = model(MM1, &[]);
    let mut covered = 0;
    for seed in 1..=20 {
        let config = RunConfig {
            seed,
            replications: 1,
            stop: Stop::Jobs(40_000),
            warmup: Warmup::Jobs(2_000),
            ..RunConfig::default()
        };
        let r = qsim_kernel::run(&m.network, &config).unwrap();
        let e = &r.system.response_time_s;
        assert!(e.ci95 > 0.0 || e.ci95.is_nan(), "seed {seed}: {e:?}");
        if (e.mean - 2.0).abs() <= e.ci95 {
            covered += 1;
        }
    }
    assert!(covered >= 16, "covered {covered} of 20");
}

/// A closed class with no think time and no service anywhere is refused
/// before it runs, with its location, exit 2.
#[test]
fn zero_time_model_is_refused() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("trust");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("zero.toml");
    std::fs::write(
        &path,
        "[workload]\ntype = \"closed\"\npopulation = 3\nroute = [\"cpu\"]\n\
         [stations.cpu]\nkind = \"queue\"\nservice = { dist = \"deterministic\", value = 0.0 }\n",
    )
    .unwrap();
    let t = std::time::Instant::now();
    let out = qsim(&["run", path.to_str().unwrap()]);
    assert!(t.elapsed().as_secs() < 10);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("zero.toml:"), "{err}");
    assert!(err.contains("can never advance time"), "{err}");
    assert!(err.contains("(cpu)"), "{err}");
}

/// The latch of `cli.rs`: 1000/s up to 50 jobs there, 50/s from 100 on,
/// jobs thinking 0.15 s between visits.
const LATCH: &str = "[workload]\ntype = \"closed\"\npopulation = 120\nthink = { dist = \"exponential\", mean = 0.15 }\nroute = [\"latch\"]\n\n[stations.latch]\nkind = \"latch\"\nservice = { dist = \"exponential\", mean = 0.001 }\nspeed = { table = [{ n = 50, rate = 1000 }, { n = 100, rate = 50 }] }\n";

/// A population sweep flags exactly the points theory calls bistable (two
/// basins a run cannot leave: qsim-theory's birth-death chain, here 130 to
/// 150 jobs) and no others; the CSV, JSON lines, summary.json and the
/// printed summary all say so. Populations sit well inside or outside the
/// bistable range (theory's edges lie near 115 and 165).
#[test]
fn sweep_flags_the_points_theory_calls_bistable() {
    let pops = [40u32, 80, 100, 130, 140, 150, 220, 260];
    let expected: Vec<bool> = pops
        .iter()
        .map(|n| {
            let m = model(LATCH, &[&format!("workload.population={n}")]);
            qsim_theory::closed::bistability(m.network.spec(), 0)
                .unwrap()
                .is_some()
        })
        .collect();
    assert_eq!(
        expected,
        [false, false, false, true, true, true, false, false],
        "the test's premise: theory's verdicts"
    );
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("trust");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("latch.toml");
    std::fs::write(&path, LATCH).unwrap();
    let out_dir = dir.join("latch-sweep");
    // A sweep left by an earlier run (a target directory copied from
    // another checkout) belongs to another model path: start afresh.
    let _ = std::fs::remove_dir_all(&out_dir);
    let list: Vec<String> = pops.iter().map(|n| n.to_string()).collect();
    let out = qsim(&[
        "sweep",
        path.to_str().unwrap(),
        "--vary",
        &format!("workload.population={}", list.join(",")),
        "--jobs",
        "20000",
        "--replications",
        "3",
        "--report",
        "-o",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    // The charts mark the points, with a legend entry; the page says so.
    let svg = std::fs::read_to_string(out_dir.join("throughput.svg")).unwrap();
    assert!(svg.contains("bistable point (two operating points)"));
    assert!(svg.contains("bistable: started from the other end"));
    let page = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(page.contains("<tr><th>bistable</th><td class=\"value\">3 points</td>"));
    assert!(page.contains("is at a bistable point"));
    assert!(
        printed
            .contains("bistable     workload.population=130 .. workload.population=150 (3 points)"),
        "{printed}"
    );
    assert!(
        text(&out.stderr).contains("warning: the peak"),
        "{}",
        text(&out.stderr)
    );

    let csv = std::fs::read_to_string(out_dir.join("points.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (flag, other, x) = (
        at(names::BISTABLE),
        at(names::OTHER_END_THROUGHPUT_PER_S),
        at(names::THROUGHPUT_PER_S),
    );
    for ((line, n), want) in lines.zip(pops).zip(&expected) {
        let f: Vec<&str> = line.split(',').collect();
        // At 40 jobs the latch never slows: the check does not apply.
        let shown = if n == 40 {
            ""
        } else if *want {
            "true"
        } else {
            "false"
        };
        assert_eq!(f[flag], shown, "population {n}: {line}");
        if *want {
            // The collapsed end runs at the latch's floor of 50/s, the
            // fast one many times faster.
            let (x, o): (f64, f64) = (f[x].parse().unwrap(), f[other].parse().unwrap());
            assert!(o < 60.0 && x > 10.0 * o, "population {n}: {x} vs {o}");
        }
    }
    let jsonl = std::fs::read_to_string(out_dir.join("points.jsonl")).unwrap();
    let flagged = jsonl
        .lines()
        .filter(|l| l.contains(&format!("\"{}\":true", names::BISTABLE)))
        .count();
    assert_eq!(flagged, 3);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("summary.json")).unwrap()).unwrap();
    let ranges = summary["bistable"].as_array().unwrap();
    assert_eq!(ranges.len(), 1, "{summary}");
    assert_eq!(ranges[0]["from"]["workload.population"], 130);
    assert_eq!(ranges[0]["to"]["workload.population"], 150);
    assert_eq!(summary["peak"]["bistable"], true, "{summary}");
}

/// A model without a falling speed curve: no point flagged, no columns,
/// nothing in the summary.
#[test]
fn sweep_of_cpu_two_disks_flags_nothing() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("trust-two-disks");
    let out = qsim(&[
        "sweep",
        "models/cpu_two_disks.toml",
        "--vary",
        "workload.population=1,10,40",
        "--jobs",
        "5000",
        "--replications",
        "2",
        "--no-charts",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains("bistable"));
    let csv = std::fs::read_to_string(dir.join("points.csv")).unwrap();
    assert!(!csv.contains(names::BISTABLE), "{csv}");
    let summary = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    assert!(!summary.contains("bistable"), "{summary}");
}
