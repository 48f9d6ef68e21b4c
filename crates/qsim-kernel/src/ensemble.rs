//! The system over time across replications: per trace interval, the mean
//! over the replications of each figure with its 95% interval (Student's
//! t over the replications, which are independent), rather than one
//! replication's path.
//!
//! Replications share their interval boundaries when the run stops at a
//! time (every replication cuts the same grid, see [`crate::trace`]); a run
//! stopped by a count of jobs ends each replication at its own time, so the
//! ensemble keeps the intervals every replication has with the same
//! boundaries and says how many it left out ([`Ensemble::left_out`]).

use crate::results::{Estimate, estimate};
use crate::trace::Trace;

/// One interval's figures over the replications.
#[derive(Clone, Debug, PartialEq)]
pub struct EnsembleInterval {
    /// Start, absolute seconds.
    pub start_s: f64,
    /// End, absolute seconds.
    pub end_s: f64,
    /// True in the measured window, false in the warm-up.
    pub measured: bool,
    /// System throughput (interactions finished per second).
    pub throughput_per_s: Estimate,
    /// Mean response time of the interactions finished in the interval,
    /// over the replications in which some finished; `None` when none did.
    pub response_time_s: Option<Estimate>,
    /// Replications in which some interaction finished in the interval
    /// (those `response_time_s` is taken over).
    pub response_replications: u32,
    /// Per station, in spec order: time-average number present.
    pub mean_jobs: Vec<Estimate>,
    /// Per station: departures per second.
    pub station_throughput_per_s: Vec<Estimate>,
    /// Per station: busy fraction of its servers.
    pub utilization: Vec<Estimate>,
}

/// The ensemble of a run's traces.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ensemble {
    /// Replications averaged.
    pub replications: u32,
    /// The intervals every replication has, in time order.
    pub intervals: Vec<EnsembleInterval>,
    /// Intervals of some replication beyond the shared ones (a run stopped
    /// by a count of jobs), not in the ensemble.
    pub left_out: usize,
}

/// True when two interval boundaries are the same time (up to the rounding
/// of the grid's multiples).
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The ensemble of `traces` (one per replication).
pub fn ensemble(traces: &[&Trace]) -> Ensemble {
    let Some(first) = traces.first() else {
        return Ensemble::default();
    };
    let shared = (0..first.intervals.len())
        .take_while(|&i| {
            let r = &first.intervals[i];
            traces.iter().all(|t| {
                t.intervals
                    .get(i)
                    .is_some_and(|x| same(x.start_s, r.start_s) && same(x.end_s, r.end_s))
            })
        })
        .count();
    let longest = traces.iter().map(|t| t.intervals.len()).max().unwrap_or(0);
    let stations = first.intervals.first().map_or(0, |i| i.stations.len());
    let intervals = (0..shared)
        .map(|i| {
            let ivs: Vec<_> = traces.iter().map(|t| &t.intervals[i]).collect();
            let responses: Vec<f64> = ivs.iter().filter_map(|x| x.response_time_s()).collect();
            let per_station = |f: &dyn Fn(&crate::trace::TraceInterval, usize) -> f64| {
                (0..stations)
                    .map(|s| estimate(ivs.iter().map(|x| f(x, s))))
                    .collect::<Vec<_>>()
            };
            EnsembleInterval {
                start_s: ivs[0].start_s,
                end_s: ivs[0].end_s,
                measured: ivs[0].measured,
                throughput_per_s: estimate(ivs.iter().map(|x| x.throughput_per_s())),
                response_replications: responses.len() as u32,
                response_time_s: (!responses.is_empty()).then(|| estimate(responses)),
                mean_jobs: per_station(&|x, s| x.mean_jobs(s)),
                station_throughput_per_s: per_station(&|x, s| x.station_throughput_per_s(s)),
                utilization: per_station(&|x, s| x.utilization(s)),
            }
        })
        .collect();
    Ensemble {
        replications: traces.len() as u32,
        intervals,
        left_out: longest - shared,
    }
}
