//! The one verdict on an open workload whose collapse is made by client
//! retries (issue 22): the other end of its empty start is a backlog at
//! the busiest queue, and run, sweep and whatif agree; solve refuses it.

use crate::support::{assert_close, qsim, refused, stderr};
use qsim_kernel::Estimate;
use std::path::PathBuf;

/// models/retry_storm.toml without its burst: 70 requests/s to a 100/s
/// server with room for 100, a 0.5 s timeout and 3 attempts. Healthy, no
/// attempt times out (an M/M/1 at ρ 0.7 waits over 0.5 s with
/// probability e^(-30 · 0.5) = 3e-7); collapsed (the queue full, a 1 s
/// wait) every attempt times out before it is served.
const STORM_70: &str = r#"
[simulation]
replications = 5
seed = 1
stop = { time_s = 120 }
warmup = "none"

[workload]
type = "open"
rate_per_s = 70
route = ["server"]

[workload.client]
timeout = { dist = "deterministic", mean = 0.5 }
max_attempts = 3

[stations.server]
kind = "queue"
service = { dist = "exponential", mean = 0.01 }
capacity = 100
when_full = "drop"
"#;

fn write(name: &str, text: &str) -> String {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = qsim(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn est(v: &serde_json::Value) -> Estimate {
    Estimate {
        mean: v["mean"].as_f64().unwrap(),
        ci95: v["ci95"].as_f64().unwrap(),
    }
}

#[test]
fn a_retry_storm_without_its_burst_has_two_operating_points() {
    let model = write("storm70.toml", STORM_70);
    // The kernel's verdict, with each mode's figures.
    let m = qsim_model::load_file(std::path::Path::new(&model), &[]).unwrap();
    let first = qsim_kernel::run(&m.network, &m.run).unwrap();
    let v = qsim_kernel::bistable::decide(&m.network, &m.run, &first, None)
        .unwrap()
        .expect("the check applies to clients that retry");
    assert!(v.bistable, "{}", v.describe());
    assert_eq!(v.mechanism, qsim_kernel::bistable::Mechanism::Retries);
    assert_eq!(v.modes.len(), 2, "{}", v.describe());
    assert_eq!(
        v.starts,
        [
            "empty (open arrivals)".to_string(),
            "a backlog of 100 requests at server".to_string()
        ]
    );
    // The healthy mode serves every request: goodput = the arrival rate,
    // 70/s, less the requests still in the system at the end (about 2 of
    // 8400, a bias of 0.03%; allowed 0.5%). A loss or timeout rate of 1%
    // would be caught.
    assert_close(
        "healthy goodput",
        v.modes[1].throughput_per_s,
        70.0,
        5,
        0.005,
        0.05,
    );
    // The collapsed mode: only requests of the backlog served within their
    // first 0.5 s succeed (at most 50 over 120 s, 0.42/s); a run that
    // recovered would serve 70/s.
    assert!(v.modes[0].throughput_per_s.mean < 1.0, "{}", v.describe());

    // run: the warning, and the state its figures belong to.
    let run = json(&["run", &model, "--format", "json"]);
    assert!(
        run["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .starts_with("the model is bistable (client timeouts and retries at server)")),
        "{run:#}"
    );
    let state = run["run"]["initial_state"].as_str().unwrap();
    assert_eq!(state, "empty (open arrivals) (mode 2 of 2)");
    let goodput = est(&run["classes"]["default"]["goodput_per_s"]);
    assert!((goodput.mean - 70.0).abs() < 3.0, "{run:#}");

    // sweep over the arrival rate, one point: bistable there.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("verdict-open-sweep");
    let _ = std::fs::remove_dir_all(&dir);
    let out = qsim(&[
        "sweep",
        &model,
        "--vary",
        "workload.rate_per_s=70",
        "--output",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = std::fs::read_to_string(dir.join("points.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(col("bistable"), "true", "{csv}");
    assert!(col("state").contains("mode "), "{csv}");

    // whatif: the baseline at 70/s is bistable.
    let whatif = json(&[
        "whatif",
        &model,
        "--speedup",
        "x1.1",
        "--stations",
        "server",
        "--at",
        "workload.rate_per_s=70",
        "--format",
        "json",
    ]);
    assert_eq!(
        whatif["baseline"][0]["bistable"].as_bool(),
        Some(true),
        "{whatif:#}"
    );

    // solve has no method for clients: it refuses, and names the command
    // that gives the verdict.
    refused(
        &["solve", &model],
        &["client or overload behaviour", "qsim run"],
    );
}

#[test]
fn retries_that_never_time_out_give_one_operating_point() {
    // The same M/M/1/100 with a 100 s timeout: a full queue waits about
    // 1 s, so no attempt times out and the backlog drains in about
    // 100 / (100 - 70) = 3.3 s; both ends serve 70/s.
    let text = STORM_70.replace("mean = 0.5 }", "mean = 100 }");
    let model = write("storm70-long-timeout.toml", &text);
    let run = json(&["run", &model, "--format", "json"]);
    let checks = run["checks"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let text = serde_json::to_string(&run).unwrap();
    assert!(!text.contains("the model is bistable"), "{run:#}");
    assert!(
        checks.iter().any(|c| c
            .as_str()
            .unwrap()
            .starts_with("bistability check passed (client timeouts and retries at server)")),
        "{run:#}"
    );
    assert_eq!(
        run["run"]["initial_state"].as_str(),
        Some("empty (open arrivals)")
    );
}
