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
use qsim_kernel::{NetworkSpec, StationKind};
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

/// Bounds for closed class `class` at `population` jobs. `None` when the
/// class is open or the model has other classes (their jobs share stations).
pub fn closed_bounds(
    spec: &NetworkSpec,
    class: usize,
    population: u32,
) -> Result<Option<ClosedBounds>, Error> {
    if spec.classes.len() != 1 || population == 0 {
        return Ok(None);
    }
    let Some((_, think)) = closed_class(spec, class) else {
        return Ok(None);
    };
    let visits = visit_ratios(spec, class).ok_or_else(|| Error::Trapped {
        class: spec.classes[class].name.clone(),
    })?;
    let forks = spec
        .stations
        .iter()
        .any(|s| matches!(s.kind, StationKind::Fork(_)));
    // Sub-jobs multiply the jobs that can be at one station.
    let present = if forks { None } else { Some(population) };
    let n = f64::from(population);
    let mut shortest = think;
    let mut longest = Ok(think);
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
    if let Some(r) = spec.regions.iter().find(|r| r.limit.is_some())
        && longest.is_ok()
    {
        longest = Err(format!("region {}: jobs wait for admission", r.name));
    }
    let cycle = n / shortest;
    if cycle < x_upper {
        x_upper = cycle;
        limited_by = "shortest cycle (every visit at its least time)".into();
    }
    let (x_lower, why) = match longest {
        Ok(t) if t > 0.0 => (Some((n / t).min(x_upper)), None),
        Ok(_) => (None, Some("no station takes time".to_string())),
        Err(why) => (None, Some(why)),
    };
    Ok(Some(ClosedBounds {
        population,
        throughput_upper_per_s: x_upper,
        throughput_upper_limited_by: limited_by,
        response_lower_s: (n / x_upper - think).max(0.0),
        throughput_lower_per_s: x_lower,
        response_upper_s: x_lower.map(|x| n / x - think),
        lower_unavailable: why,
    }))
}
