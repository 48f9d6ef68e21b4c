//! Analytic figures of a whole network: exact MVA for one closed class,
//! open and mixed product-form networks, and M/G/1 for a lone FCFS server.

use crate::Error;
use crate::closed::{
    Bistability, MEMORY_LIMIT_BYTES, bistability_within, closed_class, mva_single_within,
};
use crate::kind::fcfs_single_server;
use crate::product_form::reasons;
use crate::visits::visit_ratios;
use qsim_analytic::{jackson, mva, single};
use qsim_kernel::{NetworkSpec, Speed, StationKind, Workload};
use serde::Serialize;

/// How far a figure can be trusted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Exactness {
    /// The exact long-run mean of the model.
    Exact,
    /// An approximation.
    Approximate,
    /// A bound, not an estimate.
    Bound,
}

/// Figures of one station.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StationFigures {
    /// Station name.
    pub name: String,
    /// Completions per second.
    pub throughput_per_s: f64,
    /// Busy fraction per server (0 for a delay, as the simulator reports).
    pub utilization: f64,
    /// Mean number present.
    pub mean_jobs: f64,
    /// Fraction of arrivals lost (stations with a capacity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss_probability: Option<f64>,
}

/// Figures of one class of a multi-class network.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassFigures {
    /// Class name.
    pub name: String,
    /// Completed interactions of the class per second.
    pub throughput_per_s: f64,
    /// Mean response time of the class (think time excluded), seconds.
    pub response_time_s: f64,
}

/// Figures of a network at one population.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Solution {
    /// Method used.
    pub method: String,
    /// Whether the figures are exact or approximate.
    pub exactness: Exactness,
    /// Closed population (single closed class), if any.
    pub population: Option<u32>,
    /// System throughput, per second.
    pub throughput_per_s: f64,
    /// System response time (think time excluded), seconds.
    pub response_time_s: f64,
    /// Per station, in model order.
    pub stations: Vec<StationFigures>,
    /// Per class, in model order, where the method gives them (several
    /// classes, solved by multi-class MVA); empty otherwise.
    pub classes: Vec<ClassFigures>,
    /// p50, p90, p95, p99 and p99.9 of the response time, where they are
    /// known exactly: one open Poisson class through one FCFS single-server
    /// station with exponential service and nothing else (M/M/1: the
    /// response time is exponential with rate mu - lambda).
    pub response_percentiles_s: Option<[f64; 5]>,
    /// Set when the model has several stable operating points: the figures
    /// above are the exact long-run mean over all of them, which a run that
    /// stays near one of them does not show.
    pub bistability: Option<Bistability>,
}

fn total_rate(spec: &NetworkSpec, c: usize) -> f64 {
    match &spec.classes[c].workload {
        Workload::Open { interarrival } => 1.0 / interarrival.mean(),
        Workload::Closed { .. } => 0.0,
    }
}

fn mean_service(spec: &NetworkSpec, s: usize, c: usize) -> f64 {
    spec.stations[s]
        .service
        .get(c)
        .and_then(|d| d.as_ref())
        .map_or(0.0, |d| d.mean())
}

fn is_delay(spec: &NetworkSpec, s: usize) -> bool {
    spec.stations[s].kind.is_delay() && spec.stations[s].speed.is_none()
}

/// Figures of `spec` by the exact method that applies: M/G/1 for one open
/// Poisson class through one FCFS single server (and delays); otherwise the
/// network must be product-form ([`Error::NotProductForm`] lists why not).
pub fn solve(spec: &NetworkSpec) -> Result<Solution, Error> {
    solve_within(spec, MEMORY_LIMIT_BYTES)
}

/// [`solve`] with exact MVA refused above `memory_limit_bytes` (see
/// [`crate::closed::mva_cost`]) instead of [`MEMORY_LIMIT_BYTES`].
pub fn solve_within(spec: &NetworkSpec, memory_limit_bytes: f64) -> Result<Solution, Error> {
    if let Some(f) = mmck(spec)? {
        return Ok(f);
    }
    if let Some(f) = mg1(spec)? {
        return Ok(f);
    }
    let why = reasons(spec);
    if !why.is_empty() {
        return Err(Error::NotProductForm(why));
    }
    let nc = spec.classes.len();
    let open: Vec<usize> = (0..nc)
        .filter(|&c| matches!(spec.classes[c].workload, Workload::Open { .. }))
        .collect();
    if open.is_empty() && nc == 1 {
        return closed_single(spec, memory_limit_bytes);
    }
    if open.len() == nc {
        let mut f = open_network(spec, &open)?;
        f.response_percentiles_s = mm1_percentiles(spec, f.response_time_s);
        return Ok(f);
    }
    mixed(spec, &open)
}

fn closed_single(spec: &NetworkSpec, memory_limit_bytes: f64) -> Result<Solution, Error> {
    let (population, _) = closed_class(spec, 0).expect("a closed class");
    let sol = mva_single_within(spec, 0, population, memory_limit_bytes)?;
    let mut f = figures_at(spec, &sol, population);
    f.bistability = bistability_within(spec, 0, memory_limit_bytes)?;
    Ok(f)
}

/// Figures at population `n` of an MVA solution of `spec`'s closed class.
pub fn figures_at(spec: &NetworkSpec, sol: &mva::MvaSolution, n: u32) -> Solution {
    let p = sol.at(n).expect("population solved");
    Solution {
        method: "exact MVA (load-dependent where needed)".into(),
        exactness: Exactness::Exact,
        population: Some(n),
        throughput_per_s: p.throughput_per_s,
        response_time_s: p.response_time_s,
        stations: p
            .stations
            .iter()
            .enumerate()
            .map(|(s, x)| StationFigures {
                name: spec.stations[s].name.clone(),
                throughput_per_s: x.throughput_per_s,
                utilization: if spec.stations[s].kind.is_delay() {
                    0.0
                } else {
                    x.utilization
                },
                mean_jobs: x.mean_jobs,
                loss_probability: None,
            })
            .collect(),
        classes: Vec::new(),
        response_percentiles_s: None,
        bistability: None,
    }
}

/// The response-time percentiles of an M/M/1 network (see
/// [`Solution::response_percentiles_s`]) whose mean response is `mean_s`.
fn mm1_percentiles(spec: &NetworkSpec, mean_s: f64) -> Option<[f64; 5]> {
    let (q, v, _) = lone_fcfs_server(spec)?;
    let alone = (0..spec.stations.len()).all(|s| s == q || v.total[s] <= 0.0);
    let exponential = spec.stations[q].service[0]
        .as_ref()
        .is_some_and(|d| d.is_exponential());
    // R ~ Exp(1 / mean): the q-quantile is -ln(1 - q) * mean.
    (alone && exponential && mean_s.is_finite() && mean_s > 0.0)
        .then(|| [0.5, 0.9, 0.95, 0.99, 0.999].map(|q: f64| -(1.0 - q).ln() * mean_s))
}

/// One open Poisson class whose only non-delay station is a single FCFS
/// server (no speed curve) visited once per job: that station, the visit
/// ratios and the arrival rate. `None` otherwise.
fn lone_fcfs_server(spec: &NetworkSpec) -> Option<(usize, crate::visits::Visits, f64)> {
    if spec.classes.len() != 1 || spec.regions.iter().any(|r| r.limit.is_some()) {
        return None;
    }
    let Workload::Open { interarrival } = &spec.classes[0].workload else {
        return None;
    };
    if !interarrival.is_exponential() {
        return None;
    }
    let v = visit_ratios(spec, 0)?;
    let queues: Vec<usize> = (0..spec.stations.len())
        .filter(|&s| v.total[s] > 0.0 && !is_delay(spec, s))
        .collect();
    let [q] = queues[..] else { return None };
    if (v.total[q] - 1.0).abs() > 1e-12 || !fcfs_single_server(&spec.stations[q]) {
        return None;
    }
    Some((q, v, 1.0 / interarrival.mean()))
}

/// One open Poisson class, exactly one non-delay station, visited once per
/// job, a single FCFS server with any service distribution: M/G/1
/// (Pollaczek–Khinchine); the delays are M/G/∞ whose mean is exact for any
/// distribution.
fn mg1(spec: &NetworkSpec) -> Result<Option<Solution>, Error> {
    let Some((q, v, lambda)) = lone_fcfs_server(spec) else {
        return Ok(None);
    };
    let Some(service) = spec.stations[q].service[0].as_ref() else {
        return Ok(None);
    };
    if service.is_exponential() {
        // Product form covers it (and more of the network's figures).
        return Ok(None);
    }
    let m = single::mg1(lambda, service.mean(), service.scv()).map_err(|e| Error::Station {
        station: spec.stations[q].name.clone(),
        source: e,
    })?;
    let mut response = m.response_time_s;
    let stations = (0..spec.stations.len())
        .map(|s| {
            let x = lambda * v.total[s];
            let (u, jobs) = if s == q {
                (m.utilization, m.mean_jobs)
            } else {
                let d = v.total[s] * mean_service(spec, s, 0);
                response += d;
                (0.0, lambda * d)
            };
            StationFigures {
                name: spec.stations[s].name.clone(),
                throughput_per_s: x,
                utilization: u,
                mean_jobs: jobs,
                loss_probability: None,
            }
        })
        .collect();
    Ok(Some(Solution {
        method: format!(
            "M/G/1 (Pollaczek-Khinchine) at station {}",
            spec.stations[q].name
        ),
        exactness: Exactness::Exact,
        population: None,
        throughput_per_s: lambda,
        response_time_s: response,
        stations,
        classes: Vec::new(),
        response_percentiles_s: None,
        bistability: None,
    }))
}

/// One open Poisson class visiting one queue with a capacity, once per job,
/// and nothing else, with exponential service: M/M/c/K (Erlang B when the
/// capacity equals the servers). The discipline does not change the number
/// present when every job's service is the same exponential.
fn mmck(spec: &NetworkSpec) -> Result<Option<Solution>, Error> {
    if spec.classes.len() != 1 || spec.capacity.iter().all(Option::is_none) {
        return Ok(None);
    }
    let Workload::Open { interarrival } = &spec.classes[0].workload else {
        return Ok(None);
    };
    let Some(v) = visit_ratios(spec, 0) else {
        return Ok(None);
    };
    let visited: Vec<usize> = (0..spec.stations.len())
        .filter(|&s| v.total[s] > 0.0)
        .collect();
    let [q] = visited[..] else { return Ok(None) };
    let (Some(cap), StationKind::Queue { servers, .. }) = (
        spec.capacity.get(q).copied().flatten(),
        &spec.stations[q].kind,
    ) else {
        return Ok(None);
    };
    let Some(service) = spec.stations[q].service[0].as_ref() else {
        return Ok(None);
    };
    if !interarrival.is_exponential()
        || !service.is_exponential()
        || (v.total[q] - 1.0).abs() > 1e-12
    {
        return Ok(None);
    }
    let lambda = 1.0 / interarrival.mean();
    let m = single::mmck(lambda, 1.0 / service.mean(), *servers, cap.limit).map_err(|e| {
        Error::Station {
            station: spec.stations[q].name.clone(),
            source: e,
        }
    })?;
    let name = &spec.stations[q].name;
    Ok(Some(Solution {
        method: if cap.limit == *servers {
            format!("Erlang B (M/M/{servers}/{servers}) at station {name}")
        } else {
            format!("M/M/{servers}/{} at station {name}", cap.limit)
        },
        exactness: Exactness::Exact,
        population: None,
        throughput_per_s: m.throughput_per_s,
        response_time_s: m.response_time_s,
        stations: vec![StationFigures {
            name: name.clone(),
            throughput_per_s: m.throughput_per_s,
            utilization: m.utilization,
            mean_jobs: m.mean_jobs,
            loss_probability: Some(m.loss_probability),
        }],
        classes: Vec::new(),
        response_percentiles_s: None,
        bistability: None,
    }))
}

/// Open classes only: each station is fed the sum of the classes' Poisson
/// flows (BCMP product form); an M/M/c, M/M/∞, or a birth-death chain for a
/// speed curve.
fn open_network(spec: &NetworkSpec, open: &[usize]) -> Result<Solution, Error> {
    let visits: Vec<Vec<f64>> = open
        .iter()
        .map(|&c| {
            visit_ratios(spec, c)
                .map(|v| v.total)
                .ok_or_else(|| Error::Trapped {
                    class: spec.classes[c].name.clone(),
                })
        })
        .collect::<Result<_, _>>()?;
    let rates: Vec<f64> = open.iter().map(|&c| total_rate(spec, c)).collect();
    let total: f64 = rates.iter().sum();
    let mut stations = Vec::new();
    let mut jobs_total = 0.0;
    for (s, st) in spec.stations.iter().enumerate() {
        let lam: f64 = rates.iter().zip(&visits).map(|(r, v)| r * v[s]).sum();
        let mean = open
            .iter()
            .map(|&c| mean_service(spec, s, c))
            .fold(0.0, f64::max);
        let at = |e: qsim_analytic::Error| Error::Station {
            station: st.name.clone(),
            source: e,
        };
        let (util, jobs) = if lam == 0.0 {
            (0.0, 0.0)
        } else {
            match (&st.speed, &st.kind) {
                (Some(speed), _) => {
                    birth_death(speed, lam).map_err(|why| Error::NoSteadyState {
                        station: st.name.clone(),
                        why,
                    })?
                }
                (None, _) if mean == 0.0 => (0.0, 0.0),
                (None, StationKind::Delay) => {
                    (0.0, single::mminf(lam, 1.0 / mean).map_err(at)?.mean_jobs)
                }
                (None, StationKind::Queue { servers, .. }) => {
                    let m = single::mmc(lam, 1.0 / mean, *servers).map_err(at)?;
                    (m.utilization, m.mean_jobs)
                }
                (None, _) => {
                    let m = single::mmc(lam, 1.0 / mean, 1).map_err(at)?;
                    (m.utilization, m.mean_jobs)
                }
            }
        };
        jobs_total += jobs;
        stations.push(StationFigures {
            name: st.name.clone(),
            throughput_per_s: lam,
            utilization: util,
            mean_jobs: jobs,
            loss_probability: None,
        });
    }
    Ok(Solution {
        method: "open product-form network (per station: M/M/c, PS or delay, or a birth-death chain for a speed curve)".into(),
        exactness: Exactness::Exact,
        population: None,
        throughput_per_s: total,
        // Little's law over the whole network.
        response_time_s: jobs_total / total,
        stations,
        classes: Vec::new(),
        response_percentiles_s: None,
        bistability: None,
    })
}

/// A station completing rate(n) jobs per second with n present, fed Poisson
/// arrivals at `lam`: p(n) ∝ Π λ/rate(k). Returns (P(busy), mean number),
/// or why the chain has no steady state, in words: the arrivals reach the
/// curve's peak, or its limit as jobs pile up (the sum of p(n) diverges).
fn birth_death(speed: &Speed, lam: f64) -> Result<(f64, f64), String> {
    let num = |x: f64| {
        let s = format!("{x:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    let peak = crate::kind::peak_rate(speed, None);
    if lam >= peak {
        return Err(format!(
            "its arrivals ({}/s) reach the speed curve's peak ({}/s), so the queue grows without bound",
            num(lam),
            num(peak)
        ));
    }
    let limit = crate::kind::limit_rate(speed);
    if lam >= limit {
        let when = crate::kind::collapse(speed, lam).map_or(String::new(), |c| {
            format!(
                "; from empty it is expected to pass {} jobs, past which the curve never keeps up, after {} s",
                c.at_jobs,
                qsim_kernel::sig(c.expected_s, 4)
            )
        });
        return Err(format!(
            "its arrivals ({}/s) are below the speed curve's peak ({}/s) but not below its rate with many jobs present ({}/s): a long enough queue only grows, so there is no long-run steady state{when}",
            num(lam),
            num(peak),
            num(limit)
        ));
    }
    // Below the limit the terms fall geometrically far out: the sum
    // converges.
    let (mut term, mut sum, mut mean) = (1.0_f64, 1.0_f64, 0.0_f64);
    for n in 1..=10_000_000u32 {
        term *= lam / speed.rate(f64::from(n));
        if !term.is_finite() {
            break;
        }
        sum += term;
        mean += f64::from(n) * term;
        if term < 1e-17 * sum && n > 10 {
            return Ok((1.0 - 1.0 / sum, mean / sum));
        }
    }
    Err(format!(
        "its distribution of jobs present does not settle within 10^7 jobs at {}/s of arrivals",
        num(lam)
    ))
}

/// Several closed classes, or a mixed network: multi-class MVA over delays
/// and single-server queues.
fn mixed(spec: &NetworkSpec, open: &[usize]) -> Result<Solution, Error> {
    let nc = spec.classes.len();
    let visits: Vec<Vec<f64>> = (0..nc)
        .map(|c| {
            visit_ratios(spec, c)
                .map(|v| v.total)
                .ok_or_else(|| Error::Trapped {
                    class: spec.classes[c].name.clone(),
                })
        })
        .collect::<Result<_, _>>()?;
    let states: f64 = spec
        .classes
        .iter()
        .map(|c| match c.workload {
            Workload::Closed { population, .. } => f64::from(population) + 1.0,
            Workload::Open { .. } => 1.0,
        })
        .product::<f64>()
        * spec.stations.len() as f64;
    if states > crate::closed::STEP_LIMIT / 20.0 {
        return Err(Error::TooManyStates { states });
    }
    let classed: Vec<mva::ClassedStation> = spec
        .stations
        .iter()
        .enumerate()
        .map(|(s, st)| {
            let kind = if st.kind.is_delay() {
                mva::CenterKind::Delay
            } else {
                mva::CenterKind::Queue
            };
            let demands = (0..nc)
                .map(|c| visits[c][s] * mean_service(spec, s, c))
                .collect();
            mva::ClassedStation::new(st.name.clone(), kind, demands)
        })
        .collect();
    let classes: Vec<jackson::Class> = spec
        .classes
        .iter()
        .map(|c| jackson::Class {
            name: c.name.clone(),
            workload: match &c.workload {
                Workload::Closed { population, think } => jackson::Workload::Closed {
                    population: *population,
                    think_time_s: think.as_ref().map_or(0.0, |d| d.mean()),
                },
                Workload::Open { interarrival } => jackson::Workload::Open {
                    arrival_rate_per_s: 1.0 / interarrival.mean(),
                },
            },
        })
        .collect();
    let sol = jackson::solve_mixed(&classed, &classes)?;
    let throughput: f64 = sol.classes.iter().map(|c| c.throughput_per_s).sum();
    let response = sol
        .classes
        .iter()
        .map(|c| c.throughput_per_s * c.response_time_s)
        .sum::<f64>()
        / throughput;
    Ok(Solution {
        method: if open.is_empty() {
            "exact multi-class MVA"
        } else {
            "mixed product-form network (MVA)"
        }
        .into(),
        exactness: Exactness::Exact,
        population: None,
        throughput_per_s: throughput,
        response_time_s: response,
        stations: sol
            .stations
            .iter()
            .enumerate()
            .map(|(s, st)| StationFigures {
                name: st.name.clone(),
                throughput_per_s: (0..nc)
                    .map(|c| sol.classes[c].throughput_per_s * visits[c][s])
                    .sum(),
                utilization: if spec.stations[s].kind.is_delay() {
                    0.0
                } else {
                    st.utilization
                },
                mean_jobs: st.mean_jobs,
                loss_probability: None,
            })
            .collect(),
        classes: sol
            .classes
            .iter()
            .map(|c| ClassFigures {
                name: c.name.clone(),
                throughput_per_s: c.throughput_per_s,
                response_time_s: c.response_time_s,
            })
            .collect(),
        response_percentiles_s: None,
        bistability: None,
    })
}
