//! The two-ended (bistability) check of `qsim run`, point by point.
//!
//! A closed model whose speed curve falls can have two stable operating
//! points, and a run stays in the one it starts in. Where the check
//! applies (see [`qsim_kernel::bistable::other_end`]), each point runs a
//! second time from the other end, with the point's own configuration and
//! seed (derived from its grid index), so the verdict is the same at any
//! thread count or shard split and equals `qsim run --seed <seed>`'s.
//! Sweeps of models without a falling speed curve run nothing more and
//! write no extra columns.

use crate::record::{Point, PointBistability, PointRecord};
use qsim_kernel::bistable::{compare, other_end};
use qsim_kernel::{Control, Estimate, Network, RunConfig, RunError, RunResults, names};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Whether the check may apply somewhere in a sweep of this model: a closed
/// class and a station with a speed curve. Decides the extra CSV columns;
/// each point still asks [`other_end`] whether it applies there.
pub(crate) fn may_apply(network: &Network) -> bool {
    let spec = network.spec();
    spec.stations.iter().any(|s| s.speed.is_some())
        && spec
            .classes
            .iter()
            .any(|c| matches!(c.workload, qsim_kernel::Workload::Closed { .. }))
}

/// Runs `network` from its other end under `config` and compares with
/// `first`; `Ok(None)` when the check does not apply at this point.
/// Cancellation is returned as [`RunError::Cancelled`] so the point stays
/// unfinished (for `--resume`); any other failure is kept in the verdict.
pub(crate) fn check(
    network: &Network,
    config: &RunConfig,
    first: &RunResults,
    control: Option<&Arc<Control>>,
) -> Result<Option<PointBistability>, RunError> {
    let Some((other, station)) = other_end(network) else {
        return Ok(None);
    };
    let run = || match control {
        Some(c) => qsim_kernel::run_with(&other, config, c),
        None => qsim_kernel::run(&other, config),
    };
    // A panic is a failed check, as a panicking replication is a failed
    // point: the sweep goes on.
    let second = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(RunError::Cancelled)) => return Err(RunError::Cancelled),
        Ok(Err(e)) => Err(e.to_string()),
        Err(p) => Err(format!(
            "internal error: {}",
            p.downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into())
        )),
    };
    let name = network.spec().stations[station].name.clone();
    Ok(Some(match second {
        Ok(second) => {
            let v = compare(network, station, first, &second);
            PointBistability {
                station: name,
                bistable: Some(v.bistable),
                other_end_throughput_per_s: second.system.throughput_per_s,
                error: None,
            }
        }
        Err(e) => PointBistability {
            station: name,
            bistable: None,
            other_end_throughput_per_s: Estimate::UNKNOWN,
            error: Some(format!("the run from the other end failed: {e}")),
        },
    }))
}

/// Whether a record is a bistable point.
pub fn is_bistable(r: &PointRecord) -> bool {
    r.results
        .as_ref()
        .and_then(|m| m.bistability.as_ref())
        .is_some_and(|b| b.bistable == Some(true))
}

/// A run of consecutive bistable points along one curve of the load axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BistableRange {
    /// The values fixed along the curve (empty for a one-dimensional sweep).
    pub fixed: Point,
    /// The first bistable point of the run (lowest load).
    pub from: Point,
    /// The last bistable point of the run (highest load).
    pub to: Point,
    /// Bistable points in the run.
    pub points: usize,
    /// The station of the collapsed end.
    pub station: String,
}

/// One sentence on a figure of the knee analysis that sits on a bistable
/// point: which figure, and the other end's throughput.
pub(crate) fn figure_warning(figure: &str, r: &PointRecord) -> Option<String> {
    let b = r.results.as_ref()?.bistability.as_ref()?;
    if b.bistable != Some(true) {
        return None;
    }
    let x = r.results.as_ref()?.system(names::THROUGHPUT_PER_S).mean;
    Some(format!(
        "the {figure} ({x:.1}/s at {}) is at a bistable point: started with all jobs at {} the network stays at {:.1}/s, so neither is the single answer there",
        r.point, b.station, b.other_end_throughput_per_s.mean
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keys_are_the_names_of_the_table() {
        let b = PointBistability {
            station: "latch".into(),
            bistable: Some(true),
            other_end_throughput_per_s: Estimate {
                mean: 53.0,
                ci95: 1.0,
            },
            error: None,
        };
        let v = serde_json::to_value(&b).unwrap();
        assert_eq!(v[names::BISTABLE], serde_json::json!(true));
        assert_eq!(v[names::OTHER_END_THROUGHPUT_PER_S]["mean"], 53.0);
        let back: PointBistability = serde_json::from_value(v).unwrap();
        assert_eq!(back, b);
    }
}
