//! Every kind of model error, located at its key.

use super::*;

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
            "m.toml:4:1: workload.populaton: unknown key `populaton` in [workload]; expected one of: type, arrival, rate_per_s, population, think, route, repeat, routing",
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
            // A link is timed by its round trip: a speed curve there used to
            // be read and ignored.
            "m.toml:37:9: stations.db.speed: a speed curve applies to delay, queue and latch stations only; a batch or link is timed by its service (and per_job_s), so scale those instead",
            "m.toml:37:26: stations.db.speed.table[0].n: expected a number of jobs >= 1, found 0.5",
        ],
    );
    // A wrong branch is the reason; the row's sum is not reported as well.
    let got = errors(RANGES, &[]);
    assert!(!got.contains("must sum to 1"), "{got}");
    assert_eq!(
        got.lines().filter(|l| l.starts_with("m.toml:")).count(),
        12,
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
