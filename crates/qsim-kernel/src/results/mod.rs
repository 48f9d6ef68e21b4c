//! Results: per replication raw figures, and the summary across replications
//! with 95% confidence intervals. Plain structs that serialize at the edge.

use crate::network::StationKind;
use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A mean across replications with the half-width of its 95% confidence
/// interval (Student t with R−1 degrees of freedom; with one replication,
/// from segment means, or NaN: unknown, never a zero-width interval).
///
/// Serialized as `{"mean": x, "ci95": h}`; a value that is not finite (no
/// interval with one replication of a percentile, a failed derived metric) is
/// written as `null` and read back as NaN, so JSON stays valid and says
/// "unknown" instead of printing a number.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Estimate {
    /// Mean across replications.
    pub mean: f64,
    /// Half-width of the 95% confidence interval.
    pub ci95: f64,
}

impl Estimate {
    /// An estimate that could not be computed (both parts NaN).
    pub const UNKNOWN: Estimate = Estimate {
        mean: f64::NAN,
        ci95: f64::NAN,
    };
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl Serialize for Estimate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Estimate", 2)?;
        st.serialize_field("mean", &finite(self.mean))?;
        st.serialize_field("ci95", &finite(self.ci95))?;
        st.end()
    }
}

impl<'de> Deserialize<'de> for Estimate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Estimate, D::Error> {
        #[derive(Deserialize)]
        struct Repr {
            mean: Option<f64>,
            ci95: Option<f64>,
        }
        let r = Repr::deserialize(d)?;
        Ok(Estimate {
            mean: r.mean.unwrap_or(f64::NAN),
            ci95: r.ci95.unwrap_or(f64::NAN),
        })
    }
}

/// A station's kind without its parameters, as results report it
/// (serialized lowercase: `"queue"`, `"latch"`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KindTag {
    /// Infinite servers, no queueing.
    #[default]
    Delay,
    /// Servers with a discipline.
    Queue,
    /// Mutual exclusion.
    Latch,
    /// Group service (group commit).
    Batch,
    /// A serial channel with a round-trip time.
    Link,
    /// Splits a job into sub-jobs.
    Fork,
    /// Waits for a job's sub-jobs.
    Join,
}

impl KindTag {
    /// The kind's name, as in TOML `kind = "..."` and in JSON and tables.
    pub fn name(self) -> &'static str {
        match self {
            KindTag::Delay => "delay",
            KindTag::Queue => "queue",
            KindTag::Latch => "latch",
            KindTag::Batch => "batch",
            KindTag::Link => "link",
            KindTag::Fork => "fork",
            KindTag::Join => "join",
        }
    }

    /// Whether a station of this kind can limit throughput: delays never
    /// queue, forks and joins only route.
    pub fn can_saturate(self) -> bool {
        match self {
            KindTag::Queue | KindTag::Latch | KindTag::Batch | KindTag::Link => true,
            KindTag::Delay | KindTag::Fork | KindTag::Join => false,
        }
    }

    /// Whether it serves jobs in groups (a batch, or a link's round trips),
    /// so that being busy does not cap its throughput.
    pub fn serves_groups(self) -> bool {
        match self {
            KindTag::Batch | KindTag::Link => true,
            KindTag::Delay | KindTag::Queue | KindTag::Latch | KindTag::Fork | KindTag::Join => {
                false
            }
        }
    }
}

impl std::fmt::Display for KindTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl From<&StationKind> for KindTag {
    fn from(k: &StationKind) -> KindTag {
        match k {
            StationKind::Delay => KindTag::Delay,
            StationKind::Queue { .. } => KindTag::Queue,
            StationKind::Latch(_) => KindTag::Latch,
            StationKind::Batch(_) => KindTag::Batch,
            StationKind::Link(_) => KindTag::Link,
            StationKind::Fork(_) => KindTag::Fork,
            StationKind::Join(_) => KindTag::Join,
        }
    }
}

/// Response-time mean and percentiles, in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct ResponseEstimate {
    /// Mean response time.
    pub mean: f64,
    /// CI half-width of the mean.
    pub ci95: f64,
    /// Median.
    pub p50: Estimate,
    /// 90th percentile.
    pub p90: Estimate,
    /// 95th percentile.
    pub p95: Estimate,
    /// 99th percentile.
    pub p99: Estimate,
    /// 99.9th percentile.
    pub p999: Estimate,
}

/// Whole-network figures.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SystemResults {
    /// Completed interactions per second.
    pub throughput_per_s: Estimate,
    /// Interaction response time (from leaving think / arriving to exit).
    pub response_time_s: ResponseEstimate,
    /// Fraction of interactions slower than the SLA, when one is set.
    pub sla_violation: Option<Estimate>,
}

/// Figures of one job class.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ClassResults {
    /// Class name.
    pub name: String,
    /// Completed interactions per second.
    pub throughput_per_s: Estimate,
    /// Interaction response time.
    pub response_time_s: ResponseEstimate,
    /// Fraction of the class's interactions slower than its SLA (its own
    /// `sla_s`, else the run's), when one applies.
    pub sla_violation: Option<Estimate>,
    /// Client figures (classes with a client).
    pub client: Option<ClientResults>,
}

impl ClassResults {
    /// The figures of a class that completes no interaction of its own (a
    /// class jobs only switch into): every one NaN (`null` in JSON, `n/a`
    /// in tables), none 0.
    pub fn undefined(name: String) -> ClassResults {
        let none = Estimate {
            mean: f64::NAN,
            ci95: f64::NAN,
        };
        ClassResults {
            name,
            throughput_per_s: none,
            response_time_s: ResponseEstimate {
                mean: f64::NAN,
                ci95: f64::NAN,
                p50: none,
                p90: none,
                p95: none,
                p99: none,
                p999: none,
            },
            sla_violation: None,
            client: None,
        }
    }
}

/// Summary of a run across replications.
///
/// Serialized with every metric under its name in [`METRICS`]: `system` is an
/// object of metrics; `stations`, `classes` and `regions` are objects keyed
/// by name (in spec order), each holding its metrics (and a station's
/// `kind`). A metric that does not apply (batch figures of a queue, P(R >
/// SLA) without an SLA) is absent.
#[derive(Clone, Debug, PartialEq, Serialize, Default)]
pub struct RunResults {
    /// Whole network.
    pub system: SystemResults,
    /// One entry per station, in spec order.
    #[serde(serialize_with = "by_name")]
    pub stations: Vec<StationResults>,
    /// One entry per class, in spec order.
    #[serde(serialize_with = "by_name")]
    pub classes: Vec<ClassResults>,
    /// One entry per region, in spec order.
    #[serde(serialize_with = "by_name")]
    pub regions: Vec<RegionResults>,
    /// Replications that were run.
    pub replications: u32,
    /// Events processed over all replications.
    pub events: u64,
    /// Simulated seconds after warm-up, summed over replications.
    pub measured_time_s: f64,
    /// Mean simulated seconds discarded as warm-up per replication.
    pub warmup_time_s: f64,
    /// The raw figures of every replication, in index order (for derived
    /// metrics and for sweeps that combine replications themselves).
    #[serde(skip)]
    pub replication_results: Vec<ReplicationResult>,
    /// Why some figures cannot be taken at face value (not in steady
    /// state, no interval, precision not reached), each with a remedy.
    #[serde(skip)]
    pub warnings: Vec<RunWarning>,
}

/// Results looked up by name, as the model names its parts.
impl RunResults {
    /// The station called `name` (a group member is `NAME[k]`), if any.
    pub fn station(&self, name: &str) -> Option<&StationResults> {
        self.stations.iter().find(|s| s.name == name)
    }

    /// The class called `name`, if any.
    pub fn class(&self, name: &str) -> Option<&ClassResults> {
        self.classes.iter().find(|c| c.name == name)
    }

    /// The region called `name`, if any.
    pub fn region(&self, name: &str) -> Option<&RegionResults> {
        self.regions.iter().find(|r| r.name == name)
    }
}

/// Raw figures of one replication (after warm-up).
#[derive(Clone, Debug, PartialEq, Serialize, Default)]
pub struct ReplicationResult {
    /// Index of the replication (decides its random streams).
    pub index: u32,
    /// Events processed, warm-up included.
    pub events: u64,
    /// Measured simulated time, seconds.
    pub measured_time_s: f64,
    /// Discarded warm-up time, seconds.
    pub warmup_time_s: f64,
    /// System throughput, mean response and percentiles (p50, p90, p95, p99, p999).
    pub system: ReplicationClass,
    /// Per class, in spec order.
    pub classes: Vec<ReplicationClass>,
    /// Per station, in spec order.
    pub stations: Vec<ReplicationStation>,
    /// Per region, in spec order.
    pub regions: Vec<ReplicationRegion>,
    /// Cumulative figures of the measured part at the end of each of its
    /// [`crate::SEGMENTS`] equal parts (by completions for a jobs stop, by
    /// time for a timed stop), the last being the whole; their own
    /// checkpoints are empty and percentiles 0. Segment b's figures are the
    /// difference of checkpoints b−1 and b; they give segment-means
    /// intervals and steady-state checks within one replication. Fewer
    /// than [`crate::SEGMENTS`] when read mid-run.
    #[serde(skip)]
    pub checkpoints: Vec<ReplicationResult>,
    /// The replication's trace, when the run was traced
    /// ([`crate::RunConfig::trace`]).
    #[serde(skip)]
    pub trace: Option<std::sync::Arc<crate::trace::Trace>>,
    /// Where the closed jobs were at the end (thinking jobs not listed):
    /// a run started from [`crate::InitialState::Placed`] with it
    /// continues from this state.
    #[serde(skip)]
    pub final_state: Vec<crate::network::Placement>,
}

/// One replication's figures for the system or one class.
#[derive(Clone, Debug, PartialEq, Serialize, Default)]
pub struct ReplicationClass {
    /// Completions counted.
    pub completions: u64,
    /// Completions per second.
    pub throughput_per_s: f64,
    /// Mean response time, seconds.
    pub response_time_s: f64,
    /// p50, p90, p95, p99, p99.9 of the response time, seconds.
    pub percentiles_s: [f64; 5],
    /// Fraction of responses over the SLA (0 without one).
    pub sla_violation: f64,
    /// Client figures (classes with a client).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<ReplicationClient>,
    /// The response times recorded, which [`crate::summarize`] pools
    /// across replications for the percentiles (absent in checkpoints).
    #[serde(skip)]
    pub(crate) histogram: Option<std::sync::Arc<crate::hist::Histogram>>,
}

/// One replication's per-station distributions (`station_tails`).
#[derive(Clone, Debug, PartialEq, Serialize, Default)]
pub struct ReplicationTails {
    /// p50, p90, p99 of the time at the station, seconds (0 in checkpoints).
    pub response_time_s: [f64; 3],
    /// p50, p90, p99 of the wait before service, seconds (0 in checkpoints).
    pub wait_time_s: [f64; 3],
    /// Fraction of departed jobs that waited before service.
    pub wait_probability: f64,
    /// Time-average variance of the number present.
    pub jobs_variance: f64,
    /// Fraction of time with at least `jobs_tail_k` jobs present (NaN when
    /// k is beyond the distribution's buckets).
    pub jobs_tail_probability: f64,
}

/// Per-station distributions across replications (`station_tails`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TailResults {
    /// Median time at the station.
    pub response_time_p50_s: Estimate,
    /// 90th percentile of the time at the station.
    pub response_time_p90_s: Estimate,
    /// 99th percentile of the time at the station.
    pub response_time_p99_s: Estimate,
    /// Median wait before service.
    pub wait_time_p50_s: Estimate,
    /// 90th percentile of the wait before service.
    pub wait_time_p90_s: Estimate,
    /// 99th percentile of the wait before service.
    pub wait_time_p99_s: Estimate,
    /// P(wait > 0): fraction of jobs that waited.
    pub wait_probability: Estimate,
    /// Variance of the number present (time average).
    pub jobs_variance: Estimate,
    /// P(n >= k), k = `jobs_tail_k`: fraction of time with at least k present.
    pub jobs_tail_probability: Estimate,
}

#[macro_use]
mod family;
pub(crate) use family::SummaryField;
mod metrics;
pub use metrics::*;
mod overload;
pub use overload::*;
mod station;
pub use station::{ReplicationStation, StationResults};
pub(crate) use station::{StationFlags, StationWeight};
mod station_class;
pub use station_class::{
    ClassTailResults, ReplicationClassTails, ReplicationStationClass, StationClassResults,
};
pub(crate) use station_class::{StationClassFlags, StationClassWeight};
mod region;
pub(crate) use region::{RegionFlags, RegionWeight};
pub use region::{RegionResults, ReplicationRegion};

/// Writes the metrics of `scope` that apply to one item.
fn put_metrics<M: SerializeMap>(
    m: &mut M,
    scope: MetricScope,
    read: impl Fn(&Metric) -> Option<Estimate>,
) -> Result<(), M::Error> {
    for metric in metrics(scope) {
        if let Some(e) = read(metric) {
            m.serialize_entry(metric.name, &e)?;
        }
    }
    Ok(())
}

impl Serialize for SystemResults {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        put_metrics(&mut m, MetricScope::System, |metric| match metric.read {
            Read::Flow { summary, .. } => {
                Some(summary(&self.throughput_per_s, &self.response_time_s))
            }
            Read::Sla => self.sla_violation,
            _ => None,
        })?;
        m.end()
    }
}

impl Serialize for ClassResults {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        put_metrics(&mut m, MetricScope::Class, |metric| match metric.read {
            Read::Flow { summary, .. } => {
                Some(summary(&self.throughput_per_s, &self.response_time_s))
            }
            Read::Sla => self.sla_violation,
            Read::Class { summary, .. } => summary(self),
            _ => None,
        })?;
        m.end()
    }
}

impl Serialize for StationResults {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("kind", &self.kind)?;
        put_metrics(&mut m, MetricScope::Station, |metric| match metric.read {
            Read::Station { summary, .. } => summary(self),
            _ => None,
        })?;
        if !self.classes.is_empty() {
            m.serialize_entry("classes", &ByName(&self.classes))?;
        }
        m.end()
    }
}

impl Serialize for StationClassResults {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        put_metrics(&mut m, MetricScope::StationClass, |metric| {
            match metric.read {
                Read::StationClass { summary, .. } => summary(self),
                _ => None,
            }
        })?;
        m.end()
    }
}

/// A list that serializes as an object keyed by each item's name.
struct ByName<'a, T>(&'a [T]);

impl<T: Named + Serialize> Serialize for ByName<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        by_name(self.0, s)
    }
}

impl Serialize for RegionResults {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        put_metrics(&mut m, MetricScope::Region, |metric| match metric.read {
            Read::Region { summary, .. } => summary(self),
            _ => None,
        })?;
        m.end()
    }
}

/// Something listed by name in results.
pub trait Named {
    /// Its name.
    fn name(&self) -> &str;
}

impl Named for StationResults {
    fn name(&self) -> &str {
        &self.name
    }
}

impl Named for StationClassResults {
    fn name(&self) -> &str {
        &self.name
    }
}

impl Named for ClassResults {
    fn name(&self) -> &str {
        &self.name
    }
}

impl Named for RegionResults {
    fn name(&self) -> &str {
        &self.name
    }
}

/// Serializes a list as an object keyed by each item's name, in list order.
fn by_name<T: Named + Serialize, S: Serializer>(items: &[T], s: S) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(Some(items.len()))?;
    for item in items {
        m.serialize_entry(item.name(), item)?;
    }
    m.end()
}

/// The two-sided 97.5% quantile of Student's t with `df` degrees of freedom.
pub fn t975(df: u32) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df as usize - 1],
        // Cornish–Fisher style expansion around the normal quantile.
        _ => {
            let z = 1.959_963_984_540_054;
            let d = f64::from(df);
            z + (z * z * z + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

/// Mean and 95% CI half-width of independent observations.
pub fn estimate(xs: impl IntoIterator<Item = f64>) -> Estimate {
    let xs: Vec<f64> = xs.into_iter().collect();
    let n = xs.len();
    if n == 0 {
        return Estimate::default();
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        // One observation says nothing about its spread.
        return Estimate {
            mean,
            ci95: f64::NAN,
        };
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    Estimate {
        mean,
        ci95: t975((n - 1) as u32) * (var / n as f64).sqrt(),
    }
}

/// Why a figure of a run cannot be taken at face value; the message says
/// what to do about it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum RunWarning {
    /// A system figure differs between the first and the second half of
    /// the measured window by more than its noise allows: the run measured
    /// a transient, not the steady state.
    NotSteady {
        /// The figure (`throughput_per_s` or `response_time_s`).
        metric: &'static str,
        /// Its mean over the first half of the measured window.
        first_half: f64,
        /// Its mean over the second half.
        second_half: f64,
    },
    /// The load changes during the run (a schedule): the whole-run figures
    /// average over its phases, so the check for a steady state does not
    /// apply; the per-phase figures ([`crate::recovery::phases`]) describe
    /// each part.
    LoadChanges {
        /// The first change, absolute seconds.
        start_s: f64,
        /// The last change (a ramp's end), absolute seconds.
        end_s: f64,
        /// What follows a schedule: the load, a station's capacity, or both.
        changes: &'static str,
    },
    /// One replication: the segment means of these figures stay correlated
    /// after merging, so they are shown without an interval.
    SegmentsCorrelated {
        /// The figures, e.g. `system.throughput_per_s`.
        metrics: Vec<String>,
    },
    /// Percentiles some replication has too few responses for (see
    /// [`crate::MIN_TAIL_RESPONSES`]): reported as unknown.
    TailTooShort {
        /// What they are percentiles of, e.g. `system response time`.
        scope: String,
        /// The percentiles withheld, e.g. `p99`, `p99.9`.
        labels: Vec<String>,
        /// The fewest responses of a replication.
        fewest: u64,
        /// The responses per replication the lowest of them needs.
        needed: u64,
    },
    /// The precision target was not reached before `max_replications`.
    PrecisionNotReached {
        /// The target relative half-width.
        target: f64,
        /// The worst relative half-width reached (throughput or response).
        reached: f64,
        /// Replications run.
        replications: u32,
    },
}

impl fmt::Display for RunWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunWarning::NotSteady {
                metric,
                first_half,
                second_half,
            } => {
                let change = 100.0 * (second_half - first_half) / first_half.abs();
                write!(
                    f,
                    "not in steady state: system {metric} went from {} in the first half of the measured window to {} in the second ({change:+.1}%), so the figures describe a transient, not the long-run behaviour; run longer (--jobs or --time) or discard more with an explicit warmup",
                    sig(*first_half),
                    sig(*second_half)
                )
            }
            RunWarning::LoadChanges {
                start_s,
                end_s,
                changes,
            } => {
                let when = if end_s > start_s {
                    format!("from {} s to {} s", sig(*start_s), sig(*end_s))
                } else {
                    format!("at {} s", sig(*start_s))
                };
                write!(
                    f,
                    "{changes} during the run (its schedule, {when}): the whole-run figures average the phases before, during and after the change, which is not a steady state; read the per-phase figures"
                )
            }
            RunWarning::SegmentsCorrelated { metrics } => {
                // A large model can have hundreds: name a few, count the
                // rest (each shows n/a where it is printed).
                const NAMED: usize = 6;
                let list = if metrics.len() > NAMED + 2 {
                    format!(
                        "{} and {} more",
                        metrics[..NAMED].join(", "),
                        metrics.len() - NAMED
                    )
                } else {
                    metrics.join(", ")
                };
                write!(
                    f,
                    "one replication: the segment means of {list} are correlated, so no confidence interval is given for them (n/a); run longer or use --replications 2 or more"
                )
            }
            RunWarning::TailTooShort {
                scope,
                labels,
                fewest,
                needed,
            } => write!(
                f,
                "{scope} {}: n/a, a replication has only {fewest} responses, too few to put ~{} beyond {} (it needs {needed}); run longer (--jobs or --time) to get {}",
                labels.join(", "),
                crate::MIN_TAIL_RESPONSES,
                if labels.len() == 1 {
                    "it"
                } else {
                    "the lowest of them"
                },
                if labels.len() == 1 { "it" } else { "them" },
            ),
            RunWarning::PrecisionNotReached {
                target,
                reached,
                replications,
            } => write!(
                f,
                "precision target not reached: the relative 95% half-width is {reached:.4} after {replications} replications (the maximum), the target is {target}; raise max_replications or lengthen each replication"
            ),
        }
    }
}

/// Four significant digits, for messages.
fn sig(x: f64) -> String {
    crate::number::sig(x, 4)
}

#[cfg(test)]
mod tests;
