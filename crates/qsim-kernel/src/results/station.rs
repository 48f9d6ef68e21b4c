//! A station's figures: one line per metric (see [`metric_family!`]) gives
//! the field of [`ReplicationStation`] and of [`StationResults`] and the
//! row of the metric table.

use super::{
    Estimate, KindTag, OverloadResults, ReplicationOverload, ReplicationStationClass,
    ReplicationTails, StationClassResults, TailResults,
};
use serde::Serialize;

/// Which of a station's metrics apply to it (see [`StationResults`]):
/// the `when` flags of the family below.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StationFlags {
    /// It has servers that can limit throughput (not a delay, fork or join).
    pub(crate) servers: bool,
    /// It serves jobs in groups (batch and link stations).
    pub(crate) grouped: bool,
    /// A latch with `spin`.
    pub(crate) spin: bool,
    /// A latch with `numa` or `spin`.
    pub(crate) mechanism: bool,
    /// It has a finite capacity.
    pub(crate) finite: bool,
    /// It blocks its senders when full.
    pub(crate) blocks: bool,
    /// It sends to a blocking station (not a fork).
    pub(crate) sends: bool,
    /// A queue that sends to a blocking station.
    pub(crate) queue_sends: bool,
}

/// What one replication's value of a station figure is weighed by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StationWeight {
    /// Measured time: rates and time averages.
    Time,
    /// Departures: means over the visits that ended.
    Departures,
    /// Arrivals offered: departures and arrivals lost.
    Offered,
    /// Batches started: means over batches.
    Batches,
    /// Polls of a spin latch: means over polls.
    Polls,
}

metric_family! {
    scope: Station,
    read: Station,
    table: STATION,
    applies: StationFlags,
    weights: StationWeight,
    /// One replication's figures for a station; a figure that does not
    /// apply to the station is 0.
    #[derive(Clone, Debug, PartialEq, Serialize, Default)]
    replication: ReplicationStation {
        /// Distributions at the station, with `station_tails`.
        pub tails: Option<ReplicationTails>,
        /// Overload figures (patience, balking, shedding, wasted work).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub overload: Option<ReplicationOverload>,
        /// Per class, in spec order, at the stations of a multi-class model
        /// that keep them (plain queue and delay, PS and speed curves); empty
        /// otherwise.
        pub classes: Vec<ReplicationStationClass>,
    },
    /// Figures of one station: those that apply to it (`None`, or
    /// [`Estimate::UNKNOWN`] for `utilization`, where not).
    #[derive(Clone, Debug, PartialEq, Default)]
    summary: StationResults {
        /// Station name.
        pub name: String,
        /// Station kind.
        pub kind: KindTag,
    } {
        /// Distributions at the station (with `station_tails`).
        pub tails: Option<TailResults>,
        /// Overload figures (patience, balking, shedding, wasted work).
        pub overload: Option<Box<OverloadResults>>,
        /// Per class, for the classes that can reach the station, in spec
        /// order: multi-class models, at plain queue and delay, PS and
        /// speed-curve stations; empty otherwise.
        pub classes: Vec<StationClassResults>,
    },
    metrics: {
        throughput_per_s: Estimate, PerSecond, "throughput /s", true, ["throughput"], Time,
            "departures per second";
        utilization: Estimate [when servers], Fraction, "utilization", true, [], Time,
            "busy fraction: mean busy servers / servers (absent for a delay, fork or join, which have no servers); for a latch, the fraction of time it is held";
        mean_jobs: Estimate, Jobs, "mean jobs", true, [], Time,
            "time-average number present, queued and in service";
        response_time_s: Estimate, Seconds, "response", true, ["response_time"], Departures,
            "mean time from arrival at the station to departure";
        wait_time_s: Estimate, Seconds, "wait", false, ["wait_time"], Departures,
            "mean time from arrival at the station to the start of service";
        mean_batch_size: Option<Estimate> [when grouped], Jobs, "batch", false, [], Batches,
            "mean jobs per batch (batch and link stations)";
        batches_per_s: Option<Estimate> [when grouped], PerSecond, "batches /s", false, [], Time,
            "batches started per second (batch and link stations)";
        mean_spinning: Option<Estimate> [when spin], Jobs, "spinning", false, [], Time,
            "time-average threads spinning on the latch (latches with `spin`)";
        mean_sleeping: Option<Estimate> [when spin], Jobs, "sleeping", false, [], Time,
            "time-average threads asleep or being switched back in (latches with `spin`)";
        occupancy: Option<Estimate> [when mechanism], Fraction, "occupancy", false, [], Time,
            "fraction of time anyone holds, waits for or is being handed the latch (latches with `numa` or `spin`)";
        polls_per_s: Option<Estimate> [when spin], PerSecond, "polls /s", false, [], Time,
            "polls of the latch by spinning waiters per second (latches with `spin`)";
        mean_poll_delay_s: Option<Estimate> [when spin], Seconds, "poll delay", false, [], Polls,
            "mean delay before a spinner's poll (one `ut_delay`), seconds of CPU (latches with `spin`; 0 when no waiter polled)";
        dropped_per_s: Option<Estimate> [when finite], PerSecond, "dropped /s", false, [], Time,
            "arrivals lost per second because the station was full (stations with a capacity)";
        loss_probability: Option<Estimate> [when finite], Fraction, "loss", false, [], Offered,
            "fraction of arrivals lost because the station was full (stations with a capacity)";
        blocking_probability: Option<Estimate> [when blocks], Fraction, "blocking", false, [], Offered,
            "fraction of arrivals that found the station full and waited for room, blocking their sender (stations with `when_full = \"block\"`)";
        blocked_fraction: Option<Estimate> [when queue_sends], Fraction, "blocked", false, [], Time,
            "fraction of the server time blocked: held by a job done with its service that waits for room at a full blocking station (queues that send to one; `utilization` leaves it out)";
        blocking_time_s: Option<Estimate> [when sends], Seconds, "blocked time", false, [], Departures,
            "mean time a job done with its service here waits for room at a full blocking station, per job that waited (queue and delay stations that send to a blocking station; 0 when none waited)";
    }
}
