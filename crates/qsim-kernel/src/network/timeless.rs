//! Workloads that can never advance the clock: every interaction of such a
//! class completes at the instant it starts, so a run would process endless
//! events at one time and report a meaningless `0 ± 0`.

use super::{Check, Field, Network, Routing, Scope, Target, Workload};

/// The stations a class can reach (by branches of positive probability),
/// in index order.
fn reachable(routing: &Routing, ns: usize) -> Vec<usize> {
    let mut seen = vec![false; ns];
    let mut todo: Vec<usize> = Vec::new();
    let mut visit = |t: &Target, todo: &mut Vec<usize>| {
        if let Target::Station(s) = *t
            && s < ns
            && !seen[s]
        {
            seen[s] = true;
            todo.push(s);
        }
    };
    match routing {
        Routing::Sequence(seq) => {
            for &s in seq {
                visit(&Target::Station(s), &mut todo);
            }
        }
        Routing::Probabilistic { entry, from } => {
            for (t, p) in entry {
                if *p > 0.0 {
                    visit(t, &mut todo);
                }
            }
            while let Some(s) = todo.pop() {
                for (t, p) in from.get(s).into_iter().flatten() {
                    if *p > 0.0 {
                        visit(t, &mut todo);
                    }
                }
            }
        }
    }
    (0..ns).filter(|&s| seen[s]).collect()
}

/// Checks every class of a whole network; the stations a closed class
/// visits are those its routing can reach.
pub(super) fn check(net: &Network, c: &mut Check<'_>) {
    let spec = net.spec();
    let starts = spec.chain_starts();
    let switching = spec.has_switching();
    for (ci, class) in spec.classes.iter().enumerate() {
        if starts[ci] != ci {
            // Jobs only switch into it: its chain's start class speaks.
            continue;
        }
        c.scope = Scope::Class(ci);
        match &class.workload {
            // Arrivals all at one instant flood the network however fast
            // the stations are.
            Workload::Open { interarrival } if interarrival.mean() == 0.0 => c.error(
                &[Field::Key("arrival")],
                "the mean time between arrivals is 0, so arrivals would never stop at time 0; expected a mean > 0",
            ),
            Workload::Open { .. } => {}
            Workload::Closed { think, .. } => {
                if think.as_ref().is_some_and(|d| d.mean() > 0.0) {
                    continue;
                }
                let visited = if switching {
                    let r = spec.stations_reached(ci);
                    (0..r.len()).filter(|&s| r[s]).collect()
                } else {
                    reachable(&class.routing, spec.stations.len())
                };
                // With switching, every class of the chain may be served.
                let chain: Vec<usize> = (0..starts.len()).filter(|&k| starts[k] == ci).collect();
                // Only plain stations are known to take no time; the other
                // kinds have hand-off costs, round trips, timers or sub-jobs.
                let timeless = visited.iter().all(|&s| {
                    let st = &spec.stations[s];
                    st.kind.is_plain()
                        && chain.iter().all(|&k| {
                            st.service
                                .get(k)
                                .cloned()
                                .flatten()
                                .is_none_or(|d| d.mean() == 0.0)
                        })
                });
                if timeless {
                    let names: Vec<&str> =
                        visited.iter().map(|&s| spec.stations[s].name.as_str()).collect();
                    let stations = if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    };
                    c.error(
                        &[Field::Key("think")],
                        format!(
                            "this closed class can never advance time: its think time is 0 and so is the mean service at every station it visits ({stations}), so its jobs would complete endless interactions at time 0; give it a think time or a service time > 0"
                        ),
                    );
                }
            }
        }
    }
}
