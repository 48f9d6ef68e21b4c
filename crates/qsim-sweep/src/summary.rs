//! The knee analysis of a whole sweep (`summary.json`).

use crate::bistable::{BistableRange, figure_warning, is_bistable};
use crate::grid::Grid;
use crate::knee::{self, Candidate, CurvePoint};
use crate::record::{Point, PointRecord};
use crate::spec::VarySpec;
use qsim_kernel::names;
use serde::{Deserialize, Serialize};

/// Which swept paths play which role in the analysis.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Axes {
    /// The load axis (population, clients): curves run along it.
    pub load: Option<String>,
    /// The throttle-limit axis: one recommendation among its values.
    pub limit: Option<String>,
    /// The model's workload: whether its throughput can level off at a
    /// peak as the load grows (closed) or follows the arrival rate (open).
    #[serde(default)]
    pub workload: Workload,
}

/// How the jobs of a swept model arrive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Workload {
    /// Every class is a closed population: throughput levels off at a
    /// peak as the population grows.
    #[default]
    Closed,
    /// Every class arrives from outside: throughput is the arrival rate
    /// wherever the model has a steady state, and beyond that none.
    Open,
    /// Open and closed classes together.
    Mixed,
}

impl Workload {
    /// The workload of `network`'s classes.
    pub fn of(network: &qsim_kernel::Network) -> Workload {
        let classes = &network.spec().classes;
        let open = classes
            .iter()
            .filter(|c| matches!(c.workload, qsim_kernel::Workload::Open { .. }))
            .count();
        match open {
            0 => Workload::Closed,
            n if n == classes.len() => Workload::Open,
            _ => Workload::Mixed,
        }
    }
}

impl Axes {
    /// Picks the axes of `specs`, unless given: the load is the first
    /// numeric spec whose last path segment names a load (`population`,
    /// `clients`, `threads`, `users`, `concurrency`), else the first numeric
    /// spec that is not the limit; the limit is a spec whose last segment is
    /// `limit`.
    pub fn infer(specs: &[VarySpec], load: Option<&str>, limit: Option<&str>) -> Axes {
        let last = |s: &VarySpec| s.path().rsplit('.').next().unwrap_or("").to_string();
        let limit = limit.map(String::from).or_else(|| {
            specs
                .iter()
                .find(|s| last(s) == "limit")
                .map(|s| s.path().to_string())
        });
        let load = load.map(String::from).or_else(|| {
            const NAMES: [&str; 5] = ["population", "clients", "threads", "users", "concurrency"];
            let numeric = || {
                specs
                    .iter()
                    .filter(|s| s.is_numeric() && Some(s.path()) != limit.as_deref())
            };
            numeric()
                .find(|s| NAMES.contains(&last(s).as_str()))
                .or_else(|| numeric().next())
                .map(|s| s.path().to_string())
        });
        Axes {
            load,
            limit,
            workload: Workload::Closed,
        }
    }

    /// Whether throughput along the load axis levels off at a peak, so
    /// that the peak and the saturation point mean something: a closed
    /// population does; an arrival rate does not (throughput is the rate
    /// until the model has no steady state), nor does the arrival rate of
    /// a mixed model's open classes.
    pub fn saturates(&self) -> bool {
        match self.workload {
            Workload::Closed => true,
            Workload::Open => false,
            Workload::Mixed => self
                .load
                .as_deref()
                .is_some_and(|l| l.rsplit('.').next() == Some("population")),
        }
    }
}

/// The point of highest throughput.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    /// Swept values.
    pub point: Point,
    /// Its throughput, per second.
    pub throughput_per_s: f64,
    /// The half-width of the 95% interval of its throughput, when there is
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<f64>,
    /// Other points (of the same curve, or of the sweep for the sweep's
    /// peak) whose throughput interval overlaps the peak's: which of them
    /// is highest is not settled by the runs.
    #[serde(default)]
    pub tied: u32,
    /// The point is bistable: its figure is one of two answers.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bistable: bool,
}

/// The point of highest power X/R.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Knee {
    /// Swept values.
    pub point: Point,
    /// Its throughput, per second.
    pub throughput_per_s: f64,
    /// Half-width of its throughput's 95% interval, where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_ci95: Option<f64>,
    /// Its mean response time, seconds.
    pub response_time_s: f64,
    /// Half-width of its response time's 95% interval, where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_time_ci95: Option<f64>,
    /// X/R, per second squared.
    pub power_per_s2: f64,
    /// The point is bistable: its figures are one of two answers.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bistable: bool,
}

/// The smallest load reaching 95% of the peak throughput.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Saturation {
    /// Swept values.
    pub point: Point,
    /// Its throughput, per second.
    pub throughput_per_s: f64,
    /// Half-width of its throughput's 95% interval, where there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<f64>,
    /// The point is bistable: its figure is one of two answers.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bistable: bool,
}

/// The highest load at which an open model has a steady-state answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stable {
    /// Swept values.
    pub point: Point,
    /// Its throughput, per second.
    pub throughput_per_s: f64,
    /// The half-width of the 95% interval of its throughput, when there is
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<f64>,
    /// Its mean response time, seconds.
    pub response_time_s: f64,
}

/// The recommended setting of the limit axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recommended {
    /// The point (at the highest load) whose limit is recommended.
    pub point: Point,
    /// Its throughput, per second.
    pub throughput_per_s: f64,
    /// The half-width of the 95% interval of its throughput, when there is
    /// one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<f64>,
    /// Its mean response time, seconds.
    pub response_time_s: f64,
    /// The point is bistable: its figures are one of two answers.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bistable: bool,
}

/// The analysis of one curve: the points sharing every swept value but the load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    /// The values fixed along this curve (empty for a one-dimensional sweep).
    pub fixed: Point,
    /// Highest throughput on the curve.
    pub peak: Option<Peak>,
    /// Highest power on the curve.
    pub knee: Option<Knee>,
    /// Saturation point on the curve.
    pub saturation: Option<Saturation>,
    /// Where the peak and saturation do not apply (an open workload): the
    /// highest load on the curve with a steady-state answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highest_stable: Option<Stable>,
}

/// The busiest station at one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bottleneck {
    /// Swept values.
    pub point: Point,
    /// Station name.
    pub station: String,
    /// Its utilization.
    pub utilization: f64,
}

/// A point that failed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// Swept values.
    pub point: Point,
    /// Why.
    pub error: String,
}

/// Knee analysis of a sweep, written as `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepSummary {
    /// Points in the analysis.
    pub points: usize,
    /// Points that failed.
    pub failed: usize,
    /// Roles of the swept paths.
    pub axes: Axes,
    /// Highest throughput over all points; `null` where throughput does
    /// not level off (an open workload: see `highest_stable`).
    pub peak: Option<Peak>,
    /// Highest power X/R over all points.
    pub knee: Option<Knee>,
    /// On the curve through the peak, the smallest load with ≥ 95% of its X.
    pub saturation: Option<Saturation>,
    /// On a limit sweep, the limit with the highest X at the highest load
    /// (ties, within 1% or within the 95% intervals, go to the lower
    /// response time).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub recommended: Option<Recommended>,
    /// Peak, knee and saturation of each curve along the load axis.
    pub curves: Vec<Curve>,
    /// The busiest station at each point that ran.
    pub bottlenecks: Vec<Bottleneck>,
    /// Points that failed, with why.
    pub errors: Vec<Failure>,
    /// Where the model is bistable: runs of consecutive bistable points
    /// along each curve of the load axis.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bistable: Vec<BistableRange>,
    /// Where the peak and saturation do not apply (an open workload): the
    /// highest load with a steady-state answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub highest_stable: Option<Stable>,
    /// Points refused because the model has no steady state there (an
    /// arrival rate at or above the capacity).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unstable: Vec<Point>,
    /// Points that ran but did not reach a steady state: their figures
    /// describe a transient (see the warnings in `points.jsonl`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_steady: Vec<Point>,
    /// Figures of the analysis that do not apply to this sweep, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_applicable: Vec<String>,
    /// Figures above that are not a single answer, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl SweepSummary {
    /// Analyzes `records` (any order) of a sweep over `grid`.
    pub fn analyze(grid: &Grid, axes: &Axes, records: &[PointRecord]) -> SweepSummary {
        let mut recs: Vec<&PointRecord> = records.iter().collect();
        recs.sort_by_key(|r| r.index);
        let ok: Vec<(&PointRecord, CurvePoint)> = recs
            .iter()
            .filter_map(|r| {
                let m = r.results.as_ref()?;
                let load = axes
                    .load
                    .as_deref()
                    .and_then(|p| r.point.get(p))
                    .and_then(|v| v.number())
                    .unwrap_or(r.index as f64);
                Some((
                    *r,
                    CurvePoint {
                        load,
                        throughput_per_s: m.system(names::THROUGHPUT_PER_S).mean,
                        response_time_s: m.system(names::RESPONSE_TIME_S).mean,
                    },
                ))
            })
            .collect();

        // Curves: group by every coordinate except the load's.
        let load_k = axes
            .load
            .as_deref()
            .and_then(|p| grid.specs().iter().position(|s| s.path() == p));
        let key = |r: &PointRecord| {
            let mut c = grid.coordinates(r.index);
            if let Some(k) = load_k {
                c.remove(k);
            }
            c
        };
        let mut groups: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
        for (i, (r, _)) in ok.iter().enumerate() {
            let k = key(r);
            match groups.iter_mut().find(|(g, _)| *g == k) {
                Some((_, members)) => members.push(i),
                None => groups.push((k, vec![i])),
            }
        }
        let curves: Vec<Curve> = groups
            .iter()
            .map(|(_, members)| {
                let pts: Vec<CurvePoint> = members.iter().map(|&i| ok[i].1).collect();
                let rep = knee::analyze(&pts);
                let at = |j: usize| ok[members[j]].0;
                let fixed = Point(
                    at(0)
                        .point
                        .0
                        .iter()
                        .filter(|(p, _)| Some(p.as_str()) != axes.load.as_deref())
                        .cloned()
                        .collect(),
                );
                let saturates = axes.saturates();
                Curve {
                    fixed,
                    peak: rep
                        .filter(|_| saturates)
                        .map(|k| peak(at(k.peak), members.iter().map(|&i| ok[i].0))),
                    knee: rep.map(|k| knee_of(at(k.knee))),
                    saturation: rep
                        .filter(|_| saturates)
                        .map(|k| saturation(at(k.saturation))),
                    highest_stable: if saturates {
                        None
                    } else {
                        highest_stable(members.iter().map(|&i| &ok[i]))
                    },
                }
            })
            .collect();

        // Whole sweep: peak and knee over every point; saturation on the
        // curve through the peak.
        let all: Vec<CurvePoint> = ok.iter().map(|(_, c)| *c).collect();
        let overall = knee::analyze(&all);
        let (g_peak, g_knee, g_sat) = match overall {
            Some(k) => {
                let peak_group = groups
                    .iter()
                    .find(|(_, m)| m.contains(&k.peak))
                    .map(|(_, m)| m.clone())
                    .unwrap_or_default();
                let pts: Vec<CurvePoint> = peak_group.iter().map(|&i| all[i]).collect();
                let sat = knee::analyze(&pts).map(|r| saturation(ok[peak_group[r.saturation]].0));
                (
                    Some(peak(ok[k.peak].0, ok.iter().map(|(r, _)| *r))),
                    Some(knee_of(ok[k.knee].0)),
                    sat,
                )
            }
            None => (None, None, None),
        };
        let (g_peak, g_sat) = if axes.saturates() {
            (g_peak, g_sat)
        } else {
            (None, None)
        };
        let g_stable = if axes.saturates() {
            None
        } else {
            highest_stable(ok.iter())
        };
        let mut not_applicable = Vec::new();
        if !axes.saturates() {
            let what = match axes.workload {
                Workload::Mixed => "the load axis is an arrival rate",
                _ => "the workload is open",
            };
            not_applicable.push(format!(
                "peak and saturation: {what}, so throughput follows the arrival rate wherever the model has a steady state and has no peak to level off at; highest_stable is the highest load with a steady-state answer"
            ));
        }

        let recommended = axes.limit.as_ref().and_then(|_| {
            let top = ok
                .iter()
                .map(|(_, c)| c.load)
                .fold(f64::NEG_INFINITY, f64::max);
            let cands: Vec<&PointRecord> = ok
                .iter()
                .filter(|(_, c)| c.load == top)
                .map(|(r, _)| *r)
                .collect();
            let scored: Vec<Candidate> = cands
                .iter()
                .map(|r| {
                    let m = r.results.as_ref().expect("ok points have results");
                    Candidate {
                        throughput_per_s: m.system(names::THROUGHPUT_PER_S).mean,
                        throughput_ci95: m.system(names::THROUGHPUT_PER_S).ci95,
                        response_time_s: m.system(names::RESPONSE_TIME_S).mean,
                    }
                })
                .collect();
            knee::recommend(&scored).map(|i| {
                (
                    Recommended {
                        point: cands[i].point.clone(),
                        throughput_per_s: scored[i].throughput_per_s,
                        ci95: scored[i]
                            .throughput_ci95
                            .is_finite()
                            .then_some(scored[i].throughput_ci95),
                        response_time_s: scored[i].response_time_s,
                        bistable: is_bistable(cands[i]),
                    },
                    cands[i],
                )
            })
        });

        // Bistable points: ranges along each curve, and a warning for each
        // figure of the analysis that sits on one.
        let mut bistable = Vec::new();
        for ((_, members), c) in groups.iter().zip(&curves) {
            let mut along: Vec<&(&PointRecord, CurvePoint)> =
                members.iter().map(|&i| &ok[i]).collect();
            along.sort_by(|a, b| a.1.load.total_cmp(&b.1.load));
            let mut open: Option<BistableRange> = None;
            for (r, _) in along {
                match (is_bistable(r), open.as_mut()) {
                    (true, Some(range)) => {
                        range.to = r.point.clone();
                        range.points += 1;
                    }
                    (true, None) => {
                        open = Some(BistableRange {
                            fixed: c.fixed.clone(),
                            from: r.point.clone(),
                            to: r.point.clone(),
                            points: 1,
                            station: metrics(r)
                                .bistability
                                .as_ref()
                                .map_or_else(String::new, |b| b.station.clone()),
                        })
                    }
                    (false, _) => bistable.extend(open.take()),
                }
            }
            bistable.extend(open);
        }
        let mut warnings = Vec::new();
        let find = |p: &Point| ok.iter().find(|(r, _)| r.point == *p).map(|(r, _)| *r);
        let mut figures: Vec<(&str, &PointRecord)> = Vec::new();
        if let Some(p) = &g_peak
            && let Some(r) = find(&p.point)
        {
            figures.push(("peak", r));
        }
        if let Some(k) = overall {
            figures.push(("knee", ok[k.knee].0));
        }
        if let Some(sat) = &g_sat
            && let Some(r) = find(&sat.point)
        {
            figures.push(("saturation point", r));
        }
        if let Some((_, r)) = &recommended {
            figures.push(("recommended limit", r));
        }
        for (figure, r) in &figures {
            warnings.extend(figure_warning(figure, r));
        }
        for (figure, r) in &figures {
            warnings.extend(caveat(figure, r));
        }
        // A peak, knee or recommended limit on the edge of its axis.
        for (figure, r) in &figures {
            let axis = match *figure {
                "peak" | "knee" => axes.load.as_deref(),
                "recommended limit" => axes.limit.as_deref(),
                _ => None,
            };
            let Some(path) = axis else { continue };
            let values: Vec<f64> = ok
                .iter()
                .filter_map(|(o, _)| o.point.get(path)?.number())
                .collect();
            if let Some(at) = r.point.get(path).and_then(|v| v.number()) {
                warnings.extend(crate::edge::edge_warning(figure, path, at, &values));
            }
        }
        for r in &recs {
            if let Some(e) = r
                .results
                .as_ref()
                .and_then(|m| m.bistability.as_ref()?.error.as_ref())
            {
                warnings.push(format!(
                    "the bistability check gave no verdict at {}: {e}",
                    r.point
                ));
            }
        }
        let recommended = recommended.map(|(rec, _)| rec);

        SweepSummary {
            points: recs.len(),
            failed: recs.iter().filter(|r| r.error.is_some()).count(),
            axes: axes.clone(),
            peak: g_peak,
            knee: g_knee,
            saturation: g_sat,
            recommended,
            curves,
            bottlenecks: ok
                .iter()
                .filter_map(|(r, _)| {
                    let m = r.results.as_ref()?;
                    Some(Bottleneck {
                        point: r.point.clone(),
                        station: m.bottleneck.clone()?,
                        utilization: m.bottleneck_utilization()?,
                    })
                })
                .collect(),
            errors: recs
                .iter()
                .filter_map(|r| {
                    Some(Failure {
                        point: r.point.clone(),
                        error: r.error.clone()?,
                    })
                })
                .collect(),
            bistable,
            highest_stable: g_stable,
            unstable: recs
                .iter()
                .filter(|r| r.error.as_deref().is_some_and(|e| e.contains("unstable")))
                .map(|r| r.point.clone())
                .collect(),
            not_steady: ok
                .iter()
                .filter(|(r, _)| !steady(r))
                .map(|(r, _)| r.point.clone())
                .collect(),
            not_applicable,
            warnings,
        }
    }

    /// The pretty-printed JSON, newline-terminated.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("summaries always serialize");
        s.push('\n');
        s
    }
}

fn metrics(r: &PointRecord) -> &crate::record::PointMetrics {
    r.results.as_ref().expect("analyzed points have results")
}

/// The peak at `r`, with the points of `among` (its own included) whose
/// throughput interval overlaps its own.
fn peak<'a>(r: &PointRecord, among: impl Iterator<Item = &'a PointRecord>) -> Peak {
    let x = metrics(r).system(names::THROUGHPUT_PER_S);
    let tied = among
        .filter(|o| o.index != r.index)
        .filter(|o| {
            let y = metrics(o).system(names::THROUGHPUT_PER_S);
            (x.mean - y.mean).abs() <= x.ci95 + y.ci95
        })
        .count() as u32;
    Peak {
        point: r.point.clone(),
        throughput_per_s: x.mean,
        ci95: x.ci95.is_finite().then_some(x.ci95),
        tied,
        bistable: is_bistable(r),
    }
}

fn knee_of(r: &PointRecord) -> Knee {
    let m = metrics(r);
    let (x, rt) = (
        m.system(names::THROUGHPUT_PER_S),
        m.system(names::RESPONSE_TIME_S),
    );
    Knee {
        point: r.point.clone(),
        throughput_per_s: x.mean,
        throughput_ci95: x.ci95.is_finite().then_some(x.ci95),
        response_time_s: rt.mean,
        response_time_ci95: rt.ci95.is_finite().then_some(rt.ci95),
        power_per_s2: m.power(),
        bistable: is_bistable(r),
    }
}

fn saturation(r: &PointRecord) -> Saturation {
    let x = metrics(r).system(names::THROUGHPUT_PER_S);
    Saturation {
        point: r.point.clone(),
        throughput_per_s: x.mean,
        ci95: x.ci95.is_finite().then_some(x.ci95),
        bistable: is_bistable(r),
    }
}

/// Whether the point's run reached a steady state (the kernel's check of
/// the first against the second half of the measured window).
fn steady(r: &PointRecord) -> bool {
    !metrics(r)
        .warnings
        .iter()
        .any(|w| w.starts_with("not in steady state"))
}

/// Why a figure of the analysis at `r` cannot be taken at face value: the
/// point's own warnings (a transient, no interval, precision missed).
fn caveat(figure: &str, r: &PointRecord) -> Option<String> {
    let w = &metrics(r).warnings;
    (!w.is_empty()).then(|| {
        format!(
            "the {figure} is at {}, whose run warns: {}",
            r.point,
            w.join("; ")
        )
    })
}

/// The point of highest load with a steady-state answer among `points`.
fn highest_stable<'a>(
    points: impl Iterator<Item = &'a (&'a PointRecord, CurvePoint)>,
) -> Option<Stable> {
    let (r, c) = points
        .filter(|(r, c)| steady(r) && c.throughput_per_s.is_finite() && c.load.is_finite())
        .max_by(|a, b| a.1.load.total_cmp(&b.1.load))?;
    let x = metrics(r).system(names::THROUGHPUT_PER_S);
    Some(Stable {
        point: r.point.clone(),
        throughput_per_s: c.throughput_per_s,
        ci95: x.ci95.is_finite().then_some(x.ci95),
        response_time_s: c.response_time_s,
    })
}
