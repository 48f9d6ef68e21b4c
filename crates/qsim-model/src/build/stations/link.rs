//! A `link` station's own keys (its round-trip time is the common `service`,
//! also spelled `rtt`).

use crate::build::Table;
use crate::ctx::Ctx;
use qsim_kernel::LinkSpec;

pub(super) const KEYS: &[&str] = &["pipeline", "max_batch"];

pub(super) fn read(ctx: &mut Ctx<'_>, t: Table<'_, '_>) -> Option<LinkSpec> {
    let pipeline = t.opt(ctx, "pipeline", 1, |ctx, n, p| {
        ctx.count(n, p, "a pipeline depth")
    });
    let max_batch = t.opt(ctx, "max_batch", 1, |ctx, n, p| {
        ctx.count(n, p, "a batch size")
    });
    Some(LinkSpec {
        pipeline: pipeline?,
        max_batch: max_batch?,
    })
}
