//! What the commands show while they work: a progress bar on a terminal
//! (after the first second), and Ctrl-C turned into a clean stop.

use qsim_kernel::{Control, Network, RunConfig, RunError, RunResults, Stop, Warmup};
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

/// Runs `network` with a progress bar on a terminal (after the first
/// second) and stops at Ctrl-C with [`RunError::Cancelled`].
pub fn run_with_progress(network: &Network, config: &RunConfig) -> Result<RunResults, RunError> {
    let control = crate::interrupt_control();
    let per_rep = match (config.effective_warmup(), config.stop) {
        (Warmup::Jobs(w), Stop::Jobs(s)) => Some(w.saturating_add(s)),
        (Warmup::None, Stop::Jobs(s)) => Some(s),
        _ => None,
    };
    let total = per_rep.map(|n| n.saturating_mul(u64::from(config.replications)));
    with_progress(&control, total, || {
        qsim_kernel::run_with(network, config, &control)
    })
}

/// [`qsim_kernel::bistable::decide`] with the progress bar and Ctrl-C of
/// [`run_with_progress`].
pub fn decide_with_progress(
    network: &Network,
    config: &RunConfig,
    first: &RunResults,
) -> Result<Option<qsim_kernel::bistable::Verdict>, RunError> {
    let control = crate::interrupt_control();
    let per_rep = match (config.effective_warmup(), config.stop) {
        (Warmup::Jobs(w), Stop::Jobs(s)) => Some(w.saturating_add(s)),
        (Warmup::None, Stop::Jobs(s)) => Some(s),
        _ => None,
    };
    let reps = first.replication_results.len() as u64;
    let total = per_rep.map(|n| n.saturating_mul(reps));
    with_progress(&control, total, || {
        qsim_kernel::bistable::decide(network, config, first, Some(&control))
    })
}

/// Runs `work` on a second thread while this one shows the jobs `control`
/// counts as done: a bar towards `total` (a spinner when it is unknown), on
/// a terminal only and only after the first second. The waiting thread
/// wakes as soon as the work is done (a channel, not a polling sleep), and
/// when stderr is not a terminal the work runs on this thread alone.
pub fn with_progress<T: Send>(
    control: &Control,
    total: Option<u64>,
    work: impl FnOnce() -> T + Send,
) -> T {
    use std::io::IsTerminal;
    use std::sync::mpsc::{RecvTimeoutError, channel};
    if !std::io::stderr().is_terminal() {
        return work();
    }
    let start_jobs = control.jobs_done();
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = channel::<()>();
        let worker = scope.spawn(move || {
            let out = work();
            // The receiver only goes away once the worker is joined.
            let _ = done_tx.send(());
            out
        });
        let started = Instant::now();
        let mut bar: Option<indicatif::ProgressBar> = None;
        // A panicking worker drops the sender: the wait ends as well.
        while let Err(RecvTimeoutError::Timeout) = done_rx.recv_timeout(Duration::from_millis(50)) {
            if bar.is_none() && started.elapsed() > Duration::from_secs(1) {
                bar = Some(progress_bar(total));
            }
            if let Some(b) = &bar {
                let done = control.jobs_done() - start_jobs;
                b.set_position(total.map_or(done, |t| done.min(t)));
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

fn progress_bar(total: Option<u64>) -> indicatif::ProgressBar {
    let target = indicatif::ProgressDrawTarget::stderr();
    match total {
        Some(t) => {
            let b = indicatif::ProgressBar::with_draw_target(Some(t), target);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} jobs, {elapsed} elapsed, about {eta} left",
            ) {
                b.set_style(style);
            }
            b
        }
        None => {
            let b = indicatif::ProgressBar::with_draw_target(None, target);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{spinner} {pos} jobs, {elapsed} elapsed")
            {
                b.set_style(style);
            }
            b
        }
    }
}
