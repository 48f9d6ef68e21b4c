//! `[simulation]`: how to run the model (a `RunConfig`) and its initial state.

use super::{Names, Table};
use crate::ctx::{Ctx, child};
use crate::num;
use crate::tree::{Node, V};
use qsim_kernel::{InitialState, Precision, RunConfig, Stop, Warmup};

pub(super) fn simulation(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    root: &Node,
) -> (Option<RunConfig>, Option<InitialState>) {
    let d = RunConfig::default();
    let Some(s) = root.get("simulation") else {
        return (Some(d), Some(InitialState::Thinking));
    };
    if ctx
        .table(s, "simulation", "the simulation settings")
        .is_none()
    {
        return (None, None);
    }
    ctx.check_keys(
        s,
        "simulation",
        &crate::format::SIMULATION.names(),
        "[simulation]",
    );
    let t = Table {
        node: s,
        path: "simulation",
    };
    let replications = t.opt(ctx, "replications", d.replications, |ctx, n, p| {
        let r = ctx.u32(n, p, 1, "a number of replications")?;
        if r < 2 {
            ctx.warn(
                &n.origin,
                p,
                "one replication gives no confidence interval; expected 2 or more (5 is the default)",
            );
        }
        Some(r)
    });
    let seed = t.opt(ctx, "seed", d.seed, |ctx, n, p| {
        ctx.int(n, p, 0, i64::MAX, "a seed").map(|v| v as u64)
    });
    let stop = t.opt(ctx, "stop", None, |ctx, n, p| {
        jobs_or_time(ctx, n, p, false).map(|x| {
            Some(match x {
                JobsOrTime::Jobs(j) => Stop::Jobs(j),
                JobsOrTime::Time(t) => Stop::Time(t),
            })
        })
    });
    // Without a warm-up, a tenth of whatever stop the run ends up with
    // (`--jobs`/`--time` may replace the file's): resolved at run start.
    let warmup = t.opt(ctx, "warmup", qsim_kernel::DEFAULT_WARMUP, warmup);
    let precision = t.opt(ctx, "precision", None, |ctx, n, p| {
        precision(ctx, n, p, replications.unwrap_or(d.replications)).map(Some)
    });
    let sla_s = t.opt(ctx, "sla_s", d.sla_s, |ctx, n, p| {
        ctx.positive(n, p, "time in seconds").map(Some)
    });
    let count = |ctx: &mut Ctx<'_>, n: &Node, p: &str| {
        ctx.int(n, p, 1, i64::MAX, "a count").map(|v| v as u64)
    };
    let max_jobs_present = t.opt(ctx, "max_jobs_present", d.max_jobs_present, count);
    let max_events = t.opt(ctx, "max_events", d.max_events, count);
    let station_tails = t.opt(ctx, "station_tails", d.station_tails, |ctx, n, p| {
        match n.v {
            V::Bool(b) => Some(b),
            ref other => {
                ctx.error(
                    &n.origin,
                    p,
                    format!("expected true or false, found {}", other.describe()),
                );
                None
            }
        }
    });
    let jobs_tail_k = t.opt(ctx, "jobs_tail_k", d.jobs_tail_k, |ctx, n, p| {
        ctx.u32(n, p, 1, "a number of jobs")
    });
    let initial = t.opt(ctx, "initial", InitialState::Thinking, |ctx, n, ip| {
        initial(ctx, names, n, ip)
    });
    let run = (|| {
        Some(RunConfig {
            replications: replications?,
            seed: seed?,
            stop: stop?.unwrap_or(d.stop),
            warmup: warmup?,
            precision: precision?,
            sla_s: sla_s?,
            max_jobs_present: max_jobs_present?,
            max_events: max_events?,
            station_tails: station_tails?,
            jobs_tail_k: jobs_tail_k?,
            ..d
        })
    })();
    (run, initial)
}

/// `warmup`: `"mser5"`, `"none"`, `{ fraction = F }`, `{ jobs = N }` or
/// `{ time = T }`.
fn warmup(ctx: &mut Ctx<'_>, n: &Node, p: &str) -> Option<Warmup> {
    match &n.v {
        V::Str(_) => ctx.choice(n, p, &["mser5", "none"]).map(|w| match w {
            "mser5" => Warmup::Mser5,
            _ => Warmup::None,
        }),
        // `{ fraction = F }`: that share of whatever stop the run ends
        // up with, so `--jobs`/`--time` rescale it.
        V::Table(_) if n.get("fraction").is_some() => {
            ctx.check_keys(n, p, &["fraction"], p);
            let f = n.get("fraction").expect("checked above");
            let fp = child(p, "fraction");
            let x = ctx.non_negative(f, &fp, "fraction of the stop")?;
            if x >= 1.0 {
                ctx.error(
                    &f.origin,
                    &fp,
                    format!(
                        "expected a fraction of the stop below 1 (0.1 discards the first tenth), found {x}"
                    ),
                );
                return None;
            }
            Some(Warmup::Fraction(x))
        }
        _ => jobs_or_time(ctx, n, p, true).map(|x| match x {
            JobsOrTime::Jobs(j) => Warmup::Jobs(j),
            JobsOrTime::Time(t) => Warmup::Time(t),
        }),
    }
}

/// `initial`: `"thinking"` or `{ station = "name" }`.
fn initial(ctx: &mut Ctx<'_>, names: &Names<'_>, n: &Node, ip: &str) -> Option<InitialState> {
    match &n.v {
        V::Str(x) if x == "thinking" => Some(InitialState::Thinking),
        V::Table(_) => {
            ctx.check_keys(n, ip, &["station"], "initial");
            Table { node: n, path: ip }
                .req(
                    ctx,
                    "station",
                    "the station where every job starts",
                    |ctx, st, p| names.station(ctx, st, p, &[]),
                )
                .map(InitialState::AtStation)
        }
        other => {
            ctx.error(
                &n.origin,
                ip,
                format!(
                    "expected \"thinking\" or {{ station = \"name\" }}, found {}",
                    other.describe()
                ),
            );
            None
        }
    }
}

/// `precision = { relative_half_width, max_replications }`.
fn precision(ctx: &mut Ctx<'_>, n: &Node, pp: &str, replications: u32) -> Option<Precision> {
    ctx.table(
        n,
        pp,
        "{ relative_half_width = 0.01, max_replications = 50 }",
    )?;
    ctx.check_keys(
        n,
        pp,
        &["relative_half_width", "max_replications"],
        "precision",
    );
    let t = Table { node: n, path: pp };
    let rhw = t.req(
        ctx,
        "relative_half_width",
        "the target CI half-width / mean, e.g. 0.01",
        |ctx, v, p| {
            let x = ctx.positive(v, p, "fraction")?;
            if x >= 1.0 {
                ctx.error(
                    &v.origin,
                    p,
                    format!(
                        "expected a fraction below 1 (e.g. 0.01 for 1%), found {}",
                        num(x)
                    ),
                );
                return None;
            }
            Some(x)
        },
    );
    let maxr = t.opt(ctx, "max_replications", 50, |ctx, v, p| {
        ctx.u32(v, p, 2, "a number of replications")
    });
    let (r, m) = (rhw?, maxr?);
    if m < replications {
        ctx.warn(
            &n.origin,
            &child(pp, "max_replications"),
            format!(
                "max_replications {m} is below replications {replications}; no replications will be added"
            ),
        );
    }
    Some(Precision {
        relative_half_width: r,
        max_replications: m,
    })
}

enum JobsOrTime {
    Jobs(u64),
    Time(f64),
}

fn jobs_or_time(ctx: &mut Ctx<'_>, n: &Node, path: &str, zero_ok: bool) -> Option<JobsOrTime> {
    let form = if zero_ok {
        "{ jobs = 10000 }, { time_s = 10.0 }, { fraction = 0.1 }, \"mser5\" or \"none\""
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
