//! The CSV form of one run: one row per metric, long format. Scopes and
//! metric names come from the one table (`qsim_kernel::METRICS`).

use crate::Report;
use qsim_kernel::{
    Estimate, MetricScope, RunResults, metrics, station_class_index, station_class_item,
};

/// The `scope` of derived-metric rows (their `metric` is [`DERIVED_METRIC`]).
pub const DERIVED_SCOPE: &str = "derived";
/// The `metric` of derived-metric rows.
pub const DERIVED_METRIC: &str = "value";
/// The header of the run CSV.
pub const CSV_HEADER: &str = "scope,name,metric,mean,ci95,error";

/// A figure as a CSV field: empty when it is not a finite number.
pub(crate) fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        String::new()
    }
}

/// The one CSV writer of every CSV qsim writes (run, phases, trace, solve,
/// what-if, rare; the sweep's points.csv uses the same crate and settings):
/// the `csv` crate's quoting, where a field is quoted only when it holds a
/// comma, a quote or a line break (quotes doubled inside), and lines that
/// end in `\n`. Lines it does not quote (a fixed header, `# ` comments
/// after the table) are written as they are.
pub struct CsvRows {
    w: csv::Writer<Vec<u8>>,
}

impl Default for CsvRows {
    fn default() -> Self {
        CsvRows::new()
    }
}

impl CsvRows {
    /// An empty CSV text.
    pub fn new() -> CsvRows {
        CsvRows::after(Vec::new())
    }

    /// Rows written after `text`.
    fn after(text: Vec<u8>) -> CsvRows {
        CsvRows {
            w: csv::WriterBuilder::new()
                .terminator(csv::Terminator::Any(b'\n'))
                .flexible(true)
                .from_writer(text),
        }
    }

    /// One row of fields, each quoted where it needs to be.
    pub fn row<I, S>(&mut self, fields: I)
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let fields: Vec<S> = fields.into_iter().collect();
        self.w
            .write_record(fields.iter().map(|f| f.as_ref().as_bytes()))
            .expect("writing to memory cannot fail");
    }

    /// One line as it is (a header of plain names, a `# ` comment); `line`
    /// has no line break of its own.
    pub fn line(&mut self, line: &str) {
        let mut text = std::mem::take(self).bytes();
        text.extend_from_slice(line.as_bytes());
        text.push(b'\n');
        *self = CsvRows::after(text);
    }

    fn bytes(self) -> Vec<u8> {
        self.w
            .into_inner()
            .unwrap_or_else(|_| unreachable!("writing to memory cannot fail"))
    }

    /// The text written.
    pub fn finish(self) -> String {
        String::from_utf8(self.bytes()).expect("every field is UTF-8")
    }
}

/// One row of the run CSV's columns, `scope,name,metric,mean,ci95,error`.
fn row(out: &mut CsvRows, scope: &str, name: &str, metric: &str, e: &Estimate) {
    out.row([
        scope,
        name,
        metric,
        num(e.mean).as_str(),
        num(e.ci95).as_str(),
        "",
    ]);
}

/// A CSV field as [`CsvRows`] writes it: quoted when it holds a comma, a
/// quote or a line break.
pub fn quote(s: &str) -> String {
    if s.is_empty() {
        return String::new();
    }
    let mut w = CsvRows::new();
    w.row([s]);
    let mut out = w.finish();
    out.pop();
    out
}

/// The names of the items of `scope` (`system` for the system;
/// `cpu.classes.web` for a class at a station) with their indices for
/// [`qsim_kernel::Metric::summary`].
pub(crate) fn items(r: &RunResults, scope: MetricScope) -> Vec<(String, usize)> {
    let named = |names: Vec<&str>| -> Vec<(String, usize)> {
        names
            .into_iter()
            .enumerate()
            .map(|(i, n)| (n.to_string(), i))
            .collect()
    };
    match scope {
        MetricScope::System => named(vec![MetricScope::System.key()]),
        MetricScope::Station => named(r.stations.iter().map(|s| s.name.as_str()).collect()),
        MetricScope::StationClass => r
            .stations
            .iter()
            .enumerate()
            .flat_map(|(i, s)| {
                s.classes.iter().map(move |c| {
                    (
                        station_class_item(&s.name, &c.name),
                        station_class_index(i, c.class, r.classes.len()),
                    )
                })
            })
            .collect(),
        MetricScope::Class => named(r.classes.iter().map(|c| c.name.as_str()).collect()),
        MetricScope::Region => named(r.regions.iter().map(|g| g.name.as_str()).collect()),
    }
}

/// The `scope` column of a scope's rows: a class at a station is written
/// under `stations`, its name `cpu.classes.web`, so that scope, name and
/// metric joined by dots are its key path.
fn scope_column(scope: MetricScope) -> &'static str {
    match scope {
        MetricScope::StationClass => MetricScope::Station.key(),
        s => s.key(),
    }
}

/// Renders a report as CSV with the header `scope,name,metric,mean,ci95,error`:
/// every metric that applies (the system's rows with an empty name), then the derived metrics (scope `derived`,
/// metric `value`); a derived metric that could not be evaluated has an empty
/// mean and ci95 and says why in `error`. A figure that is not a finite
/// number is left empty.
pub fn to_csv(report: &Report) -> String {
    let r = report.results;
    let mut out = CsvRows::new();
    out.line(CSV_HEADER);
    for scope in MetricScope::ALL {
        for (name, i) in items(r, scope) {
            for m in metrics(scope) {
                // The system is one item: its name is left empty, as in
                // the CSV of `qsim solve` and of a trace.
                let name = if scope == MetricScope::System {
                    ""
                } else {
                    name.as_str()
                };
                if let Some(e) = m.summary(r, i) {
                    row(&mut out, scope_column(scope), name, m.name, &e);
                }
            }
        }
    }
    for d in &report.derived {
        match &d.value {
            Ok(e) => row(&mut out, DERIVED_SCOPE, &d.name, DERIVED_METRIC, e),
            Err(error) => out.row([DERIVED_SCOPE, &d.name, DERIVED_METRIC, "", "", error]),
        }
    }
    // Comment lines, so the figures above stay one table for CSV readers.
    for w in &report.warnings {
        out.line(&format!("# warning: {w}"));
    }
    out.finish()
}
