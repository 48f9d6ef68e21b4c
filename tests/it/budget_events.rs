//! `qsim check`'s event estimate (the kernel's `budget::estimate`) against
//! the events a run really takes: within 3x on every model in models/, each
//! run briefly (one replication of a few hundred interactions, no warm-up,
//! so the estimate exists for models that stop on time as well).

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
        let real = run(&model.network, &config).unwrap().events as f64;
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let ratio = real / est;
        report.push(format!(
            "{name}: estimate {est:.3e}, run {real:.3e}, ratio {ratio:.2}"
        ));
        if !(1.0 / 3.0..=3.0).contains(&ratio) {
            bad.push(name);
        }
    }
    eprintln!("{}", report.join("\n"));
    assert!(bad.is_empty(), "beyond 3x: {bad:?}");
}
