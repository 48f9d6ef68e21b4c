//! `qsim check`'s event estimate (the kernel's `budget::estimate`) against
//! the events a run really takes: within 3x on every model in models/, each
//! run briefly (one replication of a few hundred interactions, no warm-up),
//! and again stopped on time, for as long as that run took (the estimate
//! of a timed run goes through the open classes' rates and the closed
//! classes' throughput bound instead of the job count).

use qsim_kernel::{RunConfig, Stop, Warmup, budget, run};
use qsim_model::load_file;

/// Interactions per model: enough to pass the start-up, few enough that
/// the busiest model (spin_fanout, ~1e5 events per request) takes seconds.
const JOBS: u64 = 200;

#[test]
fn event_estimate_within_3x_on_every_model() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/models");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("toml"))
        .collect();
    paths.sort();
    let mut report = Vec::new();
    let mut bad = Vec::new();
    let mut unestimated = Vec::new();
    for path in &paths {
        let model = load_file(path, &[]).unwrap();
        let config = RunConfig {
            replications: 1,
            stop: Stop::Jobs(JOBS),
            warmup: Warmup::None,
            threads: 1,
            precision: None,
            trace: None,
            ..model.run.clone()
        };
        let spec = model.network.spec();
        let visits: Vec<_> = (0..spec.classes.len())
            .map(|c| qsim_theory::visits::visit_ratios(spec, c).map(|v| v.parent))
            .collect();
        let est = budget::estimate(&model.network, &config, &visits)
            .replication_events
            .expect("a job-counted run has an event estimate");
        let jobs_run = run(&model.network, &config).unwrap();
        let real = jobs_run.events as f64;
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let ratio = real / est;
        report.push(format!(
            "{name}: estimate {est:.3e}, run {real:.3e}, ratio {ratio:.2}"
        ));
        if !(1.0 / 3.0..=3.0).contains(&ratio) {
            bad.push(name.clone());
        }
        let timed = RunConfig {
            stop: Stop::Time(jobs_run.measured_time_s),
            ..config
        };
        let Some(est) = budget::estimate(&model.network, &timed, &visits).replication_events else {
            // The kernel counts no events per second for a closed class
            // (no lower bound on its throughput from the spec alone), so
            // a timed run of a closed model has no estimate; an open one
            // must have one.
            let open = spec
                .classes
                .iter()
                .all(|c| matches!(c.workload, qsim_kernel::Workload::Open { .. }));
            if open && timed.schedule.is_empty() {
                bad.push(format!("{name} (timed: no estimate)"));
            }
            unestimated.push(name);
            continue;
        };
        let real = run(&model.network, &timed).unwrap().events as f64;
        let ratio = real / est;
        report.push(format!(
            "{name}, {:.3} s: estimate {est:.3e}, run {real:.3e}, ratio {ratio:.2}",
            jobs_run.measured_time_s
        ));
        if !(1.0 / 3.0..=3.0).contains(&ratio) {
            bad.push(format!("{name} (timed)"));
        }
    }
    eprintln!("{}", report.join("\n"));
    eprintln!("timed runs without an estimate (closed classes): {unestimated:?}");
    assert!(bad.is_empty(), "beyond 3x: {bad:?}");
}
