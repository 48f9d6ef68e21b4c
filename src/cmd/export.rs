//! `qsim run --export FORMAT=FILE`: the same run written in several formats
//! at once (`--export json=run.json --export csv=run.csv`), so a run need
//! not be repeated for each. The format names are `--format`'s.

use super::UsageError;
use clap::ValueEnum;
use std::path::PathBuf;

/// Output formats of `qsim run`, for `--format` and `--export`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned text for people.
    Table,
    /// One JSON object (schema in README.md).
    Json,
    /// Long-format CSV: scope,name,metric,mean,ci95,error.
    Csv,
}

/// One `--export FORMAT=FILE`.
#[derive(Clone, Debug, PartialEq)]
pub struct Export {
    /// The format, as `--format` names it.
    pub format: Format,
    /// Where to write it.
    pub path: PathBuf,
}

/// Parses `FORMAT=FILE` (for clap's `value_parser`).
pub fn parse(s: &str) -> Result<Export, String> {
    let names: Vec<String> = Format::value_variants()
        .iter()
        .filter_map(|f| f.to_possible_value().map(|v| v.get_name().to_string()))
        .collect();
    let Some((format, path)) = s.split_once('=') else {
        return Err(format!(
            "expected FORMAT=FILE, e.g. json=run.json (FORMAT: {})",
            names.join(", ")
        ));
    };
    let format = Format::from_str(format.trim(), true).map_err(|_| {
        format!(
            "unknown format {format:?}; expected one of {}",
            names.join(", ")
        )
    })?;
    if path.is_empty() {
        return Err("the file name after = is empty".into());
    }
    Ok(Export {
        format,
        path: PathBuf::from(path),
    })
}

/// A run's results in `format`, as `qsim run --format` prints them (the
/// checks that passed are part of the table and the JSON).
pub fn render(
    report: &qsim_report::Report,
    checks: &[String],
    format: Format,
) -> anyhow::Result<String> {
    Ok(match format {
        Format::Table => {
            let mut t = qsim_report::to_table(report);
            for c in checks {
                t.push_str(&format!("\ncheck: {c}\n"));
            }
            t
        }
        Format::Json => json_text(&json_value(report, checks))?,
        Format::Csv => qsim_report::to_csv(report),
    })
}

/// A run's JSON document: the report and the checks that passed.
pub fn json_value(report: &qsim_report::Report, checks: &[String]) -> serde_json::Value {
    let mut json = qsim_report::to_json(report);
    if let Some(obj) = json.as_object_mut() {
        obj.insert("checks".into(), serde_json::json!(checks));
    }
    json
}

/// A JSON document as `qsim` prints it: pretty, one final newline.
pub fn json_text(json: &serde_json::Value) -> anyhow::Result<String> {
    let mut s = serde_json::to_string_pretty(json)?;
    s.push('\n');
    Ok(s)
}

/// Refuses two exports (or an export and `--output`) to the same file.
pub fn check_distinct(exports: &[Export], output: Option<&PathBuf>) -> anyhow::Result<()> {
    for (i, e) in exports.iter().enumerate() {
        if output == Some(&e.path) || exports[..i].iter().any(|o| o.path == e.path) {
            return Err(UsageError(format!(
                "--export {}: the file is written twice by this command; give each format its own file",
                e.path.display()
            ))
            .into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_format_names_of_format() {
        assert_eq!(
            parse("json=a/run.json").unwrap(),
            Export {
                format: Format::Json,
                path: "a/run.json".into()
            }
        );
        assert_eq!(parse("csv=x.csv").unwrap().format, Format::Csv);
        assert_eq!(parse("table=x.txt").unwrap().format, Format::Table);
        assert!(parse("xml=x").unwrap_err().contains("table, json, csv"));
        assert!(parse("json").unwrap_err().contains("FORMAT=FILE"));
        assert!(parse("json=").is_err());
    }
}
