//! `[simulation]`: how to run the model (a `RunConfig`) and its initial state.

use super::{Names, Table};
use crate::ctx::{Ctx, child};
use crate::num;
use crate::tree::{Node, V};
use qsim_kernel::{InitialState, Precision, RunConfig, Stop, Warmup};

pub(super) const SIM_KEYS: &[&str] = &[
    "replications",
    "seed",
    "stop",
    "warmup",
    "precision",
    "sla_s",
    "initial",
    "max_jobs_present",
    "max_events",
];

pub(super) fn simulation(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    root: &Node,
) -> (Option<RunConfig>, Option<InitialState>) {
    let mut run = RunConfig::default();
    let Some(s) = root.get("simulation") else {
        return (Some(run), Some(InitialState::Thinking));
    };
    if ctx
        .table(s, "simulation", "the simulation settings")
        .is_none()
    {
        return (None, None);
    }
    ctx.check_keys(s, "simulation", SIM_KEYS, "[simulation]");
    let mut ok = true;
    let p = |k: &str| child("simulation", k);
    if let Some(n) = s.get("replications") {
        match ctx.u32(n, &p("replications"), 1, "a number of replications") {
            Some(r) => {
                run.replications = r;
                if r < 2 {
                    ctx.warn(
                        &n.origin,
                        &p("replications"),
                        "one replication gives no confidence interval; expected 2 or more (5 is the default)",
                    );
                }
            }
            None => ok = false,
        }
    }
    if let Some(n) = s.get("seed") {
        match ctx.int(n, &p("seed"), 0, i64::MAX, "a seed") {
            Some(v) => run.seed = v as u64,
            None => ok = false,
        }
    }
    let mut stop_given = false;
    if let Some(n) = s.get("stop") {
        stop_given = true;
        match jobs_or_time(ctx, n, &p("stop"), false) {
            Some(JobsOrTime::Jobs(j)) => run.stop = Stop::Jobs(j),
            Some(JobsOrTime::Time(t)) => run.stop = Stop::Time(t),
            None => ok = false,
        }
    }
    match s.get("warmup") {
        Some(n) => {
            let wp = p("warmup");
            match &n.v {
                V::Str(_) => match ctx.choice(n, &wp, &["mser5", "none"]) {
                    Some("mser5") => run.warmup = Warmup::Mser5,
                    Some(_) => run.warmup = Warmup::None,
                    None => ok = false,
                },
                _ => match jobs_or_time(ctx, n, &wp, true) {
                    Some(JobsOrTime::Jobs(j)) => run.warmup = Warmup::Jobs(j),
                    Some(JobsOrTime::Time(t)) => run.warmup = Warmup::Time(t),
                    None => ok = false,
                },
            }
        }
        None if stop_given => {
            run.warmup = match run.stop {
                Stop::Jobs(j) => Warmup::Jobs(j / 10),
                Stop::Time(t) => Warmup::Time(t / 10.0),
            }
        }
        None => {}
    }
    if let Some(n) = s.get("precision") {
        let pp = p("precision");
        if ctx
            .table(
                n,
                &pp,
                "{ relative_half_width = 0.01, max_replications = 50 }",
            )
            .is_some()
        {
            ctx.check_keys(
                n,
                &pp,
                &["relative_half_width", "max_replications"],
                "precision",
            );
            let rhw = ctx
                .required(
                    n,
                    &pp,
                    "relative_half_width",
                    "the target CI half-width / mean, e.g. 0.01",
                )
                .and_then(|v| {
                    let x = ctx.positive(v, &child(&pp, "relative_half_width"), "fraction")?;
                    if x >= 1.0 {
                        ctx.error(
                            &v.origin,
                            &child(&pp, "relative_half_width"),
                            format!(
                                "expected a fraction below 1 (e.g. 0.01 for 1%), found {}",
                                num(x)
                            ),
                        );
                        return None;
                    }
                    Some(x)
                });
            let maxr =
                Table { node: n, path: &pp }.opt(ctx, "max_replications", 50, |ctx, v, p| {
                    ctx.u32(v, p, 2, "a number of replications")
                });
            match (rhw, maxr) {
                (Some(r), Some(m)) => {
                    if m < run.replications {
                        ctx.warn(
                            &n.origin,
                            &child(&pp, "max_replications"),
                            format!(
                                "max_replications {m} is below replications {}; no replications will be added",
                                run.replications
                            ),
                        );
                    }
                    run.precision = Some(Precision {
                        relative_half_width: r,
                        max_replications: m,
                    })
                }
                _ => ok = false,
            }
        } else {
            ok = false;
        }
    }
    if let Some(n) = s.get("sla_s") {
        match ctx.positive(n, &p("sla_s"), "time in seconds") {
            Some(v) => run.sla_s = Some(v),
            None => ok = false,
        }
    }
    for (k, slot) in [
        ("max_jobs_present", &mut run.max_jobs_present),
        ("max_events", &mut run.max_events),
    ] {
        if let Some(n) = s.get(k) {
            match ctx.int(n, &p(k), 1, i64::MAX, "a count") {
                Some(v) => *slot = v as u64,
                None => ok = false,
            }
        }
    }
    let initial = match s.get("initial") {
        None => Some(InitialState::Thinking),
        Some(n) => {
            let ip = p("initial");
            match &n.v {
                V::Str(x) if x == "thinking" => Some(InitialState::Thinking),
                V::Table(_) => {
                    ctx.check_keys(n, &ip, &["station"], "initial");
                    ctx.required(n, &ip, "station", "the station where every job starts")
                        .and_then(|st| names.station(ctx, st, &child(&ip, "station"), &[]))
                        .map(InitialState::AtStation)
                }
                other => {
                    ctx.error(
                        &n.origin,
                        &ip,
                        format!(
                            "expected \"thinking\" or {{ station = \"name\" }}, found {}",
                            other.describe()
                        ),
                    );
                    None
                }
            }
        }
    };
    (ok.then_some(run), initial)
}

enum JobsOrTime {
    Jobs(u64),
    Time(f64),
}

fn jobs_or_time(ctx: &mut Ctx<'_>, n: &Node, path: &str, zero_ok: bool) -> Option<JobsOrTime> {
    let form = if zero_ok {
        "{ jobs = 10000 }, { time_s = 10.0 }, \"mser5\" or \"none\""
    } else {
        "{ jobs = 100000 } or { time_s = 1000.0 }"
    };
    let V::Table(_) = &n.v else {
        ctx.error(
            &n.origin,
            path,
            format!("expected {form}, found {}", n.v.describe()),
        );
        return None;
    };
    ctx.check_keys(n, path, &["jobs", "time_s"], path);
    match (n.get("jobs"), n.get("time_s")) {
        (Some(j), None) => {
            let min = if zero_ok { 0 } else { 1 };
            ctx.int(j, &child(path, "jobs"), min, i64::MAX, "a number of jobs")
                .map(|v| JobsOrTime::Jobs(v as u64))
        }
        (None, Some(t)) => {
            let v = if zero_ok {
                ctx.non_negative(t, &child(path, "time_s"), "time in seconds")
            } else {
                ctx.positive(t, &child(path, "time_s"), "time in seconds")
            };
            v.map(JobsOrTime::Time)
        }
        _ => {
            ctx.error(
                &n.origin,
                path,
                format!("expected exactly one of jobs or time_s: {form}"),
            );
            None
        }
    }
}
