//! Tests of the results: the Student-t quantiles against the exact law,
//! interval estimates, each warning's wording, kind tags, the JSON layout.
//!
//! Mutation testing (cargo-mutants, see ARCHITECTURE.md): these tests
//! catch 115 of the 124 mutants of `results/mod.rs` (8 do not build). The
//! one left is equivalent: deleting `t975`'s arm for 0 degrees of freedom
//! sends 0 to the expansion, which divides by 0 and gives the same +inf.

use super::*;

#[test]
fn a_long_list_of_correlated_metrics_is_counted_not_printed() {
    let names = |n: usize| (0..n).map(|k| format!("station.s{k}.mean_jobs")).collect();
    let few = RunWarning::SegmentsCorrelated { metrics: names(8) }.to_string();
    assert!(few.contains("station.s7.mean_jobs"), "{few}");
    assert!(!few.contains("more are correlated"), "{few}");
    let many = RunWarning::SegmentsCorrelated {
        metrics: names(200),
    }
    .to_string();
    assert!(many.contains("station.s5.mean_jobs and 194 more"), "{many}");
    assert!(!many.contains("station.s6.mean_jobs"), "{many}");
    assert!(many.len() < 400, "{} characters", many.len());
}

/// P(|T| <= t) for Student's t with `df` degrees of freedom, in closed
/// form (Abramowitz & Stegun 26.7.3 and 26.7.4), θ = atan(t/√df): for odd
/// df, (2/π)(θ + sin θ (cos θ + (2/3) cos³θ + … + (2·4···(df−3))/(1·3···(df−2))
/// cos^(df−2) θ)); for even df, sin θ (1 + (1/2) cos²θ + … +
/// (1·3···(df−3))/(2·4···(df−2)) cos^(df−2) θ).
fn t_within(t: f64, df: u32) -> f64 {
    let theta = (t / f64::from(df).sqrt()).atan();
    let (s, c) = theta.sin_cos();
    let c2 = c * c;
    if df % 2 == 1 {
        let mut sum = 0.0;
        if df > 1 {
            let mut term = c;
            sum = c;
            for j in 1..=(df - 3) / 2 {
                let j = f64::from(j);
                term *= c2 * 2.0 * j / (2.0 * j + 1.0);
                sum += term;
            }
        }
        std::f64::consts::FRAC_2_PI * (theta + s * sum)
    } else {
        let (mut term, mut sum) = (1.0, 1.0);
        for j in 1..=(df - 2) / 2 {
            let j = f64::from(j);
            term *= c2 * (2.0 * j - 1.0) / (2.0 * j);
            sum += term;
        }
        s * sum
    }
}

/// The exact two-sided 95% point of Student's t: `t_within` = 0.95, by
/// bisection.
fn t_exact(df: u32) -> f64 {
    let (mut lo, mut hi) = (1.9, 13.0);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if t_within(mid, df) < 0.95 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[test]
fn t975_is_the_exact_quantile() {
    // The closed form against two textbook cases: tan(0.475π) for 1
    // degree of freedom, 0.95·√(2/(1 − 0.95²)) for 2.
    let pi = std::f64::consts::PI;
    assert!((t_exact(1) - (0.475 * pi).tan()).abs() < 1e-9);
    assert!((t_exact(2) - 0.95 * (2.0f64 / (1.0 - 0.95 * 0.95)).sqrt()).abs() < 1e-9);
    assert_eq!(t975(0), f64::INFINITY);
    // 1 to 30 degrees of freedom: the exact quantile rounded to 3 decimals.
    for df in 1..=30 {
        let t = t975(df);
        assert!(
            t_within(t - 5e-4, df) < 0.95 && 0.95 < t_within(t + 5e-4, df),
            "df {df}: {t} vs {}",
            t_exact(df)
        );
    }
    // Above 30, z + g1/d + g2/d² (Cornish–Fisher, A&S 26.7.5): it is off by
    // the next term, −g3/d³ with g3 = (3z⁷ + 19z⁵ + 17z³ − 15z)/384, to
    // within 3% (the terms after it are O(1/d⁴)).
    let z: f64 = 1.959_963_984_540_054;
    let g3 = (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / 384.0;
    for df in [31, 40, 60, 100, 300, 1000] {
        let off = t975(df) - t_exact(df);
        let next = -g3 / f64::from(df).powi(3);
        assert!(
            (off - next).abs() <= 0.03 * next.abs(),
            "df {df}: off by {off:e}, the next term is {next:e}"
        );
    }
}

#[test]
fn estimate_is_the_mean_and_the_t_interval() {
    assert_eq!(estimate([]), Estimate::default());
    let one = estimate([2.5]);
    assert!(one.mean == 2.5 && one.ci95.is_nan(), "{one:?}");
    // 1, 2, 3, 4: mean 2.5, sample variance 5/3, half-width t975(3)·√(5/3/4).
    let e = estimate([1.0, 2.0, 3.0, 4.0]);
    assert!((e.mean - 2.5).abs() < 1e-15, "{e:?}");
    let want = t975(3) * (5.0f64 / 12.0).sqrt();
    assert!((e.ci95 - want).abs() < 1e-14, "{e:?} vs {want}");
    assert_eq!(t975(3), 3.182);
    // Two figures near 1e9 that differ by 0.3: the half-width is
    // t975(1)·|b − a|/2, not lost to cancellation (a one-pass Σx² − n·mean²
    // is off in the sixth digit here).
    let (a, b) = (1e9 - 0.3, 1e9);
    let want = t975(1) * (b - a) / 2.0;
    let e = estimate([a, b]);
    assert!((e.ci95 / want - 1.0).abs() < 1e-12, "{e:?} vs {want}");
}

#[test]
fn warnings_say_what_changed_and_by_how_much() {
    let s = RunWarning::NotSteady {
        metric: "throughput_per_s",
        first_half: 10.0,
        second_half: 12.0,
    }
    .to_string();
    assert!(
        s.starts_with("not in steady state: system throughput_per_s went from 10.00 in the first half of the measured window to 12.00 in the second (+20.0%), "),
        "{s}"
    );
    let load = |start_s, end_s| {
        RunWarning::LoadChanges {
            start_s,
            end_s,
            changes: "the load changes",
        }
        .to_string()
    };
    let ramp = load(5.0, 8.0);
    assert!(
        ramp.starts_with(
            "the load changes during the run (its schedule, from 5.000 s to 8.000 s): "
        ),
        "{ramp}"
    );
    let step = load(5.0, 5.0);
    assert!(
        step.starts_with("the load changes during the run (its schedule, at 5.000 s): "),
        "{step}"
    );
    let names = |n: usize| (0..n).map(|k| format!("s{k}")).collect();
    let nine = RunWarning::SegmentsCorrelated { metrics: names(9) }.to_string();
    assert!(
        nine.starts_with(
            "one replication: the segment means of s0, s1, s2, s3, s4, s5 and 3 more are correlated"
        ),
        "{nine}"
    );
    let tail = |labels: &[&str]| {
        RunWarning::TailTooShort {
            scope: "system response time".into(),
            labels: labels.iter().map(|l| l.to_string()).collect(),
            fewest: 50,
            needed: 1000,
        }
        .to_string()
    };
    assert_eq!(
        tail(&["p99"]),
        "system response time p99: n/a, a replication has only 50 responses, too few to put ~10 beyond it (it needs 1000); run longer (--jobs or --time) to get it"
    );
    assert_eq!(
        tail(&["p99", "p99.9"]),
        "system response time p99, p99.9: n/a, a replication has only 50 responses, too few to put ~10 beyond the lowest of them (it needs 1000); run longer (--jobs or --time) to get them"
    );
}

#[test]
fn kind_tags_name_their_kind_and_what_it_can_do() {
    use KindTag::*;
    for (k, name, saturates, groups) in [
        (Delay, "delay", false, false),
        (Queue, "queue", true, false),
        (Latch, "latch", true, false),
        (Batch, "batch", true, true),
        (Link, "link", true, true),
        (Fork, "fork", false, false),
        (Join, "join", false, false),
    ] {
        assert_eq!(k.name(), name);
        assert_eq!(k.to_string(), name);
        assert_eq!(serde_json::to_value(k).unwrap(), name);
        assert_eq!(
            (k.can_saturate(), k.serves_groups()),
            (saturates, groups),
            "{k}"
        );
    }
    let queue = StationKind::Queue {
        servers: 2,
        discipline: Default::default(),
    };
    assert_eq!(KindTag::from(&queue), Queue);
}

#[test]
fn json_is_keyed_by_name_with_unknowns_as_null() {
    let est = |mean| Estimate { mean, ci95: 0.5 };
    let r = RunResults {
        system: SystemResults {
            throughput_per_s: est(3.0),
            sla_violation: Some(est(0.1)),
            ..Default::default()
        },
        stations: vec![
            StationResults {
                name: "cpu".into(),
                kind: KindTag::Queue,
                throughput_per_s: est(2.0),
                classes: vec![StationClassResults {
                    name: "web".into(),
                    mean_jobs: est(1.5),
                    ..Default::default()
                }],
                ..Default::default()
            },
            StationResults {
                name: "net".into(),
                ..Default::default()
            },
        ],
        classes: vec![ClassResults {
            name: "web".into(),
            throughput_per_s: est(4.0),
            sla_violation: Some(est(0.2)),
            client: Some(ClientResults {
                goodput_per_s: est(3.5),
                ..Default::default()
            }),
            ..Default::default()
        }],
        regions: vec![RegionResults {
            name: "pool".into(),
            mean_inside: est(2.5),
            ..Default::default()
        }],
        ..Default::default()
    };
    let j = serde_json::to_value(&r).unwrap();
    let mean = |path: &[&str]| {
        let v = path.iter().fold(&j, |v, k| &v[k]);
        v["mean"]
            .as_f64()
            .unwrap_or_else(|| panic!("{path:?}: {v}"))
    };
    assert_eq!(j["system"]["throughput_per_s"]["ci95"], 0.5);
    assert_eq!(mean(&["system", "throughput_per_s"]), 3.0);
    assert_eq!(mean(&["system", "sla_violation"]), 0.1);
    assert_eq!(j["stations"]["cpu"]["kind"], "queue");
    assert_eq!(mean(&["stations", "cpu", "throughput_per_s"]), 2.0);
    assert_eq!(
        mean(&["stations", "cpu", "classes", "web", "mean_jobs"]),
        1.5
    );
    assert!(j["stations"]["net"].get("classes").is_none(), "{j}");
    assert_eq!(mean(&["classes", "web", "throughput_per_s"]), 4.0);
    assert_eq!(mean(&["classes", "web", "sla_violation"]), 0.2);
    assert_eq!(mean(&["classes", "web", "goodput_per_s"]), 3.5);
    assert_eq!(mean(&["regions", "pool", "mean_inside"]), 2.5);
    // Looked up by name.
    assert_eq!(r.station("net").map(|s| s.name.as_str()), Some("net"));
    assert!(r.station("disk").is_none());
    assert_eq!(r.class("web").map(|c| c.throughput_per_s), Some(est(4.0)));
    assert!(r.class("batch").is_none());
    assert_eq!(r.region("pool").map(|g| g.mean_inside), Some(est(2.5)));
    assert!(r.region("gate").is_none());
    // Not finite: written as null, read back as NaN.
    let unknown = Estimate {
        mean: 1.25,
        ci95: f64::NAN,
    };
    let text = serde_json::to_string(&unknown).unwrap();
    assert_eq!(text, r#"{"mean":1.25,"ci95":null}"#);
    let back: Estimate = serde_json::from_str(&text).unwrap();
    assert!(back.mean == 1.25 && back.ci95.is_nan(), "{back:?}");
    let undefined = ClassResults::undefined("web".into());
    assert_eq!(undefined.name, "web");
    assert!(
        undefined.throughput_per_s.mean.is_nan() && undefined.response_time_s.p99.ci95.is_nan()
    );
}
