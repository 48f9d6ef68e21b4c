//! Integration tests of the model format: every error located, overrides,
//! stability, the shipped models.

use qsim_kernel::{
    Discipline, InitialState, Routing, Speed, StationKind, Stop, Target, Warmup, Workload,
};
use qsim_model::*;
use std::path::{Path, PathBuf};

fn models_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models")
}

fn sets(list: &[&str]) -> Vec<Override> {
    list.iter().map(|s| Override::parse(s).unwrap()).collect()
}

/// Loads `text` (named `m.toml`) and returns the formatted errors, or "ok".
fn errors(text: &str, overrides: &[&str]) -> String {
    match load_str("m.toml", text, &sets(overrides)) {
        Ok(_) => "ok".into(),
        Err(e) => e.to_string(),
    }
}

/// Asserts that loading fails and the messages contain each expected line.
#[track_caller]
fn check(text: &str, overrides: &[&str], expect: &[&str]) {
    let got = errors(text, overrides);
    for want in expect {
        assert!(got.contains(want), "expected\n  {want}\nin\n{got}");
    }
}

fn load(text: &str, overrides: &[&str]) -> Model {
    load_str("m.toml", text, &sets(overrides)).unwrap_or_else(|e| panic!("{e}"))
}

const MM1: &str = r#"# M/M/1.
[workload]
type = "open"
arrival = { dist = "exponential", mean = 1.25 }
route = ["server"]

[stations.server]
kind = "queue"
service = { dist = "exponential", mean = 1.0 }
"#;

const CLOSED: &str = r#"[workload]
type = "closed"
population = 10
think = { dist = "exponential", mean = 1.0 }

[workload.routing]
source = { cpu = 1.0 }
cpu = { disk1 = 0.45, disk2 = 0.45, sink = 0.1 }
disk1 = { cpu = 1.0 }
disk2 = { cpu = 1.0 }

[stations.cpu]
kind = "queue"
service = { dist = "exponential", mean = 0.005 }

[stations.disk1]
kind = "queue"
service = { dist = "exponential", mean = 0.03 }

[stations.disk2]
kind = "queue"
service = { dist = "exponential", mean = 0.027 }

[regions.throttle]
stations = ["disk1", "disk2"]
"#;

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
fn syntax_error_is_one_located_error() {
    let e = load_str("m.toml", "[workload]\ntype = \n", &[]).unwrap_err();
    assert_eq!(e.errors.len(), 1);
    assert!(
        e.to_string().starts_with("m.toml:2:8: malformed TOML:"),
        "{e}"
    );
    let e = load_str("m.toml", "a = 1\na = 2\n", &[]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("m.toml:2:1: malformed TOML: duplicate key"),
        "{e}"
    );
}

#[test]
fn unknown_keys_list_what_is_expected() {
    check(
        &MM1.replace("kind = \"queue\"", "kind = \"queue\"\nsevrers = 2"),
        &[],
        &[
            "m.toml:9:1: stations.server.sevrers: unknown key `sevrers` in a queue station; expected one of: kind, service, service_by_class, speed, servers, discipline",
            "  hint: did you mean `servers`?",
        ],
    );
    check(
        &MM1.replace("type = \"open\"", "type = \"open\"\npopulaton = 3"),
        &[],
        &[
            "m.toml:4:1: workload.populaton: unknown key `populaton` in [workload]; expected one of: type, arrival, rate_per_s, population, think, route, routing",
        ],
    );
    check(
        &format!("{MM1}\n[simulaton]\nseed = 1\n"),
        &[],
        &[
            "m.toml:11:2: simulaton: unknown key `simulaton` in the top level; expected one of: simulation, workload, classes, stations, regions, metrics",
            "did you mean `simulation`?",
        ],
    );
    check(
        &MM1.replace("mean = 1.0 }", "mean = 1.0, sigma = 2 }"),
        &[],
        &[
            "m.toml:9:47: stations.server.service.sigma: unknown key `sigma` in an exponential distribution; expected one of: dist, mean, rate_per_s, scv",
        ],
    );
}

#[test]
fn bad_values_are_located() {
    check(
        &MM1.replace("kind = \"queue\"", "kind = \"quuee\""),
        &[],
        &[
            "m.toml:8:8: stations.server.kind: expected one of delay, queue, latch, batch, link, fork, join, found \"quuee\"",
            "  hint: did you mean \"queue\"?",
        ],
    );
    check(
        &MM1.replace("kind = \"queue\"", "kind = \"queue\"\nservers = 0"),
        &[],
        &["m.toml:9:11: stations.server.servers: expected a number of servers >= 1, found 0"],
    );
    check(
        &MM1.replace("mean = 1.0 }", "mean = -1.0 }"),
        &[],
        &[
            "m.toml:9:11: stations.server.service: exponential mean must be a positive finite number, found -1",
        ],
    );
    check(
        &MM1.replace("mean = 1.0 }", "mean = 1.0 }\nspeed = { table = [ { n = 1, rate = 3 }, { n = 5, rate = 2 }, { n = 9, rate = -5 } ] }"),
        &[],
        &["m.toml:10:79: stations.server.speed.table[2].rate: expected a positive rate, found -5"],
    );
    check(
        &MM1.replace(
            "mean = 1.0 }",
            "mean = 1.0 }\nspeed = { table = [ { n = 5, rate = 3 }, { n = 5, rate = 2 } ] }",
        ),
        &[],
        &[
            "m.toml:10:48: stations.server.speed.table[1].n: expected n to increase from point to point, found 5 after 5",
        ],
    );
    check(
        &MM1.replace("mean = 1.0 }", "mean = 1.0, scv = 2 }"),
        &[],
        &["an exponential distribution has scv 1, found scv 2"],
    );
    check(
        &MM1.replace(
            r#"{ dist = "exponential", mean = 1.0 }"#,
            r#"{ dist = "uniform", min = 1.0, mean = 2.0 }"#,
        ),
        &[],
        &[
            "m.toml:9:11: stations.server.service: a uniform distribution needs min and max, or mean and scv; found min, mean",
        ],
    );
}

#[test]
fn routing_errors() {
    // Routing to a missing station, with a hint.
    check(
        &CLOSED.replace("disk1 = 0.45, disk2", "dsk1 = 0.45, disk2"),
        &[],
        &[
            "m.toml:8:9: workload.routing.cpu.dsk1: no station named `dsk1`; expected one of: cpu, disk1, disk2, sink",
            "did you mean `disk1`?",
        ],
    );
    // Probabilities that do not sum to 1.
    check(
        &CLOSED.replace("sink = 0.1", "sink = 0.2"),
        &[],
        &["m.toml:8:7: workload.routing.cpu: probabilities must sum to 1, found 1.1"],
    );
    check(
        &CLOSED.replace("sink = 0.1", "sink = -0.1"),
        &[],
        &[
            "m.toml:8:44: workload.routing.cpu.sink: expected a probability between 0 and 1, found -0.1",
        ],
    );
    // A route to an unknown station.
    check(
        &MM1.replace(r#"route = ["server"]"#, r#"route = ["server", "srv"]"#),
        &[],
        &["m.toml:5:20: workload.route[1]: no station named `srv`; expected one of: server"],
    );
    // A reached station without a routing row.
    check(
        &CLOSED.replace("disk2 = { cpu = 1.0 }\n", ""),
        &[],
        &[
            "m.toml:6:1: workload.routing: class default reaches station disk2 but the routing has no row for it",
        ],
    );
    // Jobs that can never leave.
    check(
        &CLOSED
            .replace("disk2 = 0.45, sink = 0.1", "disk2 = 0.55")
            .replace("disk1 = { cpu = 1.0 }", "disk1 = { disk1 = 1.0 }"),
        &[],
        &["workload.routing: jobs of class default that reach station cpu can never get to sink"],
    );
}

#[test]
fn per_class_service_missing() {
    let text = r#"
[classes.a]
population = 2
route = ["cpu"]
[classes.b]
population = 2
route = ["cpu", "disk"]
[stations.cpu]
kind = "queue"
service_by_class = { a = { dist = "exponential", mean = 1 }, b = { dist = "exponential", mean = 1 } }
[stations.disk]
kind = "queue"
service_by_class = { a = { dist = "exponential", mean = 1 }, c = { dist = "exponential", mean = 1 } }
"#;
    check(
        text,
        &[],
        &[
            "m.toml:7:17: classes.b.route[1]: class b is routed to station disk, which has no service time for it",
            "  hint: add service = { ... } or service_by_class.b to [stations.disk]",
            "m.toml:13:62: stations.disk.service_by_class.c: no class named `c`; expected one of: a, b",
        ],
    );
}

#[test]
fn fork_join_region_batch_errors() {
    let text = r#"
[workload]
population = 4
route = ["fan", "gather"]
[stations.fan]
kind = "fork"
fan_out = 2
to = ["db1", "db2"]
join = "gather"
[stations.gather]
kind = "join"
quorum = 3
[stations.db1]
kind = "batch"
max_batch = 0
service = { dist = "deterministic", value = 0.001 }
[stations.db2]
kind = "delay"
service = { dist = "deterministic", value = 0.001 }
[regions.throttle]
stations = ["db1", "db3"]
limit = 0
"#;
    check(
        text,
        &[],
        &[
            "m.toml:12:10: stations.gather.quorum: expected a quorum between 1 and the fan-out 2 of fork `fan`, found 3",
            "m.toml:15:13: stations.db1.max_batch: expected a batch size >= 1, found 0",
            "m.toml:21:20: regions.throttle.stations[1]: no station named `db3`; expected one of: fan, gather, db1, db2",
            "m.toml:22:9: regions.throttle.limit: expected a limit >= 1 (or \"none\"), found 0",
        ],
    );
    // A fork must be followed by its join in a route.
    let clean = text
        .replace("quorum = 3", "quorum = 2")
        .replace("max_batch = 0", "max_batch = 4")
        .replace(r#""db1", "db3""#, r#""db1""#)
        .replace("limit = 0", "limit = 2");
    assert_eq!(errors(&clean, &[]), "ok");
    check(
        &clean.replace(r#"route = ["fan", "gather"]"#, r#"route = ["fan"]"#),
        &[],
        &[
            "m.toml:4:10: workload.route[0]: fork fan must be followed in the route by its join gather",
        ],
    );
}

#[test]
fn unknown_mechanism_parameters() {
    let text = r#"
[workload]
population = 4
route = ["l"]
[stations.l]
kind = "latch"
service = { dist = "exponential", mean = 0.001 }
numa = { nodes = 2, cores = 32, local_handoff_s = 1e-7, remote_handoff_s = 1e-6 }
spin = { spin_wait_delay = 6, pause_cycles = 140, clock_ghz = 2.5, context_switch_s = 5e-6, spin_wiat_delay = 3 }
"#;
    check(
        text,
        &[],
        &[
            "m.toml:8:21: stations.l.numa.cores: unknown key `cores` in numa; expected one of: nodes, cores_per_node, local_handoff_s, remote_handoff_s, migration_s",
            "m.toml:8:8: stations.l.numa: missing key `cores_per_node`; expected the cores per node (>= 1)",
            "m.toml:9:93: stations.l.spin.spin_wiat_delay: unknown key `spin_wiat_delay` in spin",
            "hint: did you mean `spin_wait_delay`?",
        ],
    );
    // Keys of another kind are rejected too.
    check(
        &text.replace("kind = \"latch\"", "kind = \"latch\"\nservers = 2"),
        &[],
        &[
            "stations.l.servers: unknown key `servers` in a latch station; expected one of: kind, service, service_by_class, speed, numa, spin, wake",
        ],
    );
}

#[test]
fn several_errors_at_once_in_file_order() {
    let text = r#"
[simulation]
replications = 0
stop = { jobs = -5 }
[workload]
type = "closed"
population = 0
think = { dist = "exponential", mean = 0 }
route = ["cpu", "nope"]
[stations.cpu]
kind = "qeueu"
[metrics]
x = "throughput +"
y = "thruput * 2"
"#;
    let e = load_str("m.toml", text, &[]).unwrap_err();
    let s = e.to_string();
    let want = [
        "m.toml:3:16: simulation.replications: expected a number of replications between 1 and 4294967295, found 0",
        "m.toml:4:17: simulation.stop.jobs: expected a number of jobs >= 1, found -5",
        "m.toml:7:14: workload.population: expected a number of jobs >= 1, found 0",
        "m.toml:8:9: workload.think: exponential mean must be a positive finite number, found 0",
        "m.toml:9:17: workload.route[1]: no station named `nope`; expected one of: cpu",
        "m.toml:11:8: stations.cpu.kind: expected one of delay, queue, latch, batch, link, fork, join, found \"qeueu\"",
        "m.toml:13:18: metrics.x: expected a number, a name or '(', found the end at character 13",
        "m.toml:14:5: metrics.y: unknown variable thruput; expected throughput",
    ];
    for w in want {
        assert!(s.contains(w), "expected\n  {w}\nin\n{s}");
    }
    // Sorted by position.
    let lines: Vec<usize> = e.errors.iter().map(|e| e.line).collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted);
}

#[test]
fn stability_error_says_the_limit() {
    check(
        MM1,
        &["workload.arrival.mean=0.98"],
        &[
            "m.toml:4:11: workload.arrival: utilization 1.02 at station server: the open workload is unstable; lower the arrival rate below 1/s (set by --set workload.arrival.mean=0.98)",
        ],
    );
    let text = CLOSED.replace(
        "type = \"closed\"\npopulation = 10\nthink = { dist = \"exponential\", mean = 1.0 }",
        "type = \"open\"\nrate_per_s = 8",
    );
    check(
        &text,
        &[],
        &[
            "m.toml:3:14: workload.rate_per_s: utilization 1.08 at station disk1: the open workload is unstable; lower the arrival rate below 7.41/s",
        ],
    );
    // Below the limit it loads.
    assert_eq!(errors(&text, &["workload.rate_per_s=7"]), "ok");
    // Closed workloads are never unstable.
    assert_eq!(errors(CLOSED, &["workload.population=100000"]), "ok");
}

#[test]
fn overrides_set_create_and_fail() {
    let m = load(
        CLOSED,
        &[
            "workload.population=500",
            "stations.cpu.servers=4",
            "simulation.seed=9",
            "regions.throttle.limit=20",
        ],
    );
    let spec = m.network.spec();
    assert!(matches!(
        spec.classes[0].workload,
        Workload::Closed {
            population: 500,
            ..
        }
    ));
    assert!(matches!(
        spec.stations[0].kind,
        StationKind::Queue { servers: 4, .. }
    ));
    assert_eq!(spec.regions[0].limit, Some(20));
    assert_eq!(m.run.seed, 9);
    // A region shorthand, and "none" as a bare word.
    let m = load(CLOSED, &["throttle.limit=5", "throttle.limit=none"]);
    assert_eq!(m.network.spec().regions[0].limit, None);
    // Inline tables and arrays.
    let m = load(
        MM1,
        &[r#"stations.server.service={ dist = "deterministic", value = 0.5 }"#],
    );
    assert_eq!(
        m.network.spec().stations[0].service[0]
            .as_ref()
            .unwrap()
            .scv(),
        0.0
    );
    // Array index.
    let speed = "[stations.server.speed]\ntable = [ { n = 1, rate = 3 }, { n = 5, rate = 2 } ]\n";
    let m = load(
        &format!("{MM1}{speed}"),
        &["stations.server.speed.table[1].rate=7"],
    );
    assert_eq!(
        m.network.spec().stations[0].speed,
        Some(Speed::Table(vec![(1.0, 3.0), (5.0, 7.0)]))
    );

    // Unknown path: the override is the location.
    check(
        CLOSED,
        &["workload.popultion=5"],
        &[
            "--set workload.popultion=5: unknown key path workload.popultion; expected one of: workload.type, workload.arrival, workload.rate_per_s, workload.population, workload.think, workload.route, workload.routing",
            "hint: did you mean workload.population?",
        ],
    );
    check(
        CLOSED,
        &["stations.cpux.servers=2"],
        &[
            "--set stations.cpux.servers=2: unknown key path stations.cpux.servers; stations.cpux does not exist; expected one of: stations.cpu, stations.disk1, stations.disk2",
            "did you mean stations.cpu?",
        ],
    );
    check(
        &format!("{MM1}{speed}"),
        &["stations.server.speed.table[5].rate=7"],
        &[
            "--set stations.server.speed.table[5].rate=7: unknown key path stations.server.speed.table[5].rate; stations.server.speed.table has 2 elements, so the index must be below 2",
        ],
    );
    // Bad value of an existing key: the file location, marked as set.
    check(
        CLOSED,
        &["workload.population=-3"],
        &[
            "m.toml:3:14: workload.population: expected a number of jobs, found -3: a count cannot be negative (set by --set workload.population=-3)",
        ],
    );
    check(
        CLOSED,
        &["workload.population=lots"],
        &[
            "workload.population: expected a number of jobs (a whole number), found \"lots\" (set by --set workload.population=lots)",
        ],
    );
    // Bad value of a created key: the override is the location.
    check(
        CLOSED,
        &["stations.cpu.discipline=fifo"],
        &[
            "--set stations.cpu.discipline=fifo: stations.cpu.discipline: expected one of fcfs, ps, lcfs, priority, found \"fifo\"",
        ],
    );
    // Malformed overrides.
    assert!(
        Override::parse("novalue")
            .unwrap_err()
            .to_string()
            .contains("--set novalue: expected PATH=VALUE")
    );
    assert!(
        Override::parse("a..b=1")
            .unwrap_err()
            .to_string()
            .contains("malformed key path a..b")
    );
}

/// Two CPU-and-latch pairs and a disk, for key paths with patterns.
const PAIRS: &str = r#"[workload]
type = "closed"
population = 4
think = { dist = "exponential", mean = 0.01 }

[workload.routing]
source = { cpu01 = 0.5, cpu02 = 0.5 }
cpu01 = { latch01 = 1.0 }
cpu02 = { latch02 = 1.0 }
latch01 = { disk = 1.0 }
latch02 = { disk = 1.0 }
disk = { sink = 1.0 }

[stations.cpu01]
kind = "queue"
discipline = "ps"
service = { dist = "exponential", mean = 0.001 }

[stations.cpu02]
kind = "queue"
discipline = "ps"
service = { dist = "exponential", mean = 0.001 }

[stations.latch01]
kind = "latch"
service = { dist = "exponential", mean = 0.0001 }
spin = { spin_wait_delay = 6, pause_cycles = 140, clock_ghz = 2.5, context_switch_s = 1e-5, cpu = "cpu01" }

[stations.latch02]
kind = "latch"
service = { dist = "exponential", mean = 0.0001 }
spin = { spin_wait_delay = 6, pause_cycles = 140, clock_ghz = 2.5, context_switch_s = 1e-5, cpu = "cpu02" }

[stations.disk]
kind = "queue"
service = { dist = "exponential", mean = 0.002 }
"#;

fn servers(m: &Model) -> Vec<(String, u32)> {
    m.network
        .spec()
        .stations
        .iter()
        .filter_map(|s| match s.kind {
            StationKind::Queue { servers, .. } => Some((s.name.clone(), servers)),
            _ => None,
        })
        .collect()
}

fn spin_delays(m: &Model) -> Vec<f64> {
    m.network
        .spec()
        .stations
        .iter()
        .filter_map(|s| match &s.kind {
            StationKind::Latch(l) => l.spin.as_ref().map(|s| s.spin_wait_delay),
            _ => None,
        })
        .collect()
}

#[test]
fn patterns_in_key_paths_set_every_match() {
    let m = load(PAIRS, &["stations.latch*.spin.spin_wait_delay=30"]);
    assert_eq!(spin_delays(&m), [30.0, 30.0]);
    // `?` is one character; the rest of the path may create keys as usual.
    let m = load(PAIRS, &["stations.cpu??.servers=8"]);
    let got = servers(&m);
    assert_eq!(
        got,
        [("cpu01".into(), 8), ("cpu02".into(), 8), ("disk".into(), 1)]
    );
    // Several patterns; a station alias with a pattern; later overrides win.
    let m = load(
        PAIRS,
        &[
            "stations.l*.sp*.spin_wait_delay=12",
            "latch0?.spin.pause_cycles=10",
            "stations.latch02.spin.spin_wait_delay=3",
        ],
    );
    assert_eq!(spin_delays(&m), [12.0, 3.0]);
    // `se*` matches `service` (not `servers`, absent from the file).
    let m = load(PAIRS, &["stations.*.se*.mean=0.0005"]);
    let means: Vec<f64> = m
        .network
        .spec()
        .stations
        .iter()
        .map(|s| s.service[0].as_ref().unwrap().mean())
        .collect();
    assert!(means.iter().all(|&x| x == 0.0005), "{means:?}");
    // Each match is checked, and located, where it is in the file.
    let e = errors(PAIRS, &["stations.latch*.spin.spin_wait_delay=-1"]);
    let lines: Vec<&str> = e.lines().collect();
    assert_eq!(lines.len(), 2, "{e}");
    assert!(
        lines[0].starts_with("m.toml:27:28: stations.latch01.spin.spin_wait_delay: "),
        "{e}"
    );
    assert!(
        lines[1].starts_with("m.toml:32:28: stations.latch02.spin.spin_wait_delay: "),
        "{e}"
    );
    assert!(
        lines[1].ends_with("found -1 (set by --set stations.latch*.spin.spin_wait_delay=-1)"),
        "{e}"
    );
}

#[test]
fn pattern_errors_name_the_concrete_path() {
    // A pattern that matches nothing lists what is there.
    check(
        PAIRS,
        &["stations.lach*.spin.spin_wait_delay=30"],
        &[
            "--set stations.lach*.spin.spin_wait_delay=30: unknown key path stations.lach*.spin.spin_wait_delay; no key matches the pattern stations.lach*; the keys there are stations.cpu01, stations.cpu02, stations.latch01, stations.latch02, stations.disk",
        ],
    );
    check(
        PAIRS,
        &["stations.cpux.*=1"],
        &[
            "--set stations.cpux.*=1: unknown key path stations.cpux.*; stations.cpux does not exist; expected one of: stations.cpu01, stations.cpu02",
        ],
    );
    // A match must still be valid: each wrong key is reported at its own path.
    check(
        PAIRS,
        &["stations.*.servers=2"],
        &[
            "--set stations.*.servers=2: unknown key path stations.latch01.servers;",
            "--set stations.*.servers=2: unknown key path stations.latch02.servers;",
        ],
    );
    check(
        PAIRS,
        &["stations.*01.spin.pause_cycles=10"],
        &[
            "--set stations.*01.spin.pause_cycles=10: unknown key path stations.cpu01.spin; expected one of: stations.cpu01.kind,",
        ],
    );
    // A quoted key is never a pattern.
    check(
        PAIRS,
        &[r#"stations."latch*".servers=2"#],
        &[r#"stations."latch*" does not exist"#],
    );
}

#[test]
fn workload_alias_for_a_single_closed_class() {
    let text = r#"
[classes.threads]
population = 10
route = ["cpu"]
[classes.web]
rate_per_s = 1
route = ["cpu"]
[stations.cpu]
kind = "queue"
servers = 8
service = { dist = "exponential", mean = 0.01 }
"#;
    let m = load(text, &["workload.population=77"]);
    assert!(matches!(
        m.network.spec().classes[0].workload,
        Workload::Closed { population: 77, .. }
    ));
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
    // Timing ratios, not absolute times: doubling the model must not
    // quadruple the time (a quadratic step would give a ratio near 4, a
    // linear loader near 2). The best of two runs damps a busy machine.
    let time = |n: usize| {
        let text = chain_model(n);
        (0..2)
            .map(|_| {
                let t = std::time::Instant::now();
                let m = load_str("chain.toml", &text, &[]).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(m.network.spec().stations.len(), n);
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let (t20, t40) = (time(20_000), time(40_000));
    assert!(
        t40 < 3.0 * t20,
        "loading 40k stations took {t40:.3}s, 20k took {t20:.3}s: not linear"
    );
}

/// A model with one value breaking each of the kernel's range rules, in
/// every station kind, its mechanisms, speed curves and routing.
const RANGES: &str = r#"[workload]
type = "closed"
population = 4
[workload.routing]
source = { cpu = 1.5 }
cpu = { l = 1.0 }
l = { fan = 1.0 }
gather = { sink = 1.0 }
db = { gather = 1.0 }

[stations.cpu]
kind = "queue"
servers = 2
service = { dist = "exponential", mean = 0.001 }

[stations.l]
kind = "latch"
service = { dist = "exponential", mean = 0.001 }
numa = { nodes = 0, cores_per_node = 4, local_handoff_s = -1e-6, remote_handoff_s = 1e-6 }
spin = { spin_wait_delay = 6, pause_cycles = 140, clock_ghz = 0, context_switch_s = 5e-6, cpu = "cpu" }
speed = { usl = { sigma = -0.1, kappa = 0, lambda = 1000 } }

[stations.fan]
kind = "fork"
fan_out = 0
to = { db = -2 }
join = "gather"

[stations.gather]
kind = "join"
quorum = 0

[stations.db]
kind = "link"
rtt = { dist = "exponential", mean = 0.001 }
pipeline = 0
speed = { table = [{ n = 0.5, rate = 10 }] }
"#;

#[test]
fn kernel_range_errors_are_located_at_their_keys() {
    // The reader only checks types; each rule is the kernel's, and its
    // typed location comes back as the file position of the value and the
    // key path, with the message saying what was found and expected.
    check(
        RANGES,
        &[],
        &[
            "m.toml:5:18: workload.routing.source.cpu: expected a probability between 0 and 1, found 1.5",
            "m.toml:19:18: stations.l.numa.nodes: expected a number of nodes >= 1, found 0",
            "m.toml:19:59: stations.l.numa.local_handoff_s: expected a time in seconds >= 0, found -0.000001",
            "m.toml:20:63: stations.l.spin.clock_ghz: expected a positive clock rate, found 0",
            "m.toml:20:97: stations.l.spin.cpu: station cpu is not a PS queue; spinning waiters share a cpu's capacity with its jobs, so spin.cpu must name a queue with discipline = \"ps\"",
            "m.toml:21:27: stations.l.speed.usl.sigma: expected a coefficient >= 0, found -0.1",
            "m.toml:25:11: stations.fan.fan_out: expected a number of sub-jobs >= 1, found 0",
            "m.toml:26:13: stations.fan.to.db: expected a positive weight, found -2",
            "m.toml:31:10: stations.gather.quorum: expected a quorum >= 1, found 0",
            "m.toml:36:12: stations.db.pipeline: expected a pipeline depth >= 1, found 0",
            "m.toml:37:26: stations.db.speed.table[0].n: expected a number of jobs >= 1, found 0.5",
        ],
    );
    // A wrong branch is the reason; the row's sum is not reported as well.
    let got = errors(RANGES, &[]);
    assert!(!got.contains("must sum to 1"), "{got}");
    assert_eq!(
        got.lines().filter(|l| l.starts_with("m.toml:")).count(),
        11,
        "{got}"
    );
}

#[test]
fn kernel_range_errors_from_overrides_name_the_override() {
    // Set by --set over a value of the file: the file position of the old
    // value, and the override that put the bad one there; a key the
    // override creates is located at the override itself.
    check(
        CLOSED,
        &["stations.cpu.servers=0", "workload.routing.cpu.sink=1.5"],
        &[
            "m.toml:8:44: workload.routing.cpu.sink: expected a probability between 0 and 1, found 1.5 (set by --set workload.routing.cpu.sink=1.5)",
            "--set stations.cpu.servers=0: stations.cpu.servers: expected a number of servers >= 1, found 0",
        ],
    );
}
