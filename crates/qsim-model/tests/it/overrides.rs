//! `--set` overrides: plain paths, patterns, aliases.

use super::*;

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
            "--set workload.popultion=5: unknown key path workload.popultion; expected one of: workload.type, workload.arrival, workload.rate_per_s, workload.population, workload.think, workload.route, workload.repeat, workload.routing",
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
            "--set stations.cpu.discipline=fifo: stations.cpu.discipline: expected one of fcfs, ps, lcfs, priority, preemptive_priority, found \"fifo\"",
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
