//! `qsim report`: a sweep directory as one self-contained HTML page.

use super::UsageError;
use anyhow::{Context, Result};
use clap::Args;
use qsim_report::charts::{self, CHARTS};
use qsim_report::html::{self, PageChart, SummaryRow, SweepPage};
use qsim_sweep::output::{CSV_FILE, HYSTERESIS_FILE, JSONL_FILE, MANIFEST_FILE, SUMMARY_FILE};
use qsim_sweep::{Point, SavedSweep, SweepSummary};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The page's file name inside the sweep directory.
pub const REPORT_FILE: &str = "report.html";

/// Arguments of `qsim report`.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// A finished sweep's output directory (of `qsim sweep` or `qsim merge`).
    pub dir: PathBuf,
}

/// `qsim report`.
pub fn report(args: &ReportArgs) -> Result<ExitCode> {
    let hysteresis = args.dir.join(HYSTERESIS_FILE);
    if hysteresis.exists() && !args.dir.join(MANIFEST_FILE).exists() {
        return Err(UsageError(format!(
            "{} holds a hysteresis run ({} and hysteresis.png/.svg are its results); `qsim report` makes pages for plain sweeps",
            args.dir.display(),
            hysteresis.display()
        ))
        .into());
    }
    let saved = SavedSweep::read(&args.dir).map_err(|e| {
        if e.is_usage() {
            UsageError(e.to_string()).into()
        } else {
            anyhow::Error::from(e)
        }
    })?;
    let page = write(&args.dir, &saved)?;
    writeln!(std::io::stdout().lock(), "wrote {}", page.display())?;
    Ok(ExitCode::SUCCESS)
}

/// Writes `dir/report.html` for the sweep saved in `dir` and returns its
/// path. Charts that cannot be drawn are left out with a warning, on the
/// page and on stderr.
pub fn write(dir: &Path, saved: &SavedSweep) -> Result<PathBuf> {
    let summary_path = dir.join(SUMMARY_FILE);
    let text = match std::fs::read_to_string(&summary_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(UsageError(format!(
                "{} has no {SUMMARY_FILE}: not a finished sweep (for shards, combine them with `qsim merge` first)",
                dir.display()
            ))
            .into());
        }
        Err(e) => {
            return Err(e).with_context(|| format!("reading {}", summary_path.display()));
        }
    };
    let summary: SweepSummary = serde_json::from_str(&text)
        .with_context(|| format!("{} is not a qsim sweep summary", summary_path.display()))?;

    let m = &saved.manifest;
    let mut warnings = Vec::new();
    if saved.records.len() < m.points {
        warnings.push(format!(
            "only {} of the {} points have run: the sweep is unfinished (complete it with `qsim sweep ... --resume -o {}`)",
            saved.records.len(),
            m.points,
            dir.display()
        ));
    }
    if summary.failed > 0 {
        let first = summary
            .errors
            .first()
            .map(|f| format!("; first at {}: {}", f.point, f.error))
            .unwrap_or_default();
        warnings.push(format!(
            "{} of {} points failed and are missing from the figures and charts{first} (see the error column of {CSV_FILE})",
            summary.failed, summary.points
        ));
    }
    warnings.extend(summary.warnings.iter().cloned());
    let model_text = std::fs::read_to_string(&m.model).ok();
    if model_text.is_some() && modified_after(Path::new(&m.model), &dir.join(MANIFEST_FILE)) {
        warnings.push(format!(
            "{} was modified after the sweep started: the model text below may not be the one that produced these results",
            m.model
        ));
    }

    let drawn = super::charts::sweep_charts(saved);
    let mut page_charts = Vec::new();
    for stem in CHARTS {
        match charts::render_svg(&drawn, stem) {
            Ok(svg) => page_charts.push(PageChart {
                title: stem.replace('_', " "),
                svg,
                plot: super::report_plots::plot(&drawn, &summary, stem),
            }),
            Err(e) => {
                eprintln!("warning: chart left out of the report: {e}");
                warnings.push(format!("chart left out: {e}"));
            }
        }
    }

    let title = Path::new(&m.model)
        .file_name()
        .map_or_else(|| m.model.clone(), |s| s.to_string_lossy().into_owned());
    let page = SweepPage {
        title,
        source: dir.display().to_string(),
        warnings,
        summary: summary_rows(&summary),
        charts: page_charts,
        settings: settings(saved),
        model_path: m.model.clone(),
        model_text,
        generator: format!("qsim {}", env!("CARGO_PKG_VERSION")),
    };
    let path = dir.join(REPORT_FILE);
    std::fs::write(&path, html::to_html(&page))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// Whether `file` was modified after `reference` (false when either time is
/// unknown: the warning is only given when it is certain).
fn modified_after(file: &Path, reference: &Path) -> bool {
    let time = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    matches!((time(file), time(reference)), (Some(f), Some(r)) if f > r)
}

/// The bottlenecks of `s` as runs of consecutive points with the same
/// station: (station, first point, last point).
pub(super) fn bottleneck_runs(s: &SweepSummary) -> Vec<(String, String, String)> {
    let mut runs: Vec<(String, String, String)> = Vec::new();
    for b in &s.bottlenecks {
        let here = b.point.to_string();
        match runs.last_mut() {
            Some((st, _, last)) if *st == b.station => *last = here,
            _ => runs.push((b.station.clone(), here.clone(), here)),
        }
    }
    runs
}

/// The knee summary as `qsim sweep` prints it, one row per figure: the same
/// figures with the same intervals (`2024 ± 114/s`) and the same caveats
/// (ties, bistable points, transients), so the page promises no more than
/// the terminal.
fn summary_rows(s: &SweepSummary) -> Vec<SummaryRow> {
    use super::figures::{ms, ms_ci, rate};
    let row = |name: &str, value: String, point: &Point, note: String| SummaryRow {
        name: name.into(),
        value,
        point: point.to_string(),
        note,
    };
    let bistable = |b: bool, note: &str| {
        if b {
            format!("{note}; on a bistable point: one of two answers")
        } else {
            note.to_string()
        }
    };
    let mut rows = Vec::new();
    if let Some(p) = &s.peak {
        let tied = match p.tied {
            0 => String::new(),
            1 => "; 1 other point's interval overlaps it: run longer to tell them apart".into(),
            n => format!("; {n} other points' intervals overlap it: run longer to tell them apart"),
        };
        rows.push(row(
            "peak",
            rate(p.throughput_per_s, p.ci95),
            &p.point,
            bistable(p.bistable, &format!("highest throughput{tied}")),
        ));
    }
    if let Some(h) = &s.highest_stable {
        rows.push(row(
            "stable up to",
            format!(
                "{}, R = {}",
                rate(h.throughput_per_s, h.ci95),
                ms(h.response_time_s)
            ),
            &h.point,
            "the highest load with a steady-state answer".into(),
        ));
    }
    for p in &s.unstable {
        rows.push(row(
            "unstable",
            "no steady state".into(),
            p,
            "not run".into(),
        ));
    }
    if let Some(k) = &s.knee {
        rows.push(row(
            "knee",
            format!(
                "{}, R = {}",
                rate(k.throughput_per_s, k.throughput_ci95),
                ms_ci(k.response_time_s, k.response_time_ci95)
            ),
            &k.point,
            bistable(k.bistable, "max power X/R"),
        ));
    }
    if let Some(sat) = &s.saturation {
        rows.push(row(
            "saturation",
            rate(sat.throughput_per_s, sat.ci95),
            &sat.point,
            bistable(sat.bistable, "first to reach 95% of the peak"),
        ));
    }
    if let Some(r) = &s.recommended {
        rows.push(row(
            "recommended",
            format!(
                "{}, R = {}",
                rate(r.throughput_per_s, r.ci95),
                ms(r.response_time_s)
            ),
            &r.point,
            bistable(
                r.bistable,
                "the limit that does best at the highest load; limits whose throughput intervals overlap count as tied and the fastest answer wins",
            ),
        ));
    }
    for p in &s.not_steady {
        rows.push(row(
            "not steady",
            "transient".into(),
            p,
            format!("the run measured a transient (see its warnings in {JSONL_FILE})"),
        ));
    }
    for n in &s.not_applicable {
        rows.push(SummaryRow {
            name: "n/a".into(),
            value: String::new(),
            point: String::new(),
            note: n.clone(),
        });
    }
    if s.curves.len() > 1 {
        for c in &s.curves {
            if let (Some(p), Some(k)) = (&c.peak, &c.knee) {
                rows.push(SummaryRow {
                    name: format!("curve {}", c.fixed),
                    value: format!("peak {}", super::figures::rate(p.throughput_per_s, p.ci95)),
                    point: p.point.to_string(),
                    note: format!("knee at {}", k.point),
                });
            }
        }
    }
    let runs = bottleneck_runs(s);
    let bottleneck = |station: &str, point: String| SummaryRow {
        name: "bottleneck".into(),
        value: station.into(),
        point,
        note: "busiest station".into(),
    };
    match runs.len() {
        0 => {}
        1 => rows.push(bottleneck(&runs[0].0, "every point".into())),
        2..=8 => {
            for (st, from, to) in &runs {
                let span = if from == to {
                    from.clone()
                } else {
                    format!("{from} .. {to}")
                };
                rows.push(bottleneck(st, span));
            }
        }
        n => rows.push(bottleneck(
            &format!("changes {} times", n - 1),
            format!("see {SUMMARY_FILE}"),
        )),
    }
    for b in &s.bistable {
        rows.push(SummaryRow {
            name: "bistable".into(),
            value: super::count(b.points as u64, "point"),
            point: if b.points == 1 {
                b.from.to_string()
            } else {
                format!("{} .. {}", b.from, b.to)
            },
            note: format!(
                "two operating points (fast, and collapsed at {}): each figure there is one of two answers",
                b.station
            ),
        });
    }
    if s.failed > 0 {
        rows.push(SummaryRow {
            name: "failed".into(),
            value: super::count(s.failed as u64, "point"),
            point: String::new(),
            note: format!("see the error column of {CSV_FILE}"),
        });
    }
    rows
}

/// The settings that decide the sweep's points, from its manifest.
fn settings(saved: &SavedSweep) -> Vec<(String, String)> {
    let m = &saved.manifest;
    let list = |v: &[String]| {
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join("  ")
        }
    };
    let mut rows = vec![
        ("model".to_string(), m.model.clone()),
        ("--vary".into(), list(&m.vary)),
        ("--set".into(), list(&m.set)),
        (
            "points".into(),
            format!("{} of {} run", saved.records.len(), m.points),
        ),
        ("seed".into(), m.seed.to_string()),
        ("replications per point".into(), m.replications.to_string()),
        (
            "load axis".into(),
            m.axes.load.clone().unwrap_or_else(|| "none".into()),
        ),
        (
            "limit axis".into(),
            m.axes.limit.clone().unwrap_or_else(|| "none".into()),
        ),
    ];
    if let Some(obj) = m.run.as_object() {
        for (k, v) in obj {
            let text = match v {
                serde_json::Value::Null => "none".to_string(),
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            rows.push((k.clone(), text));
        }
    }
    if let Some(sh) = &m.shard {
        rows.push(("shard".into(), sh.clone()));
    }
    rows
}
