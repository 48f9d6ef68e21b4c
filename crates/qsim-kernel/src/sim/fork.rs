//! Fork and join: a job splits into sub-jobs and waits at the join for
//! them (all, or a quorum).

use super::event::NONE;
use super::routing::{Route, SubRoute};
use super::{Kind, Simulation};
use crate::dist::unit;
use crate::network::{ForkSpec, Spread};
use crate::rng::SimRng;

#[derive(Clone, Debug)]
pub(super) struct ForkRt {
    pub(super) fan_out: u32,
    pub(super) targets: Vec<u32>,
    pub(super) cum: Vec<f64>,
    pub(super) random: bool,
    pub(super) join: u32,
    pub(super) next: u32,
    pub(super) rng: SimRng,
    /// Fixed sub-job routes, one after the other, each ended by NONE (then
    /// the join); empty when sub-jobs have none.
    pub(super) steps: Vec<u32>,
    /// Where each target's route starts in `steps`.
    pub(super) starts: Vec<u32>,
}

/// A fork in progress: the parent waits at the join for its sub-jobs.
/// Aligned to 32 bytes (its fields take 26): every visit of a sub-job
/// finds its record by index, and a power-of-two size makes that a shift.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(32))]
pub(super) struct ForkRec {
    pub(super) parent: u32,
    /// The fork station: where the parent stands for region accounting.
    pub(super) fork: u32,
    pub(super) join: u32,
    pub(super) needed: u32,
    pub(super) arrived: u32,
    pub(super) outstanding: u32,
    pub(super) released: bool,
    /// How the sub-jobs route: fixed for the fork's life (its routes and
    /// the parent's class do not change), so a visit need not look at the
    /// fork station or the class's kind of route.
    pub(super) sub: SubRoute,
}

impl ForkRt {
    /// A fork's runtime; `rng` is the station's mechanism stream (random
    /// spread).
    pub(super) fn new(f: &ForkSpec, rng: SimRng) -> ForkRt {
        // Cumulative target weights, normalized; the last catches all.
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
        let mut steps = Vec::new();
        let mut starts = Vec::new();
        for r in &f.routes {
            starts.push(steps.len() as u32);
            steps.extend(r.iter().map(|&s| s as u32));
            steps.push(NONE);
        }
        ForkRt {
            steps,
            starts,
            fan_out: f.fan_out,
            targets: f.targets.iter().map(|t| t.0 as u32).collect(),
            cum,
            random: f.spread == Spread::Random,
            join: f.join as u32,
            next: 0,
            rng,
        }
    }
}

impl Simulation {
    // ---- fork and join ----

    pub(super) fn fork_arrive(&mut self, j: u32, s: usize) {
        let now = self.now;
        let (fan_out, join, fixed) = {
            let st = &mut self.stations[s];
            let Kind::Fork(f) = &st.kind else {
                return;
            };
            // The fork is instantaneous: the parent passes through it.
            st.stats.departures += 1;
            (f.fan_out, f.join as usize, !f.steps.is_empty())
        };
        let sub = if fixed {
            SubRoute::Fixed
        } else if let Route::Prob { .. } = self.classes[self.jobs[j as usize].class as usize].route
        {
            SubRoute::Rows
        } else {
            SubRoute::Join
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
            sub,
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
            let (target, pos) = {
                let Kind::Fork(f) = &mut self.stations[s].kind else {
                    return;
                };
                let i = if f.random {
                    let u = unit(&mut f.rng);
                    f.cum.iter().position(|&c| u < c).unwrap_or(0)
                } else {
                    let i = f.next as usize % f.targets.len();
                    f.next = f.next.wrapping_add(1);
                    i
                };
                (f.targets[i], f.starts.get(i).copied().unwrap_or(0))
            };
            let sub = self.alloc(class);
            let job = &mut self.jobs[sub as usize];
            job.fork = r;
            job.t0 = t0;
            job.node = thread;
            // A sub-job's place in its fork's fixed route (unused otherwise).
            job.pos = pos;
            self.in_network += 1;
            self.goto(sub, s as u32, target);
        }
        self.check_unstable();
    }

    pub(super) fn join_arrive(&mut self, j: u32, s: usize) {
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
            if pj.fork == NONE
                && let Route::Seq(seq) = &self.classes[pj.class as usize].route
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
}
