//! Two operating points: run a model from both ends and compare.
//!
//! A speed curve that falls faster than the arrival rate of a closed
//! workload rises can give the network two stable states, fast and
//! collapsed at the slow station, and a run stays in the one it starts in.
//! [`check`] runs the model again from the other end (all jobs at the
//! station whose speed falls the most when it started with all jobs
//! thinking, all jobs thinking when it started at a station) and calls the
//! model bistable when the two system throughputs disagree beyond the sum
//! of their 95% half-widths.

use crate::config::RunConfig;
use crate::control::Control;
use crate::error::RunError;
use crate::network::{InitialState, Network, StationId, Workload};
use crate::results::{Estimate, RunResults};
use std::sync::Arc;

/// A speed that drops below this share of its peak at full population
/// makes a station a collapse candidate.
const COLLAPSE_RATIO: f64 = 0.95;

/// The outcome of the two-ended check.
#[derive(Clone, Debug, PartialEq)]
pub struct Bistability {
    /// The station of the collapsed end.
    pub station: String,
    /// System throughput starting with every closed job thinking.
    pub thinking: Estimate,
    /// System throughput starting with every closed job at `station`.
    pub collapsed: Estimate,
    /// True when the two disagree beyond their confidence intervals.
    pub bistable: bool,
}

impl Bistability {
    /// One line for people: the verdict with both throughputs.
    pub fn describe(&self) -> String {
        let (a, b, s) = (self.thinking, self.collapsed, &self.station);
        if self.bistable {
            format!(
                "the model is bistable: starting with all jobs thinking gives {:.4} ± {:.4} /s, starting with all jobs at {s} gives {:.4} ± {:.4} /s; the network stays in the state it starts in (metastable collapse), so neither figure alone is the answer (set simulation.initial to choose, or --no-bistability-check to skip this check)",
                a.mean, a.ci95, b.mean, b.ci95
            )
        } else {
            format!(
                "bistability check passed: all jobs thinking gives {:.4} ± {:.4} /s, all jobs at {s} gives {:.4} ± {:.4} /s",
                a.mean, a.ci95, b.mean, b.ci95
            )
        }
    }
}

/// The station whose speed curve falls furthest below its peak at the full
/// closed population, when some station's speed falls by more than 5%
/// and there are at least two closed jobs.
pub fn collapsing_station(network: &Network) -> Option<StationId> {
    let spec = network.spec();
    let closed_jobs: u32 = spec
        .classes
        .iter()
        .map(|c| match c.workload {
            Workload::Closed { population, .. } => population,
            Workload::Open { .. } => 0,
        })
        .fold(0, u32::saturating_add);
    if closed_jobs < 2 {
        return None;
    }
    let mut best: Option<(usize, f64)> = None;
    for (i, st) in spec.stations.iter().enumerate() {
        let Some(speed) = &st.speed else { continue };
        // The peak of a table or USL curve lies at small n; scanning the
        // first 100,000 populations bounds the cost for huge ones.
        let peak = (1..=closed_jobs.min(100_000))
            .map(|n| speed.rate(f64::from(n)))
            .fold(0.0, f64::max);
        let drop = speed.rate(f64::from(closed_jobs)) / peak;
        if drop < COLLAPSE_RATIO && best.is_none_or(|(_, d)| drop < d) {
            best = Some((i, drop));
        }
    }
    best.map(|(i, _)| i)
}

/// The network started from the other end, and the collapse station: all
/// jobs at the collapsing station when `network` starts with them
/// thinking, all thinking when it starts at a station. `None` when the
/// model has no collapse candidate (the check does not apply).
pub fn other_end(network: &Network) -> Option<(Network, StationId)> {
    let mut spec = network.spec().clone();
    let station = match spec.initial {
        // A placed start is neither end: the check does not apply.
        InitialState::Placed(_) => return None,
        InitialState::Thinking => {
            let s = collapsing_station(network)?;
            spec.initial = InitialState::AtStation(s);
            s
        }
        InitialState::AtStation(s) => {
            // Only models that can collapse have two ends to compare.
            collapsing_station(network)?;
            spec.initial = InitialState::Thinking;
            s
        }
    };
    network.rebuilt(spec).ok().map(|n| (n, station))
}

/// Compares `first` (a run of `network` under `config`) with a run from
/// the other end; `Ok(None)` when the check does not apply.
pub fn check(
    network: &Network,
    config: &RunConfig,
    first: &RunResults,
    control: Option<&Arc<Control>>,
) -> Result<Option<Bistability>, RunError> {
    let Some((other, station)) = other_end(network) else {
        return Ok(None);
    };
    let second = match control {
        Some(c) => crate::run::run_with(&other, config, c)?,
        None => crate::run::run(&other, config)?,
    };
    Ok(Some(compare(network, station, first, &second)))
}

/// The verdict from two runs of the same model from its two ends (in
/// either order: the initial state of `network` tells which is which).
pub fn compare(
    network: &Network,
    station: StationId,
    first: &RunResults,
    second: &RunResults,
) -> Bistability {
    let (a, b) = (
        first.system.throughput_per_s,
        second.system.throughput_per_s,
    );
    let (thinking, collapsed) = match network.spec().initial {
        InitialState::Thinking | InitialState::Placed(_) => (a, b),
        InitialState::AtStation(_) => (b, a),
    };
    Bistability {
        station: network.spec().stations[station].name.clone(),
        thinking,
        collapsed,
        bistable: (a.mean - b.mean).abs() > a.ci95 + b.ci95,
    }
}
