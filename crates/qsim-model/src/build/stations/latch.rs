//! A `latch` station's own keys: `numa`, `spin`, `wake`.

use crate::build::{Names, Table};
use crate::ctx::Ctx;
use crate::format::Bound::{Exclusive, Inclusive, None as Open};
use crate::format::{KindDescriptor, ServiceKeys, Shape, Supports, TableShape, key};
use crate::tree::Node;
use qsim_kernel::names as metric_names;
use qsim_kernel::{LatchSpec, NumaSpec, PollDelay, SpinSpec, StationKind, Wake};

const TIME: Shape = Shape::Number(Inclusive(0.0), Open);

static NUMA: TableShape = TableShape {
    keys: &[
        key("nodes", Shape::Count(1), None, "NUMA nodes"),
        key("cores_per_node", Shape::Count(1), None, "cores per node"),
        key("local_handoff_s", TIME, None, "same-node hand-off, s"),
        key("remote_handoff_s", TIME, None, "cross-node hand-off, s"),
        key("migration_s", TIME, Some("0"), "cold-cache extra, s"),
    ],
    required: &[
        "nodes",
        "cores_per_node",
        "local_handoff_s",
        "remote_handoff_s",
    ],
};

static SPIN: TableShape = TableShape {
    keys: &[
        key("spin_wait_delay", TIME, None, "the delay setting d"),
        key(
            "poll_delay",
            Shape::Words(&["units", "uniform"]),
            Some("\"units\""),
            "a poll's delay: whole units below d, or continuous",
        ),
        key("pause_cycles", TIME, None, "cycles per PAUSE"),
        key(
            "pauses_per_unit",
            TIME,
            Some("50"),
            "PAUSEs per unit of delay",
        ),
        key(
            "clock_ghz",
            Shape::Number(Exclusive(0.0), Open),
            None,
            "clock rate",
        ),
        key(
            "spin_rounds",
            Shape::Count(0),
            Some("30"),
            "polls before sleeping",
        ),
        key("context_switch_s", TIME, None, "sleep and wake-up cost, s"),
        key("cpu", Shape::Text, None, "the ps queue the waiters spin on"),
    ],
    required: &[
        "spin_wait_delay",
        "pause_cycles",
        "clock_ghz",
        "context_switch_s",
    ],
};

pub(crate) static KIND: KindDescriptor = KindDescriptor {
    name: "latch",
    doc: "a lock held by one job at a time, with NUMA hand-off and spin-then-sleep waiting",
    service: ServiceKeys::Service,
    keys: &[
        key("numa", Shape::Table(&NUMA), None, "NUMA hand-off costs"),
        key("spin", Shape::Table(&SPIN), None, "spin-then-sleep waiting"),
        key(
            "wake",
            Shape::Words(&["one", "all"]),
            Some("\"one\""),
            "who a release wakes",
        ),
    ],
    supports: Supports {
        capacity: false,
        speed_curve: true,
        speedup: "hold times divided by f (a speed curve's rates multiplied); hand-off and spin costs unchanged",
        exact_theory: true,
        budget: "one event per visit",
        tails: true,
        overload: false,
    },
    metrics: &[
        metric_names::MEAN_SPINNING,
        metric_names::MEAN_SLEEPING,
        metric_names::OCCUPANCY,
        metric_names::POLLS_PER_S,
        metric_names::MEAN_POLL_DELAY_S,
    ],
};

fn read(ctx: &mut Ctx<'_>, names: &Names<'_>, t: Table<'_, '_>) -> Option<LatchSpec> {
    let numa = t.opt(ctx, "numa", None, |ctx, n, p| numa(ctx, n, p).map(Some));
    let spin = t.opt(ctx, "spin", None, |ctx, n, p| {
        spin(ctx, names, n, p).map(Some)
    });
    let wake = t.opt(ctx, "wake", Wake::One, |ctx, n, p| {
        ctx.choice(n, p, &["one", "all"]).map(|w| match w {
            "all" => Wake::All,
            _ => Wake::One,
        })
    });
    if let (Some(w), Some(None)) = (t.get("wake"), &spin) {
        // Only threads that spun and then slept are woken; without `spin`
        // waiters sleep in FIFO order and `wake` would change nothing.
        ctx.warn(
            &w.origin,
            &crate::ctx::child(t.path, "wake"),
            "wake has no effect on a latch without spin (waiters are handed the latch in FIFO order); add spin or remove wake",
        );
    }
    Some(LatchSpec {
        numa: numa?,
        spin: spin?,
        wake: wake?,
    })
}

fn numa(ctx: &mut Ctx<'_>, node: &Node, path: &str) -> Option<NumaSpec> {
    ctx.table(node, path, "the NUMA parameters")?;
    ctx.check_keys(node, path, &NUMA.names(), "numa");
    let t = Table { node, path };
    let nodes = t.req(
        ctx,
        "nodes",
        "the number of NUMA nodes (>= 1)",
        |ctx, n, p| ctx.count(n, p, "a number of nodes"),
    );
    let cores = t.req(
        ctx,
        "cores_per_node",
        "the cores per node (>= 1)",
        |ctx, n, p| ctx.count(n, p, "a number of cores"),
    );
    let time = "a time in seconds (>= 0)";
    let local = t.req(ctx, "local_handoff_s", time, |ctx, n, p| ctx.f64(n, p));
    let remote = t.req(ctx, "remote_handoff_s", time, |ctx, n, p| ctx.f64(n, p));
    let migration = t.opt(ctx, "migration_s", 0.0, |ctx, n, p| ctx.f64(n, p));
    Some(NumaSpec {
        nodes: nodes?,
        cores_per_node: cores?,
        local_handoff_s: local?,
        remote_handoff_s: remote?,
        migration_s: migration?,
    })
}

fn spin(ctx: &mut Ctx<'_>, names: &Names<'_>, node: &Node, path: &str) -> Option<SpinSpec> {
    ctx.table(node, path, "the spin-wait parameters")?;
    ctx.check_keys(node, path, &SPIN.names(), "spin");
    let t = Table { node, path };
    let number = |ctx: &mut Ctx<'_>, n: &Node, p: &str| ctx.f64(n, p);
    let delay = t.req(ctx, "spin_wait_delay", "a delay in units (>= 0)", number);
    let poll_delay = t.opt(ctx, "poll_delay", PollDelay::Units, |ctx, n, p| {
        ctx.choice(n, p, &["units", "uniform"]).map(|w| match w {
            "uniform" => PollDelay::Uniform,
            _ => PollDelay::Units,
        })
    });
    let cycles = t.req(ctx, "pause_cycles", "a number of cycles (>= 0)", number);
    let per_unit = t.opt(ctx, "pauses_per_unit", 50.0, number);
    let cs = t.req(ctx, "context_switch_s", "a time in seconds (>= 0)", number);
    let ghz = t.req(ctx, "clock_ghz", "the clock rate in GHz (> 0)", number);
    let rounds = t.opt(ctx, "spin_rounds", 30, |ctx, n, p| {
        ctx.count(n, p, "a number of polls")
    });
    let cpu = t.opt(ctx, "cpu", None, |ctx, n, p| {
        names.station(ctx, n, p, &[]).map(Some)
    });
    Some(SpinSpec {
        spin_wait_delay: delay?,
        poll_delay: poll_delay?,
        pause_cycles: cycles?,
        pauses_per_unit: per_unit?,
        clock_ghz: ghz?,
        spin_rounds: rounds?,
        context_switch_s: cs?,
        cpu: cpu?,
        poll_by_poll: false,
    })
}

/// Reads the kind for the registry.
pub(super) fn read_kind(
    ctx: &mut Ctx<'_>,
    names: &Names<'_>,
    t: Table<'_, '_>,
) -> Option<StationKind> {
    read(ctx, names, t).map(StationKind::Latch)
}
