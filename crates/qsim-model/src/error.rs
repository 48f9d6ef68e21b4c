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
            write!(f, "{}: ", elide_long_words(&self.key_path))?;
        }
        write!(f, "{}", elide_long_words(&self.message))?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {}", elide_long_words(h))?;
        }
        Ok(())
    }
}

/// The longest word an error shows whole: a name or value longer than this
/// (a megabyte of unknown key, say) is shown by its start and end and its
/// length, so an error stays a few lines whatever the input.
const MAX_SHOWN_WORD_CHARS: usize = 120;

/// `text` with every run of non-blank characters longer than
/// [`MAX_SHOWN_WORD_CHARS`] cut to its first 60 and last 20 characters.
pub(crate) fn elide_long_words(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= MAX_SHOWN_WORD_CHARS
        || !text
            .split_whitespace()
            .any(|w| w.chars().count() > MAX_SHOWN_WORD_CHARS)
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        let blank = rest.len() - rest.trim_start().len();
        out.push_str(&rest[..blank]);
        rest = &rest[blank..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        let n = word.chars().count();
        if n > MAX_SHOWN_WORD_CHARS {
            let head: String = word.chars().take(60).collect();
            let tail: String = word.chars().skip(n - 20).collect();
            out.push_str(&format!("{head}…[{n} characters]…{tail}"));
        } else {
            out.push_str(word);
        }
        rest = &rest[end..];
    }
    std::borrow::Cow::Owned(out)
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
