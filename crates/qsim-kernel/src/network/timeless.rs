//! Workloads that can never advance the clock: every interaction of such a
//! class completes at the instant it starts, so a run would process endless
//! events at one time and report a meaningless `0 ± 0`.

use super::{Check, Field, Network, Scope, StationKind, Workload};

/// Checks every class of a whole network; the stations a closed class
/// visits come from its visit ratios.
pub(super) fn check(net: &Network, c: &mut Check<'_>) {
    let spec = net.spec();
    for (ci, class) in spec.classes.iter().enumerate() {
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
                let Some(visits) = net.visit_ratios(ci) else {
                    continue;
                };
                let visited: Vec<usize> = (0..visits.len()).filter(|&s| visits[s] > 0.0).collect();
                // Only plain stations are known to take no time; the other
                // kinds have hand-off costs, round trips, timers or sub-jobs.
                let timeless = visited.iter().all(|&s| {
                    let st = &spec.stations[s];
                    matches!(st.kind, StationKind::Delay | StationKind::Queue { .. })
                        && st
                            .service
                            .get(ci)
                            .cloned()
                            .flatten()
                            .is_none_or(|d| d.mean() == 0.0)
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
