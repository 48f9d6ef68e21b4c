//! `speed = { table = [...] }` or `speed = { usl = {...} }`.

use super::{Table, non_empty_array};
use crate::ctx::{Ctx, child};
use crate::tree::Node;
use qsim_kernel::Speed;

pub(super) fn speed(ctx: &mut Ctx<'_>, node: &Node, path: &str) -> Option<Speed> {
    let form = "{ table = [ { n = 100, rate = 2000 }, ... ] } or { usl = { sigma = 0.02, kappa = 0.0001, lambda = 90 } }";
    ctx.table(node, path, form)?;
    ctx.check_keys(node, path, &crate::format::SPEED.names(), "a speed");
    match (node.get("table"), node.get("usl")) {
        (Some(t), None) => {
            let p = child(path, "table");
            let items = non_empty_array(
                ctx,
                t,
                &p,
                "{ n, rate } points",
                "{ n, rate } point, found none",
            )?;
            let mut points = Vec::new();
            let mut ok = true;
            for (i, it) in items.iter().enumerate() {
                let ip = format!("{p}[{i}]");
                if ctx
                    .table(it, &ip, "a point { n = 100, rate = 2000 }")
                    .is_none()
                {
                    ok = false;
                    continue;
                }
                ctx.check_keys(
                    it,
                    &ip,
                    &crate::format::SPEED_POINT.names(),
                    "a speed point",
                );
                let t = Table {
                    node: it,
                    path: &ip,
                };
                let n = t.req(
                    ctx,
                    "n",
                    "the number of jobs present (>= 1)",
                    |ctx, n, p| ctx.f64(n, p),
                );
                let rate = t.req(
                    ctx,
                    "rate",
                    "the completion rate per second (> 0)",
                    |ctx, n, p| ctx.f64(n, p),
                );
                match (n, rate) {
                    (Some(n), Some(r)) => points.push((n, r)),
                    _ => ok = false,
                }
            }
            ok.then_some(Speed::Table(points))
        }
        (None, Some(u)) => {
            let p = child(path, "usl");
            ctx.table(u, &p, "the USL coefficients { sigma, kappa, lambda }")?;
            ctx.check_keys(u, &p, &crate::format::USL.names(), "a usl speed");
            let t = Table { node: u, path: &p };
            let number = |ctx: &mut Ctx<'_>, n: &Node, p: &str| ctx.f64(n, p);
            let sigma = t.req(ctx, "sigma", "the contention coefficient (>= 0)", number);
            let kappa = t.req(ctx, "kappa", "the coherency coefficient (>= 0)", number);
            let lambda = t.req(
                ctx,
                "lambda",
                "the rate with one job present, per second",
                number,
            );
            Some(Speed::Usl {
                sigma: sigma?,
                kappa: kappa?,
                lambda: lambda?,
            })
        }
        _ => {
            ctx.error(
                &node.origin,
                path,
                format!("expected exactly one of table or usl: {form}"),
            );
            None
        }
    }
}
