//! The two-ended (bistability) check of `qsim run`, point by point.
//!
//! A closed model with a state-dependent mechanism (a falling speed curve,
//! a NUMA, spin or wake-all latch), or one whose clients time out and
//! retry, can have two stable operating points,
//! and a run stays in the one it starts in. Where the check
//! applies (see [`qsim_kernel::bistable::other_end`]), each point runs a
//! second time from the other end, with the point's own configuration and
//! seed (derived from its grid index), so the verdict is the same at any
//! thread count or shard split and equals `qsim run --seed <seed>`'s.
//! Sweeps of models without such a mechanism run nothing more and write no
//! extra columns.

use crate::record::{Point, PointBistability, PointRecord};
use qsim_kernel::bistable::{decide, other_end};
use qsim_kernel::{Control, Estimate, Network, RunConfig, RunError, RunResults, names};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Whether the check may apply somewhere in a sweep of this model: a closed
/// class and a state-dependent mechanism (a speed curve, a NUMA or spin
/// latch), or a class whose clients time out and retry
/// ([`qsim_kernel::bistable::retry_candidate`]). Decides the extra CSV
/// columns; each point still asks [`other_end`] whether it applies there.
pub(crate) fn may_apply(network: &Network) -> bool {
    if qsim_kernel::bistable::retry_candidate(network).is_some() {
        return true;
    }
    let spec = network.spec();
    let mechanism = spec
        .stations
        .iter()
        .any(|s| s.speed.is_some() || s.kind.is_contended_latch());
    mechanism
        && spec
            .classes
            .iter()
            .any(|c| matches!(c.workload, qsim_kernel::Workload::Closed { .. }))
}

/// Decides the point's verdict with [`qsim_kernel::bistable::decide`] (the
/// one verdict `qsim run` gives, from the point's own configuration and
/// seed); `Ok(None)` when the check does not apply at this point.
/// Cancellation is returned as [`RunError::Cancelled`] so the point stays
/// unfinished (for `--resume`); any other failure is kept in the verdict.
pub(crate) fn check(
    network: &Network,
    config: &RunConfig,
    first: &RunResults,
    control: Option<&Arc<Control>>,
) -> Result<Option<PointBistability>, RunError> {
    let Some((_, station)) = other_end(network) else {
        return Ok(None);
    };
    let run = || decide(network, config, first, control);
    // A panic is a failed check, as a panicking replication is a failed
    // point: the sweep goes on.
    let verdict = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(Ok(Some(v))) => Ok(v),
        Ok(Ok(None)) => return Ok(None),
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
    Ok(Some(match verdict {
        Ok(v) => PointBistability {
            station: name,
            bistable: Some(v.bistable),
            other_end_throughput_per_s: v.other_mode_throughput(),
            state: v.state_of_given(),
            mixed: v.mixed,
            verdict: Some(v.describe()),
            error: None,
        },
        Err(e) => PointBistability {
            station: name,
            bistable: None,
            other_end_throughput_per_s: Estimate::UNKNOWN,
            state: String::new(),
            mixed: false,
            verdict: None,
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

    let mixed = if b.mixed {
        " (the point's own replications mix the two states, so its figure is an average of neither)"
    } else {
        ""
    };
    Some(format!(
        "the {figure} ({x:.1}/s at {}, from {}){mixed} is at a bistable point: its other operating point (collapse at {} or not) gives {:.1}/s, so neither is the single answer there",
        r.point, b.state, b.station, b.other_end_throughput_per_s.mean
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
            state: "all jobs thinking (mode 2 of 2)".into(),
            mixed: false,
            verdict: None,
            error: None,
        };
        let v = serde_json::to_value(&b).unwrap();
        assert_eq!(v[names::BISTABLE], serde_json::json!(true));
        assert_eq!(v[names::OTHER_END_THROUGHPUT_PER_S]["mean"], 53.0);
        let back: PointBistability = serde_json::from_value(v).unwrap();
        assert_eq!(back, b);
    }
}
