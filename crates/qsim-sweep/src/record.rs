//! One finished point as plain data, and its CSV and JSON-lines forms.
//!
//! The JSON line is the lossless form (resume, merge and `qsim plot` read
//! it back); the CSV row is the same data flattened for spreadsheets. Both are
//! pure functions of the record, so a record read back from JSON (floats
//! round-trip exactly) writes the very same bytes again.

use crate::spec::VaryValue;
use qsim_kernel::{Estimate, Network, ReplicationResult, RunResults, estimate};
use qsim_model::DerivedMetric;
use serde::de::{self, MapAccess, Visitor};
use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A mean with the half-width of its 95% confidence interval. Serialized as
/// `{"mean": x, "ci95": h}`; a value that is not finite is written as `null`
/// and read back as NaN.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Est {
    /// Mean across replications.
    pub mean: f64,
    /// Half-width of the 95% confidence interval.
    pub ci95: f64,
}

impl From<Estimate> for Est {
    fn from(e: Estimate) -> Est {
        Est {
            mean: e.mean,
            ci95: e.ci95,
        }
    }
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl Serialize for Est {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Est", 2)?;
        st.serialize_field("mean", &finite(self.mean))?;
        st.serialize_field("ci95", &finite(self.ci95))?;
        st.end()
    }
}

impl<'de> Deserialize<'de> for Est {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Est, D::Error> {
        #[derive(Deserialize)]
        struct Repr {
            mean: Option<f64>,
            ci95: Option<f64>,
        }
        let r = Repr::deserialize(d)?;
        Ok(Est {
            mean: r.mean.unwrap_or(f64::NAN),
            ci95: r.ci95.unwrap_or(f64::NAN),
        })
    }
}

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

/// Figures of one station at one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StationMetrics {
    /// Station name.
    pub name: String,
    /// Station kind (`queue`, `latch`, ...).
    pub kind: String,
    /// Busy fraction.
    pub utilization: Est,
    /// Departures per second.
    pub throughput_per_s: Est,
    /// Mean number present.
    pub mean_jobs: Est,
    /// Mean time at the station per visit, seconds.
    pub response_time_s: Est,
}

/// Figures of one region (throttle) at one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegionMetrics {
    /// Region name.
    pub name: String,
    /// Mean wait for admission, seconds.
    pub wait_time_s: Est,
    /// Mean number waiting for admission.
    pub mean_waiting: Est,
}

/// The results of a point that ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointMetrics {
    /// Replications run.
    pub replications: u32,
    /// Events processed over all replications.
    pub events: u64,
    /// System throughput, interactions per second.
    pub throughput_per_s: Est,
    /// Mean interaction response time (think time excluded), seconds.
    pub response_time_s: Est,
    /// Median response time, seconds.
    pub response_time_p50_s: Est,
    /// 90th percentile, seconds.
    pub response_time_p90_s: Est,
    /// 95th percentile, seconds.
    pub response_time_p95_s: Est,
    /// 99th percentile, seconds.
    pub response_time_p99_s: Est,
    /// 99.9th percentile, seconds.
    pub response_time_p999_s: Est,
    /// Fraction of interactions slower than the SLA, when the model sets one.
    pub sla_violation: Option<Est>,
    /// The station with the highest utilization, if any is busy.
    pub bottleneck: Option<String>,
    /// Per station, in model order.
    pub stations: Vec<StationMetrics>,
    /// Per region, in model order.
    pub regions: Vec<RegionMetrics>,
    /// The model's derived metrics (`[metrics]`), in declaration order.
    #[serde(default)]
    pub derived: Vec<DerivedValue>,
}

/// The value of one derived metric at one point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DerivedValue {
    /// Its name in `[metrics]`.
    pub name: String,
    /// Mean over replications and CI (NaN when it cannot be evaluated).
    pub value: Est,
}

/// Evaluates derived metrics on each replication and summarizes them. A
/// replication where a metric cannot be evaluated (an unknown name, a
/// division by zero) makes that metric NaN at this point.
pub fn derived_values(
    network: &Network,
    derived: &[DerivedMetric],
    reps: &[ReplicationResult],
) -> Vec<DerivedValue> {
    derived
        .iter()
        .map(|d| {
            let values: Option<Vec<f64>> = reps
                .iter()
                .map(|rep| {
                    d.expr
                        .eval(&|name| qsim_model::metric_value(network, rep, name))
                        .ok()
                })
                .collect();
            DerivedValue {
                name: d.name.clone(),
                value: values.map_or(
                    Est {
                        mean: f64::NAN,
                        ci95: f64::NAN,
                    },
                    |v| estimate(v).into(),
                ),
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

    /// Power X/R (throughput over mean response time), per second squared:
    /// highest at the knee. NaN when R is not positive.
    pub fn power(&self) -> f64 {
        let r = self.response_time_s.mean;
        if r > 0.0 {
            self.throughput_per_s.mean / r
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
            .map(|s| s.utilization.mean)
    }

    /// Converts a kernel summary.
    pub fn from_results(r: &RunResults) -> PointMetrics {
        let rt = &r.system.response_time_s;
        let stations: Vec<StationMetrics> = r
            .stations
            .iter()
            .map(|s| StationMetrics {
                name: s.name.clone(),
                kind: s.kind.clone(),
                utilization: s.utilization.into(),
                throughput_per_s: s.throughput_per_s.into(),
                mean_jobs: s.mean_jobs.into(),
                response_time_s: s.response_time_s.into(),
            })
            .collect();
        // Highest utilization wins; the first in model order on a tie.
        let bottleneck = stations
            .iter()
            .filter(|s| s.utilization.mean > 0.0)
            .fold(None::<&StationMetrics>, |best, s| match best {
                Some(b) if b.utilization.mean >= s.utilization.mean => Some(b),
                _ => Some(s),
            })
            .map(|s| s.name.clone());
        PointMetrics {
            replications: r.replications,
            events: r.events,
            throughput_per_s: r.system.throughput_per_s.into(),
            response_time_s: Est {
                mean: rt.mean,
                ci95: rt.ci95,
            },
            response_time_p50_s: rt.p50.into(),
            response_time_p90_s: rt.p90.into(),
            response_time_p95_s: rt.p95.into(),
            response_time_p99_s: rt.p99.into(),
            response_time_p999_s: rt.p999.into(),
            sla_violation: r.system.sla_violation.map(Est::from),
            bottleneck,
            stations,
            regions: r
                .regions
                .iter()
                .map(|g| RegionMetrics {
                    name: g.name.clone(),
                    wait_time_s: g.wait_time_s.into(),
                    mean_waiting: g.mean_waiting.into(),
                })
                .collect(),
            derived: Vec::new(),
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
}

const SYSTEM_EST: [&str; 7] = [
    "throughput_per_s",
    "response_time_s",
    "response_time_p50_s",
    "response_time_p90_s",
    "response_time_p95_s",
    "response_time_p99_s",
    "response_time_p999_s",
];
const STATION_EST: [&str; 4] = [
    "utilization",
    "throughput_per_s",
    "mean_jobs",
    "response_time_s",
];
const REGION_EST: [&str; 2] = ["wait_time_s", "mean_waiting"];

impl Columns {
    /// The CSV header fields.
    pub fn header(&self) -> Vec<String> {
        let mut h = vec!["index".to_string()];
        h.extend(self.paths.iter().cloned());
        h.extend(["seed", "error", "replications", "events"].map(String::from));
        for name in SYSTEM_EST {
            h.push(name.to_string());
            h.push(format!("{name}_ci95"));
        }
        h.extend(
            [
                "power_per_s2",
                "sla_violation",
                "sla_violation_ci95",
                "bottleneck",
                "bottleneck_utilization",
            ]
            .map(String::from),
        );
        for s in &self.stations {
            for m in STATION_EST {
                h.push(format!("station.{s}.{m}"));
                h.push(format!("station.{s}.{m}_ci95"));
            }
        }
        for g in &self.regions {
            for m in REGION_EST {
                h.push(format!("region.{g}.{m}"));
                h.push(format!("region.{g}.{m}_ci95"));
            }
        }
        for d in &self.derived {
            h.push(format!("derived.{d}"));
            h.push(format!("derived.{d}_ci95"));
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
        fn est(out: &mut Vec<String>, e: Option<Est>) {
            let e = e.unwrap_or(Est {
                mean: f64::NAN,
                ci95: f64::NAN,
            });
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
        match m {
            Some(m) => {
                for e in [
                    m.throughput_per_s,
                    m.response_time_s,
                    m.response_time_p50_s,
                    m.response_time_p90_s,
                    m.response_time_p95_s,
                    m.response_time_p99_s,
                    m.response_time_p999_s,
                ] {
                    est(&mut row, Some(e));
                }
                row.push(num(m.power()));
                est(&mut row, m.sla_violation);
                row.push(m.bottleneck.clone().unwrap_or_default());
                row.push(m.bottleneck_utilization().map(num).unwrap_or_default());
            }
            None => row.extend(std::iter::repeat_n(String::new(), SYSTEM_EST.len() * 2 + 5)),
        }
        for s in &self.stations {
            let st = m.and_then(|m| m.stations.iter().find(|x| &x.name == s));
            for k in 0..STATION_EST.len() {
                est(
                    &mut row,
                    st.map(|st| {
                        [
                            st.utilization,
                            st.throughput_per_s,
                            st.mean_jobs,
                            st.response_time_s,
                        ][k]
                    }),
                );
            }
        }
        for g in &self.regions {
            let rg = m.and_then(|m| m.regions.iter().find(|x| &x.name == g));
            for k in 0..REGION_EST.len() {
                est(&mut row, rg.map(|rg| [rg.wait_time_s, rg.mean_waiting][k]));
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
    let seed_at = col("seed").ok_or("no `seed` column: not a qsim sweep CSV")?;
    if header.first().map(String::as_str) != Some("index") {
        return Err("no `index` column first: not a qsim sweep CSV".into());
    }
    let paths: Vec<String> = header[1..seed_at].to_vec();
    let mut stations: Vec<String> = Vec::new();
    let mut regions: Vec<String> = Vec::new();
    let mut derived: Vec<String> = Vec::new();
    for h in &header {
        if let Some(name) = h.strip_prefix("derived.")
            && !name.ends_with("_ci95")
        {
            derived.push(name.to_string());
        }
        if let Some(rest) = h.strip_prefix("station.")
            && let Some(name) = rest.strip_suffix(".utilization")
        {
            stations.push(name.to_string());
        }
        if let Some(rest) = h.strip_prefix("region.")
            && let Some(name) = rest.strip_suffix(".wait_time_s")
        {
            regions.push(name.to_string());
        }
    }
    let columns = Columns {
        paths: paths.clone(),
        stations,
        regions,
        derived,
    };
    let mut out = Vec::new();
    for (line, rec) in rd.records().enumerate() {
        let rec = rec.map_err(|e| format!("row {}: {e}", line + 2))?;
        let field = |name: &str| col(name).and_then(|i| rec.get(i)).unwrap_or("");
        let num = |name: &str| field(name).parse::<f64>().unwrap_or(f64::NAN);
        let est = |name: &str| Est {
            mean: num(name),
            ci95: num(&format!("{name}_ci95")),
        };
        let index: usize = field("index")
            .parse()
            .map_err(|_| format!("row {}: bad index", line + 2))?;
        let point = Point(
            paths
                .iter()
                .map(|p| (p.clone(), VaryValue::new(field(p))))
                .collect(),
        );
        let error = Some(field("error").to_string()).filter(|e| !e.is_empty());
        let results = if error.is_some() {
            None
        } else {
            let sla = est("sla_violation");
            Some(PointMetrics {
                replications: field("replications").parse().unwrap_or(0),
                events: field("events").parse().unwrap_or(0),
                throughput_per_s: est("throughput_per_s"),
                response_time_s: est("response_time_s"),
                response_time_p50_s: est("response_time_p50_s"),
                response_time_p90_s: est("response_time_p90_s"),
                response_time_p95_s: est("response_time_p95_s"),
                response_time_p99_s: est("response_time_p99_s"),
                response_time_p999_s: est("response_time_p999_s"),
                sla_violation: sla.mean.is_finite().then_some(sla),
                bottleneck: Some(field("bottleneck").to_string()).filter(|b| !b.is_empty()),
                stations: columns
                    .stations
                    .iter()
                    .map(|s| StationMetrics {
                        name: s.clone(),
                        kind: String::new(),
                        utilization: est(&format!("station.{s}.utilization")),
                        throughput_per_s: est(&format!("station.{s}.throughput_per_s")),
                        mean_jobs: est(&format!("station.{s}.mean_jobs")),
                        response_time_s: est(&format!("station.{s}.response_time_s")),
                    })
                    .collect(),
                regions: columns
                    .regions
                    .iter()
                    .map(|g| RegionMetrics {
                        name: g.clone(),
                        wait_time_s: est(&format!("region.{g}.wait_time_s")),
                        mean_waiting: est(&format!("region.{g}.mean_waiting")),
                    })
                    .collect(),
                derived: columns
                    .derived
                    .iter()
                    .map(|d| DerivedValue {
                        name: d.clone(),
                        value: est(&format!("derived.{d}")),
                    })
                    .collect(),
            })
        };
        out.push(PointRecord {
            index,
            point,
            seed: field("seed").parse().unwrap_or(0),
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
                throughput_per_s: Est {
                    mean: x,
                    ci95: 0.1 * x,
                },
                response_time_s: Est {
                    mean: r,
                    ci95: 0.01,
                },
                response_time_p50_s: Est { mean: r, ci95: 0.0 },
                response_time_p90_s: Est {
                    mean: 2.0 * r,
                    ci95: 0.0,
                },
                response_time_p95_s: Est {
                    mean: 3.0 * r,
                    ci95: 0.0,
                },
                response_time_p99_s: Est {
                    mean: 4.6 * r,
                    ci95: 0.3,
                },
                response_time_p999_s: Est {
                    mean: f64::NAN,
                    ci95: f64::NAN,
                },
                sla_violation: None,
                bottleneck: Some("cpu".into()),
                stations: vec![StationMetrics {
                    name: "cpu".into(),
                    kind: "queue".into(),
                    utilization: Est {
                        mean: 0.5,
                        ci95: 0.01,
                    },
                    throughput_per_s: Est { mean: x, ci95: 1.0 },
                    mean_jobs: Est {
                        mean: 1.0 / 3.0,
                        ci95: 0.1,
                    },
                    response_time_s: Est { mean: r, ci95: 0.1 },
                }],
                regions: vec![],
                derived: vec![DerivedValue {
                    name: "tpmc".into(),
                    value: Est {
                        mean: 27.0 * x,
                        ci95: 1.5,
                    },
                }],
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
        assert!(m.response_time_p999_s.mean.is_nan());
        assert_eq!(m.throughput_per_s.mean, 1_234.567_890_123_4);
    }

    #[test]
    fn csv_round_trip() {
        let cols = Columns {
            paths: vec!["workload.population".into(), "throttle.limit".into()],
            stations: vec!["cpu".into()],
            regions: vec![],
            derived: vec!["tpmc".into()],
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
        assert_eq!(m.throughput_per_s.mean, 100.0);
        assert_eq!(m.stations[0].mean_jobs.mean, 1.0 / 3.0);
        assert_eq!(m.derived[0].value.mean, 2700.0);
        assert_eq!(recs[0].point.get("throttle.limit").unwrap().text(), "none");
        // Rows rewritten from parsed records are the same bytes.
        let mut again = cols.header_csv();
        let mut r0 = recs[0].clone();
        r0.results.as_mut().unwrap().stations[0].kind = "queue".into();
        again.extend(cols.row_csv(&r0));
        assert!(text.starts_with(std::str::from_utf8(&again).unwrap()));
    }
}
