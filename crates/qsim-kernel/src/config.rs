//! How to run a network: length, warm-up, replications, seeds.

use crate::error::RunError;
use serde::Serialize;

/// When one replication ends.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// After this many interactions complete after warm-up (system
    /// completions: a closed job back at think, an open job leaving).
    Jobs(u64),
    /// After this much simulated time after warm-up, in seconds.
    #[serde(rename = "time_s")]
    Time(f64),
}

/// What part of the start of each replication is discarded.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Warmup {
    /// Keep everything.
    None,
    /// Discard the first this-many completed interactions.
    Jobs(u64),
    /// Discard the first this-many seconds.
    #[serde(rename = "time_s")]
    Time(f64),
    /// Choose the truncation point with the MSER-5 rule on batch means of
    /// the system response time.
    Mser5,
    /// Discard this fraction of the stopping rule: of its jobs for
    /// [`Stop::Jobs`], of its seconds for [`Stop::Time`]. Resolved when the
    /// run starts (see [`RunConfig::effective_warmup`]), so a stop rule
    /// changed after loading (`--jobs`, `--time`) rescales the warm-up too.
    Fraction(f64),
}

/// The warm-up used when none is given: 10% of the stopping rule.
pub const DEFAULT_WARMUP: Warmup = Warmup::Fraction(0.1);

/// Stop adding replications when the relative 95% CI half-width of system
/// throughput and mean response time are both at most `relative_half_width`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Precision {
    /// Target half-width / mean, e.g. 0.01.
    pub relative_half_width: f64,
    /// Upper bound on replications.
    pub max_replications: u32,
}

/// Everything besides the network that decides a run's results.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunConfig {
    /// Root seed; every random stream derives from (seed, replication, stream id).
    pub seed: u64,
    /// Independent replications (at least 2 for a confidence interval).
    pub replications: u32,
    /// End of each replication.
    pub stop: Stop,
    /// Discarded start of each replication.
    pub warmup: Warmup,
    /// Optional target precision (adds replications beyond `replications`).
    pub precision: Option<Precision>,
    /// Response-time SLA in seconds: P(R > sla_s) is reported.
    pub sla_s: Option<f64>,
    /// Abort a replication as unstable when more jobs than this are present
    /// in the network at once (open workloads).
    pub max_jobs_present: u64,
    /// Abort a replication after this many events (guards endless runs).
    pub max_events: u64,
    /// Worker threads for replications; 0 means one per core. Never changes results.
    pub threads: usize,
    /// Per-station distributions: response and waiting-time percentiles,
    /// P(wait > 0), variance of the number present and P(n >= `jobs_tail_k`).
    /// Off by default: it records two histogram entries per departure and
    /// integrates the number present at every change.
    pub station_tails: bool,
    /// The k of P(n >= k) at each station (with `station_tails`).
    pub jobs_tail_k: u32,
    /// Response-time SLA per class, seconds, indexed by class (empty: none
    /// has its own): the class's P(R > SLA) is reported against its own SLA,
    /// or against `sla_s` when it has none.
    pub class_sla_s: Vec<Option<f64>>,
    /// Load that changes during the run (population or arrival-rate steps
    /// and ramps), one entry per scheduled class; see [`crate::schedule`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schedule: Vec<crate::schedule::ClassSchedule>,
    /// Capacity that changes during the run (a queue station's servers or
    /// speed over time), one entry per scheduled station; a trigger like a
    /// load schedule (phases, recovery). See
    /// [`crate::schedule::StationSchedule`].
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub station_schedule: Vec<crate::schedule::StationSchedule>,
    /// Record per-interval figures (a trace) in each replication; see
    /// [`crate::trace`]. Never changes the run's other figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::trace::TracePlan>,
}

impl Default for RunConfig {
    fn default() -> RunConfig {
        RunConfig {
            seed: 1,
            replications: 5,
            stop: Stop::Jobs(100_000),
            warmup: DEFAULT_WARMUP,
            precision: None,
            sla_s: None,
            max_jobs_present: 10_000_000,
            max_events: 20_000_000_000,
            threads: 0,
            station_tails: false,
            jobs_tail_k: 10,
            class_sla_s: Vec::new(),
            schedule: Vec::new(),
            station_schedule: Vec::new(),
            trace: None,
        }
    }
}

impl RunConfig {
    /// True when the load or a station's capacity changes during the run
    /// (a trigger: the run is a transient by design).
    pub fn has_schedule(&self) -> bool {
        !self.schedule.is_empty() || !self.station_schedule.is_empty()
    }

    /// The warm-up this configuration runs with: a [`Warmup::Fraction`]
    /// resolved against the stopping rule (jobs rounded to the nearest
    /// whole job), any other warm-up as given.
    pub fn effective_warmup(&self) -> Warmup {
        match (self.warmup, self.stop) {
            (Warmup::Fraction(f), Stop::Jobs(n)) => Warmup::Jobs((n as f64 * f).round() as u64),
            (Warmup::Fraction(f), Stop::Time(t)) => Warmup::Time(t * f),
            (w, _) => w,
        }
    }
}

/// Rejects configurations the engine cannot run.
pub(crate) fn check_config(config: &RunConfig) -> Result<(), RunError> {
    let bad = |m: String| Err(RunError::Config(m));
    if config.replications == 0 {
        return bad("replications must be at least 1, found 0".into());
    }
    match config.stop {
        Stop::Jobs(0) => return bad("stop.jobs must be at least 1, found 0".into()),
        Stop::Time(t) if !(t.is_finite() && t > 0.0) => {
            return bad(format!(
                "stop.time must be a positive finite number of seconds, found {t}"
            ));
        }
        Stop::Time(t) if t > crate::dist::MAX_CLOCK_S => {
            return bad(format!(
                "stop.time must be at most 1e12 s (the latest time an f64 clock resolves to 1e-4 s), found {t}"
            ));
        }
        _ => {}
    }
    if let Warmup::Time(t) = config.warmup
        && !(t.is_finite() && t >= 0.0)
    {
        return bad(format!(
            "warmup.time must be a finite number of seconds >= 0, found {t}"
        ));
    }
    if let Warmup::Fraction(f) = config.warmup
        && !(f.is_finite() && f >= 0.0)
    {
        return bad(format!(
            "warmup fraction must be a finite number >= 0, found {f}"
        ));
    }
    if let Warmup::Time(t) = config.warmup
        && t > crate::dist::MAX_CLOCK_S
    {
        return bad(format!(
            "warmup.time must be at most 1e12 s (the latest time an f64 clock resolves to 1e-4 s), found {t}"
        ));
    }
    if let Some(s) = config.sla_s
        && !(s.is_finite() && s >= 0.0)
    {
        return bad(format!(
            "sla_s must be a finite number of seconds >= 0, found {s}"
        ));
    }
    if let Some(s) = config
        .class_sla_s
        .iter()
        .flatten()
        .find(|s| !(s.is_finite() && **s >= 0.0))
    {
        return bad(format!(
            "a class's sla_s must be a finite number of seconds >= 0, found {s}"
        ));
    }
    if let Some(p) = config.precision
        && !(p.relative_half_width.is_finite() && p.relative_half_width > 0.0)
    {
        return bad(format!(
            "precision.relative_half_width must be positive, found {}",
            p.relative_half_width
        ));
    }
    check_trace_plan(config.trace.as_ref()).map_err(RunError::Config)?;
    Ok(())
}

/// Checks a plan (used by the run's configuration check).
fn check_trace_plan(plan: Option<&crate::trace::TracePlan>) -> Result<(), String> {
    let Some(p) = plan else { return Ok(()) };
    if !(p.interval_s.is_finite() && p.interval_s > 0.0) {
        return Err(format!(
            "trace interval must be a positive number of seconds, found {}",
            p.interval_s
        ));
    }
    if p.max_intervals < 2 {
        return Err(format!(
            "a trace keeps at least 2 intervals, found {}",
            p.max_intervals
        ));
    }
    Ok(())
}
