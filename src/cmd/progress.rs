//! What the commands show while they work: one progress bar style for
//! every phase (`run`'s replication rounds, the bistability re-run, sweep,
//! whatif, hysteresis, rare, boundary), each named by its [`Phase`], on a
//! terminal only; and Ctrl-C turned into a clean stop.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use qsim_kernel::{Control, Network, RunConfig, RunError, RunResults, Stop, Warmup};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// A run stopped by Ctrl-C: the message says what was kept; exit code 130.
#[derive(Debug)]
pub struct Interrupted(pub String);

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Interrupted {}

/// What a progress bar is counting, named at the start of its line.
#[derive(Clone, Debug, PartialEq)]
pub enum Phase {
    /// `qsim run`: round `round` (from 1) of the replications, which ends
    /// at replication `last` (the precision target adds rounds).
    Run {
        /// The round, from 1.
        round: u32,
        /// Replications run by the end of this round.
        last: u32,
    },
    /// The second run from the other end, for the bistability verdict.
    OtherOperatingPoint,
    /// `qsim sweep`'s points.
    Sweep,
    /// `qsim whatif`: the baseline and every change at every point.
    WhatIf,
    /// `qsim sweep --hysteresis`: the load stepped up, then down.
    Hysteresis,
    /// `qsim rare`: splitting or importance sampling.
    Rare,
    /// `qsim boundary`: the runs at one trigger value.
    Boundary {
        /// The trigger value tried, as typed (`workload.schedule[0].population=161`).
        at: String,
    },
}

impl Phase {
    /// The words at the start of the bar.
    pub fn label(&self) -> String {
        match self {
            Phase::Run { round: 1, last } => format!("run, replications 1-{last}"),
            Phase::Run { round, last } => {
                format!("run, round {round} for the precision target (to replication {last})")
            }
            Phase::OtherOperatingPoint => {
                "checking the other operating point (a run from the other end)".into()
            }
            Phase::Sweep => "sweep".into(),
            Phase::WhatIf => "whatif, baseline and changes".into(),
            Phase::Hysteresis => "hysteresis, load stepped up then down".into(),
            Phase::Rare => "rare event estimate".into(),
            Phase::Boundary { at } => format!("boundary, trying {at}"),
        }
    }
}

/// The one progress bar builder: `phase`'s label, then a bar towards
/// `total` of `unit` (a spinner when the total is unknown, and without a
/// count when `unit` is `None`), elapsed and remaining time. Hidden when
/// stderr is not a terminal.
pub fn progress_bar(phase: &Phase, total: Option<u64>, unit: Option<&str>) -> ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let b = ProgressBar::with_draw_target(total, target);
    b.set_style(style(total.is_some(), unit));
    b.set_prefix(phase.label());
    b
}

/// The style of [`progress_bar`].
fn style(known_total: bool, unit: Option<&str>) -> ProgressStyle {
    let template = match (known_total, unit) {
        (true, Some(u)) => format!(
            "{{prefix}}: [{{bar:32}}] {{pos}}/{{len}} {u}, {{elapsed}} elapsed, about {{eta}} left  {{msg}}"
        ),
        (false, Some(u)) => {
            format!("{{prefix}}: {{spinner}} {{pos}} {u}, {{elapsed}} elapsed  {{msg}}")
        }
        (_, None) => "{prefix}: {spinner} {elapsed} elapsed  {msg}".to_string(),
    };
    ProgressStyle::with_template(&template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
}

/// Jobs per replication when the stop counts jobs.
fn jobs_per_replication(config: &RunConfig) -> Option<u64> {
    match (config.effective_warmup(), config.stop) {
        (Warmup::Jobs(w), Stop::Jobs(s)) => Some(w.saturating_add(s)),
        (Warmup::None, Stop::Jobs(s)) => Some(s),
        _ => None,
    }
}

/// Runs `network` with a progress bar on a terminal (after the first
/// second), labelled with the replication round, and stops at Ctrl-C with
/// [`RunError::Cancelled`].
pub fn run_with_progress(network: &Network, config: &RunConfig) -> Result<RunResults, RunError> {
    let control = crate::interrupt_control();
    let per_rep = jobs_per_replication(config);
    let first = config.replications;
    let total = per_rep.map(|n| n.saturating_mul(u64::from(first)));
    let start_planned = control.replications_planned();
    let round = std::cell::Cell::new((1u32, first));
    // A new round of the precision target: the bar says so and grows.
    let new_round = |bar: &ProgressBar| {
        let planned = control.replications_planned().saturating_sub(start_planned);
        let (r, last) = round.get();
        if planned > last {
            round.set((r + 1, planned));
            bar.set_prefix(
                Phase::Run {
                    round: r + 1,
                    last: planned,
                }
                .label(),
            );
            if let Some(n) = per_rep {
                bar.set_length(n.saturating_mul(u64::from(planned)));
            }
        }
    };
    let watch = Watch {
        control: &control,
        total,
        phase: Phase::Run {
            round: 1,
            last: first,
        },
        unit: Some("jobs"),
        update: Some(&new_round),
    };
    watch.run(|| qsim_kernel::run_with(network, config, &control))
}

/// Runs `network` once with a bar of `phase` counting its jobs (as
/// [`run_with_progress`], without rounds: for a command's inner runs).
pub fn run_phase(
    network: &Network,
    config: &RunConfig,
    phase: Phase,
) -> Result<RunResults, RunError> {
    let control = crate::interrupt_control();
    let total =
        jobs_per_replication(config).map(|n| n.saturating_mul(u64::from(config.replications)));
    with_progress(&control, phase, total, || {
        qsim_kernel::run_with(network, config, &control)
    })
}

/// [`qsim_kernel::bistable::decide`] with the progress bar and Ctrl-C of
/// [`run_with_progress`], labelled as the check of the other operating point.
pub fn decide_with_progress(
    network: &Network,
    config: &RunConfig,
    first: &RunResults,
) -> Result<Option<qsim_kernel::bistable::Verdict>, RunError> {
    let control = crate::interrupt_control();
    let reps = first.replication_results.len() as u64;
    let total = jobs_per_replication(config).map(|n| n.saturating_mul(reps));
    with_progress(&control, Phase::OtherOperatingPoint, total, || {
        qsim_kernel::bistable::decide(network, config, first, Some(&control))
    })
}

/// Runs `work` with a bar of `phase` counting the jobs `control` counts as
/// done, towards `total` (a spinner when it is unknown); see [`Watch::run`].
pub fn with_progress<T: Send>(
    control: &Control,
    phase: Phase,
    total: Option<u64>,
    work: impl FnOnce() -> T + Send,
) -> T {
    Watch {
        control,
        total,
        phase,
        unit: Some("jobs"),
        update: None,
    }
    .run(work)
}

/// Runs `work` with a spinner of `phase` that counts nothing (for work
/// that reports no progress: hysteresis chains, rare-event estimates).
pub fn with_spinner<T: Send>(phase: Phase, work: impl FnOnce() -> T + Send) -> T {
    let control = Control::new();
    Watch {
        control: &control,
        total: None,
        phase,
        unit: None,
        update: None,
    }
    .run(work)
}

/// How long work runs before its bar appears: a second, so that quick runs
/// draw nothing; `QSIM_PROGRESS_AFTER_MS` sets it (tests/it/progress.rs
/// draws the bars of short runs under a pseudo-terminal with 0).
fn bar_delay() -> Duration {
    std::env::var("QSIM_PROGRESS_AFTER_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(Duration::from_secs(1), Duration::from_millis)
}

/// A bar watching a [`Control`] while work runs.
struct Watch<'a> {
    control: &'a Control,
    total: Option<u64>,
    phase: Phase,
    unit: Option<&'a str>,
    /// Called at every refresh with the bar (a new round, say).
    update: Option<&'a dyn Fn(&ProgressBar)>,
}

impl Watch<'_> {
    /// Runs `work` on a second thread while this one shows the jobs done:
    /// on a terminal only and only after the first second. The waiting
    /// thread wakes as soon as the work is done (a channel, not a polling
    /// sleep), and when stderr is not a terminal the work runs on this
    /// thread alone.
    fn run<T: Send>(self, work: impl FnOnce() -> T + Send) -> T {
        use std::sync::mpsc::{RecvTimeoutError, channel};
        if !std::io::stderr().is_terminal() {
            return work();
        }
        let start_jobs = self.control.jobs_done();
        std::thread::scope(|scope| {
            let (done_tx, done_rx) = channel::<()>();
            let worker = scope.spawn(move || {
                let out = work();
                // The receiver only goes away once the worker is joined.
                let _ = done_tx.send(());
                out
            });
            let started = Instant::now();
            let after = bar_delay();
            let mut bar: Option<ProgressBar> = None;
            // A panicking worker drops the sender: the wait ends as well.
            while let Err(RecvTimeoutError::Timeout) =
                done_rx.recv_timeout(Duration::from_millis(50))
            {
                if bar.is_none() && started.elapsed() >= after {
                    let b = progress_bar(&self.phase, self.total, self.unit);
                    b.enable_steady_tick(Duration::from_millis(120));
                    bar = Some(b);
                }
                if let Some(b) = &bar {
                    if let Some(u) = self.update {
                        u(b);
                    }
                    let done = self.control.jobs_done() - start_jobs;
                    b.set_position(b.length().map_or(done, |t| done.min(t)));
                }
            }
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            worker
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Phase;

    /// Every phase is named, and no two alike: a user can tell the
    /// bistability re-run from a new round of the run.
    #[test]
    fn every_phase_has_its_own_label() {
        let phases = [
            Phase::Run { round: 1, last: 5 },
            Phase::Run { round: 2, last: 20 },
            Phase::OtherOperatingPoint,
            Phase::Sweep,
            Phase::WhatIf,
            Phase::Hysteresis,
            Phase::Rare,
            Phase::Boundary {
                at: "workload.schedule[0].population=161".into(),
            },
        ];
        let labels: Vec<String> = phases.iter().map(Phase::label).collect();
        assert_eq!(labels[0], "run, replications 1-5");
        assert!(
            labels[1].contains("round 2") && labels[1].contains("20"),
            "{}",
            labels[1]
        );
        assert!(labels[2].contains("other operating point"), "{}", labels[2]);
        assert!(labels[7].contains("population=161"), "{}", labels[7]);
        for (i, a) in labels.iter().enumerate() {
            assert!(!a.is_empty());
            for b in &labels[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
