//! Bounds on the throughput and response time of a single-class closed
//! network, from the service demands alone.
//!
//! Demands are those of the queueing stations; add the demands of delay
//! stations to the think time.

use serde::Serialize;

use crate::error::{Result, invalid, non_negative};

/// Lower and upper bounds at one population.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bounds {
    /// Population the bounds hold for.
    pub population: u32,
    /// Lower bound on system throughput (per second).
    pub throughput_lower_per_s: f64,
    /// Upper bound on system throughput (per second).
    pub throughput_upper_per_s: f64,
    /// Lower bound on response time, think time excluded (seconds).
    pub response_lower_s: f64,
    /// Upper bound on response time, think time excluded (seconds).
    pub response_upper_s: f64,
}

struct Totals {
    total: f64,
    max: f64,
    avg: f64,
}

fn totals(demands_s: &[f64], think_time_s: f64, population: u32) -> Result<Totals> {
    if demands_s.is_empty() {
        return Err(invalid(
            "demands_s",
            "an empty list",
            "at least one queueing station",
        ));
    }
    for (i, d) in demands_s.iter().enumerate() {
        non_negative(&format!("demands_s[{i}]"), *d)?;
    }
    non_negative("think_time_s", think_time_s)?;
    if population == 0 {
        return Err(invalid("population", 0, "at least 1"));
    }
    let total: f64 = demands_s.iter().sum();
    let max = demands_s.iter().copied().fold(0.0, f64::max);
    if max <= 0.0 {
        return Err(invalid("demands_s", "all 0", "at least one demand above 0"));
    }
    Ok(Totals {
        total,
        max,
        avg: total / demands_s.len() as f64,
    })
}

/// Asymptotic bounds (ABA):
/// `N/(N·D + Z) ≤ X(N) ≤ min(N/(D + Z), 1/Dmax)` and
/// `max(D, N·Dmax − Z) ≤ R(N) ≤ N·D`.
pub fn asymptotic(demands_s: &[f64], think_time_s: f64, population: u32) -> Result<Bounds> {
    let t = totals(demands_s, think_time_s, population)?;
    let n = f64::from(population);
    let z = think_time_s;
    Ok(Bounds {
        population,
        throughput_lower_per_s: n / (n * t.total + z),
        throughput_upper_per_s: (n / (t.total + z)).min(1.0 / t.max),
        response_lower_s: t.total.max(n * t.max - z),
        response_upper_s: n * t.total,
    })
}

/// Balanced job bounds (Zahorjan et al.), with think time:
///
/// `N / (D + Z + (N−1)·Dmax/(1 + Z/(N·D))) ≤ X(N) ≤
///  min(1/Dmax, N / (D + Z + (N−1)·Davg/(1 + Z/D)))`,
///
/// and the response-time bounds that follow from `R = N/X − Z`, with the
/// asymptotic `N·Dmax − Z` also applied. `Davg = D / stations`. Tighter than
/// [`asymptotic`] except at very small and very large populations.
pub fn balanced_job(demands_s: &[f64], think_time_s: f64, population: u32) -> Result<Bounds> {
    let t = totals(demands_s, think_time_s, population)?;
    let n = f64::from(population);
    let z = think_time_s;
    let d = t.total;
    let x_lower = n / (d + z + (n - 1.0) * t.max / (1.0 + z / (n * d)));
    let x_upper = (1.0 / t.max).min(n / (d + z + (n - 1.0) * t.avg / (1.0 + z / d)));
    Ok(Bounds {
        population,
        throughput_lower_per_s: x_lower,
        throughput_upper_per_s: x_upper,
        response_lower_s: (n / x_upper - z).max(d),
        response_upper_s: n / x_lower - z,
    })
}
