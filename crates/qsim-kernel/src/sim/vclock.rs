//! Stations with a speed curve, and PS stations: a virtual-work clock that
//! re-times every job in service whenever the number present changes.
//!
//! A PS spin cpu (the `spin.cpu` of a latch) also has a direct mode: while
//! its threads (jobs plus latch threads) are no more than its servers,
//! each runs at full speed, so every job gets its own completion event at
//! arrival + work, as at a delay station, and nothing needs re-timing. Past
//! the servers it switches to the virtual clock, and back below them.

use super::dps::Dps;
use super::event::{EV_VDONE, ev, later};
use super::preempt::Preempt;
use super::waiting::TagHeap;
use super::{Kind, Simulation};
use crate::network::Speed;

/// Direct mode's jobs: a (completion time, job) slot each (`NONE` marks a
/// free slot), and the free slots.
#[derive(Clone, Debug, Default)]
pub(super) struct DirectSlots {
    pub(super) slots: Vec<(f64, u32)>,
    pub(super) free: Vec<u32>,
}

/// Contention-dependent speed with a cache of integer points.
#[derive(Clone, Debug)]
pub(super) struct SpeedRt {
    pub(super) speed: Speed,
    pub(super) cache: Vec<f64>,
}

impl SpeedRt {
    pub(super) fn new(speed: Speed) -> SpeedRt {
        let cache = (0..=1024u32)
            .map(|n| {
                #[cfg(feature = "bias")]
                let n = crate::bias::speed_n(n);
                speed.rate(f64::from(n.max(1)))
            })
            .collect();
        SpeedRt { speed, cache }
    }
    #[inline]
    pub(super) fn rate(&self, n: u32) -> f64 {
        match self.cache.get(n as usize) {
            Some(&r) => r,
            None => self.speed.rate(f64::from(n)),
        }
    }
}

/// Which jobs a virtual-clock station serves at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum VMode {
    /// Up to `c` jobs in service, the rest wait (FCFS, LCFS, priority, latch).
    Queue,
    /// Every job present is in service, sharing the capacity.
    Shared,
}

/// Virtual-work clock of a station with a speed curve or PS.
#[derive(Clone, Debug)]
pub(super) struct VClock {
    pub(super) mode: VMode,
    /// Servers (u32::MAX for a delay station).
    pub(super) c: u32,
    pub(super) speed: Option<SpeedRt>,
    pub(super) v: f64,
    /// Per-job work rate in effect since `last`.
    pub(super) g: f64,
    pub(super) last: f64,
    pub(super) version: u32,
    pub(super) insvc: TagHeap,
    pub(super) pending: bool,
    pub(super) pend_tag: f64,
    pub(super) pend_g: f64,
    /// Time of the pending completion event.
    pub(super) pend_t: f64,
    pub(super) dirty: bool,
    /// Latch threads burning this station's capacity (spinning, being
    /// switched in, or running a critical section): they share it like
    /// jobs but never complete here.
    pub(super) spinners: u32,
    /// Latches whose threads run here (`spin.cpu`): re-timed when the
    /// share of a thread here changes.
    pub(super) latches: Vec<u32>,
    /// Direct mode allowed (a PS spin cpu without a speed curve).
    pub(super) direct_ok: bool,
    /// In direct mode: `insvc` is empty and the jobs in service are in
    /// `slots`, each with its own completion event.
    pub(super) direct: bool,
    /// Arrivals take their own path: preemptive priority (`pre`) or
    /// weighted PS (`dps`).
    pub(super) own_path: bool,
    /// (completion time, job) of each job in direct mode (`NONE` marks a
    /// free slot), and the free slots: boxed, so that the clock's hot
    /// fields keep their places for the stations that never use it.
    pub(super) ds: Box<DirectSlots>,
    /// Jobs in `slots`.
    pub(super) dn: u32,
    /// Latches of this cpu whose running critical section ends without an
    /// event (see `Simulation::lazy_settle`): anything that touches the
    /// cpu settles the ended ones first, and `flush` gives the running
    /// ones their events when the cpu passes its cores.
    pub(super) lazy: u32,
    /// A preemptive-priority station's jobs (`None` for the others).
    pub(super) pre: Option<Box<Preempt>>,
    /// A weighted PS station's per-class clocks (`None` for the others).
    pub(super) dps: Option<Box<Dps>>,
}

impl VClock {
    /// An idle clock for `c` servers (`u32::MAX` for a delay station).
    pub(super) fn new(mode: VMode, c: u32, speed: Option<SpeedRt>) -> VClock {
        VClock {
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
            pend_t: 0.0,
            dirty: false,
            spinners: 0,
            latches: Vec::new(),
            direct_ok: false,
            direct: false,
            own_path: false,
            ds: Box::default(),
            dn: 0,
            lazy: 0,
            pre: None,
            dps: None,
        }
    }

    /// An idle preemptive-priority clock for `c` servers.
    pub(super) fn preemptive(c: u32, speed: Option<SpeedRt>) -> VClock {
        VClock {
            pre: Some(Box::default()),
            own_path: true,
            ..VClock::new(VMode::Queue, c, speed)
        }
    }

    #[inline(always)]
    pub(super) fn advance(&mut self, now: f64) {
        self.v += self.g * (now - self.last);
        self.last = now;
    }

    /// Per-job work rate with `n` present and `k` in service; latch
    /// spinners count as present and in service (a PS share each).
    #[inline]
    pub(super) fn per_job(&self, n: u32, k: u32) -> f64 {
        let (n, k) = (n + self.spinners, k + self.spinners);
        let total = match &self.speed {
            Some(s) => s.rate(n),
            None => f64::from(n.min(self.c)),
        };
        total / f64::from(k.max(1))
    }

    /// Busy servers: jobs in service plus spinners, at most `c`.
    #[inline(always)]
    pub(super) fn busy(&self) -> u32 {
        (self.insvc.len() as u32 + self.dn + self.spinners).min(self.c)
    }
}

impl Simulation {
    /// Job `j` (already marked as arrived) joins virtual-clock station
    /// `s`: it enters service at once (PS, or a free server) with its work
    /// as a finish tag, or waits; the station is re-timed by `flush`.
    pub(super) fn vclock_arrive(&mut self, j: u32, s: usize) {
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::V(vc) = &mut st.kind else {
            return;
        };
        if vc.direct {
            // Sections ending without events exist only in direct mode.
            if vc.lazy > 0 {
                self.lazy_settle_cpu(s);
            }
            self.direct_arrive(j, s);
            return;
        }
        if vc.own_path {
            if vc.pre.is_some() {
                self.preempt_arrive(j, s);
            } else {
                self.dps_arrive(j, s);
            }
            return;
        }
        let job = &mut self.jobs[j as usize];
        let class = job.class as usize;
        vc.advance(now);
        st.stats.acc(now);
        st.stats.n += 1;
        let served = vc.mode == VMode::Shared || (vc.insvc.len() as u32) < vc.c;
        if let Some(pc) = &mut st.per_class {
            pc.acc(now, st.stats.busy);
            pc.arrive(class, now, served);
        }
        if served {
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
        // Off direct mode the station is never steady.
        if !vc.dirty {
            vc.dirty = true;
            self.dirty.push(s as u32);
        }
    }

    /// A virtual-clock completion (stale when the version moved on).
    /// Direct-mode completions are events of their own (`EV_PSDONE`, see
    /// `direct`), so the clock's completions never test for them.
    pub(super) fn on_vdone(&mut self, s: usize, version: u32) {
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
            // A weighted PS station keeps its jobs on per-class clocks
            // (its `insvc` stays empty), so plain PS never tests for it.
            if vc.dps.is_some() {
                self.dps_done(s);
            }
            return;
        };
        // The clock has reached the tag (exactly, to avoid drift).
        vc.v = tag;
        vc.last = now;
        let job = &self.jobs[j as usize];
        Simulation::depart_now(&mut st.stats, &mut st.per_class, job, now);
        if vc.mode == VMode::Queue
            && let Some(pre) = vc.pre.as_deref_mut()
        {
            pre.depart(j);
        }
        if vc.mode == VMode::Queue
            && let Some(nx) = st.waiting.pop()
        {
            let job = &mut self.jobs[nx as usize];
            let class = job.class as usize;
            // A preempted job resumes with the work it had left.
            if let Some(w) = vc.pre.as_deref_mut().and_then(|pre| pre.resume(nx)) {
                if let Some(pc) = &mut st.per_class {
                    pc.resume(class, job.t_start);
                }
                vc.insvc.push(vc.v + w, nx);
            } else {
                job.t_start = now;
                if let Some(pc) = &mut st.per_class {
                    pc.start(class, now);
                }
                let w = st.service[class].sample(&mut st.rng);
                let w = if vc.speed.is_some() {
                    w * st.inv_mean[class]
                } else {
                    w
                };
                vc.insvc.push(vc.v + w, nx);
            }
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
    pub(super) fn flush(&mut self) {
        let now = self.now;
        while let Some(s) = self.dirty.pop() {
            let st = &mut self.stations[s as usize];
            let Kind::V(vc) = &mut st.kind else {
                continue;
            };
            vc.dirty = false;
            if !vc.latches.is_empty() {
                if vc.lazy > 0 && !vc.steady(st.stats.n) {
                    // Past its cores: the holders' sections slow down, so
                    // they get their events before anything is re-timed.
                    self.lazy_materialize_cpu(s as usize);
                    self.dirty.push(s);
                    let Kind::V(vc) = &mut self.stations[s as usize].kind else {
                        continue;
                    };
                    vc.dirty = true;
                    continue;
                }
                self.spin_dirty.push(s);
                // Only a spin cpu has a direct mode. Mostly it stays in
                // its mode, in which case `switch_mode` has nothing to do.
                if vc.direct_ok {
                    let fits = st.stats.n + vc.spinners <= vc.c;
                    if vc.direct && fits {
                        continue;
                    }
                    if (vc.direct || fits) && vc.switch_mode(&mut self.fel, s, now, st.stats.n) {
                        continue;
                    }
                }
            }
            // The clock was advanced to `now` when the population changed.
            vc.advance(now);
            let Some(tag) = vc.insvc.min_tag() else {
                // Weighted PS: per-class clocks, `insvc` always empty.
                if vc.dps.is_some() {
                    self.dps_flush(s as usize);
                    continue;
                }
                if vc.pending {
                    self.fel.cancel(vc.pend_t, ev(EV_VDONE, s, vc.version));
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
            // Re-timed: the old completion is taken out of the list when it
            // is cheap to find (array layout); otherwise its version makes
            // it stale. Either way at most one live completion per station.
            if vc.pending {
                self.fel.cancel(vc.pend_t, ev(EV_VDONE, s, vc.version));
            }
            vc.version = vc.version.wrapping_add(1);
            vc.pending = true;
            vc.pend_tag = tag;
            vc.pend_g = g;
            let dt = (tag - vc.v).max(0.0) / g;
            vc.pend_t = later(now, dt);
            self.fel.push(vc.pend_t, ev(EV_VDONE, s, vc.version));
        }
        while let Some(cpu) = self.spin_dirty.pop() {
            self.latch_cpu_changed(cpu as usize);
        }
    }
}
