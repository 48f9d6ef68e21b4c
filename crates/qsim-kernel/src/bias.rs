//! Deliberate errors for checking the tests (cargo feature `bias`, off by
//! default and never in a release build).
//!
//! With the feature on, the environment variable `QSIM_BIAS` names one
//! injection, optionally with its size after a colon
//! (`QSIM_BIAS=service:1.05`); unset or empty, the kernel runs unbiased.
//! `.ci/bias.sh` runs the test binaries under each injection and lists the
//! tests that fail: a test suite that stays green under an injection
//! cannot see that error. Each hook is a `#[cfg(feature = "bias")]` line
//! at the place it distorts, so without the feature the kernel compiles
//! exactly as if this module did not exist.
//!
//! | name | default | what goes wrong |
//! |---|---|---|
//! | `service` | 1.05 | every station's service draw (queue, delay, latch critical section) × k; the per-job work of a speed station too |
//! | `interarrival` | 0.95 | every open class's inter-arrival draw × k |
//! | `drop` | 1000 | every k-th measured response is left out of its class's count and sum (not of the histogram or the stop rule) |
//! | `route` | 0.02 | the first branch of every routing row with two or more branches gains k, taken from the last (at most half of it) |
//! | `handoff` | 1.1 | a NUMA latch's local and remote hand-off costs × k |
//! | `warmup` | 0.9 | a warm-up of jobs or of time × k (the MSER-5 replay untouched) |
//! | `speed` | 1 | a speed curve read at n − k jobs (at least 1) in the simulation; theory reads it right |
//! | `preempt` | 2 | at a preemptive-priority station, an arrival whose number there is k − 1 mod k waits instead of taking a lower-priority job's server (about one preemption in k missed) |
//! | `weights` | 1 | a weighted PS station gives class c the weight of class c + k (mod the classes): the shares go to the wrong classes |
//! | `policy` | 10 | every k-th pick of a `shortest_queue` row goes to the next station of the row after the shortest, of a `power_of_d` row to the first candidate sampled (queues not compared) |
//! | `pool` | 1 | a region admits k jobs over its limit |
//! | `perclass` | 1.05 | a class's time and wait at a station as its per-class histograms record them (its percentiles there) × k; the per-class means and every other figure untouched |
//! | `timeout` | 1.1 | every client timeout draw × k |
//! | `backoff` | 0.95 | every retry backoff × k: a backoff distribution scaled (and so its redraw in a rare-event snapshot), a doubling schedule's base and cap |
//! | `tilt` | 1.05 | every draw from an exponentially tilted law (the rare-event tails' importance sampling) × k, weighed as drawn |

use std::sync::OnceLock;

/// One injection and its size.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bias {
    None,
    Service(f64),
    Interarrival(f64),
    Drop(u64),
    Route(f64),
    Handoff(f64),
    Warmup(f64),
    Speed(u32),
    Preempt(u64),
    Weights(usize),
    Policy(u64),
    Pool(u32),
    Perclass(f64),
    Timeout(f64),
    Backoff(f64),
    Tilt(f64),
}

fn parse(text: &str) -> Bias {
    let text = text.trim();
    if text.is_empty() {
        return Bias::None;
    }
    let (name, size) = match text.split_once(':') {
        Some((n, s)) => (n, Some(s)),
        None => (text, None),
    };
    let num = |default: f64| -> f64 {
        size.map_or(default, |s| {
            s.parse()
                .unwrap_or_else(|_| panic!("QSIM_BIAS: expected a number after ':', found {s:?}"))
        })
    };
    match name {
        "service" => Bias::Service(num(1.05)),
        "interarrival" => Bias::Interarrival(num(0.95)),
        "drop" => Bias::Drop(num(1000.0) as u64),
        "route" => Bias::Route(num(0.02)),
        "handoff" => Bias::Handoff(num(1.1)),
        "warmup" => Bias::Warmup(num(0.9)),
        "speed" => Bias::Speed(num(1.0) as u32),
        "preempt" => Bias::Preempt(num(2.0) as u64),
        "weights" => Bias::Weights(num(1.0) as usize),
        "policy" => Bias::Policy(num(10.0) as u64),
        "pool" => Bias::Pool(num(1.0) as u32),
        "perclass" => Bias::Perclass(num(1.05)),
        "timeout" => Bias::Timeout(num(1.1)),
        "backoff" => Bias::Backoff(num(0.95)),
        "tilt" => Bias::Tilt(num(1.05)),
        _ => panic!(
            "QSIM_BIAS: unknown injection {name:?}; expected one of service, interarrival, drop, route, handoff, warmup, speed, preempt, weights, policy, pool, perclass, timeout, backoff, tilt"
        ),
    }
}

fn bias() -> Bias {
    static BIAS: OnceLock<Bias> = OnceLock::new();
    *BIAS.get_or_init(|| parse(&std::env::var("QSIM_BIAS").unwrap_or_default()))
}

/// A station's service distribution as the simulation draws from it.
pub(crate) fn service(d: &crate::Dist) -> crate::Dist {
    match bias() {
        Bias::Service(k) => d.scaled(k).expect("a valid distribution scales"),
        _ => d.clone(),
    }
}

/// An open class's inter-arrival distribution as the simulation draws from it.
pub(crate) fn interarrival(d: &crate::Dist) -> crate::Dist {
    match bias() {
        Bias::Interarrival(k) => d.scaled(k).expect("a valid distribution scales"),
        _ => d.clone(),
    }
}

/// Whether the measured completion numbered `n` (from 0) is dropped.
pub(crate) fn drops(n: u64) -> bool {
    matches!(bias(), Bias::Drop(k) if k > 0 && n % k == k - 1)
}

/// The probability of a routing row's first branch, `last` being the
/// last branch's: it gains k, taken from the last, but at most half of that
/// (a loop that leaves with a small probability keeps leaving).
pub(crate) fn first_branch(p: f64, last: f64) -> f64 {
    match bias() {
        Bias::Route(k) => p + k.min(last / 2.0),
        _ => p,
    }
}

/// A NUMA latch's hand-off costs as the simulation charges them.
pub(crate) fn handoff(mut numa: crate::network::NumaSpec) -> crate::network::NumaSpec {
    if let Bias::Handoff(k) = bias() {
        numa.local_handoff_s *= k;
        numa.remote_handoff_s *= k;
    }
    numa
}

/// A warm-up of `n` jobs as the simulation runs it.
pub(crate) fn warm_jobs(n: u64) -> u64 {
    match bias() {
        Bias::Warmup(k) => (n as f64 * k).round() as u64,
        _ => n,
    }
}

/// A warm-up of `t` seconds as the simulation runs it.
pub(crate) fn warm_time(t: f64) -> f64 {
    match bias() {
        Bias::Warmup(k) => t * k,
        _ => t,
    }
}

/// The number of jobs at which the simulation reads a speed curve when
/// `n` are present.
pub(crate) fn speed_n(n: u32) -> u32 {
    match bias() {
        Bias::Speed(k) => n.saturating_sub(k).max(1),
        _ => n,
    }
}

/// Whether the arrival numbered `seq` (from 0) at a preemptive-priority
/// station is kept from preempting.
pub(crate) fn skips_preempt(seq: u64) -> bool {
    matches!(bias(), Bias::Preempt(k) if k > 0 && seq % k == k - 1)
}

/// The class weights of a weighted PS station as the simulation uses
/// them.
pub(crate) fn weights(w: &[f64]) -> Vec<f64> {
    match bias() {
        Bias::Weights(k) if !w.is_empty() => (0..w.len()).map(|c| w[(c + k) % w.len()]).collect(),
        _ => w.to_vec(),
    }
}

/// Counts a pick of a `shortest_queue` or `power_of_d` row (`picks`, the
/// row's count so far) and tells whether this one goes wrong.
pub(crate) fn policy_misses(picks: &mut u64) -> bool {
    *picks += 1;
    matches!(bias(), Bias::Policy(k) if k > 0 && picks.is_multiple_of(k))
}

/// A region's limit as the simulation admits by it.
pub(crate) fn region_limit(limit: u32) -> u32 {
    match bias() {
        Bias::Pool(k) => limit.saturating_add(k),
        _ => limit,
    }
}

/// The departure `end` and service start `start` of a class's visit to a
/// station that began at `arr`, as the class's station histograms record
/// them (the visit's time and wait scaled from `arr`).
pub(crate) fn perclass_ends(arr: f64, end: f64, start: f64) -> (f64, f64) {
    match bias() {
        Bias::Perclass(k) => (arr + (end - arr) * k, arr + (start - arr) * k),
        _ => (end, start),
    }
}

/// A client's timeout draw `t` as the simulation sets its timer.
pub(crate) fn timeout(t: f64) -> f64 {
    match bias() {
        Bias::Timeout(k) => t * k,
        _ => t,
    }
}

/// A draw from an exponentially tilted law (rare-event tails).
pub(crate) fn tilted_draw(x: f64) -> f64 {
    match bias() {
        Bias::Tilt(k) => x * k,
        _ => x,
    }
}

/// A class's retries as the simulation runs them: the backoff scaled.
pub(crate) fn retry(r: &crate::network::RetrySpec) -> crate::network::RetrySpec {
    let mut r = r.clone();
    if let Bias::Backoff(k) = bias() {
        r.backoff = match r.backoff {
            crate::network::Backoff::Dist(d) => {
                crate::network::Backoff::Dist(d.scaled(k).expect("a valid distribution scales"))
            }
            crate::network::Backoff::Doubling {
                base_s,
                cap_s,
                jitter,
            } => crate::network::Backoff::Doubling {
                base_s: base_s * k,
                cap_s: cap_s * k,
                jitter,
            },
            b => b,
        };
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_sizes_parse() {
        assert_eq!(parse(""), Bias::None);
        assert_eq!(parse("service"), Bias::Service(1.05));
        assert_eq!(parse("service:1.2"), Bias::Service(1.2));
        assert_eq!(parse("drop"), Bias::Drop(1000));
        assert_eq!(parse("speed:2"), Bias::Speed(2));
        assert_eq!(parse("preempt"), Bias::Preempt(2));
        assert_eq!(parse("weights"), Bias::Weights(1));
        assert_eq!(parse("policy:5"), Bias::Policy(5));
        assert_eq!(parse("pool"), Bias::Pool(1));
        assert_eq!(parse("perclass"), Bias::Perclass(1.05));
        assert_eq!(parse("timeout:1.03"), Bias::Timeout(1.03));
        assert_eq!(parse("backoff"), Bias::Backoff(0.95));
        assert_eq!(parse("tilt"), Bias::Tilt(1.05));
    }
}
