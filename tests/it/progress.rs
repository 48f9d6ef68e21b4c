//! The progress lines as a user sees them: drawn on a terminal (a
//! pseudo-terminal made by util-linux's `script`), in one style, each
//! phase named, and nothing on a redirected stderr.

use std::process::Command;

/// What the terminal showed while `qsim args` ran under a pseudo-terminal
/// (`script` copies everything written to it), with the escape sequences
/// of line redraws removed and carriage returns as line ends.
fn on_terminal(args: &[&str]) -> String {
    let qsim = env!("CARGO_BIN_EXE_qsim");
    let command = std::iter::once(qsim)
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script")
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        // The bars of these short runs appear at once.
        .env("QSIM_PROGRESS_AFTER_MS", "0")
        .output()
        .unwrap_or_else(|e| {
            panic!("this test needs `script` from util-linux (bsdutils) to make a terminal: {e}")
        });
    assert!(
        out.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "\n");
    // Drop CSI sequences (cursor moves, line clears).
    let mut clean = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            clean.push(c);
        }
    }
    clean
}

#[test]
fn a_run_draws_a_bar_towards_its_jobs_on_a_terminal_only() {
    // 2 replications of 1e6 jobs and a tenth as warm-up: 2.2e6 jobs.
    let args = [
        "run",
        "models/mm1.toml",
        "--jobs",
        "1000000",
        "--replications",
        "2",
        "--threads",
        "1",
    ];
    let screen = on_terminal(&args);
    let bars: Vec<&str> = screen
        .lines()
        .filter(|l| l.starts_with("run, replications 1-2: ["))
        .collect();
    assert!(
        !bars.is_empty(),
        "no labelled bar on the terminal:\n{screen}"
    );
    assert!(
        bars.iter().all(|l| l.contains("/2200000 jobs")),
        "the bar counts towards 2 x (1e6 + 1e5) jobs: {bars:?}"
    );
    // The bar is cleared, and the table follows.
    assert!(screen.contains("throughput"), "{screen}");
    // Redirected, stderr carries no bar.
    let out = crate::support::qsim(&args);
    assert!(out.status.success());
    let err = crate::support::stderr(&out);
    assert!(!err.contains("replications 1-2:"), "{err}");
}

#[test]
fn the_bistability_check_has_its_own_labelled_line() {
    // latch_bistable starts with all jobs thinking; the check then runs
    // from all jobs at the latch. Each phase names itself, in order.
    let screen = on_terminal(&[
        "run",
        "models/latch_bistable.toml",
        "--jobs",
        "300000",
        "--threads",
        "1",
    ]);
    let run = screen
        .find("run, replications 1-4:")
        .unwrap_or_else(|| panic!("no run line:\n{screen}"));
    let other = screen
        .find("checking the other operating point (a run from the other end):")
        .unwrap_or_else(|| panic!("no line for the check:\n{screen}"));
    assert!(run < other, "the run's line comes first:\n{screen}");
    // One style: both lines have the label, a colon, a spinner or bar and
    // a count of jobs with the time elapsed (the stop counts jobs but the
    // warm-up is timed, so the total is unknown: a spinner).
    for label in [
        "run, replications 1-4:",
        "checking the other operating point",
    ] {
        let line = screen
            .lines()
            .find(|l| l.starts_with(label))
            .expect("found above");
        assert!(
            line.contains(" jobs, ") && line.contains(" elapsed"),
            "{line}"
        );
    }
}
