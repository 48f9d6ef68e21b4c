//! A sweep point's stations, regions and derived metrics in JSON: objects
//! keyed by name, in model order, as in a run's JSON (`qsim run --format
//! json`), so `.stations.cpu.utilization` reads the same in both. Lists
//! with a `name` in each item (how points.jsonl was written before) are
//! still read, so an older sweep can be resumed and merged.

use crate::record::{DerivedValue, ItemMetrics, MetricValues};
use qsim_kernel::{Estimate, KindTag};
use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// One station's or region's object: its kind (a station's), then its metrics.
#[derive(Serialize, Deserialize)]
struct Item {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kind: Option<KindTag>,
    #[serde(flatten)]
    figures: MetricValues,
}

/// Stations or regions: `{"NAME": {"kind": ..., METRIC: {mean, ci95}, ...}, ...}`.
pub(crate) mod items {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(items: &[ItemMetrics], s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(items.len()))?;
        for i in items {
            m.serialize_entry(
                &i.name,
                &Item {
                    kind: i.kind,
                    figures: i.figures.clone(),
                },
            )?;
        }
        m.end()
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<ItemMetrics>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vec<ItemMetrics>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map from station or region name to its metrics")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((name, item)) = a.next_entry::<String, Item>()? {
                    out.push(ItemMetrics {
                        name,
                        kind: item.kind,
                        figures: item.figures,
                    });
                }
                Ok(out)
            }
            // Written before the keyed form: a list with `name` in each.
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(item) = a.next_element::<ItemMetrics>()? {
                    out.push(item);
                }
                Ok(out)
            }
        }
        d.deserialize_any(V)
    }
}

/// Derived metrics: `{"NAME": {"mean": m, "ci95": h}, ...}`, or
/// `{"NAME": {"error": "..."}}` for one that could not be evaluated, as in
/// a run's JSON.
pub(crate) mod derived {
    use super::*;

    #[derive(Serialize, Deserialize)]
    struct Repr {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mean: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ci95: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    }

    pub(crate) fn serialize<S: Serializer>(
        values: &[DerivedValue],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(values.len()))?;
        for v in values {
            match &v.error {
                Some(error) => m.serialize_entry(
                    &v.name,
                    &Repr {
                        mean: None,
                        ci95: None,
                        error: Some(error.clone()),
                    },
                )?,
                None => m.serialize_entry(&v.name, &v.value)?,
            }
        }
        m.end()
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<DerivedValue>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vec<DerivedValue>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a map from derived metric name to {mean, ci95} or {error}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((name, r)) = a.next_entry::<String, Repr>()? {
                    let value = match r.error {
                        Some(_) => Estimate::UNKNOWN,
                        None => Estimate {
                            mean: r.mean.unwrap_or(f64::NAN),
                            ci95: r.ci95.unwrap_or(f64::NAN),
                        },
                    };
                    out.push(DerivedValue {
                        name,
                        value,
                        error: r.error,
                    });
                }
                Ok(out)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = a.next_element::<DerivedValue>()? {
                    out.push(v);
                }
                Ok(out)
            }
        }
        d.deserialize_any(V)
    }
}
