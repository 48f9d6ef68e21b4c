//! Setting up a replication: the runtime state of every station, region
//! and class from a validated network, and the initial placement of jobs.

use super::batch::GroupRt;
use super::event::{EV_ARRIVAL, EV_STOP, EV_WARMUP, EXIT, NONE, ev};
use super::fork::ForkRt;
use super::job::Sampler;
use super::latch::LatchRt;
use super::regions::{RegionRt, RegionStats};
use super::routing::{Branches, Route};
use super::stats::{ClassStats, Mser, StStats};
use super::vclock::{SpeedRt, VClock, VMode};
use super::waiting::{TagHeap, Waiting};
use super::{ClassRt, Kind, Simulation, StationRt, StopPlan, WarmPlan};
use crate::config::{RunConfig, Stop, Warmup, check_config};
use crate::dist::Dist;
use crate::error::RunError;
use crate::fel::Fel;
use crate::network::*;
use crate::rng;
use std::collections::VecDeque;

impl Simulation {
    /// Sets up replication `index` of `network` under `config`, with every
    /// closed job placed per the network's initial state.
    pub fn new(network: &Network, config: &RunConfig, index: u32) -> Result<Simulation, RunError> {
        check_config(config)?;
        let warm = match config.warmup {
            Warmup::None | Warmup::Mser5 => WarmPlan::None,
            Warmup::Jobs(n) => WarmPlan::Jobs(n),
            Warmup::Time(t) => WarmPlan::Time(t),
        };
        let stop = match config.stop {
            Stop::Jobs(n) => StopPlan::Jobs(n),
            Stop::Time(t) => StopPlan::Time(t),
        };
        let mser = matches!(config.warmup, Warmup::Mser5);
        Ok(Simulation::with_plan(
            network, config, index, warm, stop, mser,
        ))
    }

    pub(crate) fn with_plan(
        network: &Network,
        config: &RunConfig,
        index: u32,
        warm: WarmPlan,
        stop: StopPlan,
        mser: bool,
    ) -> Simulation {
        let spec = network.spec();
        let seed = config.seed;
        let nc = spec.classes.len();
        let mut stations = Vec::with_capacity(spec.stations.len());
        for (s, st) in spec.stations.iter().enumerate() {
            let service: Vec<Dist> = (0..nc)
                .map(|c| {
                    st.service
                        .get(c)
                        .cloned()
                        .flatten()
                        .unwrap_or_else(|| Dist::deterministic(0.0).expect("zero is valid"))
                })
                .collect();
            let inv_mean = service
                .iter()
                .map(|d: &Dist| {
                    let m = d.mean();
                    if m > 0.0 { 1.0 / m } else { 0.0 }
                })
                .collect();
            let speed = st.speed.clone().map(SpeedRt::new);
            let vclock = |mode: VMode, c: u32, speed: Option<SpeedRt>| {
                Kind::V(Box::new(VClock {
                    mode,
                    c,
                    speed,
                    v: 0.0,
                    g: 0.0,
                    last: 0.0,
                    version: 0,
                    insvc: TagHeap::default(),
                    pending: false,
                    pend_tag: 0.0,
                    pend_g: 0.0,
                    dirty: false,
                    spinners: 0,
                    latches: Vec::new(),
                }))
            };
            let mech_rng = rng::stream(seed, index, rng::mechanism_stream(s));
            let (kind, waiting, servers) = match &st.kind {
                StationKind::Delay => match speed {
                    None => (Kind::Delay, Waiting::new(Discipline::Fcfs), 0.0),
                    Some(sp) => (
                        vclock(VMode::Shared, u32::MAX, Some(sp)),
                        Waiting::new(Discipline::Fcfs),
                        0.0,
                    ),
                },
                StationKind::Queue {
                    servers,
                    discipline,
                } => {
                    let c = *servers;
                    let k = match (discipline, speed) {
                        (Discipline::Ps, sp) => vclock(VMode::Shared, c, sp),
                        (_, None) => Kind::Queue { c },
                        (_, Some(sp)) => vclock(VMode::Queue, c, Some(sp)),
                    };
                    (k, Waiting::new(*discipline), f64::from(c))
                }
                StationKind::Latch(l) => {
                    let k = if l.numa.is_none() && l.spin.is_none() {
                        // A plain latch is a single FCFS server.
                        match speed {
                            None => Kind::Queue { c: 1 },
                            Some(sp) => vclock(VMode::Queue, 1, Some(sp)),
                        }
                    } else {
                        let poll_max_s = l.spin.as_ref().map_or(0.0, |sp| {
                            sp.spin_wait_delay * sp.pauses_per_unit * sp.pause_cycles / sp.clock_ghz
                                * 1e-9
                        });
                        Kind::Latch(Box::new(LatchRt {
                            numa: l.numa.clone(),
                            spin: l.spin.clone(),
                            wake: l.wake,
                            poll_max_s,
                            speed,
                            rng: mech_rng.clone(),
                            held: false,
                            holder_node: 0,
                            sleepers: VecDeque::new(),
                            spinners: 0,
                            cpu: l.spin.as_ref().and_then(|s| s.cpu),
                            t_clock: 0.0,
                            t_share: 1.0,
                            t_since: 0.0,
                            waits: TagHeap::default(),
                            wait_version: 0,
                            wait_pending: false,
                            wait_tag: 0.0,
                            wait_share: 0.0,
                            cs_job: NONE,
                            cs_version: 0,
                            cs_work: 0.0,
                            cs_rate: 1.0,
                            cs_since: 0.0,
                            waking: 0,
                            area_spin: 0.0,
                            area_sleep: 0.0,
                            counts_since: 0.0,
                        }))
                    };
                    (k, Waiting::new(Discipline::Fcfs), 1.0)
                }
                StationKind::Batch(b) => (
                    Kind::Group(Box::new(GroupRt {
                        max_batch: b.max_batch,
                        per_job_s: b.per_job_s,
                        max_wait_s: b.max_wait_s,
                        groups: vec![Vec::new()],
                        free_slots: vec![0],
                        timer_version: 0,
                        timer_armed: false,
                    })),
                    Waiting::new(Discipline::Fcfs),
                    1.0,
                ),
                StationKind::Link(l) => (
                    Kind::Group(Box::new(GroupRt {
                        max_batch: l.max_batch,
                        per_job_s: 0.0,
                        max_wait_s: None,
                        groups: vec![Vec::new(); l.pipeline as usize],
                        free_slots: (0..l.pipeline).rev().collect(),
                        timer_version: 0,
                        timer_armed: false,
                    })),
                    Waiting::new(Discipline::Fcfs),
                    f64::from(l.pipeline),
                ),
                StationKind::Fork(f) => {
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
                    (
                        Kind::Fork(Box::new(ForkRt {
                            fan_out: f.fan_out,
                            targets: f.targets.iter().map(|t| t.0 as u32).collect(),
                            cum,
                            random: f.spread == Spread::Random,
                            join: f.join as u32,
                            next: 0,
                            rng: mech_rng.clone(),
                        })),
                        Waiting::new(Discipline::Fcfs),
                        0.0,
                    )
                }
                StationKind::Join(j) => (
                    Kind::Join { quorum: j.quorum },
                    Waiting::new(Discipline::Fcfs),
                    0.0,
                ),
            };
            stations.push(StationRt {
                stats: StStats::default(),
                rng: rng::stream(seed, index, rng::service_stream(s)),
                service: service.iter().map(Sampler::new).collect(),
                inv_mean,
                kind,
                waiting,
                servers,
                regions: Vec::new(),
            });
        }
        // Each spin cpu knows the latches whose threads run on it.
        for s in 0..stations.len() {
            if let Kind::Latch(l) = &stations[s].kind
                && let Some(cpu) = l.cpu
                && let Kind::V(vc) = &mut stations[cpu].kind
            {
                vc.latches.push(s as u32);
            }
        }
        let ns = stations.len();
        let mut regions = Vec::new();
        for (r, reg) in spec.regions.iter().enumerate() {
            let mut members = vec![false; ns];
            for &s in &reg.stations {
                members[s] = true;
                if !stations[s].regions.contains(&(r as u32)) {
                    stations[s].regions.push(r as u32);
                }
            }
            regions.push(RegionRt {
                limit: reg.limit.unwrap_or(u32::MAX),
                inside: 0,
                members,
                queue: VecDeque::new(),
                stats: RegionStats::default(),
            });
        }
        let classes = spec
            .classes
            .iter()
            .enumerate()
            .map(|(c, cl)| {
                let route = match &cl.routing {
                    Routing::Sequence(seq) => Route::Seq(seq.iter().map(|&s| s as u32).collect()),
                    Routing::Probabilistic { entry, from } => Route::Prob {
                        entry: Branches::new(entry),
                        // Stations without branches continue like a new
                        // interaction: copy the entry branches in.
                        from: (0..ns)
                            .map(|s| {
                                let b = from
                                    .get(s)
                                    .map_or_else(Branches::default, |b| Branches::new(b));
                                if b.targets.is_empty() {
                                    Branches::new(entry)
                                } else {
                                    b
                                }
                            })
                            .collect(),
                        sub: (0..ns)
                            .map(|s| {
                                from.get(s)
                                    .map_or_else(Branches::default, |b| Branches::new(b))
                            })
                            .collect(),
                    },
                };
                let (open, think) = match &cl.workload {
                    Workload::Open { interarrival } => (Some(Sampler::new(interarrival)), None),
                    Workload::Closed { think, .. } => (None, think.as_ref().map(Sampler::new)),
                };
                ClassRt {
                    rng: rng::stream(seed, index, rng::class_stream(c)),
                    open,
                    think,
                    route,
                    priority: cl.priority,
                    stats: ClassStats::default(),
                }
            })
            .collect();
        let mut sim = Simulation {
            now: 0.0,
            fel: Fel::new(),
            jobs: Vec::new(),
            free: Vec::new(),
            stations,
            classes,
            regions,
            forks: Vec::new(),
            free_forks: Vec::new(),
            route_rng: rng::stream(seed, index, rng::ROUTING_STREAM),
            dirty: Vec::new(),
            spin_dirty: Vec::new(),
            events: 0,
            in_network: 0,
            max_jobs: config.max_jobs_present,
            max_events: config.max_events,
            event_cap: config.max_events.saturating_add(1),
            measuring: false,
            measure_start: 0.0,
            warm,
            stop,
            warm_count: 0,
            completions: 0,
            finished: false,
            sla: config.sla_s.unwrap_or(f64::INFINITY),
            mser: mser.then(Mser::new),
            error: None,
            index,
            names: spec.stations.iter().map(|s| s.name.clone()).collect(),
        };
        sim.init(spec);
        sim
    }

    pub(super) fn init(&mut self, spec: &NetworkSpec) {
        match self.warm {
            WarmPlan::None | WarmPlan::Jobs(0) => self.start_measuring(),
            WarmPlan::Time(t) if t <= 0.0 => self.start_measuring(),
            WarmPlan::Time(t) => self.fel.push(t, ev(EV_WARMUP, 0, 0)),
            WarmPlan::Jobs(_) => {}
        }
        if let StopPlan::AbsTime(t) = self.stop {
            self.fel.push(t, ev(EV_STOP, 0, 0));
        }
        // Open classes: first arrival after one inter-arrival time.
        for c in 0..self.classes.len() {
            let cl = &mut self.classes[c];
            if let Some(d) = &cl.open {
                let t = d.sample(&mut cl.rng);
                self.fel.push(t, ev(EV_ARRIVAL, c as u32, 0));
            }
        }
        // Closed classes: every job thinking, or all queued at one station.
        let mut njob = 0u32;
        for (c, cl) in spec.classes.iter().enumerate() {
            let Workload::Closed { population, .. } = cl.workload else {
                continue;
            };
            for _ in 0..population {
                let j = self.alloc(c as u32);
                self.jobs[j as usize].node = njob;
                njob += 1;
                match spec.initial {
                    InitialState::Thinking => self.think(j),
                    InitialState::AtStation(s) => {
                        self.in_network += 1;
                        let job = &mut self.jobs[j as usize];
                        job.t0 = 0.0;
                        // Continue the route after the station: in a sequence
                        // after its first occurrence (from the start if absent).
                        job.pos = match &self.classes[c].route {
                            Route::Seq(seq) => seq
                                .iter()
                                .position(|&x| x as usize == s)
                                .map_or(0, |p| p as u32 + 1),
                            Route::Prob { .. } => 0,
                        };
                        self.goto(j, EXIT, s as u32);
                    }
                }
            }
        }
        self.flush();
        self.check_unstable();
    }
}
