//! Tests of the sweep charts.

use super::*;

fn demo() -> SweepCharts {
    let series = ["throttle.limit=none", "throttle.limit=100"]
        .iter()
        .enumerate()
        .map(|(j, label)| Series {
            label: label.to_string(),
            points: (1..=30)
                .map(|i| {
                    let n = f64::from(i) * 20.0;
                    let cap = if j == 0 {
                        2000.0 * (1.0 - n / 900.0)
                    } else {
                        1900.0
                    };
                    let x = (n / 0.11).min(cap.max(150.0));
                    let r = n / x - 0.1;
                    ChartPoint {
                        x: n,
                        throughput_per_s: x,
                        throughput_ci95: 0.03 * x,
                        response_time_s: r,
                        response_time_ci95: 0.02 * r,
                        response_time_p99_s: 4.6 * r,
                        response_time_p99_ci95: 0.1 * r,
                        bottleneck_utilization: Some((x / 2000.0).min(1.0)),
                        // The unthrottled curve collapses past 600.
                        bistable: j == 0 && n >= 500.0,
                        other_end_throughput_per_s: (j == 0 && n >= 500.0).then_some(150.0),
                    }
                })
                .collect(),
        })
        .collect();
    SweepCharts {
        title: "demo.toml".into(),
        x_label: "workload.population (jobs)".into(),
        series,
        knees: vec![
            Marker {
                series: 0,
                x: 200.0,
            },
            Marker {
                series: 1,
                x: 200.0,
            },
        ],
        references: vec![Reference {
            label: "bound".into(),
            throughput: vec![(100.0, 1000.0), (900.0, 1800.0)],
            response_time: vec![(100.0, 0.01), (900.0, 0.4)],
        }],
    }
}

#[test]
fn the_throughput_axis_holds_every_mode() {
    let mut c = demo();
    let top = c
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .map(|p| p.throughput_per_s + p.throughput_ci95)
        .fold(0.0, f64::max);
    // A fast mode far above every point's own throughput.
    let p = &mut c.series[0].points[0];
    p.bistable = true;
    p.other_end_throughput_per_s = Some(5.0 * top);
    assert!(throughput_y_range(&c).end >= 5.0 * top);
}

#[test]
fn draws_every_chart_in_both_formats() {
    let dir = std::env::temp_dir().join(format!("qsim-charts-{}", std::process::id()));
    let files = write_charts(&demo(), &dir, &[ImageFormat::Svg, ImageFormat::Png]).unwrap();
    assert_eq!(files.len(), 8);
    for f in &files {
        assert!(
            std::fs::metadata(f).unwrap().len() > 1000,
            "{}",
            f.display()
        );
    }
    let svg = std::fs::read_to_string(dir.join("throughput.svg")).unwrap();
    assert!(svg.contains("throughput (per s)") && svg.contains("throttle.limit=100"));
    assert!(svg.contains("bistable point") && svg.contains("started from the other end"));
    let plain = SweepCharts {
        series: demo()
            .series
            .into_iter()
            .map(|mut s| {
                s.points.iter_mut().for_each(|p| p.bistable = false);
                s
            })
            .collect(),
        ..demo()
    };
    let svg = render_svg(&plain, "throughput").unwrap();
    assert!(!svg.contains("bistable"), "no mark without bistable points");
    // QSIM_KEEP_CHARTS=1 keeps the files to look at.
    if std::env::var_os("QSIM_KEEP_CHARTS").is_none() {
        std::fs::remove_dir_all(&dir).unwrap();
    } else {
        eprintln!("charts kept in {}", dir.display());
    }
}

#[test]
fn empty_and_degenerate_input_still_draws() {
    let dir = std::env::temp_dir().join(format!("qsim-charts-empty-{}", std::process::id()));
    let mut c = SweepCharts::default();
    write_charts(&c, &dir, &[ImageFormat::Svg]).unwrap();
    c.series.push(Series {
        label: String::new(),
        points: vec![ChartPoint {
            x: 5.0,
            throughput_per_s: f64::NAN,
            throughput_ci95: 0.0,
            response_time_s: 0.0,
            response_time_ci95: f64::NAN,
            response_time_p99_s: f64::NAN,
            response_time_p99_ci95: f64::NAN,
            bottleneck_utilization: None,
            bistable: true,
            other_end_throughput_per_s: Some(f64::NAN),
        }],
    });
    write_charts(&c, &dir, &[ImageFormat::Svg]).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bundled_font_measures_text_without_system_fonts() {
    register_fonts().unwrap();
    // Without a registered family, ab_glyph cannot size any text.
    let (w, h) = ("sans-serif", 20.0)
        .into_font()
        .box_size("throughput (per s)")
        .unwrap();
    assert!(w > 100 && h > 10, "text box {w} x {h}");
}

#[test]
fn renders_each_chart_as_svg_text() {
    for stem in CHARTS {
        let svg = render_svg(&demo(), stem).unwrap();
        assert!(svg.trim_start().starts_with("<svg"), "{stem}");
        assert!(svg.trim_end().ends_with("</svg>"), "{stem}");
        assert!(svg.contains("demo.toml"), "{stem} has its title");
    }
    let e = render_svg(&demo(), "latency").unwrap_err();
    assert!(e.to_string().contains("no chart named latency"), "{e}");
}
