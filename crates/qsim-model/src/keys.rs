//! The key paths a model file offers to `--set` and `--vary`, for shell
//! completion (`qsim complete-keys`): every value the file writes, under
//! the path an override names it by, plus the forms that reach several at
//! once (a station group's members, `stations.*.KEY`).
//!
//! This reads the file's TOML as it stands (no overrides, no checks): a
//! completion must be quick and must work on a model that does not load yet.
//! A station also offers the keys its kind accepts that the file leaves at
//! their defaults (`stations.cpu.servers` for a queue written without it).

use std::collections::BTreeMap;

/// Members of a station group listed one by one (`stations.g[k].m.key`) up
/// to this count; a larger group is offered through its template paths
/// (which reach every member) and its first member only.
const MEMBERS_LISTED: i64 = 16;

/// The key paths of the model text `text` that start with `prefix`, in the
/// file's order (a `stations.*.KEY` pattern after the last station), each
/// once. A text that is not TOML offers nothing.
pub fn key_paths(text: &str, prefix: &str) -> Vec<String> {
    let Ok(root) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in &root {
        let path = crate::quote_key(k);
        if k == "stations"
            && let toml::Value::Table(stations) = v
        {
            stations_paths(stations, &mut out);
        } else {
            walk(&path, v, &mut out);
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| p.starts_with(prefix) && seen.insert(p.clone()));
    out
}

/// Every station's paths, the groups' members, then `stations.*.KEY` for a
/// key at least two stations have.
fn stations_paths(stations: &toml::Table, out: &mut Vec<String>) {
    let mut shared: BTreeMap<String, usize> = BTreeMap::new();
    for (name, node) in stations {
        let base = format!("stations.{}", crate::quote_key(name));
        let toml::Value::Table(t) = node else {
            out.push(base);
            continue;
        };
        let group = t.get("count").and_then(toml::Value::as_integer);
        match group {
            Some(count) if !t.contains_key("kind") => {
                out.push(base.clone());
                for (k, child) in t {
                    let path = format!("{base}.{}", crate::quote_key(k));
                    if child.is_table() {
                        station(&path, child, out);
                    } else {
                        walk(&path, child, out);
                    }
                }
                let listed = count.clamp(0, MEMBERS_LISTED);
                let listed = if count > MEMBERS_LISTED { 1 } else { listed };
                for k in 0..listed {
                    for (member, m) in t.iter().filter(|(_, m)| m.is_table()) {
                        let path = format!("stations.{name}[{k}].{}", crate::quote_key(member));
                        station(&path, m, out);
                    }
                }
            }
            _ => {
                let mut own = Vec::new();
                station(&base, node, &mut own);
                for p in &own {
                    if let Some(rest) = p.strip_prefix(&base).and_then(|r| r.strip_prefix('.')) {
                        *shared.entry(rest.to_string()).or_default() += 1;
                    }
                }
                out.extend(own);
            }
        }
    }
    out.extend(
        shared
            .into_iter()
            .filter(|(_, n)| *n >= 2)
            .map(|(rest, _)| format!("stations.*.{rest}")),
    );
}

/// A station's paths: those the file writes, then the other keys its kind
/// accepts.
fn station(base: &str, node: &toml::Value, out: &mut Vec<String>) {
    walk(base, node, out);
    let toml::Value::Table(t) = node else {
        return;
    };
    if let Some(kind) = t
        .get("kind")
        .and_then(toml::Value::as_str)
        .and_then(crate::station_kind)
    {
        for key in kind.key_names() {
            if !t.contains_key(key) {
                out.push(format!("{base}.{key}"));
            }
        }
    }
}

/// `path` itself, and below it every key of a table and every item of an
/// array of tables (`workload.schedule[0].population`).
fn walk(path: &str, v: &toml::Value, out: &mut Vec<String>) {
    out.push(path.to_string());
    match v {
        toml::Value::Table(t) => {
            for (k, child) in t {
                walk(&format!("{path}.{}", crate::quote_key(k)), child, out);
            }
        }
        toml::Value::Array(items) if items.iter().all(toml::Value::is_table) => {
            for (i, item) in items.iter().enumerate() {
                walk(&format!("{path}[{i}]"), item, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::key_paths;

    #[test]
    fn stations_groups_patterns_and_prefix() {
        let text = r#"
[workload]
population = 20
schedule = [{ at_s = 1, population = 40 }]

[stations.cpu]
kind = "queue"
servers = 1
service = { dist = "exponential", mean = 0.005 }

[stations.disk]
kind = "queue"
service = { dist = "exponential", mean = 0.03 }

[stations.instance]
count = 2

[stations.instance.latch]
kind = "latch"
service = { dist = "exponential", mean = 1e-6 }
"#;
        let all = key_paths(text, "");
        for want in [
            "workload.population",
            "workload.schedule[0].population",
            "stations.cpu.servers",
            "stations.cpu.service.mean",
            "stations.instance.count",
            "stations.instance.latch.service.mean",
            "stations.instance[1].latch.service.mean",
            "stations.*.service.mean",
        ] {
            assert!(all.iter().any(|p| p == want), "{want} missing from {all:?}");
        }
        // The disk leaves `servers` at its default; the latch has none.
        assert!(all.iter().any(|p| p == "stations.disk.servers"));
        assert!(!all.iter().any(|p| p == "stations.instance.latch.servers"));
        assert!(all.iter().any(|p| p == "stations.*.servers"));
        // `spin` is a latch's only: no pattern for it.
        assert!(!all.iter().any(|p| p == "stations.*.spin"));
        let mut cpu = key_paths(text, "stations.cpu.s");
        cpu.sort();
        assert_eq!(
            cpu,
            [
                "stations.cpu.schedule",
                "stations.cpu.servers",
                "stations.cpu.service",
                "stations.cpu.service.dist",
                "stations.cpu.service.mean",
                "stations.cpu.service_by_class",
                "stations.cpu.shed_after_s",
                "stations.cpu.speed",
            ]
        );
        assert!(key_paths("not = [toml", "").is_empty());
    }
}
