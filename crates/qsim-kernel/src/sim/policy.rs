//! Routing policies at run time. A row with a policy is built as a single
//! branch whose target is `POLICY` plus the policy's index (no draw), and
//! a network with policies takes `goto_slow`, which settles the station
//! there (`Simulation::settle_policy`): Markov rows keep their code and
//! their speed.

use super::Simulation;
use super::event::EXIT;
use crate::dist::unit;
use crate::network::{RoutingPolicy, Target};
use crate::rng::SimRng;

/// Targets from `POLICY` up to `routing::SWITCH` are rows with a policy: an index
/// into `Simulation::policies`. Stations are below 2^24.
pub(super) const POLICY: u32 = 1 << 30;

/// The state of one row with a policy (one per class and row).
#[derive(Clone, Debug)]
pub(super) struct PolicyRt {
    policy: RoutingPolicy,
    /// The row's stations of positive weight, in the order given.
    targets: Vec<u32>,
    weights: Vec<f64>,
    total: f64,
    /// All weights equal: power of d samples by a partial shuffle.
    uniform: bool,
    /// Round robin: each station's credit (smooth weighted round robin).
    credit: Vec<f64>,
    /// Power of d: a permutation of the row's indices (partially shuffled
    /// at each pick), or the weights left while sampling by weight.
    perm: Vec<u32>,
    left: Vec<f64>,
    /// Picks so far (for the `policy` bias injection).
    #[cfg(feature = "bias")]
    picks: u64,
}

impl PolicyRt {
    /// A row `list` (stations only, as checked) picked by `policy`.
    pub(super) fn new(policy: RoutingPolicy, list: &[(Target, f64)]) -> PolicyRt {
        let (targets, weights): (Vec<u32>, Vec<f64>) = list
            .iter()
            .filter(|b| b.1 > 0.0)
            .filter_map(|&(t, w)| t.station().map(|s| (s as u32, w)))
            .unzip();
        let n = targets.len();
        PolicyRt {
            policy,
            total: weights.iter().sum(),
            uniform: weights.iter().all(|&w| w == weights[0]),
            credit: vec![0.0; n],
            perm: (0..n as u32).collect(),
            left: vec![0.0; n],
            targets,
            weights,
            #[cfg(feature = "bias")]
            picks: 0,
        }
    }

    /// The station picked, given each station's jobs present (`n`).
    fn pick(&mut self, rng: &mut SimRng, n: impl Fn(u32) -> u32) -> u32 {
        match self.policy {
            RoutingPolicy::RoundRobin => self.round_robin(),
            RoutingPolicy::ShortestQueue => {
                // Jobs per unit of weight, compared crosswise (k / w <
                // best / w_best as k w_best < best w) so that weights in
                // proportion (1/3 and 2/3) tie exactly.
                let (mut best, mut pick, mut ties) = (f64::from(n(self.targets[0])), 0, 1u32);
                for (i, &t) in self.targets.iter().enumerate().skip(1) {
                    let k = f64::from(n(t));
                    let (here, there) = (k * self.weights[pick], best * self.weights[i]);
                    if here < there {
                        (best, pick, ties) = (k, i, 1);
                    } else if here == there {
                        // Reservoir sampling: each tied station is kept
                        // with probability 1/ties.
                        ties += 1;
                        if unit(rng) * f64::from(ties) < 1.0 {
                            (best, pick) = (k, i);
                        }
                    }
                }
                #[cfg(feature = "bias")]
                if crate::bias::policy_misses(&mut self.picks) {
                    pick = (pick + 1) % self.targets.len();
                }
                self.targets[pick]
            }
            RoutingPolicy::PowerOfD { d } => {
                let d = (d as usize).min(self.targets.len());
                self.sample(rng, d);
                let mut best = u32::MAX;
                let mut pick = 0;
                let mut ties = 0u32;
                for &i in &self.perm[..d] {
                    let k = n(self.targets[i as usize]);
                    if k < best {
                        (best, pick, ties) = (k, i, 1);
                    } else if k == best {
                        ties += 1;
                        if unit(rng) * f64::from(ties) < 1.0 {
                            pick = i;
                        }
                    }
                }
                #[cfg(feature = "bias")]
                if crate::bias::policy_misses(&mut self.picks) {
                    pick = self.perm[0];
                }
                self.targets[pick as usize]
            }
        }
    }

    /// Smooth weighted round robin: every station gains its weight, the
    /// one with the most credit (the first on a tie) is picked and pays
    /// the total. Equal weights give the plain cycle.
    fn round_robin(&mut self) -> u32 {
        let mut pick = 0;
        let mut most = f64::NEG_INFINITY;
        for (i, (c, &w)) in self.credit.iter_mut().zip(&self.weights).enumerate() {
            *c += w;
            if *c > most {
                (most, pick) = (*c, i);
            }
        }
        self.credit[pick] -= self.total;
        self.targets[pick]
    }

    /// Puts `d` distinct indices of the row, sampled in proportion to
    /// their weights without replacement, in `perm[..d]`.
    fn sample(&mut self, rng: &mut SimRng, d: usize) {
        let n = self.perm.len();
        if self.uniform {
            // A partial Fisher-Yates shuffle: any starting order gives a
            // uniform draw of the first d.
            for k in 0..d {
                let r = k + ((unit(rng) * (n - k) as f64) as usize).min(n - k - 1);
                self.perm.swap(k, r);
            }
            return;
        }
        self.left.copy_from_slice(&self.weights);
        let mut total = self.total;
        for k in 0..d {
            let u = unit(rng) * total;
            let mut acc = 0.0;
            // The last station with weight left catches rounding.
            let mut chosen = n;
            for (i, &w) in self.left.iter().enumerate() {
                if w > 0.0 {
                    chosen = i;
                    acc += w;
                    if u < acc {
                        break;
                    }
                }
            }
            total -= self.left[chosen];
            self.left[chosen] = 0.0;
            self.perm[k] = chosen as u32;
        }
    }
}

impl Simulation {
    /// The station job `j`, leaving `from` (EXIT: starting), goes to by
    /// the row with policy `k`. Draws come from the routing stream of
    /// `from` (of the class when starting).
    pub(super) fn policy_pick(&mut self, j: u32, from: u32, k: u32) -> u32 {
        let ns = self.stations.len();
        let stream = if from == EXIT || from as usize >= ns {
            ns + self.jobs[j as usize].class as usize
        } else {
            from as usize
        };
        let stations = &self.stations;
        let rng = &mut self.route_rngs[stream];
        self.policies[k as usize].pick(rng, |s| stations[s as usize].stats.n)
    }
}
