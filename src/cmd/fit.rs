//! `qsim fit`: fit the Universal Scalability Law to measured throughput.

use super::UsageError;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use qsim_analytic::{usl, usl_ci};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

/// Output formats of `qsim fit` (the words of `qsim run --format`; the
/// CSV has its own columns, since a fit has no scopes or CIs).
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned text for people, with the speed curve to paste into a model.
    Table,
    /// One JSON object.
    Json,
    /// One row per fitted figure: metric,value,std_error,ci95.
    Csv,
}

/// Arguments of `qsim fit`.
#[derive(Args, Debug)]
pub struct FitArgs {
    /// CSV file with a header row: one measurement per row.
    pub file: PathBuf,
    /// Column holding the concurrency (load).
    #[arg(long, default_value = "concurrency")]
    pub x: String,
    /// Column holding the throughput.
    #[arg(long, default_value = "throughput")]
    pub y: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write the output to this file instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Draw the measurements and the fitted curve to this file (.svg or .png).
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
}

/// Reads, fits, prints the coefficients and the speed snippet.
pub fn fit(args: &FitArgs) -> Result<ExitCode> {
    if let Some(out) = &args.output {
        super::check_output("--output", out, super::Out::File, &[&args.file])?;
    }
    if let Some(plot) = &args.plot {
        super::check_output("--plot", plot, super::Out::Chart, &[&args.file])?;
    }
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", args.file.display())))?;
    let file = args.file.display();
    let points = usl::parse_measurements(&text, Some(&args.x), Some(&args.y)).map_err(|e| {
        // A column name one or two letters off is a typo of a flag value:
        // name the flag and the column meant.
        let hint = match &e {
            qsim_analytic::Error::MissingColumn { column, available } => {
                let flag = if *column == args.x { "--x" } else { "--y" };
                qsim_model::did_you_mean(column, available)
                    .map(|c| format!("\n  hint: did you mean {flag} {c}?"))
            }
            _ => None,
        };
        UsageError(format!("{file}: {e}{}", hint.unwrap_or_default()))
    })?;
    let fit = usl::fit(&points).map_err(|e| UsageError(format!("{file}: {e}")))?;
    if let Some(path) = [&args.output, &args.plot]
        .into_iter()
        .flatten()
        .find(|p| same_file(p, &args.file))
    {
        return Err(UsageError(format!(
            "{} is the input file; choose another name for the output",
            path.display()
        ))
        .into());
    }
    // 95% intervals (Student's t with n − 3 degrees of freedom), as R's
    // `usl` package reports them; none when the points cannot pin the
    // three coefficients down.
    let df = points.len().saturating_sub(3) as u32;
    let ci = usl_ci::intervals(
        &fit.model,
        &points,
        fit.residual_std_error,
        qsim_kernel::results::t975(df),
    );
    let hw = |f: fn(&usl_ci::UslIntervals) -> Option<usl_ci::Interval>| {
        ci.as_ref().and_then(f).map(|i| i.half_width)
    };
    let mut chart_warning = None;
    if let Some(path) = &args.plot {
        let measured: Vec<(f64, f64)> = points
            .iter()
            .map(|p| (p.concurrency, p.throughput_per_s))
            .collect();
        let m = fit.model;
        let coef = |name: &str, v: f64, h: Option<f64>| match h {
            Some(h) => format!("{name} = {} ± {}", sig4(v), sig4(h)),
            None => format!("{name} = {}", sig4(v)),
        };
        let label = format!(
            "USL fit: {}, {}, {} (95%)",
            coef("σ", m.sigma, hw(|c| Some(c.sigma))),
            coef("κ", m.kappa, hw(|c| Some(c.kappa))),
            coef("λ", m.lambda, hw(|c| Some(c.lambda)))
        );
        let band = |n: f64| ci.as_ref().map_or(f64::NAN, |c| c.band(&m, n).1);
        let lines = qsim_report::fit_chart::FitLines {
            curve: &|n| m.throughput(n),
            band: ci.is_some().then_some(&band as &dyn Fn(f64) -> f64),
            label: &label,
        };
        // A chart that cannot be drawn is a warning: the fit is still printed.
        chart_warning =
            qsim_report::fit_chart::usl_fit_chart(path, &measured, &lines, &args.x, &args.y)
                .err()
                .map(|e| {
                    format!(
                        "warning: chart {} not drawn: {e}; the fit below is complete",
                        path.display()
                    )
                });
    }
    let mut out = String::new();
    match args.format {
        Format::Json => {
            let m = &fit.model;
            let se = fit.std_errors;
            let v = serde_json::json!({
                "file": file.to_string(),
                "x": args.x,
                "y": args.y,
                "points": fit.points,
                "sigma": m.sigma,
                "kappa": m.kappa,
                "lambda": m.lambda,
                "std_errors": se.map(|s| serde_json::json!({"sigma": s.sigma, "kappa": s.kappa, "lambda": s.lambda})),
                "ci95": ci.as_ref().map(|_| serde_json::json!({
                    "sigma": hw(|c| Some(c.sigma)),
                    "kappa": hw(|c| Some(c.kappa)),
                    "lambda": hw(|c| Some(c.lambda)),
                    "peak_concurrency": hw(|c| c.peak_concurrency),
                    "peak_throughput": hw(|c| c.peak_throughput),
                })),
                "r_squared": fit.r_squared,
                "residual_std_error": fit.residual_std_error,
                "peak_concurrency": fit.peak_concurrency,
                "peak_throughput": fit.peak_throughput_per_s,
                "peak_extrapolated": fit.peak_extrapolated,
                "no_peak": fit.no_peak,
                "speed_toml": fit.speed_toml(),
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        }
        Format::Csv => {
            // One vocabulary: the metric names are the JSON keys.
            let m = &fit.model;
            let se = fit.std_errors;
            let num = |v: Option<f64>| {
                v.filter(|x| x.is_finite())
                    .map_or(String::new(), |x| x.to_string())
            };
            writeln!(out, "metric,value,std_error,ci95")?;
            writeln!(out, "points,{},,", fit.points)?;
            for (name, value, err, half) in [
                ("sigma", m.sigma, se.map(|s| s.sigma), hw(|c| Some(c.sigma))),
                ("kappa", m.kappa, se.map(|s| s.kappa), hw(|c| Some(c.kappa))),
                (
                    "lambda",
                    m.lambda,
                    se.map(|s| s.lambda),
                    hw(|c| Some(c.lambda)),
                ),
            ] {
                writeln!(
                    out,
                    "{name},{},{},{}",
                    num(Some(value)),
                    num(err),
                    num(half)
                )?;
            }
            writeln!(out, "r_squared,{},,", num(Some(fit.r_squared)))?;
            writeln!(
                out,
                "residual_std_error,{},,",
                num(Some(fit.residual_std_error))
            )?;
            writeln!(
                out,
                "peak_concurrency,{},,{}",
                num(fit.peak_concurrency),
                num(fit.peak_concurrency.and(hw(|c| c.peak_concurrency)))
            )?;
            writeln!(
                out,
                "peak_throughput,{},,{}",
                num(fit.peak_throughput_per_s),
                num(fit.peak_throughput_per_s.and(hw(|c| c.peak_throughput)))
            )?;
            if let Some(why) = &fit.no_peak {
                writeln!(out, "# no peak: {why}")?;
            }
        }
        Format::Table => {
            let m = &fit.model;
            let se = |f: fn(&usl::UslStdErrors) -> f64, c: Option<f64>, v: f64| {
                fit.std_errors.as_ref().map_or(
                    "n/a (the points do not pin all three coefficients down)".to_string(),
                    |s| match c {
                        Some(h) => format!(
                            "std. error {}  95% CI [{}, {}]",
                            sig4(f(s)),
                            sig4(v - h),
                            sig4(v + h)
                        ),
                        None => format!("std. error {}", sig4(f(s))),
                    },
                )
            };
            writeln!(
                out,
                "USL fit of {file}: {} = f({}), {}",
                args.y,
                args.x,
                super::count(fit.points as u64, "point")
            )?;
            // Four significant digits, as in the pasteable curve: the
            // data rarely support more.
            writeln!(
                out,
                "  sigma  (contention) {:>12}  {}",
                sig4(m.sigma),
                se(|s| s.sigma, hw(|c| Some(c.sigma)), m.sigma)
            )?;
            writeln!(
                out,
                "  kappa  (coherency)  {:>12}  {}",
                sig4(m.kappa),
                se(|s| s.kappa, hw(|c| Some(c.kappa)), m.kappa)
            )?;
            writeln!(
                out,
                "  lambda (1-job rate) {:>12}  {}",
                sig4(m.lambda),
                se(|s| s.lambda, hw(|c| Some(c.lambda)), m.lambda)
            )?;
            writeln!(
                out,
                "  R² {:.4}, residual std. error {}",
                fit.r_squared,
                sig4(fit.residual_std_error)
            )?;
            match (fit.peak_concurrency, fit.peak_throughput_per_s) {
                (Some(n), Some(x)) => writeln!(
                    out,
                    "  predicted peak: {} at concurrency {}{}",
                    match hw(|c| c.peak_throughput) {
                        Some(h) => format!("{} ± {}", sig4(x), sig4(h)),
                        None => sig4(x),
                    },
                    match hw(|c| c.peak_concurrency) {
                        Some(h) => format!("{} ± {}", sig4(n), sig4(h)),
                        None => sig4(n),
                    },
                    if fit.peak_extrapolated {
                        " (beyond the largest concurrency measured: an extrapolation)"
                    } else {
                        ""
                    }
                )?,
                _ => writeln!(
                    out,
                    "  predicted peak: n/a ({})",
                    fit.no_peak.as_deref().unwrap_or("the curve has none")
                )?,
            }
            writeln!(
                out,
                "\nspeed curve for a model station:\n{}",
                fit.speed_toml().trim_end()
            )?;
        }
    }
    match &args.output {
        Some(path) => {
            std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))?
        }
        None => std::io::stdout().lock().write_all(out.as_bytes())?,
    }
    if let Some(w) = chart_warning {
        eprintln!("{w}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether two paths name the same existing file (so `--output` would
/// overwrite the measurements).
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Four significant digits, without a trailing exponent for everyday
/// magnitudes: 0.02771, 1.044e-4, 90.00.
fn sig4(x: f64) -> String {
    qsim_kernel::sig(x, 4)
}
