//! The JSON document of one run.

use crate::{Report, bottleneck};
use qsim_kernel::{Estimate, ResponseEstimate, Stop, Warmup};
use serde_json::{Map, Value, json};

fn est(e: &Estimate) -> Value {
    json!({ "mean": e.mean, "ci95": e.ci95 })
}

fn response(r: &ResponseEstimate) -> Value {
    json!({
        "mean": r.mean,
        "ci95": r.ci95,
        "p50": est(&r.p50),
        "p90": est(&r.p90),
        "p95": est(&r.p95),
        "p99": est(&r.p99),
        "p999": est(&r.p999),
    })
}

/// Renders a report as one JSON object; the schema is documented in README.md.
pub fn to_json(report: &Report) -> Value {
    let r = report.results;
    let mut system = Map::new();
    system.insert("throughput_per_s".into(), est(&r.system.throughput_per_s));
    system.insert(
        "response_time_s".into(),
        response(&r.system.response_time_s),
    );
    if let Some(v) = &r.system.sla_violation {
        system.insert("sla_violation".into(), est(v));
    }
    let mut stations = Map::new();
    for s in &r.stations {
        let mut m = Map::new();
        m.insert("kind".into(), json!(s.kind));
        m.insert("throughput_per_s".into(), est(&s.throughput_per_s));
        m.insert("utilization".into(), est(&s.utilization));
        m.insert("mean_jobs".into(), est(&s.mean_jobs));
        m.insert("response_time_s".into(), est(&s.response_time_s));
        m.insert("wait_time_s".into(), est(&s.wait_time_s));
        if let Some(b) = &s.mean_batch_size {
            m.insert("mean_batch_size".into(), est(b));
        }
        if let Some(b) = &s.batches_per_s {
            m.insert("batches_per_s".into(), est(b));
        }
        if let Some(v) = &s.mean_spinning {
            m.insert("mean_spinning".into(), est(v));
        }
        if let Some(v) = &s.mean_sleeping {
            m.insert("mean_sleeping".into(), est(v));
        }
        stations.insert(s.name.clone(), Value::Object(m));
    }
    let mut classes = Map::new();
    for c in &r.classes {
        classes.insert(
            c.name.clone(),
            json!({
                "throughput_per_s": est(&c.throughput_per_s),
                "response_time_s": response(&c.response_time_s),
            }),
        );
    }
    let mut regions = Map::new();
    for g in &r.regions {
        regions.insert(
            g.name.clone(),
            json!({
                "wait_time_s": est(&g.wait_time_s),
                "mean_waiting": est(&g.mean_waiting),
                "mean_inside": est(&g.mean_inside),
            }),
        );
    }
    let mut derived = Map::new();
    for (name, e) in &report.derived {
        derived.insert(name.clone(), est(e));
    }
    let c = report.config;
    let stop = match c.stop {
        Stop::Jobs(n) => json!({ "jobs": n }),
        Stop::Time(t) => json!({ "time_s": t }),
    };
    let warmup = match c.effective_warmup() {
        Warmup::None => json!("none"),
        Warmup::Jobs(n) => json!({ "jobs": n }),
        Warmup::Time(t) => json!({ "time_s": t }),
        Warmup::Mser5 => json!("mser5"),
        Warmup::Fraction(f) => json!({ "fraction": f }),
    };
    json!({
        "model": report.model,
        "run": {
            "seed": c.seed,
            "replications": r.replications,
            "stop": stop,
            "warmup": warmup,
            "initial_state": report.initial_state,
            "events": r.events,
            "measured_time_s": r.measured_time_s,
            "warmup_time_s": r.warmup_time_s,
        },
        "system": Value::Object(system),
        "stations": Value::Object(stations),
        "classes": Value::Object(classes),
        "regions": Value::Object(regions),
        "derived": Value::Object(derived),
        "bottleneck": bottleneck(r).map(|b| json!({ "station": b.station, "utilization": b.utilization })),
        "warnings": report.warnings,
    })
}
