//! `--vary PATH=SPEC`: which key path to vary and over which values.
//!
//! A SPEC is one of
//! - an arithmetic range `START..END[:STEP]` (inclusive of END when a step
//!   lands on it; STEP defaults to 1), e.g. `10..600:10`;
//! - a geometric range `START..END:xFACTOR`, e.g. `1..1024:x2` (1, 2, 4, ... 1024);
//! - a list `A,B,C` of numbers or words, e.g. `none,50,100,200`.

use std::fmt;
use thiserror::Error;

/// Most values one `--vary` may produce (guards typos such as `1..1e9`).
pub const MAX_VALUES: usize = 100_000;

/// One value of a varied key path: the text passed as an override, and its
/// numeric value when it is a number.
#[derive(Clone, Debug, PartialEq)]
pub struct VaryValue {
    text: String,
    number: Option<f64>,
}

impl VaryValue {
    /// A value from its text; numeric when the text parses as a finite number.
    pub fn new(text: impl Into<String>) -> VaryValue {
        let text = text.into();
        let number = text.parse::<f64>().ok().filter(|x| x.is_finite());
        VaryValue { text, number }
    }

    /// The value as passed to the model override (`none`, `50`, `0.25`).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The numeric value, if the text is a number.
    pub fn number(&self) -> Option<f64> {
        self.number
    }
}

impl fmt::Display for VaryValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A parsed `--vary PATH=SPEC`.
#[derive(Clone, Debug, PartialEq)]
pub struct VarySpec {
    source: String,
    path: String,
    values: Vec<VaryValue>,
}

/// Why a `--vary` spec was rejected. Every message names the spec as typed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SpecError {
    /// No `=` or an empty side.
    #[error(
        "invalid `{spec}`: expected PATH=SPEC, e.g. workload.population=10..600:10 or throttle.limit=none,50,100"
    )]
    Syntax {
        /// The spec as typed.
        spec: String,
    },
    /// A bound, step or factor that is not a number.
    #[error("invalid `{spec}`: {what} `{found}` is not a number")]
    NotNumeric {
        /// The spec as typed.
        spec: String,
        /// Which part: `start`, `end`, `step` or `factor`.
        what: &'static str,
        /// The offending text.
        found: String,
    },
    /// A range with no values.
    #[error(
        "invalid `{spec}`: the range is empty ({start} > {end}); write the smaller bound first"
    )]
    EmptyRange {
        /// The spec as typed.
        spec: String,
        /// Start bound.
        start: String,
        /// End bound.
        end: String,
    },
    /// A zero or negative step.
    #[error("invalid `{spec}`: the step must be positive, found {step}")]
    BadStep {
        /// The spec as typed.
        spec: String,
        /// The step as typed.
        step: String,
    },
    /// A geometric factor that does not grow, or a start that is not positive.
    #[error("invalid `{spec}`: {message}")]
    BadGeometric {
        /// The spec as typed.
        spec: String,
        /// What is wrong.
        message: String,
    },
    /// An empty item in a list, e.g. `50,,100`.
    #[error("invalid `{spec}`: item {item} of the list is empty")]
    EmptyItem {
        /// The spec as typed.
        spec: String,
        /// 1-based position of the empty item.
        item: usize,
    },
    /// A value listed twice.
    #[error("invalid `{spec}`: the value {value} appears twice")]
    Duplicate {
        /// The spec as typed.
        spec: String,
        /// The repeated value.
        value: String,
    },
    /// Too many values.
    #[error("invalid `{spec}`: {count} values, more than the limit of {max}; use a larger step")]
    TooMany {
        /// The spec as typed.
        spec: String,
        /// Values the spec would produce.
        count: u64,
        /// The limit, [`MAX_VALUES`].
        max: usize,
    },
    /// Two specs vary the same path.
    #[error("invalid `{spec}`: {path} is already varied by an earlier --vary")]
    RepeatedPath {
        /// The spec as typed.
        spec: String,
        /// The path.
        path: String,
    },
}

impl VarySpec {
    /// Parses `PATH=SPEC`.
    pub fn parse(source: &str) -> Result<VarySpec, SpecError> {
        let spec = source.trim();
        let syntax = || SpecError::Syntax {
            spec: spec.to_string(),
        };
        let (path, rhs) = spec.split_once('=').ok_or_else(syntax)?;
        let (path, rhs) = (path.trim(), rhs.trim());
        if path.is_empty() || rhs.is_empty() || path.contains(char::is_whitespace) {
            return Err(syntax());
        }
        let values = if let Some((start, rest)) = rhs.split_once("..") {
            parse_range(spec, start.trim(), rest.trim())?
        } else {
            parse_list(spec, rhs)?
        };
        Ok(VarySpec {
            source: spec.to_string(),
            path: path.to_string(),
            values,
        })
    }

    /// A spec from a path and explicit values (for programs building sweeps).
    pub fn from_values<I, S>(path: &str, values: I) -> Result<VarySpec, SpecError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let texts: Vec<String> = values.into_iter().map(Into::into).collect();
        VarySpec::parse(&format!("{path}={}", texts.join(",")))
    }

    /// The spec as typed, e.g. `workload.population=10..600:10`.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The varied key path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The values, in the order they are swept.
    pub fn values(&self) -> &[VaryValue] {
        &self.values
    }

    /// Whether every value is a number.
    pub fn is_numeric(&self) -> bool {
        self.values.iter().all(|v| v.number.is_some())
    }
}

fn number(spec: &str, what: &'static str, text: &str) -> Result<f64, SpecError> {
    text.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| SpecError::NotNumeric {
            spec: spec.to_string(),
            what,
            found: text.to_string(),
        })
}

/// Digits after the decimal point as typed (`0.25` → 2, `10` → 0, `1e-3` → 3).
fn decimals(text: &str) -> usize {
    let lower = text.to_ascii_lowercase();
    let (mantissa, exp) = match lower.split_once('e') {
        Some((m, e)) => (m.to_string(), e.parse::<i64>().unwrap_or(0)),
        None => (lower, 0),
    };
    let frac = mantissa.split_once('.').map_or(0, |(_, f)| f.len()) as i64;
    (frac - exp).clamp(0, 15) as usize
}

fn too_many(spec: &str, count: f64) -> Result<(), SpecError> {
    if count > MAX_VALUES as f64 {
        return Err(SpecError::TooMany {
            spec: spec.to_string(),
            count: count.min(u64::MAX as f64) as u64,
            max: MAX_VALUES,
        });
    }
    Ok(())
}

fn parse_range(spec: &str, start_t: &str, rest: &str) -> Result<Vec<VaryValue>, SpecError> {
    let (end_t, step_t) = match rest.split_once(':') {
        Some((e, s)) => (e.trim(), Some(s.trim())),
        None => (rest, None),
    };
    let start = number(spec, "start", start_t)?;
    let end = number(spec, "end", end_t)?;
    if start > end {
        return Err(SpecError::EmptyRange {
            spec: spec.to_string(),
            start: start_t.to_string(),
            end: end_t.to_string(),
        });
    }
    if let Some(factor_t) = step_t.and_then(|s| s.strip_prefix(['x', 'X', '*'])) {
        let factor_t = factor_t.trim();
        let factor = number(spec, "factor", factor_t)?;
        let bad = |message: String| SpecError::BadGeometric {
            spec: spec.to_string(),
            message,
        };
        if factor <= 1.0 {
            return Err(bad(format!(
                "the factor must be greater than 1, found {factor_t}"
            )));
        }
        if start <= 0.0 {
            return Err(bad(format!(
                "a geometric range must start above 0, found {start_t}"
            )));
        }
        too_many(spec, (end / start).ln() / factor.ln() + 1.0)?;
        let integral = start.fract() == 0.0 && factor.fract() == 0.0;
        let mut values = Vec::new();
        let mut i = 0i32;
        loop {
            let v = start * factor.powi(i);
            if v > end * (1.0 + 1e-12) {
                break;
            }
            values.push(VaryValue::new(if integral {
                format!("{}", v.round())
            } else {
                shortest(v)
            }));
            i += 1;
        }
        return Ok(values);
    }
    let step_t = step_t.unwrap_or("1");
    let step = number(spec, "step", step_t)?;
    if step <= 0.0 {
        return Err(SpecError::BadStep {
            spec: spec.to_string(),
            step: step_t.to_string(),
        });
    }
    let count = ((end - start) / step * (1.0 + 1e-12) + 1e-9).floor() + 1.0;
    too_many(spec, count)?;
    let places = decimals(start_t).max(decimals(step_t));
    Ok((0..count as usize)
        .map(|i| VaryValue::new(format!("{:.*}", places, start + step * i as f64)))
        .collect())
}

/// Shortest text of `v` after rounding to 12 significant digits, so that
/// 1.5^3 prints as 3.375 rather than with binary noise.
fn shortest(v: f64) -> String {
    let rounded: f64 = format!("{v:.11e}").parse().unwrap_or(v);
    format!("{rounded}")
}

fn parse_list(spec: &str, rhs: &str) -> Result<Vec<VaryValue>, SpecError> {
    let mut values: Vec<VaryValue> = Vec::new();
    for (i, item) in rhs.split(',').enumerate() {
        let item = item.trim();
        if item.is_empty() {
            return Err(SpecError::EmptyItem {
                spec: spec.to_string(),
                item: i + 1,
            });
        }
        if values.iter().any(|v| v.text == item) {
            return Err(SpecError::Duplicate {
                spec: spec.to_string(),
                value: item.to_string(),
            });
        }
        values.push(VaryValue::new(item));
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(spec: &str) -> Vec<String> {
        VarySpec::parse(spec)
            .unwrap()
            .values()
            .iter()
            .map(|v| v.text().to_string())
            .collect()
    }

    fn check_err(spec: &str, expect: &str) {
        let e = VarySpec::parse(spec).unwrap_err().to_string();
        assert!(
            e.contains(expect) && e.contains(spec.trim()),
            "{spec}: got {e}"
        );
    }

    #[test]
    fn ranges() {
        assert_eq!(texts("a.b=10..50:10"), ["10", "20", "30", "40", "50"]);
        assert_eq!(texts("a=1..4"), ["1", "2", "3", "4"]);
        assert_eq!(texts("a=10..35:10"), ["10", "20", "30"]);
        assert_eq!(texts("a=0.1..0.5:0.1"), ["0.1", "0.2", "0.3", "0.4", "0.5"]);
        assert_eq!(texts("a=5..5:1"), ["5"]);
        assert_eq!(texts("a=1..1024:x2").len(), 11);
        assert_eq!(texts("a=1..100:x10"), ["1", "10", "100"]);
        assert_eq!(texts("a=1..4:x1.5"), ["1", "1.5", "2.25", "3.375"]);
        assert_eq!(VarySpec::parse("a=10..600:10").unwrap().values().len(), 60);
    }

    #[test]
    fn lists() {
        let s = VarySpec::parse("throttle.limit=none, 50,100").unwrap();
        assert_eq!(s.path(), "throttle.limit");
        assert_eq!(texts("throttle.limit=none,50,100"), ["none", "50", "100"]);
        assert_eq!(s.values()[0].number(), None);
        assert_eq!(s.values()[1].number(), Some(50.0));
        assert!(!s.is_numeric());
        assert!(VarySpec::parse("a=3").unwrap().is_numeric());
    }

    #[test]
    fn errors_name_the_spec() {
        check_err("workload.population", "expected PATH=SPEC");
        check_err("=1..3", "expected PATH=SPEC");
        check_err("a=", "expected PATH=SPEC");
        check_err("a=600..10:10", "range is empty");
        check_err("a=10..600:0", "step must be positive");
        check_err("a=10..600:-5", "step must be positive");
        check_err("a=ten..600:10", "start `ten` is not a number");
        check_err("a=10..lots", "end `lots` is not a number");
        check_err("a=1..10:two", "step `two` is not a number");
        check_err("a=1..10:x1", "factor must be greater than 1");
        check_err("a=0..10:x2", "must start above 0");
        check_err("a=1,,2", "item 2 of the list is empty");
        check_err("a=1,2,1", "appears twice");
        check_err("a=0..1e9:1", "more than the limit");
    }
}
