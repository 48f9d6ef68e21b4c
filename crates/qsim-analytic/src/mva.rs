//! Mean value analysis of closed product-form networks.
//!
//! * [`exact`] — exact single-class MVA for delay stations, single-server
//!   queues, multi-server queues and stations whose service rate follows a
//!   curve (a [`RateTable`] or the Universal Scalability Law), for every
//!   population 1..=N.
//! * [`exact_multiclass`] — exact multi-class MVA over the population lattice.
//! * [`schweitzer`] — the Schweitzer–Bard approximation for large populations.
//!
//! # Load-dependent stations and numerical stability
//!
//! A station whose rate depends on the number present, μ(j), is handled with
//! its marginal distribution p(j | n):
//!
//! * residence time `R(n) = V · Σ_{j=1..n} j/μ(j) · p(j−1 | n−1)`,
//! * `p(j | n) = X(n) · V/μ(j) · p(j−1 | n−1)` for j ≥ 1.
//!
//! The textbook algorithm then sets `p(0 | n) = 1 − Σ_{j≥1} p(j | n)`. When the
//! station is saturated that difference is pure rounding noise (or negative),
//! and the recursion multiplies the noise by factors X·V/μ(j) > 1 (for a
//! 64-core station by about e^64), so results blow up at a few hundred jobs.
//! This implementation never subtracts. It uses the exact identity
//! `p(0 | n) = p(0 | n−1) · X(n) / X₋ₖ(n)`, where X₋ₖ is the throughput of the
//! network with station k removed, obtained from that network's normalizing
//! constants `G₋ₖ(n)`, computed by convolution in the log domain (log-sum-exp),
//! so they neither overflow nor underflow. All marginals are kept as
//! logarithms, every step multiplies positive numbers, and the result is
//! exact to rounding for populations in the thousands. The cost is O(L·N²)
//! for L load-dependent stations and population N.

use serde::Serialize;

use crate::error::{Error, Result, invalid, non_negative, positive};
use crate::usl::UslModel;

/// Service rate of a station as a table of `(n, rate_per_s)` points:
/// linear interpolation between points and the nearest point's rate outside.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RateTable {
    points: Vec<(f64, f64)>,
}

impl RateTable {
    /// Validates and stores the points: at least one, `n` finite, not
    /// negative and strictly increasing, rates finite and above 0.
    pub fn new(points: Vec<(f64, f64)>) -> Result<Self> {
        if points.is_empty() {
            return Err(invalid(
                "rate table",
                "no points",
                "at least one (n, rate) point",
            ));
        }
        for (i, &(n, rate)) in points.iter().enumerate() {
            non_negative(&format!("rate table point {i} n"), n)?;
            positive(&format!("rate table point {i} rate"), rate)?;
            if i > 0 && n <= points[i - 1].0 {
                return Err(invalid(
                    &format!("rate table point {i} n"),
                    n,
                    &format!("above the previous point's n ({})", points[i - 1].0),
                ));
            }
        }
        Ok(Self { points })
    }

    /// The points as given.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// Completion rate (per second) when `n` jobs are present.
    pub fn rate_per_s(&self, n: f64) -> f64 {
        let p = &self.points;
        if n <= p[0].0 {
            return p[0].1;
        }
        for w in p.windows(2) {
            let ((n0, r0), (n1, r1)) = (w[0], w[1]);
            if n <= n1 {
                return r0 + (r1 - r0) * (n - n0) / (n1 - n0);
            }
        }
        p[p.len() - 1].1
    }
}

/// How a station serves jobs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Service {
    /// Infinite servers (think time, a fixed latency): no queueing.
    Delay {
        /// Mean service time per visit (seconds).
        service_time_s: f64,
    },
    /// One server whose speed does not depend on the queue (FCFS with
    /// exponential service, or PS/LCFS-PR with any service distribution).
    Queue {
        /// Mean service time per visit (seconds).
        service_time_s: f64,
    },
    /// `servers` identical servers: rate `min(j, servers) / service_time_s`.
    MultiServer {
        /// Number of servers (at least 1).
        servers: u32,
        /// Mean service time per visit on one server (seconds).
        service_time_s: f64,
    },
    /// Completion rate given by a table over the number present.
    Table(RateTable),
    /// Completion rate `λ·j / (1 + σ(j−1) + κ·j(j−1))` with `j` present.
    Usl(UslModel),
}

/// A station of a single-class closed network.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Station {
    /// Name used in results and error messages.
    pub name: String,
    /// Mean number of visits per interaction (visit ratio).
    pub visits: f64,
    /// How the station serves.
    pub service: Service,
}

impl Station {
    /// An infinite-server station with total demand `demand_s` per interaction.
    pub fn delay(name: impl Into<String>, demand_s: f64) -> Self {
        Self::with_service(
            name,
            Service::Delay {
                service_time_s: demand_s,
            },
        )
    }

    /// A load-independent single-server queue with total demand `demand_s`.
    pub fn queue(name: impl Into<String>, demand_s: f64) -> Self {
        Self::with_service(
            name,
            Service::Queue {
                service_time_s: demand_s,
            },
        )
    }

    /// A `servers`-server queue with total demand `demand_s` per interaction.
    pub fn multi_server(name: impl Into<String>, servers: u32, demand_s: f64) -> Self {
        Self::with_service(
            name,
            Service::MultiServer {
                servers,
                service_time_s: demand_s,
            },
        )
    }

    /// A station with one visit per interaction and the given service.
    pub fn with_service(name: impl Into<String>, service: Service) -> Self {
        Self {
            name: name.into(),
            visits: 1.0,
            service,
        }
    }

    /// Completion rate (jobs per second) when `jobs` are present (`jobs ≥ 1`).
    pub fn rate_per_s(&self, jobs: u32) -> f64 {
        let j = f64::from(jobs);
        match &self.service {
            Service::Delay { service_time_s } => j / service_time_s,
            Service::Queue { service_time_s } => 1.0 / service_time_s,
            Service::MultiServer {
                servers,
                service_time_s,
            } => f64::from(jobs.min(*servers)) / service_time_s,
            Service::Table(t) => t.rate_per_s(j),
            Service::Usl(u) => u.throughput(j),
        }
    }

    /// Service demand per interaction (visits × service time) for stations whose
    /// speed per server is constant; `None` for rate curves.
    pub fn demand_s(&self) -> Option<f64> {
        match &self.service {
            Service::Delay { service_time_s }
            | Service::Queue { service_time_s }
            | Service::MultiServer { service_time_s, .. } => Some(self.visits * service_time_s),
            Service::Table(_) | Service::Usl(_) => None,
        }
    }

    fn validate(&self, index: usize) -> Result<()> {
        let what = |field: &str| format!("stations[{index}] ({}).{field}", self.name);
        positive(&what("visits"), self.visits)?;
        match &self.service {
            Service::Delay { service_time_s } | Service::Queue { service_time_s } => {
                positive(&what("service_time_s"), *service_time_s)?;
            }
            Service::MultiServer {
                servers,
                service_time_s,
            } => {
                positive(&what("service_time_s"), *service_time_s)?;
                if *servers == 0 {
                    return Err(invalid(&what("servers"), servers, "at least 1"));
                }
            }
            Service::Table(_) => {}
            Service::Usl(u) => {
                UslModel::new(u.sigma, u.kappa, u.lambda)?;
            }
        }
        Ok(())
    }
}

/// Figures for one station at one population.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StationPoint {
    /// Mean number of jobs at the station (waiting or in service).
    pub mean_jobs: f64,
    /// Busy fraction: X·D for a single-server queue, X·D/c per server of a
    /// multi-server queue, P(station not empty) for a rate-curve station,
    /// and for a delay station X·D, the mean number present (where the
    /// simulator's `utilization` is 0).
    pub utilization: f64,
    /// Residence time: mean time a job spends at the station per interaction,
    /// all its visits together (visits × response time per visit; seconds).
    pub residence_time_s: f64,
    /// Completions per second at the station (system throughput × visits).
    pub throughput_per_s: f64,
}

/// Whole-network figures at one population.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PopulationPoint {
    /// Number of jobs in the network.
    pub population: u32,
    /// System throughput (interactions per second).
    pub throughput_per_s: f64,
    /// Mean response time of an interaction, think time excluded (seconds).
    pub response_time_s: f64,
    /// Per-station figures, in the order of the input stations.
    pub stations: Vec<StationPoint>,
}

/// Result of single-class MVA for every population from 1 to N.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MvaSolution {
    /// Station names, in input order.
    pub station_names: Vec<String>,
    /// Think time used (seconds).
    pub think_time_s: f64,
    /// One entry per population 1..=N (index `n − 1`).
    pub points: Vec<PopulationPoint>,
    /// For each load-dependent station, the distribution of the number of
    /// jobs present at the full population (`p(j | N)`, j = 0..=N); `None`
    /// for stations that need no marginals.
    pub marginals: Vec<Option<Vec<f64>>>,
}

impl MvaSolution {
    /// Figures at population `n` (1..=N).
    pub fn at(&self, n: u32) -> Option<&PopulationPoint> {
        (n as usize).checked_sub(1).and_then(|i| self.points.get(i))
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Delay(f64),
    Queue(f64),
    Ld,
}

/// Exact single-class MVA for populations 1..=`population` with think time
/// `think_time_s` (a delay every job visits once per interaction; may be 0).
///
/// Multi-server and rate-curve stations are solved exactly with the stable
/// marginal-probability recursion described in the [module docs](self).
pub fn exact(stations: &[Station], think_time_s: f64, population: u32) -> Result<MvaSolution> {
    non_negative("think_time_s", think_time_s)?;
    if stations.is_empty() {
        return Err(invalid("stations", "an empty list", "at least one station"));
    }
    for (i, s) in stations.iter().enumerate() {
        s.validate(i)?;
    }
    if population == 0 {
        return Err(invalid("population", 0, "at least 1"));
    }
    let n_max = population as usize;
    let kinds: Vec<Kind> = stations
        .iter()
        .map(|s| match (&s.service, s.demand_s()) {
            (Service::Delay { .. }, Some(d)) => Kind::Delay(d),
            (Service::Queue { .. }, Some(d)) => Kind::Queue(d),
            (Service::MultiServer { servers: 1, .. }, Some(d)) => Kind::Queue(d),
            (Service::MultiServer { servers, .. }, Some(d)) if *servers >= population => {
                Kind::Delay(d)
            }
            _ => Kind::Ld,
        })
        .collect();
    let ld: Vec<usize> = (0..stations.len())
        .filter(|&k| kinds[k] == Kind::Ld)
        .collect();

    // Per load-dependent station: ln(V/μ(j)) and V·j/μ(j) for j = 1..=N.
    let mut ln_step: Vec<Vec<f64>> = Vec::with_capacity(ld.len());
    let mut res_weight: Vec<Vec<f64>> = Vec::with_capacity(ld.len());
    for &k in &ld {
        let s = &stations[k];
        let mut a = Vec::with_capacity(n_max + 1);
        let mut b = Vec::with_capacity(n_max + 1);
        a.push(0.0);
        b.push(0.0);
        for j in 1..=population {
            let rate = s.rate_per_s(j);
            if !(rate.is_finite() && rate > 0.0) {
                return Err(invalid(
                    &format!("stations[{k}] ({}) rate at {j} jobs", s.name),
                    rate,
                    "a finite rate above 0",
                ));
            }
            a.push((s.visits / rate).ln());
            b.push(s.visits * f64::from(j) / rate);
        }
        ln_step.push(a);
        res_weight.push(b);
    }
    let complement = complement_log_constants(&kinds, &ld, &ln_step, think_time_s, n_max);

    // Marginals as logarithms, current population.
    let mut log_marg: Vec<Vec<f64>> = ld.iter().map(|_| vec![0.0]).collect();
    let mut queue = vec![0.0; stations.len()];
    let mut residence = vec![0.0; stations.len()];
    let mut points = Vec::with_capacity(n_max);
    for n in 1..=n_max {
        for (k, kind) in kinds.iter().enumerate() {
            residence[k] = match kind {
                Kind::Delay(d) => *d,
                Kind::Queue(d) => d * (1.0 + queue[k]),
                Kind::Ld => 0.0,
            };
        }
        for (l, &k) in ld.iter().enumerate() {
            let w = &res_weight[l];
            residence[k] = log_marg[l]
                .iter()
                .enumerate()
                .map(|(j, lp)| w[j + 1] * lp.exp())
                .sum();
        }
        let response: f64 = residence.iter().sum();
        let x = n as f64 / (think_time_s + response);
        let ln_x = x.ln();
        for (l, lp) in log_marg.iter_mut().enumerate() {
            let g = &complement[l];
            let p0 = if g[n] == f64::NEG_INFINITY {
                f64::NEG_INFINITY
            } else {
                lp[0] + ln_x + g[n] - g[n - 1]
            };
            let step = &ln_step[l];
            lp.push(0.0);
            for j in (1..=n).rev() {
                lp[j] = lp[j - 1] + ln_x + step[j];
            }
            lp[0] = p0;
        }
        let mut station_points = Vec::with_capacity(stations.len());
        for (k, s) in stations.iter().enumerate() {
            queue[k] = x * residence[k];
            let utilization = match (&s.service, kinds[k]) {
                (Service::MultiServer { servers, .. }, _) => {
                    x * s.demand_s().unwrap_or(0.0) / f64::from(*servers)
                }
                (_, Kind::Delay(d) | Kind::Queue(d)) => x * d,
                _ => {
                    let l = ld.iter().position(|&i| i == k).unwrap_or(0);
                    1.0 - log_marg[l][0].exp()
                }
            };
            station_points.push(StationPoint {
                mean_jobs: queue[k],
                utilization,
                residence_time_s: residence[k],
                throughput_per_s: x * s.visits,
            });
        }
        points.push(PopulationPoint {
            population: n as u32,
            throughput_per_s: x,
            response_time_s: response,
            stations: station_points,
        });
    }
    let mut marginals = vec![None; stations.len()];
    for (l, &k) in ld.iter().enumerate() {
        marginals[k] = Some(log_marg[l].iter().map(|lp| lp.exp()).collect());
    }
    Ok(MvaSolution {
        station_names: stations.iter().map(|s| s.name.clone()).collect(),
        think_time_s,
        points,
        marginals,
    })
}

/// `ln(e^a + e^b)` without overflow.
fn log_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        hi
    } else {
        hi + (lo - hi).exp().ln_1p()
    }
}

/// Log-domain convolution: `c(n) = ln Σ_j e^{a(j) + b(n−j)}`.
fn log_convolve(a: &[f64], b: &[f64]) -> Vec<f64> {
    let len = a.len().min(b.len());
    let mut out = Vec::with_capacity(len);
    for n in 0..len {
        let mut max = f64::NEG_INFINITY;
        for j in 0..=n {
            max = max.max(a[j] + b[n - j]);
        }
        if max == f64::NEG_INFINITY {
            out.push(max);
            continue;
        }
        let sum: f64 = (0..=n).map(|j| (a[j] + b[n - j] - max).exp()).sum();
        out.push(max + sum.ln());
    }
    out
}

/// For each load-dependent station, `ln G₋ₖ(n)` for n = 0..=N: the log
/// normalizing constants of the network without that station.
fn complement_log_constants(
    kinds: &[Kind],
    ld: &[usize],
    ln_step: &[Vec<f64>],
    think_time_s: f64,
    n_max: usize,
) -> Vec<Vec<f64>> {
    // All delays (and the think time) merge into one: f(j) = D^j / j!.
    let delay: f64 = think_time_s
        + kinds
            .iter()
            .map(|k| if let Kind::Delay(d) = k { *d } else { 0.0 })
            .sum::<f64>();
    let mut base = Vec::with_capacity(n_max + 1);
    let ln_d = delay.ln();
    let mut ln_fact = 0.0;
    for j in 0..=n_max {
        if j > 0 {
            ln_fact += (j as f64).ln();
        }
        base.push(if j == 0 {
            0.0
        } else if delay > 0.0 {
            j as f64 * ln_d - ln_fact
        } else {
            f64::NEG_INFINITY
        });
    }
    // Load-independent queues: G(n) = G_prev(n) + D·G(n−1).
    for kind in kinds {
        if let Kind::Queue(d) = kind {
            let ln_d = d.ln();
            for n in 1..=n_max {
                base[n] = log_add(base[n], ln_d + base[n - 1]);
            }
        }
    }
    let factors: Vec<Vec<f64>> = ln_step
        .iter()
        .map(|step| {
            let mut f = Vec::with_capacity(n_max + 1);
            let mut acc = 0.0;
            for (j, s) in step.iter().enumerate() {
                if j > 0 {
                    acc += s;
                }
                f.push(acc);
            }
            f
        })
        .collect();
    let l = ld.len();
    // prefix[i] = base ⊛ f_0 ⊛ … ⊛ f_{i−1}; suffix[i] = f_i ⊛ … ⊛ f_{l−1}.
    let mut prefix = Vec::with_capacity(l);
    let mut acc = base;
    for (i, f) in factors.iter().enumerate() {
        let next = if i + 1 < l {
            Some(log_convolve(&acc, f))
        } else {
            None
        };
        prefix.push(acc);
        if let Some(next) = next {
            acc = next;
        } else {
            break;
        }
    }
    let mut suffix: Vec<Option<Vec<f64>>> = vec![None; l + 1];
    for i in (1..l).rev() {
        suffix[i] = Some(match &suffix[i + 1] {
            Some(s) => log_convolve(&factors[i], s),
            None => factors[i].clone(),
        });
    }
    (0..l)
        .map(|i| match &suffix[i + 1] {
            Some(s) => log_convolve(&prefix[i], s),
            None => prefix[i].clone(),
        })
        .collect()
}

/// A service center for multi-class models: a delay or a single-server
/// queue (processor sharing, or FCFS with the same mean service time for all
/// classes, as product form requires).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CenterKind {
    /// Infinite servers, no queueing.
    Delay,
    /// One server shared by all classes.
    Queue,
}

/// A station of a multi-class network with one service demand per class.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassedStation {
    /// Name used in results and messages.
    pub name: String,
    /// Delay or queue.
    pub kind: CenterKind,
    /// Service demand per interaction (visits × service time) for each class, in
    /// class order (seconds).
    pub demands_s: Vec<f64>,
}

impl ClassedStation {
    /// Creates a station.
    pub fn new(name: impl Into<String>, kind: CenterKind, demands_s: Vec<f64>) -> Self {
        Self {
            name: name.into(),
            kind,
            demands_s,
        }
    }
}

/// A closed job class: a fixed population that thinks between interactions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClosedClass {
    /// Name used in results.
    pub name: String,
    /// Number of jobs of the class.
    pub population: u32,
    /// Think time between interactions (seconds, may be 0).
    pub think_time_s: f64,
}

impl ClosedClass {
    /// Creates a class.
    pub fn new(name: impl Into<String>, population: u32, think_time_s: f64) -> Self {
        Self {
            name: name.into(),
            population,
            think_time_s,
        }
    }
}

/// Per-class figures of a multi-class solution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassResult {
    /// Class name.
    pub name: String,
    /// Throughput of the class (interactions per second).
    pub throughput_per_s: f64,
    /// Mean response time of an interaction of the class, think time excluded
    /// (seconds).
    pub response_time_s: f64,
    /// Mean number of jobs of the class in the stations (thinkers excluded).
    pub mean_jobs: f64,
}

/// Figures of one class at one station.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClassAtStation {
    /// Mean number of jobs of the class at the station.
    pub mean_jobs: f64,
    /// Busy fraction due to the class (X·D; at a delay station the class's
    /// mean number present, where the simulator's `utilization` is 0).
    pub utilization: f64,
    /// Residence time: time per interaction spent at the station by a job of
    /// the class, all its visits together (seconds).
    pub residence_time_s: f64,
}

/// Figures of one station of a multi-class solution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StationResult {
    /// Station name.
    pub name: String,
    /// Mean number of jobs of all classes.
    pub mean_jobs: f64,
    /// Total busy fraction (sum over classes; see
    /// [`ClassAtStation::utilization`] for a delay station).
    pub utilization: f64,
    /// Per-class figures, in class order.
    pub per_class: Vec<ClassAtStation>,
}

/// Result of multi-class MVA at the full population.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MultiClassSolution {
    /// Per-class figures.
    pub classes: Vec<ClassResult>,
    /// Per-station figures.
    pub stations: Vec<StationResult>,
    /// Iterations used (0 for exact methods).
    pub iterations: usize,
}

/// Largest population lattice [`exact_multiclass`] will walk.
pub const MAX_LATTICE_POINTS: u64 = 2_000_000_000;

pub(crate) fn validate_multiclass(stations: &[ClassedStation], n_classes: usize) -> Result<()> {
    if stations.is_empty() {
        return Err(invalid("stations", "an empty list", "at least one station"));
    }
    for (i, s) in stations.iter().enumerate() {
        if s.demands_s.len() != n_classes {
            return Err(Error::SizeMismatch {
                what: format!("stations[{i}] ({}).demands_s (one per class)", s.name),
                found: s.demands_s.len(),
                expected: n_classes,
            });
        }
        for (r, d) in s.demands_s.iter().enumerate() {
            non_negative(&format!("stations[{i}] ({}).demands_s[{r}]", s.name), *d)?;
        }
    }
    Ok(())
}

fn validate_classes(stations: &[ClassedStation], classes: &[ClosedClass]) -> Result<()> {
    if classes.is_empty() {
        return Err(invalid("classes", "an empty list", "at least one class"));
    }
    validate_multiclass(stations, classes.len())?;
    for (r, c) in classes.iter().enumerate() {
        non_negative(
            &format!("classes[{r}] ({}).think_time_s", c.name),
            c.think_time_s,
        )?;
        let total: f64 = stations.iter().map(|s| s.demands_s[r]).sum::<f64>() + c.think_time_s;
        if c.population > 0 && total <= 0.0 {
            return Err(invalid(
                &format!("classes[{r}] ({}) total demand plus think time", c.name),
                total,
                "above 0 for a class with jobs",
            ));
        }
    }
    Ok(())
}

/// Exact multi-class MVA at the population vector given by the classes.
///
/// Walks the population lattice with one class (the most populous) as the
/// outer index and keeps only two slabs of the lattice, so memory is
/// `2 · stations · Π_{other classes}(N_r + 1)` numbers. Time is proportional
/// to the number of lattice points times stations times classes.
pub fn exact_multiclass(
    stations: &[ClassedStation],
    classes: &[ClosedClass],
) -> Result<MultiClassSolution> {
    validate_classes(stations, classes)?;
    let k_n = stations.len();
    let r_n = classes.len();
    let pops: Vec<usize> = classes.iter().map(|c| c.population as usize).collect();
    let lattice = pops
        .iter()
        .try_fold(1u64, |acc, &n| acc.checked_mul(n as u64 + 1))
        .unwrap_or(u64::MAX);
    if lattice > MAX_LATTICE_POINTS {
        return Err(Error::TooLarge {
            what: "population lattice for exact multi-class mva (use schweitzer instead)".into(),
            found: lattice.min(usize::MAX as u64) as usize,
            limit: MAX_LATTICE_POINTS as usize,
        });
    }
    let outer = (0..r_n).max_by_key(|&r| pops[r]).unwrap_or(0);
    let inner: Vec<usize> = (0..r_n).filter(|&r| r != outer).collect();
    // Mixed-radix strides over the inner classes, last one fastest.
    let mut strides = vec![0usize; r_n];
    let mut slab = 1usize;
    for &r in inner.iter().rev() {
        strides[r] = slab;
        slab *= pops[r] + 1;
    }
    let is_queue: Vec<bool> = stations
        .iter()
        .map(|s| s.kind == CenterKind::Queue)
        .collect();
    // Demands laid out [class][station] for cache-friendly inner loops.
    let demand: Vec<Vec<f64>> = (0..r_n)
        .map(|r| stations.iter().map(|s| s.demands_s[r]).collect())
        .collect();
    let mut prev = vec![0.0; slab * k_n];
    let mut cur = vec![0.0; slab * k_n];
    let mut counts = vec![0usize; r_n];
    let mut res = vec![0.0; r_n * k_n];
    let mut x = vec![0.0; r_n];
    let mut q = vec![0.0; k_n];
    for n_outer in 0..=pops[outer] {
        counts[outer] = n_outer;
        for c in inner.iter() {
            counts[*c] = 0;
        }
        for idx in 0..slab {
            if idx > 0 {
                // Advance the mixed-radix counter (last inner class fastest).
                for &r in inner.iter().rev() {
                    counts[r] += 1;
                    if counts[r] <= pops[r] {
                        break;
                    }
                    counts[r] = 0;
                }
            }
            q.iter_mut().for_each(|v| *v = 0.0);
            for r in 0..r_n {
                if counts[r] == 0 {
                    x[r] = 0.0;
                    continue;
                }
                let base = if r == outer {
                    &prev[idx * k_n..(idx + 1) * k_n]
                } else {
                    let j = idx - strides[r];
                    &cur[j * k_n..(j + 1) * k_n]
                };
                let rr = &mut res[r * k_n..(r + 1) * k_n];
                let d = &demand[r];
                let mut total = classes[r].think_time_s;
                for k in 0..k_n {
                    let v = if is_queue[k] {
                        d[k] * (1.0 + base[k])
                    } else {
                        d[k]
                    };
                    rr[k] = v;
                    total += v;
                }
                x[r] = counts[r] as f64 / total;
            }
            let out = &mut cur[idx * k_n..(idx + 1) * k_n];
            for (k, o) in out.iter_mut().enumerate() {
                let mut s = 0.0;
                for r in 0..r_n {
                    if counts[r] > 0 {
                        s += x[r] * res[r * k_n + k];
                    }
                }
                *o = s;
            }
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    // The last point visited is the full population; `res` and `x` hold it.
    for r in 0..r_n {
        if pops[r] == 0 {
            res[r * k_n..(r + 1) * k_n]
                .iter_mut()
                .for_each(|v| *v = 0.0);
            x[r] = 0.0;
        }
    }
    Ok(build_solution(stations, classes, &demand, &res, &x, 0))
}

fn build_solution(
    stations: &[ClassedStation],
    classes: &[ClosedClass],
    demand: &[Vec<f64>],
    res: &[f64],
    x: &[f64],
    iterations: usize,
) -> MultiClassSolution {
    let k_n = stations.len();
    let class_results = classes
        .iter()
        .enumerate()
        .map(|(r, c)| {
            let response: f64 = res[r * k_n..(r + 1) * k_n].iter().sum();
            ClassResult {
                name: c.name.clone(),
                throughput_per_s: x[r],
                response_time_s: response,
                mean_jobs: x[r] * response,
            }
        })
        .collect();
    let station_results = stations
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let per_class: Vec<ClassAtStation> = (0..classes.len())
                .map(|r| ClassAtStation {
                    mean_jobs: x[r] * res[r * k_n + k],
                    utilization: x[r] * demand[r][k],
                    residence_time_s: res[r * k_n + k],
                })
                .collect();
            StationResult {
                name: s.name.clone(),
                mean_jobs: per_class.iter().map(|c| c.mean_jobs).sum(),
                utilization: per_class.iter().map(|c| c.utilization).sum(),
                per_class,
            }
        })
        .collect();
    MultiClassSolution {
        classes: class_results,
        stations: station_results,
        iterations,
    }
}

/// Schweitzer–Bard approximate MVA: estimates the queue seen by an arriving
/// class-r job as `Q_k − Q_{k,r}/N_r` and iterates to a fixed point.
///
/// `tolerance` is the largest change of any per-class queue length between
/// two iterations at which to stop (e.g. `1e-9`). Typically within a few
/// percent of the exact answer; exact as N → ∞ for the bottleneck.
pub fn schweitzer(
    stations: &[ClassedStation],
    classes: &[ClosedClass],
    tolerance: f64,
) -> Result<MultiClassSolution> {
    validate_classes(stations, classes)?;
    positive("tolerance", tolerance)?;
    const MAX_ITERATIONS: usize = 1_000_000;
    let k_n = stations.len();
    let r_n = classes.len();
    let demand: Vec<Vec<f64>> = (0..r_n)
        .map(|r| stations.iter().map(|s| s.demands_s[r]).collect())
        .collect();
    let pops: Vec<f64> = classes.iter().map(|c| f64::from(c.population)).collect();
    let mut q: Vec<f64> = (0..r_n * k_n).map(|i| pops[i / k_n] / k_n as f64).collect();
    let mut res = vec![0.0; r_n * k_n];
    let mut x = vec![0.0; r_n];
    let mut change = f64::INFINITY;
    for iteration in 1..=MAX_ITERATIONS {
        let totals: Vec<f64> = (0..k_n)
            .map(|k| (0..r_n).map(|r| q[r * k_n + k]).sum())
            .collect();
        change = 0.0;
        for r in 0..r_n {
            if pops[r] == 0.0 {
                continue;
            }
            let mut total = classes[r].think_time_s;
            for k in 0..k_n {
                let seen = totals[k] - q[r * k_n + k] / pops[r];
                let v = match stations[k].kind {
                    CenterKind::Queue => demand[r][k] * (1.0 + seen),
                    CenterKind::Delay => demand[r][k],
                };
                res[r * k_n + k] = v;
                total += v;
            }
            x[r] = pops[r] / total;
        }
        for r in 0..r_n {
            for k in 0..k_n {
                let new = x[r] * res[r * k_n + k];
                change = f64::max(change, (new - q[r * k_n + k]).abs());
                q[r * k_n + k] = new;
            }
        }
        if change < tolerance {
            return Ok(build_solution(
                stations, classes, &demand, &res, &x, iteration,
            ));
        }
    }
    Err(Error::NoConvergence {
        method: "schweitzer-bard mva".into(),
        iterations: MAX_ITERATIONS,
        last_change: change,
        tolerance,
    })
}
