//! Class switching: a chain (the classes joined by switching) as one class.
//!
//! The traffic equations over (class, station) pairs are
//! [`crate::visits::chain_visits`]. A chain behaves, at every station, like a single class whose visits are
//! the chain's visits there and whose mean service is the chain's demand
//! over those visits: for product-form networks (BCMP: PS and delay
//! stations at any service times, FCFS with one exponential time for every
//! class) the chain's throughput and each station's mean jobs and
//! utilization are exactly those of that class. [`merge`] builds it.

use crate::Error;
use qsim_kernel::{ClassSpec, Discipline, Dist, NetworkSpec, Routing, StationKind, Target};

/// A network with class switching as the same network with one class per
/// chain (named and shaped like the chain's start class): the chain's
/// visits, its routing between stations weighted by the flow of each
/// class, and at each station its demand over its visits as mean service.
/// The second part is why that single class does not give the chain's
/// exact answer (stations whose queueing depends on which class is
/// served); empty when it does. `Ok(None)` without switching; `Err` when
/// the traffic equations have no solution.
pub fn merge(spec: &NetworkSpec) -> Result<Option<(NetworkSpec, Vec<String>)>, Error> {
    if !spec.has_switching() {
        return Ok(None);
    }
    let starts = spec.chain_starts();
    let (ns, nc) = (spec.stations.len(), spec.classes.len());
    let chains: Vec<usize> = (0..nc).filter(|&k| starts[k] == k).collect();
    let mut classes = Vec::new();
    let mut service: Vec<Vec<Option<Dist>>> = vec![Vec::new(); ns];
    let mut why = Vec::new();
    for &c in &chains {
        let cl = &spec.classes[c];
        let members: Vec<usize> = (0..nc).filter(|&k| starts[k] == c).collect();
        if members.len() == 1 {
            classes.push(cl.clone());
            for (s, st) in spec.stations.iter().enumerate() {
                service[s].push(st.service.get(c).cloned().flatten());
            }
            continue;
        }
        let v = crate::visits::chain_visits(spec, c).ok_or_else(|| Error::Trapped {
            class: cl.name.clone(),
        })?;
        let visits: Vec<f64> = (0..ns)
            .map(|s| members.iter().map(|&k| v[k][s]).sum())
            .collect();
        // Flow from station s to t (and out) summed over the chain's classes.
        let mut flow = vec![vec![0.0; ns + 1]; ns];
        let mut entry = Vec::new();
        for &k in &members {
            let Routing::Probabilistic { entry: e, from } = &spec.classes[k].routing else {
                continue;
            };
            entry.extend(e.iter().copied());
            for (s, row) in from.iter().enumerate() {
                for &(t, p) in row {
                    let to = t.station().unwrap_or(ns);
                    flow[s][to] += v[k][s] * p;
                }
            }
        }
        let from: Vec<Vec<(Target, f64)>> = (0..ns)
            .map(|s| {
                if visits[s] <= 0.0 {
                    return Vec::new();
                }
                (0..=ns)
                    .filter(|&t| flow[s][t] > 0.0)
                    .map(|t| {
                        let to = if t == ns {
                            Target::Exit
                        } else {
                            Target::Station(t)
                        };
                        (to, flow[s][t] / visits[s])
                    })
                    .collect()
            })
            .collect();
        classes.push(ClassSpec {
            name: cl.name.clone(),
            workload: cl.workload.clone(),
            routing: Routing::Probabilistic { entry, from },
            priority: cl.priority,
        });
        for (s, st) in spec.stations.iter().enumerate() {
            let served: Vec<(usize, &Dist)> = members
                .iter()
                .filter(|&&k| v[k][s] > 0.0)
                .filter_map(|&k| Some((k, st.service.get(k)?.as_ref()?)))
                .collect();
            let Some(&(k0, d0)) = served.first() else {
                service[s].push(None);
                continue;
            };
            let same = served.iter().all(|(_, d)| {
                d.is_exponential() == d0.is_exponential()
                    && (d.mean() - d0.mean()).abs() <= 1e-12 * d0.mean()
                    && (d.variance() - d0.variance()).abs() <= 1e-12 * d0.variance().max(1e-300)
            });
            if same {
                service[s].push(Some(d0.clone()));
                continue;
            }
            let demand: f64 = served.iter().map(|&(k, d)| v[k][s] * d.mean()).sum();
            let Ok(d) = Dist::exponential(demand / visits[s]) else {
                return Err(Error::Trapped {
                    class: cl.name.clone(),
                });
            };
            service[s].push(Some(d));
            let insensitive = match &st.kind {
                StationKind::Delay => true,
                StationKind::Queue { discipline, .. } => *discipline == Discipline::Ps,
                StationKind::Latch(_)
                | StationKind::Batch(_)
                | StationKind::Link(_)
                | StationKind::Fork(_)
                | StationKind::Join(_) => false,
            };
            if !insensitive {
                let other = served.iter().find(|(_, d)| {
                    d.mean() != d0.mean() || d.is_exponential() != d0.is_exponential()
                });
                let k1 = other.map_or(k0, |o| o.0);
                why.push(format!(
                    "station {}: classes {} and {} of one chain (class switching) have different service times there; exact only at PS and delay stations, or with one exponential service time for every class",
                    st.name, spec.classes[k0].name, spec.classes[k1].name
                ));
            }
        }
    }
    let mut out = spec.clone();
    out.classes = classes;
    for (st, sv) in out.stations.iter_mut().zip(service) {
        st.service = sv;
    }
    Ok(Some((out, why)))
}

/// With class switching, the network as [`merge`] makes it, the index
/// there of `class` (`None` when jobs only switch into it) and the reasons
/// it is not exact; `Ok(None)` without switching.
#[allow(clippy::type_complexity)]
pub(crate) fn merged_class(
    spec: &NetworkSpec,
    class: usize,
) -> Result<Option<(NetworkSpec, Option<usize>, Vec<String>)>, Error> {
    let Some((merged, why)) = merge(spec)? else {
        return Ok(None);
    };
    let starts = spec.chain_starts();
    let at =
        (starts.get(class) == Some(&class)).then(|| (0..class).filter(|&k| starts[k] == k).count());
    Ok(Some((merged, at, why)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use qsim_kernel::{StationSpec, Workload};

    /// One station visited by class a, which then comes back to it as
    /// class b and leaves: two visits per interaction, 1 s and 2 s of
    /// service.
    fn twice(discipline: Discipline) -> NetworkSpec {
        let exp = |m: f64| Some(Dist::exponential(m).unwrap());
        let class = |name: &str, entry, row| ClassSpec {
            name: name.into(),
            workload: Workload::Open {
                interarrival: Dist::exponential(10.0).unwrap(),
            },
            routing: Routing::Probabilistic {
                entry,
                from: vec![row],
            },
            priority: 0,
        };
        NetworkSpec {
            stations: vec![StationSpec {
                name: "s".into(),
                kind: StationKind::Queue {
                    servers: 1,
                    discipline,
                },
                service: vec![exp(1.0), exp(2.0)],
                speed: None,
            }],
            classes: vec![
                class(
                    "a",
                    vec![(Target::Station(0), 1.0)],
                    vec![(
                        Target::Switch {
                            station: 0,
                            class: 1,
                        },
                        1.0,
                    )],
                ),
                class("b", Vec::new(), vec![(Target::Exit, 1.0)]),
            ],
            ..NetworkSpec::default()
        }
    }

    #[test]
    fn a_chain_is_one_class_with_its_visits_and_demand() {
        let spec = twice(Discipline::Ps);
        assert_eq!(spec.chain_starts(), vec![0, 0]);
        let v = crate::visits::chain_visits(&spec, 0).unwrap();
        assert!((v[0][0] - 1.0).abs() < 1e-9 && (v[1][0] - 1.0).abs() < 1e-9);
        assert_eq!(crate::visits::chain_visits(&spec, 1), None);
        let (m, why) = merge(&spec).unwrap().unwrap();
        assert!(why.is_empty(), "{why:?}");
        assert_eq!(m.classes.len(), 1);
        let u = crate::visits::visit_ratios(&m, 0).unwrap().parent;
        assert!((u[0] - 2.0).abs() < 1e-9, "{u:?}");
        // Demand 1 + 2 = 3 s over two visits.
        let mean = m.stations[0].service[0].as_ref().unwrap().mean();
        assert!((mean - 1.5).abs() < 1e-12, "{mean}");
    }

    #[test]
    fn fcfs_with_class_dependent_service_is_not_exact() {
        let (_, why) = merge(&twice(Discipline::Fcfs)).unwrap().unwrap();
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(why[0].contains("classes a and b"), "{why:?}");
    }
}
