//! The CSV form of one run: one row per metric, long format.

use crate::Report;
use qsim_kernel::{Estimate, ResponseEstimate};
use std::fmt::Write;

fn row(out: &mut String, scope: &str, name: &str, metric: &str, e: &Estimate) {
    let _ = writeln!(
        out,
        "{scope},{},{metric},{},{}",
        quote(name),
        e.mean,
        // Unknown interval: an empty field, never a zero width.
        if e.ci95.is_nan() {
            String::new()
        } else {
            e.ci95.to_string()
        }
    );
}

fn response_rows(out: &mut String, scope: &str, name: &str, r: &ResponseEstimate) {
    row(
        out,
        scope,
        name,
        "response_time_s",
        &Estimate {
            mean: r.mean,
            ci95: r.ci95,
        },
    );
    for (label, e) in [
        ("p50", &r.p50),
        ("p90", &r.p90),
        ("p95", &r.p95),
        ("p99", &r.p99),
        ("p999", &r.p999),
    ] {
        row(out, scope, name, &format!("response_time_s_{label}"), e);
    }
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Renders a report as CSV with the header `scope,name,metric,mean,ci95`.
pub fn to_csv(report: &Report) -> String {
    let r = report.results;
    let mut out = String::from("scope,name,metric,mean,ci95\n");
    row(
        &mut out,
        "system",
        "system",
        "throughput_per_s",
        &r.system.throughput_per_s,
    );
    response_rows(&mut out, "system", "system", &r.system.response_time_s);
    if let Some(v) = &r.system.sla_violation {
        row(&mut out, "system", "system", "sla_violation", v);
    }
    for s in &r.stations {
        row(
            &mut out,
            "station",
            &s.name,
            "throughput_per_s",
            &s.throughput_per_s,
        );
        row(&mut out, "station", &s.name, "utilization", &s.utilization);
        row(&mut out, "station", &s.name, "mean_jobs", &s.mean_jobs);
        row(
            &mut out,
            "station",
            &s.name,
            "response_time_s",
            &s.response_time_s,
        );
        row(&mut out, "station", &s.name, "wait_time_s", &s.wait_time_s);
        if let Some(b) = &s.mean_batch_size {
            row(&mut out, "station", &s.name, "mean_batch_size", b);
        }
        if let Some(b) = &s.batches_per_s {
            row(&mut out, "station", &s.name, "batches_per_s", b);
        }
        if let Some(v) = &s.mean_spinning {
            row(&mut out, "station", &s.name, "mean_spinning", v);
        }
        if let Some(v) = &s.mean_sleeping {
            row(&mut out, "station", &s.name, "mean_sleeping", v);
        }
    }
    for c in &r.classes {
        row(
            &mut out,
            "class",
            &c.name,
            "throughput_per_s",
            &c.throughput_per_s,
        );
        response_rows(&mut out, "class", &c.name, &c.response_time_s);
    }
    for g in &r.regions {
        row(&mut out, "region", &g.name, "wait_time_s", &g.wait_time_s);
        row(&mut out, "region", &g.name, "mean_waiting", &g.mean_waiting);
        row(&mut out, "region", &g.name, "mean_inside", &g.mean_inside);
    }
    for (name, e) in &report.derived {
        row(&mut out, "derived", name, "value", e);
    }
    // Comment lines, so the figures above stay one table for CSV readers.
    for w in &report.warnings {
        let _ = writeln!(out, "# warning: {w}");
    }
    out
}
