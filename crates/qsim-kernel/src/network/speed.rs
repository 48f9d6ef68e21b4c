//! Contention-dependent speed: the rate curve and its range rules.

use super::{Check, Field, fmt_num};

/// Contention-dependent speed: the completion rate of the whole station as a
/// function of the number of jobs present, n (queued and in service).
///
/// With a speed, a station's service distribution only gives the shape of the
/// work: a job's work is its sample divided by the distribution's mean, so a
/// job needs 1 unit on average, and the station completes `rate(n)` units per
/// second in total while n jobs are present (shared among the jobs in service
/// as the discipline says). When n changes, the remaining work of every job in
/// service is re-timed at the new speed.
#[derive(Clone, Debug, PartialEq)]
pub enum Speed {
    /// Points `(n, rate)`, n strictly increasing, rates > 0; linear
    /// interpolation between points, constant outside them.
    Table(Vec<(f64, f64)>),
    /// Universal Scalability Law: rate(n) = lambda·n / (1 + sigma·(n−1) + kappa·n·(n−1)).
    Usl {
        /// Contention coefficient, >= 0.
        sigma: f64,
        /// Coherency coefficient, >= 0.
        kappa: f64,
        /// Rate with one job present, > 0.
        lambda: f64,
    },
}

/// The highest rate a speed curve may give, units of work per second: a
/// unit then takes 1e-12 s, below what the clock resolves at any time a
/// run reaches, and every product the solvers form with it (rate × jobs,
/// the rates' products in MVA) stays finite, so `check`, `run` and
/// `solve` refuse the same values at the same key.
pub const MAX_RATE_PER_S: f64 = 1e12;

impl Speed {
    /// The completion rate with `n` jobs present (n >= 1).
    pub fn rate(&self, n: f64) -> f64 {
        match self {
            Speed::Table(points) => {
                let first = points[0];
                if n <= first.0 {
                    return first.1;
                }
                for w in points.windows(2) {
                    let (n0, r0) = w[0];
                    let (n1, r1) = w[1];
                    if n <= n1 {
                        return r0 + (r1 - r0) * (n - n0) / (n1 - n0);
                    }
                }
                points[points.len() - 1].1
            }
            Speed::Usl {
                sigma,
                kappa,
                lambda,
            } => lambda * n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0)),
        }
    }

    pub(super) fn check(&self, c: &mut Check<'_>) {
        const SPEED: Field = Field::Key("speed");
        match self {
            Speed::Table(points) => {
                let table = Field::Key("table");
                if points.is_empty() {
                    c.error(
                        &[SPEED, table],
                        "expected at least one { n, rate } point, found none",
                    );
                }
                for (i, &(n, r)) in points.iter().enumerate() {
                    let at = |k| [SPEED, table, Field::Index(i), Field::Key(k)];
                    if !(n.is_finite() && n >= 1.0) {
                        c.error(
                            &at("n"),
                            format!("expected a number of jobs >= 1, found {}", fmt_num(n)),
                        );
                    } else if i > 0 && n <= points[i - 1].0 {
                        c.error(
                            &at("n"),
                            format!(
                                "expected n to increase from point to point, found {} after {}",
                                fmt_num(n),
                                fmt_num(points[i - 1].0)
                            ),
                        );
                    }
                    if !(r.is_finite() && r > 0.0) {
                        c.error(
                            &at("rate"),
                            format!("expected a positive rate, found {}", fmt_num(r)),
                        );
                    } else if r > MAX_RATE_PER_S {
                        c.error(
                            &at("rate"),
                            format!(
                                "expected a rate of at most 1e12 per second, found {}",
                                fmt_num(r)
                            ),
                        );
                    }
                }
            }
            Speed::Usl {
                sigma,
                kappa,
                lambda,
            } => {
                let usl = Field::Key("usl");
                for (k, v) in [("sigma", *sigma), ("kappa", *kappa)] {
                    if !(v.is_finite() && v >= 0.0) {
                        c.error(
                            &[SPEED, usl, Field::Key(k)],
                            format!("expected a coefficient >= 0, found {}", fmt_num(v)),
                        );
                    }
                }
                if !(lambda.is_finite() && *lambda > 0.0) {
                    c.error(
                        &[SPEED, usl, Field::Key("lambda")],
                        format!("expected a positive rate, found {}", fmt_num(*lambda)),
                    );
                } else if *lambda > MAX_RATE_PER_S {
                    c.error(
                        &[SPEED, usl, Field::Key("lambda")],
                        format!(
                            "expected a rate of at most 1e12 per second (the rate of one job; the rates of more jobs are products of it), found {}",
                            fmt_num(*lambda)
                        ),
                    );
                }
            }
        }
    }
}
