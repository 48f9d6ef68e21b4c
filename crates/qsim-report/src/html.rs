//! A sweep as one self-contained HTML page.
//!
//! The input is plain data ([`SweepPage`]): the knee summary as ready-made
//! rows, the charts as SVG text (see [`crate::charts::render_svg`]), the
//! model text and the sweep settings. [`to_html`] lays them out. The page
//! loads nothing (no scripts, style sheets, fonts or images from elsewhere),
//! so it can be mailed, archived or opened offline and shows the same thing.
//! A chart with [`PageChart::plot`] data is also drawn interactively by the
//! page's one inline script ([`crate::interactive`]); the static SVG stays
//! in the page for readers without scripts.

use std::fmt::Write;

/// Everything the page shows.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SweepPage {
    /// Heading, e.g. `latch_numa.toml`.
    pub title: String,
    /// The sweep directory the page describes, as given.
    pub source: String,
    /// Problems a reader must see before trusting a figure: failed points,
    /// charts that could not be drawn, a model file changed since the sweep.
    pub warnings: Vec<String>,
    /// The knee summary, one row per figure, in reading order.
    pub summary: Vec<SummaryRow>,
    /// The charts, in display order.
    pub charts: Vec<PageChart>,
    /// Sweep settings as (name, value): swept paths, seed, replications...
    pub settings: Vec<(String, String)>,
    /// Path of the model file, as the sweep recorded it.
    pub model_path: String,
    /// The model file's text; `None` when it could not be read (the page
    /// then says so instead of showing it).
    pub model_text: Option<String>,
    /// What wrote the page, e.g. `qsim 0.1.0`.
    pub generator: String,
}

/// One figure of the knee summary.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SummaryRow {
    /// What it is: `peak`, `knee`, `saturation`, `recommended`, `bottleneck`.
    pub name: String,
    /// The figure with its unit, e.g. `1995.2/s`.
    pub value: String,
    /// The sweep point where it occurs, e.g. `workload.population=100`.
    pub point: String,
    /// How it is defined, e.g. `max power X/R`.
    pub note: String,
}

/// A chart to embed.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct PageChart {
    /// Caption, e.g. `throughput`.
    pub title: String,
    /// The chart as one `<svg>` element.
    pub svg: String,
    /// The chart's data, for the interactive version (hover values with
    /// intervals, series toggling, zoom).
    pub plot: Option<crate::interactive::Plot>,
}

/// Escapes text for HTML element content and attribute values.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The `<svg>` element of an SVG document: an XML prolog or doctype before
/// it is not valid inside HTML.
fn svg_element(svg: &str) -> &str {
    svg.find("<svg").map_or(svg, |i| &svg[i..])
}

const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1150px;padding:0 1em;color:#222;background:#fff}
h1{font-size:1.6em;margin-bottom:.2em}
h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:.2em}
.source{color:#666;margin-top:0}
.warnings{background:#fff4e5;border:1px solid #f0a030;border-radius:4px;padding:.6em 1em}
.warnings li{margin:.2em 0}
table{border-collapse:collapse;margin:.5em 0}
th,td{text-align:left;padding:.3em .9em .3em 0;vertical-align:top}
th{color:#555;font-weight:600}
td.value{font-variant-numeric:tabular-nums;font-weight:600}
figure{margin:1em 0}
figure svg{max-width:100%;height:auto;border:1px solid #eee}
figcaption{color:#555}
pre{background:#f6f6f6;border:1px solid #e4e4e4;border-radius:4px;padding:.8em;overflow-x:auto;font-size:.9em}
footer{color:#888;font-size:.85em;margin-top:2em}
.qsim-chart{position:relative;max-width:900px}
.qsim-chart svg{border:1px solid #eee;cursor:crosshair}
.qsim-legend button{margin:0 .4em .3em 0;border:2px solid #999;border-radius:3px;background:#fff;cursor:pointer;font:inherit;font-size:.85em}
.qsim-tip{position:absolute;pointer-events:none;background:#222;color:#fff;padding:.2em .5em;border-radius:3px;font-size:.85em;white-space:nowrap;font-variant-numeric:tabular-nums}
.qsim-notes{color:#8a4b00;font-size:.9em}
";

/// Renders the page.
pub fn to_html(page: &SweepPage) -> String {
    let mut h = String::new();
    let title = escape(&page.title);
    // Writing to a String cannot fail.
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>qsim sweep: {title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <h1>qsim sweep: {title}</h1>\n<p class=\"source\">{}</p>\n",
        escape(&page.source)
    );
    if !page.warnings.is_empty() {
        h.push_str("<div class=\"warnings\" id=\"warnings\"><strong>Warnings</strong>\n<ul>\n");
        for w in &page.warnings {
            let _ = writeln!(h, "<li>{}</li>", escape(w));
        }
        h.push_str("</ul></div>\n");
    }

    h.push_str("<h2 id=\"summary\">Knee summary</h2>\n");
    if page.summary.is_empty() {
        h.push_str("<p>No figures: no point of the sweep produced results.</p>\n");
    } else {
        h.push_str("<table>\n<tr><th>figure</th><th>value</th><th>at</th><th></th></tr>\n");
        for r in &page.summary {
            let _ = writeln!(
                h,
                "<tr><th>{}</th><td class=\"value\">{}</td><td>{}</td><td>{}</td></tr>",
                escape(&r.name),
                escape(&r.value),
                escape(&r.point),
                escape(&r.note)
            );
        }
        h.push_str("</table>\n");
    }

    h.push_str("<h2 id=\"charts\">Charts</h2>\n");
    if page.charts.is_empty() {
        h.push_str("<p>No charts.</p>\n");
    }
    for c in &page.charts {
        let data = c.plot.as_ref().map_or_else(String::new, |p| {
            format!(
                "<script type=\"application/json\" class=\"qsim-plot\">{}</script>\n",
                crate::interactive::to_json(p)
            )
        });
        let _ = write!(
            h,
            "<figure>\n{}\n{data}<figcaption>{}</figcaption>\n</figure>\n",
            svg_element(&c.svg),
            escape(&c.title)
        );
    }

    h.push_str("<h2 id=\"settings\">Sweep settings</h2>\n<table>\n");
    for (k, v) in &page.settings {
        let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
    }
    h.push_str("</table>\n");

    let _ = writeln!(
        h,
        "<h2 id=\"model\">Model <code>{}</code></h2>",
        escape(&page.model_path)
    );
    match &page.model_text {
        Some(text) => {
            let _ = writeln!(h, "<pre>{}</pre>", escape(text));
        }
        None => h.push_str("<p>The model file could not be read; its text is not shown.</p>\n"),
    }

    let interactive = page.charts.iter().any(|c| c.plot.is_some());
    if interactive {
        let _ = writeln!(h, "<script>\n{}</script>", crate::interactive::SCRIPT);
    }
    let _ = write!(
        h,
        "<footer>Written by {}. Self-contained: {}no external resources.{}</footer>\n\
         </body>\n</html>\n",
        escape(&page.generator),
        if interactive {
            "one inline script, "
        } else {
            "no scripts, "
        },
        if interactive {
            " Charts: hover a point for its value and 95% interval, click a legend entry to hide or show its series, drag across a chart to zoom, double-click to reset."
        } else {
            ""
        }
    );
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> SweepPage {
        SweepPage {
            title: "m<1>.toml".into(),
            source: "sweep-out/m1".into(),
            warnings: vec!["2 points failed".into()],
            summary: vec![SummaryRow {
                name: "knee".into(),
                value: "0.6/s, R = 2.484 s".into(),
                point: "workload.rate_per_s=0.6".into(),
                note: "max power X/R".into(),
            }],
            charts: vec![PageChart {
                title: "throughput".into(),
                svg:
                    "<?xml version=\"1.0\"?>\n<svg width=\"10\" height=\"10\"><text>x</text></svg>"
                        .into(),
                plot: None,
            }],
            settings: vec![("seed".into(), "1".into())],
            model_path: "m1.toml".into(),
            model_text: Some("[workload]\nname = \"a & <b>\"\n".into()),
            generator: "qsim test".into(),
        }
    }

    #[test]
    fn page_holds_every_part_escaped_and_loads_nothing() {
        let h = to_html(&page());
        assert!(h.starts_with("<!DOCTYPE html>"));
        assert!(h.contains("<h1>qsim sweep: m&lt;1&gt;.toml</h1>"));
        assert!(h.contains("<li>2 points failed</li>"));
        assert!(h.contains("<td class=\"value\">0.6/s, R = 2.484 s</td>"));
        // The chart is inlined as an element, its XML prolog dropped.
        assert!(h.contains("<figure>\n<svg width=\"10\" height=\"10\"><text>x</text></svg>"));
        assert!(!h.contains("<?xml"));
        assert!(h.contains("name = &quot;a &amp; &lt;b&gt;&quot;"));
        assert!(h.contains("<tr><th>seed</th><td>1</td></tr>"));
        for external in ["<script", "<link", "src=", "href=", "url(", "@import"] {
            assert!(!h.contains(external), "page refers to {external}");
        }
    }

    #[test]
    fn interactive_chart_data_and_one_inline_script() {
        use crate::interactive::{Plot, PlotPoint, PlotSeries};
        let mut p = page();
        p.charts[0].plot = Some(Plot {
            title: "throughput".into(),
            series: vec![PlotSeries {
                name: "a".into(),
                dashed: false,
                points: vec![PlotPoint::with_ci(
                    1.0,
                    2024.1,
                    114.0,
                    "2024 ± 114/s".into(),
                )],
            }],
            ..Plot::default()
        });
        let h = to_html(&p);
        assert!(h.contains("<script type=\"application/json\" class=\"qsim-plot\">"));
        assert!(h.contains("2024 ± 114/s"));
        assert_eq!(h.matches("<script>").count(), 1);
        for external in ["<link", "src=", "href=", "url(", "@import"] {
            assert!(!h.contains(external), "page refers to {external}");
        }
        // The static chart stays, for readers without scripts.
        assert_eq!(h.matches("</svg>").count(), 1);
    }

    #[test]
    fn unreadable_model_and_no_results_are_said() {
        let mut p = page();
        p.model_text = None;
        p.summary.clear();
        p.warnings.clear();
        let h = to_html(&p);
        assert!(h.contains("could not be read"));
        assert!(h.contains("No figures"));
        assert!(!h.contains("class=\"warnings\""));
    }
}
