//! A `batch` (group commit) station's own keys.

use crate::build::Table;
use crate::ctx::Ctx;
use qsim_kernel::BatchSpec;

pub(super) const KEYS: &[&str] = &["max_batch", "max_wait_s", "per_job_s"];

pub(super) fn read(ctx: &mut Ctx<'_>, t: Table<'_, '_>) -> Option<BatchSpec> {
    let max_batch = t.opt(ctx, "max_batch", 1, |ctx, n, p| {
        ctx.count(n, p, "a batch size")
    });
    let max_wait_s = t.opt(ctx, "max_wait_s", None, |ctx, n, p| ctx.f64(n, p).map(Some));
    let per_job_s = t.opt(ctx, "per_job_s", 0.0, |ctx, n, p| ctx.f64(n, p));
    Some(BatchSpec {
        max_batch: max_batch?,
        max_wait_s: max_wait_s?,
        per_job_s: per_job_s?,
    })
}
