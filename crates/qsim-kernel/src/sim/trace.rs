//! The trace recorder (see [`crate::trace`]): a control event every
//! interval, scheduled only when tracing, that takes the difference of the
//! cumulative station and system sums since the previous boundary. Nothing
//! runs per job; the warm-up's interactions are summed in the warm-up
//! branch of `exit`, which the measured part never takes.

use super::event::{EV_TRACE, ev, later};
use super::{Kind, Simulation};
use crate::trace::{Trace, TraceInterval, TracePlan, TraceStation};

/// Operand `a` of a trace event that is a cut (an interval ends at a
/// given time, off the grid) rather than a grid boundary (0).
const CUT: u32 = 1;

/// Cumulative sums at a boundary.
#[derive(Clone, Debug, Default)]
struct Snap {
    stations: Vec<TraceStation>,
    completions: u64,
    sum_resp: f64,
    good: Option<u64>,
}

/// A replication's trace in progress.
#[derive(Clone, Debug)]
pub(super) struct TraceRt {
    plan: TracePlan,
    dt: f64,
    /// Version of the pending boundary event (stale ones are skipped).
    version: u32,
    open_start: f64,
    /// Where the current phase's grid of boundaries starts.
    grid_start: f64,
    /// Index in `trace.intervals` where the current phase starts.
    phase_from: usize,
    prev: Snap,
    trace: Trace,
    /// Interactions finished during the warm-up and their response times
    /// (the class sums only count the measured part).
    pub(super) warm_completions: u64,
    pub(super) warm_sum_resp: f64,
}

impl TraceRt {
    pub(super) fn new(plan: TracePlan) -> TraceRt {
        TraceRt {
            plan,
            dt: plan.interval_s,
            version: 0,
            open_start: 0.0,
            grid_start: 0.0,
            phase_from: 0,
            prev: Snap::default(),
            trace: Trace {
                intervals: Vec::new(),
                interval_s: plan.interval_s,
                widened: false,
            },
            warm_completions: 0,
            warm_sum_resp: 0.0,
        }
    }
}

impl Simulation {
    /// Starts tracing at time 0 (before the initial placement); an
    /// interval also ends at each of `cuts` (the edges of a schedule's
    /// trigger window, see [`crate::recovery`]), and no merge joins
    /// intervals across a cut.
    pub(super) fn start_trace(&mut self, plan: TracePlan, cuts: &[f64]) {
        self.trace = Some(Box::new(TraceRt::new(plan)));
        self.fel.push(plan.interval_s, ev(EV_TRACE, 0, 0));
        for &c in cuts.iter().filter(|&&c| c > 0.0) {
            self.fel.push(c, ev(EV_TRACE, CUT, 0));
        }
    }

    /// The cumulative sums now (the measured part's, or the warm-up's).
    fn snap(&self) -> Snap {
        let now = self.now;
        let stations = self
            .stations
            .iter()
            .enumerate()
            .map(|(i, st)| {
                let s = &st.stats;
                // Blocked servers are occupied, not serving (see `blocking`).
                let blocked = self.blocking.get(i).map_or(0.0, |b| b.area(now));
                let (area_n, area_busy) = if matches!(st.kind, Kind::Queue { .. } | Kind::Delay) {
                    s.plain_areas(now, matches!(st.kind, Kind::Queue { .. }))
                } else {
                    let dt = now - s.last;
                    (
                        s.area_n + f64::from(s.n) * dt,
                        s.area_busy + f64::from(s.busy) * dt,
                    )
                };
                TraceStation {
                    area_jobs: area_n,
                    area_utilization: if st.servers > 0.0 {
                        (area_busy - blocked).max(0.0) / st.servers
                    } else {
                        0.0
                    },
                    departures: s.departures,
                }
            })
            .collect();
        let (completions, sum_resp) = if self.measuring {
            self.classes.iter().fold((0, 0.0), |(n, r), c| {
                (n + c.stats.completions, r + c.stats.sum_resp)
            })
        } else {
            let t = self.trace.as_deref();
            t.map_or((0, 0.0), |t| (t.warm_completions, t.warm_sum_resp))
        };
        Snap {
            stations,
            completions,
            sum_resp,
            good: self.client.as_deref().map(|c| c.good_total()),
        }
    }

    /// Closes the interval that ends now (if it has a length).
    fn close_interval(&mut self) {
        let now = self.now;
        let Some(start) = self.trace.as_deref().map(|t| t.open_start) else {
            return;
        };
        if now <= start {
            return;
        }
        let cur = self.snap();
        let measured = self.measuring;
        let Some(t) = self.trace.as_deref_mut() else {
            return;
        };
        let stations = cur
            .stations
            .iter()
            .zip(&t.prev.stations)
            .map(|(c, p)| TraceStation {
                area_jobs: (c.area_jobs - p.area_jobs).max(0.0),
                area_utilization: (c.area_utilization - p.area_utilization).max(0.0),
                departures: c.departures - p.departures,
            })
            .collect::<Vec<_>>();
        let stations = if t.prev.stations.is_empty() {
            cur.stations.clone()
        } else {
            stations
        };
        let iv = TraceInterval {
            start_s: start,
            end_s: now,
            measured,
            completions: cur.completions - t.prev.completions,
            sum_response_s: (cur.sum_resp - t.prev.sum_resp).max(0.0),
            good: cur.good.map(|g| g.saturating_sub(t.prev.good.unwrap_or(0))),
            stations,
        };
        if t.trace.push(t.phase_from, iv, t.plan.max_intervals) {
            t.dt *= 2.0;
            t.trace.interval_s = t.dt;
        }
        t.prev = cur;
        t.open_start = now;
    }

    /// A boundary event: closes the interval and schedules the next one,
    /// unless nothing else is pending (the run is over).
    #[cold]
    #[inline(never)]
    pub(super) fn on_trace(&mut self, kind: u32, version: u32) {
        if kind == CUT {
            self.lazy_settle_all();
            self.close_interval();
            if let Some(t) = self.trace.as_deref_mut() {
                t.phase_from = t.trace.intervals.len();
            }
            return;
        }
        if self.trace.as_deref().is_none_or(|t| t.version != version) {
            return;
        }
        self.lazy_settle_all();
        self.close_interval();
        if self.fel.len() == 0 {
            return;
        }
        if let Some(t) = self.trace.as_deref() {
            // The next boundary on the phase's grid (computed from its start,
            // so rounding does not accumulate; after a merge the grid of the
            // doubled interval).
            let k = ((self.now - t.grid_start) / t.dt + 1e-9).floor() + 1.0;
            let next = (t.grid_start + k * t.dt).max(later(self.now, 0.0));
            self.fel.push(next, ev(EV_TRACE, 0, t.version));
        }
    }

    /// The measurement starts now: closes the warm-up's last interval
    /// (called before the accumulators are reset).
    #[cold]
    pub(super) fn trace_warmup_end(&mut self) {
        self.close_interval();
    }

    /// The accumulators were reset: the measured phase's intervals start
    /// now, on a grid of their own.
    #[cold]
    pub(super) fn trace_measure_start(&mut self) {
        let snap = self.snap();
        let now = self.now;
        let Some(t) = self.trace.as_deref_mut() else {
            return;
        };
        t.prev = snap;
        t.open_start = now;
        t.grid_start = now;
        t.phase_from = t.trace.intervals.len();
        t.version = t.version.wrapping_add(1);
        let (dt, version) = (t.dt, t.version);
        self.fel.push(later(now, dt), ev(EV_TRACE, 0, version));
    }

    /// Closes the last interval at the end of the run.
    pub(super) fn finish_trace(&mut self) {
        self.lazy_settle_all();
        self.close_interval();
    }

    /// The trace recorded so far, if tracing.
    pub(super) fn trace_result(&self) -> Option<std::sync::Arc<Trace>> {
        self.trace
            .as_deref()
            .map(|t| std::sync::Arc::new(t.trace.clone()))
    }
}
