//! The simulation engine: one replication of a network, event by event.
//!
//! See the crate docs for the rules (simultaneous events, determinism). The
//! design, in short:
//!
//! * a future-event list ([`crate::fel`]) of packed `u64` events, dispatched
//!   by a `match` on the event kind (no trait objects, no allocation);
//! * jobs in a slab (`Vec<Job>` plus a free list), referred to by `u32`;
//! * fixed-speed delay and queue stations schedule each completion directly;
//! * stations with a speed curve, and PS stations, run a *virtual-work
//!   clock* `V` that advances at the per-job speed `g(n)`: a job entering
//!   service gets the finish tag `F = V + work`, and the station keeps at most
//!   one live "next completion" event (the job with the smallest tag). When
//!   `n` changes the station is marked dirty; after the event has been fully
//!   handled (including a departing job re-entering the same station) the
//!   dirty stations recompute `g` and reschedule, invalidating the old event
//!   with a version number (stale events are skipped and not counted). This
//!   re-times the remaining work of every job in service continuously;
//! * statistics are streaming sums and time integrals plus log-linear
//!   histograms: memory does not grow with run length.
//!
//! Files: this one holds [`Simulation`] (its state, the public API and the
//! event loop, which only decodes an event and hands it to the station
//! kind's handler); `event` the event encoding; `build` the set-up of a
//! replication; `job` the job slab and the start and end of interactions;
//! `routing` and `regions` where jobs go; `stats` the accumulators, MSER-5
//! and [`Simulation::result`]; `waiting` the queues of jobs; and one file
//! per station kind's runtime state and handlers: `queue` (plain queue and
//! delay stations), `vclock` (stations with a speed curve or PS), `latch`,
//! `batch` (batch and link groups) and `fork` (fork and join).

mod batch;
mod blocking;
mod build;
mod client;
mod direct;
mod dps;
mod event;
mod fork;
mod job;
mod latch;
mod lazy;
mod perclass;
mod policy;
mod preempt;
mod queue;
mod regions;
mod routing;
mod schedule;
mod snapshot;
mod stats;
mod trace;
mod vclock;
mod waiting;

use crate::control::Control;
use crate::dist::MAX_CLOCK_S;
use crate::error::RunError;
use crate::fel::Fel;
use crate::network::*;
use crate::results::ReplicationResult;
use crate::rng::SimRng;
use crate::time::SimTime;
use batch::GroupRt;
use blocking::BlockRt;
use event::*;
use fork::{ForkRec, ForkRt};
use job::{Job, Sampler};
use latch::LatchRt;
use regions::RegionRt;
use routing::Route;
use stats::{ClassStats, Mser, StStats};
use std::cmp::Reverse;
use std::sync::Arc;
use vclock::VClock;
use waiting::Waiting;

/// Bytes of one job slot, for the memory estimate (`crate::budget`).
pub(crate) const JOB_BYTES: usize = std::mem::size_of::<Job>();

/// Events between two looks at the [`Control`]: progress is published and
/// cancellation noticed at this granularity.
const CHECK_EVERY: u64 = 1 << 16;

#[derive(Clone)]
struct ClassRt {
    rng: SimRng,
    open: Option<Sampler>,
    think: Option<Sampler>,
    route: Route,
    priority: i32,
    /// The class's SLA (its own, else the run's; +inf without one).
    sla: f64,
    stats: ClassStats,
    /// Jobs that leave at their next completion (a population schedule
    /// stepping down; see `schedule`).
    leaving: u32,
}

#[derive(Clone, Debug)]
enum Kind {
    /// Infinite servers, fixed speed.
    Delay,
    /// `c` servers, fixed speed.
    Queue {
        c: u32,
    },
    /// A fixed-speed queue (`c` servers) or delay (`c = u32::MAX`) off the
    /// hot path: with a capacity (`limit` jobs present at most; an arrival
    /// that finds it full is lost, or with `block` waits for room, see
    /// `blocking`), with station tails or in a multi-class model (per-class
    /// figures; `limit = u32::MAX` for both), or able to send to a blocking
    /// station (`sends`: its completions check the target first). Its
    /// completions are `EV_PLAIN_DONE` events.
    Plain {
        c: u32,
        limit: u32,
        block: bool,
        sends: bool,
    },
    /// Speed curve or PS.
    V(Box<VClock>),
    Latch(Box<LatchRt>),
    Group(Box<GroupRt>),
    Fork(Box<ForkRt>),
    Join {
        quorum: Option<u32>,
    },
}

#[derive(Clone)]
struct StationRt {
    stats: StStats,
    rng: SimRng,
    /// Service per class (zero for classes that never visit).
    service: Vec<Sampler>,
    /// 1 / mean service per class (0 when the mean is 0): normalizes work
    /// for stations with a speed curve. A boxed slice, not a `Vec`: the
    /// 8 bytes saved keep `StationRt` at a size whose index scaling is one
    /// multiply.
    inv_mean: Box<[f64]>,
    kind: Kind,
    /// Event kind of the station's fixed-speed completions ([`Kind::Queue`]
    /// and [`Kind::Delay`]): `EV_EXIT_DONE` where every job leaving goes
    /// out of the network (see `Simulation::mark_exit_station`), else
    /// `EV_DONE`.
    done: u64,
    waiting: Waiting,
    /// Denominator of utilization (0: always report 0).
    servers: f64,
    /// Regions the station belongs to.
    regions: Vec<u32>,
    /// Per-class figures (multi-class models; plain and virtual-clock
    /// stations only).
    per_class: Option<Box<perclass::PerClass>>,
}

/// Marks the path it is on as rarely taken (an inlined no-op): the
/// compiler then tests for the common case first instead of folding it
/// into a jump table or a chain of compares.
#[cold]
#[inline(always)]
pub(super) fn cold_path() {}

/// When the measured part starts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum WarmPlan {
    None,
    Jobs(u64),
    Time(f64),
}

/// When a replication ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum StopPlan {
    /// Interactions completed after warm-up.
    Jobs(u64),
    /// Seconds after warm-up.
    Time(f64),
    /// Absolute simulated time.
    AbsTime(f64),
}

/// One replication of a network that can be advanced step by step.
///
/// Build it with [`Simulation::new`], then call [`Simulation::run`] (to the
/// stopping rule of the [`RunConfig`](crate::RunConfig)),
/// [`Simulation::step`] or [`Simulation::run_until`], and read
/// [`Simulation::result`]. With [`Warmup::Mser5`](crate::Warmup::Mser5) a
/// `Simulation` measures from time zero (the truncation
/// is chosen by [`crate::run_replication`], which needs the whole run).
#[derive(Clone)]
pub struct Simulation {
    now: f64,
    fel: Fel,
    jobs: Vec<Job>,
    free: Vec<u32>,
    stations: Vec<StationRt>,
    classes: Vec<ClassRt>,
    regions: Vec<RegionRt>,
    /// Regions or class switching present: moves take `goto_slow`.
    slow_goto: bool,
    /// Class switching: the (station, class) of each switching branch
    /// (see `routing::SWITCH`), and each class's chain start
    /// ([`NetworkSpec::chain_starts`](crate::NetworkSpec::chain_starts));
    /// both empty without switching.
    switches: Vec<(u32, u32)>,
    chain_start: Vec<u32>,
    /// Rows with a routing policy (see `policy::POLICY`); empty without.
    policies: Vec<policy::PolicyRt>,
    forks: Vec<ForkRec>,
    free_forks: Vec<u32>,
    /// Routing streams: one per station (draws on leaving it), then one
    /// per class (draws when an interaction starts); see
    /// [`crate::rng::routing_stream`].
    route_rngs: Vec<SimRng>,
    dirty: Vec<u32>,
    /// Spin cpus whose population changed in this event (see `flush`).
    spin_dirty: Vec<u32>,
    /// Latches whose running critical section ends without an event (see
    /// `Simulation::lazy_settle`); statistics are settled before being read.
    lazy_open: u32,
    events: u64,
    in_network: u64,
    max_jobs: u64,
    max_events: u64,
    /// `max_events + 1`, or 0 once `error` is set: the event loop stops
    /// when `events >= event_cap`, one compare for both conditions (and,
    /// with a [`Control`], every `CHECK_EVERY` events to look at it).
    event_cap: u64,
    measuring: bool,
    measure_start: f64,
    warm: WarmPlan,
    stop: StopPlan,
    warm_count: u64,
    completions: u64,
    /// Completions (in the measured part) at which `on_mark` runs next:
    /// the next batch boundary of a [`StopPlan::Jobs`] run, `u64::MAX` for
    /// timed runs. Comparing with it is the stop check, so batch
    /// boundaries cost no work per event.
    next_mark: u64,
    /// Cumulative figures at each batch boundary passed so far (see
    /// [`crate::results::ReplicationResult::checkpoints`]).
    marks: Vec<ReplicationResult>,
    /// End of the measured window of a timed run (absolute seconds).
    mark_end: f64,
    finished: bool,
    sla: f64,
    /// The k of `jobs_tail_probability`, P(n >= k) (station tails).
    jobs_tail_k: u32,
    mser: Option<Box<Mser>>,
    error: Option<RunError>,
    index: u32,
    names: Vec<String>,
    /// Progress and cancellation shared with the caller, if any.
    control: Option<Arc<Control>>,
    /// Completions (warm-up included) already published to `control`.
    published: u64,
    /// Load schedules (empty unless the run has some).
    sched: Vec<schedule::SchedRt>,
    /// Capacity schedules (empty unless a station has one; see
    /// `schedule::on_capacity`).
    cap_sched: Vec<crate::schedule::StationSchedule>,
    /// Per station, the factor its service draws are multiplied by (1 /
    /// its scheduled speed-up); empty without capacity schedules.
    service_scale: Vec<f64>,
    /// The trace recorder, when tracing.
    trace: Option<Box<trace::TraceRt>>,
    /// Blocking state per station (empty unless a station blocks when
    /// full; see `blocking`).
    blocking: Vec<BlockRt>,
    /// The client layer (timeouts, retries, patience, balking, shedding),
    /// `None` unless the network has any (see `client`).
    client: Option<Box<client::ClientRt>>,
}

impl Simulation {
    /// Simulated time now.
    pub fn time(&self) -> SimTime {
        SimTime::new(self.now).unwrap_or(SimTime::ZERO)
    }

    /// Events processed so far (stale and control events excluded).
    pub fn events(&self) -> u64 {
        self.events
    }

    /// True once the stopping rule has been reached.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// Jobs present at station `s` now (queued and in service); `None` for
    /// an id beyond the network's stations (a count of 0 would pass for an
    /// empty station).
    pub fn jobs_at(&self, s: StationId) -> Option<u32> {
        self.stations.get(s).map(|st| st.stats.n)
    }

    /// Jobs in the network now (not thinking, not yet arrived).
    pub fn jobs_in_network(&self) -> u64 {
        self.in_network
    }

    /// Clients waiting out a backoff before they retry (outside the
    /// network: not in [`Simulation::jobs_in_network`]); 0 in a model
    /// without clients that retry.
    pub fn retrying(&self) -> u32 {
        self.client.as_ref().map_or(0, |c| c.retrying())
    }

    /// Runs to the stopping rule.
    pub fn run(&mut self) -> Result<(), RunError> {
        if !self.finished {
            self.run_events()?;
        }
        if self.now > MAX_CLOCK_S {
            return self.past_clock_limit(self.now);
        }
        if self.trace.is_some() {
            self.finish_trace();
        }
        self.publish();
        Ok(())
    }

    /// The event loop of [`Simulation::run`]. Whatever ends the run also
    /// sets `event_cap` to 0 (see `finish`), so one compare per event
    /// covers the end, errors, the event limit and the control checks;
    /// `take_min` returns a shrunk radix heap to the array layout, so the
    /// loop needs no `settle`. The events of a one-stop route (see
    /// `Simulation::one_stop`) only touch a plain queue or delay and the
    /// job's end: no station is left dirty, and they skip that check.
    ///
    /// Two copies of the loop, chosen once per call. `run_lean` serves
    /// networks of fixed-speed queues and delays only, without a client
    /// layer, where every event but the control ones is a completion, an
    /// arrival or a think time: it inlines those handlers and calls the
    /// rest out of line. `run_full` inlines every handler. With all
    /// handlers in one loop, the register allocator spilled and shuffled
    /// on the common path once the client and trace arms were added
    /// (closed3 +5% instructions, 11 per event, in the same handlers); the
    /// lean copy wins that back. A one-stop route keeps the full loop: its
    /// events are taken before `dispatch` in both, and there the lean copy
    /// measured 3% more instructions on M/M/1 (register allocation again).
    fn run_events(&mut self) -> Result<(), RunError> {
        let lean = self.client.is_none()
            && self.one_stop().is_none()
            && self
                .stations
                .iter()
                .all(|st| matches!(st.kind, Kind::Queue { .. } | Kind::Delay));
        if lean {
            self.run_lean()
        } else {
            self.run_full()
        }
    }

    /// The loop for networks of fixed-speed queues and delays (see
    /// `run_events`).
    #[inline(never)]
    fn run_lean(&mut self) -> Result<(), RunError> {
        self.event_loop::<true>()
    }

    /// The loop with every station kind's handlers inlined.
    #[inline(never)]
    fn run_full(&mut self) -> Result<(), RunError> {
        self.event_loop::<false>()
    }

    /// The event loop; `LEAN` sends the events other than fixed-speed
    /// completions, arrivals and think times to `dispatch_rare`.
    #[inline(always)]
    fn event_loop<const LEAN: bool>(&mut self) -> Result<(), RunError> {
        loop {
            let Some(e) = self.fel.take_min() else {
                self.finished = true;
                return Ok(());
            };
            self.now = e.time();
            let ev = e.ev;
            match ev & 0xFF {
                EV_EXIT_DONE => self.on_done::<true>(operand_a(ev), operand_b(ev)),
                EV_ARRIVAL_AT => self.on_arrival_at(operand_a(ev), operand_b(ev), ev),
                _ => {
                    if LEAN {
                        self.dispatch_lean(ev);
                    } else {
                        self.dispatch(ev);
                    }
                    if !self.dirty.is_empty() {
                        self.flush();
                    }
                }
            }
            debug_assert!(self.dirty.is_empty());
            if self.events >= self.event_cap {
                self.checkpoint()?;
                if self.finished {
                    return Ok(());
                }
            }
        }
    }

    /// Ends the run after the event being handled.
    #[inline]
    fn finish(&mut self) {
        self.lazy_settle_all();
        self.finished = true;
        self.event_cap = 0;
    }

    /// Processes the next event; returns false when the run is finished.
    pub fn step(&mut self) -> Result<bool, RunError> {
        if self.finished {
            return Ok(false);
        }
        let Some(e) = self.fel.take_min() else {
            self.finished = true;
            return Ok(false);
        };
        if e.time() > MAX_CLOCK_S {
            self.past_clock_limit(e.time())?;
        }
        self.now = e.time();
        self.dispatch(e.ev);
        self.flush();
        self.lazy_settle_all();
        self.fel.settle();
        if self.events >= self.event_cap {
            self.checkpoint()?;
        }
        Ok(!self.finished)
    }

    /// Processes every event up to and including time `t` (or until the
    /// run finishes); the clock then reads `t` unless the run finished
    /// earlier. Returns false when the run is finished.
    pub fn run_until(&mut self, t: SimTime) -> Result<bool, RunError> {
        let t = t.seconds();
        while !self.finished {
            match self.fel.peek() {
                Some(e) if e.time() <= t => {}
                _ => {
                    self.now = self.now.max(t);
                    self.lazy_settle_all();
                    return Ok(true);
                }
            }
            self.step()?;
        }
        Ok(false)
    }

    /// The next event lies past [`MAX_CLOCK_S`]: stop before any statistic
    /// integrates over it.
    #[cold]
    fn past_clock_limit(&mut self, time_s: f64) -> Result<(), RunError> {
        self.finished = true;
        Err(RunError::ClockLimit {
            replication: self.index,
            time_s,
        })
    }

    /// Shares progress and cancellation with `control`: every 2^16
    /// events the event loop publishes the completed jobs
    /// and looks at the cancel flag (the check reuses the event-limit
    /// compare, which also looks at the clock limit there).
    pub fn set_control(&mut self, control: Arc<Control>) {
        self.control = Some(control);
    }

    /// Reached `event_cap`: an error, the event limit, or a control check.
    #[cold]
    #[inline(never)]
    fn checkpoint(&mut self) -> Result<(), RunError> {
        if self.error.is_some() || self.events > self.max_events {
            return self.fail();
        }
        if self.finished {
            return Ok(());
        }
        // The clock is looked at here, not at every event: within the
        // validated ranges (means up to 1e9 s) a replication needs many
        // events to pass MAX_CLOCK_S, and it stops within CHECK_EVERY of it.
        if self.now > MAX_CLOCK_S {
            return self.past_clock_limit(self.now);
        }
        self.publish();
        if self.control.as_ref().is_some_and(|c| c.cancelled()) {
            self.finished = true;
            return Err(RunError::Cancelled);
        }
        self.event_cap = self
            .max_events
            .saturating_add(1)
            .min(self.events + CHECK_EVERY);
        Ok(())
    }

    /// Adds the completions since the last call to the control's count.
    fn publish(&mut self) {
        if let Some(c) = &self.control {
            let done = self.warm_count + self.completions;
            c.add_jobs(done.saturating_sub(self.published));
            self.published = done;
        }
    }

    fn fail(&mut self) -> Result<(), RunError> {
        if let Some(e) = self.error.take() {
            self.finished = true;
            return Err(e);
        }
        self.finished = true;
        Err(RunError::EventLimit {
            replication: self.index,
            limit: self.max_events,
        })
    }

    /// `dispatch` for the lean loop: the common kinds inline, the rest out
    /// of line.
    #[inline(always)]
    fn dispatch_lean(&mut self, e: u64) {
        let a = operand_a(e) as u32;
        let b = operand_b(e);
        match e & 0xFF {
            EV_DONE => self.on_done::<false>(a as usize, b),
            EV_EXIT_DONE => self.on_done::<true>(a as usize, b),
            EV_ARRIVAL => self.on_arrival(a as usize),
            EV_ARRIVAL_AT => self.on_arrival_at(a as usize, b, e),
            EV_THINK => self.on_think(b),
            _ => self.dispatch_rare(e),
        }
    }

    /// The lean loop's other events: control events (warm-up, stop, marks,
    /// trace boundaries, schedules), out of the loop's code.
    #[cold]
    #[inline(never)]
    fn dispatch_rare(&mut self, e: u64) {
        self.dispatch(e)
    }

    #[inline(always)]
    fn dispatch(&mut self, e: u64) {
        let a = operand_a(e) as u32;
        let b = operand_b(e);
        // Fixed-speed completions, arrivals and think times dominate: test
        // for them one by one, before the jump table (which the rest, marked
        // rare, keeps). A compare is cheaper than the table's lookup and
        // indirect jump, and the branch is known as soon as the event is.
        match e & 0xFF {
            EV_DONE => return self.on_done::<false>(a as usize, b),
            EV_EXIT_DONE => return self.on_done::<true>(a as usize, b),
            EV_ARRIVAL => return self.on_arrival(a as usize),
            EV_ARRIVAL_AT => return self.on_arrival_at(a as usize, b, e),
            EV_THINK => return self.on_think(b),
            _ => {}
        }
        cold_path();
        match e & 0xFF {
            EV_DONE => self.on_done::<false>(a as usize, b),
            EV_EXIT_DONE => self.on_done::<true>(a as usize, b),
            EV_VDONE => self.on_vdone(a as usize, b),
            EV_PSDONE => self.on_psdone(a as usize, b),
            EV_THINK => self.on_think(b),
            EV_ARRIVAL => self.on_arrival(a as usize),
            EV_ARRIVAL_AT => self.on_arrival_at(a as usize, b, e),
            EV_WARMUP => self.start_measuring(),
            EV_STOP => self.finish(),
            EV_MARK => self.on_time_mark(),
            EV_PLAIN_DONE => self.on_plain_done(a as usize, b),
            EV_BATCH_TIMER => self.on_batch_timer(a as usize, b),
            EV_GROUP_DONE => self.on_group_done(a as usize, b),
            EV_LATCH_GRANT => self.on_latch_grant(a as usize, b),
            EV_LATCH_POLL => self.on_latch_poll(a as usize, b),
            EV_LATCH_DONE => self.on_latch_done(a as usize, b),
            EV_SCHEDULE => self.on_schedule(a as usize, b as usize),
            EV_SCHED_ARRIVAL => self.on_sched_arrival(a as usize),
            EV_CAPACITY => self.on_capacity(a as usize, b as usize),
            EV_TRACE => self.on_trace(a, b),
            EV_TIMEOUT => self.on_client_timeout(a, b),
            EV_RETRY => self.on_client_retry(b),
            EV_RENEGE => self.on_renege(a, b),
            _ => {
                debug_assert!(false, "unknown event kind {}", e & 0xFF);
                // SAFETY: events are only made by `ev` with one of the
                // `EV_*` kinds above, and the event list hands them back
                // unchanged; telling the compiler so drops the range check
                // in front of the jump table.
                unsafe { std::hint::unreachable_unchecked() }
            }
        }
    }

    #[inline(always)]
    fn check_unstable(&mut self) {
        if self.in_network > self.max_jobs {
            self.unstable();
        }
    }

    #[cold]
    fn unstable(&mut self) {
        if self.error.is_some() {
            return;
        }
        let (s, _) = self
            .stations
            .iter()
            .enumerate()
            .map(|(i, st)| (i, st.stats.n))
            .max_by_key(|&(i, n)| (n, Reverse(i)))
            .unwrap_or((0, 0));
        self.event_cap = 0;
        self.error = Some(RunError::Unstable {
            jobs: self.in_network,
            limit: self.max_jobs,
            station: self.names.get(s).cloned().unwrap_or_default(),
            time_s: self.now,
        });
    }

    /// Job `j` arrives at station `s` now.
    #[inline(always)]
    fn arrive(&mut self, j: u32, s: usize) {
        let now = self.now;
        // SAFETY: station ids reaching here come from routes, fork targets
        // or the initial state, all validated `< stations.len()` by
        // `Network::new`, and `stations` is never resized; job ids only
        // come from the slab's allocator and the slab never shrinks.
        let st = unsafe { self.stations.get_unchecked_mut(s) };
        let job = unsafe { self.jobs.get_unchecked_mut(j as usize) };
        job.t_arr = now;
        job.station = s as u32;
        // The common case first: a direct branch instead of the jump table.
        if let Kind::Queue { c } = st.kind {
            Simulation::queue_arrive(st, job, j, s, c, now, &mut self.fel, &self.classes);
            return;
        }
        cold_path();
        match &mut st.kind {
            Kind::Queue { .. } => {}
            &mut Kind::Plain { limit, .. } => self.plain_arrive(j, s, limit),
            Kind::Delay => Simulation::delay_arrive(st, job, j, s, now, &mut self.fel),
            Kind::V(_) => self.vclock_arrive(j, s),
            Kind::Latch(_) => self.latch_arrive(j, s),
            Kind::Group(_) => self.group_arrive(j, s),
            Kind::Fork(_) => self.fork_arrive(j, s),
            Kind::Join { .. } => self.join_arrive(j, s),
        }
    }
}
