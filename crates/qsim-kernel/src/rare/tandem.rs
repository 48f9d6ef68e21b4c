//! The deep response-time tail of a tandem of single-server FCFS queues,
//! by importance sampling with a switching mixture of tilts.
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
//! customer moves to an earlier station j' with probability s w_j', s about
//! one switch per path. Under every state its own station's queue grows,
//! so the process passes t. The path's weight is 1 over its
//! likelihood ratio to the model's law, summed over every sequence of
//! hidden states (a forward pass, O(stations) per customer), so whatever
//! stations the excess came from, some sequence explains it and the weight
//! stays bounded. A station whose queue can never grow (every service
//! shorter than every interarrival time) has no tilt and no state.
use super::tail::Walk;
use crate::dist::{Dist, unit};
use crate::rng::SimRng;

/// A tandem's laws and the mixture's states.
pub(super) struct Tandem {
    /// Each station's service law, in route order.
    services: Vec<Dist>,
    /// The hidden states: (station, its tilt), in route order.
    states: Vec<(usize, Walk)>,
    /// Each state's weight w (they sum to 1), and cumulated.
    weights: Vec<f64>,
    cumulative: Vec<f64>,
    /// The switch probability s per customer.
    switch: f64,
}

impl Tandem {
    /// The mixture for a response tail at `t`, or why there is none.
    pub(super) fn new(services: Vec<Dist>, interarrival: Dist, t: f64) -> Result<Tandem, String> {
        let mut states = Vec::new();
        for (j, s) in services.iter().enumerate() {
            match Walk::new(s, &interarrival) {
                Ok(w) => states.push((j, w)),
                Err(why) if why.contains("never waits") => {}
                Err(why) => return Err(format!("station {} of the route: {why}", j + 1)),
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
        let mut acc = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                acc += w;
                acc
            })
            .collect();
        let switch = if states.len() > 1 {
            (1.0 / customers).min(0.5)
        } else {
            0.0
        };
        Ok(Tandem {
            services,
            states,
            weights,
            cumulative,
            switch,
        })
    }

    /// A state drawn with the weights, among those below `below`.
    fn draw_state(&self, below: usize, rng: &mut SimRng) -> usize {
        let top = if below == 0 {
            0.0
        } else {
            self.cumulative[below - 1]
        };
        let u = unit(rng) * top;
        self.cumulative[..below]
            .partition_point(|&c| c <= u)
            .min(below - 1)
    }

    /// One sample of the weighted P(R > t), and its events (an arrival
    /// and a service at each station per customer).
    pub(super) fn response(&self, t: f64, rng: &mut SimRng) -> (f64, u64) {
        let stations = self.services.len();
        let n = self.states.len();
        let mut state = self.draw_state(n, rng);
        // The longest path's service sum from (customer, station j).
        let mut column = vec![0.0; stations];
        let mut drawn = vec![0.0; stations];
        // Forward pass: alpha[k] = sum over hidden sequences ending in
        // state k of their probability times the customers' likelihood
        // ratios, kept scaled (its log apart in `log_scale`).
        let mut alpha = vec![0.0; n];
        let mut logs = vec![0.0; n];
        let mut log_scale = 0.0;
        let mut gap = None;
        let mut gaps = 0.0;
        let mut customers = 0u64;
        loop {
            let (tilted, walk) = &self.states[state];
            if customers > 0 {
                let a = walk.interarrival.sample(rng);
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
            // j) on to the same customer at j + 1, or to the next one at j.
            let mut next = f64::NEG_INFINITY;
            for j in (0..stations).rev() {
                let later = if customers > 0 {
                    column[j]
                } else {
                    f64::NEG_INFINITY
                };
                let best = next.max(later);
                column[j] = drawn[j] + if best.is_finite() { best } else { 0.0 };
                next = column[j];
            }
            // Each state's likelihood ratio for this customer, in logs.
            let ratio = |(j, w): &(usize, Walk)| -> f64 {
                let mut l = w.theta * drawn[*j] - w.service.log_mgf();
                if let Some(a) = gap {
                    l -= w.theta * a + w.interarrival.log_mgf();
                }
                l
            };
            for (l, st) in logs.iter_mut().zip(&self.states) {
                *l = ratio(st);
            }
            let top = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if customers == 0 {
                for k in 0..n {
                    alpha[k] = self.weights[k] * (logs[k] - top).exp();
                }
            } else {
                // Into k: stay at k, or switch from a later state.
                let mut later = 0.0;
                for k in (0..n).rev() {
                    let below = if k == 0 { 0.0 } else { self.cumulative[k - 1] };
                    let stay = alpha[k] * (1.0 - self.switch * below);
                    let moved = self.switch * self.weights[k] * later;
                    later += alpha[k];
                    alpha[k] = (stay + moved) * (logs[k] - top).exp();
                }
            }
            let sum: f64 = alpha.iter().sum();
            alpha.iter_mut().for_each(|a| *a /= sum);
            log_scale += top + sum.ln();
            customers += 1;
            if column[0] - gaps > t {
                break;
            }
            if state > 0 && unit(rng) < self.switch * self.cumulative[state - 1] {
                state = self.draw_state(state, rng);
            }
        }
        ((-log_scale).exp(), customers * (stations as u64 + 1))
    }
}
