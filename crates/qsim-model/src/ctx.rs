//! Collecting located problems, and reading typed values out of the tree.

use crate::tree::{Entry, Node, Origin, V};
use crate::{ModelError, Override, Severity, did_you_mean, num};

/// Everything needed to say where a problem is; collects every problem.
pub(crate) struct Ctx<'a> {
    pub file: &'a str,
    pub text: &'a str,
    pub overrides: &'a [Override],
    pub problems: Vec<ModelError>,
    line_starts: Vec<usize>,
}

impl<'a> Ctx<'a> {
    pub fn new(file: &'a str, text: &'a str, overrides: &'a [Override]) -> Ctx<'a> {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Ctx {
            file,
            text,
            overrides,
            problems: Vec::new(),
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1);
        let start = self.line_starts[line - 1];
        let col = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count())
            + 1;
        (line, col)
    }

    pub fn override_label(&self, i: usize) -> String {
        match self.overrides.get(i) {
            Some(o) => o.label(),
            None => "--set".into(),
        }
    }

    pub fn make(
        &self,
        origin: &Origin,
        key_path: &str,
        message: String,
        hint: Option<String>,
        severity: Severity,
    ) -> ModelError {
        let (file, line, column, message) = match origin {
            Origin::File(span) => {
                let (l, c) = self.line_col(span.start);
                (self.file.to_string(), l, c, message)
            }
            Origin::Set(i, Some(span)) => {
                let (l, c) = self.line_col(span.start);
                (
                    self.file.to_string(),
                    l,
                    c,
                    format!("{message} (set by {})", self.override_label(*i)),
                )
            }
            Origin::Set(i, None) => (self.override_label(*i), 0, 0, message),
        };
        ModelError {
            file,
            line,
            column,
            key_path: key_path.to_string(),
            message,
            hint,
            severity,
        }
    }

    pub fn error(&mut self, origin: &Origin, key_path: &str, message: impl Into<String>) {
        let e = self.make(origin, key_path, message.into(), None, Severity::Error);
        self.problems.push(e);
    }

    pub fn error_hint(
        &mut self,
        origin: &Origin,
        key_path: &str,
        message: impl Into<String>,
        hint: Option<String>,
    ) {
        let e = self.make(origin, key_path, message.into(), hint, Severity::Error);
        self.problems.push(e);
    }

    pub fn warn(&mut self, origin: &Origin, key_path: &str, message: impl Into<String>) {
        let e = self.make(origin, key_path, message.into(), None, Severity::Warning);
        self.problems.push(e);
    }

    pub fn has_errors(&self) -> bool {
        self.problems.iter().any(|p| p.severity == Severity::Error)
    }

    /// Reports every key of `node` not in `allowed`. `what` names the place,
    /// e.g. "a queue station".
    pub fn check_keys(&mut self, node: &Node, path: &str, allowed: &[&str], what: &str) {
        let Some(entries) = node.table() else { return };
        for e in entries {
            if allowed.contains(&e.key.as_str()) {
                continue;
            }
            self.unknown_key(e, path, allowed, what);
        }
    }

    pub fn unknown_key(&mut self, e: &Entry, path: &str, allowed: &[&str], what: &str) {
        let full = child(path, &e.key);
        let hint = did_you_mean(&e.key, allowed).map(|s| format!("did you mean `{s}`?"));
        match &e.key_origin {
            Origin::Set(_, None) => {
                let expected: Vec<String> = allowed.iter().map(|k| child(path, k)).collect();
                let hint = did_you_mean(&full, &expected).map(|s| format!("did you mean {s}?"));
                self.error_hint(
                    &e.key_origin,
                    "",
                    format!(
                        "unknown key path {full}{}",
                        crate::tree::expected_list(&expected)
                    ),
                    hint,
                );
            }
            _ => {
                let list = if allowed.is_empty() {
                    format!("{what} takes no keys")
                } else {
                    format!("expected one of: {}", allowed.join(", "))
                };
                self.error_hint(
                    &e.key_origin,
                    &full,
                    format!("unknown key `{}` in {what}; {list}", e.key),
                    hint,
                );
            }
        }
    }

    /// The table at `node`, or an error saying what was found.
    pub fn table<'n>(&mut self, node: &'n Node, path: &str, what: &str) -> Option<&'n [Entry]> {
        match &node.v {
            V::Table(t) => Some(t),
            other => {
                self.error(
                    &node.origin,
                    path,
                    format!("expected {what} (a table), found {}", other.describe()),
                );
                None
            }
        }
    }

    /// A required key of a table; reports it missing at the table.
    pub fn required<'n>(
        &mut self,
        table: &'n Node,
        path: &str,
        key: &str,
        what: &str,
    ) -> Option<&'n Node> {
        let n = table.get(key);
        if n.is_none() {
            self.error(
                &table.origin,
                path,
                format!("missing key `{key}`; expected {what}"),
            );
        }
        n
    }

    pub fn f64(&mut self, node: &Node, path: &str) -> Option<f64> {
        match node.v {
            V::Int(i) => Some(i as f64),
            V::Float(f) if f.is_finite() => Some(f),
            V::Float(f) => {
                self.error(
                    &node.origin,
                    path,
                    format!("expected a finite number, found {}", num(f)),
                );
                None
            }
            _ => {
                self.error_hint(
                    &node.origin,
                    path,
                    format!("expected a number, found {}", node.v.describe()),
                    quoted_number_hint(node, path),
                );
                None
            }
        }
    }

    /// A finite number > 0; `what` is e.g. "rate" or "time in seconds".
    pub fn positive(&mut self, node: &Node, path: &str, what: &str) -> Option<f64> {
        let v = self.f64(node, path)?;
        if v > 0.0 {
            Some(v)
        } else {
            self.error(
                &node.origin,
                path,
                format!("expected a positive {what}, found {}", num(v)),
            );
            None
        }
    }

    /// A finite number >= 0.
    pub fn non_negative(&mut self, node: &Node, path: &str, what: &str) -> Option<f64> {
        let v = self.f64(node, path)?;
        if v >= 0.0 {
            Some(v)
        } else {
            self.error(
                &node.origin,
                path,
                format!("expected a {what} >= 0, found {}", num(v)),
            );
            None
        }
    }

    /// A whole number in `min..=max` (a float with no fraction is accepted).
    pub fn int(&mut self, node: &Node, path: &str, min: i64, max: i64, what: &str) -> Option<i64> {
        let v = match node.v {
            V::Int(i) => i,
            V::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 => f as i64,
            V::Float(f) if f.is_finite() && f.abs() >= 9.0e15 => {
                self.error(
                    &node.origin,
                    path,
                    format!("expected {what} between {min} and {max}, found {}", num(f)),
                );
                return None;
            }
            _ => {
                self.error_hint(
                    &node.origin,
                    path,
                    format!(
                        "expected {what} (a whole number), found {}",
                        node.v.describe()
                    ),
                    quoted_number_hint(node, path),
                );
                return None;
            }
        };
        if v < min || v > max {
            let range = if max == i64::MAX {
                format!(">= {min}")
            } else {
                format!("between {min} and {max}")
            };
            self.error(
                &node.origin,
                path,
                format!("expected {what} {range}, found {v}"),
            );
            return None;
        }
        Some(v)
    }

    pub fn u32(&mut self, node: &Node, path: &str, min: u32, what: &str) -> Option<u32> {
        self.int(node, path, i64::from(min), i64::from(u32::MAX), what)
            .map(|v| v as u32)
    }

    /// A count kept in a `u32` (servers, jobs, a batch size): a whole
    /// number that is not negative. Whether it may be 0 is a range rule of
    /// the kernel's validation, reported there.
    pub fn count(&mut self, node: &Node, path: &str, what: &str) -> Option<u32> {
        let too_big = |v: &str| format!("expected {what} of at most {}, found {v}", u32::MAX);
        let v = match node.v {
            V::Int(i) => i,
            V::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 => f as i64,
            V::Float(f) if f.is_finite() && f >= 9.0e15 => {
                self.error(&node.origin, path, too_big(&num(f)));
                return None;
            }
            _ => {
                return self
                    .int(node, path, 0, i64::from(u32::MAX), what)
                    .map(|v| v as u32);
            }
        };
        if v < 0 {
            self.error(
                &node.origin,
                path,
                format!("expected {what}, found {v}: a count cannot be negative"),
            );
            return None;
        }
        match u32::try_from(v) {
            Ok(v) => Some(v),
            Err(_) => {
                self.error(&node.origin, path, too_big(&v.to_string()));
                None
            }
        }
    }

    pub fn str<'n>(&mut self, node: &'n Node, path: &str, what: &str) -> Option<&'n str> {
        match &node.v {
            V::Str(s) => Some(s),
            other => {
                self.error(
                    &node.origin,
                    path,
                    format!("expected {what} (a string), found {}", other.describe()),
                );
                None
            }
        }
    }

    /// A string that must be one of `choices`.
    pub fn choice<'n>(&mut self, node: &'n Node, path: &str, choices: &[&str]) -> Option<&'n str> {
        let s = self.str(node, path, &format!("one of {}", choices.join(", ")))?;
        if choices.contains(&s) {
            Some(s)
        } else {
            let hint = did_you_mean(s, choices).map(|c| format!("did you mean \"{c}\"?"));
            self.error_hint(
                &node.origin,
                path,
                format!("expected one of {}, found \"{s}\"", choices.join(", ")),
                hint,
            );
            None
        }
    }
}

pub(crate) use crate::tree::child;

/// For a number written in quotes (`population = "20"`): the hint to write
/// it bare, since TOML reads a quoted number as text.
fn quoted_number_hint(node: &Node, path: &str) -> Option<String> {
    let V::Str(s) = &node.v else { return None };
    let t = s.trim();
    t.parse::<f64>().ok()?;
    let key = path.rsplit('.').next().unwrap_or(path);
    Some(format!(
        "remove the quotes: a number in quotes is text; write {key} = {t}"
    ))
}
