//! A `queue` station's own keys.

use crate::build::Table;
use crate::ctx::Ctx;
use qsim_kernel::{Discipline, StationKind};

pub(super) const KEYS: &[&str] = &["servers", "discipline"];
const DISCIPLINES: &[&str] = &["fcfs", "ps", "lcfs", "priority"];

pub(super) fn read(ctx: &mut Ctx<'_>, t: Table<'_, '_>) -> Option<StationKind> {
    let servers = t.opt(ctx, "servers", 1, |ctx, n, p| {
        ctx.count(n, p, "a number of servers")
    });
    let discipline = t.opt(ctx, "discipline", Discipline::Fcfs, |ctx, n, p| {
        ctx.choice(n, p, DISCIPLINES).map(|d| match d {
            "ps" => Discipline::Ps,
            "lcfs" => Discipline::Lcfs,
            "priority" => Discipline::Priority,
            _ => Discipline::Fcfs,
        })
    });
    Some(StationKind::Queue {
        servers: servers?,
        discipline: discipline?,
    })
}
