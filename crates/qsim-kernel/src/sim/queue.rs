//! Plain queue and delay stations (fixed speed, not PS): each completion is
//! scheduled directly, and time averages come from per-job sums (see
//! [`StStats`](super::stats::StStats)). This is the hot path.

use super::event::{EV_ARRIVAL_AT, EV_DONE, EV_EXIT_DONE, EV_PLAIN_DONE, EXIT, NONE, ev, later};
use super::job::Job;
use super::{ClassRt, Kind, Simulation, StationRt};
use crate::fel::Fel;

impl Simulation {
    /// Job `j` (already marked as arrived) joins plain queue `s` with `c`
    /// servers. Takes the station and the job apart from `self` so that
    /// the event loop's references stay in registers.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn queue_arrive(
        st: &mut StationRt,
        job: &mut Job,
        j: u32,
        s: usize,
        c: u32,
        now: f64,
        fel: &mut Fel,
        classes: &[ClassRt],
    ) {
        let class = job.class as usize;
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
            fel.push_unsigned(later(now, d), ev(st.done, s as u32, j));
        } else {
            // SAFETY: a job's class is a class index; `classes` is
            // never resized.
            let prio = unsafe { classes.get_unchecked(class) }.priority;
            st.waiting.push(j, prio);
        }
    }

    /// An arrival of open class `c`, whose route is the one station `s`
    /// ([`Simulation::one_stop`]): `on_arrival` with the route's only step
    /// taken here (the same draws, the same job, at the same station).
    /// `e` is the event itself: the next arrival is the same event.
    #[inline(always)]
    pub(super) fn on_arrival_at(&mut self, c: usize, s: u32, e: u64) {
        self.events += 1;
        debug_assert!(self.one_stop() == Some(s) && c < self.classes.len());
        // SAFETY: EV_ARRIVAL_AT events carry a class index (set up by
        // `init` and here), and `classes` is never resized.
        let cl = unsafe { self.classes.get_unchecked_mut(c) };
        if let Some(d) = &cl.open {
            let t = later(self.now, d.sample(&mut cl.rng));
            debug_assert_eq!(e, ev(EV_ARRIVAL_AT, c as u32, s));
            self.fel.push_unsigned(t, e);
        }
        let j = self.alloc(c as u32);
        self.in_network += 1;
        self.check_unstable();
        // SAFETY: `alloc` hands out ids of the slab.
        let job = unsafe { self.jobs.get_unchecked_mut(j as usize) };
        job.t0 = self.now;
        job.pos = 1;
        self.arrive(j, s as usize);
    }

    /// Job `j` (already marked as arrived) enters plain delay station `s`.
    #[inline(always)]
    pub(super) fn delay_arrive(
        st: &mut StationRt,
        job: &mut Job,
        j: u32,
        s: usize,
        now: f64,
        fel: &mut Fel,
    ) {
        let class = job.class as usize;
        #[cfg(debug_assertions)]
        st.stats.acc(now);
        st.stats.n += 1;
        st.stats.sum_arr += now;
        job.t_start = now;
        // SAFETY: one service entry per class, and a job's class is a
        // class index.
        let d = unsafe { st.service.get_unchecked(class) }.sample(&mut st.rng);
        fel.push_unsigned(later(now, d), ev(st.done, s as u32, j));
    }

    /// A fixed-speed completion: an `EV_DONE` event (`EXITS` false) or an
    /// `EV_EXIT_DONE` one (`EXITS` true; the job leaves the network, see
    /// `Simulation::mark_exit_station`).
    #[inline(always)]
    pub(super) fn on_done<const EXITS: bool>(&mut self, s: usize, j: u32) {
        self.events += 1;
        let now = self.now;
        // SAFETY: EV_DONE and EV_EXIT_DONE are only scheduled by
        // `queue_arrive`, `delay_arrive` and `on_done` with a station index
        // already in bounds (`stations` is never resized) and a job id from
        // the slab's allocator (the slab never shrinks).
        let st = unsafe { self.stations.get_unchecked_mut(s) };
        #[cfg(debug_assertions)]
        st.stats.acc(now);
        st.stats.n -= 1;
        let job = unsafe { self.jobs.get_unchecked(j as usize) };
        Simulation::record_departure_plain(&mut st.stats, job, now);
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
                let kind = if EXITS { EV_EXIT_DONE } else { EV_DONE };
                self.fel
                    .push_unsigned(later(now, d), ev(kind, s as u32, nx));
            } else {
                st.stats.busy -= 1;
            }
        }
        if EXITS {
            debug_assert!(
                self.jobs[j as usize].fork == NONE && self.next_target(j, s as u32) == EXIT
            );
            self.exit(j);
        } else {
            self.leave_hot(j, s as u32);
        }
    }

    /// Job `j` (already marked as arrived) comes to plain station `s` on
    /// the slower path ([`Kind::Plain`]): with room for `limit` jobs, it
    /// joins it, or is lost, or waits for room (a blocking station).
    #[cold]
    #[inline(never)]
    pub(super) fn plain_arrive(&mut self, j: u32, s: usize, limit: u32) {
        self.stations[s].stats.offered += 1;
        if self.client.is_some() && self.client_balks(j, s) {
            return;
        }
        let st = &mut self.stations[s];
        if st.stats.n >= limit {
            if let Kind::Plain { block: true, .. } = st.kind {
                self.hold(j, s);
            } else {
                self.drop_job(j, s);
            }
            return;
        }
        self.plain_enter(j, s);
    }

    /// Job `j` (already marked as arrived) joins plain station `s`, which
    /// has room. The same bookkeeping as [`Simulation::queue_arrive`], plus
    /// the per-class sums of a multi-class model and `acc` for the
    /// number-present distribution of station tails.
    pub(super) fn plain_enter(&mut self, j: u32, s: usize) {
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::Plain { c, .. } = st.kind else {
            unreachable!("plain_enter on a station that is not Kind::Plain")
        };
        // Plain areas come from per-job sums: the integrated ones serve only
        // the number-present distribution of station tails (and the check
        // of debug builds).
        if cfg!(debug_assertions) || st.stats.tails.is_some() {
            st.stats.acc(now);
        }
        let job = &mut self.jobs[j as usize];
        let class = job.class as usize;
        if let Some(pc) = &mut st.per_class {
            pc.acc(now, st.stats.busy);
            pc.arrive(class, now, st.stats.busy < c);
        }
        st.stats.n += 1;
        st.stats.sum_arr += now;
        if st.stats.busy < c {
            st.stats.busy += 1;
            st.stats.sum_start += now;
            job.t_start = now;
            let mut d = st.service[class].sample(&mut st.rng);
            if let Some(f) = self.service_scale.get(s) {
                d *= f;
            }
            self.fel.push(later(now, d), ev(EV_PLAIN_DONE, s as u32, j));
        } else {
            st.waiting.push(j, self.classes[class].priority);
            if self.client.is_some() {
                self.client_queued(j, s);
            }
        }
    }

    /// A completion at a [`Kind::Plain`] station.
    #[cold]
    #[inline(never)]
    pub(super) fn on_plain_done(&mut self, s: usize, j: u32) {
        let Kind::Plain { block, sends, .. } = self.stations[s].kind else {
            unreachable!("EV_PLAIN_DONE at a station that is not Kind::Plain")
        };
        if sends {
            self.on_sender_done(s, j);
            return;
        }
        self.events += 1;
        self.plain_depart(s, j);
        if block {
            self.make_room(s);
        }
        self.leave(j, s as u32);
    }

    /// Job `j` leaves plain station `s` now (its service done, and any
    /// blocking over): its server takes the next waiting job or goes idle.
    pub(super) fn plain_depart(&mut self, s: usize, j: u32) {
        if self.client.is_some() {
            self.client_depart(s, j);
        }
        let now = self.now;
        let st = &mut self.stations[s];
        // See `plain_arrive`.
        if cfg!(debug_assertions) || st.stats.tails.is_some() {
            st.stats.acc(now);
        }
        let job = &self.jobs[j as usize];
        Simulation::depart_counts(&mut st.stats, &mut st.per_class, job, now);
        st.stats.sum_arr -= job.t_arr;
        st.stats.sum_start -= job.t_start;
        // Fewer servers than busy ones (a capacity schedule stepped down):
        // this one goes idle.
        let over = matches!(st.kind, Kind::Plain { c, .. } if st.stats.busy > c);
        let next = if over {
            None
        } else if self.client.is_some() {
            self.client_pop(s)
        } else {
            st.waiting.pop()
        };
        let st = &mut self.stations[s];
        if let Some(nx) = next {
            st.stats.sum_start += now;
            let job = &mut self.jobs[nx as usize];
            job.t_start = now;
            if let Some(pc) = &mut st.per_class {
                pc.start(job.class as usize, now);
            }
            let mut d = st.service[job.class as usize].sample(&mut st.rng);
            if let Some(f) = self.service_scale.get(s) {
                d *= f;
            }
            self.fel
                .push(later(now, d), ev(EV_PLAIN_DONE, s as u32, nx));
        } else {
            st.stats.busy -= 1;
        }
    }

    /// Job `j` found plain station `s` full and is lost.
    pub(super) fn drop_job(&mut self, j: u32, s: usize) {
        self.stations[s].stats.dropped += 1;
        if self.client.is_some() {
            self.client_refused(j);
            return;
        }
        let job = &mut self.jobs[j as usize];
        job.station = EXIT;
        if job.fork != NONE {
            // A lost sub-job's work is not done; its join still counts it.
            let join = self.forks[job.fork as usize].join;
            self.arrive(j, join as usize);
            return;
        }
        if let Some(&start) = self.chain_start.get(job.class as usize) {
            // A lost job ends its interaction in the class it started in.
            job.class = start;
        }
        let class = job.class as usize;
        self.in_network -= 1;
        if self.classes[class].open.is_some() {
            self.free.push(j);
        } else {
            // `Network::new` admits only closed classes with a think time
            // here: the job thinks, then starts a new interaction.
            self.think(j);
        }
    }
}
