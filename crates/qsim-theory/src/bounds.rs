//! Bounds on the throughput and response time of a single closed class that
//! hold for every station kind and service distribution.
//!
//! With Z the mean think time, N the population, v_s the visits to station
//! s, r_s the least mean time of a visit and c_s(N) the station's peak rate
//! with at most N jobs there ([`crate::kind`]):
//!
//! * X <= N / (Z + Σ v_s·r_s) (a cycle takes at least that long; fork
//!   sub-jobs run in parallel, so only the job's own visits count), and
//!   X <= c_s(N)/v_s for every station (utilization law);
//! * R >= N / X_upper − Z;
//! * X >= N / (Z + Σ v_s·R_s^max) where R_s^max is the most a visit can take
//!   on average with N jobs present: N times the slowest time per completion
//!   of a station that works whenever it holds a job. Not available when a
//!   station can hold jobs while idle (a join, a latch with a contention
//!   mechanism) or a region limits admission; the reason is given instead.

use crate::kind::law;
use crate::visits::visit_ratios;
use crate::{Error, closed::closed_class};
use qsim_kernel::{NetworkSpec, WhenFull};
use serde::Serialize;

/// Bounds at one population.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClosedBounds {
    /// Population they hold for.
    pub population: u32,
    /// Upper bound on system throughput, per second.
    pub throughput_upper_per_s: f64,
    /// What sets the upper bound: a station's capacity or the shortest cycle.
    pub throughput_upper_limited_by: String,
    /// Lower bound on response time (think time excluded), seconds.
    pub response_lower_s: f64,
    /// Lower bound on system throughput, per second, when one holds.
    pub throughput_lower_per_s: Option<f64>,
    /// Upper bound on response time, seconds, when one holds.
    pub response_upper_s: Option<f64>,
    /// Why there is no lower throughput bound, when there is none.
    pub lower_unavailable: Option<String>,
}

/// Why no bound holds for a checked `network` beyond what its spec says:
/// a routing row whose policy reads the queues (`shortest_queue`,
/// `power_of_d`) splits its jobs by the state of its stations, so the
/// row's weights are not its stations' visit ratios and no station's
/// utilization law can be written (a shortest-queue row over a fast and a
/// slow server sends most jobs to the fast one). `None` when the bounds of
/// [`closed_bounds`] hold.
pub fn policy_blocks_bounds(network: &qsim_kernel::Network) -> Option<String> {
    let spec = network.spec();
    network
        .policies()
        .iter()
        .find(|p| p.policy.reads_queues())
        .map(|p| {
            let (class, row) = crate::product_form::policy_place(spec, p);
            format!(
                "class {class}'s row {row} picks by its stations' queues (routing policy {}), so its weights are not its visit ratios",
                p.policy.name()
            )
        })
}

/// [`closed_bounds`] of a checked network: `Ok(None)` too where a routing
/// policy makes them not hold ([`policy_blocks_bounds`]).
pub fn network_bounds(
    network: &qsim_kernel::Network,
    class: usize,
    population: u32,
) -> Result<Option<ClosedBounds>, Error> {
    if policy_blocks_bounds(network).is_some() {
        return Ok(None);
    }
    closed_bounds(network.spec(), class, population)
}

/// Bounds for closed class `class` at `population` jobs. `None` when the
/// class is open, the model has other classes (their jobs share stations),
/// or a station loses jobs when full (a lost job's interaction ends without
/// completing, which the bounds' flow argument does not allow for). With
/// stations that block when full, the upper throughput and lower response
/// bounds hold (blocking only adds time to a cycle and takes time from a
/// server), but no lower throughput bound does: a blocked job waits for
/// room elsewhere, which no station's slowest time covers, and a cycle of
/// full stations can deadlock.
pub fn closed_bounds(
    spec: &NetworkSpec,
    class: usize,
    population: u32,
) -> Result<Option<ClosedBounds>, Error> {
    if let Some((merged, at, _)) = crate::chains::merged_class(spec, class)? {
        // Class switching: bounds from the chain's demands (they hold
        // whatever the service times).
        return match at {
            Some(at) => closed_bounds(&merged, at, population),
            None => Ok(None),
        };
    }
    let drops = spec
        .capacity
        .iter()
        .flatten()
        .any(|c| c.when_full == WhenFull::Drop);
    if spec.classes.len() != 1 || population == 0 || drops {
        return Ok(None);
    }
    let Some((_, think)) = closed_class(spec, class) else {
        return Ok(None);
    };
    let visits = visit_ratios(spec, class).ok_or_else(|| Error::Trapped {
        class: spec.classes[class].name.clone(),
    })?;
    let forks = spec.stations.iter().any(|s| s.kind.as_fork().is_some());
    // Sub-jobs multiply the jobs that can be at one station.
    let present = if forks { None } else { Some(population) };
    let n = f64::from(population);
    let mut shortest = think;
    // The least time at the stations alone, kept apart from the think time
    // for the same reason as `longest`.
    let mut least_residence = 0.0;
    // The most a cycle spends at the stations (think time apart, so the
    // response bound is this sum itself, not a difference that rounding
    // could make negative).
    let mut longest = Ok(0.0);
    let mut x_upper = f64::INFINITY;
    let mut limited_by = String::new();
    for (s, st) in spec.stations.iter().enumerate() {
        let (vp, vt) = (visits.parent[s], visits.total[s]);
        if vt <= 0.0 {
            continue;
        }
        let Some(l) = law(st, class, present) else {
            continue;
        };
        shortest += vp * l.min_residence_s;
        least_residence += vp * l.min_residence_s;
        if let Some(peak) = l.peak_rate_per_s {
            let x = peak / vt;
            if x < x_upper {
                x_upper = x;
                limited_by = format!("station {} capacity", st.name);
            }
        }
        if let Ok(sum) = &mut longest {
            match (l.max_residence_s, forks) {
                (_, true) => {
                    longest = Err("fork sub-jobs run in parallel and a join waits for them".into())
                }
                (Ok(r), false) => *sum += vp * r,
                (Err(why), false) => longest = Err(format!("station {}: {why}", st.name)),
            }
        }
    }
    if let Some(b) = (0..spec.stations.len()).find(|&b| spec.blocks(b))
        && longest.is_ok()
    {
        longest = Err(format!(
            "station {}: blocks its senders when full (a blocked job waits for room, and full stations can deadlock)",
            spec.stations[b].name
        ));
    }
    if let Some(r) = spec.regions.iter().find(|r| r.limit.is_some())
        && longest.is_ok()
    {
        longest = Err(format!("region {}: jobs wait for admission", r.name));
    }
    let cycle = n / shortest;
    if !cycle.is_finite() && !x_upper.is_finite() {
        // Every visit may take no time and nothing caps the rate: there is
        // no finite throughput bound to state.
        return Ok(None);
    }
    let by_cycle = cycle < x_upper;
    if by_cycle {
        x_upper = cycle;
        limited_by = "shortest cycle (every visit at its least time)".into();
    }
    // When the cycle sets X_upper, N/X_upper − Z is the least residence
    // itself: take it exactly rather than as a difference of rounded terms.
    let response_lower_s = if by_cycle {
        least_residence
    } else {
        (n / x_upper - think).max(least_residence)
    };
    let (x_lower, r_upper, why) = match longest {
        Ok(r) if !(r.is_finite() && think.is_finite() && (think + r).is_finite()) => (
            None,
            None,
            Some("not available: the times are too large to bound in floating point".to_string()),
        ),
        Ok(r) if think + r > 0.0 => {
            let x = n / (think + r);
            if x <= x_upper {
                (Some(x), Some(r.max(response_lower_s)), None)
            } else {
                // Clamped to the upper throughput bound: the response bound
                // follows from it, and never falls below the lower one.
                let r = (n / x_upper - think).max(response_lower_s);
                (Some(x_upper), Some(r), None)
            }
        }
        Ok(_) => (None, None, Some("no station takes time".to_string())),
        Err(why) => (None, None, Some(why)),
    };
    Ok(Some(ClosedBounds {
        population,
        throughput_upper_per_s: x_upper,
        throughput_upper_limited_by: limited_by,
        response_lower_s,
        throughput_lower_per_s: x_lower,
        response_upper_s: r_upper,
        lower_unavailable: why,
    }))
}
