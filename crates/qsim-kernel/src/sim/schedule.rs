//! Load schedules at run time (see [`crate::schedule`]): population steps
//! are control events; a rate-scheduled open class draws its arrivals by
//! inversion of its integrated rate, with an arrival event of its own, so
//! the plain open arrival path is untouched. Capacity steps (a station's
//! servers or speed) are control events too, at stations that run as
//! `Kind::Plain`.

use super::event::{
    EV_CAPACITY, EV_PLAIN_DONE, EV_SCHED_ARRIVAL, EV_SCHEDULE, EXIT, NONE, ev, later,
};
use super::{Kind, Simulation};
use crate::network::{InitialState, Placement};
use crate::schedule::{Change, ClassSchedule, Segment, next_arrival, rate_segments};

/// One class's schedule in a replication.
#[derive(Clone, Debug)]
pub(super) struct SchedRt {
    class: u32,
    steps: Vec<crate::schedule::Step>,
    /// Arrival rate (open classes with rate steps; empty otherwise).
    segs: Vec<Segment>,
    cursor: usize,
    /// Jobs of the class in existence (closed classes).
    live: u32,
}

impl Simulation {
    /// Sets up the schedules; returns the classes whose arrivals they
    /// drive (their plain arrival process is not started).
    pub(super) fn start_schedules(&mut self, schedule: &[ClassSchedule], populations: &[u32]) {
        for (i, cs) in schedule.iter().enumerate() {
            let c = cs.class;
            let open = self.classes[c].open.as_ref().map(|s| s.mean());
            let segs = match open {
                Some(mean) if mean > 0.0 => rate_segments(1.0 / mean, &cs.steps),
                _ => Vec::new(),
            };
            self.sched.push(SchedRt {
                class: c as u32,
                steps: cs.steps.clone(),
                segs,
                cursor: 0,
                live: populations.get(c).copied().unwrap_or(0),
            });
            if open.is_none() {
                for (k, step) in cs.steps.iter().enumerate() {
                    self.fel
                        .push(step.at_s, ev(EV_SCHEDULE, i as u32, k as u32));
                }
            }
        }
    }

    /// True when class `c`'s arrivals follow a rate schedule.
    pub(super) fn rate_scheduled(&self, c: usize) -> Option<usize> {
        self.sched
            .iter()
            .position(|s| s.class as usize == c && !s.segs.is_empty())
    }

    /// Schedules the next arrival of rate schedule `i` after now.
    pub(super) fn next_scheduled_arrival(&mut self, i: usize) {
        let now = self.now;
        let sc = &mut self.sched[i];
        let c = sc.class as usize;
        let e = crate::dist::exp1(&mut self.classes[c].rng);
        let t = next_arrival(&sc.segs, &mut sc.cursor, now, e);
        self.fel.push(t, ev(EV_SCHED_ARRIVAL, i as u32, 0));
    }

    /// An arrival of rate schedule `i`'s class.
    #[cold]
    #[inline(never)]
    pub(super) fn on_sched_arrival(&mut self, i: usize) {
        self.events += 1;
        self.next_scheduled_arrival(i);
        let c = self.sched[i].class;
        let j = self.alloc(c);
        self.in_network += 1;
        if self.in_network > self.max_jobs {
            self.unstable();
        }
        self.begin(j);
    }

    /// Step `k` of schedule `i` (a population change) happens now.
    #[cold]
    #[inline(never)]
    pub(super) fn on_schedule(&mut self, i: usize, k: usize) {
        let Change::Population(target) = self.sched[i].steps[k].change else {
            return;
        };
        let c = self.sched[i].class as usize;
        let live = self.sched[i].live;
        let leaving = self.classes[c].leaving;
        let effective = live - leaving.min(live);
        if target < effective {
            self.classes[c].leaving += effective - target;
            return;
        }
        let more = target - effective;
        let kept = more.min(leaving);
        self.classes[c].leaving -= kept;
        for _ in kept..more {
            let j = self.alloc(c as u32);
            self.think(j);
        }
        self.sched[i].live += more - kept;
    }

    /// Sets up the capacity schedules: one control event per step.
    pub(super) fn start_station_schedules(&mut self, list: &[crate::schedule::StationSchedule]) {
        self.cap_sched = list.to_vec();
        self.service_scale = vec![1.0; self.stations.len()];
        for (i, ss) in list.iter().enumerate() {
            for (k, step) in ss.steps.iter().enumerate() {
                self.fel
                    .push(step.at_s, ev(EV_CAPACITY, i as u32, k as u32));
            }
        }
    }

    /// Step `k` of capacity schedule `i` happens now: the station's speed
    /// applies to the services that start from now on; more servers take
    /// waiting jobs at once, fewer let the services in progress finish
    /// (see `plain_depart`).
    #[cold]
    #[inline(never)]
    pub(super) fn on_capacity(&mut self, i: usize, k: usize) {
        let s = self.cap_sched[i].station;
        let step = self.cap_sched[i].steps[k];
        if let Some(f) = step.speedup {
            self.service_scale[s] = 1.0 / f;
        }
        let Some(servers) = step.servers else {
            return;
        };
        if let Kind::Plain { c, .. } = &mut self.stations[s].kind {
            *c = servers;
        }
        let now = self.now;
        while self.stations[s].stats.busy < servers {
            let next = if self.client.is_some() {
                self.client_pop(s)
            } else {
                self.stations[s].waiting.pop()
            };
            let Some(j) = next else {
                break;
            };
            let scale = self.service_scale[s];
            let st = &mut self.stations[s];
            if cfg!(debug_assertions) || st.stats.tails.is_some() {
                st.stats.acc(now);
            }
            st.stats.busy += 1;
            st.stats.sum_start += now;
            let job = &mut self.jobs[j as usize];
            job.t_start = now;
            if let Some(pc) = &mut st.per_class {
                pc.start(job.class as usize, now);
            }
            let d = st.service[job.class as usize].sample(&mut st.rng) * scale;
            self.fel.push(later(now, d), ev(EV_PLAIN_DONE, s as u32, j));
        }
    }

    /// Job `j` finished an interaction and leaves: its class's population
    /// is stepping down.
    #[cold]
    #[inline(never)]
    pub(super) fn retire(&mut self, j: u32) {
        let c = self.jobs[j as usize].class;
        self.in_network -= 1;
        self.free.push(j);
        let cl = &mut self.classes[c as usize];
        cl.leaving = cl.leaving.saturating_sub(1);
        if let Some(sc) = self.sched.iter_mut().find(|s| s.class == c) {
            sc.live = sc.live.saturating_sub(1);
        }
    }

    /// Where the closed jobs are now: per (class, station), the jobs
    /// present or waiting to enter it (thinking jobs are not listed; fork
    /// sub-jobs are not counted, their parent is).
    pub(super) fn placement(&self) -> Vec<Placement> {
        let ns = self.stations.len();
        let mut counts = std::collections::BTreeMap::<(usize, usize), u32>::new();
        let mut live = vec![false; self.jobs.len()];
        for (j, job) in self.jobs.iter().enumerate() {
            live[j] = job.fork == NONE;
        }
        for &j in &self.free {
            live[j as usize] = false;
        }
        for (j, job) in self.jobs.iter().enumerate() {
            if !live[j] || self.classes[job.class as usize].open.is_some() {
                continue;
            }
            let at = if (job.station as usize) < ns && job.station != EXIT {
                job.station
            } else {
                job.pending
            };
            if (at as usize) < ns {
                // A switched job is one of its chain's start class (the
                // population it belongs to); placed again, it continues
                // from that class's row.
                let class = self
                    .chain_start
                    .get(job.class as usize)
                    .map_or(job.class, |&c| c);
                *counts.entry((class as usize, at as usize)).or_default() += 1;
            }
        }
        counts
            .into_iter()
            .map(|((class, station), jobs)| Placement {
                class,
                station,
                jobs,
            })
            .collect()
    }

    /// Places the jobs of an [`InitialState::Placed`] state, class `c`'s
    /// first; returns how many of class `c`'s `population` it placed.
    pub(super) fn place(&mut self, initial: &InitialState, c: usize, njob: &mut u32) -> u32 {
        let InitialState::Placed(list) = initial else {
            return 0;
        };
        let mut placed = 0;
        for p in list.iter().filter(|p| p.class == c) {
            for _ in 0..p.jobs {
                let j = self.alloc(c as u32);
                self.jobs[j as usize].node = *njob;
                *njob += 1;
                self.in_network += 1;
                self.jobs[j as usize].t0 = 0.0;
                self.jobs[j as usize].pos =
                    super::build::route_pos(&self.classes[c].route, p.station);
                self.goto(j, EXIT, p.station as u32);
                placed += 1;
            }
        }
        placed
    }
}
