//! Capacity over time as a trigger (issue 22): a station's servers or
//! speed following a schedule, against exact answers.
//!
//! An open Jackson tandem, Poisson arrivals at 1.2/s to an M/M/3 (service
//! mean 1 s) then an M/M/1 (service mean 0.5 s). From t = 9000 s to
//! 39,000 s the first station has 2 servers (a replica down) and the
//! second runs at 0.7 of its speed (a disk failing slow: ρ 0.6 -> 0.86);
//! both come back at 39,000 s. Each phase is long beside the stations'
//! relaxation times (about 10 s for the M/M/2, 130 s for the slow disk),
//! so its mean jobs are the product form's: M/M/c with the phase's
//! servers, M/M/1 with the phase's rate. The transient after each step
//! (the old phase's excess jobs draining, or the deficit filling) biases
//! a phase's mean by about excess × relaxation time / phase length: under
//! 0.2% for the replicas, about 2% of the slow disk's 6 jobs at most (4.5
//! jobs × 130 s / 30,000 s), inside the tolerance below.
//!
//! Tolerance: a 99.9% interval (Student t, 19 degrees of freedom) around
//! the exact value, with a guard on the interval's width. Measured
//! half-widths (95%) are about 1% of the replicas' mean jobs and 2-3% of
//! the disk's, so a bias of about 3% (replicas) or 6% (disk) is caught; a
//! step that left one server too many or too few (±45% in mean jobs), or
//! a speed applied to the service time as a factor instead of a divisor
//! (0.72 jobs instead of 6), is far outside.

use crate::support::{assert_close, model};
use qsim_kernel::recovery::{Phase, PhaseFigures, phases, run_trigger_window};
use qsim_kernel::trace::{Trace, TracePlan};
use qsim_kernel::{Estimate, RunConfig};

/// Mean number present at an M/M/c with offered load `a` (λ/μ).
fn mmc_jobs(c: u32, a: f64) -> f64 {
    let rho = a / f64::from(c);
    assert!(rho < 1.0);
    let mut term = 1.0;
    let mut sum = 0.0;
    for k in 0..c {
        sum += term;
        term *= a / f64::from(k + 1);
    }
    // term is now a^c / c!.
    let last = term / (1.0 - rho);
    let wait_probability = last / (sum + last);
    a + wait_probability * rho / (1.0 - rho)
}

const TANDEM: &str = r#"
[simulation]
replications = 20
seed = 7
warmup = { time_s = 100 }
stop = { time_s = 47900 }

[workload]
type = "open"
rate_per_s = 1.2
route = ["replicas", "disk"]

[stations.replicas]
kind = "queue"
servers = 3
service = { dist = "exponential", mean = 1.0 }

[[stations.replicas.schedule]]
at = 9000
servers = 2

[[stations.replicas.schedule]]
at = 39000
servers = 3

[stations.disk]
kind = "queue"
service = { dist = "exponential", mean = 0.5 }

[[stations.disk.schedule]]
at = 9000
speedup = 0.7

[[stations.disk.schedule]]
at = 39000
speedup = 1
"#;

fn phase(all: &[PhaseFigures], p: Phase) -> &PhaseFigures {
    all.iter().find(|f| f.phase == p).expect("phase")
}

fn close(label: &str, sim: Estimate, exact: f64) {
    eprintln!(
        "{label}: simulated {:.4} ± {:.4}, exact {exact:.4}",
        sim.mean, sim.ci95
    );
    assert_close(label, sim, exact, 20, 0.0, 0.05);
}

#[test]
fn an_outage_and_a_fail_slow_disk_give_each_phase_its_product_form_figures() {
    let m = model(TANDEM, &[]);
    assert_eq!(m.run.station_schedule.len(), 2);
    let config = RunConfig {
        trace: Some(TracePlan {
            interval_s: 10.0,
            max_intervals: 1 << 12,
        }),
        ..m.run.clone()
    };
    let window = run_trigger_window(&config).expect("a trigger");
    assert_eq!((window.start_s, window.end_s), (9000.0, 39000.0));
    let results = qsim_kernel::run(&m.network, &config).unwrap();
    let traces: Vec<&Trace> = results
        .replication_results
        .iter()
        .map(|r| r.trace.as_deref().unwrap())
        .collect();
    let all = phases(window, &traces);
    let lambda = 1.2;
    for (p, servers, disk_rate) in [
        (Phase::Before, 3, 2.0),
        (Phase::During, 2, 2.0 * 0.7),
        (Phase::After, 3, 2.0),
    ] {
        let f = phase(&all, p);
        let name = p.name();
        close(
            &format!("{name}: replicas mean jobs (M/M/{servers})"),
            f.mean_jobs[0],
            mmc_jobs(servers, lambda),
        );
        let rho = lambda / disk_rate;
        close(
            &format!("{name}: disk mean jobs (M/M/1 at rate {disk_rate})"),
            f.mean_jobs[1],
            rho / (1.0 - rho),
        );
        close(&format!("{name}: throughput"), f.throughput_per_s, lambda);
    }
}

#[test]
fn a_capacity_schedule_on_a_station_it_cannot_change_is_refused_at_its_key() {
    let text = r#"
[workload]
population = 3
think = { dist = "exponential", mean = 1 }
route = ["cpu"]

[stations.cpu]
kind = "queue"
discipline = "ps"
service = { dist = "exponential", mean = 0.1 }

[[stations.cpu.schedule]]
at = 10
servers = 0

[[stations.cpu.schedule]]
at = 5
speedup = -1
"#;
    let e = match qsim_model::load_str("bad.toml", text, &[]) {
        Ok(_) => panic!("a schedule on a PS station, out of order, was accepted"),
        Err(e) => e.to_string(),
    };
    for want in [
        "stations.cpu.schedule",
        "a capacity schedule applies to a queue station",
        "stations.cpu.schedule[1].at",
        "steps must be in time order",
        "stations.cpu.schedule[1].speedup",
        "expected a positive factor",
    ] {
        assert!(e.contains(want), "{want}: {e}");
    }
}
