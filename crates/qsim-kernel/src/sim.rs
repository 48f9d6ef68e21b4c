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

use crate::config::{RunConfig, Stop, Warmup};
use crate::dist::{Dist, unit};
use crate::fel::Fel;
use crate::hist::Histogram;
use crate::network::*;
use crate::results::*;
use crate::rng::{self, SimRng};
use crate::run::RunError;
use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// "No station" / "leave the network" marker in routing.
const EXIT: u32 = u32::MAX;
/// Job slot id meaning "none".
const NONE: u32 = u32::MAX;

// Event kinds (low 8 bits of a packed event); operand `a` is bits 8..32,
// operand `b` bits 32..64.
const EV_ARRIVAL: u64 = 0; // a = class
const EV_THINK: u64 = 1; // b = job
const EV_DONE: u64 = 2; // a = station, b = job (fixed-speed completion)
const EV_VDONE: u64 = 3; // a = station, b = version (virtual-clock completion)
const EV_WARMUP: u64 = 4; // control: end of a timed warm-up
const EV_STOP: u64 = 5; // control: end of a timed run
const EV_BATCH_TIMER: u64 = 6; // a = station, b = version
const EV_GROUP_DONE: u64 = 7; // a = station, b = slot (batch / link)
const EV_LATCH_GRANT: u64 = 8; // a = station, b = job: hand-off finished, job holds the latch
const EV_LATCH_POLL: u64 = 9; // a = station, b = version: a waiter polls or is switched back in
const EV_LATCH_DONE: u64 = 11; // a = station, b = version: critical section over

#[inline(always)]
fn ev(kind: u64, a: u32, b: u32) -> u64 {
    kind | (u64::from(a) << 8) | (u64::from(b) << 32)
}

/// Adds a non-negative duration to a time without ever reaching infinity.
#[inline(always)]
fn later(now: f64, d: f64) -> f64 {
    (now + d).min(f64::MAX)
}

/// A distribution with the common cases unpacked so that sampling them
/// inlines into the event handlers.
#[derive(Clone, Debug)]
#[repr(u8)]
enum Sampler {
    Exp(f64),
    Det(f64),
    /// Boxed so that the enum has a plain tag: telling `Exp` apart is one
    /// compare instead of decoding `Dist`'s niche.
    Any(Box<Dist>),
}

impl Sampler {
    fn new(d: &Dist) -> Sampler {
        if d.is_exponential() {
            Sampler::Exp(d.mean())
        } else if d.variance() == 0.0 {
            // Every family with zero variance always returns its mean.
            Sampler::Det(d.mean())
        } else {
            Sampler::Any(Box::new(d.clone()))
        }
    }

    #[inline(always)]
    fn sample(&self, rng: &mut SimRng) -> f64 {
        match self {
            Sampler::Exp(m) => crate::dist::exp1(rng) * m,
            Sampler::Det(v) => *v,
            Sampler::Any(d) => d.sample(rng),
        }
    }
}

/// One job (or fork sub-job) in the slab.
#[derive(Clone, Copy, Debug, Default)]
struct Job {
    /// Start of the interaction (leaving think, or arrival).
    t0: f64,
    /// Arrival at the current station.
    t_arr: f64,
    /// Start of service at the current station.
    t_start: f64,
    class: u32,
    /// Next index in a sequence route.
    pos: u32,
    /// Current station (or EXIT while thinking / outside).
    station: u32,
    /// Fork record of a sub-job, or NONE.
    fork: u32,
    /// Target station while waiting for region admission.
    pending: u32,
    /// Polls done by a spinning latch waiter.
    polls: u32,
    /// Thread number (placement of closed jobs on NUMA nodes).
    node: u32,
}

/// Branches of probabilistic routing with cumulative probabilities.
#[derive(Clone, Debug)]
struct Branches {
    targets: Vec<u32>,
    cum: Vec<f64>,
    /// The first four entries of `cum`, padded with +inf, and of `targets`,
    /// padded with EXIT: with at most four branches a pick is one draw and
    /// four branch-free compares.
    cum4: [f64; 4],
    targets4: [u32; 4],
}

impl Default for Branches {
    fn default() -> Self {
        Branches {
            targets: Vec::new(),
            cum: Vec::new(),
            cum4: [f64::INFINITY; 4],
            targets4: [EXIT; 4],
        }
    }
}

impl Branches {
    fn new(list: &[(Target, f64)]) -> Branches {
        let mut b = Branches::default();
        let mut acc = 0.0;
        for &(t, p) in list {
            if p <= 0.0 {
                continue;
            }
            acc += p;
            b.targets.push(match t {
                Target::Station(s) => s as u32,
                Target::Exit => EXIT,
            });
            b.cum.push(acc);
        }
        if let Some(last) = b.cum.last_mut() {
            // Guard against rounding: the last branch catches everything.
            *last = f64::INFINITY;
        }
        for (k, (&c, &t)) in b.cum.iter().zip(&b.targets).take(4).enumerate() {
            b.cum4[k] = c;
            b.targets4[k] = t;
        }
        b
    }

    /// A branch drawn with one uniform number; a single branch takes no
    /// draw.
    #[inline(always)]
    fn pick(&self, rng: &mut SimRng) -> u32 {
        if self.targets.len() == 1 {
            return self.targets4[0];
        }
        if self.targets.len() <= 4 {
            let u = unit(rng);
            let c = &self.cum4;
            // Branches before the one drawn: the last real entry is +inf,
            // so k < 4.
            let k = usize::from(u >= c[0])
                + usize::from(u >= c[1])
                + usize::from(u >= c[2])
                + usize::from(u >= c[3]);
            return self.targets4[k & 3];
        }
        match self.targets.len() {
            0 => EXIT,
            1 => self.targets[0],
            _ => {
                // One uniform draw against the cumulative table (the last
                // entry is +inf, so the scan always stops inside it).
                let u = unit(rng);
                for (&c, &t) in self.cum.iter().zip(&self.targets) {
                    if u < c {
                        return t;
                    }
                }
                EXIT
            }
        }
    }
}

/// `repr(u8)` (here and on `Waiting`, `Sampler`): an explicit tag, so a
/// match is one compare instead of decoding a niche in a `Vec`.
#[derive(Clone, Debug)]
#[repr(u8)]
enum Route {
    Seq(Vec<u32>),
    Prob {
        entry: Branches,
        from: Vec<Branches>,
        /// The rows as given (empty where the class has none): fork
        /// sub-jobs follow these and go to their join where there is none.
        sub: Vec<Branches>,
    },
}

/// Additive statistics of one class.
#[derive(Clone, Debug, Default)]
struct ClassStats {
    completions: u64,
    sum_resp: f64,
    sla_over: u64,
    hist: Histogram,
}

struct ClassRt {
    rng: SimRng,
    open: Option<Sampler>,
    think: Option<Sampler>,
    route: Route,
    priority: i32,
    stats: ClassStats,
}

/// Additive statistics of one station.
///
/// Time-weighted sums come in two forms. Stations of most kinds integrate
/// them with [`StStats::acc`] at every change of `n` or `busy`. Plain
/// queue and delay stations (fixed speed, the hot path) skip that: their
/// time-weighted sums follow from per-job sums, since the time jobs spend
/// present adds up to the area under `n` (Little's law holds path by path).
/// They keep `sum_arr`, the sum of arrival times of the jobs present, and
/// `sum_start`, the sum of service start times of the jobs in service, so
/// that `n * t - sum_arr` is the time the present jobs have spent so far;
/// see [`StStats::plain_areas`]. Any code that changes `n`, `busy`, a job's
/// `t_arr` or `t_start` at a plain station must keep these two sums in
/// step; debug builds (the tests) also integrate the areas with `acc` and
/// compare both in `result`.
#[derive(Clone, Copy, Debug, Default)]
struct StStats {
    /// Jobs present (queued and in service).
    n: u32,
    /// Busy servers.
    busy: u32,
    last: f64,
    area_n: f64,
    area_busy: f64,
    /// Plain stations: sum of `t_arr` over the jobs present.
    sum_arr: f64,
    /// Plain stations: sum of `t_start` over the jobs in service.
    sum_start: f64,
    /// Plain stations: time the jobs present at the start of the
    /// measurement had spent there (present, in service) before it.
    before_n: f64,
    before_busy: f64,
    departures: u64,
    sum_resp: f64,
    sum_wait: f64,
    batches: u64,
    batch_jobs: u64,
}

impl StStats {
    /// Integrates the time-weighted sums up to `now`; call before changing
    /// `n` or `busy`.
    #[inline(always)]
    fn acc(&mut self, now: f64) {
        let dt = now - self.last;
        self.area_n += f64::from(self.n) * dt;
        self.area_busy += f64::from(self.busy) * dt;
        self.last = now;
    }

    fn reset(&mut self, now: f64) {
        *self = StStats {
            n: self.n,
            busy: self.busy,
            last: now,
            sum_arr: self.sum_arr,
            sum_start: self.sum_start,
            before_n: f64::from(self.n) * now - self.sum_arr,
            before_busy: f64::from(self.busy) * now - self.sum_start,
            ..StStats::default()
        };
    }

    /// Areas under `n` and `busy` from the start of the measurement to
    /// `now` for a plain station: the time spent by the jobs that departed
    /// (`sum_resp`; in service: `sum_resp - sum_wait`) plus that of the
    /// jobs still present, minus what the jobs present at the start had
    /// spent before it.
    /// A delay station has no servers: its busy area is 0.
    fn plain_areas(&self, now: f64, servers: bool) -> (f64, f64) {
        let area_n = self.sum_resp + (f64::from(self.n) * now - self.sum_arr) - self.before_n;
        let area_busy = if servers {
            (self.sum_resp - self.sum_wait) + (f64::from(self.busy) * now - self.sum_start)
                - self.before_busy
        } else {
            0.0
        };
        // Both are sums of non-negative durations; only rounding can take
        // them below 0, by far less than this.
        debug_assert!(
            area_n > -1e-9 * (1.0 + self.sum_resp.abs() + now * f64::from(self.n))
                && area_busy > -1e-9 * (1.0 + self.sum_resp.abs() + now * f64::from(self.busy)),
            "negative area: a path changed a plain station without its sums: {self:?}"
        );
        (area_n.max(0.0), area_busy.max(0.0))
    }
}

/// A FIFO of job ids in a power-of-two ring: push and pop are a mask and
/// an index (no capacity branch on the hot path besides "full").
#[derive(Clone, Debug)]
struct Ring {
    buf: Vec<u32>,
    head: usize,
    len: usize,
}

impl Ring {
    fn new() -> Ring {
        Ring {
            buf: vec![0; 16],
            head: 0,
            len: 0,
        }
    }

    #[inline(always)]
    fn push_back(&mut self, j: u32) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let mask = self.buf.len() - 1;
        let i = (self.head + self.len) & mask;
        // SAFETY: i is masked into 0..buf.len() (a power of two).
        unsafe { *self.buf.get_unchecked_mut(i) = j };
        self.len += 1;
    }

    #[inline(always)]
    fn pop_front(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        // SAFETY: head is always kept in 0..buf.len().
        let j = unsafe { *self.buf.get_unchecked(self.head) };
        self.head = (self.head + 1) & (self.buf.len() - 1);
        self.len -= 1;
        Some(j)
    }

    #[cold]
    fn grow(&mut self) {
        let old = self.buf.len();
        let mut buf = vec![0; old * 2];
        for (k, slot) in buf.iter_mut().take(self.len).enumerate() {
            *slot = self.buf[(self.head + k) & (old - 1)];
        }
        self.buf = buf;
        self.head = 0;
    }
}

/// Jobs waiting for service, in discipline order.
#[derive(Clone, Debug)]
#[repr(u8)]
enum Waiting {
    Fifo(Ring),
    Lifo(Vec<u32>),
    /// (priority, FIFO tie-break, job).
    Prio(BinaryHeap<(i32, Reverse<u64>, u32)>, u64),
}

impl Waiting {
    fn new(d: Discipline) -> Waiting {
        match d {
            Discipline::Lcfs => Waiting::Lifo(Vec::new()),
            Discipline::Priority => Waiting::Prio(BinaryHeap::new(), 0),
            _ => Waiting::Fifo(Ring::new()),
        }
    }
    #[inline(always)]
    fn push(&mut self, j: u32, prio: i32) {
        match self {
            Waiting::Fifo(q) => q.push_back(j),
            Waiting::Lifo(q) => q.push(j),
            Waiting::Prio(q, seq) => {
                q.push((prio, Reverse(*seq), j));
                *seq += 1;
            }
        }
    }
    #[inline(always)]
    fn pop(&mut self) -> Option<u32> {
        match self {
            Waiting::Fifo(q) => q.pop_front(),
            Waiting::Lifo(q) => q.pop(),
            Waiting::Prio(q, _) => q.pop().map(|x| x.2),
        }
    }
    fn len(&self) -> usize {
        match self {
            Waiting::Fifo(q) => q.len,
            Waiting::Lifo(q) => q.len(),
            Waiting::Prio(q, _) => q.len(),
        }
    }
}

/// A tiny binary min-heap of (finish tag bits, job).
#[derive(Clone, Debug, Default)]
struct TagHeap {
    h: Vec<(u64, u32)>,
}

impl TagHeap {
    #[inline]
    fn len(&self) -> usize {
        self.h.len()
    }
    #[inline]
    fn push(&mut self, tag: f64, j: u32) {
        let e = ((tag + 0.0).to_bits(), j);
        let mut i = self.h.len();
        self.h.push(e);
        while i > 0 {
            let p = (i - 1) / 2;
            if e < self.h[p] {
                self.h[i] = self.h[p];
                i = p;
            } else {
                break;
            }
        }
        self.h[i] = e;
    }
    #[inline]
    fn min_tag(&self) -> Option<f64> {
        self.h.first().map(|e| f64::from_bits(e.0))
    }
    #[inline]
    fn pop(&mut self) -> Option<(f64, u32)> {
        let last = self.h.pop()?;
        let n = self.h.len();
        if n == 0 {
            return Some((f64::from_bits(last.0), last.1));
        }
        let top = self.h[0];
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.h[r] < self.h[l] { r } else { l };
            if self.h[c] < last {
                self.h[i] = self.h[c];
                i = c;
            } else {
                break;
            }
        }
        self.h[i] = last;
        Some((f64::from_bits(top.0), top.1))
    }
}

/// Contention-dependent speed with a cache of integer points.
#[derive(Clone, Debug)]
struct SpeedRt {
    speed: Speed,
    cache: Vec<f64>,
}

impl SpeedRt {
    fn new(speed: Speed) -> SpeedRt {
        let cache = (0..=1024u32)
            .map(|n| speed.rate(f64::from(n.max(1))))
            .collect();
        SpeedRt { speed, cache }
    }
    #[inline]
    fn rate(&self, n: u32) -> f64 {
        match self.cache.get(n as usize) {
            Some(&r) => r,
            None => self.speed.rate(f64::from(n)),
        }
    }
}

/// Which jobs a virtual-clock station serves at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum VMode {
    /// Up to `c` jobs in service, the rest wait (FCFS, LCFS, priority, latch).
    Queue,
    /// Every job present is in service, sharing the capacity.
    Shared,
}

/// Virtual-work clock of a station with a speed curve or PS.
#[derive(Clone, Debug)]
struct VClock {
    mode: VMode,
    /// Servers (u32::MAX for a delay station).
    c: u32,
    speed: Option<SpeedRt>,
    v: f64,
    /// Per-job work rate in effect since `last`.
    g: f64,
    last: f64,
    version: u32,
    insvc: TagHeap,
    pending: bool,
    pend_tag: f64,
    pend_g: f64,
    dirty: bool,
    /// Latch threads burning this station's capacity (spinning, being
    /// switched in, or running a critical section): they share it like
    /// jobs but never complete here.
    spinners: u32,
    /// Latches whose threads run here (`spin.cpu`): re-timed when the
    /// share of a thread here changes.
    latches: Vec<u32>,
}

impl VClock {
    #[inline(always)]
    fn advance(&mut self, now: f64) {
        self.v += self.g * (now - self.last);
        self.last = now;
    }

    /// Per-job work rate with `n` present and `k` in service; latch
    /// spinners count as present and in service (a PS share each).
    #[inline]
    fn per_job(&self, n: u32, k: u32) -> f64 {
        let (n, k) = (n + self.spinners, k + self.spinners);
        let total = match &self.speed {
            Some(s) => s.rate(n),
            None => f64::from(n.min(self.c)),
        };
        total / f64::from(k.max(1))
    }

    /// Busy servers: jobs in service plus spinners, at most `c`.
    #[inline(always)]
    fn busy(&self) -> u32 {
        (self.insvc.len() as u32 + self.spinners).min(self.c)
    }
}

/// NUMA placement and hand-off state of a latch.
#[derive(Clone, Debug)]
struct LatchRt {
    numa: Option<NumaSpec>,
    spin: Option<SpinSpec>,
    wake: Wake,
    /// Upper bound of one poll wait in seconds.
    poll_max_s: f64,
    speed: Option<SpeedRt>,
    rng: SimRng,
    /// Holding, or reserved for a job in hand-off / a woken sleeper.
    held: bool,
    /// Node of the last holder.
    holder_node: u32,
    /// Waiters that sleep (FIFO).
    sleepers: VecDeque<u32>,
    /// Waiters spinning right now.
    spinners: u32,
    /// The PS station whose capacity spinning and waking waiters and the
    /// holder use.
    cpu: Option<usize>,
    /// Thread time: CPU seconds received by each of this latch's threads on
    /// `cpu` (wall time without one), as of `t_since`. It advances at
    /// `t_share`, a thread's share of a core there, so a PAUSE loop or a
    /// context switch that needs w seconds of CPU takes w / share.
    t_clock: f64,
    t_share: f64,
    t_since: f64,
    /// Spinners' next polls and woken sleepers' ends of switch-in
    /// (job | `WAKING`), keyed by thread time.
    waits: TagHeap,
    /// The one live poll event: its version, and the tag and share it was
    /// timed with.
    wait_version: u32,
    wait_pending: bool,
    wait_tag: f64,
    wait_share: f64,
    /// Holder whose critical section is running (NONE during a hand-off
    /// or when free).
    cs_job: u32,
    /// Version of the live critical-section end event (re-timing makes
    /// the older ones stale).
    cs_version: u32,
    /// Remaining work of the running critical section (seconds at
    /// nominal speed, or units of work with a speed curve) as of `cs_since`.
    cs_work: f64,
    /// Speed applied to it since `cs_since`.
    cs_rate: f64,
    cs_since: f64,
    /// Woken sleepers being switched back in (`WAKING` entries of `waits`).
    waking: u32,
    /// Measured areas under `spinners` and under the sleeping threads
    /// (`sleepers` plus `waking`), integrated up to `counts_since` by
    /// [`LatchRt::acc_waiters`] before every change of those counts.
    area_spin: f64,
    area_sleep: f64,
    counts_since: f64,
}

/// Marks a woken sleeper (switching in) in `LatchRt::waits`; job ids stay
/// far below it.
const WAKING: u32 = 1 << 31;

impl LatchRt {
    /// Brings the thread clock to `now`.
    #[inline]
    fn advance(&mut self, now: f64) {
        self.t_clock += self.t_share * (now - self.t_since);
        self.t_since = now;
    }

    /// Threads asleep on the latch: queued sleepers and woken ones still
    /// being switched back in.
    #[inline]
    fn sleeping(&self) -> u32 {
        self.sleepers.len() as u32 + self.waking
    }

    /// Integrates the spinning and sleeping areas up to `now`; call before
    /// changing `spinners`, `sleepers` or `waking`.
    #[inline]
    fn acc_waiters(&mut self, now: f64) {
        let dt = now - self.counts_since;
        self.area_spin += f64::from(self.spinners) * dt;
        self.area_sleep += f64::from(self.sleeping()) * dt;
        self.counts_since = now;
    }

    /// One `ut_delay`: a uniform draw in [0, poll_max_s) of thread time.
    fn draw_poll(&mut self) -> f64 {
        self.poll_max_s * unit(&mut self.rng)
    }
}

/// Batch (group commit) and link state.
#[derive(Clone, Debug)]
struct GroupRt {
    /// Jobs per group at most.
    max_batch: u32,
    /// Per-job service added to a batch.
    per_job_s: f64,
    max_wait_s: Option<f64>,
    /// Jobs of each in-flight slot.
    groups: Vec<Vec<u32>>,
    free_slots: Vec<u32>,
    timer_version: u32,
    timer_armed: bool,
}

#[derive(Clone, Debug)]
struct ForkRt {
    fan_out: u32,
    targets: Vec<u32>,
    cum: Vec<f64>,
    random: bool,
    join: u32,
    next: u32,
    rng: SimRng,
}

#[derive(Clone, Debug)]
enum Kind {
    /// Infinite servers, fixed speed.
    Delay,
    /// `c` servers, fixed speed.
    Queue {
        c: u32,
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

struct StationRt {
    stats: StStats,
    rng: SimRng,
    /// Service per class (zero for classes that never visit).
    service: Vec<Sampler>,
    /// 1 / mean service per class (0 when the mean is 0): normalizes work
    /// for stations with a speed curve.
    inv_mean: Vec<f64>,
    kind: Kind,
    waiting: Waiting,
    /// Denominator of utilization (0: always report 0).
    servers: f64,
    /// Regions the station belongs to.
    regions: Vec<u32>,
}

/// A fork in progress: the parent waits at the join for its sub-jobs.
#[derive(Clone, Copy, Debug, Default)]
struct ForkRec {
    parent: u32,
    /// The fork station: where the parent stands for region accounting.
    fork: u32,
    join: u32,
    needed: u32,
    arrived: u32,
    outstanding: u32,
    released: bool,
}

#[derive(Clone, Debug, Default)]
struct RegionStats {
    last: f64,
    area_inside: f64,
    area_waiting: f64,
    admitted: u64,
    sum_wait: f64,
}

struct RegionRt {
    limit: u32,
    inside: u32,
    members: Vec<bool>,
    queue: VecDeque<u32>,
    stats: RegionStats,
}

impl RegionRt {
    #[inline]
    fn acc(&mut self, now: f64) {
        let dt = now - self.stats.last;
        self.stats.area_inside += f64::from(self.inside) * dt;
        self.stats.area_waiting += self.queue.len() as f64 * dt;
        self.stats.last = now;
    }
}

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

/// Batch means of system response times for MSER-5 with bounded memory.
///
/// Observations are summed in batches of 5; when 512 batches exist,
/// neighbours are merged pairwise and the batch size doubles, so memory
/// stays at most 512 sums whatever the run length.
#[derive(Clone, Debug)]
pub(crate) struct Mser {
    batch: u64,
    cur_sum: f64,
    cur_n: u64,
    sums: Vec<f64>,
}

impl Mser {
    fn new() -> Mser {
        Mser {
            batch: 5,
            cur_sum: 0.0,
            cur_n: 0,
            sums: Vec::with_capacity(512),
        }
    }

    #[inline]
    fn push(&mut self, x: f64) {
        self.cur_sum += x;
        self.cur_n += 1;
        if self.cur_n == self.batch {
            self.sums.push(self.cur_sum);
            self.cur_sum = 0.0;
            self.cur_n = 0;
            if self.sums.len() == 512 {
                for i in 0..256 {
                    self.sums[i] = self.sums[2 * i] + self.sums[2 * i + 1];
                }
                self.sums.truncate(256);
                self.batch *= 2;
            }
        }
    }

    /// Observations to discard: d·batch where d minimizes
    /// MSER(d) = Σ_{j>d}(Z_j − Z̄_d)² / (m−d)² over d ≤ m/2.
    pub(crate) fn truncation(&self) -> u64 {
        let m = self.sums.len();
        if m < 4 {
            return 0;
        }
        let b = self.batch as f64;
        let z: Vec<f64> = self.sums.iter().map(|s| s / b).collect();
        // Suffix sums of z and z².
        let mut s1 = vec![0.0; m + 1];
        let mut s2 = vec![0.0; m + 1];
        for j in (0..m).rev() {
            s1[j] = s1[j + 1] + z[j];
            s2[j] = s2[j + 1] + z[j] * z[j];
        }
        let mut best = (f64::INFINITY, 0);
        for d in 0..=m / 2 {
            let k = (m - d) as f64;
            let ss = (s2[d] - s1[d] * s1[d] / k).max(0.0);
            let stat = ss / (k * k);
            if stat < best.0 {
                best = (stat, d);
            }
        }
        best.1 as u64 * self.batch
    }
}

/// One replication of a network that can be advanced step by step.
///
/// Build it with [`Simulation::new`], then call [`Simulation::run`] (to the
/// stopping rule of the [`RunConfig`]), [`Simulation::step`] or
/// [`Simulation::run_until`], and read [`Simulation::result`]. With
/// [`Warmup::Mser5`] a `Simulation` measures from time zero (the truncation
/// is chosen by [`crate::run_replication`], which needs the whole run).
pub struct Simulation {
    now: f64,
    fel: Fel,
    jobs: Vec<Job>,
    free: Vec<u32>,
    stations: Vec<StationRt>,
    classes: Vec<ClassRt>,
    regions: Vec<RegionRt>,
    forks: Vec<ForkRec>,
    free_forks: Vec<u32>,
    route_rng: SimRng,
    dirty: Vec<u32>,
    /// Spin cpus whose population changed in this event (see `flush`).
    spin_dirty: Vec<u32>,
    events: u64,
    in_network: u64,
    max_jobs: u64,
    max_events: u64,
    /// `max_events + 1`, or 0 once `error` is set: the event loop stops
    /// when `events >= event_cap`, one compare for both conditions.
    event_cap: u64,
    measuring: bool,
    measure_start: f64,
    warm: WarmPlan,
    stop: StopPlan,
    warm_count: u64,
    completions: u64,
    finished: bool,
    sla: f64,
    mser: Option<Mser>,
    error: Option<RunError>,
    index: u32,
    names: Vec<String>,
}

fn kind_name(k: &StationKind) -> &'static str {
    match k {
        StationKind::Delay => "delay",
        StationKind::Queue { .. } => "queue",
        StationKind::Latch(_) => "latch",
        StationKind::Batch(_) => "batch",
        StationKind::Link(_) => "link",
        StationKind::Fork(_) => "fork",
        StationKind::Join(_) => "join",
    }
}

/// The name of a station kind as used in results (`delay`, `queue`, ...).
pub(crate) fn station_kind_name(k: &StationKind) -> &'static str {
    kind_name(k)
}

impl Simulation {
    /// Sets up replication `index` of `network` under `config`, with every
    /// closed job placed per the network's initial state.
    pub fn new(network: &Network, config: &RunConfig, index: u32) -> Result<Simulation, RunError> {
        crate::run::check_config(config)?;
        let warm = match config.warmup {
            Warmup::None | Warmup::Mser5 => WarmPlan::None,
            Warmup::Jobs(n) => WarmPlan::Jobs(n),
            Warmup::Time(t) => WarmPlan::Time(t),
        };
        let stop = match config.stop {
            Stop::Jobs(n) => StopPlan::Jobs(n),
            Stop::Time(t) => StopPlan::Time(t),
        };
        let mser = matches!(config.warmup, Warmup::Mser5);
        Ok(Simulation::with_plan(
            network, config, index, warm, stop, mser,
        ))
    }

    pub(crate) fn with_plan(
        network: &Network,
        config: &RunConfig,
        index: u32,
        warm: WarmPlan,
        stop: StopPlan,
        mser: bool,
    ) -> Simulation {
        let spec = network.spec();
        let seed = config.seed;
        let nc = spec.classes.len();
        let mut stations = Vec::with_capacity(spec.stations.len());
        for (s, st) in spec.stations.iter().enumerate() {
            let service: Vec<Dist> = (0..nc)
                .map(|c| {
                    st.service
                        .get(c)
                        .cloned()
                        .flatten()
                        .unwrap_or_else(|| Dist::deterministic(0.0).expect("zero is valid"))
                })
                .collect();
            let inv_mean = service
                .iter()
                .map(|d: &Dist| {
                    let m = d.mean();
                    if m > 0.0 { 1.0 / m } else { 0.0 }
                })
                .collect();
            let speed = st.speed.clone().map(SpeedRt::new);
            let vclock = |mode: VMode, c: u32, speed: Option<SpeedRt>| {
                Kind::V(Box::new(VClock {
                    mode,
                    c,
                    speed,
                    v: 0.0,
                    g: 0.0,
                    last: 0.0,
                    version: 0,
                    insvc: TagHeap::default(),
                    pending: false,
                    pend_tag: 0.0,
                    pend_g: 0.0,
                    dirty: false,
                    spinners: 0,
                    latches: Vec::new(),
                }))
            };
            let mech_rng = rng::stream(seed, index, rng::mechanism_stream(s));
            let (kind, waiting, servers) = match &st.kind {
                StationKind::Delay => match speed {
                    None => (Kind::Delay, Waiting::new(Discipline::Fcfs), 0.0),
                    Some(sp) => (
                        vclock(VMode::Shared, u32::MAX, Some(sp)),
                        Waiting::new(Discipline::Fcfs),
                        0.0,
                    ),
                },
                StationKind::Queue {
                    servers,
                    discipline,
                } => {
                    let c = *servers;
                    let k = match (discipline, speed) {
                        (Discipline::Ps, sp) => vclock(VMode::Shared, c, sp),
                        (_, None) => Kind::Queue { c },
                        (_, Some(sp)) => vclock(VMode::Queue, c, Some(sp)),
                    };
                    (k, Waiting::new(*discipline), f64::from(c))
                }
                StationKind::Latch(l) => {
                    let k = if l.numa.is_none() && l.spin.is_none() {
                        // A plain latch is a single FCFS server.
                        match speed {
                            None => Kind::Queue { c: 1 },
                            Some(sp) => vclock(VMode::Queue, 1, Some(sp)),
                        }
                    } else {
                        let poll_max_s = l.spin.as_ref().map_or(0.0, |sp| {
                            sp.spin_wait_delay * sp.pauses_per_unit * sp.pause_cycles / sp.clock_ghz
                                * 1e-9
                        });
                        Kind::Latch(Box::new(LatchRt {
                            numa: l.numa.clone(),
                            spin: l.spin.clone(),
                            wake: l.wake,
                            poll_max_s,
                            speed,
                            rng: mech_rng.clone(),
                            held: false,
                            holder_node: 0,
                            sleepers: VecDeque::new(),
                            spinners: 0,
                            cpu: l.spin.as_ref().and_then(|s| s.cpu),
                            t_clock: 0.0,
                            t_share: 1.0,
                            t_since: 0.0,
                            waits: TagHeap::default(),
                            wait_version: 0,
                            wait_pending: false,
                            wait_tag: 0.0,
                            wait_share: 0.0,
                            cs_job: NONE,
                            cs_version: 0,
                            cs_work: 0.0,
                            cs_rate: 1.0,
                            cs_since: 0.0,
                            waking: 0,
                            area_spin: 0.0,
                            area_sleep: 0.0,
                            counts_since: 0.0,
                        }))
                    };
                    (k, Waiting::new(Discipline::Fcfs), 1.0)
                }
                StationKind::Batch(b) => (
                    Kind::Group(Box::new(GroupRt {
                        max_batch: b.max_batch,
                        per_job_s: b.per_job_s,
                        max_wait_s: b.max_wait_s,
                        groups: vec![Vec::new()],
                        free_slots: vec![0],
                        timer_version: 0,
                        timer_armed: false,
                    })),
                    Waiting::new(Discipline::Fcfs),
                    1.0,
                ),
                StationKind::Link(l) => (
                    Kind::Group(Box::new(GroupRt {
                        max_batch: l.max_batch,
                        per_job_s: 0.0,
                        max_wait_s: None,
                        groups: vec![Vec::new(); l.pipeline as usize],
                        free_slots: (0..l.pipeline).rev().collect(),
                        timer_version: 0,
                        timer_armed: false,
                    })),
                    Waiting::new(Discipline::Fcfs),
                    f64::from(l.pipeline),
                ),
                StationKind::Fork(f) => {
                    let mut acc = 0.0;
                    let mut cum = Vec::new();
                    for &(_, w) in &f.targets {
                        acc += w;
                        cum.push(acc);
                    }
                    for c in cum.iter_mut() {
                        *c /= acc;
                    }
                    if let Some(l) = cum.last_mut() {
                        *l = f64::INFINITY;
                    }
                    (
                        Kind::Fork(Box::new(ForkRt {
                            fan_out: f.fan_out,
                            targets: f.targets.iter().map(|t| t.0 as u32).collect(),
                            cum,
                            random: f.spread == Spread::Random,
                            join: f.join as u32,
                            next: 0,
                            rng: mech_rng.clone(),
                        })),
                        Waiting::new(Discipline::Fcfs),
                        0.0,
                    )
                }
                StationKind::Join(j) => (
                    Kind::Join { quorum: j.quorum },
                    Waiting::new(Discipline::Fcfs),
                    0.0,
                ),
            };
            stations.push(StationRt {
                stats: StStats::default(),
                rng: rng::stream(seed, index, rng::service_stream(s)),
                service: service.iter().map(Sampler::new).collect(),
                inv_mean,
                kind,
                waiting,
                servers,
                regions: Vec::new(),
            });
        }
        // Each spin cpu knows the latches whose threads run on it.
        for s in 0..stations.len() {
            if let Kind::Latch(l) = &stations[s].kind
                && let Some(cpu) = l.cpu
                && let Kind::V(vc) = &mut stations[cpu].kind
            {
                vc.latches.push(s as u32);
            }
        }
        let ns = stations.len();
        let mut regions = Vec::new();
        for (r, reg) in spec.regions.iter().enumerate() {
            let mut members = vec![false; ns];
            for &s in &reg.stations {
                members[s] = true;
                if !stations[s].regions.contains(&(r as u32)) {
                    stations[s].regions.push(r as u32);
                }
            }
            regions.push(RegionRt {
                limit: reg.limit.unwrap_or(u32::MAX),
                inside: 0,
                members,
                queue: VecDeque::new(),
                stats: RegionStats::default(),
            });
        }
        let classes = spec
            .classes
            .iter()
            .enumerate()
            .map(|(c, cl)| {
                let route = match &cl.routing {
                    Routing::Sequence(seq) => Route::Seq(seq.iter().map(|&s| s as u32).collect()),
                    Routing::Probabilistic { entry, from } => Route::Prob {
                        entry: Branches::new(entry),
                        // Stations without branches continue like a new
                        // interaction: copy the entry branches in.
                        from: (0..ns)
                            .map(|s| {
                                let b = from
                                    .get(s)
                                    .map_or_else(Branches::default, |b| Branches::new(b));
                                if b.targets.is_empty() {
                                    Branches::new(entry)
                                } else {
                                    b
                                }
                            })
                            .collect(),
                        sub: (0..ns)
                            .map(|s| {
                                from.get(s)
                                    .map_or_else(Branches::default, |b| Branches::new(b))
                            })
                            .collect(),
                    },
                };
                let (open, think) = match &cl.workload {
                    Workload::Open { interarrival } => (Some(Sampler::new(interarrival)), None),
                    Workload::Closed { think, .. } => (None, think.as_ref().map(Sampler::new)),
                };
                ClassRt {
                    rng: rng::stream(seed, index, rng::class_stream(c)),
                    open,
                    think,
                    route,
                    priority: cl.priority,
                    stats: ClassStats::default(),
                }
            })
            .collect();
        let mut sim = Simulation {
            now: 0.0,
            fel: Fel::new(),
            jobs: Vec::new(),
            free: Vec::new(),
            stations,
            classes,
            regions,
            forks: Vec::new(),
            free_forks: Vec::new(),
            route_rng: rng::stream(seed, index, rng::ROUTING_STREAM),
            dirty: Vec::new(),
            spin_dirty: Vec::new(),
            events: 0,
            in_network: 0,
            max_jobs: config.max_jobs_present,
            max_events: config.max_events,
            event_cap: config.max_events.saturating_add(1),
            measuring: false,
            measure_start: 0.0,
            warm,
            stop,
            warm_count: 0,
            completions: 0,
            finished: false,
            sla: config.sla_s.unwrap_or(f64::INFINITY),
            mser: mser.then(Mser::new),
            error: None,
            index,
            names: spec.stations.iter().map(|s| s.name.clone()).collect(),
        };
        sim.init(spec);
        sim
    }

    fn init(&mut self, spec: &NetworkSpec) {
        match self.warm {
            WarmPlan::None | WarmPlan::Jobs(0) => self.start_measuring(),
            WarmPlan::Time(t) if t <= 0.0 => self.start_measuring(),
            WarmPlan::Time(t) => self.fel.push(t, ev(EV_WARMUP, 0, 0)),
            WarmPlan::Jobs(_) => {}
        }
        if let StopPlan::AbsTime(t) = self.stop {
            self.fel.push(t, ev(EV_STOP, 0, 0));
        }
        // Open classes: first arrival after one inter-arrival time.
        for c in 0..self.classes.len() {
            let cl = &mut self.classes[c];
            if let Some(d) = &cl.open {
                let t = d.sample(&mut cl.rng);
                self.fel.push(t, ev(EV_ARRIVAL, c as u32, 0));
            }
        }
        // Closed classes: every job thinking, or all queued at one station.
        let mut njob = 0u32;
        for (c, cl) in spec.classes.iter().enumerate() {
            let Workload::Closed { population, .. } = cl.workload else {
                continue;
            };
            for _ in 0..population {
                let j = self.alloc(c as u32);
                self.jobs[j as usize].node = njob;
                njob += 1;
                match spec.initial {
                    InitialState::Thinking => self.think(j),
                    InitialState::AtStation(s) => {
                        self.in_network += 1;
                        let job = &mut self.jobs[j as usize];
                        job.t0 = 0.0;
                        // Continue the route after the station: in a sequence
                        // after its first occurrence (from the start if absent).
                        job.pos = match &self.classes[c].route {
                            Route::Seq(seq) => seq
                                .iter()
                                .position(|&x| x as usize == s)
                                .map_or(0, |p| p as u32 + 1),
                            Route::Prob { .. } => 0,
                        };
                        self.goto(j, EXIT, s as u32);
                    }
                }
            }
        }
        self.flush();
        self.check_unstable();
    }

    #[inline]
    fn alloc(&mut self, class: u32) -> u32 {
        let job = Job {
            class,
            station: EXIT,
            fork: NONE,
            pending: EXIT,
            ..Job::default()
        };
        match self.free.pop() {
            Some(j) => {
                self.jobs[j as usize] = Job { node: j, ..job };
                j
            }
            None => {
                let j = self.jobs.len() as u32;
                self.jobs.push(Job { node: j, ..job });
                j
            }
        }
    }

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

    /// Jobs present at station `s` now (queued and in service).
    pub fn jobs_at(&self, s: StationId) -> u32 {
        self.stations.get(s).map_or(0, |st| st.stats.n)
    }

    /// Jobs in the network now (not thinking, not yet arrived).
    pub fn jobs_in_network(&self) -> u64 {
        self.in_network
    }

    /// Runs to the stopping rule.
    pub fn run(&mut self) -> Result<(), RunError> {
        while !self.finished {
            // The event's heap slot stays free until it is handled: the
            // first event it schedules takes the slot (one sift instead of
            // two); `settle` closes it otherwise.
            let Some(e) = self.fel.take_min() else {
                self.finished = true;
                break;
            };
            self.now = e.time();
            self.dispatch(e.ev);
            if !self.dirty.is_empty() {
                self.flush();
            }
            self.fel.settle();
            if self.events >= self.event_cap {
                return self.fail();
            }
        }
        Ok(())
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
        self.now = e.time();
        self.dispatch(e.ev);
        self.flush();
        self.fel.settle();
        if self.events >= self.event_cap {
            self.fail()?;
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
                    return Ok(true);
                }
            }
            self.step()?;
        }
        Ok(false)
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

    #[inline(always)]
    fn dispatch(&mut self, e: u64) {
        let a = ((e >> 8) & 0xFF_FFFF) as u32;
        let b = (e >> 32) as u32;
        // Fixed-speed completions dominate: test for them before the
        // jump table.
        if e & 0xFF == EV_DONE {
            self.on_done(a as usize, b);
            return;
        }
        match e & 0xFF {
            EV_DONE => self.on_done(a as usize, b),
            EV_VDONE => self.on_vdone(a as usize, b),
            EV_THINK => {
                self.events += 1;
                self.in_network += 1;
                if self.in_network > self.max_jobs {
                    self.unstable();
                }
                self.begin_hot(b);
            }
            EV_ARRIVAL => self.on_arrival(a as usize),
            EV_WARMUP => self.start_measuring(),
            EV_STOP => self.finished = true,
            EV_BATCH_TIMER => self.on_batch_timer(a as usize, b),
            EV_GROUP_DONE => self.on_group_done(a as usize, b),
            EV_LATCH_GRANT => self.on_latch_grant(a as usize, b),
            EV_LATCH_POLL => self.on_latch_poll(a as usize, b),
            EV_LATCH_DONE => self.on_latch_done(a as usize, b),
            _ => unreachable!("unknown event kind"),
        }
    }

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

    fn on_arrival(&mut self, c: usize) {
        self.events += 1;
        let cl = &mut self.classes[c];
        if let Some(d) = &cl.open {
            let t = later(self.now, d.sample(&mut cl.rng));
            self.fel.push(t, ev(EV_ARRIVAL, c as u32, 0));
        }
        let j = self.alloc(c as u32);
        self.in_network += 1;
        if self.in_network > self.max_jobs {
            self.unstable();
        }
        self.begin_hot(j);
    }

    /// Starts an interaction of job `j` now.
    #[inline]
    fn begin(&mut self, j: u32) {
        self.begin_hot(j);
    }

    /// [`Simulation::begin`], inlined into the hot event handlers.
    #[inline(always)]
    fn begin_hot(&mut self, j: u32) {
        // SAFETY: job ids only come from the slab's allocator (`alloc`) and
        // the slab never shrinks, so `j` is in bounds.
        let job = unsafe { self.jobs.get_unchecked_mut(j as usize) };
        job.t0 = self.now;
        job.pos = 0;
        let to = self.next_target(j, EXIT);
        self.goto(j, EXIT, to);
    }

    /// Where job `j` goes after station `from` (EXIT: after thinking/arriving).
    #[inline(always)]
    fn next_target(&mut self, j: u32, from: u32) -> u32 {
        // SAFETY: job ids only come from the slab's allocator and the slab
        // never shrinks; a job's class is set by `alloc` from a class index
        // and `classes` is never resized.
        let job = unsafe { self.jobs.get_unchecked_mut(j as usize) };
        let cl = unsafe { self.classes.get_unchecked(job.class as usize) };
        match &cl.route {
            Route::Seq(seq) => match seq.get(job.pos as usize) {
                Some(&s) => {
                    job.pos += 1;
                    s
                }
                None => EXIT,
            },
            Route::Prob {
                entry, from: br, ..
            } => {
                // `br` has one entry per station, with the entry branches
                // copied in for stations the class has no branches for (a
                // job placed there initially continues like a new
                // interaction); EXIT (after thinking or arriving) is past
                // the end.
                br.get(from as usize)
                    .unwrap_or(entry)
                    .pick(&mut self.route_rng)
            }
        }
    }

    /// Moves job `j` from station `from` (EXIT: from outside) to `to`,
    /// passing region boundaries.
    ///
    /// Fork sub-jobs never cross region boundaries on their own: the parent
    /// holds its place in a region for them.
    #[inline(always)]
    fn goto(&mut self, j: u32, from: u32, to: u32) {
        if !self.regions.is_empty() && self.jobs[j as usize].fork == NONE {
            self.cross_regions(j, from, to);
            return;
        }
        if to == EXIT {
            self.exit(j);
        } else {
            self.arrive(j, to as usize);
        }
    }

    #[inline(never)]
    fn cross_regions(&mut self, j: u32, from: u32, to: u32) {
        let now = self.now;
        // Leave the regions that contain `from` but not `to`.
        if from != EXIT {
            for k in 0..self.stations[from as usize].regions.len() {
                let r = self.stations[from as usize].regions[k] as usize;
                let reg = &mut self.regions[r];
                if to != EXIT && reg.members[to as usize] {
                    continue;
                }
                reg.acc(now);
                reg.inside = reg.inside.saturating_sub(1);
                self.admit_waiters(r);
            }
        }
        self.jobs[j as usize].pending = to;
        self.jobs[j as usize].station = from;
        self.enter_regions(j);
    }

    /// Lets job `j` (headed to `pending`) into the regions it is entering;
    /// it queues at the first full one.
    fn enter_regions(&mut self, j: u32) {
        let now = self.now;
        let to = self.jobs[j as usize].pending;
        let from = self.jobs[j as usize].station;
        if to != EXIT {
            for k in 0..self.stations[to as usize].regions.len() {
                let r = self.stations[to as usize].regions[k] as usize;
                let reg = &mut self.regions[r];
                if from != EXIT && reg.members[from as usize] {
                    continue;
                }
                if reg.inside >= reg.limit {
                    reg.acc(now);
                    reg.queue.push_back(j);
                    // Remember when it started waiting.
                    self.jobs[j as usize].t_arr = now;
                    return;
                }
                reg.acc(now);
                reg.inside += 1;
                if self.measuring {
                    reg.stats.admitted += 1;
                }
            }
        }
        // Inside every region it needs: mark as "in transit", then arrive.
        self.jobs[j as usize].station = EXIT;
        if to == EXIT {
            self.exit(j);
        } else {
            self.arrive(j, to as usize);
        }
    }

    fn admit_waiters(&mut self, r: usize) {
        let now = self.now;
        while self.regions[r].inside < self.regions[r].limit {
            let reg = &mut self.regions[r];
            let Some(w) = reg.queue.pop_front() else {
                break;
            };
            reg.acc(now);
            reg.inside += 1;
            if self.measuring {
                reg.stats.admitted += 1;
                reg.stats.sum_wait += now - self.jobs[w as usize].t_arr;
            }
            // Count it as inside region r from now on: mark `from` as a
            // member of r so enter_regions skips r, by checking the other
            // regions of the target.
            self.enter_regions_after(w, r);
        }
    }

    /// Continues admission of `j` after region `done` admitted it.
    fn enter_regions_after(&mut self, j: u32, done: usize) {
        let now = self.now;
        let to = self.jobs[j as usize].pending;
        let from = self.jobs[j as usize].station;
        let regs = self.stations[to as usize].regions.clone();
        let start = regs
            .iter()
            .position(|&r| r as usize == done)
            .map_or(0, |p| p + 1);
        for &r in &regs[start..] {
            let r = r as usize;
            let reg = &mut self.regions[r];
            if from != EXIT && reg.members[from as usize] {
                continue;
            }
            reg.acc(now);
            if reg.inside >= reg.limit {
                reg.queue.push_back(j);
                self.jobs[j as usize].t_arr = now;
                return;
            }
            reg.inside += 1;
            if self.measuring {
                reg.stats.admitted += 1;
            }
        }
        self.jobs[j as usize].station = EXIT;
        self.arrive(j, to as usize);
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
        let class = job.class as usize;
        // The common case first: a direct branch instead of the jump table.
        if let Kind::Queue { c } = st.kind {
            #[cfg(debug_assertions)]
            st.stats.acc(now);
            st.stats.n += 1;
            st.stats.sum_arr += now;
            if st.stats.busy < c {
                st.stats.busy += 1;
                st.stats.sum_start += now;
                job.t_start = now;
                // SAFETY: `service` has one entry per class and a job's
                // class is a class index.
                let d = unsafe { st.service.get_unchecked(class) }.sample(&mut st.rng);
                self.fel.push(later(now, d), ev(EV_DONE, s as u32, j));
            } else {
                // SAFETY: a job's class is a class index; `classes` is
                // never resized.
                let prio = unsafe { self.classes.get_unchecked(class) }.priority;
                st.waiting.push(j, prio);
            }
            return;
        }
        match &mut st.kind {
            Kind::Queue { .. } => {}
            Kind::Delay => {
                #[cfg(debug_assertions)]
                st.stats.acc(now);
                st.stats.n += 1;
                st.stats.sum_arr += now;
                job.t_start = now;
                // SAFETY: as above, one service entry per class.
                let d = unsafe { st.service.get_unchecked(class) }.sample(&mut st.rng);
                self.fel.push(later(now, d), ev(EV_DONE, s as u32, j));
            }
            Kind::V(vc) => {
                vc.advance(now);
                st.stats.acc(now);
                st.stats.n += 1;
                if vc.mode == VMode::Shared || (vc.insvc.len() as u32) < vc.c {
                    job.t_start = now;
                    let w = st.service[class].sample(&mut st.rng);
                    let w = if vc.speed.is_some() {
                        w * st.inv_mean[class]
                    } else {
                        w
                    };
                    vc.insvc.push(vc.v + w, j);
                    st.stats.busy = vc.busy();
                } else {
                    let prio = self.classes[class].priority;
                    st.waiting.push(j, prio);
                }
                if !vc.dirty {
                    vc.dirty = true;
                    self.dirty.push(s as u32);
                }
            }
            Kind::Latch(_) => self.latch_arrive(j, s),
            Kind::Group(_) => self.group_arrive(j, s),
            Kind::Fork(_) => self.fork_arrive(j, s),
            Kind::Join { .. } => self.join_arrive(j, s),
        }
    }

    /// Records the departure of job `j` from station stats `st`.
    #[inline(always)]
    fn record_departure(stats: &mut StStats, job: &Job, now: f64) {
        stats.departures += 1;
        stats.sum_resp += now - job.t_arr;
        stats.sum_wait += job.t_start - job.t_arr;
    }

    /// A fixed-speed completion.
    fn on_done(&mut self, s: usize, j: u32) {
        self.events += 1;
        let now = self.now;
        // SAFETY: EV_DONE is only scheduled by `arrive`/`on_done` with a
        // station index already in bounds (`stations` is never resized) and
        // a job id from the slab's allocator (the slab never shrinks).
        let st = unsafe { self.stations.get_unchecked_mut(s) };
        #[cfg(debug_assertions)]
        st.stats.acc(now);
        st.stats.n -= 1;
        let job = unsafe { self.jobs.get_unchecked(j as usize) };
        Simulation::record_departure(&mut st.stats, job, now);
        // Plain station: per-job sums instead of `acc` (see `StStats`).
        st.stats.sum_arr -= job.t_arr;
        if let Kind::Queue { .. } = st.kind {
            st.stats.sum_start -= job.t_start;
            if let Some(nx) = st.waiting.pop() {
                st.stats.sum_start += now;
                // SAFETY: waiting jobs were allocated by the slab; `service`
                // has one entry per class.
                let job = unsafe { self.jobs.get_unchecked_mut(nx as usize) };
                job.t_start = now;
                let sv = unsafe { st.service.get_unchecked(job.class as usize) };
                let d = sv.sample(&mut st.rng);
                self.fel.push(later(now, d), ev(EV_DONE, s as u32, nx));
            } else {
                st.stats.busy -= 1;
            }
        }
        self.leave_hot(j, s as u32);
    }

    /// A virtual-clock completion (stale when the version moved on).
    fn on_vdone(&mut self, s: usize, version: u32) {
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::V(vc) = &mut st.kind else {
            return;
        };
        if version != vc.version || !vc.pending {
            return;
        }
        self.events += 1;
        vc.pending = false;
        let Some((tag, j)) = vc.insvc.pop() else {
            return;
        };
        // The clock has reached the tag (exactly, to avoid drift).
        vc.v = tag;
        vc.last = now;
        st.stats.acc(now);
        st.stats.n -= 1;
        Simulation::record_departure(&mut st.stats, &self.jobs[j as usize], now);
        if vc.mode == VMode::Queue
            && let Some(nx) = st.waiting.pop()
        {
            let job = &mut self.jobs[nx as usize];
            job.t_start = now;
            let class = job.class as usize;
            let w = st.service[class].sample(&mut st.rng);
            let w = if vc.speed.is_some() {
                w * st.inv_mean[class]
            } else {
                w
            };
            vc.insvc.push(vc.v + w, nx);
        }
        st.stats.busy = vc.busy();
        if !vc.dirty {
            vc.dirty = true;
            self.dirty.push(s as u32);
        }
        self.leave(j, s as u32);
    }

    /// Recomputes the speed of every station whose population changed and
    /// reschedules its next completion.
    fn flush(&mut self) {
        let now = self.now;
        while let Some(s) = self.dirty.pop() {
            let st = &mut self.stations[s as usize];
            let Kind::V(vc) = &mut st.kind else {
                continue;
            };
            vc.dirty = false;
            if !vc.latches.is_empty() {
                self.spin_dirty.push(s);
            }
            // The clock was advanced to `now` when the population changed.
            vc.advance(now);
            let Some(tag) = vc.insvc.min_tag() else {
                if vc.pending {
                    vc.version = vc.version.wrapping_add(1);
                    vc.pending = false;
                }
                // Empty: rebase the clock so it never grows large.
                vc.v = 0.0;
                vc.g = 0.0;
                continue;
            };
            let g = vc.per_job(st.stats.n, vc.insvc.len() as u32);
            vc.g = g;
            if vc.pending && vc.pend_tag == tag && vc.pend_g == g {
                continue;
            }
            vc.version = vc.version.wrapping_add(1);
            vc.pending = true;
            vc.pend_tag = tag;
            vc.pend_g = g;
            let dt = (tag - vc.v).max(0.0) / g;
            self.fel.push(later(now, dt), ev(EV_VDONE, s, vc.version));
        }
        while let Some(cpu) = self.spin_dirty.pop() {
            self.latch_cpu_changed(cpu as usize);
        }
    }

    /// Job `j` leaves station `s` and moves on.
    #[inline]
    fn leave(&mut self, j: u32, s: u32) {
        self.leave_hot(j, s);
    }

    /// [`Simulation::leave`], inlined into the hot event handlers.
    #[inline(always)]
    fn leave_hot(&mut self, j: u32, s: u32) {
        // SAFETY: job ids only come from the slab's allocator and the slab
        // never shrinks.
        let fork = unsafe { self.jobs.get_unchecked(j as usize) }.fork;
        if fork != NONE {
            let join = self.forks[fork as usize].join;
            let to = self.sub_target(j, s, join);
            self.goto(j, s, to);
            return;
        }
        let to = self.next_target(j, s);
        self.goto(j, s, to);
    }

    /// Where fork sub-job `j` goes after station `s`: its class's routing
    /// row for `s` if the class has a routing table with one (a sub-job may
    /// visit several stations, e.g. CPU work, a latch, CPU work again),
    /// otherwise straight to its fork's `join`. Validation keeps sub-jobs
    /// from routing to the sink; should one pick it anyway, it joins.
    #[inline(never)]
    fn sub_target(&mut self, j: u32, s: u32, join: u32) -> u32 {
        let class = self.jobs[j as usize].class as usize;
        let Route::Prob { sub, .. } = &self.classes[class].route else {
            return join;
        };
        match sub.get(s as usize) {
            Some(b) if !b.targets.is_empty() && s != join => match b.pick(&mut self.route_rng) {
                EXIT => join,
                t => t,
            },
            _ => join,
        }
    }

    /// End of an interaction.
    #[inline]
    fn exit(&mut self, j: u32) {
        let now = self.now;
        // SAFETY: job ids only come from the slab's allocator and the slab
        // never shrinks.
        let job = unsafe { self.jobs.get_unchecked_mut(j as usize) };
        job.station = EXIT;
        let c = job.class as usize;
        let r = now - job.t0;
        if let Some(m) = &mut self.mser {
            m.push(r);
        }
        // SAFETY: a job's class is a class index; `classes` is never resized.
        let cl = unsafe { self.classes.get_unchecked_mut(c) };
        let (open, thinks) = (cl.open.is_some(), cl.think.is_some());
        if self.measuring {
            let st = &mut cl.stats;
            st.completions += 1;
            st.sum_resp += r;
            st.hist.record(r);
            st.sla_over += u64::from(r > self.sla);
            self.completions += 1;
            if let StopPlan::Jobs(n) = self.stop
                && self.completions >= n
            {
                self.finished = true;
            }
        } else if let WarmPlan::Jobs(n) = self.warm {
            self.warm_count += 1;
            if self.warm_count >= n {
                self.start_measuring();
            }
        }
        if open {
            self.in_network -= 1;
            self.free.push(j);
        } else if thinks {
            self.in_network -= 1;
            self.think(j);
        } else {
            self.begin(j);
        }
    }

    /// Job `j` starts thinking (closed classes).
    #[inline]
    fn think(&mut self, j: u32) {
        // SAFETY: job ids only come from the slab's allocator (the slab
        // never shrinks); a job's class is a class index and `classes` is
        // never resized.
        let c = unsafe { self.jobs.get_unchecked(j as usize) }.class as usize;
        let cl = unsafe { self.classes.get_unchecked_mut(c) };
        match &cl.think {
            Some(d) => {
                let t = later(self.now, d.sample(&mut cl.rng));
                self.fel.push(t, ev(EV_THINK, 0, j));
            }
            None => {
                self.in_network += 1;
                self.begin(j);
            }
        }
    }

    /// Resets every accumulator: the measured part starts now.
    fn start_measuring(&mut self) {
        let now = self.now;
        self.measuring = true;
        self.measure_start = now;
        self.completions = 0;
        for st in &mut self.stations {
            st.stats.acc(now);
            st.stats.reset(now);
            if let Kind::Latch(l) = &mut st.kind {
                l.area_spin = 0.0;
                l.area_sleep = 0.0;
                l.counts_since = now;
            }
        }
        for cl in &mut self.classes {
            cl.stats.completions = 0;
            cl.stats.sum_resp = 0.0;
            cl.stats.sla_over = 0;
            if cl.stats.hist.count() > 0 {
                cl.stats.hist.clear();
            }
        }
        for reg in &mut self.regions {
            reg.acc(now);
            reg.stats = RegionStats {
                last: now,
                ..RegionStats::default()
            };
        }
        if let StopPlan::Time(t) = self.stop {
            self.fel.push(later(now, t), ev(EV_STOP, 0, 0));
        }
    }

    /// MSER-5 truncation (observations to discard), when collected.
    pub(crate) fn mser_truncation(&self) -> Option<u64> {
        self.mser.as_ref().map(Mser::truncation)
    }

    /// Interactions completed in the measured part so far.
    pub(crate) fn completions(&self) -> u64 {
        self.completions
    }

    /// The figures of the measured part so far (the whole replication once
    /// [`Simulation::run`] has returned).
    pub fn result(&self) -> ReplicationResult {
        let now = self.now;
        let t = now - self.measure_start;
        let per_s = |x: f64| if t > 0.0 { x / t } else { 0.0 };
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        let qs = [0.5, 0.9, 0.95, 0.99, 0.999];
        let class_result = |s: &ClassStats| {
            let n = s.completions as f64;
            ReplicationClass {
                completions: s.completions,
                throughput_per_s: per_s(n),
                mean_response_s: ratio(s.sum_resp, n),
                percentiles_s: s.hist.quantiles(qs),
                sla_violation: ratio(s.sla_over as f64, n),
            }
        };
        let classes: Vec<ReplicationClass> = self
            .classes
            .iter()
            .map(|c| class_result(&c.stats))
            .collect();
        let system = if self.classes.len() == 1 {
            classes[0].clone()
        } else {
            let mut all = ClassStats::default();
            for c in &self.classes {
                all.completions += c.stats.completions;
                all.sum_resp += c.stats.sum_resp;
                all.sla_over += c.stats.sla_over;
                all.hist.merge(&c.stats.hist);
            }
            class_result(&all)
        };
        // Spinning latch waiters are in a cpu station's `busy` already.
        let stations = self
            .stations
            .iter()
            .map(|st| {
                let s = &st.stats;
                let (area_n, area_busy) = if matches!(st.kind, Kind::Queue { .. } | Kind::Delay) {
                    let (area_n, area_busy) =
                        s.plain_areas(now, matches!(st.kind, Kind::Queue { .. }));
                    // Debug builds (tests) also integrate the areas the
                    // other way (`acc` at every change) and compare.
                    #[cfg(debug_assertions)]
                    {
                        let dt = now - s.last;
                        let n = s.area_n + f64::from(s.n) * dt;
                        let b = if matches!(st.kind, Kind::Queue { .. }) {
                            s.area_busy + f64::from(s.busy) * dt
                        } else {
                            0.0
                        };
                        let tol = 1e-6 * (1.0 + n.abs() + b.abs());
                        debug_assert!(
                            (area_n - n).abs() <= tol && (area_busy - b).abs() <= tol,
                            "plain station areas ({area_n}, {area_busy}) differ from \
                             integrated ({n}, {b}): {s:?}"
                        );
                    }
                    (area_n, area_busy)
                } else {
                    let dt = now - s.last;
                    (
                        s.area_n + f64::from(s.n) * dt,
                        s.area_busy + f64::from(s.busy) * dt,
                    )
                };
                let d = s.departures as f64;
                let grouped = matches!(st.kind, Kind::Group(_));
                // Spin latches: threads polling, and threads asleep or
                // being switched back in after a wake.
                let (spinning, sleeping) = match &st.kind {
                    Kind::Latch(l) if l.spin.is_some() => {
                        let dt = now - l.counts_since;
                        (
                            per_s(l.area_spin + f64::from(l.spinners) * dt),
                            per_s(l.area_sleep + f64::from(l.sleeping()) * dt),
                        )
                    }
                    _ => (0.0, 0.0),
                };
                ReplicationStation {
                    throughput_per_s: per_s(d),
                    utilization: if st.servers > 0.0 {
                        per_s(area_busy) / st.servers
                    } else {
                        0.0
                    },
                    mean_jobs: per_s(area_n),
                    response_time_s: ratio(s.sum_resp, d),
                    wait_time_s: ratio(s.sum_wait, d),
                    mean_batch_size: if grouped {
                        ratio(s.batch_jobs as f64, s.batches as f64)
                    } else {
                        0.0
                    },
                    batches_per_s: if grouped {
                        per_s(s.batches as f64)
                    } else {
                        0.0
                    },
                    mean_spinning: spinning,
                    mean_sleeping: sleeping,
                }
            })
            .collect();
        let regions = self
            .regions
            .iter()
            .map(|r| {
                let dt = now - r.stats.last;
                ReplicationRegion {
                    wait_time_s: ratio(r.stats.sum_wait, r.stats.admitted as f64),
                    mean_waiting: per_s(r.stats.area_waiting + r.queue.len() as f64 * dt),
                    mean_inside: per_s(r.stats.area_inside + f64::from(r.inside) * dt),
                }
            })
            .collect();
        ReplicationResult {
            index: self.index,
            events: self.events,
            measured_time_s: t,
            warmup_time_s: self.measure_start,
            system,
            classes,
            stations,
            regions,
        }
    }

    // ---- batch and link: groups of jobs served together ----

    fn group_arrive(&mut self, j: u32, s: usize) {
        let now = self.now;
        let st = &mut self.stations[s];
        st.stats.acc(now);
        st.stats.n += 1;
        st.waiting.push(j, 0);
        self.group_try_start(s, false);
    }

    /// Starts groups while a slot is free and jobs wait. With `max_wait_s`
    /// a group smaller than `max_batch` waits for more (a timer), unless
    /// `force` (the timer fired).
    fn group_try_start(&mut self, s: usize, mut force: bool) {
        let now = self.now;
        loop {
            let st = &mut self.stations[s];
            let Kind::Group(g) = &mut st.kind else {
                return;
            };
            let waiting = st.waiting.len() as u32;
            if waiting == 0 || g.free_slots.is_empty() {
                return;
            }
            if waiting < g.max_batch
                && !force
                && let Some(w) = g.max_wait_s
                && w > 0.0
            {
                if !g.timer_armed {
                    g.timer_armed = true;
                    g.timer_version = g.timer_version.wrapping_add(1);
                    self.fel
                        .push(later(now, w), ev(EV_BATCH_TIMER, s as u32, g.timer_version));
                }
                return;
            }
            force = false;
            if g.timer_armed {
                g.timer_armed = false;
                g.timer_version = g.timer_version.wrapping_add(1);
            }
            let slot = g.free_slots.pop().expect("checked non-empty");
            let k = waiting.min(g.max_batch);
            let group = &mut g.groups[slot as usize];
            group.clear();
            let mut first_class = 0;
            for i in 0..k {
                let nx = st.waiting.pop().expect("counted");
                let job = &mut self.jobs[nx as usize];
                job.t_start = now;
                if i == 0 {
                    first_class = job.class as usize;
                }
                group.push(nx);
            }
            let d = st.service[first_class].sample(&mut st.rng) + g.per_job_s * f64::from(k);
            st.stats.acc(now);
            st.stats.busy += 1;
            st.stats.batches += 1;
            st.stats.batch_jobs += u64::from(k);
            self.fel
                .push(later(now, d), ev(EV_GROUP_DONE, s as u32, slot));
        }
    }

    fn on_batch_timer(&mut self, s: usize, version: u32) {
        let Kind::Group(g) = &self.stations[s].kind else {
            return;
        };
        if !g.timer_armed || g.timer_version != version {
            return;
        }
        self.events += 1;
        self.group_try_start(s, true);
    }

    fn on_group_done(&mut self, s: usize, slot: u32) {
        self.events += 1;
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::Group(g) = &mut st.kind else {
            return;
        };
        let group = std::mem::take(&mut g.groups[slot as usize]);
        st.stats.acc(now);
        st.stats.busy -= 1;
        st.stats.n -= group.len() as u32;
        for &j in &group {
            Simulation::record_departure(&mut st.stats, &self.jobs[j as usize], now);
        }
        // Route everyone before the slot frees, so that jobs coming straight
        // back queue up and can join the next group at this same instant.
        for &j in &group {
            self.leave(j, s as u32);
        }
        if let Kind::Group(g) = &mut self.stations[s].kind {
            let mut group = group;
            group.clear();
            g.groups[slot as usize] = group;
            g.free_slots.push(slot);
        }
        self.group_try_start(s, false);
    }

    // ---- fork and join ----

    fn fork_arrive(&mut self, j: u32, s: usize) {
        let now = self.now;
        let (fan_out, join) = {
            let st = &mut self.stations[s];
            let Kind::Fork(f) = &st.kind else {
                return;
            };
            // The fork is instantaneous: the parent passes through it.
            st.stats.departures += 1;
            (f.fan_out, f.join as usize)
        };
        // The parent waits at the join for its sub-jobs.
        let quorum = match self.stations[join].kind {
            Kind::Join { quorum } => quorum.unwrap_or(fan_out).min(fan_out),
            _ => fan_out,
        };
        let rec = ForkRec {
            parent: j,
            fork: s as u32,
            join: join as u32,
            needed: quorum,
            arrived: 0,
            outstanding: fan_out,
            released: false,
        };
        let r = match self.free_forks.pop() {
            Some(r) => {
                self.forks[r as usize] = rec;
                r
            }
            None => {
                self.forks.push(rec);
                (self.forks.len() - 1) as u32
            }
        };
        {
            let js = &mut self.stations[join];
            js.stats.acc(now);
            js.stats.n += 1;
            let parent = &mut self.jobs[j as usize];
            parent.station = join as u32;
            parent.t_arr = now;
            parent.t_start = now;
        }
        let (class, t0, thread) = {
            let p = &self.jobs[j as usize];
            (p.class, p.t0, p.node)
        };
        for _ in 0..fan_out {
            let target = {
                let Kind::Fork(f) = &mut self.stations[s].kind else {
                    return;
                };
                if f.random {
                    let u = unit(&mut f.rng);
                    let i = f.cum.iter().position(|&c| u < c).unwrap_or(0);
                    f.targets[i]
                } else {
                    let t = f.targets[f.next as usize % f.targets.len()];
                    f.next = f.next.wrapping_add(1);
                    t
                }
            };
            let sub = self.alloc(class);
            let job = &mut self.jobs[sub as usize];
            job.fork = r;
            job.t0 = t0;
            job.node = thread;
            self.in_network += 1;
            self.goto(sub, s as u32, target);
        }
        self.check_unstable();
    }

    fn join_arrive(&mut self, j: u32, s: usize) {
        let now = self.now;
        let r = self.jobs[j as usize].fork;
        if r == NONE || self.forks[r as usize].join as usize != s {
            // Not a sub-job of a fork joining here: pass through.
            let st = &mut self.stations[s];
            st.stats.departures += 1;
            self.jobs[j as usize].t_start = now;
            self.leave(j, s as u32);
            return;
        }
        // The sub-job ends here.
        self.free.push(j);
        self.in_network -= 1;
        let rec = &mut self.forks[r as usize];
        rec.arrived += 1;
        rec.outstanding -= 1;
        let release = !rec.released && rec.arrived >= rec.needed;
        let parent = rec.parent;
        let fork_station = rec.fork;
        if release {
            rec.released = true;
        }
        if rec.outstanding == 0 {
            self.free_forks.push(r);
        }
        if release {
            let st = &mut self.stations[s];
            st.stats.acc(now);
            st.stats.n -= 1;
            Simulation::record_departure(&mut st.stats, &self.jobs[parent as usize], now);
            // A sequence may list the join right after the fork: the parent
            // is already there, so skip it.
            let pj = &mut self.jobs[parent as usize];
            if let Route::Seq(seq) = &self.classes[pj.class as usize].route
                && seq.get(pj.pos as usize) == Some(&(s as u32))
            {
                pj.pos += 1;
            }
            // Route on from the join; for regions the parent leaves from the
            // fork, where it was admitted.
            if self.jobs[parent as usize].fork != NONE {
                // A nested fork: the parent is itself a sub-job.
                self.leave(parent, s as u32);
            } else {
                let to = self.next_target(parent, s as u32);
                self.goto(parent, fork_station, to);
            }
        }
    }

    // ---- latches with mechanisms (NUMA hand-off, spin then sleep) ----
    //
    // A spinning waiter, a woken sleeper switching back in and the holder
    // are threads on the latch's `spin.cpu` (counted in its `spinners`).
    // Polls and switch-ins are CPU work measured on the latch's thread
    // clock, which runs at a thread's share of a core there; the critical
    // section runs at that share too. Both are re-timed whenever the share
    // changes: `flush` calls `latch_cpu_changed` for every spin cpu whose
    // population changed in the event.

    /// `delta` threads of latch `s` start (+) or stop (−) running on its
    /// cpu station: they share it with the jobs there (PS), so the jobs in
    /// service are re-timed at the new share.
    fn latch_cpu_burn(&mut self, s: usize, delta: i32) {
        let Kind::Latch(l) = &self.stations[s].kind else {
            return;
        };
        let Some(cpu) = l.cpu else {
            return;
        };
        let now = self.now;
        let st = &mut self.stations[cpu];
        let Kind::V(vc) = &mut st.kind else {
            return;
        };
        vc.advance(now);
        st.stats.acc(now);
        vc.spinners = vc.spinners.wrapping_add_signed(delta);
        st.stats.busy = vc.busy();
        if !vc.dirty {
            vc.dirty = true;
            self.dirty.push(cpu as u32);
        }
    }

    /// A thread's share of a core on latch `s`'s cpu, the thread being one
    /// of the cpu's `spinners`: rate(n + x)/(n + x) for n jobs and x latch
    /// threads, i.e. min(1, c/(n + x)) on c cores (1 without a cpu).
    fn latch_thread_share(&self, s: usize) -> f64 {
        let Kind::Latch(l) = &self.stations[s].kind else {
            return 1.0;
        };
        match l.cpu.map(|c| &self.stations[c]) {
            Some(StationRt {
                kind: Kind::V(vc),
                stats,
                ..
            }) => {
                let g = vc.per_job(stats.n, stats.n);
                if g > 0.0 { g } else { 1.0 }
            }
            _ => 1.0,
        }
    }

    /// The population of spin cpu `cpu` changed: re-time every latch whose
    /// threads run there.
    fn latch_cpu_changed(&mut self, cpu: usize) {
        let mut i = 0;
        loop {
            let Kind::V(vc) = &self.stations[cpu].kind else {
                return;
            };
            let Some(&s) = vc.latches.get(i) else {
                return;
            };
            self.latch_retime(s as usize);
            i += 1;
        }
    }

    /// Latch `s`'s threads may have a new share of the cpu: move the thread
    /// clock to the new rate and re-time the next poll or switch-in and the
    /// running critical section.
    fn latch_retime(&mut self, s: usize) {
        let now = self.now;
        let g = self.latch_thread_share(s);
        let Kind::Latch(l) = &mut self.stations[s].kind else {
            return;
        };
        if g != l.t_share {
            l.advance(now);
            l.t_share = g;
        }
        self.latch_schedule_wait(s);
        self.latch_retime_cs(s);
    }

    /// Keeps one live event for the earliest of latch `s`'s pending polls
    /// and switch-ins, timed at the current share (older ones go stale).
    fn latch_schedule_wait(&mut self, s: usize) {
        let now = self.now;
        let Kind::Latch(l) = &mut self.stations[s].kind else {
            return;
        };
        let Some(tag) = l.waits.min_tag() else {
            if l.wait_pending {
                l.wait_version = l.wait_version.wrapping_add(1);
                l.wait_pending = false;
            }
            return;
        };
        if l.wait_pending && l.wait_tag == tag && l.wait_share == l.t_share {
            return;
        }
        l.advance(now);
        l.wait_version = l.wait_version.wrapping_add(1);
        l.wait_pending = true;
        l.wait_tag = tag;
        l.wait_share = l.t_share;
        let dt = (tag - l.t_clock).max(0.0) / l.t_share;
        self.fel
            .push(later(now, dt), ev(EV_LATCH_POLL, s as u32, l.wait_version));
    }

    /// After a latch event: schedule the next poll, unless the cpu's
    /// population changed, in which case `flush` re-times the latch anyway.
    fn latch_schedule_wait_soon(&mut self, s: usize) {
        let Kind::Latch(l) = &self.stations[s].kind else {
            return;
        };
        if let Some(cpu) = l.cpu
            && let Kind::V(vc) = &self.stations[cpu].kind
            && vc.dirty
        {
            return;
        }
        self.latch_schedule_wait(s);
    }

    fn latch_arrive(&mut self, j: u32, s: usize) {
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::Latch(l) = &mut st.kind else {
            return;
        };
        st.stats.acc(now);
        st.stats.n += 1;
        st.stats.busy = 1;
        if !l.held {
            // Uncontended: take it at once (no hand-off).
            l.held = true;
            self.latch_start_cs(j, s);
            return;
        }
        self.latch_retime_cs(s);
        self.latch_wait(j, s);
    }

    /// Waiter `j` found latch `s` held: it spins (if the latch spins and
    /// has rounds to spend), else sleeps until a release wakes it.
    fn latch_wait(&mut self, j: u32, s: usize) {
        let now = self.now;
        let Kind::Latch(l) = &mut self.stations[s].kind else {
            return;
        };
        l.acc_waiters(now);
        if l.spin.as_ref().is_some_and(|sp| sp.spin_rounds > 0) {
            l.spinners += 1;
            self.jobs[j as usize].polls = 0;
            l.advance(now);
            let tag = l.t_clock + l.draw_poll();
            l.waits.push(tag, j);
            self.latch_cpu_burn(s, 1);
            self.latch_schedule_wait_soon(s);
        } else {
            l.sleepers.push_back(j);
        }
    }

    /// Job `j` holds the latch: its critical section starts now, on the
    /// cpu if the latch has one. With a speed curve the section is work at
    /// rate(n); it is re-timed whenever its speed changes (see
    /// `latch_retime_cs`).
    fn latch_start_cs(&mut self, j: u32, s: usize) {
        let now = self.now;
        self.latch_cpu_burn(s, 1);
        let st = &mut self.stations[s];
        let Kind::Latch(l) = &mut st.kind else {
            return;
        };
        let job = &mut self.jobs[j as usize];
        job.t_start = now;
        let class = job.class as usize;
        let d = st.service[class].sample(&mut st.rng);
        let work = match &l.speed {
            Some(_) => d * st.inv_mean[class],
            None => d,
        };
        let rate = self.latch_cs_rate(s);
        let Kind::Latch(l) = &mut self.stations[s].kind else {
            return;
        };
        l.cs_job = j;
        l.cs_work = work;
        l.cs_rate = rate;
        l.cs_since = now;
        l.cs_version = l.cs_version.wrapping_add(1);
        self.fel.push(
            later(now, work / rate),
            ev(EV_LATCH_DONE, s as u32, l.cs_version),
        );
    }

    /// Speed of latch `s`'s critical section now: its speed curve at the
    /// number present, times the holder's share of a core on the
    /// `spin.cpu` station (the holder is one of its threads), so spinners
    /// and the cpu's jobs slow the holder.
    fn latch_cs_rate(&self, s: usize) -> f64 {
        let st = &self.stations[s];
        let Kind::Latch(l) = &st.kind else {
            return 1.0;
        };
        let speed = l.speed.as_ref().map_or(1.0, |sp| sp.rate(st.stats.n));
        speed * self.latch_thread_share(s)
    }

    /// The number present at latch `s` or the holder's cpu share changed:
    /// re-time the running critical section at the new speed (latches with
    /// a speed curve or a spin cpu).
    fn latch_retime_cs(&mut self, s: usize) {
        let now = self.now;
        let rate = self.latch_cs_rate(s);
        let st = &mut self.stations[s];
        let Kind::Latch(l) = &mut st.kind else {
            return;
        };
        if l.speed.is_none() && l.cpu.is_none() {
            return;
        }
        if l.cs_job == NONE {
            return;
        }
        if rate == l.cs_rate {
            return;
        }
        l.cs_work = (l.cs_work - (now - l.cs_since) * l.cs_rate).max(0.0);
        l.cs_rate = rate;
        l.cs_since = now;
        l.cs_version = l.cs_version.wrapping_add(1);
        self.fel.push(
            later(now, l.cs_work / rate),
            ev(EV_LATCH_DONE, s as u32, l.cs_version),
        );
    }

    /// The latch goes to waiter `j` (already marked held): after the NUMA
    /// hand-off cost, if any, its critical section starts.
    fn latch_handoff(&mut self, j: u32, s: usize) {
        let now = self.now;
        let threads = self.in_network;
        let st = &mut self.stations[s];
        let Kind::Latch(l) = &mut st.kind else {
            return;
        };
        let Some(numa) = &l.numa else {
            self.latch_start_cs(j, s);
            return;
        };
        let nodes = numa.nodes.max(1);
        let cores = u64::from(nodes) * u64::from(numa.cores_per_node.max(1));
        let home = self.jobs[j as usize].node % nodes;
        // Oversubscription: with T runnable threads on C cores, a thread has
        // been migrated off its core since it last ran with probability
        // (T − C)/T; a migrated thread lands on a random node, cold.
        let p_mig = if threads > cores {
            (threads - cores) as f64 / threads as f64
        } else {
            0.0
        };
        let (node, migrated) = if p_mig > 0.0 && unit(&mut l.rng) < p_mig {
            ((unit(&mut l.rng) * f64::from(nodes)) as u32 % nodes, true)
        } else {
            (home, false)
        };
        let mut cost = if node == l.holder_node {
            numa.local_handoff_s
        } else {
            numa.remote_handoff_s
        };
        if migrated {
            cost += numa.migration_s;
        }
        l.holder_node = node;
        if cost > 0.0 {
            self.fel
                .push(later(now, cost), ev(EV_LATCH_GRANT, s as u32, j));
        } else {
            self.latch_start_cs(j, s);
        }
    }

    fn on_latch_grant(&mut self, s: usize, j: u32) {
        self.events += 1;
        self.latch_start_cs(j, s);
    }

    /// End of a critical section (stale when it was re-timed since).
    fn on_latch_done(&mut self, s: usize, version: u32) {
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::Latch(l) = &mut st.kind else {
            return;
        };
        if l.cs_job == NONE || l.cs_version != version {
            return;
        }
        self.events += 1;
        l.acc_waiters(now);
        let j = std::mem::replace(&mut l.cs_job, NONE);
        st.stats.acc(now);
        st.stats.n -= 1;
        // Busy while anyone holds, waits for, or is being handed the latch.
        st.stats.busy = u32::from(st.stats.n > 0);
        Simulation::record_departure(&mut st.stats, &self.jobs[j as usize], now);
        let mut woken = 0;
        match &l.spin {
            None => {
                // Sleeping waiters get the latch in FIFO order.
                if let Some(nx) = l.sleepers.pop_front() {
                    self.latch_handoff(nx, s);
                } else {
                    l.held = false;
                }
            }
            Some(spin) => {
                // Free: the next spinner to poll takes it; sleepers are woken
                // and must run `context_switch_s` on the cpu first.
                l.held = false;
                let cs = spin.context_switch_s;
                let wake = match l.wake {
                    Wake::One => l.sleepers.len().min(1),
                    Wake::All => l.sleepers.len(),
                };
                l.advance(now);
                for _ in 0..wake {
                    let w = l.sleepers.pop_front().expect("counted");
                    l.waits.push(l.t_clock + cs, w | WAKING);
                }
                l.waking += wake as u32;
                woken = wake as i32;
            }
        }
        // The holder's thread leaves the cpu; woken ones come onto it.
        if woken != 1 {
            self.latch_cpu_burn(s, woken - 1);
        }
        self.latch_schedule_wait_soon(s);
        self.leave(j, s as u32);
    }

    /// The earliest pending poll or switch-in of latch `s` is due (stale
    /// when it was re-timed since).
    fn on_latch_poll(&mut self, s: usize, version: u32) {
        let now = self.now;
        let Kind::Latch(l) = &mut self.stations[s].kind else {
            return;
        };
        if !l.wait_pending || l.wait_version != version {
            return;
        }
        self.events += 1;
        l.wait_pending = false;
        let Some((tag, e)) = l.waits.pop() else {
            return;
        };
        // `latch_poll` and `latch_switched_in` change the spinning and
        // sleeping counts at this instant.
        l.acc_waiters(now);
        // The thread clock has reached the tag (exactly, to avoid drift).
        l.t_clock = tag;
        l.t_since = now;
        if e & WAKING != 0 {
            l.waking -= 1;
            self.latch_switched_in(s, e & !WAKING);
        } else {
            self.latch_poll(s, e);
        }
        self.latch_schedule_wait_soon(s);
    }

    /// Spinner `j` polls latch `s`.
    fn latch_poll(&mut self, s: usize, j: u32) {
        let Kind::Latch(l) = &mut self.stations[s].kind else {
            return;
        };
        if !l.held {
            l.held = true;
            l.spinners -= 1;
            self.latch_cpu_burn(s, -1);
            self.latch_handoff(j, s);
            return;
        }
        let rounds = l.spin.as_ref().map_or(0, |sp| sp.spin_rounds);
        let job = &mut self.jobs[j as usize];
        job.polls += 1;
        if job.polls >= rounds {
            // Give up spinning: sleep until a release wakes it.
            l.spinners -= 1;
            l.sleepers.push_back(j);
            self.latch_cpu_burn(s, -1);
        } else {
            let tag = l.t_clock + l.draw_poll();
            l.waits.push(tag, j);
        }
    }

    /// Woken sleeper `j` runs again.
    fn latch_switched_in(&mut self, s: usize, j: u32) {
        self.latch_cpu_burn(s, -1);
        let Kind::Latch(l) = &mut self.stations[s].kind else {
            return;
        };
        if !l.held {
            l.held = true;
            self.latch_handoff(j, s);
            return;
        }
        match l.wake {
            // Lost the race after a single wake-up: spin again.
            Wake::One => self.latch_wait(j, s),
            // Thundering herd: the losers go back to sleep (the next
            // release wakes them again, and each pays another switch).
            Wake::All => l.sleepers.push_back(j),
        }
    }
}
