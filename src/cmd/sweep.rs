//! `qsim sweep`, `qsim plot` and `qsim merge`.

use super::UsageError;
use super::figures::{ms, ms_ci, rate};
use super::run::{GuardArgs, ModelArgs, RunOptions, parse_overrides};
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use indicatif::ProgressBar;
use qsim_kernel::{Stop, names};
use qsim_report::charts::{self, ImageFormat};
use qsim_sweep::output::{CSV_FILE, JSONL_FILE, SUMMARY_FILE};
use qsim_sweep::record::records_from_csv;
use qsim_sweep::{
    Axes, Observer, Point, PointRecord, Progress, SavedSweep, Shard, Sweep, SweepError,
    SweepOptions, SweepSummary, VarySpec,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Output formats of `qsim sweep`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum SweepFormat {
    /// A short knee summary for people.
    Table,
    /// The knee summary as JSON (the same as summary.json).
    Json,
}

/// Arguments of `qsim sweep`.
#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// A key path and its values: a range `10..600:10`, a geometric range
    /// `1..1024:x2` or a list `none,50,100`. Repeat for a grid.
    #[arg(long = "vary", value_name = "PATH=SPEC", required = true)]
    pub vary: Vec<String>,
    #[command(flatten)]
    pub run: RunOptions,
    #[command(flatten)]
    pub guards: GuardArgs,
    /// Directory for points.csv, points.jsonl, summary.json and the charts
    /// [default: sweep-out/<model stem>]. An earlier run of the same sweep
    /// there is replaced unless --resume is given; a different sweep is kept
    /// unless --force is given.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Keep the points already in the output directory and run the rest.
    #[arg(long)]
    pub resume: bool,
    /// Run only shard I of N (0-based): points k with k mod N = I. Combine
    /// the shard directories with `qsim merge`.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Do not draw charts.
    #[arg(long)]
    pub no_charts: bool,
    /// Also write report.html, one self-contained page with the charts,
    /// the knee summary, the model and the settings (see `qsim report`).
    #[arg(long)]
    pub report: bool,
    /// What to print at the end.
    #[arg(long, value_enum, default_value_t = SweepFormat::Table)]
    pub format: SweepFormat,
    /// The swept path to use as the load axis of the knee analysis
    /// [default: the first numeric path named like population/clients/threads].
    #[arg(long, value_name = "PATH")]
    pub load_axis: Option<String>,
    /// The swept path holding a throttle limit to recommend
    /// [default: a path ending in `.limit`].
    #[arg(long, value_name = "PATH")]
    pub limit_axis: Option<String>,
    /// Skip the second run of each point, started from the other end (all
    /// jobs at the station whose speed falls the most, or all thinking; an
    /// open class whose clients retry: a backlog at its busiest queue),
    /// that flags bistable points; models without such a mechanism never
    /// run it.
    #[arg(long)]
    pub no_bistability_check: bool,
    /// Run the values of the one --vary up and then down, each point
    /// starting from the previous point's final state; hysteresis.json and
    /// hysteresis.png/.svg show both branches and where they differ [default
    /// output: sweep-out/<model stem>-hysteresis].
    #[arg(long)]
    pub hysteresis: bool,
}

/// Arguments of `qsim plot`.
#[derive(Args, Debug, Clone)]
pub struct PlotArgs {
    /// A sweep output directory, or a sweep's points.csv.
    pub results: PathBuf,
    /// Where to write the charts [default: next to the results].
    #[arg(long, short = 'o', value_name = "DIR")]
    pub output: Option<PathBuf>,
}

/// Arguments of `qsim merge`.
#[derive(Args, Debug, Clone)]
pub struct MergeArgs {
    /// Directory to write the merged sweep into. (Deprecated: without
    /// --output, the first directory given is taken as the output.)
    #[arg(long, short = 'o', value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// The shard output directories (every shard of one sweep, any order).
    #[arg(required = true, value_name = "SHARD_DIR")]
    pub shards: Vec<PathBuf>,
    /// Do not draw charts.
    #[arg(long)]
    pub no_charts: bool,
    /// What to print at the end.
    #[arg(long, value_enum, default_value_t = SweepFormat::Table)]
    pub format: SweepFormat,
}

fn usage(e: SweepError) -> anyhow::Error {
    if e.is_usage() {
        UsageError(e.to_string()).into()
    } else {
        e.into()
    }
}

/// `qsim sweep`.
pub fn sweep(args: &SweepArgs) -> Result<ExitCode> {
    if let Some(out) = &args.output {
        super::check_output("--output", out, super::Out::Dir, &[&args.model.model])?;
    }
    let base = parse_overrides(&args.model.set)?;
    let vary = args
        .vary
        .iter()
        .map(|s| {
            VarySpec::parse(s).map_err(|e| anyhow::Error::from(UsageError(format!("--vary: {e}"))))
        })
        .collect::<Result<Vec<_>>>()?;
    let shard = args
        .shard
        .as_deref()
        .map(|s| s.parse::<Shard>().map_err(|e| usage(e.into())))
        .transpose()?;
    let r = &args.run;
    r.validate()?;
    let stop = match (r.jobs, r.time) {
        (Some(j), _) => Some(Stop::Jobs(j)),
        (None, Some(t)) => Some(Stop::Time(t)),
        (None, None) => None,
    };
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| default_output(&args.model.model, shard));
    let options = SweepOptions {
        seed: r.seed,
        replications: r.replications,
        stop,
        threads: r.threads.unwrap_or(0),
        shard,
        output: Some(output.clone()),
        resume: args.resume,
        force: args.guards.force,
        load_path: args.load_axis.clone(),
        limit_path: args.limit_axis.clone(),
        control: Some(crate::interrupt_control()),
        budget: Some(args.guards.budget()),
        no_bistability_check: args.no_bistability_check,
    };
    let setters: Vec<(String, String)> = vary
        .iter()
        .map(|v| (v.path().to_string(), format!("--vary {}", v.source())))
        .collect();
    let sweep = Sweep::new(&args.model.model, &base, vary, options).map_err(usage)?;

    let started = Instant::now();
    let mut bar = Bar::new(sweep.manifest().axes.clone());
    let outcome = sweep.run(&mut bar).map_err(|e| match e {
        SweepError::Budget {
            index,
            point,
            error,
        } => UsageError(super::run::blame_budget(
            &error,
            &args.model,
            Some(&args.run),
            &setters,
            &format!("at point {index} ({point}): "),
        ))
        .into(),
        e => usage(e),
    })?;
    bar.finish();
    let elapsed = started.elapsed().as_secs_f64();
    if outcome.interrupted {
        let total = shard
            .unwrap_or_else(Shard::all)
            .points(sweep.grid().len())
            .count();
        let mut again: Vec<String> = std::env::args().skip(1).collect();
        if !again.iter().any(|a| a == "--resume") {
            again.push("--resume".into());
        }
        return Err(super::run::Interrupted(format!(
            "interrupted: {} of {total} points kept in {}; resume with qsim {}",
            outcome.records.len(),
            output.display(),
            again.join(" ")
        ))
        .into());
    }

    let failed: Vec<&PointRecord> = outcome
        .records
        .iter()
        .filter(|r| r.error.is_some())
        .collect();
    for r in failed.iter().take(5) {
        eprintln!(
            "warning: point {} ({}) failed: {}",
            r.index,
            r.point,
            r.error.as_deref().unwrap_or("")
        );
    }
    if failed.len() > 5 {
        eprintln!(
            "warning: {} more points failed; see the error column of {}",
            failed.len() - 5,
            output.join(CSV_FILE).display()
        );
    }

    let mut out = std::io::stdout().lock();
    let ran = format!(
        "{} of {} ({} run now, {} resumed) in {elapsed:.1} s, {} failed",
        super::count(outcome.records.len() as u64, "point"),
        args.model.model.display(),
        outcome.ran,
        outcome.records.len() - outcome.ran,
        failed.len()
    );
    match &outcome.summary {
        None => {
            let sh = shard.unwrap_or_else(Shard::all);
            writeln!(
                out,
                "shard {sh}: {ran}\nwrote {}/{{{CSV_FILE},{JSONL_FILE}}}\nwhen every shard is done: qsim merge --output OUT_DIR SHARD_DIR...",
                output.display()
            )?;
            if args.report {
                eprintln!(
                    "note: no report page for one shard; run `qsim report` on the merged directory"
                );
            }
        }
        Some(summary) => {
            let mut charts_written = Vec::new();
            let mut page = None;
            if !args.no_charts || args.report {
                // The numbers are on disk by now: a chart or page that fails
                // is a warning, never a failed run.
                match SavedSweep::read(&output) {
                    Ok(saved) => {
                        if !args.no_charts {
                            charts_written = draw_or_warn(&saved, &output);
                        }
                        if args.report {
                            match super::report::write(&output, &saved) {
                                Ok(p) => page = Some(p),
                                Err(e) => eprintln!("warning: report page not written: {e:#}"),
                            }
                        }
                    }
                    Err(e) => eprintln!(
                        "warning: no charts: cannot read back {}: {e}",
                        output.display()
                    ),
                }
            }
            for w in &summary.warnings {
                eprintln!("warning: {w}");
            }
            match args.format {
                SweepFormat::Json => out.write_all(summary.to_json().as_bytes())?,
                SweepFormat::Table => {
                    writeln!(out, "swept {ran}")?;
                    print_summary(&mut out, summary)?;
                    print_written(&mut out, &output, &charts_written)?;
                    if let Some(p) = &page {
                        writeln!(out, "report: {}", p.display())?;
                    }
                }
            }
        }
    }
    if !outcome.records.is_empty() && failed.len() == outcome.records.len() {
        eprintln!("error: every point failed");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// `qsim merge`.
pub fn merge(args: &MergeArgs) -> Result<ExitCode> {
    if let Some(out) = &args.output {
        super::check_output("--output", out, super::Out::Dir, &[])?;
    }
    let (output, shards) = match &args.output {
        Some(dir) => (dir.as_path(), args.shards.as_slice()),
        // The old grammar, `qsim merge OUT SHARD_DIR...`, still works for
        // scripts written against it.
        None => match args.shards.split_first() {
            Some((out, shards)) if !shards.is_empty() => {
                eprintln!(
                    "note: `qsim merge OUT SHARD_DIR...` is deprecated; write `qsim merge --output {} SHARD_DIR...`",
                    out.display()
                );
                (out.as_path(), shards)
            }
            _ => {
                return Err(UsageError(
                    "qsim merge needs --output DIR and at least one shard directory".into(),
                )
                .into());
            }
        },
    };
    let saved = qsim_sweep::merge(output, shards).map_err(usage)?;
    let mut charts_written = Vec::new();
    if !args.no_charts {
        charts_written = draw_or_warn(&saved, output);
    }
    let summary = saved.summary();
    let mut out = std::io::stdout().lock();
    match args.format {
        SweepFormat::Json => out.write_all(summary.to_json().as_bytes())?,
        SweepFormat::Table => {
            writeln!(
                out,
                "merged {}: {} of {}",
                super::count(shards.len() as u64, "shard"),
                super::count(saved.records.len() as u64, "point"),
                saved.manifest.model
            )?;
            print_summary(&mut out, &summary)?;
            print_written(&mut out, output, &charts_written)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `qsim plot`.
pub fn plot(args: &PlotArgs) -> Result<ExitCode> {
    let p = &args.results;
    if !p.exists() {
        return Err(UsageError(format!(
            "{}: no such sweep directory or points.csv",
            p.display()
        ))
        .into());
    }
    if let Some(out) = &args.output {
        super::check_output("--output", out, super::Out::Dir, &[])?;
    }
    let (input, written) = if p.is_dir() {
        let saved = SavedSweep::read(p).map_err(usage)?;
        let dir = args.output.clone().unwrap_or_else(|| p.clone());
        (p.clone(), draw(&saved, &dir)?)
    } else {
        let text =
            std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        let (columns, records) =
            records_from_csv(&text).map_err(|e| UsageError(format!("{}: {e}", p.display())))?;
        let specs: Vec<VarySpec> = columns
            .paths
            .iter()
            .filter_map(|path| {
                let mut values: Vec<String> = Vec::new();
                for r in &records {
                    let v = r.point.get(path)?.text().to_string();
                    if !values.contains(&v) {
                        values.push(v);
                    }
                }
                VarySpec::from_values(path, values).ok()
            })
            .collect();
        let axes = Axes::infer(&specs, None, None);
        let title = p
            .parent()
            .and_then(|d| d.file_name())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = args
            .output
            .clone()
            .unwrap_or_else(|| p.parent().map(Path::to_path_buf).unwrap_or_default());
        let chart = super::charts::chart_data(&title, &axes, &records);
        let files = charts::write_charts(&chart, &dir, &[ImageFormat::Svg, ImageFormat::Png])?;
        (p.clone(), files)
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "redrew the charts of {}", input.display())?;
    for f in written {
        writeln!(out, "  {}", f.display())?;
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn default_output(model: &Path, shard: Option<Shard>) -> PathBuf {
    let stem = model
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "model".into());
    let base = PathBuf::from("sweep-out");
    match shard {
        Some(s) if s.count() > 1 => {
            base.join(format!("{stem}-shard-{}-of-{}", s.index(), s.count()))
        }
        _ => base.join(stem),
    }
}

fn draw(saved: &SavedSweep, dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(charts::write_charts(
        &super::charts::sweep_charts(saved),
        dir,
        &[ImageFormat::Svg, ImageFormat::Png],
    )?)
}

/// [`draw`] for commands whose product is the numbers (sweep, merge): a
/// chart that cannot be drawn is reported on stderr and the command goes
/// on, because the CSV, JSON lines and summary are already written.
fn draw_or_warn(saved: &SavedSweep, dir: &Path) -> Vec<PathBuf> {
    draw(saved, dir).unwrap_or_else(|e| {
        eprintln!(
            "warning: charts not drawn: {e:#}; the results are complete in {}/{{{CSV_FILE},{JSONL_FILE},{SUMMARY_FILE}}}; redraw with `qsim plot {}`",
            dir.display(),
            dir.display()
        );
        Vec::new()
    })
}

fn print_summary(out: &mut impl Write, s: &SweepSummary) -> std::io::Result<()> {
    if let Some(p) = &s.peak {
        let tied = match p.tied {
            0 => String::new(),
            1 => "  (1 other point's interval overlaps it: run longer to tell them apart)".into(),
            n => {
                format!("  ({n} other points' intervals overlap it: run longer to tell them apart)")
            }
        };
        writeln!(
            out,
            "  peak         {} at {}{tied}",
            rate(p.throughput_per_s, p.ci95),
            p.point
        )?;
    }
    if let Some(h) = &s.highest_stable {
        writeln!(
            out,
            "  stable up to {} at {}, R = {}  (the highest load with a steady-state answer)",
            rate(h.throughput_per_s, h.ci95),
            h.point,
            ms(h.response_time_s)
        )?;
    }
    if let Some(k) = &s.knee {
        writeln!(
            out,
            "  knee         {}, R = {} at {}  (max power X/R)",
            rate(k.throughput_per_s, k.throughput_ci95),
            ms_ci(k.response_time_s, k.response_time_ci95),
            k.point
        )?;
    }
    if let Some(sat) = &s.saturation {
        writeln!(
            out,
            "  saturation   {} at {}  (first to reach 95% of the peak)",
            rate(sat.throughput_per_s, sat.ci95),
            sat.point
        )?;
    }
    if let Some(r) = &s.recommended {
        writeln!(
            out,
            "  recommended  {}  ({}, R = {} at the highest load; limits whose throughput intervals overlap count as tied and the fastest answer wins)",
            r.point,
            rate(r.throughput_per_s, r.ci95),
            ms(r.response_time_s)
        )?;
    }
    if s.curves.len() > 1 {
        let at = |pt: &Point| {
            s.axes
                .load
                .as_deref()
                .and_then(|l| pt.get(l))
                .map_or_else(|| pt.to_string(), |v| v.to_string())
        };
        let flag = |b: bool| if b { " (bistable)" } else { "" };
        for c in &s.curves {
            let Some(k) = &c.knee else {
                continue;
            };
            let first = match (&c.peak, &c.highest_stable) {
                (Some(p), _) => format!(
                    "peak {} at {}{}",
                    rate(p.throughput_per_s, None),
                    at(&p.point),
                    flag(p.bistable)
                ),
                (None, Some(h)) => format!("stable up to {}", at(&h.point)),
                (None, None) => continue,
            };
            writeln!(
                out,
                "    {}: {first}, knee at {}{}",
                c.fixed,
                at(&k.point),
                flag(k.bistable)
            )?;
        }
    }
    for p in &s.unstable {
        writeln!(
            out,
            "  unstable     {p}: no steady state, not run (see the error column)"
        )?;
    }
    match s.not_steady.len() {
        0 => {}
        1 => writeln!(
            out,
            "  not steady   {}: the run measured a transient (see its warnings in {JSONL_FILE})",
            s.not_steady[0]
        )?,
        n => writeln!(
            out,
            "  not steady   {n} points, from {}: the runs measured a transient (see their warnings in {JSONL_FILE})",
            s.not_steady[0]
        )?,
    }
    for n in &s.not_applicable {
        writeln!(out, "  n/a          {n}")?;
    }
    let runs = super::report::bottleneck_runs(s);
    if runs.len() == 1 {
        writeln!(out, "  bottleneck   {} at every point", runs[0].0)?;
    } else if runs.len() <= 8 {
        for (st, from, to) in &runs {
            let span = if from == to {
                from.clone()
            } else {
                format!("{from} .. {to}")
            };
            writeln!(out, "  bottleneck   {st} for {span}")?;
        }
    } else {
        writeln!(
            out,
            "  bottleneck   changes {} times; see summary.json",
            runs.len() - 1
        )?;
    }
    for b in &s.bistable {
        let span = if b.points == 1 {
            b.from.to_string()
        } else {
            format!(
                "{} .. {} ({})",
                b.from,
                b.to,
                super::count(b.points as u64, "point")
            )
        };
        writeln!(
            out,
            "  bistable     {span}: two operating points (fast, and collapsed at {}); see the {} and {} columns",
            b.station,
            names::BISTABLE,
            names::OTHER_END_THROUGHPUT_PER_S
        )?;
    }
    for w in &s.warnings {
        writeln!(out, "  warning      {w}")?;
    }
    if s.failed > 0 {
        writeln!(
            out,
            "  failed       {} (see the error column)",
            super::count(s.failed as u64, "point")
        )?;
    }
    Ok(())
}

fn print_written(out: &mut impl Write, dir: &Path, charts: &[PathBuf]) -> std::io::Result<()> {
    writeln!(
        out,
        "wrote {}/{{{CSV_FILE},{JSONL_FILE},{SUMMARY_FILE}}}",
        dir.display()
    )?;
    if !charts.is_empty() {
        let names: Vec<String> = charts
            .iter()
            .filter_map(|c| c.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        writeln!(out, "charts: {}", names.join(" "))?;
    }
    Ok(())
}

/// The progress bar (the one style of [`super::progress::progress_bar`]):
/// points done, ETA and the current peak; hidden when stderr is not a
/// terminal.
struct Bar {
    bar: ProgressBar,
    axes: Axes,
    peak: Option<(f64, String)>,
}

impl Bar {
    fn new(axes: Axes) -> Bar {
        let bar =
            super::progress::progress_bar(&super::progress::Phase::Sweep, Some(0), Some("points"));
        Bar {
            bar,
            axes,
            peak: None,
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Observer for Bar {
    fn started(&mut self, p: Progress) {
        self.bar.set_length(p.total as u64);
        self.bar.set_position(p.done as u64);
        self.bar.reset_eta();
    }

    fn point_done(&mut self, r: &PointRecord, p: Progress) {
        if let Some(m) = &r.results {
            let x = m.system(names::THROUGHPUT_PER_S).mean;
            if x.is_finite() && self.peak.as_ref().is_none_or(|(best, _)| x > *best) {
                // "population=80": the load's last path segment keeps it short.
                let at = self
                    .axes
                    .load
                    .as_deref()
                    .and_then(|l| {
                        let v = r.point.get(l)?;
                        Some(format!("{}={v}", l.rsplit('.').next().unwrap_or(l)))
                    })
                    .unwrap_or_else(|| r.point.to_string());
                // An open model's throughput has no peak: it is the rate.
                let what = if self.axes.saturates() {
                    "peak"
                } else {
                    "highest throughput"
                };
                self.bar
                    .set_message(format!("{what} so far {x:.1}/s at {at}"));
                self.peak = Some((x, at));
            }
        }
        self.bar.set_position(p.done as u64);
    }
}
