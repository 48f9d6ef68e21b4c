//! One finished point as plain data, and its CSV and JSON-lines forms.
//!
//! The JSON line is the lossless form (resume, merge and `qsim plot` read
//! it back); the CSV row is the same data flattened for spreadsheets. Both are
//! pure functions of the record, so a record read back from JSON (floats
//! round-trip exactly) writes the very same bytes again.

use crate::spec::VaryValue;
use qsim_kernel::{
    Estimate, KindTag, Metric, MetricScope, Network, ReplicationResult, RunResults, RunWarning,
    StationResults, metrics, names,
};
use qsim_model::DerivedMetric;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The values of one point: each swept path with its value, in `--vary`
/// order. Serialized as a JSON object, numbers as numbers (`{"workload.population": 100,
/// "throttle.limit": "none"}`).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Point(pub Vec<(String, VaryValue)>);

impl Point {
    /// The value of `path`, if it is swept.
    pub fn get(&self, path: &str) -> Option<&VaryValue> {
        self.0.iter().find(|(p, _)| p == path).map(|(_, v)| v)
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (p, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{p}={v}")?;
        }
        Ok(())
    }
}

impl Serialize for Point {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (path, v) in &self.0 {
            match v.number() {
                Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => {
                    m.serialize_entry(path, &(x as i64))?
                }
                Some(x) => m.serialize_entry(path, &x)?,
                None => m.serialize_entry(path, v.text())?,
            }
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Point {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Point, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Point;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map from key path to value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Point, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, serde_json::Value>()? {
                    let text = match v {
                        serde_json::Value::String(s) => s,
                        serde_json::Value::Number(n) => n.to_string(),
                        other => return Err(de::Error::custom(format!("bad value {other}"))),
                    };
                    out.push((k, VaryValue::new(text)));
                }
                Ok(Point(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Metrics by name, in the order of the one table (`qsim_kernel::METRICS`);
/// serialized as a JSON object `{"name": {"mean": m, "ci95": h}, ...}`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct MetricValues(pub Vec<(String, Estimate)>);

impl MetricValues {
    /// The metrics of `scope` that apply to item `index` of a run summary.
    pub fn of(r: &RunResults, scope: MetricScope, index: usize) -> MetricValues {
        MetricValues(
            metrics(scope)
                .filter_map(|m| Some((m.name.to_string(), m.summary(r, index)?)))
                .collect(),
        )
    }

    /// The metric called `name` (a name from `qsim_kernel::names`), if present.
    pub fn get(&self, name: &str) -> Option<Estimate> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, e)| *e)
    }

    /// The metric called `name`, or [`Estimate::UNKNOWN`] when absent.
    pub fn value(&self, name: &str) -> Estimate {
        self.get(name).unwrap_or(Estimate::UNKNOWN)
    }
}

impl Serialize for MetricValues {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (name, e) in &self.0 {
            m.serialize_entry(name, e)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for MetricValues {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<MetricValues, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MetricValues;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map from metric name to {mean, ci95}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<MetricValues, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, Estimate>()? {
                    out.push((k, v));
                }
                Ok(MetricValues(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// The metrics of one station or region at one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemMetrics {
    /// Station or region name.
    pub name: String,
    /// Station kind (absent for a region, and in records read from CSV).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<KindTag>,
    /// Its metrics.
    #[serde(flatten)]
    pub figures: MetricValues,
}

/// The verdict of the two-ended check at one point (see [`crate::bistable`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointBistability {
    /// The station of the collapsed end.
    pub station: String,
    /// True when the two ends disagree beyond their confidence intervals:
    /// the point's figures are one of two answers. `None` when the second
    /// run failed (see `error`).
    pub bistable: Option<bool>,
    /// System throughput of the other operating point where the point is
    /// bistable (the mode its own figures are not in, from the replications
    /// of both ends), else of the run started from the other end.
    pub other_end_throughput_per_s: Estimate,
    /// The start state the point's figures belong to, and which mode
    /// ("all jobs thinking (mode 2 of 2)"); empty when unknown.
    #[serde(default)]
    pub state: String,
    /// The point's own replications fall into different modes: its
    /// figures average states and belong to none.
    #[serde(default)]
    pub mixed: bool,
    /// The verdict for people, with every mode's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// Why the second run gave no verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The results of a point that ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointMetrics {
    /// Replications run.
    pub replications: u32,
    /// Events processed over all replications.
    pub events: u64,
    /// System metrics (throughput, response time and its percentiles, SLA).
    pub system: MetricValues,
    /// The station with the highest utilization, if any is busy.
    pub bottleneck: Option<String>,
    /// Per station, in model order (in JSON an object keyed by name, as
    /// in a run's JSON).
    #[serde(with = "crate::keyed::items")]
    pub stations: Vec<ItemMetrics>,
    /// Per region, in model order (keyed by name in JSON).
    #[serde(with = "crate::keyed::items")]
    pub regions: Vec<ItemMetrics>,
    /// The model's derived metrics (`[metrics]`), in declaration order
    /// (keyed by name in JSON, `{"error": ...}` for one that failed).
    #[serde(default, with = "crate::keyed::derived")]
    pub derived: Vec<DerivedValue>,
    /// The two-ended check, where it applies (see [`crate::bistable`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bistability: Option<PointBistability>,
    /// Why the point's figures cannot be taken at face value (not in
    /// steady state, precision not reached...), each with its remedy.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Percentiles withheld for too few responses (their values are
    /// unknown): kept apart from `warnings`, which qualify the means the
    /// knee analysis reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tail_warnings: Vec<String>,
}

/// The value of one derived metric at one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DerivedValue {
    /// Its name in `[metrics]`.
    pub name: String,
    /// Mean over replications and CI (NaN when it cannot be evaluated).
    pub value: Estimate,
    /// Why it could not be evaluated at this point (the run's JSON gives
    /// the same as `{"error": ...}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Evaluates derived metrics on each replication and summarizes them
/// ([`DerivedMetric::estimate`]). A replication where a metric cannot be
/// evaluated (an unknown name, a division by zero) makes that metric NaN at
/// this point, with the reason in `error`.
pub fn derived_values(
    network: &Network,
    derived: &[DerivedMetric],
    reps: &[ReplicationResult],
) -> Vec<DerivedValue> {
    derived
        .iter()
        .map(|d| {
            let (value, error) = match d.estimate(network, reps) {
                Ok(e) => (e, None),
                Err(e) => (Estimate::UNKNOWN, Some(e.to_string())),
            };
            DerivedValue {
                name: d.name.clone(),
                value,
                error,
            }
        })
        .collect()
}

impl PointMetrics {
    /// Adds derived-metric values.
    pub fn with_derived(mut self, derived: Vec<DerivedValue>) -> PointMetrics {
        self.derived = derived;
        self
    }

    /// A system metric (a name from `qsim_kernel::names`), or
    /// [`Estimate::UNKNOWN`] when the point does not have it.
    pub fn system(&self, name: &str) -> Estimate {
        self.system.value(name)
    }

    /// Power X/R (throughput over mean response time), per second squared:
    /// highest at the knee. NaN when R is not positive.
    pub fn power(&self) -> f64 {
        let r = self.system(names::RESPONSE_TIME_S).mean;
        if r > 0.0 {
            self.system(names::THROUGHPUT_PER_S).mean / r
        } else {
            f64::NAN
        }
    }

    /// Utilization of the bottleneck station.
    pub fn bottleneck_utilization(&self) -> Option<f64> {
        let name = self.bottleneck.as_deref()?;
        self.stations
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.figures.get(names::UTILIZATION))
            .map(|u| u.mean)
    }

    /// Converts a kernel summary.
    pub fn from_results(r: &RunResults) -> PointMetrics {
        let stations: Vec<ItemMetrics> = r
            .stations
            .iter()
            .enumerate()
            .map(|(i, s)| ItemMetrics {
                name: s.name.clone(),
                kind: Some(s.kind),
                figures: MetricValues::of(r, MetricScope::Station, i),
            })
            .collect();
        // Highest utilization wins; the first in model order on a tie.
        let bottleneck = r
            .stations
            .iter()
            .filter(|s| s.utilization.mean > 0.0)
            .fold(None::<&StationResults>, |best, s| match best {
                Some(b) if b.utilization.mean >= s.utilization.mean => Some(b),
                _ => Some(s),
            })
            .map(|s| s.name.clone());
        PointMetrics {
            replications: r.replications,
            events: r.events,
            system: MetricValues::of(r, MetricScope::System, 0),
            bottleneck,
            stations,
            regions: r
                .regions
                .iter()
                .enumerate()
                .map(|(i, g)| ItemMetrics {
                    name: g.name.clone(),
                    kind: None,
                    figures: MetricValues::of(r, MetricScope::Region, i),
                })
                .collect(),
            derived: Vec::new(),
            bistability: None,
            warnings: r
                .warnings
                .iter()
                .filter(|w| !matches!(w, RunWarning::TailTooShort { .. }))
                .map(|w| w.to_string())
                .collect(),
            tail_warnings: r
                .warnings
                .iter()
                .filter(|w| matches!(w, RunWarning::TailTooShort { .. }))
                .map(|w| w.to_string())
                .collect(),
        }
    }
}

/// One point of a sweep: where it is, its seed, and its results or error.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointRecord {
    /// Position in the grid (decides the seed and the shard).
    pub index: usize,
    /// The swept values.
    pub point: Point,
    /// Root seed of the point's run (`qsim run --seed` reproduces it).
    pub seed: u64,
    /// Why the point has no results (bad override, unstable model, ...).
    pub error: Option<String>,
    /// Results, when the point ran.
    pub results: Option<PointMetrics>,
}

impl PointRecord {
    /// The JSON line of this record, newline included.
    pub fn to_json_line(&self) -> String {
        let mut s = serde_json::to_string(self).expect("records always serialize");
        s.push('\n');
        s
    }
}

/// The station and region names that decide the CSV columns.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Columns {
    /// Swept key paths, in `--vary` order.
    pub paths: Vec<String>,
    /// Station names, in model order.
    pub stations: Vec<String>,
    /// Region names, in model order.
    pub regions: Vec<String>,
    /// Derived-metric names, in declaration order.
    #[serde(default)]
    pub derived: Vec<String>,
    /// Whether points carry the two-ended check (`bistable` and
    /// `other_end_throughput_per_s` columns).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bistability: bool,
}

/// Sweep columns that are not metrics of the table: where the point is,
/// how it ran, and the knee-analysis figures.
pub mod columns {
    /// Grid index of the point.
    pub const INDEX: &str = "index";
    /// Root seed of the point's run.
    pub const SEED: &str = "seed";
    /// Why the point has no results.
    pub const ERROR: &str = "error";
    /// Replications run.
    pub const REPLICATIONS: &str = "replications";
    /// Events processed.
    pub const EVENTS: &str = "events";
    /// Power X/R, per second squared.
    pub const POWER_PER_S2: &str = "power_per_s2";
    /// The busiest station.
    pub const BOTTLENECK: &str = "bottleneck";
    /// Its utilization.
    pub const BOTTLENECK_UTILIZATION: &str = "bottleneck_utilization";
    /// MetricScope of derived-metric columns (`derived.NAME`).
    pub const DERIVED: &str = "derived";
    /// Suffix of a confidence-interval column.
    pub const CI95_SUFFIX: &str = "_ci95";
}

fn sweep_metrics(scope: MetricScope) -> impl Iterator<Item = &'static Metric> {
    metrics(scope).filter(|m| m.sweep_column)
}

impl Columns {
    /// The CSV header fields.
    pub fn header(&self) -> Vec<String> {
        use columns::*;
        let mut h = vec![INDEX.to_string()];
        h.extend(self.paths.iter().cloned());
        h.extend([SEED, ERROR, REPLICATIONS, EVENTS].map(String::from));
        fn est(h: &mut Vec<String>, name: String) {
            h.push(format!("{name}{CI95_SUFFIX}"));
            h.push(name);
            let n = h.len();
            h.swap(n - 2, n - 1);
        }
        for m in sweep_metrics(MetricScope::System) {
            est(&mut h, m.path(""));
        }
        h.extend([POWER_PER_S2, BOTTLENECK, BOTTLENECK_UTILIZATION].map(String::from));
        if self.bistability {
            h.push(names::BISTABLE.to_string());
            est(&mut h, names::OTHER_END_THROUGHPUT_PER_S.to_string());
            h.push(names::STATE.to_string());
        }
        for s in &self.stations {
            for m in sweep_metrics(MetricScope::Station) {
                est(&mut h, m.path(s));
            }
        }
        for g in &self.regions {
            for m in sweep_metrics(MetricScope::Region) {
                est(&mut h, m.path(g));
            }
        }
        for d in &self.derived {
            est(&mut h, format!("{DERIVED}.{d}"));
        }
        h
    }

    /// The CSV fields of `r` under this header.
    pub fn row(&self, r: &PointRecord) -> Vec<String> {
        fn num(x: f64) -> String {
            if x.is_finite() {
                format!("{x}")
            } else {
                String::new()
            }
        }
        fn est(out: &mut Vec<String>, e: Option<Estimate>) {
            let e = e.unwrap_or(Estimate::UNKNOWN);
            out.push(num(e.mean));
            out.push(num(e.ci95));
        }
        let mut row = vec![r.index.to_string()];
        for p in &self.paths {
            row.push(
                r.point
                    .get(p)
                    .map(|v| v.text().to_string())
                    .unwrap_or_default(),
            );
        }
        row.push(r.seed.to_string());
        row.push(r.error.clone().unwrap_or_default());
        let m = r.results.as_ref();
        row.push(m.map(|m| m.replications.to_string()).unwrap_or_default());
        row.push(m.map(|m| m.events.to_string()).unwrap_or_default());
        for metric in sweep_metrics(MetricScope::System) {
            est(&mut row, m.and_then(|m| m.system.get(metric.name)));
        }
        row.push(m.map(|m| num(m.power())).unwrap_or_default());
        row.push(m.and_then(|m| m.bottleneck.clone()).unwrap_or_default());
        row.push(
            m.and_then(|m| m.bottleneck_utilization())
                .map(num)
                .unwrap_or_default(),
        );
        if self.bistability {
            let b = m.and_then(|m| m.bistability.as_ref());
            row.push(
                b.and_then(|b| b.bistable)
                    .map(|x| x.to_string())
                    .unwrap_or_default(),
            );
            est(&mut row, b.map(|b| b.other_end_throughput_per_s));
            row.push(b.map(|b| b.state.clone()).unwrap_or_default());
        }
        let item = |list: Option<&Vec<ItemMetrics>>, name: &str| {
            list.and_then(|l| l.iter().find(|x| x.name == name))
                .map(|x| x.figures.clone())
        };
        for s in &self.stations {
            let f = item(m.map(|m| &m.stations), s);
            for metric in sweep_metrics(MetricScope::Station) {
                est(&mut row, f.as_ref().and_then(|f| f.get(metric.name)));
            }
        }
        for g in &self.regions {
            let f = item(m.map(|m| &m.regions), g);
            for metric in sweep_metrics(MetricScope::Region) {
                est(&mut row, f.as_ref().and_then(|f| f.get(metric.name)));
            }
        }
        for d in &self.derived {
            let v = m.and_then(|m| m.derived.iter().find(|x| &x.name == d));
            est(&mut row, v.map(|v| v.value));
        }
        row
    }

    /// Header line(s) as CSV bytes.
    pub fn header_csv(&self) -> Vec<u8> {
        csv_line(&self.header())
    }

    /// One row as CSV bytes.
    pub fn row_csv(&self, r: &PointRecord) -> Vec<u8> {
        csv_line(&self.row(r))
    }
}

fn csv_line(fields: &[String]) -> Vec<u8> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    w.write_record(fields).expect("writing to memory");
    w.into_inner().expect("writing to memory")
}

/// Reads records back from a sweep CSV (for `qsim plot FILE.csv`). Station
/// and region figures are restored for the columns present; swept paths are
/// the columns between `index` and `seed`.
pub fn records_from_csv(text: &str) -> Result<(Columns, Vec<PointRecord>), String> {
    use columns::*;
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = rd
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(String::from)
        .collect();
    let col = |name: &str| header.iter().position(|h| h == name);
    let seed_at = col(SEED).ok_or("no `seed` column: not a qsim sweep CSV")?;
    if header.first().map(String::as_str) != Some(INDEX) {
        return Err("no `index` column first: not a qsim sweep CSV".into());
    }
    let paths: Vec<String> = header[1..seed_at].to_vec();
    // Items are recognized by their first sweep column.
    let first = |scope: MetricScope| {
        sweep_metrics(scope)
            .next()
            .map(|m| format!(".{}", m.name))
            .unwrap_or_default()
    };
    let items = |scope: MetricScope| -> Vec<String> {
        let suffix = first(scope);
        header
            .iter()
            .filter_map(|h| {
                h.strip_prefix(scope.key())?
                    .strip_prefix('.')?
                    .strip_suffix(suffix.as_str())
                    .map(String::from)
            })
            .collect()
    };
    let derived: Vec<String> = header
        .iter()
        .filter_map(|h| {
            h.strip_prefix(DERIVED)?
                .strip_prefix('.')
                .filter(|n| !n.ends_with(CI95_SUFFIX))
                .map(String::from)
        })
        .collect();
    let columns = Columns {
        paths: paths.clone(),
        stations: items(MetricScope::Station),
        regions: items(MetricScope::Region),
        derived,
        bistability: col(names::BISTABLE).is_some(),
    };
    let mut out = Vec::new();
    for (line, rec) in rd.records().enumerate() {
        let rec = rec.map_err(|e| format!("row {}: {e}", line + 2))?;
        let field = |name: &str| col(name).and_then(|i| rec.get(i)).unwrap_or("");
        let num = |name: &str| field(name).parse::<f64>().unwrap_or(f64::NAN);
        let est = |name: &str| Estimate {
            mean: num(name),
            ci95: num(&format!("{name}{CI95_SUFFIX}")),
        };
        let figures = |scope: MetricScope, item: &str| {
            MetricValues(
                sweep_metrics(scope)
                    .map(|m| (m.name.to_string(), est(&m.path(item))))
                    // An empty cell is a metric that does not apply.
                    .filter(|(_, e)| e.mean.is_finite())
                    .collect(),
            )
        };
        let index: usize = field(INDEX)
            .parse()
            .map_err(|_| format!("row {}: bad index", line + 2))?;
        let point = Point(
            paths
                .iter()
                .map(|p| (p.clone(), VaryValue::new(field(p))))
                .collect(),
        );
        let error = Some(field(ERROR).to_string()).filter(|e| !e.is_empty());
        let results = if error.is_some() {
            None
        } else {
            let items = |scope: MetricScope, names: &[String]| {
                names
                    .iter()
                    .map(|n| ItemMetrics {
                        name: n.clone(),
                        kind: None,
                        figures: figures(scope, n),
                    })
                    .collect()
            };
            Some(PointMetrics {
                replications: field(REPLICATIONS).parse().unwrap_or(0),
                events: field(EVENTS).parse().unwrap_or(0),
                system: figures(MetricScope::System, ""),
                bottleneck: Some(field(BOTTLENECK).to_string()).filter(|b| !b.is_empty()),
                stations: items(MetricScope::Station, &columns.stations),
                regions: items(MetricScope::Region, &columns.regions),
                derived: columns
                    .derived
                    .iter()
                    .map(|d| DerivedValue {
                        name: d.clone(),
                        value: est(&format!("{DERIVED}.{d}")),
                        error: None,
                    })
                    .collect(),
                // The collapse station is not a column: a record read from
                // CSV names none.
                bistability: match field(names::BISTABLE) {
                    "" => None,
                    v => Some(PointBistability {
                        station: String::new(),
                        bistable: Some(v == "true"),
                        other_end_throughput_per_s: est(names::OTHER_END_THROUGHPUT_PER_S),
                        state: field(names::STATE).to_string(),
                        mixed: field(names::STATE).contains("modes"),
                        verdict: None,
                        error: None,
                    }),
                },
                // Warnings are in points.jsonl only.
                warnings: Vec::new(),
                tail_warnings: Vec::new(),
            })
        };
        out.push(PointRecord {
            index,
            point,
            seed: field(SEED).parse().unwrap_or(0),
            error,
            results,
        });
    }
    Ok((columns, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn sample(index: usize, x: f64, r: f64) -> PointRecord {
        PointRecord {
            index,
            point: Point(vec![
                (
                    "workload.population".into(),
                    VaryValue::new(format!("{}", index * 10 + 10)),
                ),
                ("throttle.limit".into(), VaryValue::new("none")),
            ]),
            seed: 42 + index as u64,
            error: None,
            results: Some(PointMetrics {
                replications: 3,
                events: 1000,
                system: MetricValues(
                    [
                        (names::THROUGHPUT_PER_S, x, 0.1 * x),
                        (names::RESPONSE_TIME_S, r, 0.01),
                        (names::RESPONSE_TIME_P50_S, r, 0.0),
                        (names::RESPONSE_TIME_P90_S, 2.0 * r, 0.0),
                        (names::RESPONSE_TIME_P95_S, 3.0 * r, 0.0),
                        (names::RESPONSE_TIME_P99_S, 4.6 * r, 0.3),
                        (names::RESPONSE_TIME_P999_S, f64::NAN, f64::NAN),
                    ]
                    .map(|(n, mean, ci95)| (n.to_string(), Estimate { mean, ci95 }))
                    .to_vec(),
                ),
                bottleneck: Some("cpu".into()),
                stations: vec![ItemMetrics {
                    name: "cpu".into(),
                    kind: Some(KindTag::Queue),
                    figures: MetricValues(
                        [
                            (names::THROUGHPUT_PER_S, x, 1.0),
                            (names::UTILIZATION, 0.5, 0.01),
                            (names::MEAN_JOBS, 1.0 / 3.0, 0.1),
                            (names::RESPONSE_TIME_S, r, 0.1),
                        ]
                        .map(|(n, mean, ci95)| (n.to_string(), Estimate { mean, ci95 }))
                        .to_vec(),
                    ),
                }],
                regions: vec![],
                derived: vec![DerivedValue {
                    name: "tpmc".into(),
                    value: Estimate {
                        mean: 27.0 * x,
                        ci95: 1.5,
                    },
                    error: None,
                }],
                bistability: None,
                warnings: Vec::new(),
                tail_warnings: Vec::new(),
            }),
        }
    }

    #[test]
    fn json_round_trip_is_exact() {
        let r = sample(3, 1_234.567_890_123_4, 0.1 + 0.2);
        let line = r.to_json_line();
        assert!(line.contains(r#""point":{"workload.population":40,"throttle.limit":"none"}"#));
        let back: PointRecord = serde_json::from_str(&line).unwrap();
        assert_eq!(back.to_json_line(), line);
        let m = back.results.unwrap();
        assert!(m.system(names::RESPONSE_TIME_P999_S).mean.is_nan());
        assert_eq!(m.system(names::THROUGHPUT_PER_S).mean, 1_234.567_890_123_4);
    }

    #[test]
    fn csv_round_trip() {
        let cols = Columns {
            paths: vec!["workload.population".into(), "throttle.limit".into()],
            stations: vec!["cpu".into()],
            regions: vec![],
            derived: vec!["tpmc".into()],
            bistability: false,
        };
        let mut failed = sample(1, 0.0, 0.0);
        failed.results = None;
        failed.error = Some("the model is unstable, \"quoted\"".into());
        let mut text = cols.header_csv();
        text.extend(cols.row_csv(&sample(0, 100.0, 0.5)));
        text.extend(cols.row_csv(&failed));
        let text = String::from_utf8(text).unwrap();
        let header: Vec<String> = cols.header();
        assert_eq!(
            text.lines().next().unwrap().split(',').count(),
            header.len()
        );
        let (c2, recs) = records_from_csv(&text).unwrap();
        assert_eq!(c2, cols);
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[1].error, failed.error);
        let m = recs[0].results.as_ref().unwrap();
        assert_eq!(m.system(names::THROUGHPUT_PER_S).mean, 100.0);
        assert_eq!(
            m.stations[0].figures.value(names::MEAN_JOBS).mean,
            1.0 / 3.0
        );
        assert_eq!(m.derived[0].value.mean, 2700.0);
        assert_eq!(recs[0].point.get("throttle.limit").unwrap().text(), "none");
        // Rows rewritten from parsed records are the same bytes.
        let mut again = cols.header_csv();
        let mut r0 = recs[0].clone();
        r0.results.as_mut().unwrap().stations[0].kind = Some(KindTag::Queue);
        again.extend(cols.row_csv(&r0));
        assert!(text.starts_with(std::str::from_utf8(&again).unwrap()));
    }
}
