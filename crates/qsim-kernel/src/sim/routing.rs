//! Routing: where a job goes when it leaves a station.

use super::event::{EXIT, NONE};
use super::policy::{POLICY, PolicyRt};
use super::{Kind, Simulation};
use crate::dist::unit;
use crate::network::{Routing, RoutingPolicy, StationId, Target};
use crate::rng::SimRng;

/// Targets from `SWITCH` up (below EXIT) are switching branches: an index
/// into `Simulation::switches`. Stations are below 2^24 (`MAX_STATIONS`).
pub(super) const SWITCH: u32 = 1 << 31;

/// Branches of probabilistic routing with cumulative probabilities.
#[derive(Clone, Debug)]
pub(super) struct Branches {
    pub(super) targets: Vec<u32>,
    pub(super) cum: Vec<f64>,
    /// The first four entries of `cum`, padded with +inf, and of `targets`,
    /// padded with EXIT: with at most four branches a pick is one draw and
    /// four branch-free compares.
    pub(super) cum4: [f64; 4],
    pub(super) targets4: [u32; 4],
}

impl Default for Branches {
    fn default() -> Self {
        Branches {
            targets: Vec::new(),
            cum: Vec::new(),
            cum4: [f64::INFINITY; 4],
            targets4: [EXIT; 4],
        }
    }
}

impl Branches {
    /// A single branch to `t` (taken with no draw).
    fn to(t: u32) -> Branches {
        let mut b = Branches {
            targets: vec![t],
            cum: vec![f64::INFINITY],
            ..Branches::default()
        };
        b.targets4[0] = t;
        b
    }

    /// `switches` collects the (station, class) pairs of switching
    /// branches; such a branch's target is `SWITCH` plus its index there.
    pub(super) fn new(list: &[(Target, f64)], switches: &mut Vec<(u32, u32)>) -> Branches {
        let mut b = Branches::default();
        let mut acc = 0.0;
        for &(t, p) in list {
            if p <= 0.0 {
                continue;
            }
            #[cfg(feature = "bias")]
            let p = if b.targets.is_empty() && list.len() > 1 {
                crate::bias::first_branch(p, list[list.len() - 1].1)
            } else {
                p
            };
            acc += p;
            b.targets.push(match t {
                Target::Station(s) => s as u32,
                Target::Exit => EXIT,
                Target::Switch { station, class } => {
                    switches.push((station as u32, class as u32));
                    SWITCH + (switches.len() - 1) as u32
                }
            });
            b.cum.push(acc);
        }
        if let Some(last) = b.cum.last_mut() {
            // Guard against rounding: the last branch catches everything.
            *last = f64::INFINITY;
        }
        for (k, (&c, &t)) in b.cum.iter().zip(&b.targets).take(4).enumerate() {
            b.cum4[k] = c;
            b.targets4[k] = t;
        }
        b
    }

    /// A branch drawn with one uniform number; a single branch takes no
    /// draw.
    #[inline(always)]
    fn pick(&self, rng: &mut SimRng) -> u32 {
        if self.targets.len() == 1 {
            return self.targets4[0];
        }
        if self.targets.len() <= 4 {
            let u = unit(rng);
            let c = &self.cum4;
            // Branches before the one drawn: the last real entry is +inf,
            // so k < 4.
            let k = usize::from(u >= c[0])
                + usize::from(u >= c[1])
                + usize::from(u >= c[2])
                + usize::from(u >= c[3]);
            return self.targets4[k & 3];
        }
        match self.targets.len() {
            0 => EXIT,
            1 => self.targets[0],
            _ => {
                // One uniform draw against the cumulative table (the last
                // entry is +inf, so the scan always stops inside it).
                let u = unit(rng);
                for (&c, &t) in self.cum.iter().zip(&self.targets) {
                    if u < c {
                        return t;
                    }
                }
                EXIT
            }
        }
    }
}

/// How the sub-jobs of a fork route, settled when the fork starts (see
/// [`Simulation::sub_target`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(u8)]
pub(super) enum SubRoute {
    /// Straight to the join (a class with a sequence route).
    #[default]
    Join,
    /// The class's routing rows (`Route::Prob`'s `sub`).
    Rows,
    /// The fork's fixed routes (`ForkRt::steps`).
    Fixed,
}

/// `repr(u8)` (here and on `Waiting`, `Sampler`): an explicit tag, so a
/// match is one compare instead of decoding a niche in a `Vec`.
#[derive(Clone, Debug)]
#[repr(u8)]
pub(super) enum Route {
    Seq(Vec<u32>),
    Prob {
        entry: Branches,
        from: Vec<Branches>,
        /// The rows as given, one per station, with the single branch EXIT
        /// where the class has none: fork sub-jobs follow these, and go to
        /// their join where a row sends them out.
        sub: Vec<Branches>,
    },
}

impl Route {
    /// A class's route over `stations` stations. `rows` are the policies
    /// of the class's rows (`None`: its `source` row); each becomes a
    /// [`PolicyRt`] in `policies`, shared by the jobs and the fork
    /// sub-jobs that take the row.
    pub(super) fn new(
        routing: &Routing,
        stations: usize,
        switches: &mut Vec<(u32, u32)>,
        rows: &[(Option<StationId>, RoutingPolicy)],
        policies: &mut Vec<PolicyRt>,
    ) -> Route {
        match routing {
            Routing::Sequence(seq) => Route::Seq(seq.iter().map(|&s| s as u32).collect()),
            Routing::Probabilistic { entry, from } => {
                // The target of each row with a policy.
                let mut policy_of = |row: Option<StationId>| {
                    let &(_, p) = rows.iter().find(|r| r.0 == row)?;
                    let list = match row {
                        None => entry,
                        Some(s) => from.get(s)?,
                    };
                    policies.push(PolicyRt::new(p, list));
                    Some(POLICY + (policies.len() - 1) as u32)
                };
                let entry_policy = policy_of(None);
                let from_policy: Vec<Option<u32>> =
                    (0..stations).map(|s| policy_of(Some(s))).collect();
                let row = |list: &[(Target, f64)],
                           policy: Option<u32>,
                           switches: &mut Vec<(u32, u32)>| {
                    match policy {
                        Some(t) => Branches::to(t),
                        None => Branches::new(list, switches),
                    }
                };
                let entry_b = row(entry, entry_policy, switches);
                Route::Prob {
                    // Stations without branches continue like a new
                    // interaction: copy the entry branches in.
                    from: (0..stations)
                        .map(|s| match from.get(s).filter(|b| !b.is_empty()) {
                            Some(b) => row(b, from_policy[s], switches),
                            None => row(entry, entry_policy, switches),
                        })
                        .collect(),
                    sub: (0..stations)
                        .map(|s| {
                            // Networks with switching have no forks, so no
                            // sub-job picks a switching branch. A station
                            // without branches sends to the join: its row is
                            // the single branch EXIT (no draw), which
                            // `Simulation::sub_target` turns into the join.
                            match from.get(s).filter(|b| !b.is_empty()) {
                                Some(b) => row(b, from_policy[s], &mut Vec::new()),
                                None => Branches::to(EXIT),
                            }
                        })
                        .collect(),
                    entry: entry_b,
                }
            }
        }
    }
}

impl Simulation {
    /// Where job `j` goes after station `from` (EXIT: after thinking/arriving).
    #[inline(always)]
    pub(super) fn next_target(&mut self, j: u32, from: u32) -> u32 {
        // SAFETY: job ids only come from the slab's allocator and the slab
        // never shrinks; a job's class is set by `alloc` from a class index
        // and `classes` is never resized.
        let job = unsafe { self.jobs.get_unchecked_mut(j as usize) };
        let cl = unsafe { self.classes.get_unchecked(job.class as usize) };
        match &cl.route {
            Route::Seq(seq) => match seq.get(job.pos as usize) {
                Some(&s) => {
                    job.pos += 1;
                    s
                }
                None => EXIT,
            },
            Route::Prob {
                entry, from: br, ..
            } => {
                // `br` has one entry per station, with the entry branches
                // copied in for stations the class has no branches for (a
                // job placed there initially continues like a new
                // interaction); EXIT (after thinking or arriving) is past
                // the end.
                let ns = br.len();
                match br.get(from as usize) {
                    // SAFETY: `route_rngs` has one stream per station, then
                    // one per class (built together with `br`, which has one
                    // row per station).
                    Some(b) => b.pick(unsafe { self.route_rngs.get_unchecked_mut(from as usize) }),
                    None => entry.pick(unsafe {
                        self.route_rngs.get_unchecked_mut(ns + job.class as usize)
                    }),
                }
            }
        }
    }

    /// Moves job `j` from station `from` (EXIT: from outside) to `to`,
    /// passing region boundaries.
    ///
    /// Fork sub-jobs never cross region boundaries on their own: the parent
    /// holds its place in a region for them.
    #[inline(always)]
    pub(super) fn goto(&mut self, j: u32, from: u32, to: u32) {
        // One flag for regions and class switching: the plain path pays
        // one compare for both.
        if self.slow_goto {
            self.goto_slow(j, from, to);
            return;
        }
        if to == EXIT {
            self.exit(j);
        } else {
            self.arrive(j, to as usize);
        }
    }

    /// [`Simulation::goto`] with regions, class switching or routing
    /// policies: a row with a policy settles its station first; a switching
    /// target gives the job its new class; a job leaving the network takes
    /// back the class its interaction started in (its completion is
    /// counted there, and a closed job thinks and starts again in it).
    #[inline(never)]
    fn goto_slow(&mut self, j: u32, from: u32, to: u32) {
        let to = self.settle_policy(j, from, to);
        if self.client.is_some() && (from == EXIT || to == EXIT) && self.client_goto(j, from, to) {
            return;
        }
        let mut to = to;
        if !self.chain_start.is_empty() {
            let job = &mut self.jobs[j as usize];
            if to == EXIT {
                job.class = self.chain_start[job.class as usize];
            } else if to >= SWITCH {
                let (station, class) = self.switches[(to - SWITCH) as usize];
                job.class = class;
                to = station;
            }
        }
        if !self.regions.is_empty() && self.jobs[j as usize].fork == NONE {
            self.cross_regions(j, from, to);
            return;
        }
        if to == EXIT {
            self.exit(j);
        } else {
            self.arrive(j, to as usize);
        }
    }

    /// Where job `j`, leaving `from` (EXIT: starting), goes for target
    /// `to`: a row with a policy settles its station; any other target is
    /// as it is.
    pub(super) fn settle_policy(&mut self, j: u32, from: u32, to: u32) -> u32 {
        if (POLICY..SWITCH).contains(&to) {
            self.policy_pick(j, from, to - POLICY)
        } else {
            to
        }
    }

    /// Job `j` leaves station `s` and moves on. Inlined at its callers as
    /// the fork test and one call: a sub-job's move then costs one call
    /// (the one it needs), not a call through a function that also holds
    /// the plain path's code and saves its registers.
    #[inline(always)]
    pub(super) fn leave(&mut self, j: u32, s: u32) {
        // SAFETY: job ids only come from the slab's allocator and the slab
        // never shrinks.
        if unsafe { self.jobs.get_unchecked(j as usize) }.fork != NONE {
            self.sub_leave(j, s);
        } else {
            self.plain_leave(j, s);
        }
    }

    /// [`Simulation::leave`], inlined into the hot event handlers.
    #[inline(always)]
    pub(super) fn leave_hot(&mut self, j: u32, s: u32) {
        // SAFETY: job ids only come from the slab's allocator and the slab
        // never shrinks.
        if unsafe { self.jobs.get_unchecked(j as usize) }.fork != NONE {
            // One call for the whole move, so that the plain path inlined
            // here carries none of a sub-job's routing.
            self.sub_leave(j, s);
            return;
        }
        self.move_on(j, s);
    }

    /// Job `j`, not a fork sub-job, leaves station `s` and moves on.
    #[inline(never)]
    fn plain_leave(&mut self, j: u32, s: u32) {
        self.move_on(j, s);
    }

    /// The move of a job that is not a fork sub-job: its route's next
    /// target, then there.
    #[inline(always)]
    fn move_on(&mut self, j: u32, s: u32) {
        let to = self.next_target(j, s);
        self.goto(j, s, to);
    }

    /// Fork sub-job `j` leaves station `s` and moves on.
    #[inline(never)]
    fn sub_leave(&mut self, j: u32, s: u32) {
        let to = self.sub_target(j, s);
        self.goto(j, s, to);
    }

    /// Where fork sub-job `j` goes after station `s`: the next step of its
    /// fork's fixed route, or its class's routing row for `s` (a sub-job
    /// may visit several stations, e.g. CPU work, a latch, CPU work again),
    /// or its fork's join after the last step, where the class has no row
    /// and for a class with a sequence route. Validation keeps sub-jobs
    /// from routing to the sink; should one pick it anyway, it joins.
    /// Which of these applies was settled when the fork started (see
    /// [`SubRoute`]), so a visit costs the job, its fork record, the row
    /// and the pick.
    #[inline(always)]
    pub(super) fn sub_target(&mut self, j: u32, s: u32) -> u32 {
        // SAFETY: job ids only come from the slab's allocator and the slab
        // never shrinks; a sub-job's `fork` is the index of its live fork
        // record (freed only once every sub-job has reached the join), and
        // `forks` never shrinks.
        let job = unsafe { self.jobs.get_unchecked_mut(j as usize) };
        let rec = unsafe { self.forks.get_unchecked(job.fork as usize) };
        let join = rec.join;
        match rec.sub {
            SubRoute::Rows => {
                // SAFETY: a job's class is a class index; `classes` is never
                // resized.
                let cl = unsafe { self.classes.get_unchecked(job.class as usize) };
                let Route::Prob { sub, .. } = &cl.route else {
                    return join;
                };
                if s == join {
                    // A nested fork's sub-job released at the join its own
                    // fork shares: it is done.
                    return join;
                }
                debug_assert!((s as usize) < sub.len() && (s as usize) < self.route_rngs.len());
                // SAFETY: `sub` has one row per station and `route_rngs` one
                // stream per station first (see `Route::new`), and `s` is a
                // station the job was at.
                let b = unsafe { sub.get_unchecked(s as usize) };
                match b.pick(unsafe { self.route_rngs.get_unchecked_mut(s as usize) }) {
                    EXIT => join,
                    t => t,
                }
            }
            SubRoute::Fixed => {
                let Kind::Fork(f) = &self.stations[rec.fork as usize].kind else {
                    return join;
                };
                // The next step, or the join after the last.
                let t = f.steps.get(job.pos as usize).copied().unwrap_or(NONE);
                job.pos += 1;
                if t == NONE { join } else { t }
            }
            SubRoute::Join => join,
        }
    }
}
