//! A single closed class as an MVA network, what solving it costs, and the
//! operating points of a model whose speed curves fall (bistability).

use crate::Error;
use crate::kind::peak_rate;
use crate::visits::visit_ratios;
use qsim_analytic::{mva, usl};
use qsim_kernel::{NetworkSpec, Speed, StationKind, Workload};
use serde::Serialize;

/// Memory exact MVA may use before it is refused, bytes.
pub const MEMORY_LIMIT_BYTES: f64 = 1024.0 * 1024.0 * 1024.0;
/// Elementary steps exact MVA may take before it is refused (some seconds).
pub const STEP_LIMIT: f64 = 2.0e9;

/// What exact single-class MVA up to a population would cost.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MvaCost {
    /// Bytes of results and marginals.
    pub memory_bytes: f64,
    /// Elementary steps: N·K, plus N²·L² for L load-dependent stations.
    pub steps: f64,
}

impl MvaCost {
    /// Whether it is within [`MEMORY_LIMIT_BYTES`] and [`STEP_LIMIT`].
    pub fn affordable(&self) -> bool {
        self.memory_bytes <= MEMORY_LIMIT_BYTES && self.steps <= STEP_LIMIT
    }
}

/// Estimates, before allocating anything, what [`mva_single`] would cost.
pub fn mva_cost(spec: &NetworkSpec, population: u32) -> MvaCost {
    let n = f64::from(population);
    let k = spec.stations.len() as f64;
    let ld = spec
        .stations
        .iter()
        .filter(|s| {
            s.speed.is_some()
                || matches!(s.kind, StationKind::Queue { servers, .. } if servers > 1 && servers < population)
        })
        .count() as f64;
    MvaCost {
        // Per population: one point (population, X, R) and one StationPoint
        // (4 f64) per station; per load-dependent station four f64 vectors.
        memory_bytes: n * (48.0 + 32.0 * k) + 32.0 * n * ld,
        steps: n * k + n * n * ld * ld.max(1.0),
    }
}

fn check_cost(spec: &NetworkSpec, population: u32) -> Result<(), Error> {
    let cost = mva_cost(spec, population);
    if cost.affordable() {
        Ok(())
    } else {
        Err(Error::TooLarge {
            population,
            cost,
            memory_limit_bytes: MEMORY_LIMIT_BYTES,
            step_limit: STEP_LIMIT,
        })
    }
}

/// Population and mean think time of a closed class.
pub fn closed_class(spec: &NetworkSpec, class: usize) -> Option<(u32, f64)> {
    match &spec.classes.get(class)?.workload {
        Workload::Closed { population, think } => {
            Some((*population, think.as_ref().map_or(0.0, |d| d.mean())))
        }
        Workload::Open { .. } => None,
    }
}

/// The stations of a single closed class as MVA stations (product-form
/// networks only: see [`crate::product_form::reasons`]).
pub fn mva_stations(spec: &NetworkSpec, class: usize) -> Result<Vec<mva::Station>, Error> {
    let visits = visit_ratios(spec, class).ok_or_else(|| Error::Trapped {
        class: spec.classes[class].name.clone(),
    })?;
    let mut out = Vec::with_capacity(spec.stations.len());
    for (s, st) in spec.stations.iter().enumerate() {
        let mean = st
            .service
            .get(class)
            .and_then(|d| d.as_ref())
            .map_or(0.0, |d| d.mean());
        let service = match (&st.speed, &st.kind) {
            (Some(Speed::Table(points)), _) => {
                mva::Service::Table(mva::RateTable::new(points.clone())?)
            }
            (
                Some(Speed::Usl {
                    sigma,
                    kappa,
                    lambda,
                }),
                _,
            ) => mva::Service::Usl(usl::UslModel::new(*sigma, *kappa, *lambda)?),
            (None, StationKind::Delay) => mva::Service::Delay {
                service_time_s: mean,
            },
            (None, StationKind::Queue { servers, .. }) if *servers > 1 => {
                mva::Service::MultiServer {
                    servers: *servers,
                    service_time_s: mean,
                }
            }
            (None, _) => mva::Service::Queue {
                service_time_s: mean,
            },
        };
        let mut station = mva::Station::with_service(st.name.clone(), service);
        station.visits = visits.total[s];
        out.push(station);
    }
    Ok(out)
}

/// Exact (load-dependent) MVA of closed class `class` at populations
/// 1..=`max_n`, refused with [`Error::TooLarge`] before allocating when it
/// would cost too much.
pub fn mva_single(spec: &NetworkSpec, class: usize, max_n: u32) -> Result<mva::MvaSolution, Error> {
    check_cost(spec, max_n)?;
    let (_, think) = closed_class(spec, class).ok_or_else(|| Error::NotClosed {
        class: spec.classes[class].name.clone(),
    })?;
    let stations = mva_stations(spec, class)?;
    Ok(mva::exact(&stations, think, max_n)?)
}

/// A steady state the network can stay in.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OperatingPoint {
    /// Mean jobs at the collapsing station.
    pub jobs_at_station: f64,
    /// System throughput there, per second.
    pub throughput_per_s: f64,
}

/// Two or more stable operating points of a closed model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bistability {
    /// The station whose falling speed curve makes them.
    pub station: String,
    /// The stable operating points, fewest jobs at the station first.
    pub operating_points: Vec<OperatingPoint>,
}

/// Looks for several operating points in a single closed class with a
/// falling speed curve. For each station `c` whose rate falls below 95% of
/// its peak within 1..=N, the rest of the network (exact MVA without `c`)
/// sends it X_rest(N − n) interactions per second when n jobs are at `c`,
/// and `c` returns rate(n)/v_c. The fluid balance f(n) = X_rest(N − n) −
/// rate(n)/v_c is positive at n = 0 and not positive at n = N; every
/// crossing from + to − is a stable point (more jobs drain, fewer refill).
/// Two or more such crossings: the network stays where it starts, and
/// no single figure is the answer.
pub fn bistability(spec: &NetworkSpec, class: usize) -> Result<Option<Bistability>, Error> {
    let Some((population, think)) = closed_class(spec, class) else {
        return Ok(None);
    };
    if spec.classes.len() != 1 {
        return Ok(None);
    }
    check_cost(spec, population)?;
    let visits = visit_ratios(spec, class).ok_or_else(|| Error::Trapped {
        class: spec.classes[class].name.clone(),
    })?;
    let all = mva_stations(spec, class)?;
    for (c, st) in spec.stations.iter().enumerate() {
        let Some(speed) = &st.speed else { continue };
        let v = visits.total[c];
        let peak = peak_rate(speed, Some(population));
        if v <= 0.0 || speed.rate(f64::from(population)) >= 0.95 * peak {
            continue;
        }
        let rest: Vec<mva::Station> = all
            .iter()
            .enumerate()
            .filter(|&(s, m)| s != c && m.visits > 0.0)
            .map(|(_, m)| m.clone())
            .collect();
        // X_rest(m) for m = 0..=N jobs outside c.
        let x_rest: Vec<f64> = if rest.is_empty() {
            (0..=population)
                .map(|m| {
                    if think > 0.0 {
                        f64::from(m) / think
                    } else {
                        f64::INFINITY
                    }
                })
                .collect()
        } else {
            let sol = mva::exact(&rest, think, population)?;
            std::iter::once(0.0)
                .chain(sol.points.iter().map(|p| p.throughput_per_s))
                .collect()
        };
        let out = |n: u32| {
            if n == 0 {
                0.0
            } else {
                speed.rate(f64::from(n)) / v
            }
        };
        let f = |n: u32| x_rest[(population - n) as usize] - out(n);
        let mut points = Vec::new();
        for n in 0..population {
            let (a, b) = (f(n), f(n + 1));
            if a > 0.0 && b <= 0.0 {
                let t = a / (a - b);
                let x = out(n) + t * (out(n + 1) - out(n));
                points.push(OperatingPoint {
                    jobs_at_station: f64::from(n) + t,
                    throughput_per_s: x,
                });
            }
        }
        if points.len() >= 2 {
            return Ok(Some(Bistability {
                station: st.name.clone(),
                operating_points: points,
            }));
        }
    }
    Ok(None)
}
