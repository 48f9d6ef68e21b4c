//! Recovery judged on goodput where the model has clients (issue 22): a
//! burst that an M/M/1 serves at full speed (its throughput never falls)
//! but with waits far beyond the clients' deadline (its goodput falls to
//! zero until the backlog drains).

use crate::support::model;
use qsim_kernel::RunConfig;
use qsim_kernel::recovery::{RecoveryFigure, RecoveryMetric, recovery, trigger_window};
use qsim_kernel::trace::{Trace, TracePlan};

/// M/M/1 at 100/s: 50 arrivals/s, 200/s from 20 to 30 s; a success counts
/// in the goodput within 0.5 s.
const BURST: &str = r#"
[simulation]
replications = 5
seed = 3
stop = { time_s = 80 }
warmup = "none"

[workload]
type = "open"
rate_per_s = 50
route = ["server"]

[[workload.schedule]]
at = 20
rate_per_s = 200

[[workload.schedule]]
at = 30
rate_per_s = 50

[workload.client]
deadline_s = 0.5

[stations.server]
kind = "queue"
service = { dist = "exponential", mean = 0.01 }
"#;

#[test]
fn a_burst_served_too_late_is_a_collapse_of_goodput_not_of_throughput() {
    let m = model(BURST, &[]);
    assert_eq!(
        RecoveryMetric::of_network(&m.network),
        RecoveryMetric::Goodput
    );
    let config = RunConfig {
        trace: Some(TracePlan {
            interval_s: 0.25,
            max_intervals: 1 << 12,
        }),
        ..m.run.clone()
    };
    let results = qsim_kernel::run(&m.network, &config).unwrap();
    let traces: Vec<&Trace> = results
        .replication_results
        .iter()
        .map(|r| r.trace.as_deref().unwrap())
        .collect();
    let window = trigger_window(&config.schedule).unwrap();
    // Throughput: the server works flat out through the burst (100/s,
    // above 90% of the 50/s before), so nothing collapses during it.
    // (After it, the Poisson noise of 12.5 completions per interval puts
    // three intervals in a row below 45/s sooner or later: the rule's
    // noise, not a collapse, so only the burst is asserted.)
    let x = recovery(window, &traces, RecoveryMetric::Throughput, 0.9).unwrap();
    let burst_s = window.end_s - window.start_s;
    assert!(
        x.per_replication
            .iter()
            .all(|r| r.collapse_s.is_none_or(|c| c > burst_s)),
        "{x:?}"
    );
    // Goodput: the fluid limit of the queue (it grows at 100/s during the
    // burst, to about 1000, and drains at 50/s after it) puts the first
    // success within 0.5 s again at 19.5 s after the burst's end (the
    // request that arrives when 50 are queued, 19 s after, is served
    // 0.5 s later). The spread of the backlog (about ±55, ±1.1 s) and
    // of the drain is in the interval; allowed ±4 s around the fluid value
    // (an error of a whole trace interval in the rule would not be caught,
    // a recovery judged on throughput, or on the wrong deadline, would).
    let g = recovery(window, &traces, RecoveryMetric::Goodput, 0.9).unwrap();
    assert_eq!((g.collapsed, g.recovered), (5, 5), "{g:?}");
    let RecoveryFigure::Estimate(t) = g.time_to_recover_s else {
        panic!("{g:?}")
    };
    assert!((t.mean - 19.5).abs() < 4.0 && t.ci95 < 4.0, "{t:?}");
    // The collapse: the queue passes 50 (waits of 0.5 s) 0.5 s into the
    // burst, and those requests finish 0.5 s later: about 1 s.
    let RecoveryFigure::Estimate(c) = g.time_to_collapse_s else {
        panic!("{g:?}")
    };
    eprintln!(
        "goodput: recovers {:.3} ± {:.3} s after the burst (fluid 19.5), collapses {:.3} ± {:.3} s into it (fluid 1.0)",
        t.mean, t.ci95, c.mean, c.ci95
    );
    assert!((c.mean - 1.0).abs() < 0.75, "{c:?}");
}
