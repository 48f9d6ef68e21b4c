//! Regions (throttles): at most `limit` jobs inside a set of stations, the
//! others waiting in a FIFO queue outside.

use super::Simulation;
use super::event::EXIT;
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
    pub(super) limit: u32,
    pub(super) inside: u32,
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
}
