//! `[metrics]`: derived metrics, `name = "expression"`.

use super::Names;
use crate::ctx::{Ctx, child};
use crate::tree::{Node, Origin};
use crate::{DerivedMetric, Expr, did_you_mean};

pub(super) fn metrics(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    root: &Node,
) -> Option<Vec<DerivedMetric>> {
    let Some(m) = root.get("metrics") else {
        return Some(Vec::new());
    };
    let entries = ctx.table(m, "metrics", "a table of name = \"expression\"")?;
    let stations = names.station_list();
    let classes: Vec<&str> = names.classes.iter().map(|c| c.name.as_str()).collect();
    // Which classes reach a station is known only once the network is
    // checked: every pair is a name here, and a pair without figures fails
    // when evaluated, saying so.
    let pairs: Vec<String> = if classes.len() > 1 {
        stations
            .iter()
            .flat_map(|s| {
                classes
                    .iter()
                    .map(move |c| qsim_kernel::station_class_item(s, c))
            })
            .collect()
    } else {
        Vec::new()
    };
    let known = crate::expr::variable_names(&stations, &classes, &pairs, true);
    let canonical = crate::expr::variable_names(&stations, &classes, &pairs, false);
    let known_ref: Vec<&str> = canonical.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    let mut ok = true;
    for e in entries {
        let p = child("metrics", &e.key);
        let Some(text) = ctx.str(
            &e.node,
            &p,
            "an expression such as \"0.45 * 60 * throughput_per_s\"",
        ) else {
            ok = false;
            continue;
        };
        match Expr::parse(text) {
            Ok(expr) => {
                for v in expr.variables() {
                    if !known.contains(&v) {
                        let hint =
                            did_you_mean(&v, &known_ref).map(|s| format!("did you mean {s}?"));
                        ctx.error_hint(
                            &e.node.origin,
                            &p,
                            format!(
                                "unknown variable {v}; expected {}",
                                crate::expr::variables_help()
                            ),
                            hint,
                        );
                        ok = false;
                    }
                }
                out.push(DerivedMetric {
                    name: e.key.clone(),
                    expr,
                });
            }
            Err(err) => {
                // Point at the character when the string is written plainly.
                let origin = match &e.node.origin {
                    Origin::File(span) => {
                        let raw = ctx.text.get(span.clone()).unwrap_or("");
                        if raw.starts_with('"') && !raw.contains('\\') && !raw.starts_with("\"\"\"")
                        {
                            let at = span.start + 1 + err.offset;
                            Origin::File(at..at)
                        } else {
                            e.node.origin.clone()
                        }
                    }
                    o => o.clone(),
                };
                ctx.error(&origin, &p, format!("{err}"));
                ok = false;
            }
        }
    }
    ok.then_some(out)
}
