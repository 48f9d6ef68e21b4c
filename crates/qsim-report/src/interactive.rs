//! Interactive charts for the HTML report: the data of a chart as JSON
//! inside the page, and one inline script ([`SCRIPT`]) that draws it as SVG
//! with hover values (each with its interval, as the terminal prints it),
//! series toggled from the legend, and drag-to-zoom (double-click resets).
//!
//! The page stays self-contained: the script and the data are inline, and
//! the static SVG chart stays in the page for readers without scripts. The
//! point text is formatted by the caller, so the page shows the very text
//! the terminal shows (`2024 ± 114/s`), never a figure without its caveat.

use serde::Serialize;

/// One chart's data.
#[derive(Clone, Debug, PartialEq, Default, Serialize)]
pub struct Plot {
    /// Caption, e.g. `throughput`.
    pub title: String,
    /// X axis label, e.g. `workload.population`.
    pub x_label: String,
    /// Y axis label with its unit, e.g. `throughput (/s)`.
    pub y_label: String,
    /// The lines.
    pub series: Vec<PlotSeries>,
    /// Caveats to show under the chart (ties, bistable points...).
    pub notes: Vec<String>,
}

/// One line of a chart.
#[derive(Clone, Debug, PartialEq, Default, Serialize)]
pub struct PlotSeries {
    /// Legend text.
    pub name: String,
    /// Drawn dashed (e.g. a percentile beside the mean).
    pub dashed: bool,
    /// Points in x order.
    pub points: Vec<PlotPoint>,
}

/// One point: where it is drawn, its 95% interval (drawn as a band and an
/// error bar), and the text a hover shows.
#[derive(Clone, Debug, PartialEq, Default, Serialize)]
pub struct PlotPoint {
    /// Horizontal position.
    pub x: f64,
    /// Vertical position.
    pub y: f64,
    /// Lower end of the 95% interval, if known.
    pub lo: Option<f64>,
    /// Upper end of the 95% interval, if known.
    pub hi: Option<f64>,
    /// What the hover shows, e.g. `workload.population=100: 2024 ± 114/s`.
    pub text: String,
    /// Marked in red: a figure that is one of two answers (bistable).
    pub warn: bool,
}

impl PlotPoint {
    /// A point with the interval `y ± ci` (none when `ci` is not a positive
    /// finite number).
    pub fn with_ci(x: f64, y: f64, ci: f64, text: String) -> Self {
        let ok = ci.is_finite() && ci > 0.0;
        PlotPoint {
            x,
            y,
            lo: ok.then_some(y - ci),
            hi: ok.then_some(y + ci),
            text,
            warn: false,
        }
    }
}

/// The chart's data as JSON for a `<script type="application/json">`
/// element: `<` is escaped so no text can close the element.
pub fn to_json(plot: &Plot) -> String {
    // Serializing plain data to a String cannot fail; non-finite numbers
    // become null, which the script skips.
    let json = serde_json::to_string(plot).unwrap_or_else(|_| "null".into());
    json.replace('<', "\\u003c")
}

/// The script that draws every `script.qsim-plot` element of the page.
pub const SCRIPT: &str = include_str!("interactive.js");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_holds_the_text_and_interval_and_cannot_close_its_element() {
        let plot = Plot {
            title: "t</script>".into(),
            series: vec![PlotSeries {
                name: "s".into(),
                dashed: false,
                points: vec![
                    PlotPoint::with_ci(1.0, 10.0, 2.0, "10 ± 2/s".into()),
                    PlotPoint::with_ci(2.0, f64::NAN, f64::NAN, "no figure".into()),
                ],
            }],
            ..Plot::default()
        };
        let j = to_json(&plot);
        assert!(!j.contains("</script>"));
        assert!(j.contains("\"lo\":8.0,\"hi\":12.0"), "{j}");
        assert!(j.contains("10 ± 2/s"));
        assert!(j.contains("\"y\":null,\"lo\":null,\"hi\":null"), "{j}");
    }

    #[test]
    fn script_loads_nothing_and_has_its_hooks() {
        for external in [
            "src=",
            "href=",
            "url(",
            "@import",
            "fetch(",
            "XMLHttpRequest",
            "</svg>",
        ] {
            assert!(!SCRIPT.contains(external), "script refers to {external}");
        }
        assert!(SCRIPT.contains("qsim-plot"));
        assert!(SCRIPT.contains("#hover="));
    }
}
