//! The workload of a class (or of `[workload]`, the single-class form):
//! open with an arrival process, or closed with a population.

use super::Table;
use crate::ctx::{Ctx, child};
use crate::dists::dist;
use crate::tree::{Node, Origin, subtree_origin};
use qsim_kernel::Workload;
use qsim_kernel::schedule::{CapacityStep, Change, ClassSchedule, StationSchedule, Step};
use std::path::Path;

/// What was read of a workload.
pub(super) struct Read {
    /// The workload, if every key could be read.
    pub workload: Option<Workload>,
    /// As much of it as the kernel's range rules can check when a key could
    /// not be read (a population whose think time is wrong).
    pub partial: Option<Workload>,
    /// For an open workload: where its arrivals are given, and the key path.
    pub arrival_at: Option<(Origin, String)>,
}

/// The workload at `t`.
pub(super) fn read(ctx: &mut Ctx<'_>, t: Table<'_, '_>, base: &Path) -> Read {
    let (node, path) = (t.node, t.path);
    // The type may be left out when the other keys make it obvious.
    let ty = match t.get("type") {
        Some(n) => ctx.choice(n, &child(path, "type"), &["open", "closed"]),
        None if t.get("population").is_some() => Some("closed"),
        None if t.get("arrival").is_some() || t.get("rate_per_s").is_some() => Some("open"),
        None => {
            ctx.error(
                &node.origin,
                path,
                "missing key `type`; expected \"open\" (with arrival) or \"closed\" (with population)",
            );
            None
        }
    };
    let mut out = Read {
        workload: None,
        partial: None,
        arrival_at: None,
    };
    match ty {
        Some("open") => {
            not_for(ctx, t, &["population", "think"], "closed", "open");
            (out.workload, out.arrival_at) = open(ctx, t, base);
        }
        Some(_) => {
            not_for(ctx, t, &["arrival", "rate_per_s"], "open", "closed");
            let population = t.req(
                ctx,
                "population",
                "the number of jobs (>= 1)",
                |ctx, n, p| ctx.count(n, p, "a number of jobs"),
            );
            let think = t.opt(ctx, "think", None, |ctx, n, p| {
                dist(ctx, n, p, base).map(Some)
            });
            match (population, think) {
                (Some(population), Some(think)) => {
                    out.workload = Some(Workload::Closed { population, think })
                }
                (Some(population), None) => {
                    out.partial = Some(Workload::Closed {
                        population,
                        think: None,
                    })
                }
                _ => {}
            }
        }
        None => {}
    }
    out
}

/// Reports keys of the other type of workload.
fn not_for(ctx: &mut Ctx<'_>, t: Table<'_, '_>, keys: &[&str], is_for: &str, this: &str) {
    for k in keys {
        if let Some(n) = t.get(k) {
            ctx.error(
                &n.origin,
                &child(t.path, k),
                format!("`{k}` is for {is_for} workloads; this workload has type = \"{this}\""),
            );
        }
    }
}

fn open(
    ctx: &mut Ctx<'_>,
    t: Table<'_, '_>,
    base: &Path,
) -> (Option<Workload>, Option<(Origin, String)>) {
    let at = |n: &Node, key: &str| Some((subtree_origin(n), child(t.path, key)));
    match (t.get("arrival"), t.get("rate_per_s")) {
        (Some(a), None) => {
            let p = child(t.path, "arrival");
            let w = dist(ctx, a, &p, base).map(|d| Workload::Open { interarrival: d });
            (w, at(a, "arrival"))
        }
        (None, Some(r)) => {
            // The shorthand for exponential inter-arrival times; the
            // distribution's own rule would speak of a mean, so the rate is
            // checked here, in its own terms.
            let p = child(t.path, "rate_per_s");
            let w = ctx.positive(r, &p, "arrival rate").and_then(|r| {
                qsim_kernel::Dist::exponential(1.0 / r)
                    .ok()
                    .map(|d| Workload::Open { interarrival: d })
            });
            (w, at(r, "rate_per_s"))
        }
        (Some(_), Some(r)) => {
            ctx.error(
                &r.origin,
                &child(t.path, "rate_per_s"),
                "found both arrival and rate_per_s; expected one of them (rate_per_s is the shorthand for exponential inter-arrival times)",
            );
            (None, None)
        }
        (None, None) => {
            ctx.error(
                &t.node.origin,
                t.path,
                "missing key `arrival`; an open workload needs arrival = { dist = \"exponential\", mean = ... } or rate_per_s = ...",
            );
            (None, None)
        }
    }
}

/// The steps of `[[PATH.schedule]]` in the class table `t` (empty when
/// absent); `None` when a step could not be read (reported). Shape and
/// type only: the range rules are the kernel's (`schedule::check`).
pub(super) fn schedule(ctx: &mut Ctx<'_>, t: Table<'_, '_>) -> Option<Vec<Step>> {
    let names = crate::format::SCHEDULE_STEP.names();
    steps(ctx, t, "a schedule step", &names, |ctx, item, p, st, at| {
        let num = |ctx: &mut Ctx<'_>, key: &str| {
            st.opt(ctx, key, None, |ctx, n, p| ctx.f64(n, p).map(Some))
        };
        let change = match (item.get("population"), item.get("rate_per_s")) {
            (Some(n), None) => {
                if let Some(u) = item.get("until") {
                    ctx.error(
                        &u.origin,
                        &child(p, "until"),
                        "`until` makes a ramp of the arrival rate; a population changes in one step",
                    );
                }
                ctx.count(n, &child(p, "population"), "a number of jobs")
                    .map(Change::Population)
            }
            (None, Some(_)) => match (num(ctx, "rate_per_s"), num(ctx, "until")) {
                (Some(Some(r)), Some(None)) => Some(Change::RatePerS(r)),
                (Some(Some(r)), Some(Some(u))) => Some(Change::Ramp {
                    rate_per_s: r,
                    until_s: u,
                }),
                _ => None,
            },
            (Some(_), Some(r)) => {
                ctx.error(
                    &r.origin,
                    &child(p, "rate_per_s"),
                    "found both population and rate_per_s; a step sets one (population for closed workloads, rate_per_s for open ones)",
                );
                None
            }
            (None, None) => {
                ctx.error(
                    &item.origin,
                    p,
                    "missing the change; expected population = N (closed workload) or rate_per_s = R (open workload, with until = T for a linear ramp)",
                );
                None
            }
        };
        Some(Step {
            at_s: at?,
            change: change?,
        })
    })
}

/// The steps of the `[[PATH.schedule]]` array in table `t`, each a table
/// of `names` read by `step` (given the step's node, path, table and its
/// `at`); empty when absent, `None` when a step could not be read
/// (reported).
fn steps<T>(
    ctx: &mut Ctx<'_>,
    t: Table<'_, '_>,
    what: &str,
    names: &[&'static str],
    mut step: impl FnMut(&mut Ctx<'_>, &Node, &str, &Table<'_, '_>, Option<f64>) -> Option<T>,
) -> Option<Vec<T>> {
    let Some(node) = t.get("schedule") else {
        return Some(Vec::new());
    };
    let path = child(t.path, "schedule");
    let items = super::non_empty_array(ctx, node, &path, "tables ([[...schedule]] steps)", "step")?;
    let mut steps = Vec::with_capacity(items.len());
    let mut ok = true;
    for (k, item) in items.iter().enumerate() {
        let p = format!("{path}[{k}]");
        if ctx.table(item, &p, what).is_none() {
            ok = false;
            continue;
        }
        ctx.check_keys(item, &p, names, what);
        let st = Table {
            node: item,
            path: &p,
        };
        let at = st.req(ctx, "at", "the time of the step in seconds", |ctx, n, p| {
            ctx.f64(n, p)
        });
        match step(ctx, item, &p, &st, at) {
            Some(x) => steps.push(x),
            None => ok = false,
        }
    }
    ok.then_some(steps)
}

/// Checks the schedules of `network` (read per class into `steps`) with
/// the kernel's rules, reporting each at its key, and returns them for the
/// run configuration.
pub(crate) fn check_schedules(
    ctx: &mut Ctx<'_>,
    network: &qsim_kernel::Network,
    root: &Node,
    class_paths: &[String],
    steps: Vec<Vec<Step>>,
) -> Vec<ClassSchedule> {
    let list: Vec<ClassSchedule> = steps
        .into_iter()
        .enumerate()
        .filter(|(_, s)| !s.is_empty())
        .map(|(class, steps)| ClassSchedule { class, steps })
        .collect();
    for e in qsim_kernel::schedule::check(network, &list) {
        let class_path = &class_paths[list[e.schedule].class];
        let node = class_path
            .split('.')
            .try_fold(root, |n, k| n.get(k))
            .and_then(|n| n.get("schedule"));
        let path = child(class_path, "schedule");
        schedule_error(ctx, root, node, path, e);
    }
    list
}

/// Reports the schedule error `e` at the step and key it names, below the
/// `schedule` array `node` at `path` (at the array, or at `root`'s origin,
/// where the step or the key is not in the file).
fn schedule_error(
    ctx: &mut Ctx<'_>,
    root: &Node,
    mut node: Option<&Node>,
    mut path: String,
    e: qsim_kernel::schedule::ScheduleError,
) {
    if let (Some(k), Some(crate::tree::V::Array(items))) = (e.step, node.map(|n| &n.v)) {
        node = items.get(k);
        path = format!("{path}[{k}]");
        if let Some(v) = node.and_then(|n| n.get(e.key)) {
            node = Some(v);
            path = child(&path, e.key);
        }
    }
    let origin = node.map_or_else(|| root.origin.clone(), |n| n.origin.clone());
    ctx.error(&origin, &path, e.message);
}

/// The steps of `[[stations.NAME.schedule]]` in the station table `t`
/// (empty when absent); `None` when a step could not be read (reported).
/// Shape and type only: the range rules are the kernel's
/// (`schedule::check_stations`).
pub(super) fn station_schedule(ctx: &mut Ctx<'_>, t: Table<'_, '_>) -> Option<Vec<CapacityStep>> {
    let names = crate::format::CAPACITY_STEP.names();
    steps(
        ctx,
        t,
        "a capacity schedule step",
        &names,
        |ctx, _, _, st, at| {
            let servers = st.opt(ctx, "servers", None, |ctx, n, p| {
                ctx.int(n, p, 0, i64::from(u32::MAX), "a number of servers")
                    .map(|v| Some(v as u32))
            });
            let speedup = st.opt(ctx, "speedup", None, |ctx, n, p| ctx.f64(n, p).map(Some));
            Some(CapacityStep {
                at_s: at?,
                servers: servers?,
                speedup: speedup?,
            })
        },
    )
}

/// Checks the capacity schedules of `network` (read per station into
/// `steps`) with the kernel's rules, reporting each at its key, and
/// returns them for the run configuration.
pub(crate) fn check_station_schedules(
    ctx: &mut Ctx<'_>,
    network: &qsim_kernel::Network,
    root: &Node,
    steps: Vec<Vec<CapacityStep>>,
) -> Vec<StationSchedule> {
    let list: Vec<StationSchedule> = steps
        .into_iter()
        .enumerate()
        .filter(|(_, s)| !s.is_empty())
        .map(|(station, steps)| StationSchedule { station, steps })
        .collect();
    for e in qsim_kernel::schedule::check_stations(network, &list) {
        let name = &network.spec().stations[list[e.schedule].station].name;
        let station_path = child("stations", name);
        let node = root
            .get("stations")
            .and_then(|n| n.get(name))
            .and_then(|n| n.get("schedule"));
        let path = child(&station_path, "schedule");
        schedule_error(ctx, root, node, path, e);
    }
    list
}
