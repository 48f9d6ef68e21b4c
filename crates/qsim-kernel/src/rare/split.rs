//! Fixed-effort multilevel splitting on a level function.
//!
//! Levels `l_1 < l_2 < ... < l_m` (the target) lie between the start
//! level `a` and the target, `step` apart. Stage k starts `effort` copies
//! of the states that first reached `l_{k-1}` (stage 1: the start state),
//! the i-th from the (i mod survivors)-th survivor, each with streams of
//! its own, and runs each until it reaches `l_k` (a survivor) or fails:
//! for a per-cycle probability, when the level comes back to `a` (or
//! crosses it); within a horizon, when the clock passes it. The product
//! of the stages' fractions is an unbiased estimate of the probability;
//! independent replications of the whole procedure give its interval.

use super::{
    Estimand, Level, LevelOf, MIN_SURVIVORS, Method, RareConfig, RareError, RareEstimate,
    RareWarning, Stage, check_config,
};
use crate::config::{RunConfig, Stop, Warmup};
use crate::network::{Network, Workload};
use crate::results::estimate;
use crate::sim::Simulation;
use rayon::prelude::*;

/// Events a run from the initial state may take to reach the start level.
const START_EVENTS: u64 = 100_000_000;

/// One copy of the replication on its way up.
struct Particle {
    sim: Simulation,
    /// Where the level is against the start level in this cycle: 0 not
    /// yet left it, +1 above, -1 below.
    side: i8,
}

/// How a copy's run ended.
#[derive(PartialEq)]
enum Outcome {
    Up,
    Fail,
}

/// What one replication found.
struct Rep {
    probability: f64,
    fractions: Vec<f64>,
    survivors: Vec<u32>,
    events: u64,
    cycle_s: Option<f64>,
}

fn level_now(sim: &Simulation, of: &LevelOf) -> u32 {
    match of {
        &LevelOf::Station(s) => sim.jobs_at(s).unwrap_or(0),
        LevelOf::System => u32::try_from(sim.jobs_in_network()).unwrap_or(u32::MAX),
        LevelOf::Retrying => sim.retrying(),
        LevelOf::Weighted(terms) => terms.iter().fold(0u32, |sum, &(s, w)| {
            sum.saturating_add(sim.jobs_at(s).unwrap_or(0).saturating_mul(w))
        }),
    }
}

/// Refuses a level that names no station of the network, or a weighted
/// sum that is empty or has a weight of 0 (a station that never moves
/// the level does not belong in it).
fn check_level(network: &Network, of: &LevelOf) -> Result<(), RareError> {
    let n = network.spec().stations.len();
    let missing = |s: usize| RareError::Config(format!("no station {s}"));
    match of {
        &LevelOf::Station(s) if s >= n => Err(missing(s)),
        LevelOf::Station(_) | LevelOf::System => Ok(()),
        LevelOf::Retrying => {
            let spec = network.spec();
            let retries = network.overload().is_some_and(|o| {
                o.classes
                    .iter()
                    .flatten()
                    .any(|k| k.retry.as_ref().is_some_and(|r| r.max_attempts >= 2))
            });
            if retries {
                Ok(())
            } else {
                Err(RareError::Config(format!(
                    "the level counts clients waiting to retry, but no class of this model ({}) has a client that retries (a class's client table with max_attempts >= 2)",
                    spec.classes
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )))
            }
        }
        LevelOf::Weighted(terms) => {
            if terms.is_empty() {
                return Err(RareError::Config(
                    "a weighted level needs at least one station".into(),
                ));
            }
            for (i, &(s, w)) in terms.iter().enumerate() {
                if s >= n {
                    return Err(missing(s));
                }
                if w == 0 {
                    return Err(RareError::Config(format!(
                        "the weight of station {} in the level is 0: leave the station out, or give it a weight of at least 1",
                        network.spec().stations[s].name
                    )));
                }
                if terms[..i].iter().any(|&(t, _)| t == s) {
                    return Err(RareError::Config(format!(
                        "station {} appears twice in the level: add its weights",
                        network.spec().stations[s].name
                    )));
                }
            }
            Ok(())
        }
    }
}

/// The run configuration of every copy: no warm-up, no end before the
/// clock limit (a copy is stopped by its outcome).
pub(super) fn particle_config(cfg: &RareConfig) -> RunConfig {
    RunConfig {
        seed: cfg.seed,
        replications: 1,
        stop: Stop::Time(crate::dist::MAX_CLOCK_S),
        warmup: Warmup::None,
        max_events: u64::MAX - 1,
        ..RunConfig::default()
    }
}

struct Ctx<'a> {
    cfg: &'a RareConfig,
    of: LevelOf,
    start: u32,
    /// Deadline relative to the start state's clock (`Within`).
    horizon_s: Option<f64>,
    levels: Vec<u32>,
}

impl Ctx<'_> {
    /// Runs `p` until it reaches `up` or fails; adds its events to `used`.
    fn advance(
        &self,
        p: &mut Particle,
        up: u32,
        deadline: f64,
        used: &mut u64,
    ) -> Result<Outcome, RareError> {
        loop {
            let before = p.sim.events();
            let alive = p.sim.step()?;
            *used += p.sim.events() - before;
            if *used > self.cfg.max_events {
                return Err(RareError::EventLimit {
                    limit: self.cfg.max_events,
                });
            }
            if !alive || p.sim.time().seconds() > deadline {
                return Ok(Outcome::Fail);
            }
            let l = level_now(&p.sim, &self.of);
            if self.horizon_s.is_none() {
                let s = (i64::from(l) - i64::from(self.start)).signum() as i8;
                if p.side == 0 {
                    p.side = s;
                } else if s != p.side {
                    return Ok(Outcome::Fail);
                }
            }
            if l >= up {
                return Ok(Outcome::Up);
            }
        }
    }

    /// The start state of replication `r`: the initial state, run until
    /// the level equals the start level.
    fn start_state(&self, network: &Network, r: u32) -> Result<Simulation, RareError> {
        let mut sim = Simulation::new(network, &particle_config(self.cfg), r)?;
        while level_now(&sim, &self.of) != self.start {
            if sim.events() > START_EVENTS || !sim.step()? {
                return Err(RareError::StartUnreached {
                    start: self.start,
                    events: sim.events(),
                });
            }
        }
        Ok(sim)
    }

    /// One replication: the splitting stages, and for an escape time the
    /// mean cycle length from `cycles` cycles of a plain run.
    fn replication(&self, network: &Network, r: u32, cycles: u32) -> Result<Rep, RareError> {
        let s0 = self.start_state(network, r)?;
        let t0 = s0.time().seconds();
        let deadline = self.horizon_s.map_or(f64::INFINITY, |h| t0 + h);
        // The run to the start level counts too.
        let mut used = s0.events();
        let mut starts = vec![Some(Particle {
            sim: s0.snapshot(),
            side: 0,
        })];
        let mut fractions = Vec::with_capacity(self.levels.len());
        let mut survivors = Vec::with_capacity(self.levels.len());
        for (k, &up) in self.levels.iter().enumerate() {
            let mut next = Vec::new();
            let (effort, n) = (self.cfg.effort as usize, starts.len());
            for i in 0..self.cfg.effort {
                let at = i as usize % n;
                // A start's last copy is the start itself (no copy made).
                let mut p = if i as usize + n >= effort {
                    starts[at].take().expect("a start is used up only once")
                } else {
                    let src = starts[at].as_ref().expect("a start in use");
                    Particle {
                        sim: src.sim.snapshot(),
                        side: src.side,
                    }
                };
                p.sim.reseed(key(r, k as u32 + 1, i));
                if self.advance(&mut p, up, deadline, &mut used)? == Outcome::Up {
                    next.push(Some(p));
                }
            }
            let hits = next.len() as u32;
            fractions.push(f64::from(hits) / f64::from(self.cfg.effort));
            survivors.push(hits);
            if hits == 0 {
                return Err(RareError::NoSurvivors {
                    level: up,
                    replication: r,
                });
            }
            starts = next;
        }
        let probability = fractions.iter().product();
        let cycle_s = if cycles > 0 {
            Some(self.mean_cycle(&s0, r, cycles, &mut used)?)
        } else {
            None
        };
        Ok(Rep {
            probability,
            fractions,
            survivors,
            events: used,
            cycle_s,
        })
    }

    /// Mean length of a cycle (from the start level until the level comes
    /// back to it or reaches the target) over `cycles` consecutive cycles
    /// of a plain run from `s0` (restarted from `s0` after a cycle that
    /// reaches the target).
    fn mean_cycle(
        &self,
        s0: &Simulation,
        r: u32,
        cycles: u32,
        used: &mut u64,
    ) -> Result<f64, RareError> {
        let target = *self.levels.last().unwrap_or(&self.start);
        let fresh = |n: u32| {
            let mut sim = s0.snapshot();
            sim.reseed(key(r, 0, n));
            Particle { sim, side: 0 }
        };
        let mut restarts = 0;
        let mut p = fresh(restarts);
        let mut total = 0.0;
        for _ in 0..cycles {
            let t = p.sim.time().seconds();
            let out = self.advance(&mut p, target, f64::INFINITY, used)?;
            total += p.sim.time().seconds() - t;
            if out == Outcome::Up || p.sim.finished() {
                restarts += 1;
                p = fresh(restarts);
            } else {
                let l = level_now(&p.sim, &self.of);
                p.side = (i64::from(l) - i64::from(self.start)).signum() as i8;
            }
        }
        Ok(total / f64::from(cycles))
    }
}

/// The stream key of copy `i` of stage `k` of replication `r` (stage 0:
/// the plain run of an escape time).
fn key(r: u32, k: u32, i: u32) -> u64 {
    (u64::from(r) << 40) | (u64::from(k) << 24) | u64::from(i)
}

fn levels(start: u32, target: u32, step: u32) -> Vec<u32> {
    let mut v = Vec::new();
    let mut l = start;
    while l < target {
        l = l.saturating_add(step).min(target);
        v.push(l);
    }
    v
}

/// Runs the replications and combines them.
fn run_split(
    network: &Network,
    level: &Level,
    cfg: &RareConfig,
    horizon_s: Option<f64>,
    cycles: u32,
) -> Result<(Vec<Rep>, u32), RareError> {
    check_config(network, cfg)?;
    check_level(network, &level.of)?;
    if cfg.effort >= 1 << 24 {
        return Err(RareError::Config(format!(
            "effort must be below 16777216, found {}",
            cfg.effort
        )));
    }
    let start = match cfg.start {
        Some(a) => a,
        None => level_now(
            &Simulation::new(network, &particle_config(cfg), 0)?,
            &level.of,
        ),
    };
    if start >= level.at_least {
        return Err(RareError::StartAtTarget {
            start,
            target: level.at_least,
        });
    }
    let ctx = Ctx {
        cfg,
        of: level.of.clone(),
        start,
        horizon_s,
        levels: levels(start, level.at_least, cfg.step),
    };
    if ctx.levels.len() >= 1 << 16 {
        return Err(RareError::Config(
            "more than 65535 levels; raise --step".into(),
        ));
    }
    let reps: Result<Vec<Rep>, RareError> = (0..cfg.replications)
        .into_par_iter()
        .map(|r| ctx.replication(network, r, cycles))
        .collect();
    Ok((reps?, start))
}

fn stages_and_warnings(reps: &[Rep], level_list: &[u32]) -> (Vec<Stage>, Vec<RareWarning>) {
    let mut stages = Vec::new();
    let mut warnings = Vec::new();
    for (k, &l) in level_list.iter().enumerate() {
        let fewest = reps.iter().map(|r| r.survivors[k]).min().unwrap_or(0);
        stages.push(Stage {
            level: l,
            fraction: estimate(reps.iter().map(|r| r.fractions[k])),
            fewest_survivors: fewest,
        });
        if fewest < MIN_SURVIVORS {
            warnings.push(RareWarning::FewSurvivors {
                level: l,
                survivors: fewest,
            });
        }
    }
    (stages, warnings)
}

/// P(the level reaches `level.at_least` before returning to the start
/// level), or, with `horizon_s`, within that many seconds of the start
/// state; by fixed-effort splitting.
pub fn reach_probability(
    network: &Network,
    level: Level,
    horizon_s: Option<f64>,
    cfg: &RareConfig,
) -> Result<RareEstimate, RareError> {
    if let Some(h) = horizon_s
        && !(h.is_finite() && h > 0.0)
    {
        return Err(RareError::Config(format!(
            "the horizon must be a positive number of seconds, found {h}"
        )));
    }
    let (reps, start) = run_split(network, &level, cfg, horizon_s, 0)?;
    let list = levels(start, level.at_least, cfg.step);
    let (stages, warnings) = stages_and_warnings(&reps, &list);
    Ok(RareEstimate {
        estimand: match horizon_s {
            Some(h) => Estimand::Within { horizon_s: h },
            None => Estimand::Cycle,
        },
        method: Method::Splitting,
        level: Some(level),
        start: Some(start),
        value: estimate(reps.iter().map(|r| r.probability)),
        cycle_s: None,
        cycle_probability: None,
        replications: cfg.replications,
        events: reps.iter().map(|r| r.events).sum(),
        stages,
        warnings,
    })
}

/// Cycles of the plain run per copy of a stage, for an escape time's mean
/// cycle length.
const CYCLES_PER_EFFORT: u32 = 4;

/// The mean time from the start state until the level first reaches
/// `level.at_least`: per replication, the mean cycle length over the
/// per-cycle probability of reaching the target (a cycle ends when the
/// level returns to the start level or reaches the target).
pub fn escape_time(
    network: &Network,
    level: Level,
    cfg: &RareConfig,
) -> Result<RareEstimate, RareError> {
    let cycles = cfg.effort.saturating_mul(CYCLES_PER_EFFORT);
    let (reps, start) = run_split(network, &level, cfg, None, cycles)?;
    let list = levels(start, level.at_least, cfg.step);
    let (stages, mut warnings) = stages_and_warnings(&reps, &list);
    if let Some(reason) = not_regenerative(network, &level.of) {
        warnings.push(RareWarning::NotRegenerative { reason });
    }
    let cycle = |r: &Rep| r.cycle_s.unwrap_or(f64::NAN);
    Ok(RareEstimate {
        estimand: Estimand::EscapeTime,
        method: Method::Splitting,
        level: Some(level),
        start: Some(start),
        value: estimate(reps.iter().map(|r| cycle(r) / r.probability)),
        cycle_s: Some(estimate(reps.iter().map(cycle))),
        cycle_probability: Some(estimate(reps.iter().map(|r| r.probability))),
        replications: cfg.replications,
        events: reps.iter().map(|r| r.events).sum(),
        stages,
        warnings,
    })
}

/// Why the level does not determine the state (so cycles are not
/// regenerations), or `None` when it does: one class, one queue station,
/// every time exponential.
fn not_regenerative(network: &Network, of: &LevelOf) -> Option<String> {
    let spec = network.spec();
    if spec.classes.len() != 1 || spec.stations.len() != 1 || !spec.regions.is_empty() {
        return Some("the model has more than one class or station".into());
    }
    let st = &spec.stations[0];
    if st.kind.as_queue().is_none() {
        return Some(format!("station {} is not a plain queue", st.name));
    }
    let exp = |d: Option<&crate::dist::Dist>| d.is_none_or(|d| d.is_exponential());
    let times_exp = st.service.iter().all(|d| exp(d.as_ref()))
        && match &spec.classes[0].workload {
            Workload::Closed { think, .. } => exp(think.as_ref()),
            Workload::Open { interarrival } => exp(Some(interarrival)),
        };
    if !times_exp {
        return Some("some time is not exponential".into());
    }
    let _ = of;
    None
}
