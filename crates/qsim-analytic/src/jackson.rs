//! Open product-form (Jackson) networks and mixed open/closed networks.

use serde::Serialize;

use crate::ctmc::solve_dense;
use crate::error::{Error, Result, invalid, non_negative, positive};
use crate::mva::{
    CenterKind, ClassAtStation, ClassResult, ClassedStation, ClosedClass, MultiClassSolution,
    StationResult, exact_multiclass, validate_multiclass,
};
use crate::single::{QueueMetrics, mmc, mminf};

/// A station of an open Jackson network.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpenStation {
    /// Name used in results and messages.
    pub name: String,
    /// Number of servers; `None` for infinite servers (a delay).
    pub servers: Option<u32>,
    /// Mean (exponential) service time per visit (seconds).
    pub service_time_s: f64,
}

impl OpenStation {
    /// A queue with `servers` servers.
    pub fn queue(name: impl Into<String>, servers: u32, service_time_s: f64) -> Self {
        Self {
            name: name.into(),
            servers: Some(servers),
            service_time_s,
        }
    }

    /// An infinite-server station.
    pub fn delay(name: impl Into<String>, service_time_s: f64) -> Self {
        Self {
            name: name.into(),
            servers: None,
            service_time_s,
        }
    }
}

/// Figures for one station of an open network.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpenStationResult {
    /// Station name.
    pub name: String,
    /// Total arrival rate at the station from the traffic equations (per second).
    pub arrival_rate_per_s: f64,
    /// Mean visits per job entering the network.
    pub visits: f64,
    /// M/M/c (or M/M/∞) figures of the station in isolation.
    pub metrics: QueueMetrics,
}

/// Result of [`solve_open`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OpenSolution {
    /// Per-station figures, in input order.
    pub stations: Vec<OpenStationResult>,
    /// Jobs entering (and leaving) the network per second.
    pub throughput_per_s: f64,
    /// Mean number of jobs in the network.
    pub mean_jobs: f64,
    /// Mean time from entering to leaving the network (seconds).
    pub response_time_s: f64,
}

/// Solves an open Jackson network: external Poisson arrivals
/// `external_arrivals_per_s[i]` at station i, routing probability
/// `routing[i][j]` from i to j (each row sums to at most 1; the rest leaves).
///
/// Solves the traffic equations `λ = γ + Pᵀλ` and evaluates each station as
/// an independent M/M/c. Returns [`Error::Unstable`] naming the first station
/// whose utilization is at least 1.
pub fn solve_open(
    stations: &[OpenStation],
    external_arrivals_per_s: &[f64],
    routing: &[Vec<f64>],
) -> Result<OpenSolution> {
    let n = stations.len();
    if n == 0 {
        return Err(invalid("stations", "an empty list", "at least one station"));
    }
    if external_arrivals_per_s.len() != n {
        return Err(Error::SizeMismatch {
            what: "external_arrivals_per_s (one per station)".into(),
            found: external_arrivals_per_s.len(),
            expected: n,
        });
    }
    if routing.len() != n {
        return Err(Error::SizeMismatch {
            what: "routing rows (one per station)".into(),
            found: routing.len(),
            expected: n,
        });
    }
    for (i, s) in stations.iter().enumerate() {
        positive(
            &format!("stations[{i}] ({}).service_time_s", s.name),
            s.service_time_s,
        )?;
        if s.servers == Some(0) {
            return Err(invalid(
                &format!("stations[{i}] ({}).servers", s.name),
                0,
                "at least 1",
            ));
        }
        non_negative(
            &format!("external_arrivals_per_s[{i}]"),
            external_arrivals_per_s[i],
        )?;
        if routing[i].len() != n {
            return Err(Error::SizeMismatch {
                what: format!("routing[{i}] (one probability per station)"),
                found: routing[i].len(),
                expected: n,
            });
        }
        let mut sum = 0.0;
        for (j, p) in routing[i].iter().enumerate() {
            crate::error::fraction(&format!("routing[{i}][{j}]"), *p)?;
            sum += p;
        }
        if sum > 1.0 + 1e-9 {
            return Err(invalid(&format!("sum of routing[{i}]"), sum, "at most 1"));
        }
    }
    let gamma_total: f64 = external_arrivals_per_s.iter().sum();
    if gamma_total <= 0.0 {
        return Err(invalid(
            "external_arrivals_per_s",
            "all 0",
            "some arrival rate above 0",
        ));
    }
    // (I − Pᵀ) λ = γ
    let a: Vec<Vec<f64>> = (0..n)
        .map(|j| {
            (0..n)
                .map(|i| if i == j { 1.0 } else { 0.0 } - routing[i][j])
                .collect()
        })
        .collect();
    let lambda = solve_dense(a, external_arrivals_per_s.to_vec()).ok_or_else(|| Error::Singular {
        what: "open network traffic equations".into(),
        hint: "some jobs can never leave the network; make sure every station can reach an exit (a routing row summing below 1)".into(),
    })?;
    let mut out = Vec::with_capacity(n);
    for (i, s) in stations.iter().enumerate() {
        let rate = lambda[i].max(0.0);
        let metrics = match s.servers {
            None => mminf(rate, 1.0 / s.service_time_s)?,
            Some(c) => {
                let rho = rate * s.service_time_s / f64::from(c);
                if rho >= 1.0 {
                    return Err(Error::Unstable {
                        station: s.name.clone(),
                        utilization: rho,
                    });
                }
                mmc(rate, 1.0 / s.service_time_s, c)?
            }
        };
        out.push(OpenStationResult {
            name: s.name.clone(),
            arrival_rate_per_s: rate,
            visits: rate / gamma_total,
            metrics,
        });
    }
    let mean_jobs: f64 = out.iter().map(|s| s.metrics.mean_jobs).sum();
    Ok(OpenSolution {
        stations: out,
        throughput_per_s: gamma_total,
        mean_jobs,
        response_time_s: mean_jobs / gamma_total,
    })
}

/// How a class enters a mixed network.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// A fixed population cycling with a think time.
    Closed {
        /// Number of jobs.
        population: u32,
        /// Think time between interactions (seconds).
        think_time_s: f64,
    },
    /// Poisson arrivals from outside.
    Open {
        /// Arrival rate (per second).
        arrival_rate_per_s: f64,
    },
}

/// A job class of a mixed network.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Class {
    /// Name used in results.
    pub name: String,
    /// Open or closed.
    pub workload: Workload,
}

/// Solves a mixed product-form network of delays and single-server queues.
///
/// Open classes take `U_k = Σ λ_r·D_{k,r}` of each queue; closed classes are
/// solved by exact multi-class MVA with demands inflated to `D/(1 − U_k)`;
/// open classes then see `R_{k,r} = D_{k,r}(1 + Q^closed_k)/(1 − U_k)`.
/// `demands_s` of each station are in the order of `classes`. For open
/// classes `throughput_per_s` is the arrival rate and the number reported is
/// the mean number in the network.
pub fn solve_mixed(stations: &[ClassedStation], classes: &[Class]) -> Result<MultiClassSolution> {
    if classes.is_empty() {
        return Err(invalid("classes", "an empty list", "at least one class"));
    }
    validate_multiclass(stations, classes.len())?;
    let mut open_u = vec![0.0; stations.len()];
    for (r, c) in classes.iter().enumerate() {
        if let Workload::Open { arrival_rate_per_s } = c.workload {
            non_negative(
                &format!("classes[{r}] ({}).arrival_rate_per_s", c.name),
                arrival_rate_per_s,
            )?;
            for (k, s) in stations.iter().enumerate() {
                if s.kind == CenterKind::Queue {
                    open_u[k] += arrival_rate_per_s * s.demands_s[r];
                }
            }
        }
    }
    for (k, u) in open_u.iter().enumerate() {
        if *u >= 1.0 {
            return Err(Error::Unstable {
                station: stations[k].name.clone(),
                utilization: *u,
            });
        }
    }
    let closed_idx: Vec<usize> = (0..classes.len())
        .filter(|&r| matches!(classes[r].workload, Workload::Closed { .. }))
        .collect();
    let closed_classes: Vec<ClosedClass> = closed_idx
        .iter()
        .map(|&r| match classes[r].workload {
            Workload::Closed {
                population,
                think_time_s,
            } => ClosedClass::new(classes[r].name.clone(), population, think_time_s),
            Workload::Open { .. } => unreachable!("filtered to closed classes"),
        })
        .collect();
    let closed = if closed_classes.is_empty() {
        None
    } else {
        let inflated: Vec<ClassedStation> = stations
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let scale = if s.kind == CenterKind::Queue {
                    1.0 / (1.0 - open_u[k])
                } else {
                    1.0
                };
                ClassedStation::new(
                    s.name.clone(),
                    s.kind,
                    closed_idx.iter().map(|&r| s.demands_s[r] * scale).collect(),
                )
            })
            .collect();
        Some(exact_multiclass(&inflated, &closed_classes)?)
    };
    let closed_q: Vec<f64> = (0..stations.len())
        .map(|k| closed.as_ref().map_or(0.0, |c| c.stations[k].mean_jobs))
        .collect();
    let mut class_results = Vec::with_capacity(classes.len());
    let mut per_station: Vec<Vec<ClassAtStation>> = vec![Vec::new(); stations.len()];
    for (r, c) in classes.iter().enumerate() {
        match c.workload {
            Workload::Closed { .. } => {
                let ci = closed_idx.iter().position(|&i| i == r).unwrap_or(0);
                let sol = closed.as_ref().map(|s| &s.classes[ci]);
                let x = sol.map_or(0.0, |s| s.throughput_per_s);
                for (k, s) in stations.iter().enumerate() {
                    let cs = closed.as_ref().map(|c| c.stations[k].per_class[ci]);
                    per_station[k].push(ClassAtStation {
                        mean_jobs: cs.map_or(0.0, |v| v.mean_jobs),
                        utilization: x * s.demands_s[r],
                        residence_time_s: cs.map_or(0.0, |v| v.residence_time_s),
                    });
                }
                class_results.push(sol.cloned().unwrap_or(ClassResult {
                    name: c.name.clone(),
                    throughput_per_s: 0.0,
                    response_time_s: 0.0,
                    mean_jobs: 0.0,
                }));
            }
            Workload::Open { arrival_rate_per_s } => {
                let mut response = 0.0;
                for (k, s) in stations.iter().enumerate() {
                    let d = s.demands_s[r];
                    let res = match s.kind {
                        CenterKind::Queue => d * (1.0 + closed_q[k]) / (1.0 - open_u[k]),
                        CenterKind::Delay => d,
                    };
                    response += res;
                    per_station[k].push(ClassAtStation {
                        mean_jobs: arrival_rate_per_s * res,
                        utilization: arrival_rate_per_s * d,
                        residence_time_s: res,
                    });
                }
                class_results.push(ClassResult {
                    name: c.name.clone(),
                    throughput_per_s: arrival_rate_per_s,
                    response_time_s: response,
                    mean_jobs: arrival_rate_per_s * response,
                });
            }
        }
    }
    let station_results = stations
        .iter()
        .zip(per_station)
        .map(|(s, per_class)| StationResult {
            name: s.name.clone(),
            mean_jobs: per_class.iter().map(|c| c.mean_jobs).sum(),
            utilization: per_class.iter().map(|c| c.utilization).sum(),
            per_class,
        })
        .collect();
    Ok(MultiClassSolution {
        classes: class_results,
        stations: station_results,
        iterations: 0,
    })
}
