//! qsim-model used from a program: networks built in code, their errors,
//! and derived metrics evaluated with reasons.

use super::*;
use qsim_kernel::{
    ClassSpec, Dist, Network, NetworkSpec, ReplicationResult, RunConfig, StationSpec, run,
};

/// An M/M/1 of class `web` through station `server`, arrival rate `lambda`,
/// service rate 1/s.
fn mm1(lambda: f64) -> NetworkSpec {
    NetworkSpec {
        stations: vec![StationSpec {
            name: "server".into(),
            kind: StationKind::Queue {
                servers: 1,
                discipline: Discipline::Fcfs,
            },
            service: vec![Some(Dist::exponential(1.0).unwrap())],
            speed: None,
        }],
        classes: vec![ClassSpec {
            name: "web".into(),
            workload: Workload::Open {
                interarrival: Dist::exponential(1.0 / lambda).unwrap(),
            },
            routing: Routing::Sequence(vec![0]),
            priority: 0,
        }],
        ..NetworkSpec::default()
    }
}

#[test]
fn network_errors_display_every_problem_at_its_path() {
    let mut spec = mm1(0.5);
    spec.stations[0].kind = StationKind::Queue {
        servers: 0,
        discipline: Discipline::Fcfs,
    };
    spec.classes[0].routing = Routing::Sequence(vec![0, 5]);
    let errs = Network::new(spec).unwrap_err();
    assert!(errs.len() >= 2, "{errs:?}");
    let shown = errs.to_string();
    let lines: Vec<&str> = shown.lines().collect();
    // One line per problem, each the problem's own path and message.
    assert_eq!(lines.len(), errs.len(), "{shown}");
    for (line, e) in lines.iter().zip(errs.iter()) {
        assert_eq!(*line, format!("{}: {}", e.path, e.message));
    }
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("stations.server.servers: ")),
        "{shown}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("classes.web.route")),
        "{shown}"
    );
    // It is an error `?` can carry.
    let boxed: Box<dyn std::error::Error> = Box::new(errs);
    assert_eq!(boxed.to_string(), shown);
}

#[test]
fn a_model_from_code_is_refused_when_unstable_like_a_file() {
    let ok = Model::from_spec("mm1", mm1(0.5), RunConfig::default()).unwrap();
    assert_eq!(ok.path, "mm1");
    assert!(ok.derived.is_empty() && ok.warnings.is_empty());

    // lambda 2 on a server of rate 1: the file loader refuses it with the
    // highest stable rate (1/s), and so does the constructor, at the class.
    let from_code = Model::from_spec("mm1", mm1(2.0), RunConfig::default()).unwrap_err();
    let file = MM1.replace("mean = 1.25", "mean = 0.5");
    let from_file = load_str("m.toml", &file, &[]).unwrap_err();
    assert_eq!(from_code.errors.len(), 1, "{from_code}");
    assert_eq!(from_file.errors.len(), 1, "{from_file}");
    let (c, f) = (&from_code.errors[0], &from_file.errors[0]);
    assert_eq!(c.message, f.message);
    assert_eq!(c.hint, f.hint);
    assert!(c.message.contains("below 1/s"), "{c}");
    assert_eq!(
        (c.file.as_str(), c.key_path.as_str()),
        ("mm1", "classes.web")
    );

    // The kernel's own rules come back as model errors at their paths.
    let mut bad = mm1(0.5);
    bad.classes[0].routing = Routing::Sequence(vec![3]);
    let e = Model::from_spec("mm1", bad, RunConfig::default()).unwrap_err();
    assert!(
        e.errors.iter().all(|e| e.file == "mm1" && e.line == 0),
        "{e}"
    );
    assert!(
        e.errors
            .iter()
            .any(|e| e.key_path.starts_with("classes.web.route")),
        "{e}"
    );
}

#[test]
fn derived_metrics_carry_their_value_or_the_reason_they_have_none() {
    let mut model = Model::from_spec(
        "mm1",
        mm1(0.5),
        RunConfig {
            replications: 3,
            stop: Stop::Jobs(2_000),
            ..RunConfig::default()
        },
    )
    .unwrap();
    let metric = |name: &str, text: &str| DerivedMetric {
        name: name.into(),
        expr: Expr::parse(text).unwrap(),
    };
    model.derived = vec![
        metric("twice", "2 * throughput_per_s"),
        metric(
            "broken",
            "1 / (stations.server.utilization - stations.server.utilization)",
        ),
        metric("elsewhere", "stations.disk.utilization"),
    ];
    let results = run(&model.network, &model.run).unwrap();
    let values = model.derived_values(&results);
    let names: Vec<&str> = values.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["twice", "broken", "elsewhere"]);

    // A linear expression: its mean over replications is twice the
    // throughput's, and so is its interval.
    let x = results.system.throughput_per_s;
    let twice = values[0].value.as_ref().unwrap();
    assert!(
        (twice.mean - 2.0 * x.mean).abs() <= 1e-12 * x.mean,
        "{twice:?} {x:?}"
    );
    assert!(
        (twice.ci95 - 2.0 * x.ci95).abs() <= 1e-9 * x.ci95,
        "{twice:?} {x:?}"
    );

    let broken = values[1].value.as_ref().unwrap_err();
    assert!(
        matches!(
            broken,
            DerivedError::Eval {
                replication: 0,
                error: EvalError::DivisionByZero
            }
        ),
        "{broken:?}"
    );
    assert_eq!(broken.to_string(), "division by zero in replication 0");

    let elsewhere = values[2].value.as_ref().unwrap_err();
    assert_eq!(
        elsewhere.to_string(),
        "unknown variable stations.disk.utilization in replication 0"
    );

    let none: &[ReplicationResult] = &[];
    assert_eq!(
        model.derived[0].estimate(&model.network, none),
        Err(DerivedError::NoReplications)
    );
}

#[test]
fn a_table_of_distributions_under_service_points_to_service_by_class() {
    let text = MM1.replace(
        "service = { dist = \"exponential\", mean = 1.0 }",
        "service = { a = { dist = \"exponential\", mean = 1.0 }, b = { dist = \"exponential\", mean = 2.0 } }",
    );
    let e = load_str("m.toml", &text, &[]).unwrap_err();
    assert_eq!(e.errors.len(), 1, "{e}");
    let shown = e.to_string();
    assert!(
        shown.starts_with("m.toml:9:11: stations.server.service: expected a distribution"),
        "{shown}"
    );
    assert!(shown.contains("found a table of tables (a, b)"), "{shown}");
    assert!(
        shown.contains(
            "hint: service times per class are written stations.server.service_by_class = { a = "
        ),
        "{shown}"
    );
    assert!(!shown.contains("did you mean"), "{shown}");

    // Elsewhere (a think time) the hint names the per-class table.
    let text = CLOSED.replace(
        "think = { dist = \"exponential\", mean = 1.0 }",
        "think = { a = { dist = \"exponential\", mean = 1.0 } }",
    );
    let shown = load_str("m.toml", &text, &[]).unwrap_err().to_string();
    assert!(
        shown.contains("workload.think: expected a distribution"),
        "{shown}"
    );
    assert!(shown.contains("[classes.NAME]"), "{shown}");
}
