//! Critical sections that end without an event of their own.
//!
//! When the holder of a spin latch goes straight back to the latch's cpu
//! (its routing row from the latch is that cpu alone, no draw, or that cpu
//! is the next step of its fork's fixed route) and the cpu runs every
//! thread at full speed (direct mode within its cores), the end of the
//! section changes nothing anyone can see at that instant: the holder's
//! thread on the cpu becomes a job there (the thread count, so every speed,
//! stays the same), and spinners' polls were already timed from the
//! section's end. So the section gets no event: its holder's next cpu
//! burst is booked at once, from the section's end, and the release is
//! settled later, at its own time, by whatever next touches the latch or
//! its cpu, or reads statistics. A running section gets its event after
//! all, and its holder's booked burst is dropped (the draw influenced
//! nothing), only when something would see its end: its cpu passing its
//! cores (the section slows down; `flush`) or a waiter going to sleep (the
//! release must wake it). Every page visit of a spin model then costs one
//! event instead of two.

use super::event::{EV_LATCH_DONE, NONE, ev, later};
use super::routing::{Route, SubRoute};
use super::{Kind, Simulation};

impl Simulation {
    /// Starts latch `s`'s section for `j`, ending at `end`, without an
    /// event, when the holder goes straight back to a full-speed cpu;
    /// false (nothing changed) otherwise.
    #[inline(never)]
    pub(super) fn lazy_begin(&mut self, j: u32, s: usize, end: f64) -> bool {
        let Kind::Latch(l) = &self.stations[s].kind else {
            return false;
        };
        let Some(cpu) = l.cpu else {
            return false;
        };
        let Some(step) = self.lazy_route(j, s, cpu) else {
            return false;
        };
        let class = self.jobs[j as usize].class as usize;
        let st = &mut self.stations[cpu];
        let Kind::V(vc) = &mut st.kind else {
            return false;
        };
        if !vc.steady(st.stats.n) {
            return false;
        }
        let w = st.service[class].sample(&mut st.rng);
        let slot = vc.start_direct(&mut self.fel, cpu as u32, j, later(end, w));
        // Booked, not there yet: `dn` counts it from the release on.
        vc.dn -= 1;
        vc.lazy += 1;
        self.lazy_open += 1;
        if let Kind::Latch(l) = &mut self.stations[s].kind {
            l.lazy = true;
            l.lazy_t = end;
            l.lazy_slot = slot;
            l.lazy_step = step;
        }
        true
    }

    /// How job `j` leaving latch `s` goes on to station `cpu` with no draw
    /// and nothing else on the way (no regions, no class switching):
    /// `Some(false)` by a routing row of that cpu alone, `Some(true)` as
    /// the next step of its fork's fixed route (which the release then
    /// moves on by one), `None` otherwise.
    fn lazy_route(&self, j: u32, s: usize, cpu: usize) -> Option<bool> {
        if self.slow_goto {
            return None;
        }
        let job = &self.jobs[j as usize];
        if job.fork != NONE {
            let rec = &self.forks[job.fork as usize];
            if rec.join == s as u32 {
                return None;
            }
            match rec.sub {
                SubRoute::Rows => {}
                SubRoute::Join => return None,
                SubRoute::Fixed => {
                    let Kind::Fork(f) = &self.stations[rec.fork as usize].kind else {
                        return None;
                    };
                    let next = f.steps.get(job.pos as usize).copied();
                    return (next == Some(cpu as u32)).then_some(true);
                }
            }
        }
        let Route::Prob { from, sub, .. } = &self.classes[job.class as usize].route else {
            return None;
        };
        let row = if job.fork != NONE {
            sub.get(s)
        } else {
            from.get(s)
        };
        row.is_some_and(|b| b.targets.len() == 1 && b.targets[0] == cpu as u32)
            .then_some(false)
    }

    /// Something is about to touch latch `s` (and through it its cpu):
    /// settle the sections on that cpu that end without an event.
    #[inline(always)]
    pub(super) fn lazy_touch(&mut self, s: usize) {
        if self.lazy_open > 0
            && let Kind::Latch(l) = &self.stations[s].kind
            && let Some(cpu) = l.cpu
        {
            self.lazy_settle_cpu(cpu);
        }
    }

    /// Settles the ended event-less sections of every latch whose threads
    /// run on `cpu` (out of line: the paths of other stations stay as they
    /// are).
    #[cold]
    #[inline(never)]
    pub(super) fn lazy_settle_cpu(&mut self, cpu: usize) {
        self.lazy_each(cpu, Simulation::lazy_settle);
    }

    /// Calls `f` with each latch whose threads run on `cpu`, while any of
    /// them has an event-less section.
    #[inline(always)]
    fn lazy_each(&mut self, cpu: usize, f: impl Fn(&mut Simulation, usize)) {
        let mut i = 0;
        loop {
            let Kind::V(vc) = &self.stations[cpu].kind else {
                return;
            };
            if vc.lazy == 0 {
                return;
            }
            let Some(&s) = vc.latches.get(i) else {
                return;
            };
            f(self, s as usize);
            i += 1;
        }
    }

    /// Settles every event-less section: before statistics are read.
    #[inline(always)]
    pub(super) fn lazy_settle_all(&mut self) {
        if self.lazy_open > 0 {
            self.lazy_settle_every();
        }
    }

    #[cold]
    #[inline(never)]
    fn lazy_settle_every(&mut self) {
        for s in 0..self.stations.len() {
            if matches!(&self.stations[s].kind, Kind::Latch(l) if l.lazy) {
                self.lazy_settle(s);
            }
        }
    }

    /// Latch `s`'s event-less section, if any, when it has ended (at or
    /// before now): released at its own time, as `on_latch_done` and the
    /// holder's arrival at the cpu would have done then. A section still
    /// running stays as it is: a spinner times its polls from its end, and
    /// the holder runs at full speed while the cpu stays within its cores
    /// (else `flush` gives it its event: [`Simulation::lazy_materialize`]).
    fn lazy_settle(&mut self, s: usize) {
        let now = self.now;
        let Kind::Latch(l) = &mut self.stations[s].kind else {
            return;
        };
        if !l.lazy || l.lazy_t > now {
            return;
        }
        l.lazy = false;
        let (t, step) = (l.lazy_t, l.lazy_step);
        let Some(cpu) = l.cpu else {
            return;
        };
        self.lazy_open -= 1;
        let st = &mut self.stations[s];
        let Kind::Latch(l) = &mut st.kind else {
            return;
        };
        l.acc_waiters(t);
        let j = std::mem::replace(&mut l.cs_job, NONE);
        st.stats.acc(t);
        l.acc_occ(t, st.stats.n);
        st.stats.n -= 1;
        l.held = false;
        st.stats.busy = 0;
        l.advance(t);
        Simulation::record_departure(&mut st.stats, &self.jobs[j as usize], t);
        // The holder's thread on the cpu becomes a job there.
        let st = &mut self.stations[cpu];
        let Kind::V(vc) = &mut st.kind else {
            return;
        };
        vc.lazy -= 1;
        vc.advance(t);
        st.stats.acc(t);
        vc.spinners -= 1;
        vc.dn += 1;
        st.stats.n += 1;
        let job = &mut self.jobs[j as usize];
        job.t_arr = t;
        job.t_start = t;
        // The move along a fixed route that `sub_target` would have made.
        job.pos += u32::from(step);
        job.station = cpu as u32;
        if let Some(pc) = &mut st.per_class {
            pc.acc(t, st.stats.busy);
            pc.arrive(job.class as usize, t, true);
        }
        st.stats.busy = vc.busy();
    }

    /// Gives latch `s`'s running event-less section its end event after
    /// all, and drops its holder's booked cpu burst (whose draw influenced
    /// nothing): the section's speed is about to change (its cpu passes
    /// its cores) or its release must wake a sleeper.
    pub(super) fn lazy_materialize(&mut self, s: usize) {
        let Kind::Latch(l) = &mut self.stations[s].kind else {
            return;
        };
        if !l.lazy {
            return;
        }
        l.lazy = false;
        let (t, slot, version) = (l.lazy_t, l.lazy_slot, l.cs_version);
        let Some(cpu) = l.cpu else {
            return;
        };
        self.lazy_open -= 1;
        self.fel.push(t, ev(EV_LATCH_DONE, s as u32, version));
        if let Kind::V(vc) = &mut self.stations[cpu].kind {
            vc.lazy -= 1;
            vc.drop_booked(slot);
        }
    }

    /// [`Simulation::lazy_materialize`] for every latch on `cpu`.
    #[cold]
    #[inline(never)]
    pub(super) fn lazy_materialize_cpu(&mut self, cpu: usize) {
        self.lazy_each(cpu, Simulation::lazy_materialize);
    }
}
