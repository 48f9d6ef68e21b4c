//! Batch (group commit) and link stations: groups of jobs served together.

use super::event::{EV_BATCH_TIMER, EV_GROUP_DONE, ev, later};
use super::{Kind, Simulation};
use crate::network::{BatchSpec, LinkSpec};

/// Batch (group commit) and link state.
#[derive(Clone, Debug)]
pub(super) struct GroupRt {
    /// Jobs per group at most.
    pub(super) max_batch: u32,
    /// Per-job service added to a batch.
    pub(super) per_job_s: f64,
    pub(super) max_wait_s: Option<f64>,
    /// Jobs of each in-flight slot.
    pub(super) groups: Vec<Vec<u32>>,
    pub(super) free_slots: Vec<u32>,
    pub(super) timer_version: u32,
    pub(super) timer_armed: bool,
}

impl GroupRt {
    /// A batch station: one group at a time.
    pub(super) fn batch(b: &BatchSpec) -> GroupRt {
        GroupRt {
            max_batch: b.max_batch,
            per_job_s: b.per_job_s,
            max_wait_s: b.max_wait_s,
            groups: vec![Vec::new()],
            free_slots: vec![0],
            timer_version: 0,
            timer_armed: false,
        }
    }

    /// A link: `pipeline` groups in flight, no batching timer.
    pub(super) fn link(l: &LinkSpec) -> GroupRt {
        GroupRt {
            max_batch: l.max_batch,
            per_job_s: 0.0,
            max_wait_s: None,
            groups: vec![Vec::new(); l.pipeline as usize],
            free_slots: (0..l.pipeline).rev().collect(),
            timer_version: 0,
            timer_armed: false,
        }
    }
}

impl Simulation {
    // ---- batch and link: groups of jobs served together ----

    pub(super) fn group_arrive(&mut self, j: u32, s: usize) {
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

    pub(super) fn on_batch_timer(&mut self, s: usize, version: u32) {
        let Kind::Group(g) = &self.stations[s].kind else {
            return;
        };
        if !g.timer_armed || g.timer_version != version {
            return;
        }
        self.events += 1;
        self.group_try_start(s, true);
    }

    pub(super) fn on_group_done(&mut self, s: usize, slot: u32) {
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
}
