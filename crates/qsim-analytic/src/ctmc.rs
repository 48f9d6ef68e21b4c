//! A small dense continuous-time Markov chain solver, and exact solutions of
//! small closed networks by enumerating their states.
//!
//! Meant for cross-checking the MVA solvers on small populations: the state
//! space grows combinatorially, and the solver is O(states³).

use std::collections::HashMap;

use serde::Serialize;

use crate::error::{Error, Result, invalid, non_negative};
use crate::mva::{CenterKind, ClassedStation, ClosedClass, Station};

/// Largest state space the enumeration helpers will build.
pub const MAX_STATES: usize = 3000;

/// Solves `A·x = b` by Gaussian elimination with partial pivoting; `None`
/// when `A` is (numerically) singular.
pub(crate) fn solve_dense(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    let scale = a
        .iter()
        .flat_map(|r| r.iter())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    if scale == 0.0 {
        return None;
    }
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() <= 1e-13 * scale {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (top, rest) = a.split_at_mut(col + 1);
        let prow = &top[col];
        for (off, row) in rest.iter_mut().enumerate() {
            let f = row[col] / prow[col];
            if f != 0.0 {
                for k in col..n {
                    row[k] -= f * prow[k];
                }
                b[col + 1 + off] -= f * b[col];
            }
        }
    }
    let mut x = vec![0.0; n];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// Stationary distribution π of an irreducible CTMC (`π·Q = 0`, `Σπ = 1`).
///
/// `rates[i][j]` (i ≠ j) is the transition rate from state i to j; the
/// diagonal is ignored and taken as minus the row sum.
pub fn steady_state(rates: &[Vec<f64>]) -> Result<Vec<f64>> {
    let n = rates.len();
    if n == 0 {
        return Err(invalid("rates", "an empty matrix", "at least one state"));
    }
    for (i, row) in rates.iter().enumerate() {
        if row.len() != n {
            return Err(Error::SizeMismatch {
                what: format!("rates[{i}] (a square matrix)"),
                found: row.len(),
                expected: n,
            });
        }
        for (j, r) in row.iter().enumerate() {
            if i != j {
                non_negative(&format!("rates[{i}][{j}]"), *r)?;
            }
        }
    }
    // Equations: for each state j, Σ_i π_i q_ij = 0; the last is replaced by Σπ = 1.
    let mut a = vec![vec![0.0; n]; n];
    for (i, row) in rates.iter().enumerate() {
        let out: f64 = row
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, r)| r)
            .sum();
        for (j, r) in row.iter().enumerate() {
            if i != j {
                a[j][i] += r;
            }
        }
        a[i][i] -= out;
    }
    a[n - 1] = vec![1.0; n];
    let mut b = vec![0.0; n];
    b[n - 1] = 1.0;
    solve_dense(a, b).ok_or_else(|| Error::Singular {
        what: "ctmc steady state".into(),
        hint: "the chain is not irreducible (some states cannot reach each other)".into(),
    })
}

/// Exact figures of a small closed network from its Markov chain.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnumeratedSolution {
    /// System throughput (cycles per second).
    pub throughput_per_s: f64,
    /// Mean number of jobs at each station, in input order.
    pub queue_lengths: Vec<f64>,
    /// Number of states of the chain.
    pub states: usize,
}

/// All ways to put `total` jobs into `parts` places.
fn compositions(total: u32, parts: usize) -> Vec<Vec<u32>> {
    fn rec(left: u32, parts: usize, cur: &mut Vec<u32>, out: &mut Vec<Vec<u32>>) {
        if parts == 1 {
            cur.push(left);
            out.push(cur.clone());
            cur.pop();
            return;
        }
        for v in 0..=left {
            cur.push(v);
            rec(left - v, parts - 1, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    if parts > 0 {
        rec(total, parts, &mut Vec::new(), &mut out);
    }
    out
}

fn binomial(n: u64, k: u64) -> u64 {
    let k = k.min(n - k);
    let mut r: u64 = 1;
    for i in 0..k {
        r = r.saturating_mul(n - i) / (i + 1);
    }
    r
}

/// Solves a single-class closed network exactly by building its CTMC.
///
/// Jobs leaving any station (or the think stage) go to station q with
/// probability proportional to its visits (think stage: 1), which gives the
/// requested visit ratios; product-form results depend only on those. Each
/// station serves at [`Station::rate_per_s`] with exponential times.
pub fn closed_network_by_enumeration(
    stations: &[Station],
    think_time_s: f64,
    population: u32,
) -> Result<EnumeratedSolution> {
    non_negative("think_time_s", think_time_s)?;
    if stations.is_empty() {
        return Err(invalid("stations", "an empty list", "at least one station"));
    }
    // Validation is shared with MVA.
    crate::mva::exact(stations, think_time_s, population.max(1))?;
    let has_think = think_time_s > 0.0;
    let places = stations.len() + usize::from(has_think);
    let count = binomial(u64::from(population) + places as u64 - 1, places as u64 - 1);
    if count > MAX_STATES as u64 {
        return Err(Error::TooLarge {
            what: "state space of the closed network".into(),
            found: count as usize,
            limit: MAX_STATES,
        });
    }
    let visits: Vec<f64> = stations
        .iter()
        .map(|s| s.visits)
        .chain(has_think.then_some(1.0))
        .collect();
    let total_visits: f64 = visits.iter().sum();
    let rate = |place: usize, jobs: u32| -> f64 {
        if jobs == 0 {
            0.0
        } else if place < stations.len() {
            stations[place].rate_per_s(jobs)
        } else {
            f64::from(jobs) / think_time_s
        }
    };
    let states = compositions(population, places);
    let index: HashMap<Vec<u32>, usize> = states
        .iter()
        .enumerate()
        .map(|(i, s)| (s.clone(), i))
        .collect();
    let mut q = vec![vec![0.0; states.len()]; states.len()];
    for (i, s) in states.iter().enumerate() {
        for from in 0..places {
            let mu = rate(from, s[from]);
            if mu == 0.0 {
                continue;
            }
            for to in 0..places {
                if to == from {
                    continue;
                }
                let mut t = s.clone();
                t[from] -= 1;
                t[to] += 1;
                q[i][index[&t]] += mu * visits[to] / total_visits;
            }
        }
    }
    let pi = steady_state(&q)?;
    let reference = places - 1;
    let throughput: f64 = states
        .iter()
        .zip(&pi)
        .map(|(s, p)| p * rate(reference, s[reference]))
        .sum::<f64>()
        / visits[reference];
    let queue_lengths = (0..stations.len())
        .map(|k| {
            states
                .iter()
                .zip(&pi)
                .map(|(s, p)| p * f64::from(s[k]))
                .sum()
        })
        .collect();
    Ok(EnumeratedSolution {
        throughput_per_s: throughput,
        queue_lengths,
        states: states.len(),
    })
}

/// Exact figures of a small multi-class closed network.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnumeratedMultiClass {
    /// Throughput of each class (cycles per second).
    pub throughputs_per_s: Vec<f64>,
    /// Mean number of jobs, `[station][class]`.
    pub queue_lengths: Vec<Vec<f64>>,
    /// Number of states of the chain.
    pub states: usize,
}

/// Solves a multi-class closed network of delays and processor-sharing
/// queues exactly by building its CTMC (each class visits each station with
/// a positive demand once per cycle, in random order; its think time is a
/// private delay).
pub fn multiclass_by_enumeration(
    stations: &[ClassedStation],
    classes: &[ClosedClass],
) -> Result<EnumeratedMultiClass> {
    // Shares validation with the MVA solver.
    crate::mva::exact_multiclass(stations, classes)?;
    let k_n = stations.len();
    let r_n = classes.len();
    // Places of class r: stations with demand > 0, then its think stage.
    let places: Vec<Vec<usize>> = (0..r_n)
        .map(|r| {
            let mut p: Vec<usize> = (0..k_n)
                .filter(|&k| stations[k].demands_s[r] > 0.0)
                .collect();
            if classes[r].think_time_s > 0.0 {
                p.push(k_n + r);
            }
            p
        })
        .collect();
    let per_class: Vec<Vec<Vec<u32>>> = (0..r_n)
        .map(|r| compositions(classes[r].population, places[r].len()))
        .collect();
    let total: usize = per_class.iter().map(Vec::len).product();
    if total > MAX_STATES {
        return Err(Error::TooLarge {
            what: "state space of the multi-class network".into(),
            found: total,
            limit: MAX_STATES,
        });
    }
    // A state: counts[place][class] over k_n stations + r_n think stages.
    let width = k_n + r_n;
    let mut states: Vec<Vec<u32>> = Vec::with_capacity(total);
    for mut idx in 0..total {
        let mut s = vec![0u32; width * r_n];
        for r in 0..r_n {
            let c = &per_class[r][idx % per_class[r].len()];
            idx /= per_class[r].len();
            for (i, &place) in places[r].iter().enumerate() {
                s[place * r_n + r] = c[i];
            }
        }
        states.push(s);
    }
    let index: HashMap<Vec<u32>, usize> = states
        .iter()
        .enumerate()
        .map(|(i, s)| (s.clone(), i))
        .collect();
    let completion = |s: &[u32], place: usize, r: usize| -> f64 {
        let n_r = f64::from(s[place * r_n + r]);
        if n_r == 0.0 {
            return 0.0;
        }
        if place >= k_n {
            return n_r / classes[r].think_time_s;
        }
        let d = stations[place].demands_s[r];
        match stations[place].kind {
            CenterKind::Delay => n_r / d,
            CenterKind::Queue => {
                let n: f64 = (0..r_n).map(|c| f64::from(s[place * r_n + c])).sum();
                n_r / n / d
            }
        }
    };
    let mut q = vec![vec![0.0; states.len()]; states.len()];
    for (i, s) in states.iter().enumerate() {
        for r in 0..r_n {
            let share = 1.0 / places[r].len() as f64;
            for &from in &places[r] {
                let mu = completion(s, from, r);
                if mu == 0.0 {
                    continue;
                }
                for &to in &places[r] {
                    if to == from {
                        continue;
                    }
                    let mut t = s.clone();
                    t[from * r_n + r] -= 1;
                    t[to * r_n + r] += 1;
                    q[i][index[&t]] += mu * share;
                }
            }
        }
    }
    let pi = steady_state(&q)?;
    let throughputs = (0..r_n)
        .map(|r| {
            let Some(&place) = places[r].first() else {
                return 0.0;
            };
            states
                .iter()
                .zip(&pi)
                .map(|(s, p)| p * completion(s, place, r))
                .sum()
        })
        .collect();
    let queue_lengths = (0..k_n)
        .map(|k| {
            (0..r_n)
                .map(|r| {
                    states
                        .iter()
                        .zip(&pi)
                        .map(|(s, p)| p * f64::from(s[k * r_n + r]))
                        .sum()
                })
                .collect()
        })
        .collect();
    Ok(EnumeratedMultiClass {
        throughputs_per_s: throughputs,
        queue_lengths,
        states: states.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_state_chain() {
        // 0 → 1 at rate 2, 1 → 0 at rate 3: π = (3/5, 2/5).
        let pi = steady_state(&[vec![0.0, 2.0], vec![3.0, 0.0]]).unwrap();
        assert!((pi[0] - 0.6).abs() < 1e-12 && (pi[1] - 0.4).abs() < 1e-12);
    }

    #[test]
    fn reducible_chain_is_an_error() {
        let err = steady_state(&[vec![0.0, 0.0], vec![0.0, 0.0]]).unwrap_err();
        assert!(err.to_string().contains("not irreducible"), "{err}");
    }
}
