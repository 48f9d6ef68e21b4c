//! The kernel's range rules as a model file shows them: each refusal at
//! `file:line:column` of the key that holds the value, with the range.

use qsim_model::*;

const MODEL: &str = r#"[workload]
type = "closed"
population = 3
think = { dist = "exponential", mean = 1.0 }
route = ["cpu", "disk"]

[stations.cpu]
kind = "queue"
service = { dist = "exponential", mean = 0.01 }

[stations.disk]
kind = "queue"
service = { dist = "exponential", mean = 0.02 }
"#;

/// The errors of MODEL with `overrides`, or "ok".
fn errors(overrides: &[&str]) -> String {
    let sets: Vec<Override> = overrides
        .iter()
        .map(|s| Override::parse(s).unwrap())
        .collect();
    match load_str("m.toml", MODEL, &sets) {
        Ok(_) => "ok".into(),
        Err(e) => e.to_string(),
    }
}

#[track_caller]
fn check(overrides: &[&str], want: &[&str]) {
    let got = errors(overrides);
    for w in want {
        assert!(got.contains(w), "expected\n  {w}\nin\n{got}");
    }
}

#[test]
fn the_model_loads_within_the_ranges() {
    assert_eq!(errors(&[]), "ok");
    assert_eq!(
        errors(&[
            "workload.think.mean=1e9",
            "stations.cpu.servers=16777216",
            r#"stations.disk.service={ dist = "erlang", k = 4294967295, mean = 1 }"#,
        ]),
        "ok"
    );
}

#[test]
fn huge_times_are_refused_at_their_key() {
    check(
        &["workload.think.mean=2147483647"],
        &[
            "m.toml:4:9: workload.think: exponential mean must be at most 1e9 s",
            "found 2147483647",
        ],
    );
    check(
        &[r#"stations.disk.service={ dist = "deterministic", mean = 1e300 }"#],
        &[
            "m.toml:13:11: stations.disk.service: deterministic value must be at most 1e9 s",
            "found 1e300",
        ],
    );
}

#[test]
fn a_lognormal_whose_mean_overflows_is_refused_at_its_key() {
    check(
        &[r#"stations.cpu.service={ dist = "lognormal", mu = 700, sigma = 1000 }"#],
        &[
            "m.toml:9:11: stations.cpu.service: lognormal with mu 700 and sigma 1000 has the mean exp(mu + sigma^2/2) = inf s",
        ],
    );
    check(
        &[r#"stations.cpu.service={ dist = "hyperexponential", mean = 1, scv = 1e300 }"#],
        &["stations.cpu.service: mean 1 s with scv 1e300 gives a standard deviation of 1e150 s"],
    );
}

#[test]
fn too_many_servers_are_refused_at_servers() {
    check(
        &["stations.cpu.servers=1000000000"],
        &["stations.cpu.servers: expected at most 16777216 servers, found 1000000000"],
    );
}
