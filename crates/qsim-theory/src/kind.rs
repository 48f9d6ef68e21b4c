//! What each station kind can do: its peak completion rate and the least and
//! most time a visit can take. One function per kind; a new kind adds one
//! arm to [`law`] and one function here.
//!
//! Every figure is a bound on long-run means that holds for any service
//! distribution, so the bounds built on them ([`crate::bounds`]) never claim
//! what a simulation could contradict.

use qsim_kernel::{BatchSpec, Discipline, LatchSpec, LinkSpec, Speed, StationKind, StationSpec};

/// Limits of one station for one class, with at most `present` jobs there.
#[derive(Clone, Debug, PartialEq)]
pub struct StationLaw {
    /// Highest long-run completion rate (visits per second); `None` when the
    /// station cannot saturate (a delay without a speed curve, a fork, a join).
    pub peak_rate_per_s: Option<f64>,
    /// A lower bound on the mean time a visit takes (seconds).
    pub min_residence_s: f64,
    /// An upper bound on the mean time a visit takes when at most `present`
    /// jobs are there, or why there is none (the station can hold jobs while
    /// idle, or the population is unbounded).
    pub max_residence_s: Result<f64, String>,
}

/// The law of station `st` for `class` with at most `present` jobs there
/// (`None`: an open workload, no limit). `None` when the class does not visit.
pub fn law(st: &StationSpec, class: usize, present: Option<u32>) -> Option<StationLaw> {
    if st.kind.is_fork_or_join() {
        return Some(fork_join());
    }
    let mean = st.service.get(class)?.as_ref()?.mean();
    Some(match (&st.kind, &st.speed) {
        // The group kinds sample a whole group's time: a speed curve does not apply.
        (StationKind::Batch(b), _) => batch(b, mean, present),
        (StationKind::Link(l), _) => link(l, mean, present),
        (_, Some(speed)) => curve(speed, present),
        (StationKind::Delay, None) => delay(mean),
        (StationKind::Queue { servers, .. }, None) => queue(*servers, mean, present),
        (StationKind::Latch(l), None) => latch(l, mean, present),
        (StationKind::Fork(_) | StationKind::Join(_), None) => fork_join(),
    })
}

fn at_most(present: Option<u32>, cap: u32) -> u32 {
    present.map_or(cap, |n| n.min(cap))
}

/// `n` jobs at a station that completes at least one job per `slowest`
/// seconds while not empty: a visit takes at most `n · slowest` on average
/// (Little's law, with E[n] <= n·P(busy) and X >= P(busy)/slowest).
fn crowd(present: Option<u32>, slowest: f64) -> Result<f64, String> {
    present
        .map(|n| f64::from(n) * slowest)
        .ok_or_else(|| "an open workload puts no limit on the jobs present".into())
}

fn delay(mean: f64) -> StationLaw {
    StationLaw {
        peak_rate_per_s: None,
        min_residence_s: mean,
        max_residence_s: Ok(mean),
    }
}

fn queue(servers: u32, mean: f64, present: Option<u32>) -> StationLaw {
    StationLaw {
        peak_rate_per_s: Some(f64::from(at_most(present, servers)) / mean),
        min_residence_s: mean,
        // Work-conserving (any discipline): at least one server busy.
        max_residence_s: crowd(present, mean),
    }
}

fn latch(l: &LatchSpec, mean: f64, present: Option<u32>) -> StationLaw {
    // Hand-off costs and spinning only lengthen a hold.
    StationLaw {
        peak_rate_per_s: Some(1.0 / mean),
        min_residence_s: mean,
        max_residence_s: if l.numa.is_some() || l.spin.is_some() {
            Err("a latch with a contention mechanism can be free while threads wait for it".into())
        } else {
            crowd(present, mean)
        },
    }
}

/// A group of k jobs takes base + per_job·k: k/(base + per_job·k) rises with
/// k, and k is at most max_batch and at most the jobs present.
fn batch(b: &BatchSpec, mean: f64, present: Option<u32>) -> StationLaw {
    let k = f64::from(at_most(present, b.max_batch));
    let one = mean + b.per_job_s;
    // While not empty the server is serving or waiting (at most max_wait_s
    // before each group) for more jobs.
    let slowest = one + b.max_wait_s.unwrap_or(0.0);
    StationLaw {
        peak_rate_per_s: Some(k / (mean + b.per_job_s * k)),
        min_residence_s: one,
        max_residence_s: crowd(present, slowest),
    }
}

/// `pipeline` round trips in flight, each carrying up to `max_batch` jobs
/// and taking the round-trip time whatever it carries: at most
/// min(pipeline·max_batch, present) jobs are in flight (Little's law).
fn link(l: &LinkSpec, rtt: f64, present: Option<u32>) -> StationLaw {
    let in_flight = at_most(present, l.pipeline.saturating_mul(l.max_batch));
    StationLaw {
        peak_rate_per_s: Some(f64::from(in_flight) / rtt),
        min_residence_s: rtt,
        // A trip starts whenever a slot is free and a job waits.
        max_residence_s: crowd(present, rtt),
    }
}

fn fork_join() -> StationLaw {
    StationLaw {
        peak_rate_per_s: None,
        min_residence_s: 0.0,
        max_residence_s: Err("a join holds a job until its sub-jobs finish".into()),
    }
}

/// A speed curve: the station completes rate(n) jobs per second with n present.
fn curve(speed: &Speed, present: Option<u32>) -> StationLaw {
    let slowest = present.map(|n| 1.0 / min_rate(speed, n));
    StationLaw {
        peak_rate_per_s: Some(peak_rate(speed, present)),
        min_residence_s: min_time_per_job(speed, present),
        max_residence_s: match slowest {
            Some(s) => crowd(present, s),
            None => crowd(None, 0.0),
        },
    }
}

/// Where a speed curve can have its extremes in [1, n]: the ends, a table's
/// points, the USL peak.
fn candidates(speed: &Speed, n: Option<u32>) -> Vec<f64> {
    let hi = n.map_or(f64::INFINITY, f64::from);
    let mut at = vec![1.0];
    if hi.is_finite() {
        at.push(hi);
    }
    match speed {
        Speed::Table(points) => at.extend(points.iter().map(|p| p.0)),
        Speed::Usl { sigma, kappa, .. } if *kappa > 0.0 => {
            let peak = ((1.0 - sigma).max(0.0) / kappa).sqrt();
            at.extend([peak, peak.floor(), peak.ceil()]);
        }
        Speed::Usl { .. } => {}
    }
    at.retain(|&x| (1.0..=hi).contains(&x));
    at
}

/// Highest rate a speed curve reaches with 1..=n jobs (n `None`: any number).
/// Real n between the integers can only raise it, so it stays a bound.
pub fn peak_rate(speed: &Speed, n: Option<u32>) -> f64 {
    let best = candidates(speed, n)
        .into_iter()
        .map(|x| speed.rate(x))
        .fold(0.0, f64::max);
    match (speed, n) {
        // Without coherency cost the USL rises towards lambda/sigma (or
        // without bound) as n grows.
        (
            Speed::Usl {
                sigma,
                kappa,
                lambda,
            },
            None,
        ) if *kappa == 0.0 => {
            if *sigma > 0.0 {
                best.max(lambda / sigma)
            } else {
                f64::INFINITY
            }
        }
        _ => best,
    }
}

/// Lowest rate a speed curve has with 1..=n jobs.
pub fn min_rate(speed: &Speed, n: u32) -> f64 {
    candidates(speed, Some(n))
        .into_iter()
        .map(|x| speed.rate(x))
        .fold(f64::INFINITY, f64::min)
}

/// The least n/rate(n) over 1..=n: a visit takes at least this long on
/// average (E[n] >= m·E[rate(n)] when n >= m·rate(n) everywhere). n/rate(n)
/// is monotone between a table's points and rises along a USL curve.
fn min_time_per_job(speed: &Speed, n: Option<u32>) -> f64 {
    candidates(speed, n)
        .into_iter()
        .map(|x| x / speed.rate(x))
        .fold(f64::INFINITY, f64::min)
}

/// Whether a station serves jobs one at a time in arrival order with a
/// service time that does not depend on the others (where P-K applies).
pub fn fcfs_single_server(st: &StationSpec) -> bool {
    st.speed.is_none()
        && match &st.kind {
            StationKind::Queue {
                servers: 1,
                discipline: Discipline::Fcfs,
            } => true,
            StationKind::Queue { .. } => false,
            StationKind::Latch(l) => l.numa.is_none() && l.spin.is_none(),
            StationKind::Delay
            | StationKind::Batch(_)
            | StationKind::Link(_)
            | StationKind::Fork(_)
            | StationKind::Join(_) => false,
        }
}

/// The rate a speed curve tends to as the jobs present grow without bound:
/// a table's last rate (constant after its last point), `lambda/sigma` for
/// a USL curve without coherency cost (infinite without contention either),
/// 0 with coherency cost (the rate falls as 1/n).
///
/// An open station with such a curve, fed at `offered` jobs per second,
/// has a steady state only if `offered` is below this limit: above it the
/// queue, once long enough, only grows. Between the limit and the peak it
/// can stay near a low operating point for a while but not forever (see
/// [`collapse`]).
pub fn limit_rate(speed: &Speed) -> f64 {
    match speed {
        Speed::Table(points) => points.last().map_or(0.0, |p| p.1),
        Speed::Usl { kappa, .. } if *kappa > 0.0 => 0.0,
        Speed::Usl { sigma, lambda, .. } if *sigma > 0.0 => lambda / sigma,
        Speed::Usl { .. } => f64::INFINITY,
    }
}

/// The most jobs [`collapse`] follows the queue through: past them the
/// expected time to collapse is at least n²/2 arrivals (the curve is at
/// least the arrival rate all the way), more than any run could reach.
const COLLAPSE_SEARCH: u64 = 2_000_000;

/// Where an open station with speed curve `speed` and Poisson arrivals at
/// `offered` per second (below the peak, at or above [`limit_rate`])
/// collapses, and when, for exponential work.
///
/// The jobs present form a birth-death chain (births `offered`, deaths
/// `rate(n)`). `at_jobs` is one more than the most jobs at which the curve
/// still keeps up with the arrivals: from there on it never does, and the
/// queue grows without bound. `expected_s` is the exact mean first-passage
/// time from empty to `at_jobs`: with t_k the mean time from k jobs to k+1,
/// t_0 = 1/offered and t_k = 1/offered + (rate(k)/offered)·t_(k−1), summed
/// over k < at_jobs (infinite once it passes f64's range). `None` when the
/// curve keeps up beyond 2,000,000 jobs or never falls behind.
pub fn collapse(speed: &Speed, offered: f64) -> Option<Collapse> {
    if offered.is_nan() || offered <= 0.0 || offered < limit_rate(speed) {
        return None;
    }
    // Past this many jobs the curve stays below `offered`.
    let bound = match speed {
        Speed::Table(points) => points.last()?.0.ceil(),
        Speed::Usl {
            sigma,
            kappa,
            lambda,
        } => {
            // rate(n) >= offered <=> kappa·o·n² + (o·(sigma−kappa) − lambda)·n
            // + o·(1−sigma) <= 0: at most the larger root.
            let (a, b, c) = (
                kappa * offered,
                offered * (sigma - kappa) - lambda,
                offered * (1.0 - sigma),
            );
            if a <= 0.0 {
                return None;
            }
            let d = (b * b - 4.0 * a * c).max(0.0);
            ((-b + d.sqrt()) / (2.0 * a)).ceil() + 1.0
        }
    };
    if !(bound.is_finite() && bound <= COLLAPSE_SEARCH as f64) {
        return None;
    }
    let last = (1..=bound.max(1.0) as u64)
        .rev()
        .find(|&n| speed.rate(n as f64) >= offered)
        .unwrap_or(0);
    let at_jobs = last + 1;
    let (mut t, mut total) = (0.0_f64, 0.0_f64);
    for k in 0..at_jobs {
        let death = if k == 0 { 0.0 } else { speed.rate(k as f64) };
        t = 1.0 / offered + death / offered * t;
        total += t;
        if !total.is_finite() {
            break;
        }
    }
    Some(Collapse {
        at_jobs,
        expected_s: total,
    })
}

/// Where and when an open station collapses (see [`collapse`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Collapse {
    /// The jobs present past which the curve never keeps up.
    pub at_jobs: u64,
    /// Mean time from empty to `at_jobs` jobs, seconds (infinite: beyond
    /// f64's range).
    pub expected_s: f64,
}
