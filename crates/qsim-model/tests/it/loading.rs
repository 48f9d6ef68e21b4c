//! Loading the shipped models, defaults, distributions, sample files, warnings, mangled input and load time.

use super::*;

#[test]
fn shipped_models_load() {
    for m in ["mm1.toml", "cpu_two_disks.toml", "latch_numa.toml"] {
        let model = load_file(&models_dir().join(m), &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(model.warnings.is_empty(), "{m}: {:?}", model.warnings);
        assert!(!model.description.is_empty(), "{m} has no header comment");
        assert!(
            model.description.contains("Run:"),
            "{m}: header says how to run it"
        );
    }
    let latch = load_file(
        &models_dir().join("latch_numa.toml"),
        &sets(&["workload.population=500"]),
    )
    .unwrap();
    let spec = latch.network.spec();
    assert!(matches!(
        spec.classes[0].workload,
        Workload::Closed {
            population: 500,
            ..
        }
    ));
    let l1 = &spec.stations[0];
    assert_eq!(l1.name, "latch1");
    let speed = l1.speed.as_ref().unwrap();
    assert_eq!(speed.rate(100.0), 2000.0);
    assert_eq!(speed.rate(500.0), 200.0);
    for name in ["latch2", "latch3"] {
        let s = spec.stations.iter().find(|s| s.name == name).unwrap();
        assert_eq!(s.speed.as_ref().unwrap().rate(10.0), 300.0);
    }
    assert_eq!(latch.derived.len(), 2);

    let mm1 = load_file(&models_dir().join("mm1.toml"), &[]).unwrap();
    let u = open_utilization(&mm1.network);
    assert!((u[0].unwrap() - 0.9).abs() < 1e-12);

    let ctd = load_file(&models_dir().join("cpu_two_disks.toml"), &[]).unwrap();
    let Routing::Probabilistic { from, .. } = &ctd.network.spec().classes[0].routing else {
        panic!("expected a routing table");
    };
    assert_eq!(
        from[0],
        vec![
            (Target::Station(1), 0.45),
            (Target::Station(2), 0.45),
            (Target::Exit, 0.1)
        ]
    );
}

#[test]
fn missing_file_is_an_error() {
    let e = load_file(Path::new("no/such/model.toml"), &[]).unwrap_err();
    assert_eq!(e.errors.len(), 1);
    assert!(
        e.to_string()
            .starts_with("no/such/model.toml: cannot read the model file"),
        "{e}"
    );
}

#[test]
fn defaults_without_simulation_section() {
    let m = load(MM1, &[]);
    assert_eq!(m.run.replications, 5);
    assert_eq!(m.run.seed, 1);
    assert_eq!(m.run.stop, Stop::Jobs(100_000));
    assert_eq!(m.run.effective_warmup(), Warmup::Jobs(10_000));
    assert_eq!(m.description, "M/M/1.");
    assert_eq!(m.path, "m.toml");
    assert_eq!(m.network.spec().classes[0].name, "default");
    // Warm-up defaults to 10% of the stop.
    let t = format!("[simulation]\nstop = {{ time_s = 500.0 }}\n{MM1}");
    assert_eq!(load(&t, &[]).run.effective_warmup(), Warmup::Time(50.0));
    // ... and of the stop that finally applies, not of the file's.
    let mut run = load(&t, &[]).run;
    run.stop = Stop::Jobs(1_000);
    assert_eq!(run.effective_warmup(), Warmup::Jobs(100));
}

#[test]
fn warmup_fraction_follows_the_stop_that_applies() {
    let t =
        format!("[simulation]\nstop = {{ jobs = 50000 }}\nwarmup = {{ fraction = 0.2 }}\n{MM1}");
    let mut run = load(&t, &[]).run;
    assert_eq!(run.effective_warmup(), Warmup::Jobs(10_000));
    run.stop = Stop::Jobs(1_000);
    assert_eq!(run.effective_warmup(), Warmup::Jobs(200));
    run.stop = Stop::Time(40.0);
    assert_eq!(run.effective_warmup(), Warmup::Time(8.0));
    // A whole stop or more is refused where it is written.
    let bad = format!("[simulation]\nwarmup = {{ fraction = 1.0 }}\n{MM1}");
    let e = load_str("m.toml", &bad, &[]).unwrap_err().to_string();
    assert!(
        e.contains("m.toml:2:23")
            && e.contains("simulation.warmup.fraction")
            && e.contains("below 1"),
        "{e}"
    );
}

#[test]
fn full_model_builds_the_expected_spec() {
    let text = r#"
[simulation]
replications = 7
seed = 42
stop = { time_s = 100.0 }
warmup = "mser5"
precision = { relative_half_width = 0.02 }
sla_s = 0.05
initial = { station = "latch1" }

[classes.oltp]
type = "closed"
population = 50
think = { dist = "erlang", k = 2, mean = 0.01 }
priority = 2
route = ["cpu", "latch1", "commit", "paxos", "fanout", "gather"]

[classes.report]
rate_per_s = 2
priority = 0
[classes.report.routing]
source = { cpu = 1.0 }
cpu = { sink = 1.0 }

[stations.cpu]
kind = "queue"
servers = 4
discipline = "ps"
service = { dist = "gamma", mean = 0.002, scv = 0.5 }
service_by_class = { report = { dist = "hyperexponential", mean = 0.05, scv = 4 } }

[stations.latch1]
kind = "latch"
service = { dist = "exponential", mean = 0.0004 }
speed = { usl = { sigma = 0.02, kappa = 0.0001, lambda = 2500 } }
numa = { nodes = 2, cores_per_node = 32, local_handoff_s = 2e-7, remote_handoff_s = 1e-6, migration_s = 5e-6 }
spin = { spin_wait_delay = 6, pause_cycles = 140, clock_ghz = 2.5, context_switch_s = 5e-6, cpu = "cpu" }
wake = "all"

[stations.commit]
kind = "batch"
max_batch = 16
max_wait_s = 0.0005
per_job_s = 0.00001
service = { dist = "deterministic", value = 0.001 }

[stations.paxos]
kind = "link"
rtt = { dist = "uniform", min = 0.009, max = 0.011 }
pipeline = 2
max_batch = 4

[stations.fanout]
kind = "fork"
fan_out = 256
to = { db1 = 0.5, db2 = 0.5 }
spread = "random"
join = "gather"

[stations.gather]
kind = "join"
quorum = 200

[stations.db1]
kind = "delay"
service = { dist = "lognormal", mean = 0.001, scv = 2 }

[stations.db2]
kind = "delay"
service = { dist = "empirical", samples = [0.001, 0.002, 0.004] }

[regions.throttle]
stations = ["latch1", "commit"]
limit = 100

[metrics]
tpmC = "0.45 * 60 * classes.oltp.throughput"
"#;
    let m = load(text, &[]);
    let spec = m.network.spec();
    assert_eq!(spec.stations.len(), 8);
    assert_eq!(spec.classes.len(), 2);
    assert_eq!(spec.initial, InitialState::AtStation(1));
    assert_eq!(m.run.replications, 7);
    assert_eq!(m.run.seed, 42);
    assert_eq!(m.run.stop, Stop::Time(100.0));
    assert_eq!(m.run.warmup, Warmup::Mser5);
    assert_eq!(m.run.precision.unwrap().max_replications, 50);
    assert_eq!(m.run.sla_s, Some(0.05));
    let cpu = &spec.stations[0];
    assert!(matches!(
        cpu.kind,
        StationKind::Queue {
            servers: 4,
            discipline: Discipline::Ps
        }
    ));
    let s0 = cpu.service[0].as_ref().unwrap();
    assert!((s0.mean() - 0.002).abs() < 1e-15 && (s0.scv() - 0.5).abs() < 1e-9);
    let s1 = cpu.service[1].as_ref().unwrap();
    assert!((s1.mean() - 0.05).abs() < 1e-12 && (s1.scv() - 4.0).abs() < 1e-9);
    let StationKind::Latch(l) = &spec.stations[1].kind else {
        panic!()
    };
    assert_eq!(l.spin.as_ref().unwrap().cpu, Some(0));
    assert_eq!(l.spin.as_ref().unwrap().pauses_per_unit, 50.0);
    assert_eq!(l.numa.as_ref().unwrap().nodes, 2);
    assert!(matches!(spec.stations[1].speed, Some(Speed::Usl { .. })));
    let StationKind::Fork(f) = &spec.stations[4].kind else {
        panic!()
    };
    assert_eq!((f.fan_out, f.join, f.targets.len()), (256, 5, 2));
    assert!(matches!(spec.stations[5].kind, StationKind::Join(ref j) if j.quorum == Some(200)));
    assert_eq!(spec.classes[0].priority, 2);
    assert!(
        matches!(spec.classes[1].workload, Workload::Open { ref interarrival } if (interarrival.mean() - 0.5).abs() < 1e-12)
    );
    assert_eq!(spec.regions[0].limit, Some(100));
    assert_eq!(m.derived[0].name, "tpmC");
    assert_eq!(
        m.derived[0].expr.variables(),
        vec!["classes.oltp.throughput"]
    );
    let vars = metric_variables(&m.network);
    assert!(vars.contains(&"stations.gather.mean_jobs".to_string()));
}

#[test]
fn distributions_by_mean_and_scv() {
    for (d, scv) in [
        (r#"{ dist = "exponential", mean = 0.5 }"#, 1.0),
        (r#"{ dist = "exponential", rate_per_s = 2 }"#, 1.0),
        (r#"{ dist = "deterministic", mean = 0.5 }"#, 0.0),
        (r#"{ dist = "uniform", mean = 0.5, scv = 0.25 }"#, 0.25),
        (r#"{ dist = "erlang", mean = 0.5, scv = 0.25 }"#, 0.25),
        (r#"{ dist = "hyperexponential", mean = 0.5, scv = 3 }"#, 3.0),
        (r#"{ dist = "lognormal", mean = 0.5, scv = 2 }"#, 2.0),
        (r#"{ dist = "gamma", mean = 0.5, scv = 0.3 }"#, 0.3),
        (r#"{ dist = "gamma", shape = 2, scale = 0.25 }"#, 0.5),
        (r#"{ dist = "empirical", samples = [0.25, 0.75] }"#, 0.25),
    ] {
        let text = MM1.replace(r#"{ dist = "exponential", mean = 1.0 }"#, d);
        let m = load(&text, &[]);
        let s = m.network.spec().stations[0].service[0].as_ref().unwrap();
        assert!((s.mean() - 0.5).abs() < 1e-12, "{d}: mean {}", s.mean());
        assert!((s.scv() - scv).abs() < 1e-9, "{d}: scv {}", s.scv());
    }
}

#[test]
fn empirical_samples_from_a_file() {
    let dir = std::env::temp_dir().join(format!("qsim-model-it-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("s.csv"), "service_s\n0.25\n\n0.75\n").unwrap();
    let text = MM1.replace(
        r#"{ dist = "exponential", mean = 1.0 }"#,
        r#"{ dist = "empirical", file = "s.csv" }"#,
    );
    let path = dir.join("m.toml");
    std::fs::write(&path, &text).unwrap();
    let m = load_file(&path, &[]).unwrap_or_else(|e| panic!("{e}"));
    let s = m.network.spec().stations[0].service[0].as_ref().unwrap();
    assert!((s.mean() - 0.5).abs() < 1e-12);
    std::fs::write(dir.join("s.csv"), "0.25\nabc\n").unwrap();
    let e = load_file(&path, &[]).unwrap_err().to_string();
    assert!(e.contains("stations.server.service.file: line 2 of"), "{e}");
    assert!(e.contains("expected a number, found \"abc\""), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn endless_samples_file_is_refused_with_the_size_read() {
    // /dev/zero never ends: the reader stops at its limit and says so,
    // at the key that names the file.
    let text = MM1.replace(
        r#"{ dist = "exponential", mean = 1.0 }"#,
        r#"{ dist = "empirical", file = "/dev/zero" }"#,
    );
    check(
        &text,
        &[],
        &[
            "m.toml:9:40: stations.server.service.file: the samples file /dev/zero is too large: read 67108865 bytes and it goes on; expected at most 67108864 bytes (64 MiB)",
        ],
    );
}

#[test]
fn warnings_do_not_stop_a_model() {
    let text = format!(
        "[simulation]\nreplications = 1\n{MM1}[stations.idle]\nkind = \"delay\"\nservice = {{ dist = \"exponential\", mean = 1.0 }}\n"
    );
    let m = load(&text, &[]);
    let w: Vec<String> = m.warnings.iter().map(|w| w.to_string()).collect();
    assert!(w.iter().any(|w| w.starts_with("m.toml:2:16: warning: simulation.replications: one replication gives no confidence interval")), "{w:?}");
    assert!(
        w.iter()
            .any(|w| w
                .contains("warning: stations.idle: station idle is never visited by any class")),
        "{w:?}"
    );
}

/// Truncated and mutated versions of a model never panic.
#[test]
fn never_panics_on_mangled_input() {
    let full = std::fs::read_to_string(models_dir().join("latch_numa.toml")).unwrap();
    let texts = [full.as_str(), CLOSED, MM1];
    let mut seed = 12345u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let junk = [
        "0",
        "-1",
        "=",
        "\"",
        "[",
        "]",
        "{",
        "}",
        ",",
        "x",
        "\n",
        "1e400",
        "nan",
        "inf",
        "\"sink\"",
        "\"latch1\"",
        "[[a]]",
        ".",
        "#",
    ];
    for text in texts {
        let chars: Vec<char> = text.chars().collect();
        for cut in (0..chars.len()).step_by(7) {
            let t: String = chars[..cut].iter().collect();
            let _ = load_str("m.toml", &t, &[]);
        }
        for _ in 0..400 {
            let mut t: Vec<char> = chars.clone();
            for _ in 0..(next() % 4 + 1) {
                let at = (next() as usize) % t.len().max(1);
                match next() % 3 {
                    0 => {
                        t.remove(at.min(t.len().saturating_sub(1)));
                    }
                    1 => {
                        let j = junk[(next() as usize) % junk.len()];
                        for (k, c) in j.chars().enumerate() {
                            t.insert((at + k).min(t.len()), c);
                        }
                    }
                    _ => {
                        if let Some(c) = t.get_mut(at) {
                            *c = junk[(next() as usize) % junk.len()].chars().next().unwrap();
                        }
                    }
                }
            }
            let t: String = t.into_iter().collect();
            let _ = load_str("m.toml", &t, &[]);
        }
    }
    // Deep nesting.
    let deep = format!("x = {}1{}", "[".repeat(5000), "]".repeat(5000));
    let _ = load_str("m.toml", &deep, &[]);
    let deep = format!("x = {}", "{ a = ".repeat(5000));
    let _ = load_str("m.toml", &deep, &[]);
    // Overrides of every shape on every path.
    for ov in [
        "workload=1",
        "stations=2",
        "stations.latch1=3",
        "stations.latch1.speed.table=[]",
        "workload.routing.latch1={}",
        "simulation.stop=\"x\"",
        "stations.latch1.speed.table[0]=5",
        "metrics.z=\"1/\"",
        "workload.think.mean=1e400",
        "a.b.c.d=1",
        "\"x.y\"=1",
    ] {
        let o = Override::parse(ov).unwrap();
        let _ = load_str("m.toml", &full, &[o]);
    }
}

/// A closed chain of `n` queues through a routing table: s0 -> s1 -> ... -> sink.
fn chain_model(n: usize) -> String {
    let mut t = String::from(
        "[workload]\ntype = \"closed\"\npopulation = 10\n[workload.routing]\nsource = { s0 = 1.0 }\n",
    );
    for i in 0..n - 1 {
        t.push_str(&format!("s{i} = {{ s{} = 1.0 }}\n", i + 1));
    }
    t.push_str(&format!("s{} = {{ sink = 1.0 }}\n", n - 1));
    for i in 0..n {
        t.push_str(&format!(
            "[stations.s{i}]\nkind = \"queue\"\nservice = {{ dist = \"exponential\", mean = 0.001 }}\n"
        ));
    }
    t
}

#[test]
fn loading_is_linear_in_the_stations() {
    // Timing ratios, not absolute times: a model four times larger must
    // not take sixteen times as long (a quadratic step gives a ratio near
    // 16, a linear loader near 4, n log n about 4.6). The threshold, 9,
    // sits far from both, since other tests of this binary run on the
    // same cores: a small and a large load alternate, three times each,
    // and the best of each is compared, so a busy moment slows one try of
    // one size, not the ratio.
    let texts = [chain_model(10_000), chain_model(40_000)];
    let mut best = [f64::INFINITY; 2];
    for _ in 0..3 {
        for (text, best) in texts.iter().zip(&mut best) {
            let t = std::time::Instant::now();
            let m = load_str("chain.toml", text, &[]).unwrap_or_else(|e| panic!("{e}"));
            let elapsed = t.elapsed().as_secs_f64();
            assert!(m.network.spec().stations.len() >= 10_000);
            *best = best.min(elapsed);
        }
    }
    let [t10, t40] = best;
    assert!(
        t40 < 9.0 * t10,
        "loading 40k stations took {t40:.3}s, 10k took {t10:.3}s: not linear"
    );
}

#[test]
fn schema_directive_is_not_part_of_the_description() {
    let m = load(
        &format!("#:schema ../docs/qsim-model.schema.json\n{MM1}"),
        &[],
    );
    assert_eq!(m.description, load(MM1, &[]).description);
    for entry in std::fs::read_dir(models_dir()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("#:schema ../docs/qsim-model.schema.json\n"),
            "{} names the model schema for editors on its first line",
            path.display()
        );
    }
}
