//! `qsim whatif`: common random numbers, the book's optimizations that win
//! at low concurrency and lose at high, relative overrides and speed-up
//! semantics.

use crate::support::{qsim, widen_95_to_999};
use qsim::kernel::Stop;
use qsim::model::Override;
use qsim::sweep::{
    Change, Difference, ModelFile, RunSettings, WhatIfOptions, WhatIfReport, what_if,
};
use std::path::Path;

fn ov(s: &str) -> Override {
    Override::parse(s).expect("a valid override")
}

/// `changes` on `model` at populations `at`, `reps` x `jobs` per run.
fn compare(
    model: &str,
    base: &[&str],
    changes: &[Change],
    at: &[u32],
    reps: u32,
    jobs: u64,
) -> WhatIfReport {
    let source =
        ModelFile::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join(model)).expect("model");
    let base: Vec<Override> = base.iter().map(|s| ov(s)).collect();
    let points: Vec<Vec<Override>> = at
        .iter()
        .map(|n| vec![ov(&format!("workload.population={n}"))])
        .collect();
    let options = WhatIfOptions {
        settings: RunSettings {
            replications: Some(reps),
            stop: Some(Stop::Jobs(jobs)),
            ..RunSettings::default()
        },
        ..WhatIfOptions::default()
    };
    what_if(&source, &base, changes, &points, &options).expect("what-if runs")
}

/// Exact throughput of `model` with `overrides` (a product-form network:
/// exact MVA, load-dependent where a station has a speed curve or servers).
fn exact_x(model: &str, overrides: &[&str]) -> f64 {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(model);
    let overrides: Vec<Override> = overrides.iter().map(|s| ov(s)).collect();
    let m = qsim::model::load_file(&path, &overrides).expect("model loads");
    qsim::theory::solution::solve(m.network.spec())
        .expect("product form")
        .throughput_per_s
}

/// Asserts the paired difference `d` (from `reps` replications) holds the
/// exact difference `exact_gain` within its 99.9% interval plus `allow`
/// (an absolute allowance for the bias a finite warm-up leaves), and that
/// its 95% half-width is at most `max_ci` (so the comparison can fail).
fn assert_gain(label: &str, d: &Difference, reps: u32, exact_gain: f64, allow: f64, max_ci: f64) {
    println!(
        "{label}: simulated ΔX {:+.2} ± {:.2}/s, exact {exact_gain:+.2}/s",
        d.mean, d.ci95
    );
    assert!(
        (d.mean - exact_gain).abs() <= widen_95_to_999(reps - 1) * d.ci95 + allow,
        "{label}: simulated ΔX {} ± {}, exact {exact_gain}",
        d.mean,
        d.ci95
    );
    assert!(
        d.ci95 <= max_ci,
        "{label}: paired interval ± {} too wide to test anything (guard {max_ci})",
        d.ci95
    );
}

fn gains(d: &Difference) -> bool {
    d.mean - d.ci95 > 0.0
}

fn loses(d: &Difference) -> bool {
    d.mean + d.ci95 < 0.0
}

/// PGO (25% less CPU per transaction) gains at 20 threads and loses at 150,
/// with 95% intervals on either side of zero (book fig. 4-30); common
/// random numbers make the paired interval at least 5 times narrower than
/// two independent runs' (6.2x measured with the model's seed; 5.4-6.5x
/// over seeds 1-4).
#[test]
fn pgo_sign_flips_and_common_random_numbers_pay() {
    let pgo = Change::Set(vec![ov("stations.cpu.service.mean=*0.75")]);
    let r = compare("models/pgo.toml", &[], &[pgo], &[20, 150], 10, 30_000);
    let c = &r.changes[0];
    let (low, high) = (&c.points[0].throughput_per_s, &c.points[1].throughput_per_s);
    assert!(gains(low), "PGO at 20 threads: {low:?}");
    assert!(loses(high), "PGO at 150 threads: {high:?}");
    assert!(
        low.ci_narrowing >= 5.0,
        "paired CI {} vs unpaired {}: only {:.1}x narrower",
        low.ci95,
        low.unpaired_ci95,
        low.ci_narrowing
    );
    // The ranking is at the last (highest) load: a loss there is a loss.
    assert_eq!(c.points[1].point, "workload.population=150");
    // The network is product-form (a delay, a PS multi-server, a latch
    // with a USL curve): each paired difference against exact MVA's within
    // its 99.9% interval, the 95% half-width guarded at 0.5% of X at 20
    // threads (0.3% measured) and 4% at 150 (3%, the latch's retrograde
    // curve makes the difference noisy there): a change misjudged by about
    // 1% or 8% of X fails.
    let guard = [0.005, 0.04];
    for (k, n) in [20u32, 150].into_iter().enumerate() {
        let at = format!("workload.population={n}");
        let base = exact_x("models/pgo.toml", &[&at]);
        let gain = exact_x("models/pgo.toml", &[&at, "stations.cpu.service.mean=*0.75"]) - base;
        let d = &c.points[k].throughput_per_s;
        assert_gain(
            &format!("PGO at {n} threads"),
            d,
            10,
            gain,
            0.0,
            guard[k] * base,
        );
    }
}

/// The same through `--speedup`: the CPU stage 1.25 times as fast is the
/// speed-up law of a queue (service / 1.25), and it ranks below the latch's
/// speed-up at 150 threads, where the latch limits.
#[test]
fn speedup_ranks_the_latch_above_the_cpu_at_high_load() {
    let changes = ["cpu", "latch"].map(|s| Change::SpeedUp {
        station: s.into(),
        factor: 1.25,
    });
    let r = compare("models/pgo.toml", &[], &changes, &[20, 150], 5, 20_000);
    assert_eq!(r.changes[0].change, "speedup latch x1.25");
    let cpu = &r.changes[1];
    assert_eq!(cpu.change, "speedup cpu x1.25");
    assert!(gains(&cpu.points[0].throughput_per_s));
    assert!(loses(&cpu.points[1].throughput_per_s));
    // Speeding up the latch's curve (rate x 1.25 at every n) pays at 150.
    assert!(gains(&r.changes[0].points[1].throughput_per_s));
    // Against exact MVA of the model with the speed-up written as an
    // override (not through the code under test), guarded as above.
    for (c, station) in [(&r.changes[1], "cpu"), (&r.changes[0], "latch")] {
        for (k, n) in [20u32, 150].into_iter().enumerate() {
            let at = format!("workload.population={n}");
            let base = exact_x("models/pgo.toml", &[&at]);
            // A latch with a curve is faster by its curve's rates.
            let faster = match station {
                "cpu" => "stations.cpu.service.mean=*0.8",
                _ => "stations.latch.speed.usl.lambda=*1.25",
            };
            let gain = exact_x("models/pgo.toml", &[&at, faster]) - base;
            let d = &c.points[k].throughput_per_s;
            let guard = [0.005, 0.04][k];
            assert_gain(
                &format!("{station} x1.25 at {n}"),
                d,
                5,
                gain,
                0.0,
                guard * base,
            );
        }
    }
}

/// In the state of the book's fig. 4-29 (latch2 collapsed, the model's
/// initial state) a faster latch1 does not pay at 500 threads: latch2
/// limits. (From all threads thinking, the fast state, latch1 still limits
/// and a 25% faster latch1 gives ~25% more.)
#[test]
fn latch1_speedup_does_not_pay_when_latch2_collapsed() {
    let latch1 = Change::SpeedUp {
        station: "latch1".into(),
        factor: 1.25,
    };
    let r = compare(
        "models/latch_numa_optimized.toml",
        &[],
        std::slice::from_ref(&latch1),
        &[500],
        5,
        20_000,
    );
    let d = &r.changes[0].points[0].throughput_per_s;
    let base = r.baseline[0].throughput_per_s.mean;
    assert!(
        d.mean + d.ci95 < 0.01 * base,
        "latch1 x1.25 at 500 threads (collapsed): {d:?} on {base}/s"
    );
    // The stationary law of both models sits in latch2's collapse (exact
    // MVA: 80.08/s, 499.5 threads at latch2), where the runs start and
    // stay, so the exact gain of the faster latch1 is exact MVA's
    // difference (-0.0016/s): the paired difference (-0.0020 ± 0.0005/s)
    // within its 99.9% interval (5 replications), the half-width guarded
    // at 0.001% of X (0.0008/s), so a change misjudged by about 0.002/s
    // fails (at most 0.0025/s, 0.003% of X). Before, the test asked only
    // for a difference below 1% of X.
    let faster: Vec<String> = (0..3)
        .map(|i| format!("stations.latch1.speed.table[{i}].rate=*1.25"))
        .collect();
    let mut with: Vec<&str> = vec!["workload.population=500"];
    with.extend(faster.iter().map(String::as_str));
    let exact_base = exact_x(
        "models/latch_numa_optimized.toml",
        &["workload.population=500"],
    );
    let gain = exact_x("models/latch_numa_optimized.toml", &with) - exact_base;
    assert_gain(
        "latch1 x1.25 at 500 (collapsed)",
        d,
        5,
        gain,
        0.0,
        1e-5 * exact_base,
    );
    // Both states exist at 500 threads, for the baseline and the change,
    // and the report says so where the figures are.
    for (bistable, warnings) in [
        (r.baseline[0].bistable, &r.baseline[0].warnings),
        (
            r.changes[0].points[0].bistable,
            &r.changes[0].points[0].warnings,
        ),
    ] {
        assert_eq!(bistable, Some(true), "{warnings:?}");
        assert!(
            warnings.iter().any(|w| w.contains("the model is bistable")),
            "{warnings:?}"
        );
    }
    let fast = compare(
        "models/latch_numa_optimized.toml",
        &["simulation.initial=thinking"],
        &[latch1],
        &[500],
        5,
        20_000,
    );
    let d = &fast.changes[0].points[0].throughput_per_s;
    assert!(d.relative > 0.15 && gains(d), "fast state: {d:?}");
}

/// The redo-log optimization (a log latch 2.5 times as fast) gains at 10
/// threads and loses at 200 (book fig. 4-31; models/redo_log.toml).
#[test]
fn redo_log_wins_low_loses_high() {
    let log = Change::SpeedUp {
        station: "log".into(),
        factor: 2.5,
    };
    let r = compare("models/redo_log.toml", &[], &[log], &[10, 200], 5, 20_000);
    let c = &r.changes[0];
    assert!(gains(&c.points[0].throughput_per_s), "{:?}", c.points[0]);
    assert!(loses(&c.points[1].throughput_per_s), "{:?}", c.points[1]);
    for (k, n) in [10u32, 200].into_iter().enumerate() {
        let at = format!("workload.population={n}");
        let base = exact_x("models/redo_log.toml", &[&at]);
        let gain = exact_x(
            "models/redo_log.toml",
            &[&at, "stations.log.service.mean=*0.4"],
        ) - base;
        let d = &c.points[k].throughput_per_s;
        // Guarded at 1% of X at 10 threads (0.4% measured) and 2% at 200
        // (1.5%): a change misjudged by about 3% or 6% of X fails.
        let guard = [0.01, 0.02][k];
        assert_gain(&format!("log x2.5 at {n}"), d, 5, gain, 0.0, guard * base);
    }
}

/// Same seed, same numbers, whatever the thread count.
#[test]
fn results_do_not_depend_on_threads() {
    let run = |threads| {
        let out = qsim(&[
            "whatif",
            "models/pgo.toml",
            "--speedup",
            "25%",
            "--stations",
            "cpu,latch",
            "--at",
            "workload.population=20",
            "--jobs",
            "3000",
            "--replications",
            "3",
            "--threads",
            threads,
            "--format",
            "json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    assert_eq!(run("1"), run("2"));
}

/// The CLI says "no significant change" where the interval straddles zero,
/// and refuses what it cannot compare with a clear message.
#[test]
fn cli_verdicts_and_errors() {
    let out = qsim(&[
        "whatif",
        "models/pgo.toml",
        "--speedup",
        "25%",
        "--stations",
        "client",
        "--at",
        "workload.population=150",
        "--jobs",
        "3000",
        "--replications",
        "3",
        "--format",
        "csv",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8_lossy(&out.stdout);
    assert!(csv.starts_with(
        "change,point,metric,baseline,baseline_ci95,difference,ci95,unpaired_ci95,relative,significant,baseline_bistable,bistable,baseline_state,state\n"
    ));
    assert_eq!(csv.lines().count(), 4, "{csv}");
    for (args, want) in [
        (
            &["--speedup", "25%", "--stations", "nope"][..],
            "no station named `nope`",
        ),
        (&["--speedup", "fast"][..], "--speedup expects a percentage"),
        (&[][..], "nothing to compare"),
        (
            &["--change", "simulation.seed=7"][..],
            "changes how the model is run",
        ),
        (
            &["--change", "stations.cpu.service.mean=-2"][..],
            "(set by --change stations.cpu.service.mean=-2)",
        ),
        // Each error names the flag the user typed.
        (
            &["--change", "stations.cpu.service.mean=/0"][..],
            "--change stations.cpu.service.mean=/0: malformed relative value",
        ),
        (
            &["--speedup", "25%", "--at", "nosuch.key=1,2"][..],
            "--at nosuch.key=1,2: unknown key path",
        ),
        (
            &["--speedup", "25%", "--at", "workload.population="][..],
            "--at: invalid `workload.population=`",
        ),
        (
            &["--speedup", "25%", "--stations", "cpu,client,cpu"][..],
            "--stations names cpu twice (items 1 and 3)",
        ),
        (
            &["--speedup", "x1e308"][..],
            "beyond the range x0.001 to x1000",
        ),
        // A slow-down is written with its sign, as the hint says.
        (
            &["--speedup", "-100%"][..],
            "the station would never finish",
        ),
    ] {
        let mut a = vec![
            "whatif",
            "models/pgo.toml",
            "--jobs",
            "1000",
            "--replications",
            "2",
        ];
        a.extend(args);
        let out = qsim(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert!(err.contains(want), "{a:?}: {err}");
    }
}

/// A relative override changes the number the model gives, everywhere an
/// override is accepted; what it cannot change is a located error.
#[test]
fn relative_overrides() {
    let load = |set: &[&str]| {
        let ov: Vec<Override> = set.iter().map(|s| ov(s)).collect();
        qsim::model::load_file(
            Path::new(&format!("{}/models/pgo.toml", env!("CARGO_MANIFEST_DIR"))),
            &ov,
        )
    };
    let m = load(&[
        "stations.cpu.service.mean=*0.75",
        "workload.population=+10%",
    ])
    .expect("loads");
    let spec = m.network.spec();
    let cpu = spec.stations.iter().find(|s| s.name == "cpu").unwrap();
    assert!((cpu.service[0].as_ref().unwrap().mean() - 0.006).abs() < 1e-15);
    assert!(matches!(
        spec.classes[0].workload,
        qsim::kernel::Workload::Closed {
            population: 165,
            ..
        }
    ));
    for (set, want) in [
        ("workload.population=*1.01", "takes a whole number"),
        (
            "stations.cpu.discipline=*2",
            "changes a number, but stations.cpu.discipline is \"ps\"",
        ),
        ("stations.cpu.servers=/0", "cannot divide by zero"),
        (
            "stations.cpu.servers=-200%",
            "found -64: a count cannot be negative",
        ),
        (
            "stations.cpu.nothing=*2",
            "unknown key path stations.cpu.nothing",
        ),
        // The latch's speed curve sets its rate: its service mean alone
        // changes nothing (it used to give the identical throughput).
        ("stations.latch.service.mean=*0.5", "has no effect"),
    ] {
        let err = load(&[set]).expect_err(set).to_string();
        assert!(err.contains(want), "{set}: {err}");
        assert!(
            err.contains("--set"),
            "{set}: located at the override: {err}"
        );
    }
}

/// Keys that would be read but change nothing are never silent.
#[test]
fn keys_without_effect_are_said() {
    let text = |extra: &str| {
        format!(
            "[workload]\ntype = \"closed\"\npopulation = 3\nroute = [\"l\"]\n\n[stations.l]\nkind = \"latch\"\nservice = {{ dist = \"exponential\", mean = 0.01 }}\n{extra}\n"
        )
    };
    let m = qsim::model::load_str("m.toml", &text("wake = \"all\""), &[]).expect("a warning only");
    let w: Vec<String> = m.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        w.iter()
            .any(|w| w.contains("m.toml:9:8") && w.contains("wake has no effect")),
        "{w:?}"
    );
    let m = qsim::model::load_str(
        "m.toml",
        &text("service_by_class = { default = { dist = \"exponential\", mean = 0.02 } }"),
        &[],
    )
    .expect("a warning only");
    let w: Vec<String> = m.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        w.iter()
            .any(|w| w.contains("m.toml:8:11") && w.contains("service has no effect")),
        "{w:?}"
    );
    let batch = text("").replace("kind = \"latch\"", "kind = \"batch\"\nmax_batch = 4\nspeed = { usl = { sigma = 0.1, kappa = 0.0, lambda = 100 } }");
    let err = qsim::model::load_str("m.toml", &batch, &[])
        .expect_err("speed on a batch")
        .to_string();
    assert!(
        err.contains("stations.l.speed")
            && err.contains("a speed curve applies to delay, queue and latch"),
        "{err}"
    );
}
