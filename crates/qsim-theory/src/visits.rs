//! The traffic equations: mean visits per interaction of one class to each
//! station, the one visit-ratio solver of qsim.

use qsim_kernel::{NetworkSpec, Routing, StationKind, Target};

/// Mean visits per interaction of a class.
#[derive(Clone, Debug, PartialEq)]
pub struct Visits {
    /// Visits of the job itself (a fork hands it to its join; its sub-jobs
    /// are not counted here).
    pub parent: Vec<f64>,
    /// Visits including fork sub-jobs: what loads each station.
    pub total: Vec<f64>,
}

/// Solves the traffic equations `u = e + Pᵀu` of `class` (a fork passes the
/// job to its join, and each visit to a fork adds `fan_out` sub-job visits
/// spread over its targets by weight). `None` when the class does not exist
/// or its routing never lets a job leave.
pub fn visit_ratios(spec: &NetworkSpec, class: usize) -> Option<Visits> {
    let ns = spec.stations.len();
    let parent = match &spec.classes.get(class)?.routing {
        Routing::Sequence(seq) => {
            let mut u = vec![0.0; ns];
            for &s in seq {
                u[s] += 1.0;
            }
            u
        }
        Routing::Probabilistic { entry, from } => {
            let mut a = vec![vec![0.0; ns + 1]; ns];
            for (i, row) in a.iter_mut().enumerate() {
                row[i] = 1.0;
            }
            for &(t, p) in entry {
                if let Target::Station(t) = t {
                    a[t][ns] += p;
                }
            }
            for s in 0..ns {
                if let StationKind::Fork(f) = &spec.stations[s].kind {
                    a[f.join][s] -= 1.0;
                    continue;
                }
                for &(t, p) in &from[s] {
                    if let Target::Station(t) = t {
                        a[t][s] -= p;
                    }
                }
            }
            let u = gauss(a)?;
            // Negative or astronomically large visits mean a (numerically)
            // trapping loop.
            if u.iter().any(|x| !x.is_finite() || *x < -1e-9 || *x > 1e12) {
                return None;
            }
            u.into_iter().map(|x| x.max(0.0)).collect()
        }
    };
    let mut total = parent.clone();
    for (s, &us) in parent.iter().enumerate() {
        if let StationKind::Fork(f) = &spec.stations[s].kind {
            let weight: f64 = f.targets.iter().map(|t| t.1).sum();
            for &(t, w) in &f.targets {
                total[t] += us * f64::from(f.fan_out) * w / weight;
            }
        }
    }
    Some(Visits { parent, total })
}

/// Gaussian elimination with partial pivoting on an augmented matrix.
fn gauss(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let n = a.len();
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, piv);
        let pivot_row = a[col].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / pivot_row[col];
                if f != 0.0 {
                    for (x, p) in row.iter_mut().zip(&pivot_row).skip(col) {
                        *x -= f * p;
                    }
                }
            }
        }
    }
    Some((0..n).map(|i| a[i][n] / a[i][i]).collect())
}
