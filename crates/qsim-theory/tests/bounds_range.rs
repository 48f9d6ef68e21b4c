//! Bounds stay ordered and non-negative when one time dwarfs another: the
//! response bounds are computed from the residence sums, not as a
//! difference with the think time that rounding can make negative.

use qsim_kernel::{ClassSpec, Dist, NetworkSpec, Routing, StationKind, StationSpec, Workload};
use qsim_theory::bounds::closed_bounds;

fn spec(service_s: f64, think_s: f64, population: u32) -> NetworkSpec {
    NetworkSpec {
        stations: vec![StationSpec {
            name: "q".into(),
            kind: StationKind::Queue {
                servers: 1,
                discipline: Default::default(),
            },
            service: vec![Some(Dist::exponential(service_s).unwrap())],
            speed: None,
        }],
        classes: vec![ClassSpec {
            name: "c".into(),
            workload: Workload::Closed {
                population,
                think: Some(Dist::exponential(think_s).unwrap()),
            },
            routing: Routing::Sequence(vec![0]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    }
}

#[test]
fn response_bounds_are_non_negative_and_ordered_when_think_dwarfs_service() {
    for (service, think, n) in [
        (1e-7, 1e9, 3),
        (1e-3, 1e9, 7),
        (1e-9, 3.0, 1),
        (2.0, 1e9, 5),
    ] {
        let b = closed_bounds(&spec(service, think, n), 0, n)
            .unwrap()
            .expect("a single closed class has bounds");
        let upper = b
            .response_upper_s
            .expect("a plain queue has an upper bound");
        assert!(b.response_lower_s >= 0.0, "{b:?}");
        assert!(upper >= b.response_lower_s, "{b:?}");
        // One FCFS server: a visit takes at most N services on average, so
        // the bound is N·service, which the think time must not swallow.
        let exact = f64::from(n) * service;
        assert!((upper / exact - 1.0).abs() < 1e-12, "{upper} vs {exact}");
        let x_lower = b.throughput_lower_per_s.unwrap();
        assert!(
            x_lower > 0.0 && x_lower <= b.throughput_upper_per_s,
            "{b:?}"
        );
    }
}
