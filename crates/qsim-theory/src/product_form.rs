//! Whether a network is within the exact (BCMP product-form) methods, and if
//! not, why.

use crate::visits::visit_ratios;
use qsim_kernel::{Discipline, NetworkSpec, RowPolicy, StationKind, WhenFull, Workload};

/// Reasons the network is outside the exact methods; empty when it is within.
pub fn reasons(spec: &NetworkSpec) -> Vec<String> {
    // Class switching: the network with each chain as one class.
    match crate::chains::merge(spec) {
        Ok(Some((merged, mut why))) => {
            why.extend(reasons(&merged));
            return why;
        }
        Ok(None) => {}
        Err(e) => return vec![e.to_string()],
    }
    let mut why = Vec::new();
    let multi = spec.classes.len() > 1;
    for (s, st) in spec.stations.iter().enumerate() {
        let name = &st.name;
        if let Some(cap) = spec.capacity.get(s).copied().flatten() {
            why.push(match cap.when_full {
                WhenFull::Drop => format!(
                    "station {name}: finite capacity {} (jobs lost when full); exact only for one open M/M/c/K station alone",
                    cap.limit
                ),
                WhenFull::Block => format!(
                    "station {name}: finite capacity {} blocking its senders when full (blocking after service); no exact method applies, except for one open M/M/c/K station alone",
                    cap.limit
                ),
            });
        }
        if spec
            .weights
            .get(s)
            .is_some_and(|w| w.windows(2).any(|p| p[0] != p[1]))
        {
            why.push(format!(
                "station {name}: discriminatory processor sharing (unequal class weights)"
            ));
        }
        let dists: Vec<_> = st.service.iter().flatten().collect();
        let all_exp = dists.iter().all(|d| d.is_exponential());
        let same_mean = dists
            .windows(2)
            .all(|w| (w[0].mean() - w[1].mean()).abs() <= 1e-12 * w[0].mean());
        match &st.kind {
            StationKind::Delay => {}
            StationKind::Queue {
                servers,
                discipline,
            } => {
                match discipline {
                    // PS serves min(n, c) jobs' worth at any service
                    // distribution: a product-form load-dependent station.
                    Discipline::Ps => {}
                    Discipline::Priority => {
                        why.push(format!("station {name}: priority scheduling"))
                    }
                    Discipline::PreemptivePriority => {
                        why.push(format!("station {name}: preemptive priority scheduling"))
                    }
                    Discipline::Fcfs | Discipline::Lcfs => {
                        if !all_exp && st.speed.is_none() {
                            let d = if *discipline == Discipline::Fcfs {
                                "fcfs"
                            } else {
                                "lcfs"
                            };
                            why.push(format!("station {name}: {d} with non-exponential service"));
                        }
                        if !same_mean {
                            why.push(format!(
                                "station {name}: FCFS with class-dependent service times"
                            ));
                        }
                    }
                }
                if multi && *servers > 1 {
                    why.push(format!(
                        "station {name}: several servers in a multi-class model"
                    ));
                }
            }
            StationKind::Latch(l) => {
                if l.numa.is_some() || l.spin.is_some() {
                    why.push(format!("station {name}: latch with a contention mechanism"));
                } else if !all_exp && st.speed.is_none() {
                    why.push(format!(
                        "station {name}: latch with non-exponential hold time"
                    ));
                }
            }
            StationKind::Batch(_) => {
                why.push(format!("station {name}: batch (group commit) service"))
            }
            StationKind::Link(l) if l.pipeline > 1 || l.max_batch > 1 => {
                why.push(format!("station {name}: link with pipelining or batching"))
            }
            StationKind::Link(_) if !all_exp => why.push(format!(
                "station {name}: link with a non-exponential round trip"
            )),
            StationKind::Link(_) => {}
            StationKind::Fork(_) | StationKind::Join(_) => {
                why.push(format!("station {name}: fork/join"))
            }
        }
        if st.speed.is_some() && multi {
            why.push(format!(
                "station {name}: a speed curve in a multi-class model"
            ));
        }
    }
    for r in &spec.regions {
        if r.limit.is_some() {
            why.push(format!("region {}: admission limit", r.name));
        }
    }
    for (i, c) in spec.classes.iter().enumerate() {
        if visit_ratios(spec, i).is_none() {
            why.push(format!(
                "class {}: its routing never ends an interaction",
                c.name
            ));
        }
        if let Workload::Open { interarrival } = &c.workload
            && !interarrival.is_exponential()
        {
            why.push(format!(
                "class {}: non-exponential inter-arrival times (not a Poisson stream)",
                c.name
            ));
        }
    }
    why
}

/// The class and the row (a station's name, or `source`) that the policy
/// `p` of a network with `spec` applies to, for a message.
pub(crate) fn policy_place<'a>(spec: &'a NetworkSpec, p: &RowPolicy) -> (&'a str, &'a str) {
    let class = spec.classes.get(p.class).map_or("?", |c| c.name.as_str());
    let row = p
        .row
        .and_then(|s| spec.stations.get(s))
        .map_or("source", |s| s.name.as_str());
    (class, row)
}

/// Reasons a network's routing policies put it outside the exact methods
/// (one per row with a policy); empty when every row is Markov. The
/// traffic equations read a row's weights as its probabilities: for round
/// robin the visit ratios are those, but its stations see non-Poisson
/// arrivals (two stations in turn: Erlang-2); for shortest_queue and
/// power_of_d only the row's total is known.
pub fn policy_reasons(network: &qsim_kernel::Network) -> Vec<String> {
    let spec = network.spec();
    network
        .policies()
        .iter()
        .map(|p| {
            let (class, row) = policy_place(spec, p);
            let what = if p.policy.reads_queues() {
                "the split among its stations depends on their queues, so only the row's total visits are known"
            } else {
                "its visit ratios are the row's weights, but its stations' arrivals are not Poisson"
            };
            format!(
                "class {class}, row {row}: routing policy {} is not Markov routing; {what}, and no product-form solution is exact",
                p.policy.name()
            )
        })
        .collect()
}
