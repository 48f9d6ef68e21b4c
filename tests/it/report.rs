//! `qsim report` and `qsim sweep --report`: one self-contained HTML page per
//! sweep, holding the charts, the knee summary, the settings and the model.

use crate::support::{qsim, stderr};
use std::path::PathBuf;

fn fresh_dir(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Closed CPU and disk network: the sweep over its population has a knee,
/// exact MVA reference lines, and a model text with characters to escape.
const CLOSED: &str = r#"# cpu & disk <closed>
[simulation]
replications = 3
seed = 11
stop = { jobs = 4000 }
warmup = { jobs = 400 }

[workload]
type = "closed"
population = 4
think = { dist = "exponential", mean = 0.5 }
route = ["cpu", "disk"]

[stations.cpu]
kind = "queue"
service = { dist = "exponential", mean = 0.01 }

[stations.disk]
kind = "queue"
service = { dist = "exponential", mean = 0.03 }
"#;

#[test]
fn report_page_holds_charts_summary_settings_and_model() {
    let dir = fresh_dir("report-page");
    let model = dir.join("disk.toml");
    std::fs::write(&model, CLOSED).unwrap();
    let out = dir.join("sweep");
    let (model_s, out_s) = (model.to_str().unwrap(), out.to_str().unwrap());
    let o = qsim(&[
        "sweep",
        model_s,
        "--vary",
        "workload.population=1..41:8",
        "--report",
        "-o",
        out_s,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page_path = out.join("report.html");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&format!("report: {}", page_path.display())),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let page = std::fs::read_to_string(&page_path).unwrap();

    // Four inline charts, each a whole SVG element with drawn content.
    assert_eq!(page.matches("<figure>\n<svg").count(), 4, "charts inline");
    assert_eq!(page.matches("</svg>").count(), 4);
    assert!(page.contains("<polyline") || page.contains("<path"));
    assert!(page.contains("exact MVA"), "reference line legend");

    // The knee summary is summary.json's: the same points and figures.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let at = |fig: &str| {
        let n = &summary[fig]["point"]["workload.population"];
        assert!(n.is_u64(), "{fig} has a population: {summary}");
        format!("<td>workload.population={n}</td>")
    };
    for fig in ["peak", "knee", "saturation"] {
        assert!(
            page.contains(&format!("<tr><th>{fig}</th>")) && page.contains(&at(fig)),
            "{fig} row missing or at the wrong point"
        );
    }
    let peak = summary["peak"]["throughput_per_s"].as_f64().unwrap();
    assert!(
        page.contains(&format!("{peak:.1}/s")),
        "peak value {peak:.1}/s"
    );

    // Settings and the model text, escaped.
    assert!(page.contains("<td>workload.population=1..41:8</td>"));
    assert!(page.contains("<tr><th>seed</th><td>11</td></tr>"));
    assert!(page.contains("# cpu &amp; disk &lt;closed&gt;"));
    assert!(page.contains("route = [&quot;cpu&quot;, &quot;disk&quot;]"));
    assert!(!page.contains("class=\"warnings\""), "no warnings expected");

    // Self-contained: nothing is loaded from anywhere.
    for external in [
        "<script", "<link", "<img", "src=", "href=", "url(", "@import",
    ] {
        assert!(!page.contains(external), "page refers to {external}");
    }

    // `qsim report` on the directory writes the same page, byte for byte.
    std::fs::remove_file(&page_path).unwrap();
    let r = qsim(&["report", out_s]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert_eq!(std::fs::read_to_string(&page_path).unwrap(), page);
}

#[test]
fn report_says_what_is_missing() {
    let dir = fresh_dir("report-missing");
    let model = dir.join("disk.toml");
    std::fs::write(&model, CLOSED).unwrap();
    let model_s = model.to_str().unwrap();

    // Not a sweep directory: a usage error naming it, no page.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let r = qsim(&["report", empty.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(stderr(&r).contains("empty"), "{}", stderr(&r));
    assert!(!empty.join("report.html").exists());

    // One shard of two has no summary yet: the error says to merge first.
    let shard = dir.join("shard0");
    let s = qsim(&[
        "sweep",
        model_s,
        "--vary",
        "workload.population=1..4",
        "--shard",
        "0/2",
        "--report",
        "-o",
        shard.to_str().unwrap(),
    ]);
    assert!(s.status.success(), "{}", stderr(&s));
    assert!(stderr(&s).contains("qsim report"), "{}", stderr(&s));
    assert!(!shard.join("report.html").exists());
    let r = qsim(&["report", shard.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2), "{}", stderr(&r));
    assert!(stderr(&r).contains("qsim merge"), "{}", stderr(&r));

    // A model edited after the sweep is flagged on the page.
    let out = dir.join("sweep");
    let s = qsim(&[
        "sweep",
        model_s,
        "--vary",
        "workload.population=1..4",
        "--no-charts",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(s.status.success(), "{}", stderr(&s));
    // Make the change visible to a coarse-grained file clock.
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(&model, CLOSED.replace("0.03", "0.04")).unwrap();
    let r = qsim(&["report", out.to_str().unwrap()]);
    assert!(r.status.success(), "{}", stderr(&r));
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("class=\"warnings\""));
    assert!(page.contains("was modified after the sweep started"));
}
