//! The traffic equations: mean visits per interaction of one class to each
//! station, the one visit-ratio solver of qsim.

use qsim_kernel::{NetworkSpec, Routing, Target};

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
/// spread over its targets by weight, and as many to each step of the
/// target's fixed sub-job route). `None` when the class does not exist
/// or its routing never lets a job leave.
///
/// With class switching, the visits of `class` itself per interaction of
/// its chain ([`chain_visits`]).
pub fn visit_ratios(spec: &NetworkSpec, class: usize) -> Option<Visits> {
    let ns = spec.stations.len();
    if spec.has_switching() {
        let start = *spec.chain_starts().get(class)?;
        let v = chain_visits(spec, start)?.swap_remove(class);
        return Some(Visits {
            parent: v.clone(),
            total: v,
        });
    }
    let parent = match &spec.classes.get(class)?.routing {
        Routing::Sequence(seq) => {
            let mut u = vec![0.0; ns];
            for &s in seq {
                u[s] += 1.0;
            }
            u
        }
        Routing::Probabilistic { entry, from } => {
            let u = if ns <= DENSE_MAX {
                dense(spec, entry, from)?
            } else {
                sparse(spec, entry, from)?
            };
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
        if let Some(f) = spec.stations[s].kind.as_fork() {
            let weight: f64 = f.targets.iter().map(|t| t.1).sum();
            for (i, &(t, w)) in f.targets.iter().enumerate() {
                let share = us * f64::from(f.fan_out) * w / weight;
                total[t] += share;
                // A fixed sub-job route: each step is one visit per sub-job.
                for &r in f.routes.get(i).into_iter().flatten() {
                    total[r] += share;
                }
            }
        }
    }
    Some(Visits { parent, total })
}

/// Most (class, station) pairs solved by dense elimination; more are
/// solved by Gauss–Seidel.
const PAIRS_MAX: usize = 1500;

/// Mean visits per interaction of the chain that starts in class `start`,
/// for each class (outer index, every class of the network; zero for the
/// classes of other chains) at each station. `None` when `start` is not
/// the start of a chain, has a fixed route, or its jobs never leave.
pub fn chain_visits(spec: &NetworkSpec, start: usize) -> Option<Vec<Vec<f64>>> {
    let starts = spec.chain_starts();
    if starts.get(start) != Some(&start) {
        return None;
    }
    let (ns, nc) = (spec.stations.len(), spec.classes.len());
    let members: Vec<usize> = (0..nc).filter(|&k| starts[k] == start).collect();
    let n = members.len() * ns;
    let mut at = vec![usize::MAX; nc];
    for (i, &k) in members.iter().enumerate() {
        at[k] = i;
    }
    let ix = |k: usize, s: usize| at[k] * ns + s;
    // u = e + Pᵀu over the pairs: a[t][t] = 1, a[t][s] = -p(s -> t).
    let target = |k: usize, t: Target| match t {
        Target::Station(s) => Some(ix(k, s)),
        Target::Switch { station, class } if at[class] != usize::MAX => Some(ix(class, station)),
        _ => None,
    };
    // u = e + Pᵀu over the pairs, as external visits and incoming arcs.
    let mut e = vec![0.0; n];
    let mut into: Vec<Vec<(usize, f64)>> = vec![Vec::new(); n];
    for &k in &members {
        let Routing::Probabilistic { entry, from } = &spec.classes[k].routing else {
            return None;
        };
        for &(t, p) in entry {
            if let Some(t) = target(k, t) {
                e[t] += p;
            }
        }
        for (s, row) in from.iter().enumerate() {
            for &(t, p) in row {
                if let Some(t) = target(k, t) {
                    into[t].push((ix(k, s), p));
                }
            }
        }
    }
    let u = if n <= PAIRS_MAX {
        let mut a = vec![vec![0.0; n + 1]; n];
        for (t, row) in a.iter_mut().enumerate() {
            row[t] = 1.0;
            row[n] = e[t];
            for &(src, p) in &into[t] {
                row[src] -= p;
            }
        }
        gauss(a)?
    } else {
        gauss_seidel(&e, &into)?
    };
    if u.iter().any(|x| !x.is_finite() || *x < -1e-9 || *x > 1e12) {
        return None;
    }
    let mut out = vec![vec![0.0; ns]; nc];
    for &k in &members {
        for s in 0..ns {
            out[k][s] = u[ix(k, s)].max(0.0);
        }
    }
    Some(out)
}

/// Above this many stations the traffic equations are solved by sparse
/// iteration: a dense matrix would take n² memory (105k stations: 88 GB).
const DENSE_MAX: usize = 1500;

/// The sparse solver's work limit, in routing-row visits (about a second).
const SPARSE_WORK: u64 = 400_000_000;

type Row = [(Target, f64)];

/// Exact solution by Gaussian elimination (small networks).
fn dense(spec: &NetworkSpec, entry: &Row, from: &[Vec<(Target, f64)>]) -> Option<Vec<f64>> {
    let ns = spec.stations.len();
    let mut a = vec![vec![0.0; ns + 1]; ns];
    for (i, row) in a.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    for &(t, p) in entry {
        if let Target::Station(t) = t {
            a[t][ns] += p;
        }
    }
    for (s, (st, row)) in spec.stations.iter().zip(from).enumerate() {
        if let Some(f) = st.kind.as_fork() {
            a[f.join][s] -= 1.0;
            continue;
        }
        for &(t, p) in row {
            if let Target::Station(t) = t {
                a[t][s] -= p;
            }
        }
    }
    gauss(a)
}

/// Gauss–Seidel on the routing rows, in memory linear in the routes: the
/// visits are the expected numbers of passes, so the iteration converges
/// for every routing that lets jobs leave; it gives up (`None`) when the
/// work limit is reached first (a loop whose jobs almost never leave).
fn sparse(spec: &NetworkSpec, entry: &Row, from: &[Vec<(Target, f64)>]) -> Option<Vec<f64>> {
    let ns = spec.stations.len();
    // Incoming arcs of each station, as (source, probability).
    let mut into: Vec<Vec<(usize, f64)>> = vec![Vec::new(); ns];
    for (s, (st, row)) in spec.stations.iter().zip(from).enumerate() {
        if let Some(f) = st.kind.as_fork() {
            into[f.join].push((s, 1.0));
            continue;
        }
        for &(t, p) in row {
            if let Target::Station(t) = t {
                into[t].push((s, p));
            }
        }
    }
    let mut e = vec![0.0; ns];
    for &(t, p) in entry {
        if let Target::Station(t) = t {
            e[t] += p;
        }
    }
    gauss_seidel(&e, &into)
}

/// Gauss–Seidel on `u = e + Σ p·u[src]` over incoming arcs, in memory
/// linear in the arcs; `None` when the work limit is reached first.
fn gauss_seidel(e: &[f64], into: &[Vec<(usize, f64)>]) -> Option<Vec<f64>> {
    let ns = e.len();
    let arcs: u64 = into.iter().map(|v| v.len() as u64 + 1).sum();
    let mut u = e.to_vec();
    let mut work = 0u64;
    loop {
        let mut change = 0.0f64;
        let mut size = 0.0f64;
        for t in 0..ns {
            let x = e[t] + into[t].iter().map(|&(s, p)| p * u[s]).sum::<f64>();
            change = change.max((x - u[t]).abs());
            size = size.max(x.abs());
            u[t] = x;
        }
        work += arcs;
        if change <= 1e-13 * size.max(1.0) {
            return Some(u);
        }
        if work > SPARSE_WORK || !size.is_finite() || size > 1e12 {
            return None;
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use qsim_kernel::StationKind;
    use qsim_kernel::{ClassSpec, Discipline, Dist, StationSpec, Workload};

    /// An open chain of `n` queues where each station sends a job back to
    /// itself with probability `back` and on otherwise: every station is
    /// visited 1/(1 − back) times.
    fn chain(n: usize, back: f64) -> NetworkSpec {
        let stations = (0..n)
            .map(|i| StationSpec {
                name: format!("s{i}"),
                kind: StationKind::Queue {
                    servers: 1,
                    discipline: Discipline::Fcfs,
                },
                service: vec![Some(Dist::exponential(1000.0).unwrap())],
                speed: None,
            })
            .collect();
        let from = (0..n)
            .map(|i| {
                let next = if i + 1 < n {
                    Target::Station(i + 1)
                } else {
                    Target::Exit
                };
                vec![(Target::Station(i), back), (next, 1.0 - back)]
            })
            .collect();
        NetworkSpec {
            stations,
            classes: vec![ClassSpec {
                name: "c".into(),
                workload: Workload::Open {
                    interarrival: Dist::exponential(1.0).unwrap(),
                },
                routing: Routing::Probabilistic {
                    entry: vec![(Target::Station(0), 1.0)],
                    from,
                },
                priority: 0,
            }],
            ..NetworkSpec::default()
        }
    }

    #[test]
    fn dense_and_sparse_solvers_give_the_exact_visits() {
        for n in [10, DENSE_MAX + 500] {
            let v = visit_ratios(&chain(n, 0.2), 0).expect("the chain lets jobs leave");
            for (i, &x) in v.parent.iter().enumerate() {
                assert!((x - 1.25).abs() < 1e-9, "n = {n}, station {i}: {x}");
            }
        }
    }

    #[test]
    fn chain_visits_dense_and_iterative_agree_with_the_hand_solution() {
        // The chain twice: as class c, then (switching at the end) as
        // class d; each station is visited 1.25 times in each class.
        for n in [10, PAIRS_MAX / 2 + 50] {
            let mut spec = chain(n, 0.2);
            for st in &mut spec.stations {
                st.service.push(st.service[0].clone());
            }
            let mut d = spec.classes[0].clone();
            d.name = "d".into();
            if let Routing::Probabilistic { entry, .. } = &mut d.routing {
                entry.clear();
            }
            if let Routing::Probabilistic { from, .. } = &mut spec.classes[0].routing {
                let last = from.len() - 1;
                from[last][1].0 = Target::Switch {
                    station: 0,
                    class: 1,
                };
            }
            spec.classes.push(d);
            let v = chain_visits(&spec, 0).expect("the chain lets jobs leave");
            for (k, row) in v.iter().enumerate() {
                for (i, &x) in row.iter().enumerate() {
                    assert!(
                        (x - 1.25).abs() < 1e-9,
                        "n = {n}, class {k}, station {i}: {x}"
                    );
                }
            }
        }
    }

    #[test]
    fn sparse_solver_refuses_a_routing_that_never_lets_jobs_leave() {
        let mut spec = chain(DENSE_MAX + 10, 0.2);
        if let Routing::Probabilistic { from, .. } = &mut spec.classes[0].routing {
            let last = from.len() - 1;
            from[last] = vec![(Target::Station(0), 1.0)];
        }
        assert_eq!(visit_ratios(&spec, 0), None);
    }
}
