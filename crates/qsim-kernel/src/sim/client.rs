//! Clients and servers under overload (see [`crate::network::Overload`]):
//! a timeout per attempt, retries with backoff and a retry budget, a
//! circuit breaker, reneging, balking, shedding and adaptive LIFO.
//!
//! A network with any of these runs in "client mode", decided once when a
//! replication is built: its queue and delay stations are `Kind::Plain`
//! and its moves take `goto_slow`, where an attempt starts (a move from
//! outside) and ends (a move out); the hot path of other models is not
//! touched. A job record is one attempt; the client lives in a side table
//! indexed by job id. An attempt given up (a timeout) leaves its record to
//! the request, which goes on as an orphan (its later service is wasted
//! work) or, cancelled in a queue, stays there, marked gone, until the
//! queue reaches it; the client moves to a fresh record for its retry.
//! Each timer event carries a tag of the attempt (or of the wait) it
//! belongs to, so a timer whose attempt has ended is recognised and
//! skipped.

use super::event::{EV_RENEGE, EV_RETRY, EV_TIMEOUT, EXIT, ev, later};
use super::job::Sampler;
use super::{Kind, Simulation, StationRt};
use crate::dist::unit;
use crate::network::{Backoff, Balk, Breaker, Network, OnTimeout, RetryBudget};
use crate::results::{
    ReplicationClass, ReplicationClient, ReplicationOverload, ReplicationStation,
};
use crate::rng::{self, SimRng};

/// Tags are kept in the 24 bits of an event's `a` operand.
const TAG_MASK: u32 = 0xFF_FFFF;

/// What a job record is, for the client layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
enum State {
    /// Outside the network (thinking, backing off), or of a class without
    /// client behaviour.
    #[default]
    Idle,
    /// An attempt whose client still waits for it.
    Live,
    /// A request whose client gave up: it goes on, wasted.
    Orphan,
    /// Removed from a queue it still sits in (cancelled, reneged, shed):
    /// the record is freed when the queue reaches it.
    Gone,
}

/// The client side of one job record.
#[derive(Clone, Copy, Debug, Default)]
struct JobClient {
    state: State,
    /// Waiting in a plain queue (not in service).
    waiting: bool,
    /// Attempts of the interaction so far.
    attempts: u32,
    /// Tag of the live attempt (timeouts) and of the wait (patience).
    tag: u32,
    wait_tag: u32,
    /// Start of the interaction.
    t0: f64,
    /// When the client gave up on this request (an orphan).
    t_gone: f64,
    /// The attempt is the probe of a half-open circuit breaker.
    probe: bool,
}

/// Client figures of one class (since the measurement started).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ClientStats {
    /// Interactions that ended (succeeded or failed).
    pub(super) ended: u64,
    pub(super) succeeded: u64,
    /// Successes within the deadline.
    pub(super) good: u64,
    /// Attempts made by the interactions that ended.
    pub(super) ended_attempts: u64,
    /// Attempts started, and those that timed out.
    pub(super) started: u64,
    pub(super) timeouts: u64,
    /// Attempts failed at once by an open circuit breaker.
    pub(super) fast_failed: u64,
}

/// Where a circuit breaker is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum BreakerState {
    Closed,
    /// Open since `from` until `until` (then half open at the next attempt).
    Open {
        from: f64,
        until: f64,
    },
    /// Half open: `out` while its probe has not come back.
    HalfOpen {
        out: bool,
    },
}

/// A class's circuit breaker at run time (see [`Breaker`]).
#[derive(Clone, Debug)]
struct BreakerRt {
    spec: Breaker,
    /// Outcomes of the last attempts while closed (true: failed), a ring.
    outcomes: Vec<bool>,
    next: usize,
    filled: usize,
    failures: u32,
    state: BreakerState,
    /// Measured time spent open, over the finished open spells, and
    /// when the measurement started.
    open_s: f64,
    measured_from: f64,
}

impl BreakerRt {
    fn new(spec: Breaker) -> BreakerRt {
        BreakerRt {
            spec,
            outcomes: vec![false; spec.window as usize],
            next: 0,
            filled: 0,
            failures: 0,
            state: BreakerState::Closed,
            open_s: 0.0,
            measured_from: 0.0,
        }
    }

    /// Measured seconds of the open spell from `from` to `until`, cut at
    /// `now`.
    fn spell(&self, from: f64, until: f64, now: f64) -> f64 {
        (until.min(now) - from.max(self.measured_from)).max(0.0)
    }

    fn open(&mut self, now: f64) {
        self.state = BreakerState::Open {
            from: now,
            until: now + self.spec.cool_down_s,
        };
    }

    /// An attempt starts now: whether it may go (and is the probe), or
    /// fails fast (`None`).
    fn admit(&mut self, now: f64) -> Option<bool> {
        if let BreakerState::Open { from, until } = self.state {
            if now < until {
                return None;
            }
            self.open_s += self.spell(from, until, now);
            self.state = BreakerState::HalfOpen { out: false };
        }
        match self.state {
            BreakerState::HalfOpen { out: true } => None,
            BreakerState::HalfOpen { out: false } => {
                self.state = BreakerState::HalfOpen { out: true };
                Some(true)
            }
            _ => Some(false),
        }
    }

    /// An attempt (the probe if `probe`) ended now, failed or not.
    fn record(&mut self, failed: bool, probe: bool, now: f64) {
        match self.state {
            BreakerState::Closed => {
                let w = self.outcomes.len();
                if self.filled == w {
                    self.failures -= u32::from(self.outcomes[self.next]);
                } else {
                    self.filled += 1;
                }
                self.outcomes[self.next] = failed;
                self.failures += u32::from(failed);
                self.next = (self.next + 1) % w;
                if self.filled == w
                    && f64::from(self.failures) >= self.spec.failure_ratio * w as f64
                {
                    self.open(now);
                }
            }
            BreakerState::HalfOpen { out: true } if probe => {
                if failed {
                    self.open(now);
                } else {
                    self.state = BreakerState::Closed;
                    self.next = 0;
                    self.filled = 0;
                    self.failures = 0;
                }
            }
            // Attempts that started before the breaker opened.
            _ => {}
        }
    }

    /// Measured seconds open up to `now`.
    fn open_time(&self, now: f64) -> f64 {
        match self.state {
            BreakerState::Open { from, until } => self.open_s + self.spell(from, until, now),
            _ => self.open_s,
        }
    }
}

#[derive(Clone)]
struct BackoffRt {
    dist: Option<Sampler>,
    base: f64,
    cap: f64,
    jitter: f64,
}

#[derive(Clone)]
struct ClassClient {
    timeout: Option<Sampler>,
    cancel: bool,
    deadline: f64,
    retry: Option<(u32, f64, BackoffRt)>,
    budget: Option<RetryBudget>,
    tokens: f64,
    breaker: Option<BreakerRt>,
    rng: SimRng,
    stats: ClientStats,
    /// Successes within the deadline since the start, warm-up included
    /// (the trace's goodput; never reset).
    good_total: u64,
}

/// Overload figures of one station (since the measurement started).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct StationClientStats {
    pub(super) abandoned: u64,
    pub(super) balked: u64,
    pub(super) shed: u64,
    /// Server time of the visits that ended, and of those whose client
    /// had gone.
    pub(super) work: f64,
    pub(super) wasted: f64,
}

#[derive(Clone)]
struct StationClient {
    patience: Option<Sampler>,
    balk: Option<Balk>,
    shed_after: f64,
    /// Adaptive LIFO: the newest waiting job goes first from this many
    /// jobs present on (`u32::MAX`: never).
    lcfs_from: u32,
    rng: SimRng,
}

/// The client layer's state of one replication.
#[derive(Clone)]
pub(super) struct ClientRt {
    classes: Vec<Option<ClassClient>>,
    stations: Vec<Option<StationClient>>,
    stations_stats: Vec<StationClientStats>,
    jobs: Vec<JobClient>,
    /// Clients waiting out a backoff before their retry (an `EV_RETRY`
    /// pending for each), outside the network.
    retrying: u32,
}

/// Stream ids of the client layer (see [`crate::rng`]): per station for
/// patience and balking, per class for timeouts, retries and backoff.
fn station_stream(s: usize) -> u64 {
    (16 << 32) | s as u64
}
fn class_stream(c: usize) -> u64 {
    (17 << 32) | c as u64
}

impl ClientRt {
    /// The client layer of `network` for replication `index`, or `None`
    /// when the network has no client or overload behaviour.
    pub(super) fn new(network: &Network, seed: u64, index: u32) -> Option<Box<ClientRt>> {
        let o = network.overload()?;
        let classes = o
            .classes
            .iter()
            .enumerate()
            .map(|(c, k)| {
                k.as_ref().map(|k| ClassClient {
                    timeout: k.timeout.as_ref().map(Sampler::new),
                    cancel: k.on_timeout == OnTimeout::Cancel,
                    deadline: k.deadline_s.unwrap_or(f64::INFINITY),
                    retry: k.retry.as_ref().map(|r| {
                        #[cfg(feature = "bias")]
                        let r = &crate::bias::retry(r);
                        let b = match &r.backoff {
                            Backoff::None => BackoffRt {
                                dist: None,
                                base: 0.0,
                                cap: 0.0,
                                jitter: 0.0,
                            },
                            Backoff::Dist(d) => BackoffRt {
                                dist: Some(Sampler::new(d)),
                                base: 0.0,
                                cap: 0.0,
                                jitter: 0.0,
                            },
                            &Backoff::Doubling {
                                base_s,
                                cap_s,
                                jitter,
                            } => BackoffRt {
                                dist: None,
                                base: base_s,
                                cap: cap_s,
                                jitter,
                            },
                        };
                        (r.max_attempts, r.probability, b)
                    }),
                    budget: k.retry.as_ref().and_then(|r| r.budget),
                    tokens: k
                        .retry
                        .as_ref()
                        .and_then(|r| r.budget)
                        .map_or(0.0, |b| b.cap),
                    breaker: k.breaker.map(BreakerRt::new),
                    rng: rng::stream(seed, index, class_stream(c)),
                    stats: ClientStats::default(),
                    good_total: 0,
                })
            })
            .collect();
        let stations: Vec<Option<StationClient>> = o
            .stations
            .iter()
            .enumerate()
            .map(|(s, x)| {
                x.as_ref().map(|x| StationClient {
                    patience: x.patience.as_ref().map(Sampler::new),
                    balk: x.balk.clone(),
                    shed_after: x.shed_after_s.unwrap_or(f64::INFINITY),
                    lcfs_from: x.lcfs_from.unwrap_or(u32::MAX),
                    rng: rng::stream(seed, index, station_stream(s)),
                })
            })
            .collect();
        Some(Box::new(ClientRt {
            stations_stats: vec![StationClientStats::default(); stations.len()],
            classes,
            stations,
            jobs: Vec::new(),
            retrying: 0,
        }))
    }

    /// Clients waiting out a backoff before their retry.
    pub(super) fn retrying(&self) -> u32 {
        self.retrying
    }

    /// Every stream of the client layer (timeouts, retries, backoff,
    /// patience, balking), each replaced by `fresh` (a copy's reseed).
    pub(super) fn reseed(&mut self, mut fresh: impl FnMut(&mut SimRng)) {
        for k in self.classes.iter_mut().flatten() {
            fresh(&mut k.rng);
        }
        for x in self.stations.iter_mut().flatten() {
            fresh(&mut x.rng);
        }
    }

    /// The mean backoff of class `c` when it is drawn from an exponential
    /// distribution, with the class's stream: a pending retry's remaining
    /// wait can then be drawn afresh.
    pub(super) fn exp_backoff(&mut self, c: usize) -> Option<(f64, &mut SimRng)> {
        let k = self.classes.get_mut(c)?.as_mut()?;
        match &k.retry {
            Some((
                _,
                _,
                BackoffRt {
                    dist: Some(Sampler::Exp(m)),
                    ..
                },
            )) => Some((*m, &mut k.rng)),
            _ => None,
        }
    }

    fn job(&mut self, j: u32) -> &mut JobClient {
        let j = j as usize;
        if j >= self.jobs.len() {
            self.jobs.resize(j + 1, JobClient::default());
        }
        &mut self.jobs[j]
    }

    /// Successes within their deadline since the start, over the classes
    /// (warm-up included).
    pub(super) fn good_total(&self) -> u64 {
        self.classes.iter().flatten().map(|c| c.good_total).sum()
    }

    /// Every counter back to zero: the measurement starts now.
    pub(super) fn reset(&mut self, now: f64) {
        for c in self.classes.iter_mut().flatten() {
            c.stats = ClientStats::default();
            if let Some(b) = &mut c.breaker {
                b.open_s = 0.0;
                b.measured_from = now;
            }
        }
        for s in &mut self.stations_stats {
            *s = StationClientStats::default();
        }
    }

    /// Fills in the client figures of a replication's classes and the
    /// overload figures of its stations, over `t` measured seconds ending
    /// `now`.
    pub(super) fn figures(
        &self,
        t: f64,
        now: f64,
        rt: &[StationRt],
        classes: &mut [ReplicationClass],
        stations: &mut [ReplicationStation],
    ) {
        let per_s = |x: f64| if t > 0.0 { x / t } else { 0.0 };
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        for (k, out) in self.classes.iter().zip(classes.iter_mut()) {
            let Some(k) = k else { continue };
            let s = &k.stats;
            out.client = Some(ReplicationClient {
                interactions: s.ended,
                attempts: s.started,
                goodput_per_s: per_s(s.good as f64),
                attempts_per_interaction: ratio(s.ended_attempts as f64, s.ended as f64),
                timeout_probability: ratio(s.timeouts as f64, s.started as f64),
                failure_probability: ratio((s.ended - s.succeeded) as f64, s.ended as f64),
                breaker_open_fraction: k.breaker.as_ref().map(|b| ratio(b.open_time(now), t)),
                fast_failed_fraction: k
                    .breaker
                    .as_ref()
                    .map(|_| ratio(s.fast_failed as f64, s.started as f64)),
            });
        }
        for ((x, st), out) in self.stations_stats.iter().zip(rt).zip(stations.iter_mut()) {
            // Only a plain station counts its arrivals and each visit's
            // server time; a speed-curve, PS or latch station has no
            // overload figures rather than zeros.
            let Kind::Plain { .. } = st.kind else {
                continue;
            };
            let a = st.stats.offered as f64;
            out.overload = Some(ReplicationOverload {
                arrivals: st.stats.offered,
                work_s: x.work,
                abandonment_probability: ratio(x.abandoned as f64, a),
                balking_probability: ratio(x.balked as f64, a),
                shed_probability: ratio(x.shed as f64, a),
                wasted_work_fraction: ratio(x.wasted, x.work),
            });
        }
    }
}

impl Simulation {
    fn ct(&mut self) -> &mut ClientRt {
        self.client.as_mut().expect("client mode")
    }

    /// Job `j` moves from `from` to `to` in client mode (from `goto_slow`):
    /// an attempt starts on a move from outside and ends on a move out.
    /// Returns true when the move was handled here.
    pub(super) fn client_goto(&mut self, j: u32, from: u32, to: u32) -> bool {
        let class = self.jobs[j as usize].class as usize;
        let now = self.now;
        let measuring = self.measuring;
        let ct = self.client.as_mut().expect("client mode");
        let state = ct.job(j).state;
        if to == EXIT && state == State::Orphan {
            // The request of a client that gave up comes back: nobody
            // takes it.
            let jc = ct.job(j);
            jc.state = State::Idle;
            jc.attempts = 0;
            self.jobs[j as usize].station = EXIT;
            self.in_network -= 1;
            self.free.push(j);
            return true;
        }
        let Some(k) = ct.classes[class].as_mut() else {
            return false;
        };
        if from == EXIT && state != State::Live {
            // An attempt starts, unless an open circuit breaker fails it.
            let probe = match k.breaker.as_mut().map(|b| b.admit(now)) {
                Some(None) => {
                    if measuring {
                        k.stats.started += 1;
                        k.stats.fast_failed += 1;
                    }
                    self.client_fast_failed(j);
                    return true;
                }
                Some(Some(p)) => p,
                None => false,
            };
            let timeout = k.timeout.as_ref().map(|d| d.sample(&mut k.rng));
            #[cfg(feature = "bias")]
            let timeout = timeout.map(crate::bias::timeout);
            if measuring {
                k.stats.started += 1;
            }
            let first = ct.jobs.get(j as usize).is_none_or(|x| x.attempts == 0);
            if first && let Some(b) = k.budget {
                k.tokens = (k.tokens + b.ratio).min(b.cap);
            }
            let jc = ct.job(j);
            if first {
                jc.t0 = now;
            }
            jc.attempts += 1;
            jc.probe = probe;
            jc.state = State::Live;
            jc.tag = jc.tag.wrapping_add(1) & TAG_MASK;
            let (tag, t0) = (jc.tag, jc.t0);
            self.jobs[j as usize].t0 = t0;
            if let Some(d) = timeout {
                self.fel.push(later(now, d), ev(EV_TIMEOUT, tag, j));
            }
            if to == EXIT {
                self.client_success(j);
            } else {
                self.arrive(j, to as usize);
            }
            return true;
        }
        if to == EXIT && state == State::Live {
            self.client_success(j);
            return true;
        }
        false
    }

    /// An attempt of job `j` (from outside) that an open circuit breaker
    /// fails at once: its interaction fails, without retries.
    fn client_fast_failed(&mut self, j: u32) {
        let class = self.jobs[j as usize].class as usize;
        let measuring = self.measuring;
        let ct = self.ct();
        let jc = ct.job(j);
        let attempts = jc.attempts + 1;
        jc.state = State::Idle;
        jc.attempts = 0;
        jc.probe = false;
        if measuring && let Some(k) = ct.classes[class].as_mut() {
            k.stats.ended += 1;
            k.stats.ended_attempts += u64::from(attempts);
        }
        self.in_network -= 1;
        self.lost(j);
        self.count_failed_end();
    }

    /// The live attempt of job `j` succeeds: its interaction ends.
    fn client_success(&mut self, j: u32) {
        let class = self.jobs[j as usize].class as usize;
        let (now, measuring) = (self.now, self.measuring);
        let ct = self.ct();
        let jc = ct.job(j);
        let (attempts, t0, probe) = (jc.attempts, jc.t0, jc.probe);
        jc.probe = false;
        if let Some(b) = ct.classes[class].as_mut().and_then(|k| k.breaker.as_mut()) {
            b.record(false, probe, now);
        }
        let jc = ct.job(j);
        jc.state = State::Idle;
        jc.attempts = 0;
        jc.tag = jc.tag.wrapping_add(1) & TAG_MASK;
        if let Some(k) = ct.classes[class].as_mut() {
            k.good_total += u64::from(now - t0 <= k.deadline);
        }
        if let Some(k) = ct.classes[class].as_mut()
            && measuring
        {
            k.stats.ended += 1;
            k.stats.succeeded += 1;
            k.stats.good += u64::from(now - t0 <= k.deadline);
            k.stats.ended_attempts += u64::from(attempts);
        }
        self.exit(j);
    }

    /// A client whose attempt failed, now in record `k` outside the
    /// network: it retries after a backoff, or its interaction fails.
    fn client_failed(&mut self, k: u32) {
        let class = self.jobs[k as usize].class as usize;
        let now = self.now;
        let measuring = self.measuring;
        let ct = self.client.as_mut().expect("client mode");
        let attempts = ct.job(k).attempts;
        let probe = ct.job(k).probe;
        ct.job(k).state = State::Idle;
        ct.job(k).probe = false;
        let cl = ct.classes[class].as_mut().expect("a client class");
        if let Some(b) = &mut cl.breaker {
            b.record(true, probe, now);
        }
        let mut delay = None;
        if let Some((max, p, b)) = &cl.retry
            && attempts < *max
            && (*p >= 1.0 || unit(&mut cl.rng) < *p)
            && (cl.budget.is_none() || cl.tokens >= 1.0)
        {
            if cl.budget.is_some() {
                cl.tokens -= 1.0;
            }
            let d = if let Some(d) = &b.dist {
                d.sample(&mut cl.rng)
            } else if b.base > 0.0 {
                let k = attempts.saturating_sub(1).min(1023) as i32;
                let full = (b.base * 2f64.powi(k)).min(b.cap);
                if b.jitter > 0.0 {
                    full * (1.0 - b.jitter * unit(&mut cl.rng))
                } else {
                    full
                }
            } else {
                0.0
            };
            delay = Some(d);
        }
        match delay {
            Some(d) => {
                ct.retrying += 1;
                self.fel.push(later(now, d), ev(EV_RETRY, 0, k));
            }
            None => {
                if measuring {
                    cl.stats.ended += 1;
                    cl.stats.ended_attempts += u64::from(attempts);
                }
                ct.job(k).attempts = 0;
                self.lost(k);
                self.count_failed_end();
            }
        }
    }

    /// An interaction that ended in failure counts toward a job-counted
    /// stop and warm-up as a success does (`--jobs` counts ended
    /// interactions): a collapsed model whose goodput is 0 still ends its
    /// run instead of running on to the event limit.
    fn count_failed_end(&mut self) {
        if self.measuring {
            self.completions += 1;
            if self.completions >= self.next_mark {
                self.on_jobs_mark();
            }
        } else if let super::WarmPlan::Jobs(n) = self.warm {
            self.warm_count += 1;
            if self.warm_count >= n {
                self.start_measuring();
            }
        }
    }

    /// Job record `k`, outside the network, ends its interaction without
    /// success: an open class's record is freed, a closed job thinks.
    fn lost(&mut self, k: u32) {
        let class = self.jobs[k as usize].class as usize;
        self.jobs[k as usize].station = EXIT;
        if self.classes[class].open.is_some() {
            self.free.push(k);
        } else {
            self.think(k);
        }
    }

    /// A fresh record for the client of job `j`, whose own record stays
    /// with the request.
    fn client_record(&mut self, j: u32) -> u32 {
        let (class, t0, node) = {
            let job = &self.jobs[j as usize];
            (job.class, job.t0, job.node)
        };
        let k = self.alloc(class);
        let job = &mut self.jobs[k as usize];
        job.t0 = t0;
        job.node = node;
        let ct = self.ct();
        let src = *ct.job(j);
        let dst = ct.job(k);
        dst.attempts = src.attempts;
        dst.t0 = src.t0;
        dst.probe = src.probe;
        dst.state = State::Idle;
        dst.waiting = false;
        k
    }

    /// An attempt's timer: its client gives up, unless the attempt has
    /// ended (the tag differs).
    pub(super) fn on_client_timeout(&mut self, tag: u32, j: u32) {
        let class = self.jobs[j as usize].class as usize;
        let measuring = self.measuring;
        let ct = self.ct();
        let jc = ct.job(j);
        if jc.state != State::Live || jc.tag != tag {
            return;
        }
        self.events += 1;
        let ct = self.ct();
        let k = ct.classes[class].as_mut().expect("a client class");
        if measuring {
            k.stats.timeouts += 1;
        }
        let cancel = k.cancel;
        let jc = ct.job(j);
        jc.tag = jc.tag.wrapping_add(1) & TAG_MASK;
        let waiting = jc.waiting;
        let fresh = self.client_record(j);
        if cancel && waiting {
            self.leave_queue(j);
        } else {
            let now = self.now;
            let jc = self.ct().job(j);
            jc.state = State::Orphan;
            jc.t_gone = now;
        }
        self.client_failed(fresh);
    }

    /// A client's retry starts after its backoff.
    pub(super) fn on_client_retry(&mut self, k: u32) {
        self.events += 1;
        let ct = self.ct();
        ct.retrying = ct.retrying.saturating_sub(1);
        self.in_network += 1;
        self.check_unstable();
        self.jobs[k as usize].pos = 0;
        let to = self.next_target(k, EXIT);
        self.goto(k, EXIT, to);
    }

    /// Waiting job `j` leaves the queue it is in now (cancelled, reneged,
    /// shed): the station stops counting it, and its record is freed when
    /// the queue reaches it.
    fn leave_queue(&mut self, j: u32) {
        let now = self.now;
        let job = &mut self.jobs[j as usize];
        let s = job.station as usize;
        let (t_arr, class) = (job.t_arr, job.class as usize);
        job.station = EXIT;
        let st = &mut self.stations[s];
        if cfg!(debug_assertions) || st.stats.tails.is_some() {
            st.stats.acc(now);
        }
        st.stats.n -= 1;
        st.stats.sum_arr -= t_arr;
        // Its time there still counts in the area under the jobs present
        // (see `StStats::plain_areas`).
        st.stats.before_n -= now - t_arr;
        if let Some(pc) = &mut st.per_class {
            pc.acc(now, st.stats.busy);
            pc.leave_queue(class, now, t_arr);
        }
        self.in_network -= 1;
        let jc = self.ct().job(j);
        jc.state = State::Gone;
        jc.waiting = false;
        jc.wait_tag = jc.wait_tag.wrapping_add(1) & TAG_MASK;
    }

    /// Job `j` left the network without being served (reneged, balked,
    /// shed, refused by a full station): a live attempt fails (its client,
    /// in `k`, may retry), an orphan is done, and a job of a class without
    /// client behaviour ends its interaction unserved.
    fn unserved(&mut self, j: u32, k: u32) {
        let state = self.ct().job(j).state;
        match state {
            State::Live => {
                let jc = self.ct().job(j);
                jc.tag = jc.tag.wrapping_add(1) & TAG_MASK;
                self.client_failed(k);
            }
            State::Orphan | State::Gone => {
                if j == k {
                    self.ct().job(j).state = State::Idle;
                    self.free.push(j);
                }
            }
            State::Idle => self.lost(k),
        }
    }

    /// Job `j`, an arrival at plain station `s`, may balk (in client mode,
    /// before the capacity check). Returns true when it did.
    pub(super) fn client_balks(&mut self, j: u32, s: usize) -> bool {
        let n = self.stations[s].stats.n;
        let measuring = self.measuring;
        let ct = self.ct();
        let Some(sc) = ct.stations[s].as_mut() else {
            return false;
        };
        let balks = match &sc.balk {
            None => false,
            Some(Balk::AtLeast(k)) => n >= *k,
            Some(Balk::Probabilities(p)) => {
                let q = p[(n as usize).min(p.len() - 1)];
                q > 0.0 && (q >= 1.0 || unit(&mut sc.rng) < q)
            }
        };
        if !balks {
            return false;
        }
        if measuring {
            ct.stations_stats[s].balked += 1;
        }
        self.jobs[j as usize].station = EXIT;
        self.in_network -= 1;
        self.unserved(j, j);
        true
    }

    /// Job `j` was refused by full station `s` (client mode, from
    /// `drop_job`); the station has counted it.
    pub(super) fn client_refused(&mut self, j: u32) {
        self.jobs[j as usize].station = EXIT;
        self.in_network -= 1;
        self.unserved(j, j);
    }

    /// Job `j` has just joined the queue of plain station `s`: its
    /// patience starts.
    pub(super) fn client_queued(&mut self, j: u32, s: usize) {
        let now = self.now;
        let ct = self.ct();
        let patience = ct.stations[s]
            .as_mut()
            .and_then(|sc| sc.patience.as_ref().map(|d| d.sample(&mut sc.rng)));
        let jc = ct.job(j);
        jc.waiting = true;
        jc.wait_tag = jc.wait_tag.wrapping_add(1) & TAG_MASK;
        let tag = jc.wait_tag;
        if let Some(d) = patience {
            self.fel.push(later(now, d), ev(EV_RENEGE, tag, j));
        }
    }

    /// A waiting job's patience ran out, unless it has left the queue
    /// since (the tag differs).
    pub(super) fn on_renege(&mut self, tag: u32, j: u32) {
        let jc = self.ct().job(j);
        if !jc.waiting || jc.wait_tag != tag {
            return;
        }
        self.events += 1;
        let s = self.jobs[j as usize].station as usize;
        if self.measuring {
            self.ct().stations_stats[s].abandoned += 1;
        }
        self.drop_from_queue(j);
    }

    /// Waiting job `j` leaves its queue unserved (reneging, shedding).
    fn drop_from_queue(&mut self, j: u32) {
        let state = self.ct().job(j).state;
        let k = if matches!(state, State::Live | State::Idle) {
            self.client_record(j)
        } else {
            j
        };
        self.leave_queue(j);
        if state == State::Idle || state == State::Live {
            // `leave_queue` marked `j` gone; the client, in `k`, carries on.
            let jc = self.ct().job(j);
            jc.tag = jc.tag.wrapping_add(1) & TAG_MASK;
            if state == State::Live {
                self.client_failed(k);
            } else {
                self.lost(k);
            }
        }
    }

    /// The next job of plain station `s`'s queue to serve (client mode):
    /// the oldest, or the newest while the station holds at least its
    /// `lcfs_from` jobs (adaptive LIFO); records marked gone are freed on
    /// the way, and a job whose wait passed the station's shedding
    /// deadline is dropped.
    pub(super) fn client_pop(&mut self, s: usize) -> Option<u32> {
        let now = self.now;
        let lcfs_from = self
            .client
            .as_ref()
            .and_then(|ct| ct.stations[s].as_ref())
            .map_or(u32::MAX, |x| x.lcfs_from);
        loop {
            let st = &mut self.stations[s];
            let nx = if st.stats.n >= lcfs_from {
                st.waiting.pop_newest()?
            } else {
                st.waiting.pop()?
            };
            let ct = self.ct();
            let jc = ct.job(nx);
            if jc.state == State::Gone {
                jc.state = State::Idle;
                jc.attempts = 0;
                self.free.push(nx);
                continue;
            }
            jc.waiting = false;
            jc.wait_tag = jc.wait_tag.wrapping_add(1) & TAG_MASK;
            let shed_after = ct.stations[s]
                .as_ref()
                .map_or(f64::INFINITY, |x| x.shed_after);
            if now - self.jobs[nx as usize].t_arr > shed_after {
                if self.measuring {
                    self.ct().stations_stats[s].shed += 1;
                }
                // Put back as waiting so that it leaves like a reneging job.
                self.ct().job(nx).waiting = true;
                self.drop_from_queue(nx);
                // Its record is marked gone but no longer in the queue.
                let jc = self.ct().job(nx);
                if jc.state == State::Gone {
                    jc.state = State::Idle;
                    jc.attempts = 0;
                    self.free.push(nx);
                }
                continue;
            }
            return Some(nx);
        }
    }

    /// Job `j` finished a visit at plain station `s` (client mode): its
    /// server time counts as work, and the part of it after its client
    /// gave up as wasted work.
    pub(super) fn client_depart(&mut self, s: usize, j: u32) {
        if !self.measuring
            || !matches!(self.stations[s].kind, Kind::Plain { c, .. } if c != u32::MAX)
        {
            return;
        }
        let (now, t_start) = (self.now, self.jobs[j as usize].t_start);
        let jc = *self.ct().job(j);
        let st = &mut self.ct().stations_stats[s];
        st.work += now - t_start;
        if jc.state == State::Orphan {
            // Only the time after the client gave up is wasted.
            st.wasted += now - t_start.max(jc.t_gone);
        }
    }
}
