//! One bistability verdict everywhere: `run`, `sweep`, `whatif` and `solve`
//! agree on a model at a point (issue 22), and the early-stopped two-ended
//! check decides as the full one on every model in models/ (issue 25).

use crate::support::{qsim, stderr};
use qsim_kernel::bistable::{decide_with, other_end};
use qsim_kernel::{RunConfig, Stop, Warmup};
use std::path::PathBuf;

/// Short runs: the verdicts below are far apart (collapsed against fast
/// throughputs 2.5 to 12 times apart), so 3 x 10,000 jobs decide them.
const SHORT: [&str; 4] = ["--replications", "3", "--jobs", "10000"];

fn json(args: &[&str]) -> serde_json::Value {
    let out = qsim(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// The verdict of each command on `model` with `population` threads.
fn verdicts(model: &str, population: u32, station: &str) -> [bool; 4] {
    let set = format!("workload.population={population}");
    let run = json(
        &[
            &["run", model, "--set", &set, "--format", "json"],
            &SHORT[..],
        ]
        .concat(),
    );
    let run_bistable = run["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().starts_with("the model is bistable"));
    // The table says which state the figures belong to.
    // (A run whose replications mix the modes is given mode by mode.)
    let state = run["run"]["initial_state"]
        .as_str()
        .or_else(|| run["modes"][0]["state"].as_str())
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        run_bistable,
        state.contains("mode "),
        "{model} {population}: {state}"
    );

    let solve = json(
        &[
            &["solve", model, "--set", &set, "--format", "json"],
            &SHORT[..],
        ]
        .concat(),
    );
    let solve_bistable = solve["verdict"]["bistable"].as_bool().unwrap();
    // solve lists only operating points a run stays in.
    if let Some(points) = solve["bistability"]["operating_points"].as_array() {
        assert!(points.len() >= 2, "{solve:#}");
    }

    let at = format!("workload.population={population}");
    let whatif = json(
        &[
            &[
                "whatif",
                model,
                "--speedup",
                "x1.1",
                "--stations",
                station,
                "--at",
                &at,
                "--format",
                "json",
            ],
            &SHORT[..],
        ]
        .concat(),
    );
    let whatif_bistable = whatif["baseline"][0]["bistable"].as_bool().unwrap();
    let whatif_state = whatif["baseline"][0]["state"].as_str().unwrap();
    assert_eq!(
        whatif_bistable,
        whatif_state.contains("mode "),
        "{whatif:#}"
    );

    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("verdict-{}-{population}", model.replace('/', "_")));
    let _ = std::fs::remove_dir_all(&dir);
    let vary = format!("workload.population={population}");
    let out = qsim(
        &[
            &[
                "sweep",
                model,
                "--vary",
                &vary,
                "--output",
                dir.to_str().unwrap(),
            ],
            &SHORT[..],
        ]
        .concat(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = std::fs::read_to_string(dir.join("points.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    let sweep_bistable = col("bistable") == "true";
    assert_eq!(sweep_bistable, col("state").contains("mode "), "{csv}");
    [
        run_bistable,
        sweep_bistable,
        whatif_bistable,
        solve_bistable,
    ]
}

#[test]
fn run_sweep_whatif_and_solve_agree() {
    for (model, population, station) in [
        ("models/latch_numa_optimized.toml", 100, "latch3"),
        ("models/latch_numa_optimized.toml", 500, "latch3"),
        ("models/redo_log.toml", 200, "client"),
    ] {
        let v = verdicts(model, population, station);
        // All four say bistable: each model's two ends are measured apart
        // (see its header).
        assert_eq!(
            v, [true; 4],
            "{model} at {population} (run, sweep, whatif, solve)"
        );
    }
}

#[test]
fn early_stopped_check_decides_as_the_full_check_on_every_model() {
    let mut checked = 0;
    let mut entries: Vec<PathBuf> = std::fs::read_dir("models")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    entries.sort();
    for path in entries {
        let m =
            qsim_model::load_file(&path, &[]).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if other_end(&m.network).is_none() {
            continue;
        }
        // The models' own lengths, shortened where a replication costs
        // more than about a second of events (the spin models).
        let jobs = match m.run.stop {
            Stop::Jobs(n) if path.to_str().unwrap().contains("spin") => n.min(40),
            Stop::Jobs(n) => n.min(20_000),
            // A timed run (with a load schedule) keeps its own length.
            Stop::Time(_) => 0,
        };
        let config = RunConfig {
            stop: if jobs > 0 {
                Stop::Jobs(jobs)
            } else {
                m.run.stop
            },
            warmup: if jobs > 0 {
                Warmup::Jobs(jobs / 5)
            } else {
                m.run.warmup
            },
            trace: None,
            ..m.run.clone()
        };
        let first = qsim_kernel::run(&m.network, &config).unwrap();
        let early = decide_with(&m.network, &config, &first, None, true)
            .unwrap()
            .unwrap();
        let full = decide_with(&m.network, &config, &first, None, false)
            .unwrap()
            .unwrap();
        assert_eq!(
            early.bistable,
            full.bistable,
            "{}: early {} / full {}",
            path.display(),
            early.describe(),
            full.describe()
        );
        assert!(early.other_end_replications <= full.other_end_replications);
        checked += 1;
    }
    assert!(checked >= 4, "only {checked} models have a mechanism");
}

#[test]
fn the_verdict_names_the_collapse_stations_it_did_not_start_from() {
    // latch_numa_optimized has a falling speed curve at each of its three
    // latches; the check starts from thinking and from latch2 only, and
    // all jobs at latch3 is a third operating point (its header), so the
    // verdict must name latch1 and latch3 as untried. latch_bistable has
    // one latch: nothing is left untried.
    for (model, untried) in [
        ("models/latch_numa_optimized.toml", vec!["latch1", "latch3"]),
        ("models/latch_bistable.toml", vec![]),
    ] {
        let m = qsim_model::load_file(std::path::Path::new(model), &[]).unwrap();
        let config = RunConfig {
            replications: 2,
            stop: Stop::Jobs(5_000),
            warmup: Warmup::Jobs(1_000),
            trace: None,
            ..m.run.clone()
        };
        let first = qsim_kernel::run(&m.network, &config).unwrap();
        let v = decide_with(&m.network, &config, &first, None, true)
            .unwrap()
            .expect("a mechanism");
        assert_eq!(v.untried_starts, untried, "{model}");
        assert_eq!(
            v.describe().contains("not tried as starts"),
            !untried.is_empty(),
            "{model}: {}",
            v.describe()
        );
    }
}
