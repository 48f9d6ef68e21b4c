//! The deep response-time tail of a tandem of single-server FCFS queues,
//! or of a fork-join of such tandems, by importance sampling with a
//! switching mixture of tilts.
//!
//! In a tandem of FCFS single servers with infinite room, customers keep
//! their order, and customer 0's departure from the last station is the
//! longest path through the grid of service times `S(i, j)` (the i-th
//! customer before customer 0, station j) that starts at some earlier
//! customer m's arrival, moves to later customers or later stations, and
//! ends at `(0, J)`. With `G(m)` the longest such path's service sum from
//! `(m, 1)` and `T(m)` the time between customer m's arrival and customer
//! 0's, the response in steady state is `R = max over m >= 0 of (G(m) -
//! T(m))`: the highest point of a process that, like the single queue's
//! walk, drifts down. Going back one customer at a time, `G(m)` comes from
//! `G(m - 1)` by one pass over the stations, so the process is followed
//! until it first passes t.
//!
//! A fork-join (a tandem ending in a fork that sends one sub-job to each
//! target, each target the head of a tandem of its own, and a join that
//! waits for them all) is the same on a tree of stations: the parent
//! leaves with its slowest sub-job, so its response is the longest path
//! through any branch, and each station's longest path goes on to the
//! longest of its next stations'. Sub-jobs of one parent all enter at the
//! same time, so every branch keeps the customers' order.
//!
//! A long response is a long path: going back from customer 0, it runs
//! along the last station's services for a while, then along an earlier
//! station's, and so on; the excess comes from the stations where it runs.
//! The change of measure follows that shape. Each station j whose queue
//! can grow has a tilt theta_j > 0 solving M_Sj(theta_j) M_A(-theta_j) = 1
//! (the single queue's tilt, in `tail.rs`); going back customer by
//! customer, a hidden state says which station's services (and, by
//! -theta_j, which interarrival times) are tilted: it starts at a station
//! drawn with weight w_j proportional to e^{1 - theta_j / theta_min} (most
//! on the station whose tail decays slowest, equal between ties, and never
//! negligible on any: a weight e^{-(theta_j - theta_min) t} starved a
//! station whose tilt is at most twice the slowest one's, and its share of
//! a path's excess then had a weight of infinite variance), and at each
//! customer moves to a station j' before the current one on its path with
//! probability s w_j', s about one switch per path. Under every state its
//! own station's queue grows, so the process passes t. The path's weight is 1 over its
//! likelihood ratio to the model's law, summed over every sequence of
//! hidden states (a forward pass, O(stations) per customer), so whatever
//! stations the excess came from, some sequence explains it and the weight
//! stays bounded. A station whose queue can never grow (every service
//! shorter than every interarrival time) has no tilt and no state.
use super::walk::{Mix, Walk, draw};
use crate::dist::{Dist, unit};
use crate::rng::SimRng;

/// The stations a customer passes: a tandem, or a tandem then a fork to
/// parallel tandems (branches) whose ends the join waits for. Each
/// station's parent (the station before it on its path) comes before it.
pub(super) struct Layout {
    /// Each station's service law.
    pub(super) services: Vec<Dist>,
    /// Each station's parent, `None` for a path's first station.
    pub(super) parent: Vec<Option<usize>>,
}

/// A layout's laws and the mixture's states.
pub(super) struct Tandem {
    /// Each station's service law.
    services: Vec<Dist>,
    /// Each station's children (the next stations on the paths through
    /// it), and the stations without a parent.
    children: Vec<Vec<usize>>,
    entries: Vec<usize>,
    /// The hidden states: (station, its tilt), in station order.
    states: Vec<(usize, Walk)>,
    /// Each state's weight w (they sum to 1), and every state's index.
    weights: Vec<f64>,
    all: Vec<usize>,
    /// Each state's ancestors (states at stations before it on its path),
    /// their total weight, and its descendants.
    ancestors: Vec<Vec<usize>>,
    ancestor_weight: Vec<f64>,
    descendants: Vec<Vec<usize>>,
    /// The switch probability s per customer.
    switch: f64,
}

impl Tandem {
    /// The mixture for a response tail at `t`, or why there is none.
    pub(super) fn new(layout: Layout, interarrival: Dist, t: f64) -> Result<Tandem, String> {
        let Layout { services, parent } = layout;
        let mut states = Vec::new();
        for (j, s) in services.iter().enumerate() {
            match Walk::new(&Mix::one(s.clone()), &interarrival) {
                Ok(w) => states.push((j, w)),
                Err(why) if why.contains("never waits") => {}
                Err(why) => return Err(format!("station {} of the paths: {why}", j + 1)),
            }
        }
        let Some(slowest) = states.iter().min_by(|a, b| a.1.theta.total_cmp(&b.1.theta)) else {
            return Err("no station's queue can grow (every service time is shorter than every interarrival time), so the response is at most the sum of the services and has no deep tail".into());
        };
        let low = slowest.1.theta;
        // Customers a path of the slowest station's tilt takes to pass t.
        let (s, a) = (&services[slowest.0], &interarrival);
        let h = 1e-6 * low;
        let f = |x: f64| s.log_mgf(x).unwrap_or(f64::NAN) + a.log_mgf(-x).unwrap_or(f64::NAN);
        let drift = (f(low + h) - f(low - h)) / (2.0 * h);
        let customers = if drift.is_finite() && drift > 0.0 {
            (t / drift).max(1.0)
        } else {
            1.0
        };
        let raw: Vec<f64> = states
            .iter()
            .map(|(_, w)| (1.0 - w.theta / low).exp())
            .collect();
        let total: f64 = raw.iter().sum();
        let weights: Vec<f64> = raw.iter().map(|r| r / total).collect();
        let state_of = |station: usize| states.iter().position(|(j, _)| *j == station);
        let ancestors: Vec<Vec<usize>> = states
            .iter()
            .map(|(j, _)| {
                let mut up = Vec::new();
                let mut at = parent[*j];
                while let Some(p) = at {
                    up.extend(state_of(p));
                    at = parent[p];
                }
                up
            })
            .collect();
        let ancestor_weight = ancestors
            .iter()
            .map(|up| up.iter().map(|&k| weights[k]).sum())
            .collect();
        let mut descendants = vec![Vec::new(); states.len()];
        for (d, up) in ancestors.iter().enumerate() {
            for &k in up {
                descendants[k].push(d);
            }
        }
        let switch = if ancestors.iter().any(|up| !up.is_empty()) {
            (1.0 / customers).min(0.5)
        } else {
            0.0
        };
        let mut children = vec![Vec::new(); services.len()];
        let mut entries = Vec::new();
        for (j, p) in parent.iter().enumerate() {
            match p {
                Some(p) => children[*p].push(j),
                None => entries.push(j),
            }
        }
        Ok(Tandem {
            services,
            children,
            entries,
            states,
            all: (0..weights.len()).collect(),
            weights,
            ancestors,
            ancestor_weight,
            descendants,
            switch,
        })
    }

    /// A state drawn with the weights among `among`.
    fn draw_state(&self, among: &[usize], rng: &mut SimRng) -> usize {
        let total: f64 = among.iter().map(|&k| self.weights[k]).sum();
        let mut u = unit(rng) * total;
        for &k in among {
            u -= self.weights[k];
            if u < 0.0 {
                return k;
            }
        }
        among[among.len() - 1]
    }

    /// One sample of the weighted P(R > t), and its events (an arrival
    /// and a service at each station per customer).
    pub(super) fn response(&self, t: f64, rng: &mut SimRng) -> (f64, u64) {
        let stations = self.services.len();
        let n = self.states.len();
        let mut state = self.draw_state(&self.all, rng);
        // The longest path's service sum from (customer, station j).
        let mut column = vec![0.0; stations];
        let mut drawn = vec![0.0; stations];
        // Forward pass: alpha[k] = sum over hidden sequences ending in
        // state k of their probability times the customers' likelihood
        // ratios, kept scaled (its log apart in `log_scale`).
        let mut alpha = vec![0.0; n];
        let mut logs = vec![0.0; n];
        let mut old = vec![0.0; n];
        let mut log_scale = 0.0;
        let mut gap = None;
        let mut gaps = 0.0;
        let mut customers = 0u64;
        loop {
            let (tilted, walk) = &self.states[state];
            if customers > 0 {
                let a = draw(&walk.interarrival, rng);
                gaps += a;
                gap = Some(a);
            }
            for (j, d) in drawn.iter_mut().enumerate() {
                *d = if j == *tilted {
                    walk.service.sample(rng)
                } else {
                    self.services[j].sample(rng)
                };
            }
            // This customer's column of the longest paths: from (customer,
            // j) on to the same customer at a next station, or to the next
            // customer at j. Children come after their parent.
            for j in (0..stations).rev() {
                let later = if customers > 0 {
                    column[j]
                } else {
                    f64::NEG_INFINITY
                };
                let next = self.children[j]
                    .iter()
                    .map(|&c| column[c])
                    .fold(f64::NEG_INFINITY, f64::max);
                let best = next.max(later);
                column[j] = drawn[j] + if best.is_finite() { best } else { 0.0 };
            }
            // Each state's likelihood ratio for this customer, in logs.
            for (l, (j, w)) in logs.iter_mut().zip(&self.states) {
                *l = w.theta * drawn[*j] - w.service.log_mgf();
                if let Some(a) = gap {
                    *l -= w.theta * a + w.interarrival.log_mgf();
                }
            }
            let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if customers == 0 {
                for k in 0..n {
                    alpha[k] = self.weights[k] * (logs[k] - top).exp();
                }
            } else {
                // Into k: stay at k, or switch from a descendant.
                old.copy_from_slice(&alpha);
                for k in 0..n {
                    let stay = old[k] * (1.0 - self.switch * self.ancestor_weight[k]);
                    let from: f64 = self.descendants[k].iter().map(|&d| old[d]).sum();
                    let moved = self.switch * self.weights[k] * from;
                    alpha[k] = (stay + moved) * (logs[k] - top).exp();
                }
            }
            let sum: f64 = alpha.iter().sum();
            alpha.iter_mut().for_each(|a| *a /= sum);
            log_scale += top + sum.ln();
            customers += 1;
            let longest = self
                .entries
                .iter()
                .map(|&e| column[e])
                .fold(f64::NEG_INFINITY, f64::max);
            if longest - gaps > t {
                break;
            }
            let up = &self.ancestors[state];
            if !up.is_empty() && unit(rng) < self.switch * self.ancestor_weight[state] {
                state = self.draw_state(up, rng);
            }
        }
        ((-log_scale).exp(), customers * (stations as u64 + 1))
    }
}
