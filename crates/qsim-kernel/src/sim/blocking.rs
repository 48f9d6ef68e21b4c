//! Blocking after service (`when_full = "block"`): a job routed to a full
//! blocking station stays at its sender, holding its server there, until
//! the station has room; then it moves at once, jobs blocked on one
//! station in the order they became blocked.
//!
//! Only [`Kind::Plain`] stations take part: a blocking station, and every
//! station that can send to one (`sends`), are built as `Kind::Plain`, so
//! the hot path never looks at any of this. A blocked job stays present at
//! its sender (its `n`) with its server occupied (its `busy`), so the
//! per-job sums of the sender count the blocked time as time present and
//! as occupied server time; [`BlockRt`] keeps the blocked part apart so
//! that utilization stays the serving fraction.

use super::event::{EXIT, NONE};
use super::{Kind, Simulation};
use crate::error::RunError;
use std::collections::VecDeque;

/// One job waiting to enter a full blocking station.
#[derive(Clone, Copy, Debug)]
pub(super) struct Blocked {
    pub(super) job: u32,
    /// The station holding it, or [`NONE`]: it waits outside every station
    /// (a closed job after its think time, a fork's sub-job).
    pub(super) from: u32,
    /// When it became blocked.
    pub(super) since: f64,
}

/// The blocking state of one station: as a blocking station, the jobs
/// waiting to enter it; as a sender, the jobs it holds blocked.
#[derive(Clone, Debug, Default)]
pub(super) struct BlockRt {
    /// Jobs waiting to enter this station, first blocked first.
    pub(super) queue: VecDeque<Blocked>,
    /// Jobs this station holds blocked (queue senders only: a delay has no
    /// servers to run out of, so it needs no deadlock check).
    pub(super) held: Vec<u32>,
    /// Jobs this station holds blocked now (any sender).
    pub(super) blocked: u32,
    /// Time integral of `blocked` since `last`'s reset.
    pub(super) area_blocked: f64,
    pub(super) last: f64,
    /// Blocking episodes at this sender that ended, and their total time.
    pub(super) episodes: u64,
    pub(super) sum_blocked: f64,
    /// Arrivals at this blocking station that found it full and waited.
    pub(super) waited: u64,
}

impl BlockRt {
    /// Integrates `blocked` up to `now`; call before changing it.
    fn acc(&mut self, now: f64) {
        self.area_blocked += f64::from(self.blocked) * (now - self.last);
        self.last = now;
    }

    /// The measured part starts at `now`.
    pub(super) fn reset(&mut self, now: f64) {
        self.area_blocked = 0.0;
        self.last = now;
        self.episodes = 0;
        self.sum_blocked = 0.0;
        self.waited = 0;
    }

    /// Time integral of the blocked jobs up to `now`.
    pub(super) fn area(&self, now: f64) -> f64 {
        self.area_blocked + f64::from(self.blocked) * (now - self.last)
    }
}

impl Simulation {
    /// Whether station `to` blocks its senders and is full now.
    fn full_blocking(&self, to: u32) -> bool {
        match self
            .stations
            .get(to as usize)
            .map(|st| (&st.kind, st.stats.n))
        {
            Some((&Kind::Plain { limit, block, .. }, n)) => block && n >= limit,
            _ => false,
        }
    }

    /// Where job `j`, done at station `s`, goes next: drawn once, at the
    /// end of its service, whether or not it must then wait.
    fn target_after(&mut self, j: u32, s: u32) -> u32 {
        let fork = self.jobs[j as usize].fork;
        let to = if fork != NONE {
            self.sub_target(j, s)
        } else {
            self.next_target(j, s)
        };
        // A row with a policy settles its station now, whose room is then
        // checked.
        self.settle_policy(j, s, to)
    }

    /// A completion at plain station `s` that can send to a blocking
    /// station: job `j` moves on, or stays blocked if its target is full
    /// (a job routed back to `s` itself frees its own place first).
    pub(super) fn on_sender_done(&mut self, s: usize, j: u32) {
        self.events += 1;
        let to = self.target_after(j, s as u32);
        if to != EXIT && to != s as u32 && self.full_blocking(to) {
            self.block(j, s, to);
            return;
        }
        self.plain_depart(s, j);
        self.make_room(s);
        self.goto(j, s as u32, to);
    }

    /// Job `j` finished service at `s` and waits for full station `to`.
    fn block(&mut self, j: u32, s: usize, to: u32) {
        let now = self.now;
        let target = &mut self.blocking[to as usize];
        target.waited += 1;
        target.queue.push_back(Blocked {
            job: j,
            from: s as u32,
            since: now,
        });
        self.stations[to as usize].stats.offered += 1;
        self.jobs[j as usize].pending = to;
        let b = &mut self.blocking[s];
        b.acc(now);
        b.blocked += 1;
        let Kind::Plain { c, .. } = self.stations[s].kind else {
            return;
        };
        if c != u32::MAX {
            b.held.push(j);
            if b.held.len() as u64 >= u64::from(c) {
                self.check_deadlock(s);
            }
        }
    }

    /// Job `j` arrived from outside (or from a fork) at full blocking
    /// station `s`: a closed job or a sub-job waits outside every station,
    /// an open class's arrival is lost (a Poisson source does not wait).
    pub(super) fn hold(&mut self, j: u32, s: usize) {
        let job = &self.jobs[j as usize];
        if job.fork == NONE && self.classes[job.class as usize].open.is_some() {
            self.drop_job(j, s);
            return;
        }
        let job = &mut self.jobs[j as usize];
        job.station = EXIT;
        job.pending = s as u32;
        let b = &mut self.blocking[s];
        b.waited += 1;
        b.queue.push_back(Blocked {
            job: j,
            from: NONE,
            since: self.now,
        });
    }

    /// Station `s` lost a job: while it has room, the first job blocked on
    /// it enters, which frees a place at that job's sender, and so on up
    /// the chain of blocked senders.
    pub(super) fn make_room(&mut self, mut s: usize) {
        let now = self.now;
        loop {
            let st = &self.stations[s];
            let Kind::Plain { limit, block, .. } = st.kind else {
                return;
            };
            if !block || st.stats.n >= limit {
                return;
            }
            let Some(b) = self.blocking[s].queue.pop_front() else {
                return;
            };
            let from = b.from;
            if from != NONE {
                let f = &mut self.blocking[from as usize];
                f.acc(now);
                f.blocked -= 1;
                f.episodes += 1;
                f.sum_blocked += now - b.since;
                if let Some(k) = f.held.iter().position(|&x| x == b.job) {
                    f.held.swap_remove(k);
                }
                self.plain_depart(from as usize, b.job);
            }
            let job = &mut self.jobs[b.job as usize];
            job.pending = EXIT;
            job.t_arr = now;
            job.station = s as u32;
            self.plain_enter(b.job, s);
            if from == NONE {
                return;
            }
            s = from as usize;
        }
    }

    /// Station `s` has just had all its servers blocked: if every station
    /// its blocked jobs wait for is in the same state, and so on, none of
    /// them can ever move again. Stops the replication then.
    #[cold]
    fn check_deadlock(&mut self, s: usize) {
        let stuck = |sim: &Simulation, x: usize| match sim.stations[x].kind {
            Kind::Plain { c, .. } => {
                c != u32::MAX && sim.blocking[x].held.len() as u64 >= u64::from(c)
            }
            _ => false,
        };
        let mut seen = vec![s];
        let mut stack = vec![s];
        while let Some(x) = stack.pop() {
            for &j in &self.blocking[x].held {
                let t = self.jobs[j as usize].pending as usize;
                if !stuck(self, t) {
                    return;
                }
                if !seen.contains(&t) {
                    seen.push(t);
                    stack.push(t);
                }
            }
        }
        seen.sort_unstable();
        if self.error.is_none() {
            self.event_cap = 0;
            self.error = Some(RunError::Deadlock {
                replication: self.index,
                stations: seen.iter().map(|&x| self.names[x].clone()).collect(),
                time_s: self.now,
            });
        }
    }
}
