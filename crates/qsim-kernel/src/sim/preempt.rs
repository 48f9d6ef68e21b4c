//! Preemptive-resume priority at a queue
//! ([`Discipline::PreemptivePriority`](crate::network::Discipline)): a
//! virtual-clock station in queue mode whose arrivals may take a server
//! from a lower-priority job. A job's finish tag minus the clock is the
//! work it has left, so a preempted job keeps that and resumes with it.

use super::{Kind, Simulation};
use std::cmp::Reverse;
use std::collections::HashMap;

/// What a preemptive-priority station knows of each job present.
#[derive(Clone, Copy, Debug)]
pub(super) struct Held {
    /// Arrival order at the station (FCFS within a priority).
    seq: u64,
    prio: i32,
    /// Work left (in the clock's units) while preempted, else `None`.
    left: Option<f64>,
}

/// The jobs present at a preemptive-priority station, by job id, and the
/// next arrival number.
#[derive(Clone, Debug, Default)]
pub(super) struct Preempt {
    next: u64,
    held: HashMap<u32, Held>,
}

impl Preempt {
    /// Job `j` leaves the station.
    pub(super) fn depart(&mut self, j: u32) {
        self.held.remove(&j);
    }

    /// Job `j` leaves the queue for a server: the work it has left if it
    /// was preempted (it resumes), `None` if it starts fresh.
    pub(super) fn resume(&mut self, j: u32) -> Option<f64> {
        self.held.get_mut(&j).and_then(|h| h.left.take())
    }
}

impl Simulation {
    /// Job `j` (already marked as arrived) joins preemptive-priority
    /// station `s`: it takes a free server, or the server of the
    /// lowest-priority job in service (the latest arrival of those) when
    /// that job's priority is below its own, or it waits.
    pub(super) fn preempt_arrive(&mut self, j: u32, s: usize) {
        let now = self.now;
        let st = &mut self.stations[s];
        let Kind::V(vc) = &mut st.kind else {
            unreachable!("preempt_arrive at a station without a virtual clock")
        };
        vc.advance(now);
        let Some(pre) = vc.pre.as_deref_mut() else {
            unreachable!("preempt_arrive at a station that does not preempt")
        };
        let class = self.jobs[j as usize].class as usize;
        let prio = self.classes[class].priority;
        let seq = pre.next;
        pre.next += 1;
        pre.held.insert(
            j,
            Held {
                seq,
                prio,
                left: None,
            },
        );
        st.stats.acc(now);
        st.stats.n += 1;
        if let Some(pc) = &mut st.per_class {
            pc.acc(now, st.stats.busy);
        }
        if vc.insvc.len() as u32 >= vc.c {
            let victim = vc
                .insvc
                .h
                .iter()
                .map(|&(_, v)| (pre.held[&v], v))
                .filter(|(h, _)| h.prio < prio)
                .min_by_key(|(h, _)| (h.prio, Reverse(h.seq)));
            #[cfg(feature = "bias")]
            let victim = victim.filter(|_| !crate::bias::skips_preempt(seq));
            if let Some((h, v)) = victim {
                let tag = vc.insvc.remove(v).expect("the victim is in service");
                let left = (tag - vc.v).max(0.0);
                if let Some(held) = pre.held.get_mut(&v) {
                    held.left = Some(left);
                }
                st.waiting.push_seq(v, h.prio, h.seq);
                if let Some(pc) = &mut st.per_class {
                    let job = &self.jobs[v as usize];
                    pc.preempt(job.class as usize, job.t_start);
                }
            }
        }
        let served = (vc.insvc.len() as u32) < vc.c;
        if let Some(pc) = &mut st.per_class {
            pc.arrive(class, now, served);
        }
        if served {
            self.jobs[j as usize].t_start = now;
            let w = st.service[class].sample(&mut st.rng);
            let w = if vc.speed.is_some() {
                w * st.inv_mean[class]
            } else {
                w
            };
            vc.insvc.push(vc.v + w, j);
        } else {
            st.waiting.push_seq(j, prio, seq);
        }
        st.stats.busy = (vc.insvc.len() as u32).min(vc.c);
        if !vc.dirty {
            vc.dirty = true;
            self.dirty.push(s as u32);
        }
    }
}
