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
    // Each figure as the terminal prints it: with its interval, and the
    // terminal's caveat on ties.
    let stdout = String::from_utf8_lossy(&o.stdout);
    for fig in ["peak", "knee", "saturation"] {
        let line = stdout
            .lines()
            .find(|l| l.trim_start().starts_with(fig))
            .unwrap_or_else(|| panic!("no {fig} line in {stdout}"));
        let value = line.trim_start()[fig.len()..].trim_start();
        let value = &value[..value.find(" at ").unwrap()];
        assert!(value.contains(" ± "), "{fig}: {value}");
        assert!(
            page.contains(&format!("<td class=\"value\">{value}")),
            "the page shows {fig} without the terminal's {value}"
        );
        if fig == "peak"
            && let Some(i) = line.find("other point")
        {
            let n = line[..i].rsplit('(').next().unwrap();
            assert!(page.contains(&format!("; {n}other point")), "tie note");
        }
    }
    // The interactive charts' data: every chart, each point's text with its
    // interval, and one inline script.
    assert_eq!(page.matches("class=\"qsim-plot\"").count(), 4);
    assert!(
        page.contains("workload.population = 9: "),
        "hover text names the point"
    );
    assert_eq!(page.matches("<script>").count(), 1);

    // Settings and the model text, escaped.
    assert!(page.contains("<td>workload.population=1..41:8</td>"));
    assert!(page.contains("<tr><th>seed</th><td>11</td></tr>"));
    assert!(page.contains("# cpu &amp; disk &lt;closed&gt;"));
    assert!(page.contains("route = [&quot;cpu&quot;, &quot;disk&quot;]"));
    // The only warning: throughput still rises at the top of the grid (no
    // contention in this model), so the peak is at its edge and the page
    // says so, with the values to add.
    let warnings = page
        .split("<div class=\"warnings\"")
        .nth(1)
        .expect("the edge warning is shown")
        .split("</div>")
        .next()
        .unwrap();
    assert_eq!(warnings.matches("<li>").count(), 1, "{warnings}");
    assert!(
        warnings.contains(
            "the peak is at the highest workload.population swept (41): it may lie above the grid; add higher values, e.g. --vary workload.population=49..81:8"
        ),
        "{warnings}"
    );

    // Self-contained: nothing is loaded from anywhere.
    for external in ["<link", "<img", "src=", "href=", "url(", "@import"] {
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
