//! Setting up a replication: the runtime state of every station, region
//! and class from a validated network, and the initial placement of jobs.

use super::CHECK_EVERY;
use super::batch::GroupRt;
use super::blocking::BlockRt;
use super::event::{EV_ARRIVAL, EV_ARRIVAL_AT, EV_DONE, EV_EXIT_DONE, EV_WARMUP, EXIT, ev};
use super::fork::ForkRt;
use super::job::Sampler;
use super::latch::LatchRt;
use super::regions::{RegionRt, RegionStats};
use super::routing::Route;
use super::stats::{ClassStats, Mser, StStats};
use super::vclock::{SpeedRt, VClock, VMode};
use super::waiting::Waiting;
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
        if let Some(e) = crate::schedule::check(network, &config.schedule).first() {
            return Err(RunError::Config(format!("schedule: {}", e.message)));
        }
        if let Some(e) = crate::schedule::check_stations(network, &config.station_schedule).first()
        {
            return Err(RunError::Config(format!("station schedule: {}", e.message)));
        }
        let warm = match config.effective_warmup() {
            Warmup::None | Warmup::Mser5 | Warmup::Fraction(_) => WarmPlan::None,
            Warmup::Jobs(n) => WarmPlan::Jobs(n),
            Warmup::Time(t) => WarmPlan::Time(t),
        };
        #[cfg(feature = "bias")]
        let warm = match warm {
            WarmPlan::Jobs(n) => WarmPlan::Jobs(crate::bias::warm_jobs(n)),
            WarmPlan::Time(t) => WarmPlan::Time(crate::bias::warm_time(t)),
            w => w,
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

    /// Sets up a replication with an explicit warm-up and end (the MSER-5
    /// replay of [`crate::run_replication`] uses its own), collecting MSER-5
    /// batch means if `mser`.
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
        let mut stations: Vec<StationRt> = spec
            .stations
            .iter()
            .enumerate()
            .map(|(s, st)| station(st, s, spec.classes.len(), seed, index))
            .collect();
        // Capacity, station tails and sending to a blocking station take
        // plain stations off the hot path (`Network::new` admits a
        // capacity only on a plain queue, and a blocking station's senders
        // only among plain stations and forks).
        let senders = spec.blocking_senders();
        let client = super::client::ClientRt::new(network, seed, index);
        slow_stations(network, config, &mut stations, &senders, client.is_some());
        link_spin_cpus(&mut stations);
        weighted_stations(spec, &mut stations);
        let regions = regions(spec, &mut stations);
        let mut switches = Vec::new();
        let mut policies = Vec::new();
        let classes = class_rts(
            network,
            config,
            index,
            stations.len(),
            &mut switches,
            &mut policies,
        );
        let mut sim = Simulation {
            now: 0.0,
            fel: Fel::new(),
            jobs: Vec::new(),
            free: Vec::new(),
            stations,
            classes,
            // Client mode: attempts start and end in `goto_slow`.
            // Routing policies: the station is settled in `goto_slow`.
            slow_goto: !regions.is_empty()
                || !switches.is_empty()
                || client.is_some()
                || !policies.is_empty(),
            policies,
            chain_start: if switches.is_empty() {
                Vec::new()
            } else {
                spec.chain_starts().into_iter().map(|c| c as u32).collect()
            },
            switches,
            regions,
            forks: Vec::new(),
            free_forks: Vec::new(),
            route_rngs: (0..spec.stations.len())
                .map(|s| rng::stream(seed, index, rng::routing_stream(s)))
                .chain(
                    (0..spec.classes.len())
                        .map(|c| rng::stream(seed, index, rng::entry_routing_stream(c))),
                )
                .collect(),
            dirty: Vec::new(),
            spin_dirty: Vec::new(),
            lazy_open: 0,
            events: 0,
            in_network: 0,
            max_jobs: config.max_jobs_present,
            max_events: config.max_events,
            event_cap: config.max_events.saturating_add(1).min(CHECK_EVERY),
            measuring: false,
            measure_start: 0.0,
            warm,
            stop,
            warm_count: 0,
            completions: 0,
            next_mark: u64::MAX,
            marks: Vec::new(),
            mark_end: f64::INFINITY,
            finished: false,
            sla: config.sla_s.unwrap_or(f64::INFINITY),
            jobs_tail_k: config.jobs_tail_k,
            mser: mser.then(|| Box::new(Mser::new())),
            error: None,
            index,
            names: spec.stations.iter().map(|s| s.name.clone()).collect(),
            control: None,
            published: 0,
            sched: Vec::new(),
            cap_sched: Vec::new(),
            service_scale: Vec::new(),
            trace: None,
            blocking: if senders.iter().any(|&x| x)
                || (0..spec.stations.len()).any(|s| spec.blocks(s))
            {
                vec![BlockRt::default(); spec.stations.len()]
            } else {
                Vec::new()
            },
            client,
        };
        if let Some(plan) = config.trace {
            sim.start_trace(plan, &crate::recovery::cuts(config));
        }
        if !config.schedule.is_empty() {
            let populations: Vec<u32> = spec
                .classes
                .iter()
                .map(|c| match c.workload {
                    Workload::Closed { population, .. } => population,
                    Workload::Open { .. } => 0,
                })
                .collect();
            sim.start_schedules(&config.schedule, &populations);
        }
        if !config.station_schedule.is_empty() {
            sim.start_station_schedules(&config.station_schedule);
        }
        sim.mark_exit_station();
        sim.init(spec);
        sim
    }

    /// The station of a single-class model whose route is the sequence of
    /// that one station, a plain queue or delay ([`Kind::Queue`],
    /// [`Kind::Delay`]), without forks (whose sub-jobs go to their join)
    /// and without regions or class switching (whose moves take
    /// `goto_slow`): every interaction is one visit there. Its jobs take
    /// the routing lookup's result from the events (`EV_ARRIVAL_AT`,
    /// `EV_EXIT_DONE`) instead, and those events never mark a station
    /// dirty (see `Simulation::run_events`).
    pub(super) fn one_stop(&self) -> Option<u32> {
        let [class] = self.classes.as_slice() else {
            return None;
        };
        let Route::Seq(seq) = &class.route else {
            return None;
        };
        let &[s] = seq.as_slice() else {
            return None;
        };
        let forks = self
            .stations
            .iter()
            .any(|st| matches!(st.kind, Kind::Fork(_)));
        let plain = matches!(
            self.stations[s as usize].kind,
            Kind::Queue { .. } | Kind::Delay
        );
        (plain && !self.slow_goto && !forks).then_some(s)
    }

    /// Gives `EV_EXIT_DONE` completions to the [`Simulation::one_stop`]
    /// station: a job there has passed the route's only step (`pos` 1,
    /// however it came: arriving, placed initially, or from a station it
    /// was placed at), so its next target is the exit, and the completion
    /// goes to `exit` without the lookup.
    fn mark_exit_station(&mut self) {
        if let Some(s) = self.one_stop() {
            self.stations[s as usize].done = EV_EXIT_DONE;
        }
    }

    fn init(&mut self, spec: &NetworkSpec) {
        match self.warm {
            WarmPlan::None | WarmPlan::Jobs(0) => self.start_measuring(),
            WarmPlan::Time(t) if t <= 0.0 => self.start_measuring(),
            WarmPlan::Time(t) => self.fel.push(t, ev(EV_WARMUP, 0, 0)),
            WarmPlan::Jobs(_) => {}
        }
        // Open classes: first arrival after one inter-arrival time.
        for c in 0..self.classes.len() {
            if let Some(i) = self.rate_scheduled(c) {
                self.next_scheduled_arrival(i);
                continue;
            }
            if self.chain_start.get(c).is_some_and(|&s| s as usize != c) {
                // Jobs only switch into this class: no arrivals of its own.
                continue;
            }
            // An open class with a one-station route: its arrivals carry
            // the station (see `Simulation::on_arrival_at`).
            let first = match self.one_stop() {
                Some(s) => ev(EV_ARRIVAL_AT, c as u32, s),
                None => ev(EV_ARRIVAL, c as u32, 0),
            };
            let cl = &mut self.classes[c];
            if let Some(d) = &cl.open {
                let t = d.sample(&mut cl.rng);
                self.fel.push(t, first);
            }
        }
        // Closed classes: every job thinking, or all queued at one station.
        let closed: usize = spec
            .classes
            .iter()
            .map(|cl| match cl.workload {
                Workload::Closed { population, .. } => population as usize,
                Workload::Open { .. } => 0,
            })
            .sum();
        self.reserve_jobs(closed);
        let mut njob = 0u32;
        for (c, cl) in spec.classes.iter().enumerate() {
            let Workload::Closed { population, .. } = cl.workload else {
                continue;
            };
            let placed = self.place(&spec.initial, c, &mut njob);
            for _ in placed..population {
                let j = self.alloc(c as u32);
                self.jobs[j as usize].node = njob;
                njob += 1;
                match spec.initial {
                    InitialState::Thinking | InitialState::Placed(_) => self.think(j),
                    InitialState::AtStation(s) => {
                        self.in_network += 1;
                        let job = &mut self.jobs[j as usize];
                        job.t0 = 0.0;
                        // Continue the route after the station: in a sequence
                        // after its first occurrence (from the start if absent).
                        job.pos = route_pos(&self.classes[c].route, s);
                        self.goto(j, EXIT, s as u32);
                    }
                }
            }
        }
        // Open classes' placed jobs: a backlog that arrived at time 0.
        if let InitialState::Placed(list) = &spec.initial {
            for (c, cl) in spec.classes.iter().enumerate() {
                if matches!(cl.workload, Workload::Open { .. }) && list.iter().any(|p| p.class == c)
                {
                    self.place(&spec.initial, c, &mut njob);
                }
            }
        }
        self.flush();
        self.check_unstable();
    }
}

/// Where a job placed at station `s` continues its route: in a sequence
/// after the station's first occurrence (from the start if absent).
pub(super) fn route_pos(route: &Route, s: usize) -> u32 {
    match route {
        Route::Seq(seq) => seq
            .iter()
            .position(|&x| x as usize == s)
            .map_or(0, |p| p as u32 + 1),
        Route::Prob { .. } => 0,
    }
}

/// The runtime state of station `s` (`st`) in replication `index`: its
/// service samplers (one per class, zero for classes that never visit) and
/// its kind's state, each kind built by its own module.
fn station(st: &StationSpec, s: usize, classes: usize, seed: u64, index: u32) -> StationRt {
    let service: Vec<Dist> = (0..classes)
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
    #[cfg(feature = "bias")]
    let service: Vec<Dist> = service.iter().map(crate::bias::service).collect();
    let speed = st.speed.clone().map(SpeedRt::new);
    let vclock = |mode, c, speed| Kind::V(Box::new(VClock::new(mode, c, speed)));
    let mech_rng = rng::stream(seed, index, rng::mechanism_stream(s));
    let fcfs = Waiting::new(Discipline::Fcfs);
    let (kind, waiting, servers) = match &st.kind {
        StationKind::Delay => match speed {
            None => (Kind::Delay, fcfs, 0.0),
            Some(sp) => (vclock(VMode::Shared, u32::MAX, Some(sp)), fcfs, 0.0),
        },
        StationKind::Queue {
            servers,
            discipline,
        } => {
            let c = *servers;
            let k = match (discipline, speed) {
                (Discipline::Ps, sp) => vclock(VMode::Shared, c, sp),
                (Discipline::PreemptivePriority, sp) => {
                    Kind::V(Box::new(VClock::preemptive(c, sp)))
                }
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
                Kind::Latch(Box::new(LatchRt::new(l, speed, mech_rng)))
            };
            (k, fcfs, 1.0)
        }
        StationKind::Batch(b) => (Kind::Group(Box::new(GroupRt::batch(b))), fcfs, 1.0),
        StationKind::Link(l) => (
            Kind::Group(Box::new(GroupRt::link(l))),
            fcfs,
            f64::from(l.pipeline),
        ),
        StationKind::Fork(f) => (Kind::Fork(Box::new(ForkRt::new(f, mech_rng))), fcfs, 0.0),
        StationKind::Join(j) => (Kind::Join { quorum: j.quorum }, fcfs, 0.0),
    };
    StationRt {
        stats: StStats::default(),
        rng: rng::stream(seed, index, rng::service_stream(s)),
        service: service.iter().map(Sampler::new).collect(),
        inv_mean,
        kind,
        waiting,
        servers,
        regions: Vec::new(),
        per_class: None,
        done: EV_DONE,
    }
}

/// Gives each PS station with weights its per-class clocks.
fn weighted_stations(spec: &NetworkSpec, stations: &mut [StationRt]) {
    for (w, st) in spec.weights.iter().zip(stations.iter_mut()) {
        if let (false, Kind::V(vc)) = (w.is_empty(), &mut st.kind) {
            vc.dps = Some(Box::new(super::dps::Dps::new(w)));
            vc.own_path = true;
        }
    }
}

/// Tells each spin cpu the latches whose threads run on it.
fn link_spin_cpus(stations: &mut [StationRt]) {
    for s in 0..stations.len() {
        if let Kind::Latch(l) = &stations[s].kind
            && let Some(cpu) = l.cpu
            && let Kind::V(vc) = &mut stations[cpu].kind
        {
            vc.latches.push(s as u32);
            vc.allow_direct();
        }
    }
}

/// The regions' runtime state; each member station learns its regions.
fn regions(spec: &NetworkSpec, stations: &mut [StationRt]) -> Vec<RegionRt> {
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
            name: reg.name.as_str().into(),
            limit: reg.limit.unwrap_or(u32::MAX),
            inside: 0,
            held_waiting: 0,
            members,
            queue: VecDeque::new(),
            stats: RegionStats::default(),
        });
    }
    // A move into several regions takes them larger first (an outer pool
    // before the pools nested in it), then in file order.
    let size: Vec<usize> = regions
        .iter()
        .map(|g: &RegionRt| g.members.iter().filter(|&&m| m).count())
        .collect();
    for st in stations.iter_mut() {
        st.regions
            .sort_by_key(|&r| (std::cmp::Reverse(size[r as usize]), r));
    }
    regions
}

/// Moves the plain queues and delays that need more than the hot path
/// keeps (a capacity, station tails, sending to a blocking station, per-class
/// figures, clients) to [`Kind::Plain`], and gives stations the tails and
/// per-class figures the run asks for.
fn slow_stations(
    network: &Network,
    config: &RunConfig,
    stations: &mut [StationRt],
    senders: &[bool],
    clients: bool,
) {
    let spec = network.spec();
    // Which stations each class can reach, for its per-class histograms.
    let reached = if config.station_tails && spec.classes.len() > 1 {
        spec.class_stations()
    } else {
        Vec::new()
    };
    // A station whose capacity follows a schedule changes its servers
    // and speed at run time, which only a plain station does.
    let mut scheduled = vec![false; spec.stations.len()];
    for ss in &config.station_schedule {
        scheduled[ss.station] = true;
    }
    for (s, st) in stations.iter_mut().enumerate() {
        let limit = network.capacity(s).map(|cap| cap.limit);
        let (block, sends) = (spec.blocks(s), senders[s]);
        let c = match st.kind {
            Kind::Queue { c } => Some(c),
            Kind::Delay => Some(u32::MAX),
            _ => None,
        };
        // A multi-class model keeps per-class figures at its plain
        // stations, which the hot path does not.
        let multi = spec.classes.len() > 1;
        if let Some(c) = c
            && (limit.is_some()
                || config.station_tails
                || sends
                || multi
                || clients
                || scheduled[s])
        {
            st.kind = Kind::Plain {
                c,
                limit: limit.unwrap_or(u32::MAX),
                block,
                sends,
            };
        }
        if config.station_tails {
            st.stats.tails = Some(Box::new(super::stats::StationTails::new()));
        }
        if multi && matches!(st.kind, Kind::Plain { .. } | Kind::V(_)) {
            let sums = matches!(st.kind, Kind::Plain { .. });
            // Per-class histograms only where the class can go.
            let tails: Vec<bool> = (reached.iter())
                .map(|r| config.station_tails && r.get(s).copied().unwrap_or(false))
                .collect();
            st.per_class = Some(Box::new(super::perclass::PerClass::new(
                spec.classes.len(),
                sums,
                &tails,
            )));
        }
    }
}

/// The run-time state of each class: its random stream, arrival or think
/// sampler, route and SLA.
fn class_rts(
    network: &Network,
    config: &RunConfig,
    index: u32,
    n_stations: usize,
    switches: &mut Vec<(u32, u32)>,
    policies: &mut Vec<super::policy::PolicyRt>,
) -> Vec<ClassRt> {
    let spec = network.spec();
    let seed = config.seed;
    spec.classes
        .iter()
        .enumerate()
        .map(|(c, cl)| ClassRt {
            rng: rng::stream(seed, index, rng::class_stream(c)),
            open: match &cl.workload {
                #[cfg(not(feature = "bias"))]
                Workload::Open { interarrival } => Some(Sampler::new(interarrival)),
                #[cfg(feature = "bias")]
                Workload::Open { interarrival } => {
                    Some(Sampler::new(&crate::bias::interarrival(interarrival)))
                }
                Workload::Closed { .. } => None,
            },
            think: match &cl.workload {
                Workload::Open { .. } => None,
                Workload::Closed { think, .. } => think.as_ref().map(Sampler::new),
            },
            route: Route::new(
                &cl.routing,
                n_stations,
                switches,
                &network
                    .policies()
                    .iter()
                    .filter(|p| p.class == c)
                    .map(|p| (p.row, p.policy))
                    .collect::<Vec<_>>(),
                policies,
            ),
            priority: cl.priority,
            sla: config
                .class_sla_s
                .get(c)
                .copied()
                .flatten()
                .or(config.sla_s)
                .unwrap_or(f64::INFINITY),
            stats: ClassStats::default(),
            leaving: 0,
        })
        .collect()
}
