//! A run with a schedule: its figures per phase (before, during and after
//! the trigger) and its recovery figures, read from the replications'
//! traces (`qsim_kernel::recovery`), for `qsim run`'s table, JSON and CSV.

use qsim_kernel::recovery::{PhaseFigures, Recovery, RecoveryMetric, phases, recovery};
use qsim_kernel::trace::Trace;
use qsim_kernel::{Network, RunConfig, RunResults};

/// What a run with a trigger reports beside its whole-run figures.
pub struct TransientFigures {
    /// The phases with measured time.
    pub phases: Vec<PhaseFigures>,
    /// The recovery figures, or why there are none.
    pub recovery: Result<Recovery, String>,
    /// Station names, in spec order.
    pub stations: Vec<String>,
}

impl TransientFigures {
    /// The report's view of them.
    pub fn view(&self) -> qsim_report::phases::Transient<'_> {
        qsim_report::phases::Transient {
            phases: &self.phases,
            recovery: &self.recovery,
            stations: &self.stations,
        }
    }
}

/// The per-phase and recovery figures of `results`, when the run has a
/// schedule and was traced; `fraction` of the level before the trigger
/// separates collapsed from recovered.
pub fn of(
    network: &Network,
    config: &RunConfig,
    results: &RunResults,
    fraction: f64,
) -> Option<TransientFigures> {
    let window = qsim_kernel::recovery::run_trigger_window(config)?;
    let traces: Vec<&Trace> = results
        .replication_results
        .iter()
        .filter_map(|r| r.trace.as_deref())
        .collect();
    if traces.is_empty() {
        return None;
    }
    Some(TransientFigures {
        phases: phases(window, &traces),
        recovery: recovery(
            window,
            &traces,
            RecoveryMetric::of_network(network),
            fraction,
        ),
        stations: network
            .spec()
            .stations
            .iter()
            .map(|s| s.name.clone())
            .collect(),
    })
}
