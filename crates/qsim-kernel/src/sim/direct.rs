//! Direct mode of a PS spin cpu (the `spin.cpu` of a latch): while its
//! threads (jobs plus latch threads) are no more than its servers, each
//! runs at full speed, so every job gets its own completion event at
//! arrival + work, as at a delay station, and nothing is re-timed; past
//! the servers the station runs on its virtual clock (see `vclock`), and
//! comes back below them. Kept out of `vclock` and out of line: code added
//! to the functions around the event loop changes how the compiler lays
//! the plain loop out.

use super::event::{EV_PSDONE, EV_VDONE, NONE, ev, later};
use super::vclock::{VClock, VMode};
use super::{Kind, Simulation};
use crate::fel::Fel;

impl VClock {
    /// Allows direct mode (a PS spin cpu without a speed curve, idle).
    pub(super) fn allow_direct(&mut self) {
        if self.mode == VMode::Shared && self.speed.is_none() && self.c < u32::MAX {
            self.direct_ok = true;
            self.direct = true;
        }
    }

    /// In direct mode with `n` jobs and its latch threads within the
    /// servers: every thread runs at full speed before and after the
    /// change being made, so `flush` has nothing to re-time (a change that
    /// passes the servers, even for a moment, marks the station dirty).
    #[inline]
    pub(super) fn steady(&self, n: u32) -> bool {
        self.direct && n + self.spinners <= self.c
    }

    /// Direct mode: job `j` enters service, done at `t`. Out of line, as
    /// is all of direct mode: code inlined here changes how the compiler
    /// lays out the plain event loop.
    #[inline(never)]
    pub(super) fn start_direct(&mut self, fel: &mut Fel, s: u32, j: u32, t: f64) -> u32 {
        let i = self.take_slot(j, t);
        fel.push(t, ev(EV_PSDONE, s, i));
        i
    }

    /// Direct mode: frees slot `i`, booked for a job not there yet (not
    /// counted in `dn`); its event goes stale (see `on_psdone`).
    pub(super) fn drop_booked(&mut self, i: u32) {
        self.free_slot(i);
    }

    /// Direct mode: slot `i` is free again.
    #[inline(always)]
    fn free_slot(&mut self, i: u32) {
        self.ds.slots[i as usize] = (0.0, NONE);
        self.ds.free.push(i);
    }

    /// Enters or leaves direct mode as `n` jobs and the latch threads fit
    /// the servers or not (the clock being at `now`, for station `s`);
    /// true when in direct mode, where `flush` has nothing more to do.
    #[inline(never)]
    pub(super) fn switch_mode(&mut self, fel: &mut Fel, s: u32, now: f64, n: u32) -> bool {
        let threads = n + self.spinners;
        if self.direct {
            if threads <= self.c {
                return true;
            }
            // Past the servers: each job's remaining work becomes its
            // finish tag on a fresh clock (their events go stale with the
            // slots).
            self.direct = false;
            self.v = 0.0;
            self.last = now;
            for k in 0..self.ds.slots.len() {
                let (t, j) = self.ds.slots[k];
                if j != NONE {
                    self.insvc.push((t - now).max(0.0), j);
                }
            }
            self.ds.slots.clear();
            self.ds.free.clear();
            self.dn = 0;
            false
        } else if threads <= self.c {
            // Back within the servers: full speed for every job.
            self.advance(now);
            if self.pending {
                fel.cancel(self.pend_t, ev(EV_VDONE, s, self.version));
                self.version = self.version.wrapping_add(1);
                self.pending = false;
            }
            self.direct = true;
            while let Some((tag, j)) = self.insvc.pop() {
                let t = later(now, (tag - self.v).max(0.0));
                self.start_direct(fel, s, j, t);
            }
            self.v = 0.0;
            self.g = 0.0;
            true
        } else {
            false
        }
    }

    /// Direct mode: job `j` completes at `t`; returns its slot.
    #[inline]
    fn take_slot(&mut self, j: u32, t: f64) -> u32 {
        self.dn += 1;
        match self.ds.free.pop() {
            Some(i) => {
                self.ds.slots[i as usize] = (t, j);
                i
            }
            None => {
                self.ds.slots.push((t, j));
                (self.ds.slots.len() - 1) as u32
            }
        }
    }
}

impl Simulation {
    /// Job `j` (already marked as arrived) joins spin cpu `s` in direct
    /// mode: it enters service at once, at full speed (see `flush`), done
    /// after its work. `vclock_arrive` without the clock, which stands
    /// still in direct mode. Inlined there: speed-curve stations only
    /// pay the test for direct mode.
    #[inline(always)]
    pub(super) fn direct_arrive(&mut self, j: u32, s: usize) {
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::V(vc) = &mut st.kind else {
            return;
        };
        let job = &mut self.jobs[j as usize];
        let class = job.class as usize;
        // A job back from the cpu's latch comes at the instant the
        // holder's thread left, when the areas were integrated last:
        // integrating over no time would add nothing.
        if st.stats.last != now {
            st.stats.acc(now);
        }
        Simulation::start_counts(&mut st.stats, &mut st.per_class, job, now);
        let w = st.service[class].sample(&mut st.rng);
        let t = later(now, w);
        let i = vc.take_slot(j, t);
        self.fel.push(t, ev(EV_PSDONE, s as u32, i));
        st.stats.busy = vc.busy();
        if !vc.dirty && !vc.steady(st.stats.n) {
            vc.dirty = true;
            self.dirty.push(s as u32);
        }
    }

    /// A completion in direct mode: the job in slot `i`, if it is due now
    /// (else the event is stale: the station left direct mode, or the slot
    /// went to another job, since it was scheduled). Only a job due now
    /// completes, and a job's own event is never lost while it holds its
    /// slot, so each job completes once, at its time.
    #[inline(never)]
    pub(super) fn on_psdone(&mut self, s: usize, i: u32) {
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::V(vc) = &mut st.kind else {
            return;
        };
        if !vc.direct {
            return;
        }
        let Some(&(t, j)) = vc.ds.slots.get(i as usize) else {
            return;
        };
        if j == NONE || t != now {
            return;
        }
        if vc.lazy > 0 {
            self.lazy_settle_cpu(s);
        }
        let st = &mut self.stations[s];
        let Kind::V(vc) = &mut st.kind else {
            return;
        };
        self.events += 1;
        vc.free_slot(i);
        vc.dn -= 1;
        let job = &self.jobs[j as usize];
        Simulation::depart_now(&mut st.stats, &mut st.per_class, job, now);
        st.stats.busy = vc.busy();
        if !vc.dirty && !vc.steady(st.stats.n) {
            vc.dirty = true;
            self.dirty.push(s as u32);
        }
        self.leave(j, s as u32);
    }
}
