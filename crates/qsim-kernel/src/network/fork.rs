//! `fork` and `join` stations: a job splits into sub-jobs and is released
//! when they (or a quorum) are back. Parameters and range rules.

use super::{Check, Field, Scope, StationId, StationKind, fmt_num};

/// Parameters of a `fork` station.
#[derive(Clone, Debug, PartialEq)]
pub struct ForkSpec {
    /// Sub-jobs per arriving job, at least 1.
    pub fan_out: u32,
    /// Stations the sub-jobs go to, with weights (the model format's `to`).
    pub targets: Vec<(StationId, f64)>,
    /// How sub-jobs are spread over the targets.
    pub spread: Spread,
    /// The join station that collects them.
    pub join: StationId,
}

/// How a fork spreads its sub-jobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Spread {
    /// Round-robin over the targets (k = 256 over 32 targets gives 8 each).
    #[default]
    Even,
    /// Each sub-job picks a target at random with the given weights.
    Random,
}

/// Parameters of a `join` station.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct JoinSpec {
    /// Release the parent after this many sub-jobs; `None` waits for all.
    pub quorum: Option<u32>,
}

impl JoinSpec {
    pub(super) fn check(&self, c: &mut Check<'_>) {
        if self.quorum == Some(0) {
            c.error(&[Field::Key("quorum")], "expected a quorum >= 1, found 0");
        }
    }
}

impl ForkSpec {
    /// Range rules of the fork, and of its join's quorum against the fan-out
    /// (reported at the join, where the quorum is written).
    pub(super) fn check(&self, c: &mut Check<'_>, fork: StationId) {
        let to = Field::Key("to");
        if self.fan_out == 0 {
            c.error(
                &[Field::Key("fan_out")],
                "expected a number of sub-jobs >= 1, found 0",
            );
        }
        if self.targets.is_empty() {
            c.error(&[to], "expected at least one target station, found none");
        }
        for (i, &(t, w)) in self.targets.iter().enumerate() {
            if c.station(t).is_err() {
                c.error(&[to, Field::Index(i)], format!("no station with index {t}"));
            }
            if !(w.is_finite() && w > 0.0) {
                c.error(
                    &[to, Field::Index(i)],
                    format!("expected a positive weight, found {}", fmt_num(w)),
                );
            }
        }
        let join = match c.station(self.join) {
            Err(()) => {
                c.error(
                    &[Field::Key("join")],
                    format!("no station with index {}", self.join),
                );
                return;
            }
            Ok(None) => return,
            Ok(Some(j)) => j,
        };
        match &join.kind {
            StationKind::Join(j) => {
                if let Some(q) = j.quorum
                    && q > self.fan_out
                    && self.fan_out > 0
                {
                    let fork_name = c.station_name(fork);
                    let msg = format!(
                        "expected a quorum between 1 and the fan-out {} of fork `{fork_name}`, found {q}",
                        self.fan_out
                    );
                    let here = c.scope;
                    c.scope = Scope::Station(self.join);
                    c.error(&[Field::Key("quorum")], msg);
                    c.scope = here;
                }
            }
            _ => {
                let name = join.name.clone();
                c.error(
                    &[Field::Key("join")],
                    format!(
                        "station `{name}` is not a join station; expected the name of a station with kind = \"join\""
                    ),
                );
            }
        }
    }
}
