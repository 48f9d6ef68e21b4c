//! The metric table's rows for regions (pools, throttles).

use super::names::*;
use super::{Estimate, Metric, MetricScope, Read, RegionResults, ReplicationRegion, Unit, row};

const fn region(
    name: &'static str,
    unit: Unit,
    label: &'static str,
    doc: &'static str,
    sweep_column: bool,
    summary: fn(&RegionResults) -> Option<Estimate>,
    replication: fn(&ReplicationRegion) -> f64,
) -> Metric {
    Metric {
        sweep_column,
        ..row(
            MetricScope::Region,
            name,
            unit,
            label,
            doc,
            Read::Region {
                summary,
                replication,
            },
        )
    }
}

pub(super) const REGION: [Metric; 5] = [
    region(
        WAIT_TIME_S,
        Unit::Seconds,
        "admission wait",
        "mean time waiting outside for admission",
        true,
        |g| Some(g.wait_time_s),
        |g| g.wait_time_s,
    ),
    region(
        MEAN_WAITING,
        Unit::Jobs,
        "mean waiting",
        "time-average number waiting for admission",
        true,
        |g| Some(g.mean_waiting),
        |g| g.mean_waiting,
    ),
    region(
        MEAN_INSIDE,
        Unit::Jobs,
        "mean inside",
        "time-average number inside the region",
        false,
        |g| Some(g.mean_inside),
        |g| g.mean_inside,
    ),
    region(
        INSIDE_TIME_S,
        Unit::Seconds,
        "time inside",
        "mean time from admission to leaving the region (the time a pool place is held)",
        true,
        |g| Some(g.inside_time_s),
        |g| g.inside_time_s,
    ),
    region(
        UTILIZATION,
        Unit::Fraction,
        "utilization",
        "mean inside over the limit: the fraction of the pool's places held (regions with a limit only)",
        true,
        |g| g.utilization,
        |g| g.utilization,
    ),
];
