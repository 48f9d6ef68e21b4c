//! Discriminatory processor sharing: a PS queue whose classes have weights
//! ([`NetworkSpec::weights`](crate::network::NetworkSpec::weights)). Every
//! job present is in service; a job of class k runs at
//! r_k = min(1, a * w_k) of a server, with `a` set so that the jobs'
//! rates add up to min(n, c) (n jobs present, c servers): the
//! highest-weight classes are capped at one server each and the rest
//! share what is left in proportion to their weights. With one server
//! that is w_k / (sum of the weights of the jobs present); equal weights
//! give plain PS.
//!
//! All jobs of a class run at one rate, so each class has its own
//! virtual-work clock and heap of finish tags; the next completion is the
//! soonest over the classes.

use super::event::{EV_VDONE, ev, later};
use super::waiting::TagHeap;
use super::{Kind, Simulation};

/// The per-class clocks of a weighted PS station.
#[derive(Clone, Debug)]
pub(super) struct Dps {
    /// Weight per class.
    w: Box<[f64]>,
    /// Classes by weight, highest first (ties by index): the order in
    /// which the rates are capped.
    order: Box<[u32]>,
    /// Per class: work done by each of its jobs since the clock started.
    v: Box<[f64]>,
    /// Per class: each job's rate (share of a server) since `last`.
    rate: Box<[f64]>,
    /// Per class: finish tags (on the class's clock) of its jobs present.
    tags: Box<[TagHeap]>,
    last: f64,
    /// Class of the pending completion.
    pend_class: u32,
}

impl Dps {
    /// Idle clocks for classes of weights `w` (each > 0).
    pub(super) fn new(w: &[f64]) -> Dps {
        #[cfg(feature = "bias")]
        let biased = crate::bias::weights(w);
        #[cfg(feature = "bias")]
        let w = &biased[..];
        let mut order: Vec<u32> = (0..w.len() as u32).collect();
        order.sort_by(|&a, &b| w[b as usize].total_cmp(&w[a as usize]).then(a.cmp(&b)));
        Dps {
            w: w.into(),
            order: order.into(),
            v: vec![0.0; w.len()].into(),
            rate: vec![0.0; w.len()].into(),
            tags: vec![TagHeap::default(); w.len()].into(),
            last: 0.0,
            pend_class: 0,
        }
    }

    fn advance(&mut self, now: f64) {
        let dt = now - self.last;
        self.last = now;
        for (v, r) in self.v.iter_mut().zip(self.rate.iter()) {
            *v += r * dt;
        }
    }

    /// Each class's rate with the jobs present now, on `c` servers.
    fn set_rates(&mut self, c: u32) {
        let n: usize = self.tags.iter().map(TagHeap::len).sum();
        let mut cap = n.min(c as usize) as f64;
        let mut wsum: f64 = self
            .tags
            .iter()
            .zip(self.w.iter())
            .map(|(t, w)| t.len() as f64 * w)
            .sum();
        let mut capped = true;
        for &k in self.order.iter() {
            let k = k as usize;
            let nk = self.tags[k].len() as f64;
            if nk == 0.0 {
                self.rate[k] = 0.0;
                continue;
            }
            let r = cap * self.w[k] / wsum;
            if capped && r >= 1.0 {
                self.rate[k] = 1.0;
                cap -= nk;
                wsum -= nk * self.w[k];
            } else {
                // From here on every class shares `cap` by weight.
                capped = false;
                self.rate[k] = r.min(1.0);
            }
        }
    }

    /// Per-job rate of each class, for the per-class utilizations.
    pub(super) fn rates(&self) -> &[f64] {
        &self.rate
    }
}

impl Simulation {
    /// Job `j` (already marked as arrived) joins weighted PS station `s`:
    /// it is in service at once, on its class's clock.
    pub(super) fn dps_arrive(&mut self, j: u32, s: usize) {
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::V(vc) = &mut st.kind else {
            unreachable!("dps_arrive at a station without a virtual clock")
        };
        let Some(dps) = vc.dps.as_deref_mut() else {
            unreachable!("dps_arrive at a station without weights")
        };
        let job = &mut self.jobs[j as usize];
        let class = job.class as usize;
        dps.advance(now);
        st.stats.acc(now);
        Simulation::start_counts(&mut st.stats, &mut st.per_class, job, now);
        let w = st.service[class].sample(&mut st.rng);
        dps.tags[class].push(dps.v[class] + w, j);
        st.stats.busy = st.stats.n.min(vc.c);
        if !vc.dirty {
            vc.dirty = true;
            self.dirty.push(s as u32);
        }
    }

    /// A live completion at weighted PS station `s` (`on_vdone` checked
    /// its version and counted the event): the job with the smallest
    /// finish tag of the pending class leaves.
    pub(super) fn dps_done(&mut self, s: usize) {
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::V(vc) = &mut st.kind else {
            return;
        };
        let Some(dps) = vc.dps.as_deref_mut() else {
            return;
        };
        dps.advance(now);
        let k = dps.pend_class as usize;
        let Some((tag, j)) = dps.tags[k].pop() else {
            return;
        };
        // The class's clock has reached the tag (exactly, to avoid drift).
        dps.v[k] = tag;
        let job = &self.jobs[j as usize];
        Simulation::depart_now(&mut st.stats, &mut st.per_class, job, now);
        st.stats.busy = st.stats.n.min(vc.c);
        if !vc.dirty {
            vc.dirty = true;
            self.dirty.push(s as u32);
        }
        self.leave(j, s as u32);
    }

    /// Re-times weighted PS station `s` after its population changed:
    /// new rates, and the soonest completion over the classes.
    pub(super) fn dps_flush(&mut self, s: usize) {
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::V(vc) = &mut st.kind else {
            return;
        };
        let Some(dps) = vc.dps.as_deref_mut() else {
            return;
        };
        dps.advance(now);
        dps.set_rates(vc.c);
        if let Some(pc) = &mut st.per_class {
            pc.set_shares(dps.rates());
        }
        let next = (0..dps.tags.len())
            .filter_map(|k| {
                let tag = dps.tags[k].min_tag()?;
                Some(((tag - dps.v[k]).max(0.0) / dps.rate[k], k))
            })
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        if vc.pending {
            self.fel
                .cancel(vc.pend_t, ev(EV_VDONE, s as u32, vc.version));
            vc.pending = false;
        }
        vc.version = vc.version.wrapping_add(1);
        let Some((dt, k)) = next else {
            // Empty: rebase the clocks so they never grow large.
            dps.v.iter_mut().for_each(|v| *v = 0.0);
            return;
        };
        dps.pend_class = k as u32;
        vc.pending = true;
        vc.pend_t = later(now, dt);
        self.fel.push(vc.pend_t, ev(EV_VDONE, s as u32, vc.version));
    }
}
