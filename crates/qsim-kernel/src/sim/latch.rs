//! Latches with mechanisms (NUMA hand-off, spin then sleep). A plain latch
//! is a single FCFS server and runs as a queue (see `build`).

use super::event::{EV_LATCH_DONE, EV_LATCH_GRANT, EV_LATCH_POLL, NONE, ev, later};
use super::vclock::SpeedRt;
use super::waiting::TagHeap;
use super::{Kind, Simulation, StationRt};
use crate::dist::unit;
use crate::network::{LatchSpec, NumaSpec, PollDelay, SpinSpec, Wake};
use crate::rng::{SimRng, splitmix64};
use rand::Rng;
use std::collections::VecDeque;

/// NUMA placement and hand-off state of a latch.
#[derive(Clone, Debug)]
pub(super) struct LatchRt {
    pub(super) numa: Option<NumaSpec>,
    pub(super) spin: Option<SpinSpec>,
    pub(super) wake: Wake,
    /// One unit of poll delay, seconds of CPU.
    pub(super) unit_s: f64,
    /// `spin_wait_delay` as a whole number of units (`PollDelay::Units`).
    pub(super) units: u64,
    /// Polls are drawn as a continuous uniform (`PollDelay::Uniform`).
    pub(super) uniform: bool,
    /// Failed polls that send a spinner to sleep (`spin_rounds`).
    pub(super) rounds: u32,
    /// Event per poll (the reference path) rather than per hand-off.
    pub(super) poll_by_poll: bool,
    /// Spin episodes in progress, indexed by the values of `waits` that
    /// are not `WAKING`; `free_slots` lists the unused ones.
    pub(super) slots: Vec<SpinSlot>,
    pub(super) free_slots: Vec<u32>,
    /// Polls made and the sum of their delays (seconds of CPU), measured.
    pub(super) poll_count: u64,
    pub(super) poll_sum: f64,
    /// Measured area under "anyone present" (holding, waiting or being
    /// handed the latch), integrated up to `occ_since`.
    pub(super) area_occ: f64,
    pub(super) occ_since: f64,
    pub(super) speed: Option<SpeedRt>,
    pub(super) rng: SimRng,
    /// Holding, or reserved for a job in hand-off / a woken sleeper.
    pub(super) held: bool,
    /// Node of the last holder.
    pub(super) holder_node: u32,
    /// Waiters that sleep (FIFO).
    pub(super) sleepers: VecDeque<u32>,
    /// Waiters spinning right now.
    pub(super) spinners: u32,
    /// The PS station whose capacity spinning and waking waiters and the
    /// holder use.
    pub(super) cpu: Option<usize>,
    /// Thread time: CPU seconds received by each of this latch's threads on
    /// `cpu` (wall time without one), as of `t_since`. It advances at
    /// `t_share`, a thread's share of a core there, so a PAUSE loop or a
    /// context switch that needs w seconds of CPU takes w / share.
    pub(super) t_clock: f64,
    pub(super) t_share: f64,
    pub(super) t_since: f64,
    /// Spinners' next polls and woken sleepers' ends of switch-in
    /// (job | `WAKING`), keyed by thread time.
    pub(super) waits: TagHeap,
    /// The one live poll event: its version, and the tag and share it was
    /// timed with.
    pub(super) wait_version: u32,
    pub(super) wait_pending: bool,
    pub(super) wait_tag: f64,
    pub(super) wait_share: f64,
    /// Holder whose critical section is running (NONE during a hand-off
    /// or when free).
    pub(super) cs_job: u32,
    /// The next poll's scheduling was left to `flush` (the cpu's
    /// population had changed in the event).
    pub(super) wait_deferred: bool,
    /// Version of the live critical-section end event (re-timing makes
    /// the older ones stale).
    pub(super) cs_version: u32,
    /// Remaining work of the running critical section (seconds at
    /// nominal speed, or units of work with a speed curve) as of `cs_since`.
    pub(super) cs_work: f64,
    /// Speed applied to it since `cs_since`.
    pub(super) cs_rate: f64,
    pub(super) cs_since: f64,
    /// Woken sleepers being switched back in (`WAKING` entries of `waits`).
    pub(super) waking: u32,
    /// Measured areas under `spinners` and under the sleeping threads
    /// (`sleepers` plus `waking`), integrated up to `counts_since` by
    /// [`LatchRt::acc_waiters`] before every change of those counts.
    pub(super) area_spin: f64,
    pub(super) area_sleep: f64,
    pub(super) counts_since: f64,
    /// Critical sections may end without an event of their own (a spin
    /// latch on a cpu, without NUMA hand-off or speed curve, off the
    /// poll-by-poll reference path): see [`Simulation::lazy_settle`].
    pub(super) lazy_ok: bool,
    /// The running section ends at `lazy_t` without an event, and its
    /// holder is already booked on the cpu from then on, in direct slot
    /// `lazy_slot`.
    pub(super) lazy: bool,
    pub(super) lazy_t: f64,
    pub(super) lazy_slot: u32,
    /// The holder goes on along its fork's fixed route (one step at the
    /// release).
    pub(super) lazy_step: bool,
}

/// Marks a woken sleeper (switching in) in `LatchRt::waits`; job ids stay
/// far below it.
pub(super) const WAKING: u32 = 1 << 31;

/// One spin episode: a waiter from the time it starts spinning until it
/// takes the latch or gives up and sleeps.
///
/// Its poll delays are a stream of their own: delay k is a pure function
/// of (`seed`, k) (SplitMix64 at position k), so the poll-by-poll path and
/// the event-saving path, which draws a run of polls at once, see the same
/// polls.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SpinSlot {
    pub(super) job: u32,
    pub(super) seed: u64,
    /// Polls confirmed so far (all found the latch held).
    pub(super) polls: u32,
    /// Thread time of the last confirmed poll (or of the start).
    pub(super) tag: f64,
}

impl LatchRt {
    /// A free latch with a NUMA or spin mechanism; `rng` is the station's
    /// mechanism stream.
    pub(super) fn new(l: &LatchSpec, speed: Option<SpeedRt>, rng: SimRng) -> LatchRt {
        let sp = l.spin.as_ref();
        let speed_none = speed.is_none();
        LatchRt {
            #[cfg(not(feature = "bias"))]
            numa: l.numa.clone(),
            #[cfg(feature = "bias")]
            numa: l.numa.clone().map(crate::bias::handoff),
            spin: l.spin.clone(),
            wake: l.wake,
            unit_s: sp.map_or(0.0, SpinSpec::unit_s),
            units: sp.map_or(0, |sp| sp.spin_wait_delay as u64),
            uniform: sp.is_some_and(|sp| sp.poll_delay == PollDelay::Uniform),
            rounds: sp.map_or(0, |sp| sp.spin_rounds),
            poll_by_poll: sp.is_some_and(|sp| sp.poll_by_poll),
            slots: Vec::new(),
            free_slots: Vec::new(),
            poll_count: 0,
            poll_sum: 0.0,
            area_occ: 0.0,
            occ_since: 0.0,
            speed,
            rng,
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
            wait_deferred: false,
            cs_job: NONE,
            cs_version: 0,
            cs_work: 0.0,
            cs_rate: 1.0,
            cs_since: 0.0,
            waking: 0,
            area_spin: 0.0,
            area_sleep: 0.0,
            counts_since: 0.0,
            lazy_ok: sp.is_some_and(|sp| !sp.poll_by_poll && sp.cpu.is_some())
                && l.numa.is_none()
                && speed_none,
            lazy: false,
            lazy_t: 0.0,
            lazy_slot: 0,
            lazy_step: false,
        }
    }

    /// Brings the thread clock to `now`.
    #[inline]
    pub(super) fn advance(&mut self, now: f64) {
        self.t_clock += self.t_share * (now - self.t_since);
        self.t_since = now;
    }

    /// Threads asleep on the latch: queued sleepers and woken ones still
    /// being switched back in.
    #[inline]
    pub(super) fn sleeping(&self) -> u32 {
        self.sleepers.len() as u32 + self.waking
    }

    /// Integrates the spinning and sleeping areas up to `now`; call before
    /// changing `spinners`, `sleepers` or `waking`.
    #[inline]
    pub(super) fn acc_waiters(&mut self, now: f64) {
        let dt = now - self.counts_since;
        self.area_spin += f64::from(self.spinners) * dt;
        self.area_sleep += f64::from(self.sleeping()) * dt;
        self.counts_since = now;
    }

    /// Integrates the "anyone present" area up to `now` for `n` present;
    /// call before changing the number present.
    #[inline]
    pub(super) fn acc_occ(&mut self, now: f64, n: u32) {
        if n > 0 {
            self.area_occ += now - self.occ_since;
        }
        self.occ_since = now;
    }

    /// Delay k (0-based) of the spin episode with stream `seed`: one
    /// `ut_delay`, in seconds of thread time.
    ///
    /// InnoDB draws ut_rnd_interval(0, srv_spin_wait_delay) units; in
    /// MySQL 5.5-5.7 (storage/innobase/include/ut0rnd.ic) that is
    /// low + rnd % (high - low), a whole number in [0, d - 1] (the
    /// header's "can generate also this value" for `high` is not what the
    /// code does), and 0 when d = 0; MySQL 8.0 calls
    /// ut::random_from_interval instead. `PollDelay::Units` follows 5.7.
    #[inline]
    fn poll_delay(&self, seed: u64, k: u32) -> f64 {
        let mut state = seed.wrapping_add(u64::from(k).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let x = splitmix64(&mut state);
        if self.uniform {
            (x >> 11) as f64 * (1.0 / (1u64 << 53) as f64) * self.units_f() * self.unit_s
        } else {
            // Multiply-high: a whole number in [0, units).
            (((u128::from(x) * u128::from(self.units)) >> 64) as u64) as f64 * self.unit_s
        }
    }

    /// `spin_wait_delay` as a number (continuous with `Uniform`).
    #[inline]
    fn units_f(&self) -> f64 {
        self.spin.as_ref().map_or(0.0, |sp| sp.spin_wait_delay)
    }

    /// Starts a spin episode for job `j` at thread time `tag`; returns
    /// its slot.
    fn open_slot(&mut self, j: u32, tag: f64) -> u32 {
        let slot = SpinSlot {
            job: j,
            seed: self.rng.next_u64(),
            polls: 0,
            tag,
        };
        match self.free_slots.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Confirms the polls of slot `i` up to `polls`, at thread time `tag`
    /// (each found the latch held).
    #[inline]
    fn confirm(&mut self, i: u32, polls: u32, tag: f64) {
        let sl = &mut self.slots[i as usize];
        self.poll_count += u64::from(polls - sl.polls);
        self.poll_sum += tag - sl.tag;
        sl.polls = polls;
        sl.tag = tag;
    }

    /// Thread time until which the latch is surely held, the thread clock
    /// being at `now`: the end of the running critical section (its
    /// remaining work is thread time: the holder and the spinners run at
    /// the same share of the cpu), less a margin for rounding. −∞ (no
    /// skipping) poll by poll, during a NUMA hand-off, or with a speed
    /// curve (the section's speed may rise before it ends).
    fn held_until(&self, now: f64) -> f64 {
        if self.poll_by_poll || self.speed.is_some() || self.cs_job == NONE {
            return f64::NEG_INFINITY;
        }
        let left = (self.cs_work - (now - self.cs_since) * self.cs_rate).max(0.0);
        let end = self.t_clock + left;
        end - 1e-12 * (1.0 + end.abs())
    }

    /// The next poll of slot `i` that needs an event: its next poll, or
    /// in the event-saving path the first from thread time `held_until`
    /// on (the latch is held until then, so the polls before it fail and
    /// are confirmed here without events), but never beyond its
    /// `spin_rounds`-th poll, where it gives up.
    fn next_poll(&mut self, i: u32, held_until: f64) -> f64 {
        let sl = self.slots[i as usize];
        let (mut polls, mut tag) = (sl.polls, sl.tag);
        let mut next = tag + self.poll_delay(sl.seed, polls);
        while next < held_until && polls + 1 < self.rounds {
            polls += 1;
            tag = next;
            next = tag + self.poll_delay(sl.seed, polls);
        }
        self.confirm(i, polls, tag);
        next
    }
}

impl Simulation {
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
        if let Kind::Latch(l) = &self.stations[s].kind
            && let Some(cpu) = l.cpu
        {
            self.cpu_burn(cpu, delta);
        }
    }

    /// [`Simulation::latch_cpu_burn`] on spin cpu `cpu`, known to the
    /// caller; returns a thread's share of a core there afterwards (what
    /// `latch_thread_share` finds: 1 when the cpu is steady, in direct
    /// mode within its servers, where nothing needs re-timing). Inlined: it
    /// runs at the start and the end of every critical section, and the
    /// end has no use for the share.
    #[inline(always)]
    fn cpu_burn(&mut self, cpu: usize, delta: i32) -> f64 {
        let now = self.now;
        let st = &mut self.stations[cpu];
        let Kind::V(vc) = &mut st.kind else {
            return 1.0;
        };
        // In direct mode the clock stands still (its rate is 0), and
        // integrating over no time adds nothing: both are skipped when
        // they would change nothing (the holder of a section that a cpu
        // completion has just started).
        if !vc.direct {
            vc.advance(now);
        }
        if st.stats.last != now {
            st.stats.acc(now);
        }
        vc.spinners = vc.spinners.wrapping_add_signed(delta);
        st.stats.busy = vc.busy();
        if vc.steady(st.stats.n) {
            return 1.0;
        }
        if !vc.dirty {
            vc.dirty = true;
            self.dirty.push(cpu as u32);
        }
        let g = vc.per_job(st.stats.n, st.stats.n);
        if g > 0.0 { g } else { 1.0 }
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
    pub(super) fn latch_cpu_changed(&mut self, cpu: usize) {
        // A thread's share there is the same for every latch on it: work
        // it out once.
        let share = match &self.stations[cpu] {
            StationRt {
                kind: Kind::V(vc),
                stats,
                ..
            } => {
                // `flush` has just worked the share out: 1 in direct mode
                // (every thread at full speed), else the clock's rate when
                // every job is in service (PS).
                if vc.direct {
                    1.0
                } else if vc.insvc.len() as u32 == stats.n && vc.g > 0.0 {
                    vc.g
                } else {
                    let g = vc.per_job(stats.n, stats.n);
                    if g > 0.0 { g } else { 1.0 }
                }
            }
            _ => return,
        };
        let mut i = 0;
        loop {
            let Kind::V(vc) = &self.stations[cpu].kind else {
                return;
            };
            let Some(&s) = vc.latches.get(i) else {
                return;
            };
            let s = s as usize;
            // Mostly the population only moved between the cpu's jobs and
            // this latch's threads (a job taking or releasing it): the
            // share is the same, and only a poll left to `flush` needs
            // scheduling.
            if let Kind::Latch(l) = &self.stations[s].kind
                && l.speed.is_none()
                && l.t_share == share
                && (l.cs_job == NONE || l.cs_rate == share)
            {
                if l.wait_deferred {
                    self.latch_schedule_wait(s);
                }
            } else {
                self.latch_retime(s, share);
            }
            i += 1;
        }
    }

    /// Latch `s`'s threads may have a new share `g` of the cpu: move the
    /// thread clock to the new rate and re-time the next poll or switch-in
    /// and the running critical section.
    fn latch_retime(&mut self, s: usize, g: f64) {
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::Latch(l) = &mut st.kind else {
            return;
        };
        if g != l.t_share {
            l.advance(now);
            l.t_share = g;
        }
        self.latch_schedule_wait(s);
        let st = &mut self.stations[s];
        let Kind::Latch(l) = &mut st.kind else {
            return;
        };
        if l.cs_job == NONE {
            return;
        }
        // The same rate as `latch_cs_rate`, with the share known.
        let rate = l.speed.as_ref().map_or(1.0, |sp| sp.rate(st.stats.n)) * g;
        if rate != l.cs_rate {
            self.latch_retime_cs(s);
        }
    }

    /// Keeps one live event for the earliest of latch `s`'s pending polls
    /// and switch-ins, timed at the current share (older ones go stale).
    fn latch_schedule_wait(&mut self, s: usize) {
        let now = self.now;
        let Kind::Latch(l) = &mut self.stations[s].kind else {
            return;
        };
        l.wait_deferred = false;
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
        let Kind::Latch(l) = &mut self.stations[s].kind else {
            return;
        };
        if !l.wait_pending && l.waits.len() == 0 {
            // Nobody spins or switches in, and no event is live: nothing
            // to schedule (the common, uncontended case).
            l.wait_deferred = false;
            return;
        }
        if let Some(cpu) = l.cpu
            && let Kind::V(vc) = &self.stations[cpu].kind
            && vc.dirty
        {
            if let Kind::Latch(l) = &mut self.stations[s].kind {
                l.wait_deferred = true;
            }
            return;
        }
        self.latch_schedule_wait(s);
    }

    // Kept out of the event loop: the plain queue path stays tight.
    #[inline(never)]
    pub(super) fn latch_arrive(&mut self, j: u32, s: usize) {
        self.lazy_touch(s);
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::Latch(l) = &mut st.kind else {
            return;
        };
        st.stats.acc(now);
        l.acc_occ(now, st.stats.n);
        st.stats.n += 1;
        if !l.held {
            // Uncontended: take it at once (no hand-off).
            l.held = true;
            st.stats.busy = 1;
            self.start_cs(j, s);
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
        if l.spin.is_some() && l.rounds > 0 {
            l.spinners += 1;
            l.advance(now);
            let i = l.open_slot(j, l.t_clock);
            let until = l.held_until(now);
            let key = l.next_poll(i, until);
            l.waits.push(key, i);
            self.latch_cpu_burn(s, 1);
            self.latch_schedule_wait_soon(s);
        } else {
            l.sleepers.push_back(j);
            // The release must wake it: the section needs its end event.
            self.lazy_materialize(s);
        }
    }

    /// Job `j` holds the latch: its critical section starts now, on the
    /// cpu if the latch has one. With a speed curve the section is work at
    /// rate(n); it is re-timed whenever its speed changes (see
    /// `latch_retime_cs`).
    fn latch_start_cs(&mut self, j: u32, s: usize) {
        self.start_cs(j, s);
    }

    /// [`Simulation::latch_start_cs`], inlined into `latch_arrive`, where
    /// most sections start (the latch found free).
    #[inline(always)]
    fn start_cs(&mut self, j: u32, s: usize) {
        let now = self.now;
        let Kind::Latch(l) = &self.stations[s].kind else {
            return;
        };
        // The holder's thread starts running on the cpu.
        let share = match l.cpu {
            Some(cpu) => self.cpu_burn(cpu, 1),
            None => 1.0,
        };
        let st = &mut self.stations[s];
        let Kind::Latch(l) = &mut st.kind else {
            return;
        };
        let job = &mut self.jobs[j as usize];
        job.t_start = now;
        let class = job.class as usize;
        let d = st.service[class].sample(&mut st.rng);
        // The speed of `latch_cs_rate`, with the share known.
        let (work, rate) = match &l.speed {
            Some(sp) => (d * st.inv_mean[class], sp.rate(st.stats.n) * share),
            None => (d, share),
        };
        l.cs_job = j;
        l.cs_work = work;
        l.cs_rate = rate;
        l.cs_since = now;
        l.cs_version = l.cs_version.wrapping_add(1);
        let version = l.cs_version;
        let end = later(now, work / rate);
        if l.lazy_ok && rate == 1.0 && l.sleepers.is_empty() && self.lazy_begin(j, s, end) {
            return;
        }
        self.fel.push(end, ev(EV_LATCH_DONE, s as u32, version));
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
        if l.speed.is_none()
            && let Some(cpu) = l.cpu
            && let StationRt {
                kind: Kind::V(vc),
                stats,
                ..
            } = &self.stations[cpu]
            && vc.steady(stats.n)
        {
            // Every thread on the cpu runs at full speed.
            return 1.0;
        }
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

    pub(super) fn on_latch_grant(&mut self, s: usize, j: u32) {
        self.lazy_touch(s);
        self.events += 1;
        self.latch_start_cs(j, s);
    }

    /// End of a critical section (stale when it was re-timed since).
    // Kept out of the event loop: the plain queue path stays tight.
    #[inline(never)]
    pub(super) fn on_latch_done(&mut self, s: usize, version: u32) {
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::Latch(l) = &mut st.kind else {
            return;
        };
        if l.cs_job == NONE || l.cs_version != version || l.lazy {
            return;
        }
        self.lazy_touch(s);
        let st = &mut self.stations[s];
        let Kind::Latch(l) = &mut st.kind else {
            return;
        };
        self.events += 1;
        l.acc_waiters(now);
        let j = std::mem::replace(&mut l.cs_job, NONE);
        st.stats.acc(now);
        l.acc_occ(now, st.stats.n);
        st.stats.n -= 1;
        // Without spinning, a sleeper is handed the latch at once: it
        // stays held (utilization is the held fraction).
        l.held = l.spin.is_none() && !l.sleepers.is_empty();
        st.stats.busy = u32::from(l.held);
        Simulation::record_departure(&mut st.stats, &self.jobs[j as usize], now);
        let cpu = l.cpu;
        let mut woken = 0;
        match &l.spin {
            None => {
                // Sleeping waiters get the latch in FIFO order.
                if let Some(nx) = l.sleepers.pop_front() {
                    self.latch_handoff(nx, s);
                }
            }
            Some(spin) => {
                // Free: the next spinner to poll takes it; sleepers are woken
                // and must run `context_switch_s` on the cpu first.
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
        if woken != 1
            && let Some(cpu) = cpu
        {
            self.cpu_burn(cpu, woken - 1);
        }
        self.latch_schedule_wait_soon(s);
        self.leave(j, s as u32);
    }

    /// The earliest pending poll or switch-in of latch `s` is due (stale
    /// when it was re-timed since).
    // Kept out of the event loop: the plain queue path stays tight.
    #[inline(never)]
    pub(super) fn on_latch_poll(&mut self, s: usize, version: u32) {
        let now = self.now;
        let Kind::Latch(l) = &mut self.stations[s].kind else {
            return;
        };
        if !l.wait_pending || l.wait_version != version {
            return;
        }
        self.lazy_touch(s);
        let Kind::Latch(l) = &mut self.stations[s].kind else {
            return;
        };
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
            self.latch_poll(s, e, tag);
        }
        self.latch_schedule_wait_soon(s);
    }

    /// The spinner of slot `i` polls latch `s` at thread time `tag`.
    fn latch_poll(&mut self, s: usize, i: u32, tag: f64) {
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::Latch(l) = &mut st.kind else {
            return;
        };
        let sl = l.slots[i as usize];
        l.confirm(i, sl.polls + 1, tag);
        if !l.held {
            // This poll finds it free: take it.
            st.stats.acc(now);
            st.stats.busy = 1;
            l.held = true;
            l.spinners -= 1;
            l.free_slots.push(i);
            self.latch_cpu_burn(s, -1);
            self.latch_handoff(sl.job, s);
            return;
        }
        if sl.polls + 1 >= l.rounds {
            // Give up spinning: sleep until a release wakes it.
            l.spinners -= 1;
            l.sleepers.push_back(sl.job);
            l.free_slots.push(i);
            // The release must wake it: the section needs its end event.
            self.lazy_materialize(s);
            self.latch_cpu_burn(s, -1);
        } else {
            let until = l.held_until(now);
            let key = l.next_poll(i, until);
            l.waits.push(key, i);
        }
    }

    /// Woken sleeper `j` runs again.
    fn latch_switched_in(&mut self, s: usize, j: u32) {
        self.latch_cpu_burn(s, -1);
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::Latch(l) = &mut st.kind else {
            return;
        };
        if !l.held {
            st.stats.acc(now);
            st.stats.busy = 1;
            l.held = true;
            self.latch_handoff(j, s);
            return;
        }
        match l.wake {
            // Lost the race after a single wake-up: spin again.
            Wake::One => self.latch_wait(j, s),
            // Thundering herd: the losers go back to sleep (the next
            // release wakes them again, and each pays another switch).
            Wake::All => {
                l.sleepers.push_back(j);
                self.lazy_materialize(s);
            }
        }
    }
}
