//! Charts never lose a run: when a chart cannot be written, `qsim sweep`
//! warns, keeps every number it computed and exits 0.

use std::path::PathBuf;

use crate::support::qsim;

/// A fresh, empty directory under the target directory's temp area.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const MM1: &str = r#"
[simulation]
replications = 3
seed = 7
stop = { jobs = 5000 }
warmup = { jobs = 500 }

[workload]
type = "open"
rate_per_s = 0.5
route = ["server"]

[stations.server]
kind = "queue"
service = { dist = "exponential", mean = 1.0 }
"#;

#[test]
fn sweep_keeps_its_results_when_a_chart_cannot_be_written() {
    let dir = fresh_dir("charts-unwritable");
    let model = dir.join("mm1.toml");
    std::fs::write(&model, MM1).unwrap();
    let out = dir.join("sweep");
    // A directory where the first chart file must go: creating that file fails.
    std::fs::create_dir_all(out.join("throughput.svg")).unwrap();
    let (model, out_s) = (model.to_str().unwrap(), out.to_str().unwrap());
    let o = qsim(&[
        "sweep",
        model,
        "--vary",
        "workload.rate_per_s=0.2,0.4,0.6",
        "-o",
        out_s,
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "exit {:?}: {stderr}", o.status);
    assert!(
        stderr.contains("warning: charts not drawn") && stderr.contains("throughput.svg"),
        "stderr: {stderr}"
    );
    assert!(stdout.contains("swept 3 points"), "stdout: {stdout}");
    assert!(!stdout.contains("charts:"), "no chart is claimed: {stdout}");

    // Every number is on disk: a header and one row per point, and the summary.
    let csv = std::fs::read_to_string(out.join("points.csv")).unwrap();
    assert_eq!(csv.lines().count(), 4, "points.csv:\n{csv}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["points"], 3);
    assert_eq!(summary["failed"], 0);

    // `qsim plot` has nothing but charts to make, so there the failure is an error.
    let p = qsim(&["plot", out_s]);
    assert_eq!(
        p.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&p.stderr)
    );

    // Once the obstacle is gone the same sweep draws every chart.
    std::fs::remove_dir(out.join("throughput.svg")).unwrap();
    let p = qsim(&["plot", out_s]);
    assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    for stem in [
        "throughput",
        "response_time",
        "power",
        "response_vs_utilization",
    ] {
        for ext in ["svg", "png"] {
            let len = std::fs::metadata(out.join(format!("{stem}.{ext}")))
                .unwrap()
                .len();
            assert!(len > 5_000, "{stem}.{ext} has only {len} bytes");
        }
    }
}

#[test]
fn fit_refuses_a_chart_path_it_cannot_write_before_fitting() {
    let dir = fresh_dir("fit-chart-blocked");
    // A directory where the chart file must go: refused up front (exit 2,
    // naming the flag) rather than found after the fit was printed.
    let chart = dir.join("fit.svg");
    std::fs::create_dir_all(&chart).unwrap();
    let out = qsim(&[
        "fit",
        "examples/data/measurements.csv",
        "--x",
        "threads",
        "--y",
        "tps",
        "--plot",
        chart.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--plot") && stderr.contains("is a directory"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "printed before refusing");
}
