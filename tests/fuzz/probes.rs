//! Probe families of issue 24: what a case adds besides its mutations, to
//! reach the resources a model's text alone does not (its size, the run's
//! replications, a trace, time-based phases, dropped arrivals, an output
//! onto a hard link of the model).

use proptest::prelude::*;

/// One probe a case may carry.
#[derive(Debug, Clone, PartialEq)]
pub enum Probe {
    /// The model padded with a comment to this many MiB (the limit is 16).
    ModelSize { mib: u32 },
    /// `--replications N` (run) or `--set simulation.replications=N`.
    Replications(u64),
    /// `--trace trace.csv --trace-interval S` (run).
    TraceInterval(f64),
    /// A warm-up of this many simulated seconds (`--set`), and for
    /// `check`/`solve` a stop of as many.
    TimeStop(f64),
    /// Every station given a capacity of 2 that drops arrivals, and the
    /// arrival rate raised to this many per second.
    DroppedArrivals(f64),
    /// `-o` onto a hard link of the model (run); the model must survive.
    HardLink,
}

/// No probe most of the time, each family otherwise.
pub fn probe() -> impl Strategy<Value = Option<Probe>> {
    let edge_count = prop_oneof![
        Just(1u64),
        Just(1000),
        Just(100_000),
        Just(4_294_967_295),
        Just(u64::MAX)
    ];
    let edge_time = prop_oneof![
        Just(1e-12f64),
        Just(1e-3),
        Just(1e6),
        Just(4_294_967_295.0),
        Just(1e10),
        Just(1e300)
    ];
    let edge_rate = prop_oneof![Just(1e3f64), Just(1e6), Just(4_294_967_295.0), Just(1e300)];
    prop_oneof![
        12 => Just(None),
        1 => prop_oneof![Just(1u32), Just(15), Just(17), Just(40)]
            .prop_map(|mib| Some(Probe::ModelSize { mib })),
        1 => edge_count.prop_map(|n| Some(Probe::Replications(n))),
        1 => edge_time.clone().prop_map(|s| Some(Probe::TraceInterval(s))),
        1 => edge_time.prop_map(|s| Some(Probe::TimeStop(s))),
        1 => edge_rate.prop_map(|r| Some(Probe::DroppedArrivals(r))),
        1 => Just(Some(Probe::HardLink)),
    ]
}

/// What a probe changes in a case: text appended to the model, more
/// `--set` values, and arguments after them.
#[derive(Debug, Default)]
pub struct Applied {
    pub padding_mib: u32,
    pub sets: Vec<String>,
    pub args: Vec<String>,
    pub hard_link: bool,
}

/// The changes of `probe` for subcommand `run` (true) or another.
pub fn apply(probe: &Option<Probe>, run: bool) -> Applied {
    let mut a = Applied::default();
    match probe {
        None => {}
        Some(Probe::ModelSize { mib }) => a.padding_mib = *mib,
        Some(Probe::Replications(n)) if run => {
            a.args = vec!["--replications".into(), n.to_string()];
        }
        Some(Probe::Replications(n)) => a.sets.push(format!("simulation.replications={n}")),
        Some(Probe::TraceInterval(s)) => {
            a.args = vec![
                "--trace".into(),
                "trace.csv".into(),
                "--trace-interval".into(),
                format!("{s:e}"),
            ];
        }
        Some(Probe::TimeStop(s)) => {
            a.sets
                .push(format!("simulation.warmup={{ time_s = {s:e} }}"));
            if !run {
                a.sets.push(format!("simulation.stop={{ time_s = {s:e} }}"));
            }
        }
        Some(Probe::DroppedArrivals(r)) => {
            a.sets.push("stations.*.capacity=2".into());
            a.sets.push("stations.*.when_full=\"drop\"".into());
            a.sets.push(format!("workload.rate_per_s={r:e}"));
        }
        Some(Probe::HardLink) => {
            a.hard_link = true;
            a.args = vec!["-o".into(), "link.toml".into()];
        }
    }
    a
}
