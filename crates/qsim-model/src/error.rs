//! Located errors.
use std::fmt;

/// How serious a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The model cannot be used.
    Error,
    /// The model works but probably not as intended.
    Warning,
}

/// One problem in a model, with its location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelError {
    /// File name as given, or `--set PATH=VALUE` for an override.
    pub file: String,
    /// 1-based line; 0 when unknown.
    pub line: usize,
    /// 1-based column in characters; 0 when unknown.
    pub column: usize,
    /// Dotted key path, e.g. `stations.latch1.speed.table[2].rate`; may be empty.
    pub key_path: String,
    /// What was found and what was expected.
    pub message: String,
    /// A suggestion, if any.
    pub hint: Option<String>,
    /// Error or warning.
    pub severity: Severity,
}

impl ModelError {
    pub(crate) fn at_override(file: &str, message: String) -> ModelError {
        ModelError {
            file: file.to_string(),
            line: 0,
            column: 0,
            key_path: String::new(),
            message,
            hint: None,
            severity: Severity::Error,
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        write!(f, ": ")?;
        if self.severity == Severity::Warning {
            write!(f, "warning: ")?;
        }
        if !self.key_path.is_empty() {
            write!(f, "{}: ", self.key_path)?;
        }
        write!(f, "{}", self.message)?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ModelError {}

/// Every problem found in a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelErrors {
    /// The problems, in file order.
    pub errors: Vec<ModelError>,
}

impl ModelErrors {
    pub(crate) fn one(e: ModelError) -> ModelErrors {
        ModelErrors { errors: vec![e] }
    }
}

impl fmt::Display for ModelErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ModelErrors {}
