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

mod arrays;
mod errors;
mod library;
mod loading;
mod overrides;
