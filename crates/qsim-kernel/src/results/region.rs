//! A region's figures (pools, throttles): one line per metric (see
//! [`metric_family!`]) gives the field of [`ReplicationRegion`] and of
//! [`RegionResults`] and the row of the metric table.

use super::Estimate;
use serde::Serialize;

/// Which of a region's metrics apply to it: the `when` flags below.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RegionFlags {
    /// It has a limit (a pool's size).
    pub(crate) limited: bool,
}

/// What one replication's value of a region figure is weighed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RegionWeight {
    /// Measured time: rates and time averages.
    Time,
    /// Not kept per segment (admissions are not counted per segment): an
    /// interval over replications only, none from one replication.
    Replications,
}

metric_family! {
    scope: Region,
    read: Region,
    table: REGION,
    applies: RegionFlags,
    weights: RegionWeight,
    /// One replication's figures for a region; a figure that does not
    /// apply to the region is 0.
    #[derive(Clone, Debug, PartialEq, Serialize, Default)]
    replication: ReplicationRegion {},
    /// Figures of one region (pool, throttle): those that apply to it.
    #[derive(Clone, Debug, PartialEq, Default)]
    summary: RegionResults {
        /// Region name.
        pub name: String,
    } {},
    metrics: {
        wait_time_s: Estimate, Seconds, "admission wait", true, [], Replications,
            "mean time waiting outside for admission";
        mean_waiting: Estimate, Jobs, "mean waiting", true, [], Time,
            "time-average number waiting for admission";
        mean_inside: Estimate, Jobs, "mean inside", false, [], Time,
            "time-average number inside the region";
        inside_time_s: Estimate, Seconds, "time inside", true, [], Replications,
            "mean time from admission to leaving the region (the time a pool place is held)";
        utilization: Option<Estimate> [when limited], Fraction, "utilization", true, [], Time,
            "mean inside over the limit: the fraction of the pool's places held (regions with a limit only)";
    }
}
