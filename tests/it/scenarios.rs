//! The scenario catalogue of DESIGN.md: each model in models/ against its target.
//!
//! Every test loads the model file itself (so the file and its header's
//! claims are what is tested), overrides what the scenario varies, runs a
//! modest number of replications and asserts the target. Where the target is
//! a value with a tolerance, the 95% confidence interval must lie within the
//! tolerance band; where it is a comparison, the two intervals must not
//! overlap.

use crate::support::{assert_close, mean_of};
use qsim_analytic::{mva, single};
use qsim_kernel::{Estimate, RunConfig, RunResults, StationResults, Stop, Warmup};
use qsim_model::{Model, Override, load_file};
use std::path::Path;

/// Loads `models/NAME.toml` with `--set`-style overrides.
fn load(name: &str, overrides: &[&str]) -> Model {
    let path =
        Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/models")).join(format!("{name}.toml"));
    let overrides: Vec<Override> = overrides
        .iter()
        .map(|o| Override::parse(o).unwrap())
        .collect();
    match load_file(&path, &overrides) {
        Ok(m) => m,
        Err(e) => panic!("models/{name}.toml does not load:\n{e}"),
    }
}

/// Runs a model with `reps` replications of `jobs` completions after
/// discarding `warmup` completions (initial state as the model says).
fn run(m: &Model, reps: u32, jobs: u64, warmup: u64) -> RunResults {
    let config = RunConfig {
        seed: 20261122,
        replications: reps,
        stop: Stop::Jobs(jobs),
        warmup: Warmup::Jobs(warmup),
        ..m.run.clone()
    };
    qsim_kernel::run(&m.network, &config).expect("run fails")
}

fn station<'a>(r: &'a RunResults, name: &str) -> &'a StationResults {
    r.stations
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no station {name}"))
}

/// Asserts the whole 95% interval of `e` lies within `target` ± `tol` (relative).
fn assert_within(label: &str, e: Estimate, target: f64, tol: f64) {
    let (lo, hi) = (e.mean - e.ci95, e.mean + e.ci95);
    assert!(
        lo >= target * (1.0 - tol) && hi <= target * (1.0 + tol),
        "{label}: {} ± {} is not within {target} ± {}%",
        e.mean,
        e.ci95,
        tol * 100.0
    );
}

/// Asserts `lo` < `hi` with non-overlapping 95% intervals.
fn assert_below(label: &str, lo: Estimate, hi: Estimate) {
    assert!(
        lo.mean + lo.ci95 < hi.mean - hi.ci95,
        "{label}: expected {} ± {} to lie below {} ± {}",
        lo.mean,
        lo.ci95,
        hi.mean,
        hi.ci95
    );
}

/// Power X / R with an interval from the two relative half-widths (a
/// conservative first-order bound).
fn power(r: &RunResults) -> Estimate {
    let x = r.system.throughput_per_s;
    let rt = mean_of(&r.system.response_time_s);
    let p = x.mean / rt.mean;
    Estimate {
        mean: p,
        ci95: p * (x.ci95 / x.mean + rt.ci95 / rt.mean),
    }
}

/// Index of the largest estimate, asserting it lies clearly above every other.
fn clear_argmax(label: &str, points: &[(u32, Estimate)]) -> u32 {
    let best = points
        .iter()
        .max_by(|a, b| a.1.mean.total_cmp(&b.1.mean))
        .unwrap();
    for p in points {
        if p.0 != best.0 {
            assert_below(
                &format!("{label}: N={} vs the best N={}", p.0, best.0),
                p.1,
                best.1,
            );
        }
    }
    best.0
}

#[test]
fn latch_numa_collapses_from_2000_to_200() {
    // The book's figures (2000/s at 100 threads, 200/s at 500) are the
    // speed table's; the model's exact answer is load-dependent MVA (the
    // latch holds 86 and 499 of the threads): 2000/s and 201.8/s. Compared
    // within the 99.9% interval with the 95% half-width guarded at 2%, so a
    // bias of about 7% fails.
    for n in [100u32, 500] {
        let m = load("latch_numa", &[&format!("workload.population={n}")]);
        let exact = qsim_theory::solution::solve(m.network.spec()).expect("product form");
        assert!(
            (exact.throughput_per_s / [2000.0, 201.8][usize::from(n == 500)] - 1.0).abs() < 1e-3
        );
        let r = run(&m, 5, 50_000, 10_000);
        assert_close(
            &format!("latch_numa N={n} throughput"),
            r.system.throughput_per_s,
            exact.throughput_per_s,
            5,
            0.0,
            0.02,
        );
        assert!(
            station(&r, "latch1").utilization.mean > 0.99,
            "latch1 is the bottleneck at N={n}"
        );
        for l in ["latch2", "latch3"] {
            let u = station(&r, l).utilization;
            let at = exact.stations.iter().find(|s| s.name == l).unwrap();
            assert_close(
                &format!("latch_numa N={n} {l} utilization"),
                u,
                at.utilization,
                5,
                0.0,
                0.05,
            );
        }
    }
}

#[test]
fn latch_numa_optimized_moves_the_bottleneck_and_does_not_help() {
    // Both models are product-form (latches with exponential sections and
    // speed tables): exact load-dependent MVA at 500 threads. The optimized
    // model's stationary law sits almost wholly in latch2's collapse (499.5
    // of the 500 threads there, 80.08/s), the state its runs start in and
    // stay in, so the run is compared with it: within its 99.9% interval
    // (5 replications, 3.1 times the 95% one). Measured 95% half-widths:
    // 2.7% of X and of latch1's utilization (the collapse keeps long
    // correlations), guarded at 4%, so a bias of about 8.5% fails (at most
    // 12.4%); latch2 is busy and holds 499.5 threads to within 0.01%. Before, the two latch_numa tests saw a throughput
    // only as "below the unoptimized one".
    let before = run(
        &load("latch_numa", &["workload.population=500"]),
        5,
        50_000,
        10_000,
    );
    let optimized = load("latch_numa_optimized", &["workload.population=500"]);
    let exact = qsim_theory::solution::solve(optimized.network.spec()).expect("product form");
    let after = run(&optimized, 5, 100_000, 5_000);
    assert_close(
        "latch_numa_optimized N=500 throughput",
        after.system.throughput_per_s,
        exact.throughput_per_s,
        5,
        0.0,
        0.04,
    );
    let at = |name: &str| exact.stations.iter().find(|s| s.name == name).unwrap();
    for (l, guard) in [("latch1", 0.04), ("latch2", 0.001)] {
        assert_close(
            &format!("latch_numa_optimized N=500 {l} utilization"),
            station(&after, l).utilization,
            at(l).utilization,
            5,
            0.0,
            guard,
        );
    }
    assert_close(
        "latch_numa_optimized N=500 latch2 mean jobs",
        station(&after, "latch2").mean_jobs,
        at("latch2").mean_jobs,
        5,
        0.0,
        0.001,
    );
    assert_below(
        "throughput at 500 threads: optimized latch1 vs before",
        after.system.throughput_per_s,
        before.system.throughput_per_s,
    );
    let (l1, l2) = (station(&after, "latch1"), station(&after, "latch2"));
    assert!(
        l2.utilization.mean > 0.99,
        "latch2 is the bottleneck: utilization {}",
        l2.utilization.mean
    );
    assert!(
        l1.utilization.mean < 0.5,
        "latch1 is no longer the bottleneck: utilization {}",
        l1.utilization.mean
    );
    let crowd = l2.mean_jobs.mean + station(&after, "latch3").mean_jobs.mean;
    assert!(
        crowd > 0.95 * 500.0,
        "threads wait at latch2/latch3: {crowd}"
    );
}

#[test]
fn cpu_two_disks_matches_exact_mva() {
    // Power: 99.9% tolerances (10 replications, 2.11 x the 95% half-width)
    // measured at 0.3-0.9% of exact MVA, so a bias of about 0.9% fails in every
    // figure; the guards (about 1.5 x the measured widths) allow at most 0.8%
    // (X, U) and 1.5% (R).
    let m = load("cpu_two_disks", &[]);
    let r = run(&m, 10, 50_000, 5_000);
    let stations = [
        mva::Station::queue("cpu", 10.0 * 0.005),
        mva::Station::queue("disk1", 4.5 * 0.030),
        mva::Station::queue("disk2", 4.5 * 0.027),
    ];
    let exact = mva::exact(&stations, 1.0, 20).unwrap();
    let e = exact.at(20).unwrap();
    assert_close(
        "cpu_two_disks throughput",
        r.system.throughput_per_s,
        e.throughput_per_s,
        10,
        0.0,
        0.0037,
    );
    assert_close(
        "cpu_two_disks response",
        mean_of(&r.system.response_time_s),
        e.response_time_s,
        10,
        0.0,
        0.007,
    );
    for (i, name) in ["cpu", "disk1", "disk2"].iter().enumerate() {
        let st = station(&r, name);
        assert_close(
            &format!("cpu_two_disks {name} utilization"),
            st.utilization,
            e.stations[i].utilization,
            10,
            0.0,
            0.0036,
        );
    }
}

#[test]
fn mysql57_latches_rise_peak_and_fall() {
    // Product-form (a delay, a PS multi-server, three USL latches, a 0.9
    // branch): each throughput against exact load-dependent MVA within its
    // 99.9% interval, the 95% half-width guarded at 1%, so a bias of about
    // 3% fails; the header's figures against the same exact answers.
    let header = [
        (10u32, 4760.0),
        (100, 19_400.0),
        (200, 13_500.0),
        (400, 8600.0),
        (1000, 4200.0),
    ];
    let x: Vec<Estimate> = [10u32, 50, 200, 800]
        .iter()
        .map(|&n| {
            let m = load("mysql57_latches", &[&format!("workload.population={n}")]);
            let exact = qsim_theory::solution::solve(m.network.spec()).expect("product form");
            let x = run(&m, 5, 30_000, 5_000).system.throughput_per_s;
            println!(
                "mysql57_latches N={n}: {} ± {}/s, exact {}/s",
                x.mean, x.ci95, exact.throughput_per_s
            );
            assert_close(
                &format!("mysql57_latches N={n} throughput"),
                x,
                exact.throughput_per_s,
                5,
                0.0,
                0.01,
            );
            x
        })
        .collect();
    assert_below("mysql57_latches: X(10) < X(50)", x[0], x[1]);
    assert_below("mysql57_latches: X(200) < X(50)", x[2], x[1]);
    assert_below("mysql57_latches: X(800) < X(200)", x[3], x[2]);
    for (n, claimed) in header {
        let m = load("mysql57_latches", &[&format!("workload.population={n}")]);
        let exact = qsim_theory::solution::solve(m.network.spec()).expect("product form");
        assert!(
            (claimed / exact.throughput_per_s - 1.0).abs() < 0.02,
            "models/mysql57_latches.toml header: {claimed}/s at N={n}, exact {}/s",
            exact.throughput_per_s
        );
    }
}

#[test]
fn pgo_helps_at_low_concurrency_and_hurts_at_high() {
    // Product-form (a delay, a 64-core PS cpu, a latch with a USL curve):
    // each throughput against exact load-dependent MVA within its 99.9%
    // interval (5 replications, 3.1 times the 95% one). Measured 95%
    // half-widths: 0.45% at 20 threads, 0.2-0.36% at 100, guarded at 0.7%
    // and 0.55%, so a bias of about 1.4% (at 20) or 0.6-1.1% (at 100)
    // fails (at most 2.2% and 1.7%). The header's sign flip holds for the exact answers,
    // and the runs show it with separated intervals.
    let x = |n: u32, cpu: f64| {
        let m = load(
            "pgo",
            &[
                &format!("workload.population={n}"),
                &format!("stations.cpu.service.mean={cpu}"),
            ],
        );
        let exact = qsim_theory::solution::solve(m.network.spec())
            .expect("product form")
            .throughput_per_s;
        let x = run(&m, 5, 100_000, 10_000).system.throughput_per_s;
        assert_close(
            &format!("pgo N={n} cpu {cpu} s throughput"),
            x,
            exact,
            5,
            0.0,
            if n == 20 { 0.007 } else { 0.0055 },
        );
        (x, exact)
    };
    let ((x20, e20), (x20p, e20p)) = (x(20, 0.008), x(20, 0.006));
    let ((x100, e100), (x100p, e100p)) = (x(100, 0.008), x(100, 0.006));
    assert!(
        e20p > e20 && e100p < e100,
        "exact: {e20} -> {e20p} at 20, {e100} -> {e100p} at 100"
    );
    assert_below("pgo at 20 threads: without PGO < with PGO", x20, x20p);
    assert_below("pgo at 100 threads: with PGO < without PGO", x100p, x100);
}

#[test]
fn sysbench_cpu_response_vs_utilization_is_mmc() {
    // Power: 99.9% tolerances measured at 0.5% and 0.8% (R at 30% and 60%),
    // 8.4% (R at 96%, the slow-mixing point) and under 0.5% (utilizations) of
    // the M/M/2 figures, so biases of about those sizes fail; the guards (5%,
    // 1%) allow at most 10.6% and 2.1%.
    // c = 2 CPUs, S = 1 ms: rate = rho * 2000/s.
    let mut r_at = Vec::new();
    for (rho, jobs) in [(0.3, 100_000u64), (0.6, 200_000), (0.96, 600_000)] {
        let rate = rho * 2000.0;
        let m = load("sysbench_cpu", &[&format!("workload.rate_per_s={rate}")]);
        let r = run(&m, 10, jobs, jobs / 20);
        let exact = single::mmc(rate, 1000.0, 2).unwrap();
        let rt = mean_of(&r.system.response_time_s);
        assert_close(
            &format!("sysbench_cpu R at rho={rho}"),
            rt,
            exact.response_time_s,
            10,
            0.0,
            0.05,
        );
        assert_close(
            &format!("sysbench_cpu utilization at rho={rho}"),
            station(&r, "cpu").utilization,
            rho,
            10,
            0.0,
            0.01,
        );
        r_at.push(rt);
    }
    // ~13 ms at 96%.
    assert_within("sysbench_cpu R at 96%", r_at[2], 0.013, 0.10);
    // The bend: from 30% to 60% R grows by under 0.5 ms; from 60% to 96% by over 10 ms.
    assert!(r_at[1].mean - r_at[0].mean < 0.0005 && r_at[2].mean - r_at[1].mean > 0.010);
}

#[test]
fn throttling_keeps_throughput_near_the_peak() {
    let x = |n: u32, limit: &str| {
        let m = load(
            "throttling",
            &[
                &format!("workload.population={n}"),
                &format!("regions.throttle.limit={limit}"),
            ],
        );
        run(&m, 5, 30_000, 10_000)
    };
    // Where the pool does not bind (100 clients, limit 100) and where
    // there is none, the latches are a product-form network: exact
    // load-dependent MVA. Within the 99.9% interval (5 replications, 3.1
    // times the 95% one); half-widths 0.8%, guarded at 1.2%: a bias of
    // about 2.5% fails (at most 3.7%). The pool that
    // binds (200 clients and more) makes the network leave product form
    // (and its chain is too large to solve here), so the throttled figures
    // are checked against the runs' own peak.
    let exact = |n: u32| {
        let m = load(
            "throttling",
            &[
                &format!("workload.population={n}"),
                "regions.throttle.limit=none",
            ],
        );
        qsim_theory::solution::solve(m.network.spec())
            .expect("product form")
            .throughput_per_s
    };
    let at_100 = x(100, "100").system.throughput_per_s;
    assert_close(
        "throttling N=100 (pool not binding)",
        at_100,
        exact(100),
        5,
        0.0,
        0.012,
    );
    let peak = [200u32, 300]
        .iter()
        .map(|&n| x(n, "100").system.throughput_per_s)
        .chain([at_100])
        .max_by(|a, b| a.mean.total_cmp(&b.mean))
        .unwrap();
    let limited = x(1000, "100");
    let xl = limited.system.throughput_per_s;
    assert!(
        xl.mean - xl.ci95 >= 0.9 * (peak.mean + peak.ci95),
        "with the limit, 1000 clients: {} ± {} vs peak {} ± {}",
        xl.mean,
        xl.ci95,
        peak.mean,
        peak.ci95
    );
    let inside = limited.regions[0].mean_inside.mean;
    assert!(
        inside <= 100.0 + 1e-6,
        "the region holds at most its limit: {inside}"
    );
    let free = x(1000, "none").system.throughput_per_s;
    assert_close(
        "throttling N=1000 without the pool",
        free,
        exact(1000),
        5,
        0.0,
        0.012,
    );
    assert!(
        free.mean + free.ci95 < 0.2 * (peak.mean - peak.ci95),
        "without the limit, 1000 clients collapse: {} ± {} vs peak {}",
        free.mean,
        free.ci95,
        peak.mean
    );
}

#[test]
fn semisync_knee_before_peak() {
    // One PS station with a USL curve and no think time: every job is
    // always there, so X(N) is the curve's rate at N (exact MVA gives it)
    // and the power X/R = X^2/N. Each throughput within its 99.9% interval
    // of the exact one (5 replications, 3.1 times the 95% one); measured
    // 95% half-widths 0.53-0.61%, guarded at 0.9%, so a bias of about 1.9%
    // fails (at most 2.8%). The peak (500) and the knee (100) hold for the
    // exact answers and, with separated intervals, for the runs.
    let mut xs = Vec::new();
    let mut ps = Vec::new();
    let mut exact_x = Vec::new();
    let mut exact_p = Vec::new();
    for n in [50u32, 100, 200, 300, 500, 700, 1000] {
        let m = load("semisync_knee", &[&format!("workload.population={n}")]);
        let exact = qsim_theory::solution::solve(m.network.spec())
            .expect("product form")
            .throughput_per_s;
        let r = run(&m, 5, 30_000, 3_000);
        assert_close(
            &format!("semisync_knee N={n} throughput"),
            r.system.throughput_per_s,
            exact,
            5,
            0.0,
            0.009,
        );
        exact_x.push((n, exact));
        exact_p.push((n, exact * exact / f64::from(n)));
        xs.push((n, r.system.throughput_per_s));
        ps.push((n, power(&r)));
    }
    let exact_argmax = |v: &[(u32, f64)]| v.iter().max_by(|a, b| a.1.total_cmp(&b.1)).unwrap().0;
    assert_eq!(exact_argmax(&exact_x), 500, "exact peak: {exact_x:?}");
    assert_eq!(exact_argmax(&exact_p), 100, "exact knee: {exact_p:?}");
    assert_eq!(
        clear_argmax("semisync_knee throughput", &xs),
        500,
        "throughput peaks at 500 clients"
    );
    assert_eq!(
        clear_argmax("semisync_knee power X/R", &ps),
        100,
        "the knee is at 100 clients"
    );
}

#[test]
fn paxos_serial_is_flat_at_one_over_rtt() {
    // Power: the whole 95% interval must lie within 3% of 1/RTT = 100/s (exact
    // for a saturated serial link), so any bias above 3% fails (less when the
    // interval is wider).
    for n in [50u32, 100, 150] {
        let m = load("paxos_serial", &[&format!("workload.population={n}")]);
        let r = run(&m, 5, 3_000, 300);
        let x = r.system.throughput_per_s;
        assert_within(&format!("paxos_serial N={n} throughput"), x, 100.0, 0.03);
        let tpmc = m
            .derived
            .iter()
            .find(|d| d.name == "tpmC")
            .expect("tpmC is declared");
        let v = tpmc
            .expr
            .eval(&|name| (name == "throughput").then_some(x.mean))
            .unwrap();
        assert!((v - 2700.0).abs() <= 0.03 * 2700.0, "tpmC at N={n}: {v}");
    }
    let base = run(&load("paxos_serial", &[]), 5, 3_000, 300)
        .system
        .throughput_per_s;
    for variant in ["stations.paxos.pipeline=4", "stations.paxos.max_batch=8"] {
        let x = run(&load("paxos_serial", &[variant]), 5, 3_000, 300)
            .system
            .throughput_per_s;
        assert!(
            x.mean - x.ci95 > 2.0 * (base.mean + base.ci95),
            "{variant} raises throughput: {} vs {}",
            x.mean,
            base.mean
        );
    }
}

/// |a·b − c| within the first-order propagation of the three 95% half-widths:
/// an identity between estimates of one run, which simulation must keep.
fn assert_product(label: &str, a: Estimate, b: Estimate, c: Estimate) {
    let tol = a.mean * b.ci95 + b.mean * a.ci95 + c.ci95;
    assert!(
        (a.mean * b.mean - c.mean).abs() <= tol,
        "{label}: {} × {} = {} but {} ± {} (tolerance {tol})",
        a.mean,
        b.mean,
        a.mean * b.mean,
        c.mean,
        c.ci95
    );
}

#[test]
fn group_commit_matches_the_fsync_counts_of_the_report() {
    // The report: 16 threads, 16,000 transactions in ~3 s; 2,885 binlog
    // groups; 2,962 binlog and 4,887 redo fsyncs. Each is one measurement,
    // and the per-second figures rest on a duration given as "3 s" (2.5 s
    // to 3.5 s would round to it, ±17%), so rates must land within ±15% of
    // count / 3 s; the ratios of counts do not depend on the duration and
    // must land within ±10% (run-to-run variation of a single measurement).
    let r = run(&load("group_commit", &[]), 5, 50_000, 5_000);
    let x = r.system.throughput_per_s;
    let redo = station(&r, "redo");
    let binlog = station(&r, "binlog");
    let (rb, rn) = (redo.mean_batch_size.unwrap(), redo.batches_per_s.unwrap());
    let (bb, bn) = (
        binlog.mean_batch_size.unwrap(),
        binlog.batches_per_s.unwrap(),
    );
    assert_within("throughput", x, 16_000.0 / 3.0, 0.15);
    assert_within(
        "transactions per binlog group",
        bb,
        16_000.0 / 2_885.0,
        0.10,
    );
    assert_within("binlog fsyncs/s", bn, 2_962.0 / 3.0, 0.15);
    assert_within("redo fsyncs/s", rn, 4_887.0 / 3.0, 0.15);
    let ratio = Estimate {
        mean: rn.mean / bn.mean,
        ci95: rn.mean / bn.mean * (rn.ci95 / rn.mean + bn.ci95 / bn.mean),
    };
    assert_within(
        "redo fsyncs per binlog fsync",
        ratio,
        4_887.0 / 2_962.0,
        0.10,
    );
    // Flow balance: every transaction is in one binlog group, and puts two
    // records (prepare and commit) in redo fsyncs.
    assert_product("binlog: fsyncs/s × group size = X", bn, bb, x);
    let two_x = Estimate {
        mean: 2.0 * x.mean,
        ci95: 2.0 * x.ci95,
    };
    assert_product("redo: fsyncs/s × group size = 2X", rn, rb, two_x);
    assert_within(
        "redo throughput = 2X",
        redo.throughput_per_s,
        two_x.mean,
        0.005,
    );
    // Without grouping the redo log is saturated by two 0.6 ms fsyncs per
    // transaction: X = 1 / 1.2 ms exactly.
    let serial = run(
        &load(
            "group_commit",
            &["stations.redo.max_batch=1", "stations.binlog.max_batch=1"],
        ),
        5,
        5_000,
        500,
    );
    // (Utilization law: X = U / 1.2 ms, with U = 1 when saturated.)
    let u = station(&serial, "redo").utilization;
    assert!(u.mean > 0.999, "redo saturated without grouping: {u:?}");
    let xs = serial.system.throughput_per_s;
    assert!(
        (xs.mean - u.mean / 0.0012).abs() <= 4.0 * xs.ci95 + u.ci95 / 0.0012,
        "no grouping: {} ± {} vs {} / 1.2 ms",
        xs.mean,
        xs.ci95,
        u.mean
    );
    // Waiting for the commit record's fsync as well costs throughput.
    let waited = run(
        &load("group_commit", &["stations.committed.quorum=2"]),
        5,
        20_000,
        2_000,
    );
    let xw = waited.system.throughput_per_s;
    assert!(
        xw.mean + xw.ci95 < x.mean - x.ci95,
        "waiting for the commit record: {xw:?} vs {x:?}"
    );
}

#[test]
fn gr_bucket_slowest_member_decides_unless_quorum() {
    let rt = |over: &[&str]| {
        let r = run(&load("gr_bucket", over), 5, 20_000, 2_000);
        (
            mean_of(&r.system.response_time_s),
            r.system.throughput_per_s,
        )
    };
    let (all20, x_all) = rt(&[]);
    let (all40, x_all40) = rt(&["stations.node3.service.mean=0.04"]);
    let (q20, x_q) = rt(&["stations.ack.quorum=2"]);
    let (q40, x_q40) = rt(&["stations.ack.quorum=2", "stations.node3.service.mean=0.04"]);
    // Little's law, exact for any fork/join: the 20 threads are thinking
    // (5 ms) or between fork and join, so X (5 ms + R) = 20 (a sub-job
    // left behind by the quorum is no thread). Within the two relative
    // 95% half-widths plus 0.5% for the jobs in flight at a replication's
    // ends (1.1-2.1% in all), guarded at 2.5%: a throughput or a response
    // counted 2.5% off fails.
    for (what, x, r) in [
        ("join-all", x_all, all20),
        ("join-all, node3 40 ms", x_all40, all40),
        ("quorum 2", x_q, q20),
        ("quorum 2, node3 40 ms", x_q40, q40),
    ] {
        closed_loop_law(
            &format!("gr_bucket {what}"),
            x,
            r,
            (0.005, 20.0),
            (0.005, 0.025),
        );
    }
    // Join all: R is the slow member's 20 ms (within 10%) and follows it one for one.
    assert_within("join-all R vs the slow member's 20 ms", all20, 0.020, 0.10);
    let shift = all40.mean - all20.mean;
    assert!(
        (shift - 0.020).abs() < 0.002 + all20.ci95 + all40.ci95,
        "join-all R follows the slow member: +{shift} s for +20 ms"
    );
    // Quorum 2: R is far below the slow member and does not move with it.
    assert!(
        q20.mean + q20.ci95 < 0.010,
        "quorum R {} hides the slow member",
        q20.mean
    );
    assert!(
        (q40.mean - q20.mean).abs() < 0.0005 + q20.ci95 + q40.ci95,
        "quorum R ignores the slow member: {} vs {}",
        q20.mean,
        q40.mean
    );
    assert_below(
        "throughput: join-all vs quorum",
        Estimate {
            mean: 2.0 * x_all.mean,
            ci95: 2.0 * x_all.ci95,
        },
        x_q,
    );
}

/// The exact law of a closed loop, X (Z + R) = N, for `(think_s, n)`:
/// within the two relative 95% half-widths plus `slack`, with that
/// tolerance guarded at `guard` (`(slack, guard)`).
fn closed_loop_law(
    what: &str,
    x: Estimate,
    r: Estimate,
    (think_s, n): (f64, f64),
    (slack, guard): (f64, f64),
) {
    let got = x.mean * (think_s + r.mean);
    let tol = x.ci95 / x.mean + r.ci95 / (think_s + r.mean) + slack;
    println!(
        "{what}: X {} ± {}/s, R {} ± {} s, X (Z + R) = {got}",
        x.mean, x.ci95, r.mean, r.ci95
    );
    assert!(
        (got / n - 1.0).abs() <= tol && tol <= guard,
        "{what}: X (Z + R) = {got}, not {n} (tolerance {tol})"
    );
}

/// Runs a spin_fanout variant (`model`, with overrides) and returns its
/// throughput and mean response time, after checking the one exact law
/// there is: the 40 clients are thinking (4 ms) or inside a request, so
/// X (4 ms + R) = 40 whatever the latches do. The tolerance is the two
/// relative 95% half-widths plus 1% for the requests in flight at the ends
/// of these short replications, guarded at 15%: a throughput or response
/// counted wrong by more than the tolerance (4-6% at delay 6, 10-15% at
/// delay 30) fails.
fn spin_fanout_run(model: &str, over: &[&str], reps: u32, jobs: u64) -> (Estimate, Estimate) {
    let r = run(&load(model, over), reps, jobs, 50);
    let (x, resp) = (
        r.system.throughput_per_s,
        mean_of(&r.system.response_time_s),
    );
    closed_loop_law(
        &format!("{model} {over:?}"),
        x,
        resp,
        (0.004, 40.0),
        (0.01, 0.15),
    );
    (x, resp)
}

/// Asserts that `e` relative to the report's figure lies in `band` (a ratio
/// range the model's header claims), widened by `e`'s own 95% interval,
/// and that the interval is below `guard` of the mean, so the band is what
/// decides.
fn assert_ratio(label: &str, e: Estimate, report: f64, band: (f64, f64), guard: f64) {
    let (ratio, half) = (e.mean / report, e.ci95 / report);
    assert!(
        ratio >= band.0 - half && ratio <= band.1 + half,
        "{label}: {} ± {} is {ratio:.2} x the report's {report}, not in {band:?}",
        e.mean,
        e.ci95
    );
    assert!(
        e.ci95 <= guard * e.mean,
        "{label}: interval ± {} too wide around {} to test the band",
        e.ci95,
        e.mean
    );
}

#[test]
fn spin_fanout_delay_30_collapses_and_6_recovers() {
    // The header's claims against the report (1700 req/s and 19.6 ms at
    // delay 6; ~500 req/s and 72.1 ms at delay 30, 140-cycle PAUSE): delay
    // 30 within 20%; delay 6 about a third slower (+33% response, -22%
    // throughput), which it explains. The report is a field measurement
    // with no exact counterpart, so the bands are the header's figures
    // with room for a seed's spread: delay 6 +20% to +46% response and
    // -30% to -14% throughput (guard 10%: a change of the model's delay-6
    // figures by more than about 15% fails), delay 30 within 20% (guard
    // 15%: a bias beyond about 35% fails; a request's time there depends
    // on rare stragglers, so its intervals are wide).
    let d30 = "stations.instance.latch.spin.spin_wait_delay=30";
    let pause10 = "stations.instance.latch.spin.pause_cycles=10";
    let (x6, r6) = spin_fanout_run("spin_fanout", &[], 3, 300);
    let (x30, r30) = spin_fanout_run("spin_fanout", &[d30], 4, 300);
    assert_ratio("delay 6 response", r6, 0.0196, (1.20, 1.46), 0.10);
    assert_ratio("delay 6 throughput", x6, 1700.0, (0.70, 0.86), 0.10);
    assert_ratio("delay 30 response", r30, 0.0721, (0.80, 1.20), 0.15);
    assert_ratio("delay 30 throughput", x30, 500.0, (0.80, 1.20), 0.15);
    assert_below("throughput: delay 30 vs delay 6", x30, x6);
    // 10-cycle PAUSE: the same change of delay costs at most 20%, where on
    // the 140-cycle PAUSE it costs more than half.
    let (x6b, _) = spin_fanout_run("spin_fanout", &[pause10], 3, 200);
    let (x30b, _) = spin_fanout_run("spin_fanout", &[pause10, d30], 3, 200);
    assert!(
        x30b.mean >= 0.8 * x6b.mean && x30.mean < 0.5 * x6.mean,
        "PAUSE 10: {} vs {} req/s; PAUSE 140: {} vs {} req/s",
        x6b.mean,
        x30b.mean,
        x6.mean,
        x30.mean
    );
}

#[test]
fn spin_fanout_fixed_header_claims_hold() {
    // models/spin_fanout_fixed.toml claims, against the report: delay 30
    // within about 10% (554 req/s and 68.4 ms against ~500 and 72.1), and
    // delay 6 more than 25% short (1127 req/s, 30.9 ms against 1700 and
    // 19.6). Bands: delay 30 within 12% (guard 8%: a bias beyond about
    // 20% fails); delay 6 throughput below 0.75 and response above 1.25
    // times the report's, each by its whole interval (guards 10% and 8%).
    let d30 = "stations.instance.latch.spin.spin_wait_delay=30";
    let (x30, r30) = spin_fanout_run("spin_fanout_fixed", &[d30], 3, 300);
    assert_ratio("fixed delay 30 throughput", x30, 500.0, (0.88, 1.12), 0.08);
    assert_ratio("fixed delay 30 response", r30, 0.0721, (0.88, 1.12), 0.08);
    let (x6, r6) = spin_fanout_run("spin_fanout_fixed", &[], 3, 300);
    assert!(
        x6.mean + x6.ci95 < 0.75 * 1700.0 && x6.ci95 <= 0.10 * x6.mean,
        "fixed delay 6 throughput {} ± {} is not 25% below the report's 1700",
        x6.mean,
        x6.ci95
    );
    assert!(
        r6.mean - r6.ci95 > 1.25 * 0.0196 && r6.ci95 <= 0.08 * r6.mean,
        "fixed delay 6 response {} ± {} is not 25% above the report's 19.6 ms",
        r6.mean,
        r6.ci95
    );
    // The fixed route's delay 30 -> 6 gain is about 2x, short of the
    // report's 3.4x.
    assert_below("fixed throughput: delay 30 vs delay 6", x30, x6);
}

#[test]
fn read_write_header_figures_hold() {
    // Power: 99.9% tolerances measured at 0.25-0.7% of exact MVA, so a bias of
    // about 0.7% fails in every figure; the guards (about 1.5 x the measured
    // widths) allow at most 0.85% (X), 1.2% (R) and 0.42% (U).
    // The header's arithmetic: a read turns into a write with probability
    // 0.3, so the chain's demands are 3.333 x 4 + 6 = 19.33 ms (cpu) and
    // 2.333 x 5 + 9 = 20.67 ms (disk), both PS: exact MVA with 8 users and 50
    // ms think gives the figures the header prints (42.24/s, 139.4 ms, 81.7%
    // and 87.3%), and the simulated chain (the model file itself) lands on
    // them within its 99.9% interval, each guarded at 2-3% width.
    let cpu = (1.0 / 0.3) * 0.004 + 0.006;
    let disk = (0.7 / 0.3) * 0.005 + 0.009;
    let stations = [
        mva::Station::queue("cpu", cpu),
        mva::Station::queue("disk", disk),
    ];
    let e = mva::exact(&stations, 0.050, 8).unwrap();
    let e = e.at(8).unwrap();
    for (what, value, header, digits) in [
        ("throughput", e.throughput_per_s, 42.24, 0.005),
        ("response", e.response_time_s, 0.1394, 0.00005),
        ("cpu utilization", e.stations[0].utilization, 0.817, 0.0005),
        ("disk utilization", e.stations[1].utilization, 0.873, 0.0005),
    ] {
        assert!(
            (value - header).abs() <= digits,
            "header {what} {header}, exact {value}"
        );
    }
    let m = load("read_write", &[]);
    let r = run(&m, 10, 50_000, 5_000);
    assert_close(
        "read_write throughput",
        r.system.throughput_per_s,
        e.throughput_per_s,
        10,
        0.0,
        0.004,
    );
    assert_close(
        "read_write response",
        mean_of(&r.system.response_time_s),
        e.response_time_s,
        10,
        0.0,
        0.0055,
    );
    for (i, name) in ["cpu", "disk"].iter().enumerate() {
        assert_close(
            &format!("read_write {name} utilization"),
            station(&r, name).utilization,
            e.stations[i].utilization,
            10,
            0.0,
            0.002,
        );
    }
}

#[test]
fn mm1_header_figures_hold() {
    // models/mm1.toml as written (10 x 200,000 jobs after 20,000) against
    // the header's closed forms: utilization 0.9, 9 jobs, 10 s, p99
    // ln(100)/0.1 = 46.05 s. Each within its 99.9% interval (the p99 also
    // within the 1% bucket width of the histogram), the 95% half-widths
    // guarded at 1% (utilization), 5% (jobs, response; 2.3% measured) and
    // 8% (p99; 6% measured): a bias of about 2%, 11% and 18% fails (the
    // tail has its tighter test in tests/it/exact.rs).
    let m = load("mm1", &[]);
    let r = qsim_kernel::run(&m.network, &m.run).expect("run");
    assert_eq!(r.replications, 10);
    let q = station(&r, "server");
    let rt = &r.system.response_time_s;
    for (what, e, exact, bias, guard) in [
        ("utilization", q.utilization, 0.9, 0.0, 0.01),
        ("mean jobs", q.mean_jobs, 9.0, 0.0, 0.05),
        ("mean response", mean_of(rt), 10.0, 0.0, 0.05),
        ("p99 response", rt.p99, 100.0_f64.ln() / 0.1, 0.01, 0.08),
    ] {
        println!("mm1.toml {what}: {} ± {}, exact {exact}", e.mean, e.ci95);
        assert_close(&format!("mm1.toml {what}"), e, exact, 10, bias, guard);
    }
}

#[test]
fn latch_bistable_header_thresholds_hold() {
    // models/latch_bistable.toml's header against theory's birth-death
    // chain (exact for this model): two operating points inside the
    // header's range of about 108 to 150 threads, one well outside it (the
    // chain still finds two at 160, past the header's fluid estimate of
    // 150, as its "stays fast until about 150-180" allows); at N = 120 the
    // fast one at 117 thinkers / 0.15 s ~ 780/s and the collapsed one at
    // the latch's 50/s, each within 1%. (The runs sitting on them:
    // timeline::hysteresis_branches_sit_on_the_two_operating_points_of_theory.)
    let points = |n: u32| {
        let m = load("latch_bistable", &[&format!("workload.population={n}")]);
        qsim_theory::closed::bistability(m.network.spec(), 0)
            .expect("theory solves it")
            .map_or(1, |b| b.operating_points.len())
    };
    for n in [90u32, 100, 200] {
        assert_eq!(points(n), 1, "one operating point at N = {n}");
    }
    for n in [115u32, 120, 140] {
        assert_eq!(points(n), 2, "two operating points at N = {n}");
    }
    let m = load("latch_bistable", &[]);
    let b = qsim_theory::closed::bistability(m.network.spec(), 0)
        .unwrap()
        .expect("bistable at N = 120");
    let (fast, slow) = (&b.operating_points[0], &b.operating_points[1]);
    assert!(
        (fast.throughput_per_s / 780.0 - 1.0).abs() < 0.01,
        "fast state {}/s, header ~780/s",
        fast.throughput_per_s
    );
    assert!(
        (slow.throughput_per_s / 50.0 - 1.0).abs() < 0.01,
        "collapsed state {}/s, header ~50/s",
        slow.throughput_per_s
    );
}
