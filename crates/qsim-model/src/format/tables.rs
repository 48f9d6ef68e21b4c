//! The tables of a model other than a kind's own keys: the top level,
//! `[simulation]`, `[workload]` and `[classes.NAME]`, a class's `client`,
//! a schedule step, `[regions.NAME]`, `[metrics]`, distributions, speed
//! curves and the keys every station has.

use super::Bound::{Exclusive, Inclusive, None as Open};
use super::{Key, Shape, TableShape, key};

const NON_NEGATIVE: Shape = Shape::Number(Inclusive(0.0), Open);
const POSITIVE: Shape = Shape::Number(Exclusive(0.0), Open);
const PROBABILITY: Shape = Shape::Number(Inclusive(0.0), Inclusive(1.0));
const ANY_NUMBER: Shape = Shape::Number(Open, Open);
const DIST: Shape = Shape::Def("distribution");

/// The top level of a model file.
pub static TOP: TableShape = TableShape {
    keys: &[
        key(
            "simulation",
            Shape::Table(&SIMULATION),
            None,
            "run settings",
        ),
        key(
            "workload",
            Shape::Table(&WORKLOAD),
            None,
            "a single job class",
        ),
        key(
            "classes",
            Shape::MapOf(&Shape::Table(&CLASS)),
            None,
            "several job classes",
        ),
        key(
            "stations",
            Shape::MapOf(&Shape::Def("station_or_group")),
            None,
            "service centers, or station groups",
        ),
        key(
            "regions",
            Shape::MapOf(&Shape::Table(&REGION)),
            None,
            "throttles",
        ),
        key(
            "metrics",
            Shape::MapOf(&Shape::Text),
            None,
            "derived metrics: name = expression",
        ),
    ],
    required: &["stations"],
};

/// A fixed route: station names, or repeated parts `{ route, repeat }`.
pub static ROUTE: Shape =
    Shape::ArrayOf(&Shape::OneOf(&[Shape::Text, Shape::Table(&ROUTE_PART)]), 0);

/// A repeated part of a fixed route.
pub static ROUTE_PART: TableShape = TableShape {
    keys: &[
        key("route", Shape::Def("route"), None, "the repeated stations"),
        key("repeat", Shape::Count(1), None, "times they are followed"),
    ],
    required: &["route", "repeat"],
};

/// A routing table: place = { next = probability }.
pub static ROUTING: Shape = Shape::MapOf(&Shape::MapOf(&PROBABILITY));

/// How one routing row picks among its stations (`routing_policy.ROW`).
pub static ROUTING_POLICY: TableShape = TableShape {
    keys: &[
        key(
            "policy",
            Shape::Words(&["round_robin", "shortest_queue", "power_of_d"]),
            None,
            "round_robin: in turn by weight; shortest_queue: fewest jobs per weight; power_of_d: the shortest of d sampled by weight",
        ),
        key(
            "d",
            Shape::Count(2),
            None,
            "stations power_of_d samples (at most the row's stations)",
        ),
    ],
    required: &["policy"],
};

const LENGTH: &[Shape] = &[
    Shape::Table(&TableShape {
        keys: &[key("jobs", Shape::Count(1), None, "completed interactions")],
        required: &["jobs"],
    }),
    Shape::Table(&TableShape {
        keys: &[key("time_s", POSITIVE, None, "simulated seconds")],
        required: &["time_s"],
    }),
];

static WARMUP: [Shape; 4] = [
    LENGTH[0],
    LENGTH[1],
    Shape::Table(&WARMUP_FRACTION),
    Shape::Words(&["mser5", "none"]),
];

static WARMUP_FRACTION: TableShape = TableShape {
    keys: &[key(
        "fraction",
        Shape::Number(Inclusive(0.0), Exclusive(1.0)),
        None,
        "share of the stop",
    )],
    required: &["fraction"],
};

static PRECISION: TableShape = TableShape {
    keys: &[
        key(
            "relative_half_width",
            POSITIVE,
            None,
            "target CI half-width / mean",
        ),
        key(
            "max_replications",
            Shape::Count(1),
            Some("50"),
            "most replications",
        ),
    ],
    required: &["relative_half_width"],
};

static INITIAL_STATION: TableShape = TableShape {
    keys: &[key("station", Shape::Text, None, "station name")],
    required: &["station"],
};

/// `[simulation]`.
pub static SIMULATION: TableShape = TableShape {
    keys: &[
        key(
            "replications",
            Shape::Count(1),
            Some("5"),
            "independent replications",
        ),
        key("seed", Shape::Count(0), Some("1"), "root seed"),
        key(
            "stop",
            Shape::OneOf(LENGTH),
            Some("{ jobs = 100000 }"),
            "end of each replication",
        ),
        key(
            "warmup",
            Shape::OneOf(&WARMUP),
            Some("{ fraction = 0.1 }"),
            "discarded start of each replication",
        ),
        key(
            "precision",
            Shape::Table(&PRECISION),
            None,
            "add replications until the CIs are this narrow",
        ),
        key("sla_s", POSITIVE, None, "response-time objective, s"),
        key(
            "initial",
            Shape::OneOf(&[Shape::Words(&["thinking"]), Shape::Table(&INITIAL_STATION)]),
            Some("\"thinking\""),
            "where closed jobs start",
        ),
        key(
            "max_jobs_present",
            Shape::Count(1),
            Some("10,000,000"),
            "unstable beyond this many jobs",
        ),
        key(
            "max_events",
            Shape::Count(1),
            Some("20,000,000,000"),
            "abort after this many events",
        ),
        key(
            "station_tails",
            Shape::Boolean,
            Some("false"),
            "per-station percentiles, P(wait > 0) and number-present distribution",
        ),
        key(
            "jobs_tail_k",
            Shape::Count(1),
            Some("10"),
            "the k of P(n >= k) at each station",
        ),
    ],
    required: &[],
};

/// A step of `[[workload.schedule]]`.
pub static SCHEDULE_STEP: TableShape = TableShape {
    keys: &[
        key(
            "at",
            NON_NEGATIVE,
            None,
            "when the step starts, s from the start of the run",
        ),
        key(
            "population",
            Shape::Count(1),
            None,
            "the new population (closed)",
        ),
        key("rate_per_s", POSITIVE, None, "the new arrival rate (open)"),
        key(
            "until",
            NON_NEGATIVE,
            None,
            "end of a linear ramp to rate_per_s, s (open)",
        ),
    ],
    required: &["at"],
};

/// A step of `[[stations.NAME.schedule]]`: a queue's servers or speed
/// from a time on.
pub static CAPACITY_STEP: TableShape = TableShape {
    keys: &[
        key(
            "at",
            NON_NEGATIVE,
            None,
            "when the step happens, s from the start of the run",
        ),
        key(
            "servers",
            Shape::Count(0),
            None,
            "the station's servers from then on (0: an outage)",
        ),
        key(
            "speedup",
            POSITIVE,
            None,
            "the station's speed from then on, as a factor of its own (0.2: five times slower)",
        ),
    ],
    required: &["at"],
};

macro_rules! workload_keys {
    ($($extra:expr),* $(,)?) => {
        &[
            key("type", Shape::Words(&["open", "closed"]), None, "workload type"),
            key("arrival", DIST, None, "time between arrivals (open)"),
            key("rate_per_s", POSITIVE, None, "Poisson arrival rate (open)"),
            key("population", Shape::Count(1), None, "number of jobs (closed)"),
            key("think", DIST, Some("0"), "think time (closed)"),
            key("route", Shape::Def("route"), None, "a fixed sequence of stations"),
            key("repeat", Shape::Count(1), Some("1"), "times the fixed route is followed"),
            key(
                "routing",
                Shape::Def("routing"),
                None,
                "place = { next = probability }; source and sink; next \"CLASS:STATION\" switches the job to CLASS",
            ),
            key(
                "routing_policy",
                Shape::MapOf(&Shape::Table(&ROUTING_POLICY)),
                None,
                "place = { policy, d }: a routing row picks among its stations by their queues, its probabilities as weights",
            ),
            key(
                "schedule",
                Shape::ArrayOf(&Shape::Table(&SCHEDULE_STEP), 1),
                None,
                "load steps over time ([[...schedule]])",
            ),
            key(
                "client",
                Shape::Table(&CLIENT),
                None,
                "client behaviour under overload: timeout, retries, backoff, retry budget",
            ),
            $($extra),*
        ]
    };
}

/// `[workload]`: the single class.
pub static WORKLOAD: TableShape = TableShape {
    keys: workload_keys!(),
    required: &[],
};

/// `[classes.NAME]`: a class has a workload's keys and these.
pub static CLASS: TableShape = TableShape {
    keys: workload_keys!(
        key(
            "priority",
            Shape::Integer,
            Some("0"),
            "higher is served first at priority queues",
        ),
        key(
            "sla_s",
            POSITIVE,
            Some("simulation.sla_s"),
            "the class's response-time objective, s",
        ),
    ),
    required: &[],
};

/// A class's `client` table.
pub static CLIENT: TableShape = TableShape {
    keys: &[
        key(
            "timeout",
            DIST,
            None,
            "time after which the client gives up on an attempt",
        ),
        key(
            "on_timeout",
            Shape::Words(&["continue", "cancel"]),
            Some("\"continue\""),
            "the given-up request goes on, its work wasted (continue), or is cancelled while still queued (cancel)",
        ),
        key(
            "deadline_s",
            POSITIVE,
            Some("the class's `sla_s`"),
            "a success within it counts in goodput_per_s, s (default: the class's sla_s)",
        ),
        key(
            "max_attempts",
            Shape::Count(1),
            None,
            "most attempts per interaction, the first included",
        ),
        key(
            "retry_probability",
            PROBABILITY,
            Some("1"),
            "probability that a failed attempt is retried",
        ),
        key("backoff", DIST, None, "delay before a retry"),
        key(
            "backoff_base_s",
            POSITIVE,
            None,
            "doubling backoff: delay before the first retry, s",
        ),
        key(
            "backoff_cap_s",
            POSITIVE,
            Some("1024 · `backoff_base_s`"),
            "doubling backoff: largest delay, s",
        ),
        key(
            "backoff_jitter",
            PROBABILITY,
            Some("0"),
            "doubling backoff: fraction of the delay drawn away uniformly",
        ),
        key(
            "retry_budget",
            Shape::Number(Exclusive(0.0), Inclusive(1.0)),
            None,
            "retries at most this fraction of first attempts (token bucket)",
        ),
        key(
            "retry_budget_cap",
            Shape::Number(Inclusive(1.0), Open),
            Some("10"),
            "the retry budget's most saved tokens (burst)",
        ),
        key(
            "breaker_window",
            Shape::Count(1),
            None,
            "a circuit breaker: the last this many attempts it judges",
        ),
        key(
            "breaker_failure_ratio",
            Shape::Number(Exclusive(0.0), Inclusive(1.0)),
            Some("0.5"),
            "the circuit breaker opens when at least this fraction of its window failed",
        ),
        key(
            "breaker_cool_down_s",
            POSITIVE,
            Some("1"),
            "the circuit breaker stays open this long, then lets one probe through",
        ),
    ],
    required: &[],
};

/// `[regions.NAME]`.
pub static REGION: TableShape = TableShape {
    keys: &[
        key("stations", Shape::Names, None, "member stations"),
        key(
            "limit",
            Shape::OneOf(&[Shape::Count(1), Shape::Words(&["none"])]),
            Some("\"none\""),
            "most jobs inside",
        ),
    ],
    required: &["stations"],
};

/// The families a distribution's `dist` key accepts.
pub const FAMILIES: &[&str] = &[
    "exponential",
    "deterministic",
    "uniform",
    "erlang",
    "hyperexponential",
    "lognormal",
    "gamma",
    "empirical",
];

/// A distribution table (`service`, `arrival`, `think`, ...).
pub static DISTRIBUTION: TableShape = TableShape {
    keys: &[
        key("dist", Shape::Words(FAMILIES), None, "the family"),
        key("mean", NON_NEGATIVE, None, "mean, seconds"),
        key(
            "scv",
            NON_NEGATIVE,
            None,
            "squared coefficient of variation, variance / mean²",
        ),
        key("rate_per_s", POSITIVE, None, "rate (exponential)"),
        key("value", NON_NEGATIVE, None, "the constant (deterministic)"),
        key("min", ANY_NUMBER, None, "lower end (uniform)"),
        key("max", ANY_NUMBER, None, "upper end (uniform)"),
        key("k", Shape::Count(1), None, "phases (erlang)"),
        key(
            "p",
            ANY_NUMBER,
            None,
            "probability of phase 1 (hyperexponential)",
        ),
        key(
            "mean1",
            ANY_NUMBER,
            None,
            "mean of phase 1 (hyperexponential)",
        ),
        key(
            "mean2",
            ANY_NUMBER,
            None,
            "mean of phase 2 (hyperexponential)",
        ),
        key("mu", ANY_NUMBER, None, "mean of the log (lognormal)"),
        key(
            "sigma",
            ANY_NUMBER,
            None,
            "standard deviation of the log (lognormal)",
        ),
        key("shape", POSITIVE, None, "shape (gamma)"),
        key("scale", POSITIVE, None, "scale (gamma)"),
        key(
            "samples",
            Shape::ArrayOf(&ANY_NUMBER, 0),
            None,
            "the samples (empirical)",
        ),
        key(
            "file",
            Shape::Text,
            None,
            "a file of samples, relative to the model (empirical)",
        ),
    ],
    required: &["dist"],
};

/// A point of a speed table.
pub static SPEED_POINT: TableShape = TableShape {
    keys: &[
        key("n", Shape::Count(1), None, "jobs present"),
        key(
            "rate",
            POSITIVE,
            None,
            "completion rate at n, work units per second",
        ),
    ],
    required: &["n", "rate"],
};

/// A Universal Scalability Law curve.
pub static USL: TableShape = TableShape {
    keys: &[
        key("sigma", NON_NEGATIVE, None, "contention"),
        key("kappa", NON_NEGATIVE, None, "coherency"),
        key("lambda", POSITIVE, None, "rate with one job"),
    ],
    required: &["sigma", "kappa", "lambda"],
};

/// A speed curve: a table of points or a USL curve.
pub static SPEED: TableShape = TableShape {
    keys: &[
        key(
            "table",
            Shape::ArrayOf(&Shape::Table(&SPEED_POINT), 1),
            None,
            "points, n increasing; linear between them, constant outside",
        ),
        key("usl", Shape::Table(&USL), None, "Universal Scalability Law"),
    ],
    required: &[],
};

/// A station group: `count` members, each a copy of the member stations
/// (every other key is a member station).
pub static GROUP: TableShape = TableShape {
    keys: &[key("count", Shape::Count(1), None, "members")],
    required: &["count"],
};

/// The keys every station may have, `kind` first; a kind's
/// [`ServiceKeys`](super::ServiceKeys) says which of the others it takes.
pub static STATION_COMMON: &[Key] = &[
    key("kind", Shape::Text, None, "station kind"),
    key("service", DIST, None, "service time for every class"),
    key(
        "rtt",
        DIST,
        None,
        "round-trip time, another name for service (link)",
    ),
    key(
        "service_by_class",
        Shape::MapOf(&DIST),
        None,
        "per-class service times",
    ),
    key(
        "speed",
        Shape::Def("speed"),
        None,
        "contention-dependent completion rate",
    ),
];
