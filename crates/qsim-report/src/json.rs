//! The JSON document of one run: the results as [`RunResults`] serializes
//! them (metric names from the one table, `qsim_kernel::METRICS`), with the
//! run's context around them.

use crate::{Bottleneck, Report, bottleneck};
use qsim_kernel::{Precision, RunResults, Stop, Warmup};
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

/// What produced the results.
#[derive(Serialize)]
struct RunContext<'a> {
    seed: u64,
    stop: Stop,
    warmup: Warmup,
    #[serde(skip_serializing_if = "Option::is_none")]
    precision: Option<Precision>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sla_s: Option<f64>,
    initial_state: &'a str,
}

/// Derived metrics by name: an estimate, or `{"error": "..."}` for one that
/// could not be evaluated.
struct Derived<'a>(&'a [crate::DerivedResult]);

impl Serialize for Derived<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Failed<'a> {
            error: &'a str,
        }
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for d in self.0 {
            match &d.value {
                Ok(e) => m.serialize_entry(&d.name, e)?,
                Err(error) => m.serialize_entry(&d.name, &Failed { error })?,
            }
        }
        m.end()
    }
}

#[derive(Serialize)]
struct Document<'a> {
    model: &'a str,
    run: RunContext<'a>,
    #[serde(flatten)]
    results: &'a RunResults,
    derived: Derived<'a>,
    bottleneck: Option<Bottleneck>,
    warnings: &'a [String],
}

/// Renders a report as one JSON object; the schema is documented in README.md.
pub fn to_json(report: &Report) -> Value {
    let c = report.config;
    let doc = Document {
        model: report.model,
        run: RunContext {
            seed: c.seed,
            stop: c.stop,
            warmup: c.effective_warmup(),
            precision: c.precision,
            sla_s: c.sla_s,
            initial_state: &report.initial_state,
        },
        results: report.results,
        derived: Derived(&report.derived),
        bottleneck: bottleneck(report.results),
        warnings: &report.warnings,
    };
    serde_json::to_value(&doc).expect("reports always serialize")
}
