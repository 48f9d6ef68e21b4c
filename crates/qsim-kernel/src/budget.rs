//! What a run will cost before it starts: memory and events.
//!
//! A model can be valid and still impossible to run: a population of 10^9
//! needs a job slab of tens of gigabytes, a fork with `fan_out = 4294967295`
//! splits one job into four billion sub-jobs, a warm-up of 4294967295 jobs
//! takes days. [`estimate`] reads only the spec and the run configuration
//! (nothing is allocated), and [`Budget::check`] refuses a run beyond its
//! limits with the key that causes it, so the run is refused in
//! microseconds instead of being killed by the OS hours later.
//!
//! The figures are rough but one-sided where it matters: the event count is
//! a lower bound (one event per think or arrival and per station visit), so
//! a run refused for exceeding `max_events` would certainly have hit that
//! limit.

use crate::config::{Precision, RunConfig, Stop, Warmup};
use crate::network::{Network, Workload};
use thiserror::Error;

/// Bytes per job slot: the slab entry, its free-list slot, its pending
/// event (the event list may hold twice its size while growing) and its
/// place in a waiting queue (which doubles when full).
const JOB_BYTES: u64 = crate::sim::JOB_BYTES as u64 + 4 + 2 * 24 + 2 * 4;
/// A response-time histogram (per class and one for the system) with the
/// other per-class accumulators.
const CLASS_BYTES: u64 = 56 * 1024;
/// Per-station state besides its jobs: accumulators, samplers, queues.
const STATION_BYTES: u64 = 2 * 1024;
/// Station tails per station (`RunConfig::station_tails`): two time
/// histograms and the number-present distribution.
const TAIL_BYTES: u64 = 2 * 52 * 1024 + 8 * 1024;
/// A class's percentiles at one station it can reach, in a multi-class
/// model with `station_tails`: histograms of its time and wait there
/// (6,402 buckets of 8 bytes each, 50 KiB), held by the running
/// replication and again, for pooling, by each kept result.
pub const CLASS_TAIL_BYTES: u64 = 2 * 52 * 1024;
/// A finished replication's result, kept until the run ends (the
/// percentiles pool every replication's histograms): a response-time
/// histogram per class and for the system (about 44 KiB each; M/M/1
/// measured 88 KB a replication) ...
const RESULT_HIST_BYTES: u64 = 44 * 1024;
/// ... and each station's figures.
const RESULT_STATION_BYTES: u64 = 1024;

/// Events per second one thread simulates, for duration estimates only.
pub const EVENTS_PER_S_PER_THREAD: f64 = 1e7;

/// What a run is estimated to need.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// Bytes one replication needs at most (jobs present at once, fork
    /// sub-jobs, per-station and per-class state).
    pub replication_bytes: u64,
    /// Replications that run at once (threads, at most the replications).
    pub parallel: u32,
    /// `replication_bytes × parallel`.
    pub bytes: u64,
    /// The model key that contributes most memory, e.g.
    /// `workload.population` or `stations.fork.fan_out`.
    pub memory_key: String,
    /// A lower bound on the events of one replication, when the stop rule
    /// and warm-up count jobs (`None` for runs measured in simulated time).
    pub replication_events: Option<f64>,
    /// `replication_events × replications` (the most replications a
    /// precision target allows).
    pub events: Option<f64>,
    /// The key that makes the run long: `simulation.warmup`,
    /// `simulation.stop` or `simulation.replications`.
    pub events_key: String,
    /// Threads the run uses, for the duration estimate.
    pub threads: u32,
}

impl Estimate {
    /// Rough wall-clock seconds for `events` at
    /// [`EVENTS_PER_S_PER_THREAD`] on each thread.
    pub fn seconds(&self) -> Option<f64> {
        self.events
            .map(|e| e / (EVENTS_PER_S_PER_THREAD * f64::from(self.threads.max(1))))
    }
}

/// The default most events of a whole run: an hour of one thread at
/// [`EVENTS_PER_S_PER_THREAD`] (half an hour on two). Longer runs are
/// rarely meant (a warm-up of 4294967295 jobs is a typo more often than a
/// plan); `--max-events` raises it and `--force` lifts it.
pub const DEFAULT_MAX_EVENTS: f64 = 3600.0 * EVENTS_PER_S_PER_THREAD;

/// Limits a run must stay within.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    /// Most bytes the run may need (all replications running at once).
    pub max_memory_bytes: u64,
    /// Most events of the whole run; `None` to allow any (`--force`).
    pub max_events: Option<f64>,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            max_memory_bytes: 8 << 30,
            max_events: Some(DEFAULT_MAX_EVENTS),
        }
    }
}

/// Why a run was refused before it started.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum BudgetError {
    /// The run would need more memory than allowed.
    #[error(
        "{key}: the run would need about {} ({} per replication × {parallel} at once), more than the limit of {}; lower {key}, run fewer replications at once (--threads) or raise --max-memory",
        human_bytes(*bytes),
        human_bytes(*replication_bytes),
        human_bytes(*limit)
    )]
    Memory {
        /// The key contributing most.
        key: String,
        /// Estimated bytes.
        bytes: u64,
        /// Estimated bytes per replication.
        replication_bytes: u64,
        /// Replications at once.
        parallel: u32,
        /// The limit.
        limit: u64,
    },
    /// One replication would certainly reach the per-replication event
    /// limit (`RunConfig::max_events`) before its stopping rule.
    #[error(
        "{key}: one replication needs at least {events:.3e} events, more than the limit of {limit:.3e} events per replication; it could never finish (lower {key})"
    )]
    ReplicationEvents {
        /// The key that makes the run long.
        key: String,
        /// Lower bound on the events of one replication.
        events: f64,
        /// The per-replication limit.
        limit: f64,
    },
    /// The whole run would take longer than the budget allows.
    #[error(
        "{key}: the run needs at least {events:.3e} events (limit {limit:.0e}), about {} on {threads} threads; lower {key}, or raise --max-events (--force runs it anyway)",
        human_duration(*seconds)
    )]
    Events {
        /// The key that makes the run long.
        key: String,
        /// Lower bound on the events of the run.
        events: f64,
        /// The limit.
        limit: f64,
        /// Estimated wall-clock seconds.
        seconds: f64,
        /// Threads assumed.
        threads: u32,
    },
}

impl Budget {
    /// Estimates the run and refuses it when it exceeds a limit.
    pub fn check(
        &self,
        network: &Network,
        config: &RunConfig,
        visits: &[Option<Vec<f64>>],
    ) -> Result<Estimate, BudgetError> {
        let e = estimate(network, config, visits);
        if e.bytes > self.max_memory_bytes {
            return Err(BudgetError::Memory {
                key: e.memory_key.clone(),
                bytes: e.bytes,
                replication_bytes: e.replication_bytes,
                parallel: e.parallel,
                limit: self.max_memory_bytes,
            });
        }
        if let Some(ev) = e.replication_events
            && ev > config.max_events as f64
        {
            return Err(BudgetError::ReplicationEvents {
                key: e.events_key.clone(),
                events: ev,
                limit: config.max_events as f64,
            });
        }
        if let (Some(ev), Some(limit)) = (e.events, self.max_events)
            && ev > limit
        {
            return Err(BudgetError::Events {
                key: e.events_key.clone(),
                events: ev,
                limit,
                seconds: e.seconds().unwrap_or(0.0),
                threads: e.threads,
            });
        }
        Ok(e)
    }
}

/// The key path of class `c`'s workload: a single class named `default` is
/// the model's `[workload]` table, others are `classes.NAME`.
fn class_key(network: &Network, c: usize) -> String {
    let spec = network.spec();
    if spec.classes.len() == 1 && spec.classes[c].name == "default" {
        "workload".into()
    } else {
        format!("classes.{}", spec.classes[c].name)
    }
}

/// Estimates the memory and events of a run of `network` under `config`
/// from the spec alone (no allocation beyond a few small vectors).
///
/// `visits[c]` holds class `c`'s mean visits per interaction to each
/// station (the job itself, not its fork sub-jobs), e.g. from
/// `qsim_theory::visit_ratios`; a missing entry counts no visits, which
/// keeps the event count a lower bound.
pub fn estimate(network: &Network, config: &RunConfig, visits: &[Option<Vec<f64>>]) -> Estimate {
    let spec = network.spec();
    let threads = if config.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get()) as u32
    } else {
        config.threads.min(u32::MAX as usize) as u32
    };
    let replications = match config.precision {
        Some(Precision {
            max_replications, ..
        }) => max_replications.max(config.replications),
        None => config.replications,
    };
    let parallel = threads.min(replications).max(1);

    // Jobs present at once: every closed job, and for each fork a class
    // visits, every parent that may be split at once times the fan-out.
    let mut jobs = 0.0f64;
    let mut key = String::new();
    let mut biggest = -1.0f64;
    let mut events_per_job = Vec::with_capacity(spec.classes.len());
    for (c, class) in spec.classes.iter().enumerate() {
        let peak = |population| crate::schedule::peak_population(population, c, &config.schedule);
        let parents = match class.workload {
            Workload::Closed { population, .. } => f64::from(peak(population)),
            // Open jobs are bounded by `max_jobs_present` only when the
            // model is unstable, which the run detects; count one parent.
            Workload::Open { .. } => 1.0,
        };
        if let Workload::Closed { population, .. } = class.workload {
            let own = f64::from(peak(population));
            jobs += own;
            if own > biggest {
                biggest = own;
                key = format!("{}.population", class_key(network, c));
            }
        }
        let visits = visits.get(c).and_then(Option::as_ref);
        // An interaction starts with an event unless it has no think time.
        let mut per_job = match &class.workload {
            Workload::Closed { think: None, .. } => 0.0,
            _ => 1.0,
        };
        // One event per visit where every job's service ends with its own
        // event (batches and links serve groups, forks and joins are instant).
        let own_event = |s: usize| spec.stations[s].kind.event_per_visit();
        for (s, st) in spec.stations.iter().enumerate() {
            let v = visits.and_then(|v| v.get(s)).copied().unwrap_or(0.0);
            if own_event(s) {
                per_job += v;
            }
            // Without visit ratios a fork may be visited: count it.
            if let Some(f) = st.kind.as_fork()
                && (v > 0.0 || visits.is_none())
            {
                let subs = parents * f64::from(f.fan_out);
                jobs += subs;
                if f.targets.iter().all(|&(t, _)| own_event(t)) {
                    per_job += v * f64::from(f.fan_out);
                }
                // The steps of fixed sub-job routes, by the targets' weights.
                let weight: f64 = f.targets.iter().map(|t| t.1).sum();
                let steps: f64 = (f.targets.iter().zip(&f.routes))
                    .map(|(&(_, w), r)| {
                        w / weight * r.iter().filter(|&&s| own_event(s)).count() as f64
                    })
                    .sum();
                if steps.is_finite() {
                    per_job += v * f64::from(f.fan_out) * steps;
                }
                per_job += v * f64::from(f.fan_out) * sub_job_row_visits(spec, c, f, &own_event);
                if subs > biggest {
                    biggest = subs;
                    key = format!("stations.{}.fan_out", st.name);
                }
            }
        }
        per_job += dropped_per_job(network, config, c, visits.map(Vec::as_slice));
        events_per_job.push(per_job);
    }
    if key.is_empty() {
        key = "stations".into();
    }
    let (fixed, result, class_tails) = state_bytes(network, config);
    if class_tails as f64 > jobs * JOB_BYTES as f64 {
        key = "simulation.station_tails".into();
    }
    let replication_bytes = (jobs * JOB_BYTES as f64).min(u64::MAX as f64 / 2.0) as u64 + fixed;
    // A trace is kept per replication until the run ends.
    let trace = trace_bytes(config, spec.stations.len());
    let bytes = replication_bytes
        .saturating_mul(u64::from(parallel))
        .saturating_add(trace.saturating_mul(u64::from(replications)));
    // Every replication's result is kept until the run ends.
    let results = result.saturating_mul(u64::from(replications));
    let bytes = bytes.saturating_add(results);
    if results > replication_bytes.saturating_mul(u64::from(parallel)) {
        key = "simulation.replications".into();
    }

    // Events: only job-counted phases give a job count. A replication
    // completes its jobs across the classes, so the cheapest class per job
    // gives the lower bound.
    let cheapest = events_per_job.iter().copied().fold(f64::INFINITY, f64::min);
    // Phases measured in simulated time count the arrival events of the
    // open classes at their fixed rates (see `timed_events_per_s`).
    let per_s = timed_events_per_s(network, config, &events_per_job);
    let jobs = |n: f64| cheapest.is_finite().then_some(n * cheapest);
    let timed = |t: f64| (per_s > 0.0).then_some(t * per_s);
    let warm = match config.effective_warmup() {
        Warmup::Jobs(n) => jobs(n as f64),
        // MSER-5 counts its stop from time zero: no events of its own.
        Warmup::None | Warmup::Mser5 => Some(0.0),
        Warmup::Time(w) => timed(w),
        Warmup::Fraction(_) => None,
    };
    let stop = match config.stop {
        Stop::Jobs(n) => jobs(n as f64),
        Stop::Time(t) => timed(t),
    };
    let (replication_events, events_key) = match (warm, stop) {
        (Some(w), Some(s)) => {
            let k = if w > s {
                "simulation.warmup"
            } else {
                "simulation.stop"
            };
            (Some(w + s), k)
        }
        (None, Some(s)) => (Some(s), "simulation.stop"),
        (Some(w), None) if w > 0.0 => (Some(w), "simulation.warmup"),
        _ => (None, "simulation.stop"),
    };
    let events = replication_events.map(|e| e * f64::from(replications));
    let events_key = match (replication_events, events) {
        (Some(r), Some(_)) if r < 1e12 && replications > 1000 => "simulation.replications",
        _ => events_key,
    };
    Estimate {
        replication_bytes,
        parallel,
        bytes,
        memory_key: key,
        replication_events,
        events,
        events_key: events_key.into(),
        threads,
    }
}

/// Events per simulated second at least: each open class whose arrival
/// rate no schedule changes has an arrival event per job (dropped or not),
/// and where no station drops jobs, every job's own events
/// (`events_per_job[c]`). Closed classes count none (their throughput has
/// no lower bound from the spec alone), so this stays a lower bound.
fn timed_events_per_s(network: &Network, config: &RunConfig, events_per_job: &[f64]) -> f64 {
    let spec = network.spec();
    let drops = spec
        .capacity
        .iter()
        .flatten()
        .any(|c| matches!(c.when_full, crate::network::WhenFull::Drop));
    spec.classes
        .iter()
        .enumerate()
        .filter(|(c, _)| !config.schedule.iter().any(|s| s.class == *c))
        .map(|(c, class)| match &class.workload {
            Workload::Open { interarrival } => {
                let rate = 1.0 / interarrival.mean();
                let per_job = if drops {
                    1.0
                } else {
                    events_per_job[c].max(1.0)
                };
                if rate.is_finite() {
                    rate * per_job
                } else {
                    0.0
                }
            }
            Workload::Closed { .. } => 0.0,
        })
        .sum()
}

/// Arrival events per completed job of open class `c` beyond the job's
/// own, when a station on its way drops arrivals: the class completes at
/// most that station's peak rate over its visits (`servers / mean service`
/// of a fixed-speed queue), so an arrival rate above it spends
/// `rate / peak - 1` dropped arrivals per completion at least.
fn dropped_per_job(network: &Network, config: &RunConfig, c: usize, visits: Option<&[f64]>) -> f64 {
    let spec = network.spec();
    let Workload::Open { interarrival } = &spec.classes[c].workload else {
        return 0.0;
    };
    let (Some(visits), true) = (visits, config.schedule.iter().all(|s| s.class != c)) else {
        return 0.0;
    };
    let rate = 1.0 / interarrival.mean();
    let peak = spec
        .stations
        .iter()
        .enumerate()
        .filter(|&(s, st)| {
            st.speed.is_none()
                && visits.get(s).is_some_and(|&v| v > 0.0)
                && spec
                    .capacity
                    .get(s)
                    .copied()
                    .flatten()
                    .is_some_and(|cap| matches!(cap.when_full, crate::network::WhenFull::Drop))
        })
        .filter_map(|(s, st)| {
            let (servers, _) = st.kind.as_queue()?;
            let d = st.service[c].as_ref().filter(|d| d.mean() > 0.0)?;
            Some(f64::from(servers) / d.mean() / visits[s])
        })
        .fold(f64::INFINITY, f64::min);
    if rate.is_finite() && peak.is_finite() && rate > peak {
        rate / peak - 1.0
    } else {
        0.0
    }
}

/// Most stations a sub-job's routing rows may reach for
/// [`sub_job_row_visits`] to solve its visits (a dense solve, cubic in
/// them); beyond it they are not counted, which keeps the count a lower
/// bound.
const SUB_JOB_STATIONS: usize = 200;

/// The mean visits with their own event that one sub-job of fork `f`
/// (class `c`) makes after its first station by following its class's
/// routing rows until it is routed to the join (fixed sub-job routes are
/// counted by the caller): the traffic equations over the stations its
/// rows reach from each target, solved exactly. A sub-job that loops
/// (a cpu and a latch until it leaves with probability 1/1600) makes
/// thousands of visits, each an event.
fn sub_job_row_visits(
    spec: &crate::network::NetworkSpec,
    c: usize,
    f: &crate::network::ForkSpec,
    own_event: &dyn Fn(usize) -> bool,
) -> f64 {
    use crate::network::{Routing, Target};
    let Routing::Probabilistic { from, .. } = &spec.classes[c].routing else {
        return 0.0;
    };
    let n = spec.stations.len();
    let weight: f64 = f.targets.iter().map(|t| t.1).sum();
    if weight.is_nan() || weight <= 0.0 {
        return 0.0;
    }
    let row_targets = |s: usize| {
        from.get(s)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(move |&(target, p)| match target {
                Target::Station(to) | Target::Switch { station: to, .. }
                    if to != f.join && to < n =>
                {
                    Some((to, p))
                }
                _ => None,
            })
    };
    let mut total = 0.0;
    for (k, &(t, w)) in f.targets.iter().enumerate() {
        if f.routes.get(k).is_some_and(|r| !r.is_empty()) || t >= n {
            continue;
        }
        // The stations the rows reach from t.
        let mut reach = vec![t];
        let mut at = vec![usize::MAX; n];
        at[t] = 0;
        let mut i = 0;
        while i < reach.len() && reach.len() <= SUB_JOB_STATIONS {
            for (to, _) in row_targets(reach[i]) {
                if at[to] == usize::MAX {
                    at[to] = reach.len();
                    reach.push(to);
                }
            }
            i += 1;
        }
        let r = reach.len();
        if r > SUB_JOB_STATIONS {
            continue;
        }
        // x = e_t + P^T x, i.e. (I - P^T) x = e_t, by Gaussian elimination.
        let mut a = vec![vec![0.0f64; r + 1]; r];
        for (row, &s) in reach.iter().enumerate() {
            a[row][row] += 1.0;
            for (to, p) in row_targets(s) {
                a[at[to]][row] -= p;
            }
        }
        a[0][r] = 1.0;
        let mut solved = true;
        for col in 0..r {
            let Some(piv) = (col..r).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))
            else {
                solved = false;
                break;
            };
            if a[piv][col].abs() < 1e-12 {
                solved = false;
                break;
            }
            a.swap(col, piv);
            let pivot = a[col].clone();
            for (row, line) in a.iter_mut().enumerate() {
                let m = line[col] / pivot[col];
                if row != col && m != 0.0 {
                    for (x, p) in line[col..].iter_mut().zip(&pivot[col..]) {
                        *x -= m * p;
                    }
                }
            }
        }
        if !solved {
            continue;
        }
        let visits: f64 = (0..r)
            .filter(|&row| own_event(reach[row]))
            .map(|row| a[row][r] / a[row][row])
            .sum::<f64>()
            - if own_event(t) { 1.0 } else { 0.0 };
        if visits.is_finite() && visits > 0.0 {
            total += w / weight * visits;
        }
    }
    total
}

/// Bytes of one replication's state besides its jobs (classes, stations,
/// station tails), of its kept result, and the part of both that the
/// per-class percentiles take.
fn state_bytes(network: &Network, config: &RunConfig) -> (u64, u64, u64) {
    let spec = network.spec();
    let (classes, stations) = (spec.classes.len() as u64, spec.stations.len() as u64);
    let tails = if config.station_tails { TAIL_BYTES } else { 0 };
    let class_tails = class_tail_pairs(network, config) * CLASS_TAIL_BYTES;
    let state = (classes + 1) * CLASS_BYTES + stations * (STATION_BYTES + tails) + class_tails;
    let result =
        (classes + 1) * RESULT_HIST_BYTES + stations * (RESULT_STATION_BYTES + tails) + class_tails;
    (state, result, class_tails)
}

/// The (class, station) pairs that keep a class's percentiles at a
/// station: with `station_tails` in a multi-class model, each class at
/// each queue, delay or latch it can reach (the kinds that can keep
/// per-class figures; an upper bound, as a latch with mechanisms keeps
/// none).
pub fn class_tail_pairs(network: &Network, config: &RunConfig) -> u64 {
    let spec = network.spec();
    if !config.station_tails || spec.classes.len() < 2 {
        return 0;
    }
    let reached = spec.class_stations();
    let pairs = reached.iter().map(|r| {
        (spec.stations.iter().zip(r))
            .filter(|(st, r)| **r && st.kind.takes_speed_curve())
            .count() as u64
    });
    pairs.sum()
}

/// Bytes a trace of `stations` stations may hold per replication under
/// `config` (at most `max_intervals` per phase, fewer when a timed run
/// needs fewer), for the memory estimate.
pub fn trace_bytes(config: &RunConfig, stations: usize) -> u64 {
    let Some(plan) = config.trace else { return 0 };
    let per = (stations * std::mem::size_of::<crate::trace::TraceStation>()
        + std::mem::size_of::<crate::trace::TraceInterval>()) as f64;
    let cap = 2.0 * f64::from(plan.max_intervals);
    let needed = match (config.effective_warmup(), config.stop) {
        (Warmup::Time(w), Stop::Time(t)) => (w + t) / plan.interval_s + 3.0,
        (Warmup::None, Stop::Time(t)) => t / plan.interval_s + 2.0,
        _ => cap,
    };
    (needed.min(cap) * per).min(u64::MAX as f64 / 4.0) as u64
}

/// `bytes` in KiB, MiB, GiB or TiB with three significant figures.
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.3} {}", units[u])
    }
}

/// Seconds as seconds, minutes, hours or days.
pub fn human_duration(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else if seconds < 7200.0 {
        format!("{:.0} minutes", seconds / 60.0)
    } else if seconds < 172_800.0 {
        format!("{:.1} hours", seconds / 3600.0)
    } else {
        format!("{:.1} days", seconds / 86400.0)
    }
}
