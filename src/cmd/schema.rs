//! `qsim schema`: a JSON Schema (draft 2020-12) of the model format, for
//! editors that complete and check TOML against a schema (taplo, Even Better
//! TOML: `#:schema ../docs/qsim-model.schema.json` on a model's first line).
//!
//! The reader in qsim-model keeps locations and is not serde-typed, so the
//! schema is written here from a table of keys that follows
//! docs/model-format.md. It checks shapes (keys, types, enumerations, simple
//! bounds); `qsim check` stays the authority on meaning (names that must
//! exist, probabilities that sum to 1, ...). CI validates every model in
//! models/ against it with an independent validator.

use anyhow::Result;
use clap::Args;
use serde_json::{Map, Value, json};
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `qsim schema`.
#[derive(Args, Debug)]
pub struct SchemaArgs {}

/// Prints the schema.
pub fn schema(_args: &SchemaArgs) -> Result<ExitCode> {
    let mut text = serde_json::to_string_pretty(&model_schema())?;
    text.push('\n');
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// A key of a table: its name, its value's schema and what it means.
type Key = (&'static str, Value, &'static str);

fn count(min: u64) -> Value {
    json!({"type": "integer", "minimum": min})
}

fn number_min(min: f64) -> Value {
    json!({"type": "number", "minimum": min})
}

fn positive() -> Value {
    json!({"type": "number", "exclusiveMinimum": 0})
}

fn string() -> Value {
    json!({"type": "string"})
}

fn one_of_words(words: &[&str]) -> Value {
    json!({"enum": words})
}

fn names() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}

fn reference(def: &str) -> Value {
    json!({"$ref": format!("#/$defs/{def}")})
}

/// A closed table: only the keys listed, `required` among them.
fn table(keys: Vec<Key>, required: &[&str]) -> Value {
    let mut props = Map::new();
    for (name, mut schema, doc) in keys {
        if let Value::Object(m) = &mut schema {
            m.insert("description".into(), doc.into());
        }
        props.insert(name.into(), schema);
    }
    let mut t = json!({"type": "object", "properties": props, "additionalProperties": false});
    if !required.is_empty() {
        t["required"] = json!(required);
    }
    t
}

/// A table of NAME = value.
fn map_of(value: Value) -> Value {
    json!({"type": "object", "additionalProperties": value})
}

fn distribution() -> Value {
    let n = || json!({"type": "number"});
    table(
        vec![
            (
                "dist",
                one_of_words(&[
                    "exponential",
                    "deterministic",
                    "uniform",
                    "erlang",
                    "hyperexponential",
                    "lognormal",
                    "gamma",
                    "empirical",
                ]),
                "the family",
            ),
            ("mean", number_min(0.0), "mean, seconds"),
            ("rate_per_s", positive(), "rate (exponential)"),
            (
                "scv",
                number_min(0.0),
                "squared coefficient of variation, variance / mean²",
            ),
            ("value", number_min(0.0), "the constant (deterministic)"),
            ("min", n(), "lower end (uniform)"),
            ("max", n(), "upper end (uniform)"),
            ("k", count(1), "phases (erlang)"),
            ("p", n(), "probability of phase 1 (hyperexponential)"),
            ("mean1", n(), "mean of phase 1 (hyperexponential)"),
            ("mean2", n(), "mean of phase 2 (hyperexponential)"),
            ("mu", n(), "mean of the log (lognormal)"),
            ("sigma", n(), "standard deviation of the log (lognormal)"),
            ("shape", positive(), "shape (gamma)"),
            ("scale", positive(), "scale (gamma)"),
            (
                "samples",
                json!({"type": "array", "items": {"type": "number"}}),
                "the samples (empirical)",
            ),
            (
                "file",
                string(),
                "a file of samples, relative to the model (empirical)",
            ),
        ],
        &["dist"],
    )
}

fn speed() -> Value {
    let point = table(
        vec![
            ("n", count(1), "jobs present"),
            (
                "rate",
                positive(),
                "completion rate at n, work units per second",
            ),
        ],
        &["n", "rate"],
    );
    table(
        vec![
            (
                "table",
                json!({"type": "array", "items": point, "minItems": 1}),
                "points, n increasing; linear between them, constant outside",
            ),
            (
                "usl",
                table(
                    vec![
                        ("sigma", number_min(0.0), "contention"),
                        ("kappa", number_min(0.0), "coherency"),
                        ("lambda", positive(), "rate with one job"),
                    ],
                    &["sigma", "kappa", "lambda"],
                ),
                "Universal Scalability Law",
            ),
        ],
        &[],
    )
}

/// A fixed route: station names, or repeated parts `{ route, repeat }`.
fn route() -> Value {
    json!({"type": "array", "items": {"oneOf": [
        string(),
        {"type": "object", "properties": {
            "route": {"$ref": "#/$defs/route"},
            "repeat": count(1),
        }, "required": ["route", "repeat"], "additionalProperties": false},
    ]}})
}

fn routing() -> Value {
    map_of(map_of(
        json!({"type": "number", "minimum": 0, "maximum": 1}),
    ))
}

/// Keys of `[workload]` and of each `[classes.NAME]`.
fn class(with_priority: bool) -> Value {
    let mut keys: Vec<Key> = vec![
        ("type", one_of_words(&["open", "closed"]), "workload type"),
        (
            "arrival",
            reference("distribution"),
            "time between arrivals (open)",
        ),
        ("rate_per_s", positive(), "Poisson arrival rate (open)"),
        ("population", count(1), "number of jobs (closed)"),
        ("think", reference("distribution"), "think time (closed)"),
        ("route", route(), "a fixed sequence of stations"),
        ("repeat", count(1), "times the fixed route is followed"),
        (
            "routing",
            reference("routing"),
            "place = { next = probability }; source and sink; next \"CLASS:STATION\" switches the job to CLASS",
        ),
        (
            "schedule",
            json!({"type": "array", "minItems": 1, "items": table(
                vec![
                    ("at", number_min(0.0), "when the step starts, s from the start of the run"),
                    ("population", count(1), "the new population (closed)"),
                    ("rate_per_s", positive(), "the new arrival rate (open)"),
                    ("until", number_min(0.0), "end of a linear ramp to rate_per_s, s (open)"),
                ],
                &["at"],
            )}),
            "load steps over time ([[...schedule]])",
        ),
        (
            "client",
            client(),
            "client behaviour under overload: timeout, retries, backoff, retry budget",
        ),
    ];
    if with_priority {
        keys.push((
            "priority",
            json!({"type": "integer"}),
            "higher is served first at priority queues",
        ));
        keys.push((
            "sla_s",
            positive(),
            "the class's response-time objective, s",
        ));
    }
    table(keys, &[])
}

/// A class's `client` table.
fn client() -> Value {
    let fraction = json!({"type": "number", "minimum": 0, "maximum": 1});
    table(
        vec![
            (
                "timeout",
                reference("distribution"),
                "time after which the client gives up on an attempt",
            ),
            (
                "on_timeout",
                one_of_words(&["continue", "cancel"]),
                "the given-up request goes on, its work wasted (continue), or is cancelled while still queued (cancel)",
            ),
            (
                "deadline_s",
                positive(),
                "a success within it counts in goodput_per_s, s (default: the class's sla_s)",
            ),
            (
                "max_attempts",
                count(1),
                "most attempts per interaction, the first included",
            ),
            (
                "retry_probability",
                fraction.clone(),
                "probability that a failed attempt is retried",
            ),
            ("backoff", reference("distribution"), "delay before a retry"),
            (
                "backoff_base_s",
                positive(),
                "doubling backoff: delay before the first retry, s",
            ),
            (
                "backoff_cap_s",
                positive(),
                "doubling backoff: largest delay, s",
            ),
            (
                "backoff_jitter",
                fraction.clone(),
                "doubling backoff: fraction of the delay drawn away uniformly",
            ),
            (
                "retry_budget",
                json!({"type": "number", "exclusiveMinimum": 0, "maximum": 1}),
                "retries at most this fraction of first attempts (token bucket)",
            ),
            (
                "retry_budget_cap",
                number_min(1.0),
                "the retry budget's most saved tokens (burst)",
            ),
        ],
        &[],
    )
}

fn station() -> Value {
    table(
        vec![
            (
                "kind",
                one_of_words(&["delay", "queue", "latch", "batch", "link", "fork", "join"]),
                "station kind",
            ),
            (
                "service",
                reference("distribution"),
                "service time for every class",
            ),
            (
                "service_by_class",
                map_of(reference("distribution")),
                "per-class service times",
            ),
            (
                "speed",
                reference("speed"),
                "contention-dependent completion rate",
            ),
            ("servers", count(1), "identical servers (queue)"),
            (
                "discipline",
                one_of_words(&["fcfs", "ps", "lcfs", "priority"]),
                "queue discipline (queue)",
            ),
            (
                "capacity",
                count(1),
                "most jobs present, in service included (queue)",
            ),
            (
                "when_full",
                one_of_words(&["drop", "block"]),
                "a job arriving at a full station is lost (drop) or its sender holds it until there is room (block, blocking after service) (queue with capacity)",
            ),
            (
                "patience",
                reference("distribution"),
                "a waiting job leaves unserved after this long (reneging) (queue)",
            ),
            (
                "balk_at",
                count(1),
                "an arrival does not join when at least this many jobs are present (queue)",
            ),
            (
                "balk_probabilities",
                json!({"type": "array", "minItems": 1, "items": {"type": "number", "minimum": 0, "maximum": 1}}),
                "probability of not joining with n jobs present, by n; the last for any larger n (queue)",
            ),
            (
                "shed_after_s",
                positive(),
                "a job whose wait passed this when its service would start is dropped (queue)",
            ),
            (
                "numa",
                table(
                    vec![
                        ("nodes", count(1), "NUMA nodes"),
                        ("cores_per_node", count(1), "cores per node"),
                        ("local_handoff_s", number_min(0.0), "same-node hand-off, s"),
                        (
                            "remote_handoff_s",
                            number_min(0.0),
                            "cross-node hand-off, s",
                        ),
                        ("migration_s", number_min(0.0), "cold-cache extra, s"),
                    ],
                    &[
                        "nodes",
                        "cores_per_node",
                        "local_handoff_s",
                        "remote_handoff_s",
                    ],
                ),
                "NUMA hand-off costs (latch)",
            ),
            (
                "spin",
                table(
                    vec![
                        ("spin_wait_delay", number_min(0.0), "the delay setting d"),
                        (
                            "poll_delay",
                            one_of_words(&["units", "uniform"]),
                            "a poll's delay: whole units below d, or continuous",
                        ),
                        ("pause_cycles", number_min(0.0), "cycles per PAUSE"),
                        (
                            "pauses_per_unit",
                            number_min(0.0),
                            "PAUSEs per unit of delay",
                        ),
                        ("clock_ghz", positive(), "clock rate"),
                        ("spin_rounds", count(0), "polls before sleeping"),
                        (
                            "context_switch_s",
                            number_min(0.0),
                            "sleep and wake-up cost, s",
                        ),
                        ("cpu", string(), "the ps queue the waiters spin on"),
                    ],
                    &[
                        "spin_wait_delay",
                        "pause_cycles",
                        "clock_ghz",
                        "context_switch_s",
                    ],
                ),
                "spin-then-sleep waiting (latch)",
            ),
            (
                "wake",
                one_of_words(&["one", "all"]),
                "who a release wakes (latch)",
            ),
            ("max_batch", count(1), "largest group (batch, link)"),
            (
                "max_wait_s",
                number_min(0.0),
                "wait for a fuller group, s (batch)",
            ),
            (
                "per_job_s",
                number_min(0.0),
                "time added per job in a group, s (batch)",
            ),
            ("rtt", reference("distribution"), "round-trip time (link)"),
            ("pipeline", count(1), "round trips in flight (link)"),
            ("fan_out", count(1), "sub-jobs per job (fork)"),
            (
                "to",
                json!({"oneOf": [names(), map_of(number_min(0.0))]}),
                "targets, or target = weight (fork)",
            ),
            (
                "route",
                reference("route"),
                "the fixed route of every sub-job; [i] names one per group member (fork)",
            ),
            (
                "repeat",
                count(1),
                "times the sub-job route is followed (fork)",
            ),
            (
                "spread",
                one_of_words(&["even", "random"]),
                "how sub-jobs pick targets (fork)",
            ),
            ("join", string(), "the join station (fork)"),
            ("quorum", count(1), "sub-jobs that release the job (join)"),
        ],
        &["kind"],
    )
}

fn simulation() -> Value {
    let length = |what: &str| {
        json!({"oneOf": [
            table(vec![("jobs", count(1), "completed interactions")], &["jobs"]),
            table(vec![("time_s", positive(), "simulated seconds")], &["time_s"]),
        ], "description": what})
    };
    let mut warmup = length("discarded start of each replication");
    warmup["oneOf"]
        .as_array_mut()
        .expect("an array")
        .push(table(
            vec![(
                "fraction",
                json!({"type": "number", "minimum": 0.0, "exclusiveMaximum": 1.0, "description": "share of the stop"}),
                "share of the stop",
            )],
            &["fraction"],
        ));
    warmup["oneOf"]
        .as_array_mut()
        .expect("an array")
        .push(one_of_words(&["mser5", "none"]));
    table(
        vec![
            ("replications", count(1), "independent replications"),
            ("seed", count(0), "root seed"),
            ("stop", length("end of each replication"), "run length"),
            ("warmup", warmup, "warm-up"),
            (
                "precision",
                table(
                    vec![
                        (
                            "relative_half_width",
                            positive(),
                            "target CI half-width / mean",
                        ),
                        ("max_replications", count(1), "most replications"),
                    ],
                    &["relative_half_width"],
                ),
                "add replications until the CIs are this narrow",
            ),
            ("sla_s", positive(), "response-time objective, s"),
            (
                "initial",
                json!({"oneOf": [
                    one_of_words(&["thinking"]),
                    table(vec![("station", string(), "station name")], &["station"]),
                ]}),
                "where closed jobs start",
            ),
            (
                "max_jobs_present",
                count(1),
                "unstable beyond this many jobs",
            ),
            ("max_events", count(1), "abort after this many events"),
            (
                "station_tails",
                json!({"type": "boolean"}),
                "per-station percentiles, P(wait > 0) and number-present distribution",
            ),
            (
                "jobs_tail_k",
                count(1),
                "the k of P(n >= k) at each station",
            ),
        ],
        &[],
    )
}

/// The schema of a model file.
pub fn model_schema() -> Value {
    let region = table(
        vec![
            ("stations", names(), "member stations"),
            (
                "limit",
                json!({"oneOf": [count(1), one_of_words(&["none"])]}),
                "most jobs inside",
            ),
        ],
        &["stations"],
    );
    let mut root = table(
        vec![
            ("simulation", simulation(), "run settings"),
            ("workload", class(false), "a single job class"),
            ("classes", map_of(class(true)), "several job classes"),
            (
                "stations",
                map_of(json!({"oneOf": [reference("station"), reference("group")]})),
                "service centers, or station groups",
            ),
            ("regions", map_of(region), "throttles"),
            (
                "metrics",
                map_of(string()),
                "derived metrics: name = expression",
            ),
        ],
        &["stations"],
    );
    let extra = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.invalid/qsim/qsim-model.schema.json",
        "title": "qsim model",
        "description": "A qsim queueing-network model (TOML); see docs/model-format.md. `qsim check` validates meaning as well as shape.",
        "not": {"required": ["workload", "classes"]},
        "$defs": {
            "distribution": distribution(),
            "speed": speed(),
            "routing": routing(),
            "station": station(),
            "route": route(),
            "group": {
                "type": "object",
                "description": "a station group: count members, each a copy of the member stations",
                "properties": {"count": count(1)},
                "required": ["count"],
                "additionalProperties": reference("station"),
            },
        },
    });
    let mut out = extra.as_object().expect("an object").clone();
    out.extend(root.as_object_mut().expect("an object").clone());
    Value::Object(out)
}
