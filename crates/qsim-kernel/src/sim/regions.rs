//! Regions (pools, throttles): at most `limit` jobs inside a set of
//! stations, the others waiting in a FIFO queue outside.
//!
//! A job holds its place in a region while it moves between member
//! stations, and while it waits to enter a further region on its way: a
//! region inside another (a connection pool inside a thread pool) is taken
//! while the outer one is held. A move that enters several regions at once
//! takes them in the order each station keeps its regions (larger first,
//! then file order: see `build::regions`), waiting at the first full one
//! with the earlier ones held. Regions taken in opposite orders by two
//! routes can deadlock; `check_deadlock` stops the replication then.

use super::Simulation;
use super::event::EXIT;
use crate::error::RunError;
use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub(super) struct RegionStats {
    pub(super) last: f64,
    pub(super) area_inside: f64,
    pub(super) area_waiting: f64,
    pub(super) admitted: u64,
    pub(super) sum_wait: f64,
}

#[derive(Clone)]
pub(super) struct RegionRt {
    pub(super) name: Box<str>,
    pub(super) limit: u32,
    pub(super) inside: u32,
    /// Jobs inside that are waiting to enter another region (a deadlock
    /// needs every job inside a full region to be one of them).
    pub(super) held_waiting: u32,
    pub(super) members: Vec<bool>,
    pub(super) queue: VecDeque<u32>,
    pub(super) stats: RegionStats,
}

impl RegionRt {
    #[inline]
    pub(super) fn acc(&mut self, now: f64) {
        let dt = now - self.stats.last;
        self.stats.area_inside += f64::from(self.inside) * dt;
        self.stats.area_waiting += self.queue.len() as f64 * dt;
        self.stats.last = now;
    }
}

impl Simulation {
    #[inline(never)]
    pub(super) fn cross_regions(&mut self, j: u32, from: u32, to: u32) {
        let now = self.now;
        // Leave the regions that contain `from` but not `to`.
        if from != EXIT {
            // Inner regions first (the reverse of the order of taking).
            for k in (0..self.stations[from as usize].regions.len()).rev() {
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
        self.enter_regions(j, 0);
    }

    /// Lets job `j` (headed to `pending`, coming from `station`) into the
    /// regions it is entering, from position `start` of the target's list
    /// on; it queues at the first full one.
    fn enter_regions(&mut self, j: u32, start: usize) {
        let now = self.now;
        let to = self.jobs[j as usize].pending;
        let from = self.jobs[j as usize].station;
        if to != EXIT {
            for k in start..self.stations[to as usize].regions.len() {
                let r = self.stations[to as usize].regions[k] as usize;
                let reg = &mut self.regions[r];
                if from != EXIT && reg.members[from as usize] {
                    continue;
                }
                reg.acc(now);
                let limit = reg.limit;
                #[cfg(feature = "bias")]
                let limit = crate::bias::region_limit(limit);
                if reg.inside >= limit {
                    reg.queue.push_back(j);
                    // Remember when it started waiting.
                    self.jobs[j as usize].t_arr = now;
                    self.start_waiting(j, k);
                    return;
                }
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
        let limit = self.regions[r].limit;
        #[cfg(feature = "bias")]
        let limit = crate::bias::region_limit(limit);
        while self.regions[r].inside < limit {
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
            let k = self.position(w, r);
            self.stop_waiting(w, k);
            self.enter_regions(w, k + 1);
        }
    }

    /// Where region `r` is in the region list of job `j`'s target.
    fn position(&self, j: u32, r: usize) -> usize {
        let to = self.jobs[j as usize].pending as usize;
        let regs = &self.stations[to].regions;
        regs.iter()
            .position(|&x| x as usize == r)
            .unwrap_or(regs.len())
    }

    /// Whether job `j`, waiting at position `k` of its target's regions,
    /// holds the region at position `i` of that list: one it took earlier
    /// in this move, or one its last station shares with the target.
    fn holds(&self, j: u32, k: usize, i: usize) -> bool {
        let job = &self.jobs[j as usize];
        let r = self.stations[job.pending as usize].regions[i] as usize;
        i < k || (job.station != EXIT && self.regions[r].members[job.station as usize])
    }

    /// Job `j` has started waiting at position `k` of its target's regions:
    /// count it in the regions it holds, and look for a deadlock when one of
    /// them is full of jobs that all wait.
    fn start_waiting(&mut self, j: u32, k: usize) {
        let to = self.jobs[j as usize].pending as usize;
        let mut suspect = false;
        for i in 0..self.stations[to].regions.len() {
            if self.holds(j, k, i) {
                let reg = &mut self.regions[self.stations[to].regions[i] as usize];
                reg.held_waiting += 1;
                suspect |= reg.inside >= reg.limit && reg.held_waiting >= reg.inside;
            }
        }
        if suspect {
            self.check_deadlock_regions();
        }
    }

    /// Job `j`, which waited at position `k`, has been let in.
    fn stop_waiting(&mut self, j: u32, k: usize) {
        let to = self.jobs[j as usize].pending as usize;
        for i in 0..self.stations[to].regions.len() {
            if self.holds(j, k, i) {
                let reg = &mut self.regions[self.stations[to].regions[i] as usize];
                reg.held_waiting -= 1;
            }
        }
    }

    /// The regions that can never admit anyone again, if any: the largest
    /// set of full regions every job inside which waits to enter a region
    /// of the set. Stops the replication with their names and one cycle of
    /// them (a job inside each waits for the next).
    #[cold]
    fn check_deadlock_regions(&mut self) {
        let nr = self.regions.len();
        // Each waiting job: the region it waits for and the ones it holds.
        let mut waits: Vec<(usize, Vec<usize>)> = Vec::new();
        for w in 0..nr {
            for &j in &self.regions[w].queue {
                let k = self.position(j, w);
                let to = self.jobs[j as usize].pending as usize;
                let held = (0..self.stations[to].regions.len())
                    .filter(|&i| self.holds(j, k, i))
                    .map(|i| self.stations[to].regions[i] as usize)
                    .collect();
                waits.push((w, held));
            }
        }
        let mut stuck: Vec<bool> = self
            .regions
            .iter()
            .map(|g| g.inside > 0 && g.inside >= g.limit && g.held_waiting >= g.inside)
            .collect();
        // A region one of whose jobs waits outside the set can still empty.
        let mut changed = true;
        while changed {
            changed = false;
            for (w, held) in &waits {
                if !stuck[*w] {
                    for &x in held {
                        changed |= std::mem::replace(&mut stuck[x], false);
                    }
                }
            }
        }
        let Some(first) = stuck.iter().position(|&s| s) else {
            return;
        };
        // Walk from region to region along waiting jobs until one repeats.
        let mut path = vec![first];
        loop {
            let x = *path.last().unwrap_or(&first);
            let next = waits
                .iter()
                .find(|(w, held)| stuck[*w] && held.contains(&x))
                .map_or(first, |(w, _)| *w);
            if let Some(p) = path.iter().position(|&y| y == next) {
                path.drain(..p);
                path.push(next);
                break;
            }
            path.push(next);
        }
        let name = |r: usize| self.regions[r].name.to_string();
        if self.error.is_none() {
            self.event_cap = 0;
            self.error = Some(RunError::RegionDeadlock {
                replication: self.index,
                regions: (0..nr).filter(|&r| stuck[r]).map(name).collect(),
                cycle: path.into_iter().map(name).collect(),
                time_s: self.now,
            });
        }
    }
}
