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
    /// Fixed sub-job routes: empty, or one per target, the stations a
    /// sub-job sent to that target visits after it, in order, before it
    /// goes to the join (the model format's fork `route`). Empty: a sub-job
    /// follows its class's routing rows, or goes straight to the join.
    pub routes: Vec<Vec<StationId>>,
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

/// The most entries all fixed sub-job routes of one fork may have together
/// (4 bytes each at run time): a route is stored step by step.
pub const MAX_ROUTE_STEPS: usize = 1 << 24;

impl ForkSpec {
    /// Fixed sub-job routes: one per target, stations that exist and are
    /// neither forks nor joins (a sub-job on a fixed route ends at its own
    /// fork's join), and not more steps than [`MAX_ROUTE_STEPS`].
    fn check_routes(&self, c: &mut Check<'_>) {
        if self.routes.is_empty() {
            return;
        }
        let route = Field::Key("route");
        if self.routes.len() != self.targets.len() {
            c.error(
                &[route],
                format!(
                    "expected one route per target ({}), found {}",
                    self.targets.len(),
                    self.routes.len()
                ),
            );
            return;
        }
        let steps: usize = self.routes.iter().map(Vec::len).sum();
        if steps > MAX_ROUTE_STEPS {
            c.error(
                &[route],
                format!("expected at most {MAX_ROUTE_STEPS} route steps in all, found {steps}"),
            );
            return;
        }
        for (i, r) in self.routes.iter().enumerate() {
            for (k, &s) in r.iter().enumerate() {
                let at = [route, Field::Index(i), Field::Index(k)];
                match c.station(s) {
                    Err(()) => c.error(&at, format!("no station with index {s}")),
                    Ok(Some(st)) if st.kind.is_fork_or_join() => {
                        let name = st.name.clone();
                        c.error(
                            &at,
                            format!(
                                "a fixed sub-job route cannot visit the fork or join {name}; expected queue, delay, latch, batch or link stations"
                            ),
                        );
                    }
                    _ => {}
                }
            }
        }
    }

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
        self.check_routes(c);
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
            StationKind::Delay
            | StationKind::Queue { .. }
            | StationKind::Latch(_)
            | StationKind::Batch(_)
            | StationKind::Link(_)
            | StationKind::Fork(_) => {
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
