//! Figures at the edge of a sweep's grid say so and name the values to add,
//! and the hysteresis table starts with its verdict.

use crate::support::{qsim, stderr};
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// One queue (D = 10 ms) and think time Z = 90 ms: the asymptotic bounds
/// cross at N* = (D + Z)/D = 10, where the knee (max X/R) lies; above it
/// X is pinned at 1/D = 100/s and R = N·D − Z grows, so on a grid from 20
/// up the maximum power is at the grid's first point.
const ONE_QUEUE: &str = r#"
[simulation]
replications = 2
seed = 5
stop = { jobs = 3000 }
warmup = { jobs = 300 }

[workload]
type = "closed"
population = 10
think = { dist = "exponential", mean = 0.09 }
route = ["cpu"]

[stations.cpu]
kind = "queue"
service = { dist = "exponential", mean = 0.01 }
"#;

fn summary_warnings(dir: &std::path::Path) -> Vec<String> {
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    // An empty list is left out of summary.json.
    s["warnings"].as_array().map_or_else(Vec::new, |ws| {
        ws.iter().map(|w| w.as_str().unwrap().to_string()).collect()
    })
}

#[test]
fn a_knee_on_the_first_grid_point_says_so_and_the_suggested_range_finds_it() {
    let dir = scratch("edges-knee");
    let model = dir.join("one_queue.toml");
    std::fs::write(&model, ONE_QUEUE).unwrap();
    let m = model.to_str().unwrap();
    let out = dir.join("above");
    let o = qsim(&[
        "sweep",
        m,
        "--vary",
        "workload.population=20..60:10",
        "--no-charts",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let want = "the knee is at the lowest workload.population swept (20): it may lie below the grid; add lower values, e.g. --vary workload.population=2..20:2";
    assert!(
        summary_warnings(&out).iter().any(|w| w == want),
        "{:?}",
        summary_warnings(&out)
    );
    assert!(stderr(&o).contains(want), "{}", stderr(&o));

    // The suggested range, swept: the knee is inside it (below N* = 10,
    // not on either end), and no figure sits on the low edge any more.
    let below = dir.join("below");
    let o = qsim(&[
        "sweep",
        m,
        "--vary",
        "workload.population=2..20:2",
        "--no-charts",
        "-o",
        below.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(below.join("summary.json")).unwrap())
            .unwrap();
    let knee = s["knee"]["point"]["workload.population"].as_u64().unwrap();
    assert!((4..=18).contains(&knee), "knee at {knee}, N* = 10");
    assert!(
        !summary_warnings(&below)
            .iter()
            .any(|w| w.starts_with("the knee is at")),
        "{:?}",
        summary_warnings(&below)
    );
}

#[test]
fn hysteresis_prints_its_verdict_first() {
    let dir = scratch("edges-hysteresis");
    let o = qsim(&[
        "sweep",
        "models/cpu_two_disks.toml",
        "--vary",
        "workload.population=1..9:4",
        "--hysteresis",
        "--jobs",
        "2000",
        "--replications",
        "2",
        "-o",
        dir.join("h").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let first = out.lines().next().unwrap();
    assert!(
        first.contains("agree") || first.contains("differ"),
        "the first line is not the verdict: {out}"
    );
    assert_eq!(
        out.lines().filter(|l| *l == first).count(),
        1,
        "the verdict once: {out}"
    );
}
