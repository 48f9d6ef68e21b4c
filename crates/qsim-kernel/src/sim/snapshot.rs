//! Copies of a running replication, for rare-event estimation
//! ([`crate::rare`]): a copy carries the whole state (clock, pending
//! events with their already drawn times, jobs, statistics) and, once
//! given streams of its own with [`Simulation::reseed`], goes on
//! independently of the original. Nothing here runs unless called: a
//! replication that is never copied pays nothing.

use super::event::*;
use super::job::{Job, Sampler};
use super::{Kind, Simulation};
use crate::dist::exp1;
use crate::fel::Fel;
use crate::rng::{self, SimRng};

impl Simulation {
    /// A copy of this replication in its current state, sharing nothing
    /// with it but the [`Control`](crate::Control), if one is set. Until
    /// [`Simulation::reseed`] is called the copy draws the same random
    /// numbers as the original, so the two follow the same path.
    pub fn snapshot(&self) -> Simulation {
        let mut copy = self.clone();
        // The event list prefetches job records from the slab's address:
        // point it at the copy's own slab.
        copy.fel
            .set_records(copy.jobs.as_ptr() as usize, std::mem::size_of::<Job>());
        copy
    }

    /// Replaces every random stream (arrivals, think times, service,
    /// mechanisms, routing, clients) by a new one derived from the stream's current
    /// state and `key`: copies reseeded with different keys go on
    /// independently, and the same key gives the same path.
    ///
    /// Times already drawn are part of the state. Those drawn from an
    /// exponential distribution whose clock is still running (an
    /// arrival, a think time, a client's backoff before a retry, a service
    /// at a fixed-speed station, or the
    /// remaining work of a job in service at a speed-curve or PS station
    /// without latch threads) are drawn afresh from the new streams: an
    /// exponential time's remainder is exponential whatever has elapsed, so
    /// the law of the path is unchanged, and copies of one state do not
    /// share their next event. Every other drawn time (a running spin
    /// episode's polls, a deterministic service) is kept.
    pub fn reseed(&mut self, key: u64) {
        fn fresh(r: &mut SimRng, key: u64) {
            use rand::Rng;
            let x = r.next_u64();
            *r = rng::stream(x, 0, key);
        }
        for c in &mut self.classes {
            fresh(&mut c.rng, key);
        }
        for r in &mut self.route_rngs {
            fresh(r, key);
        }
        for st in &mut self.stations {
            fresh(&mut st.rng, key);
            match &mut st.kind {
                Kind::Latch(l) => fresh(&mut l.rng, key),
                Kind::Fork(f) => fresh(&mut f.rng, key),
                _ => {}
            }
        }
        if let Some(ct) = &mut self.client {
            ct.reseed(|r| fresh(r, key));
        }
        self.resample_memoryless();
    }

    /// Draws afresh the pending exponential times (see
    /// [`Simulation::reseed`]).
    fn resample_memoryless(&mut self) {
        let now = self.now;
        let mut fel = Fel::new();
        let mut old = std::mem::take(&mut self.fel);
        while let Some(e) = old.pop() {
            let (a, b) = (operand_a(e.ev), operand_b(e.ev));
            let mut t = e.time();
            match e.ev & 0xFF {
                EV_ARRIVAL | EV_ARRIVAL_AT => {
                    let cl = &mut self.classes[a];
                    if let Some(Sampler::Exp(m)) = cl.open {
                        t = later(now, exp1(&mut cl.rng) * m);
                    }
                }
                EV_THINK => {
                    let c = self.jobs[b as usize].class as usize;
                    let cl = &mut self.classes[c];
                    if let Some(Sampler::Exp(m)) = cl.think {
                        t = later(now, exp1(&mut cl.rng) * m);
                    }
                }
                EV_RETRY => {
                    let c = self.jobs[b as usize].class as usize;
                    if let Some((m, rng)) = self.client.as_mut().and_then(|ct| ct.exp_backoff(c)) {
                        t = later(now, exp1(rng) * m);
                    }
                }
                EV_DONE | EV_EXIT_DONE | EV_PLAIN_DONE => {
                    let c = self.jobs[b as usize].class as usize;
                    let st = &mut self.stations[a];
                    if let Sampler::Exp(m) = st.service[c] {
                        t = later(now, exp1(&mut st.rng) * m);
                    }
                }
                _ => {}
            }
            fel.push(t, e.ev);
        }
        self.fel = fel;
        for s in 0..self.stations.len() {
            let st = &mut self.stations[s];
            let Kind::V(vc) = &mut st.kind else {
                continue;
            };
            if vc.direct || !vc.latches.is_empty() || vc.spinners > 0 || vc.insvc.len() == 0 {
                continue;
            }
            let all_exp = vc.insvc.h.iter().all(|&(_, j)| {
                matches!(
                    st.service[self.jobs[j as usize].class as usize],
                    Sampler::Exp(_)
                )
            });
            if !all_exp {
                continue;
            }
            vc.advance(now);
            let mut jobs = Vec::with_capacity(vc.insvc.len());
            while let Some((_, j)) = vc.insvc.pop() {
                jobs.push(j);
            }
            for j in jobs {
                let c = self.jobs[j as usize].class as usize;
                let Sampler::Exp(m) = st.service[c] else {
                    continue;
                };
                let w = exp1(&mut st.rng) * m;
                let w = if vc.speed.is_some() {
                    w * st.inv_mean[c]
                } else {
                    w
                };
                vc.insvc.push(vc.v + w, j);
            }
            if !vc.dirty {
                vc.dirty = true;
                self.dirty.push(s as u32);
            }
        }
        self.flush();
        self.fel
            .set_records(self.jobs.as_ptr() as usize, std::mem::size_of::<Job>());
    }
}
