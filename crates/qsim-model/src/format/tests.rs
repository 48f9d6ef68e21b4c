//! The descriptors against the user's documentation and the kernel.

use super::*;
use crate::{station_kind_names, station_kinds};
use qsim_kernel::{METRICS, MetricScope};

const DOC: &str = include_str!("../../../../docs/model-format.md");

/// The keys in the key tables of the section under `heading` (its
/// `####` subsections included for a `###` section), each with its
/// `default` cell where the table has that column.
fn documented(heading: &str) -> Vec<(String, Option<String>)> {
    let level = heading.chars().take_while(|c| *c == '#').count();
    let mut lines = DOC.lines().skip_while(|l| *l != heading);
    assert!(
        lines.next().is_some(),
        "docs/model-format.md has no {heading}"
    );
    let mut keys = Vec::new();
    let mut default_col = None;
    for line in lines {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        if hashes > 0 && line[hashes..].starts_with(' ') && hashes <= level.max(3) {
            break;
        }
        if !line.starts_with('|') {
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        if cells[0] == "key" {
            default_col = cells.iter().position(|c| *c == "default");
        } else if let Some(key) = cells[0].strip_prefix('`').and_then(|k| k.split('`').next()) {
            let default = default_col
                .and_then(|i| cells.get(i))
                .map(|c| c.to_string());
            keys.push((key.to_string(), default));
        }
    }
    keys
}

/// Every key of `keys`, with those of its nested tables.
fn flattened(keys: &'static [Key]) -> Vec<&'static Key> {
    let mut out = Vec::new();
    for k in keys {
        out.push(k);
        if let Shape::Table(t) = k.shape {
            out.extend(flattened(t.keys));
        }
    }
    out
}

/// The documented keys of a section are the declared ones, and every
/// declared default is the documented one.
fn check(heading: &str, keys: Vec<&'static Key>) {
    let docs = documented(heading);
    let mut doc_names: Vec<&str> = docs.iter().map(|(k, _)| k.as_str()).collect();
    let mut names: Vec<&str> = keys.iter().map(|k| k.name).collect();
    doc_names.sort_unstable();
    names.sort_unstable();
    assert_eq!(
        doc_names, names,
        "{heading}: the keys of docs/model-format.md (left) differ from the format's descriptor (right)"
    );
    for k in keys {
        let Some(default) = k.default else { continue };
        let cell = docs
            .iter()
            .find(|(d, _)| d == k.name)
            .and_then(|d| d.1.as_ref());
        if let Some(cell) = cell {
            assert!(
                cell.contains(default),
                "{heading}: `{}` defaults to {default} in the descriptor, the docs say {cell}",
                k.name
            );
        }
    }
}

#[test]
fn every_kind_documents_exactly_its_keys() {
    for kind in station_kinds() {
        let mut keys = flattened(kind.keys);
        if kind.service == ServiceKeys::ServiceOrRtt {
            keys.push(STATION_COMMON.iter().find(|k| k.name == "rtt").unwrap());
        }
        check(&format!("### `{}`", kind.name), keys);
    }
    let common = STATION_COMMON.iter().filter(|k| k.name != "rtt").collect();
    check("## `[stations.NAME]`", common);
}

#[test]
fn every_other_table_documents_exactly_its_keys() {
    let own = |t: &'static TableShape, not: &[&str]| -> Vec<&'static Key> {
        t.keys.iter().filter(|k| !not.contains(&k.name)).collect()
    };
    check("## `[simulation]`", own(&SIMULATION, &[]));
    // `client` has a section of its own; a class adds two keys to a workload's.
    check("## `[workload]`", own(&WORKLOAD, &["client"]));
    check(
        "### Schedules (`[[workload.schedule]]`)",
        own(&SCHEDULE_STEP, &[]),
    );
    check(
        "### Capacity schedules (`[[stations.NAME.schedule]]`)",
        own(&CAPACITY_STEP, &[]),
    );
    let workload = WORKLOAD.names();
    check("## `[classes.NAME]`", own(&CLASS, &workload));
    check("### Clients under overload (`client`)", own(&CLIENT, &[]));
    check(
        "### Routing policies (`routing_policy`)",
        own(&ROUTING_POLICY, &[]),
    );
    check("## `[regions.NAME]`", own(&REGION, &[]));
}

#[test]
fn kinds_have_distinct_names_and_keys_and_known_metrics() {
    let names = station_kind_names();
    for (i, n) in names.iter().enumerate() {
        assert!(!names[..i].contains(n), "kind {n} registered twice");
    }
    for kind in station_kinds() {
        let keys = kind.key_names();
        for (i, k) in keys.iter().enumerate() {
            assert!(!keys[..i].contains(k), "{}: key {k} twice", kind.name);
        }
        for m in kind.metrics {
            assert!(
                METRICS
                    .iter()
                    .any(|row| row.scope == MetricScope::Station && row.name == *m),
                "{}: metric {m} is not a station metric of the kernel's table",
                kind.name
            );
        }
    }
}

/// A model with a station of every kind.
const EVERY_KIND: &str = r#"
[workload]
population = 2
route = ["d", "q", "l", "b", "k", "f", "j"]
[stations.d]
kind = "delay"
service = { dist = "exponential", mean = 1.0 }
[stations.q]
kind = "queue"
service = { dist = "exponential", mean = 0.1 }
[stations.l]
kind = "latch"
service = { dist = "exponential", mean = 0.1 }
[stations.b]
kind = "batch"
service = { dist = "exponential", mean = 0.1 }
[stations.k]
kind = "link"
service = { dist = "exponential", mean = 0.1 }
[stations.f]
kind = "fork"
fan_out = 2
to = ["q"]
join = "j"
[stations.j]
kind = "join"
"#;

#[test]
fn what_a_kind_supports_is_what_the_kernel_decides() {
    let model = crate::load_str("every_kind.toml", EVERY_KIND, &[]).expect("the model loads");
    let stations = &model.network.spec().stations;
    for kind in station_kinds() {
        let st = stations
            .iter()
            .find(|st| qsim_kernel::KindTag::from(&st.kind).name() == kind.name)
            .unwrap_or_else(|| panic!("the test model has no {} station", kind.name));
        let k = &st.kind;
        let s = kind.supports;
        assert_eq!(s.capacity, k.takes_capacity(), "{}: capacity", kind.name);
        assert_eq!(s.speed_curve, k.takes_speed_curve(), "{}: speed", kind.name);
        assert_eq!(s.overload, k.takes_overload(), "{}: overload", kind.name);
        assert_eq!(
            kind.takes_service(),
            k.takes_service(),
            "{}: service",
            kind.name
        );
        // Capacity and overload keys are declared exactly where supported.
        let has = |key: &str| kind.keys.iter().any(|x| x.name == key);
        assert_eq!(has("capacity"), s.capacity, "{}", kind.name);
        assert_eq!(has("patience"), s.overload, "{}", kind.name);
        // A kind that serves groups reports group figures.
        let groups = kind.metrics.contains(&qsim_kernel::names::MEAN_BATCH_SIZE);
        assert_eq!(groups, k.serves_groups(), "{}: group metrics", kind.name);
    }
}
