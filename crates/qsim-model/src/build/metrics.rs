//! `[metrics]`: derived metrics, `name = "expression"`.

use super::Names;
use crate::ctx::{Ctx, child};
use crate::tree::{Node, Origin};
use crate::{DerivedMetric, Expr, did_you_mean};

/// The variable names a derived metric may use.
pub(crate) fn metric_names(stations: &[&str], classes: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "throughput",
        "response_time",
        "p50",
        "p90",
        "p95",
        "p99",
        "p999",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for s in stations {
        for m in [
            "throughput",
            "utilization",
            "mean_jobs",
            "response_time",
            "wait_time",
            "mean_batch_size",
            "batches_per_s",
            "mean_spinning",
            "mean_sleeping",
        ] {
            v.push(format!("stations.{s}.{m}"));
        }
    }
    for c in classes {
        for m in ["throughput", "response_time"] {
            v.push(format!("classes.{c}.{m}"));
        }
    }
    v
}

pub(super) fn metrics(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    root: &Node,
) -> Option<Vec<DerivedMetric>> {
    let Some(m) = root.get("metrics") else {
        return Some(Vec::new());
    };
    let entries = ctx.table(m, "metrics", "a table of name = \"expression\"")?;
    let stations = names.station_list();
    let classes: Vec<&str> = names.classes.iter().map(|c| c.name.as_str()).collect();
    let known = metric_names(&stations, &classes);
    let known_ref: Vec<&str> = known.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    let mut ok = true;
    for e in entries {
        let p = child("metrics", &e.key);
        let Some(text) = ctx.str(
            &e.node,
            &p,
            "an expression such as \"0.45 * 60 * throughput\"",
        ) else {
            ok = false;
            continue;
        };
        match Expr::parse(text) {
            Ok(expr) => {
                for v in expr.variables() {
                    if !known.contains(&v) {
                        let hint =
                            did_you_mean(&v, &known_ref).map(|s| format!("did you mean {s}?"));
                        ctx.error_hint(
                            &e.node.origin,
                            &p,
                            format!(
                                "unknown variable {v}; expected throughput, response_time, p50, p90, p95, p99, p999, stations.NAME.{{throughput,utilization,mean_jobs,response_time,wait_time,mean_batch_size,batches_per_s,mean_spinning,mean_sleeping}} or classes.NAME.{{throughput,response_time}}"
                            ),
                            hint,
                        );
                        ok = false;
                    }
                }
                out.push(DerivedMetric {
                    name: e.key.clone(),
                    expr,
                });
            }
            Err(err) => {
                // Point at the character when the string is written plainly.
                let origin = match &e.node.origin {
                    Origin::File(span) => {
                        let raw = ctx.text.get(span.clone()).unwrap_or("");
                        if raw.starts_with('"') && !raw.contains('\\') && !raw.starts_with("\"\"\"")
                        {
                            let at = span.start + 1 + err.offset;
                            Origin::File(at..at)
                        } else {
                            e.node.origin.clone()
                        }
                    }
                    o => o.clone(),
                };
                ctx.error(&origin, &p, format!("{err}"));
                ok = false;
            }
        }
    }
    ok.then_some(out)
}
