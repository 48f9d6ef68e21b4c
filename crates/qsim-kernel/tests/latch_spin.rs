//! Spin latches: the event-saving path against the poll-by-poll reference,
//! the InnoDB poll delay against its exact mean, and a latch's utilization
//! (the fraction of time it is held) against exact answers.

mod support;

use qsim_kernel::*;
use support::{agree, run_net};

fn exp(m: f64) -> Dist {
    Dist::exponential(m).unwrap()
}

/// InnoDB's settings on a 2.5 GHz Skylake: one unit is 50 PAUSEs of 140
/// cycles, 2.8 µs.
fn spin(d: f64, rounds: u32, cpu: Option<usize>) -> SpinSpec {
    SpinSpec {
        spin_wait_delay: d,
        poll_delay: PollDelay::Units,
        pause_cycles: 140.0,
        pauses_per_unit: 50.0,
        clock_ghz: 2.5,
        spin_rounds: rounds,
        context_switch_s: 0.000_01,
        cpu,
        poll_by_poll: false,
    }
}

/// `threads` threads loop: `cpu_s` of work on a PS cpu with `cores` cores,
/// then the latch (critical section `cs_s`, exponential).
fn net(latch: LatchSpec, threads: u32, cores: u32, cpu_s: f64, cs_s: f64) -> NetworkSpec {
    NetworkSpec {
        stations: vec![
            StationSpec {
                name: "cpu".into(),
                kind: StationKind::Queue {
                    servers: cores,
                    discipline: Discipline::Ps,
                },
                service: vec![Some(exp(cpu_s))],
                speed: None,
            },
            StationSpec {
                name: "latch".into(),
                kind: StationKind::Latch(latch),
                service: vec![Some(exp(cs_s))],
                speed: None,
            },
        ],
        classes: vec![ClassSpec {
            name: "c".into(),
            workload: Workload::Closed {
                population: threads,
                think: None,
            },
            routing: Routing::Sequence(vec![0, 1]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    }
}

fn with_path(mut spec: NetworkSpec, poll_by_poll: bool) -> NetworkSpec {
    for st in &mut spec.stations {
        if let StationKind::Latch(LatchSpec { spin: Some(sp), .. }) = &mut st.kind {
            sp.poll_by_poll = poll_by_poll;
        }
    }
    spec
}

#[test]
fn the_event_saving_path_matches_poll_by_poll() {
    // Small contended latches: 6-8 threads, few rounds so that waiters
    // also give up and sleep; without and with a spin cpu (which slows
    // polls, switch-ins and the holder as the cpu fills), waking one or all.
    let cases = [
        ("no cpu, wake one", 3, net_case(None, Wake::One, 3), 6, 8e-6),
        ("cpu, wake all", 4, net_case(Some(0), Wake::All, 4), 8, 8e-6),
        ("cpu, 1 round", 1, net_case(Some(0), Wake::One, 1), 8, 8e-6),
        // Sections 10x a poll's delay: most polls find the latch held.
        (
            "cpu, long sections",
            30,
            net_case(Some(0), Wake::One, 30),
            4,
            7e-5,
        ),
    ];
    for (name, rounds, (latch, cores), threads, cs_s) in cases {
        let spec = net(latch, threads, cores, 0.000_03, cs_s);
        let fast = run_net(with_path(spec.clone(), false), 6, 12_000);
        let slow = run_net(with_path(spec, true), 6, 12_000);
        let (f, s) = (&fast, &slow);
        agree(
            &format!("{name}: throughput"),
            f.system.throughput_per_s,
            s.system.throughput_per_s,
        );
        let mean = |r: &RunResults| Estimate {
            mean: r.system.response_time_s.mean,
            ci95: r.system.response_time_s.ci95,
        };
        agree(&format!("{name}: response"), mean(f), mean(s));
        // Stronger: the two paths draw the same poll delays (each spin
        // episode's stream) and consume the latch's stream alike, so they
        // follow the same sample path up to the rounding of the thread
        // clock. A skipped, extra or misplaced poll would show here.
        for (m, a, b) in [
            (
                "throughput",
                f.system.throughput_per_s.mean,
                s.system.throughput_per_s.mean,
            ),
            (
                "response",
                f.system.response_time_s.mean,
                s.system.response_time_s.mean,
            ),
        ] {
            assert!(
                (a - b).abs() <= 1e-6 * b.abs(),
                "{name}: {m} {a} vs {b} poll by poll: not the same sample path"
            );
        }
        agree(
            &format!("{name}: p99"),
            f.system.response_time_s.p99,
            s.system.response_time_s.p99,
        );
        let (fl, sl) = (&f.stations[1], &s.stations[1]);
        agree(
            &format!("{name}: latch wait"),
            fl.wait_time_s,
            sl.wait_time_s,
        );
        for (m, a, b) in [
            ("spinning", fl.mean_spinning, sl.mean_spinning),
            ("sleeping", fl.mean_sleeping, sl.mean_sleeping),
            ("polls/s", fl.polls_per_s, sl.polls_per_s),
            ("poll delay", fl.mean_poll_delay_s, sl.mean_poll_delay_s),
        ] {
            agree(&format!("{name}: {m}"), a.unwrap(), b.unwrap());
        }
        agree(
            &format!("{name}: cpu utilization"),
            f.stations[0].utilization,
            s.stations[0].utilization,
        );
        // The models do contend, spin and sleep, and the fast path saves
        // the events of the polls that find the latch held (with one round
        // every poll either wins or gives up: nothing to save).
        assert!(fl.mean_spinning.unwrap().mean > 0.05, "{name}: {fl:?}");
        assert!(fl.mean_sleeping.unwrap().mean > 0.01, "{name}: {fl:?}");
        if cs_s > 1e-5 {
            assert!(
                f.events * 2 < s.events,
                "{name}: {} events vs {} poll by poll",
                f.events,
                s.events
            );
        }
        assert!(
            f.events < s.events || (rounds == 1 && f.events == s.events),
            "{name}: {} events vs {} poll by poll",
            f.events,
            s.events
        );
    }
}

/// A latch spinning at delay 6 (polls 7 µs apart on average) with
/// `rounds` rounds; 2 cores when it spins on the cpu (else 4, and the cpu
/// is not charged).
fn net_case(cpu: Option<usize>, wake: Wake, rounds: u32) -> (LatchSpec, u32) {
    let cores = if cpu.is_some() { 2 } else { 4 };
    (
        LatchSpec {
            numa: None,
            spin: Some(spin(6.0, rounds, cpu)),
            wake,
        },
        cores,
    )
}

#[test]
fn mean_poll_delay_is_the_mean_of_whole_units() {
    // InnoDB draws ut_rnd_interval(0, d) = a whole number in {0, …, d − 1}
    // of 2.8 µs units: mean (d − 1)/2 units, 7 µs at d = 6; the continuous
    // uniform on [0, d) units has mean d/2, 8.4 µs. The two differ by 20%,
    // so the test tells them apart (and an inclusive bound, d/2 units, too).
    for (poll_delay, poll_by_poll) in [
        (PollDelay::Units, false),
        (PollDelay::Units, true),
        (PollDelay::Uniform, false),
    ] {
        let mut sp = spin(6.0, 30, None);
        sp.poll_delay = poll_delay;
        sp.poll_by_poll = poll_by_poll;
        let exact = sp.mean_poll_delay_s();
        let units = if poll_delay == PollDelay::Units {
            2.5
        } else {
            3.0
        };
        assert!((exact - units * 2.8e-6).abs() < 1e-15, "{exact}");
        let latch = LatchSpec {
            numa: None,
            spin: Some(sp),
            wake: Wake::One,
        };
        let r = run_net(net(latch, 8, 8, 0.000_03, 0.000_008), 4, 10_000);
        let st = &r.stations[1];
        let m = st.mean_poll_delay_s.unwrap();
        // Every poll's delay is an independent draw and the number of
        // polls an episode makes is a stopping time, so the ratio of
        // summed delays to polls estimates the mean (Wald); 4 CI
        // half-widths of slack. Half-widths 0.36-0.6%, guarded at 0.9%: a
        // bias of about 2.4% fails (at most 3.6%, far below the 20%
        // between the two laws).
        support::within_4(
            &format!("{poll_delay:?} (poll by poll {poll_by_poll}) mean poll delay"),
            m,
            exact,
            0.009,
        );
        assert!(st.polls_per_s.unwrap().mean > 1e4, "{st:?}");
    }
}

#[test]
fn latch_utilization_is_the_held_fraction() {
    // A latch with zero-cost NUMA hand-offs runs the mechanism code yet
    // serves FIFO like one server: N threads thinking Exp(Z) then holding
    // Exp(S) is the machine-repairman model, with exact held fraction
    // U = 1 − p0, p0 = 1 / Σ_n N!/(N − n)! (S/Z)^n.
    let (n, z, s) = (5u32, 0.004, 0.001);
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..=n {
        term *= f64::from(n - k + 1) * s / z;
        sum += term;
    }
    let u_exact = 1.0 - 1.0 / sum;
    let numa = NumaSpec {
        nodes: 1,
        cores_per_node: 64,
        local_handoff_s: 0.0,
        remote_handoff_s: 0.0,
        migration_s: 0.0,
    };
    let mut spec = net(
        LatchSpec {
            numa: Some(numa),
            spin: None,
            wake: Wake::One,
        },
        n,
        1,
        z,
        s,
    );
    // The think time is a delay station: the cpu becomes an infinite server.
    spec.stations[0].kind = StationKind::Delay;
    let r = run_net(spec, 6, 40_000);
    let u = r.stations[1].utilization;
    // Half-width 0.33%, guarded at 0.5%: a bias of about 1.3% fails.
    support::within_4("held fraction", u, u_exact, 0.005);
    // Occupancy (anyone present) is P(n > 0), the same here.
    let occ = r.stations[1].occupancy.unwrap();
    assert!((occ.mean - u.mean).abs() < 1e-9, "{occ:?} vs {u:?}");

    // A spin latch: released, it stays free until the next poll, so
    // waiters are present while nobody holds it. The held fraction still
    // obeys the utilization law U = X·S, while occupancy is far larger.
    let r = run_net(
        net(net_case(None, Wake::One, 30).0, 8, 8, 0.000_03, 0.000_008),
        6,
        12_000,
    );
    let st = &r.stations[1];
    let law = st.throughput_per_s.mean * 0.000_008;
    // X·S carries the throughput's relative error and the mean critical
    // section's sampling error (about 1/sqrt(departures)); 4 half-widths.
    let tol = 4.0
        * (st.utilization.ci95 + law * st.throughput_per_s.ci95 / st.throughput_per_s.mean)
        + 4.0 * law / (st.throughput_per_s.mean * r.measured_time_s).sqrt();
    assert!(
        (st.utilization.mean - law).abs() <= tol,
        "held {:?} vs X·S {law} (tolerance {tol})",
        st.utilization
    );
    let occ = st.occupancy.unwrap().mean;
    assert!(
        occ <= 1.0 && occ > st.utilization.mean + 0.1,
        "occupancy {occ} vs held {:?}",
        st.utilization
    );
}

#[test]
fn units_need_a_whole_spin_wait_delay() {
    let spec = net(
        LatchSpec {
            numa: None,
            spin: Some(spin(2.5, 30, None)),
            wake: Wake::One,
        },
        4,
        4,
        0.001,
        0.0001,
    );
    let err = Network::new(spec.clone()).unwrap_err();
    assert!(
        err.iter()
            .any(|e| e.path == "stations.latch.spin.spin_wait_delay"
                && e.message.contains("whole number")),
        "{err:?}"
    );
    let mut ok = spec;
    if let StationKind::Latch(LatchSpec { spin: Some(sp), .. }) = &mut ok.stations[1].kind {
        sp.poll_delay = PollDelay::Uniform;
    }
    assert!(Network::new(ok).is_ok());
}

#[test]
fn one_thread_cycles_through_cpu_and_latch_in_their_sum() {
    // One thread: work on a PS cpu with 2 cores, then a spin latch that
    // runs on that cpu. Nobody contends, so the cycle is cpu + section:
    // X = 1/(S + C) exactly. The one thread always runs on the cpu (a job
    // or the latch's holder), so the cpu's busy servers are 1 at every
    // instant: utilization exactly 1/2, with no sampling error at all.
    // Half-widths 0.26% (X), 0.11% (cpu jobs), 0.33% (held), guarded at
    // about 1.5 times that: a bias of about 1.1%, 0.44% or 1.3% fails.
    let (s, c) = (0.000_03, 0.000_01);
    for poll_by_poll in [false, true] {
        let latch = LatchSpec {
            numa: None,
            spin: Some(spin(6.0, 30, Some(0))),
            wake: Wake::One,
        };
        let r = run_net(with_path(net(latch, 1, 2, s, c), poll_by_poll), 6, 20_000);
        let x = r.system.throughput_per_s;
        let exact = 1.0 / (s + c);
        support::within_4("throughput", x, exact, 0.004);
        let cpu_n = r.stations[0].mean_jobs;
        let n_exact = s / (s + c);
        support::within_4("cpu mean jobs", cpu_n, n_exact, 0.0017);
        let u = r.stations[0].utilization.mean;
        assert!((u - 0.5).abs() < 1e-9, "cpu utilization {u} vs exactly 1/2");
        let held = r.stations[1].utilization;
        let held_exact = c / (s + c);
        support::within_4("held", held, held_exact, 0.005);
    }
}

#[test]
fn a_spin_cpu_past_its_cores_is_the_finite_source_ps_queue() {
    // N threads think Exp(Z), then run Exp(S) on a PS cpu with c cores and
    // pass a spin latch whose critical section takes no time. The latch
    // only makes the cpu a spin cpu (so it runs each job at full speed
    // while threads <= cores, and on the shared clock above): the cpu is
    // the finite-source queue with c servers, a birth-death chain with
    // birth rate (N − n)/Z and death rate min(n, c)/S. The threads cross
    // the cores all the time (N = 6, c = 2, Z = S). Half-widths 0.34% (X),
    // 0.3% (jobs), 0.56% (response), guarded at about 1.5 times that: a
    // bias of about 1.3%, 1.2% or 2.2% fails.
    let (n_thr, cores, z, s) = (6u32, 2u32, 0.000_05, 0.000_05);
    let mut p = vec![1.0f64];
    for n in 1..=n_thr {
        let prev = p[n as usize - 1];
        p.push(prev * f64::from(n_thr - n + 1) / z * s / f64::from(n.min(cores)));
    }
    let total: f64 = p.iter().sum();
    let p: Vec<f64> = p.iter().map(|x| x / total).collect();
    let x_exact: f64 = (0..=n_thr)
        .map(|n| p[n as usize] * f64::from(n.min(cores)) / s)
        .sum();
    let n_exact: f64 = (0..=n_thr).map(|n| p[n as usize] * f64::from(n)).sum();
    let above: f64 = (cores + 1..=n_thr).map(|n| p[n as usize]).sum();
    assert!(above > 0.3, "the cores are crossed: P(n > c) = {above}");
    let latch = LatchSpec {
        numa: None,
        spin: Some(spin(6.0, 30, Some(0))),
        wake: Wake::One,
    };
    let mut spec = net(latch, n_thr, cores, s, s);
    spec.stations[1].service = vec![Some(Dist::deterministic(0.0).unwrap())];
    if let Workload::Closed { think, .. } = &mut spec.classes[0].workload {
        *think = Some(exp(z));
    }
    let r = run_net(spec, 6, 40_000);
    let x = r.system.throughput_per_s;
    support::within_4("finite-source throughput", x, x_exact, 0.005);
    let n = r.stations[0].mean_jobs;
    support::within_4("finite-source cpu mean jobs", n, n_exact, 0.0045);
    let rt = r.stations[0].response_time_s;
    let rt_exact = n_exact / x_exact;
    support::within_4("finite-source cpu response", rt, rt_exact, 0.0085);
}
