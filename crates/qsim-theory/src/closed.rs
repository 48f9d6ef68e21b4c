//! A single closed class as an MVA network, what solving it costs, and the
//! operating points of a model whose speed curves fall (bistability).

use crate::Error;
use crate::kind::peak_rate;
use crate::visits::visit_ratios;
use qsim_analytic::{mva, usl};
use qsim_kernel::{NetworkSpec, Speed, StationKind, Workload};
use serde::Serialize;

/// Memory exact MVA may use before it is refused, bytes, unless the caller
/// gives its own limit (the `_within` functions; `qsim solve --max-memory`).
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
        self.affordable_within(MEMORY_LIMIT_BYTES)
    }

    /// Whether it is within `memory_limit_bytes` and [`STEP_LIMIT`].
    pub fn affordable_within(&self, memory_limit_bytes: f64) -> bool {
        self.memory_bytes <= memory_limit_bytes && self.steps <= STEP_LIMIT
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
                || s.kind
                    .as_queue()
                    .is_some_and(|(servers, _)| servers > 1 && servers < population)
        })
        .count() as f64;
    MvaCost {
        // Per population: one point (population, X, R) and one StationPoint
        // (4 f64) per station; per load-dependent station four f64 vectors.
        memory_bytes: n * (48.0 + 32.0 * k) + 32.0 * n * ld,
        steps: n * k + n * n * ld * ld.max(1.0),
    }
}

fn check_cost(spec: &NetworkSpec, population: u32, memory_limit_bytes: f64) -> Result<(), Error> {
    let cost = mva_cost(spec, population);
    if cost.affordable_within(memory_limit_bytes) {
        Ok(())
    } else {
        Err(Error::TooLarge {
            population,
            cost,
            memory_limit_bytes,
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
            (
                None,
                StationKind::Queue { .. }
                | StationKind::Latch(_)
                | StationKind::Batch(_)
                | StationKind::Link(_)
                | StationKind::Fork(_)
                | StationKind::Join(_),
            ) => mva::Service::Queue {
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
    mva_single_within(spec, class, max_n, MEMORY_LIMIT_BYTES)
}

/// [`mva_single`] refused above `memory_limit_bytes` instead of
/// [`MEMORY_LIMIT_BYTES`].
pub fn mva_single_within(
    spec: &NetworkSpec,
    class: usize,
    max_n: u32,
    memory_limit_bytes: f64,
) -> Result<mva::MvaSolution, Error> {
    if let Some((merged, at, why)) = crate::chains::merged_class(spec, class)? {
        // Class switching: the chain as one class.
        if !why.is_empty() {
            return Err(Error::NotProductForm(why));
        }
        let Some(at) = at else {
            return Err(Error::NotClosed {
                class: spec.classes[class].name.clone(),
            });
        };
        return mva_single_within(&merged, at, max_n, memory_limit_bytes);
    }
    check_cost(spec, max_n, memory_limit_bytes)?;
    let (_, think) = closed_class(spec, class).ok_or_else(|| Error::NotClosed {
        class: spec.classes[class].name.clone(),
    })?;
    let stations = mva_stations(spec, class)?;
    Ok(mva::exact(&stations, think, max_n)?)
}

/// A run that stays in a basin for this many interactions (longer than a
/// typical replication: qsim's models run 10^4 to 10^5 jobs each) shows only
/// that basin's figures.
pub const STAY_INTERACTIONS: f64 = 1e5;

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

impl Bistability {
    /// The operating points for people: `778.7800 /s with 6.3 jobs at
    /// latch; 50.0000 /s with 113.2 jobs at latch`.
    pub fn points_text(&self) -> String {
        self.operating_points
            .iter()
            .map(|p| {
                format!(
                    "{:.4} /s with {:.1} jobs at {}",
                    p.throughput_per_s, p.jobs_at_station, self.station
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Looks for several operating points in a single closed class with a
/// falling speed curve. For each station `c` whose rate falls below 95% of
/// its peak within 1..=N, the rest of the network (exact MVA without `c`)
/// sends it v_c·X_rest(N − k) visits per second while k jobs are at `c`,
/// which completes rate(k): a birth-death chain for k. Where its
/// distribution has two modes separated by a trough so deep that a run
/// stays on one side (mean passage times beyond [`STAY_INTERACTIONS`]
/// interactions both ways), the network stays where it starts and no single
/// figure is the answer. (Crossings of the fluid balance alone are not
/// enough: a shallow basin such as models/pgo.toml's is left within a
/// fraction of a second.)
pub fn bistability(spec: &NetworkSpec, class: usize) -> Result<Option<Bistability>, Error> {
    bistability_within(spec, class, MEMORY_LIMIT_BYTES)
}

/// [`bistability`] refused above `memory_limit_bytes` instead of
/// [`MEMORY_LIMIT_BYTES`].
pub fn bistability_within(
    spec: &NetworkSpec,
    class: usize,
    memory_limit_bytes: f64,
) -> Result<Option<Bistability>, Error> {
    let Some((population, think)) = closed_class(spec, class) else {
        return Ok(None);
    };
    if spec.classes.len() != 1 {
        return Ok(None);
    }
    check_cost(spec, population, memory_limit_bytes)?;
    let visits = visit_ratios(spec, class).ok_or_else(|| Error::Trapped {
        class: spec.classes[class].name.clone(),
    })?;
    let all = mva_stations(spec, class)?;
    // Stations whose rate falls below 95% of its peak.
    let mut falling: Vec<(usize, f64)> = spec
        .stations
        .iter()
        .enumerate()
        .filter_map(|(c, st)| {
            let speed = st.speed.as_ref()?;
            let drop = speed.rate(f64::from(population)) / peak_rate(speed, Some(population));
            (visits.total[c] > 0.0 && drop < 0.95).then_some((c, drop))
        })
        .collect();
    falling.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut best = None;
    for (c, _) in falling {
        let st = &spec.stations[c];
        let speed = st.speed.as_ref().expect("filtered");
        let v = visits.total[c];
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
        let points = basins(&x_rest, v, |k| speed.rate(k as f64));
        if points.len() >= 2 {
            let spread = spread(&points);
            if best
                .as_ref()
                .is_none_or(|b: &Bistability| spread > self::spread(&b.operating_points))
            {
                best = Some(Bistability {
                    station: st.name.clone(),
                    operating_points: points,
                });
            }
        }
    }
    Ok(best)
}

/// Ratio of the fastest to the slowest operating point. The rest of the
/// network is taken at its own long-run mean, which averages over its own
/// states when it is bistable too, so the station whose analysis separates
/// the states most is the one that shows them.
fn spread(points: &[OperatingPoint]) -> f64 {
    let hi = points
        .iter()
        .map(|p| p.throughput_per_s)
        .fold(0.0, f64::max);
    let lo = points
        .iter()
        .map(|p| p.throughput_per_s)
        .fold(f64::INFINITY, f64::min);
    hi / lo
}

/// The modes of the number at the station, as a birth-death chain with
/// arrivals v·X_rest(N − k) and completions rate(k) (the flow-equivalent
/// view of the rest of the network), with the mean time to leave each for
/// its neighbour. Returns the modes both of whose escape times exceed
/// [`STAY_INTERACTIONS`] interactions at their own throughput.
fn basins(x_rest: &[f64], v: f64, rate: impl Fn(usize) -> f64) -> Vec<OperatingPoint> {
    let n = x_rest.len() - 1;
    let lam = |k: usize| v * x_rest[n - k];
    let mut lp = vec![0.0; n + 1];
    for k in 1..=n {
        lp[k] = lp[k - 1] + lam(k - 1).ln() - rate(k).ln();
        if !lp[k].is_finite() {
            return Vec::new();
        }
    }
    let top = lp.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = lp.iter().map(|x| (x - top).exp()).sum();
    let pi: Vec<f64> = lp.iter().map(|x| (x - top).exp() / total).collect();
    let modes: Vec<usize> = (0..=n)
        .filter(|&k| (k == 0 || lp[k] > lp[k - 1]) && (k == n || lp[k] >= lp[k + 1]))
        .collect();
    let mut below = vec![0.0; n + 2];
    for k in 0..=n {
        below[k + 1] = below[k] + pi[k];
    }
    // Split the chain at the trough between two modes when leaving either
    // side takes longer than STAY_INTERACTIONS interactions there.
    let flow = |k: usize| if k == 0 { 0.0 } else { rate(k) / v };
    // Means within lo..=hi, weighted relative to the basin's own peak (the
    // other basin may be astronomically more likely).
    let mean_flow = |lo: usize, hi: usize| {
        let peak = lp[lo..=hi]
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = lp[lo..=hi].iter().map(|x| (x - peak).exp()).collect();
        let mass: f64 = w.iter().sum();
        let x: f64 = w
            .iter()
            .enumerate()
            .map(|(i, p)| p * flow(lo + i))
            .sum::<f64>()
            / mass;
        let jobs: f64 = w
            .iter()
            .enumerate()
            .map(|(i, p)| p * (lo + i) as f64)
            .sum::<f64>()
            / mass;
        (x, jobs)
    };
    // A state too unlikely to be represented is never crossed.
    let passage = |num: f64, den: f64| if den > 0.0 { num / den } else { f64::INFINITY };
    let mut cuts = Vec::new();
    for w in modes.windows(2) {
        let (a, b) = (w[0], w[1]);
        let trough = (a..=b)
            .min_by(|&i, &j| lp[i].total_cmp(&lp[j]))
            .unwrap_or(a);
        // Mean first-passage times of a birth-death chain, up and down.
        let up: f64 = (a..b).map(|k| passage(below[k + 1], pi[k] * lam(k))).sum();
        let down: f64 = (a + 1..=b)
            .map(|k| passage((1.0 - below[k]).max(0.0), pi[k] * rate(k)))
            .sum();
        let (xa, _) = mean_flow(cuts.last().map_or(0, |&c| c + 1), trough);
        let (xb, _) = mean_flow(trough + 1, n);
        if up * xa >= STAY_INTERACTIONS && down * xb >= STAY_INTERACTIONS {
            cuts.push(trough);
        }
    }
    if cuts.is_empty() {
        return Vec::new();
    }
    let mut points = Vec::new();
    let mut lo = 0;
    for hi in cuts.into_iter().chain([n]) {
        let (x, jobs) = mean_flow(lo, hi);
        points.push(OperatingPoint {
            jobs_at_station: jobs,
            throughput_per_s: x,
        });
        lo = hi + 1;
    }
    points
}
