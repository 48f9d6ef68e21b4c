//! Running replications and summarizing them.

use crate::config::{RunConfig, Stop, Warmup, check_config};
use crate::control::Control;
use crate::error::RunError;
use crate::network::Network;
use crate::results::*;
use crate::rounds::ReplicationRounds;
use crate::sim::{Simulation, StopPlan, WarmPlan};
use crate::steady::{Figure, drift, segment_estimate};
use rayon::prelude::*;
use std::cell::RefCell;
use std::sync::Arc;

/// Runs all replications of `network` (in parallel, results independent of
/// the thread count) and summarizes them.
///
/// Replications run on a local rayon pool of `config.threads` threads (0:
/// one per core) and are collected in index order. With a
/// [`crate::Precision`] target, further replications are added in the
/// deterministic rounds of [`ReplicationRounds`] until both the system
/// throughput and mean response time reach the target relative half-width
/// or `max_replications` have run.
pub fn run(network: &Network, config: &RunConfig) -> Result<RunResults, RunError> {
    run_inner(network, config, None)
}

/// [`run`] with a [`Control`]: progress is published to it and the run
/// stops with [`RunError::Cancelled`] soon after [`Control::cancel`].
pub fn run_with(
    network: &Network,
    config: &RunConfig,
    control: &Arc<Control>,
) -> Result<RunResults, RunError> {
    run_inner(network, config, Some(control))
}

fn run_inner(
    network: &Network,
    config: &RunConfig,
    control: Option<&Arc<Control>>,
) -> Result<RunResults, RunError> {
    check_config(config)?;
    let threads = pool_threads(config);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| RunError::Config(format!("cannot start {threads} threads: {e}")))?;
    let reps = ReplicationRounds::new(config).run(|round| {
        if let Some(c) = control {
            c.plan_replications(round.len() as u32);
        }
        pool.install(|| {
            round
                .into_par_iter()
                .map(|i| replication(network, config, i, control))
                .collect::<Result<Vec<ReplicationResult>, RunError>>()
        })
    })?;
    Ok(summarize(network, config, &reps))
}

/// The threads of a run's pool: as asked (0: one per core), but never more
/// than the replications a round can hold, since a thread without a
/// replication only costs its start (4096 threads turned a 0.1 s run of
/// 5 replications into 17 s). Threads never change the results.
fn pool_threads(config: &RunConfig) -> usize {
    let asked = match config.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let most = config.precision.map_or(config.replications, |p| {
        p.max_replications.max(config.replications)
    });
    asked.min(most.max(1) as usize)
}

/// Runs replication `index` alone. Its random streams depend only on
/// `config.seed`, `index` and the stream ids, never on the thread.
///
/// With [`Warmup::Mser5`] the replication runs its full length (the stopping
/// rule counted from time zero) while keeping bounded batch means of the
/// system response time; MSER-5 picks the truncation point d (in
/// completions). The replication is then replayed from the same seed — a
/// replication is a pure function of its streams, so the replay follows the
/// identical trajectory — with a warm-up of d completions and the same end,
/// which subtracts the truncated prefix exactly from every statistic
/// (histograms included) without storing snapshots.
pub fn run_replication(
    network: &Network,
    config: &RunConfig,
    index: u32,
) -> Result<ReplicationResult, RunError> {
    replication(network, config, index, None)
}

/// [`run_replication`] reporting to `control`, and stopping with
/// [`RunError::Cancelled`] soon after it is cancelled.
pub fn run_replication_with(
    network: &Network,
    config: &RunConfig,
    index: u32,
    control: &Arc<Control>,
) -> Result<ReplicationResult, RunError> {
    replication(network, config, index, Some(control))
}

/// [`run_replication`] reporting to `control` when given.
pub(crate) fn replication(
    network: &Network,
    config: &RunConfig,
    index: u32,
    control: Option<&Arc<Control>>,
) -> Result<ReplicationResult, RunError> {
    let r = replication_inner(network, config, index, control)?;
    if let Some(c) = control {
        c.replication_finished();
    }
    Ok(r)
}

fn replication_inner(
    network: &Network,
    config: &RunConfig,
    index: u32,
    control: Option<&Arc<Control>>,
) -> Result<ReplicationResult, RunError> {
    check_config(config)?;
    let mut sim = Simulation::new(network, config, index)?;
    if let Some(c) = control {
        sim.set_control(Arc::clone(c));
    }
    sim.run()?;
    if config.warmup != Warmup::Mser5 {
        return Ok(sim.result());
    }
    let d = sim.mser_truncation().unwrap_or(0);
    if d == 0 {
        return Ok(sim.result());
    }
    let stop = match config.stop {
        Stop::Jobs(_) => StopPlan::Jobs(sim.completions().saturating_sub(d).max(1)),
        Stop::Time(_) => StopPlan::AbsTime(sim.time().seconds()),
    };
    let mut replay = Simulation::with_plan(network, config, index, WarmPlan::Jobs(d), stop, false);
    if let Some(c) = control {
        replay.set_control(Arc::clone(c));
    }
    replay.run()?;
    Ok(replay.result())
}

/// The least expected number of responses beyond a percentile in every
/// replication for it to be reported: with fewer, the estimate is the
/// largest few responses of the run (with 100 responses a p99.9 is the
/// maximum, and every replication's CDF is 1 there, so a t interval of
/// them is 0 wide), which no interval method here can qualify.
pub const MIN_TAIL_RESPONSES: f64 = 10.0;

/// The responses a replication needs for percentile `q` to be supported
/// ([`MIN_TAIL_RESPONSES`] expected beyond it).
pub fn responses_needed(q: f64) -> u64 {
    // Less a rounding allowance: 1 - 0.9 is not exactly 0.1, and p90 needs
    // 100, not 101.
    (MIN_TAIL_RESPONSES / (1.0 - q) - 1e-6).ceil() as u64
}

/// The percentiles a run reports, as fractions (p50, p90, p95, p99, p99.9).
pub const PERCENTILES: [f64; 5] = [0.5, 0.9, 0.95, 0.99, 0.999];

/// The response-time percentiles (p50, p90, p95, p99, p99.9) of
/// replications, from their histograms pooled: the fraction of a
/// replication's responses at most x is an unbiased estimate of P(R <= x)
/// whatever its length, so the pooled quantile converges as replications
/// are added, where the mean of per-replication quantiles keeps the bias of
/// each short replication (a p99.9 from 10^5 M/M/1 jobs at rho 0.9 is ~12%
/// low however many replications). The 95% interval: a Student t interval
/// of the replications' P(R <= x) at the estimate x, mapped back through
/// the pooled quantiles (the wider side, so it is symmetric and
/// conservative). One replication, or one without a histogram: its own
/// quantiles, averaged, with a t interval over replications (none for one).
/// A percentile some replication has too few responses for (see
/// [`MIN_TAIL_RESPONSES`]) is unknown (NaN); the second value is the
/// fewest responses of a replication, for the warning.
fn percentiles<'a>(per_rep: impl Iterator<Item = &'a ReplicationClass>) -> ([Estimate; 5], u64) {
    let per_rep: Vec<&ReplicationClass> = per_rep.collect();
    let fewest = per_rep.iter().map(|r| r.completions).min().unwrap_or(0);
    let hists: Option<Vec<&crate::hist::Histogram>> =
        per_rep.iter().map(|r| r.histogram.as_deref()).collect();
    let all = pooled(PERCENTILES, hists, |k| {
        estimate(per_rep.iter().map(|r| r.percentiles_s[k]))
    });
    (supported(PERCENTILES, all, fewest), fewest)
}

/// The quantiles `qs` of the replications' histograms `hists` pooled, each
/// with the interval described at [`percentiles`]; with fewer than two
/// histograms, `own(k)`: the replications' own k-th quantiles.
fn pooled<const N: usize>(
    qs: [f64; N],
    hists: Option<Vec<&crate::hist::Histogram>>,
    own: impl Fn(usize) -> Estimate,
) -> [Estimate; N] {
    match hists {
        Some(hists) if hists.len() >= 2 => {
            let mut pooled = crate::hist::Histogram::new();
            for h in &hists {
                pooled.merge(h);
            }
            let responses: u64 = hists.iter().map(|h| h.count()).sum();
            qs.map(|q| {
                let [x] = pooled.quantiles([q]);
                let f = estimate(hists.iter().map(|h| h.cdf(x)));
                // A replication's CDF at x counts whole responses: in a tail
                // of a few responses on a bucket's edge replications can
                // agree exactly, and a t interval of them is 0 wide. The
                // binomial error of the pooled fraction is a floor no
                // sample of responses gets below.
                let floor = 1.96 * (q * (1.0 - q) / responses.max(1) as f64).sqrt();
                let h = if f.ci95.is_finite() {
                    f.ci95.max(floor)
                } else {
                    floor
                };
                let [lo] = pooled.quantiles([(q - h).max(0.0)]);
                let [hi] = pooled.quantiles([(q + h).min(1.0)]);
                Estimate {
                    mean: x,
                    ci95: (x - lo).max(hi - x),
                }
            })
        }
        _ => std::array::from_fn(own),
    }
}

/// `all`, with the quantiles of `qs` that `fewest` responses a replication
/// cannot support (see [`MIN_TAIL_RESPONSES`]) unknown.
fn supported<const N: usize>(qs: [f64; N], all: [Estimate; N], fewest: u64) -> [Estimate; N] {
    std::array::from_fn(|k| {
        if fewest >= responses_needed(qs[k]) {
            all[k]
        } else {
            Estimate::UNKNOWN
        }
    })
}

/// [`PERCENTILES`] with their labels.
const LABELLED: [(f64, &str); 5] = [
    (0.5, "p50"),
    (0.9, "p90"),
    (0.95, "p95"),
    (0.99, "p99"),
    (0.999, "p99.9"),
];

/// Summarizes replications (in index order) into means and 95% CIs.
///
/// Means and rates are averaged across replications with a Student t
/// interval; percentiles come from the replications' pooled histograms
/// (see `percentiles`). With one replication, means and rates get a segment-means
/// interval from its [`ReplicationResult::checkpoints`] (when its segment
/// means are uncorrelated) and percentiles no interval (NaN). The
/// steady-state checks of [`crate::steady`] add their [`RunWarning`]s.
pub fn summarize(network: &Network, config: &RunConfig, reps: &[ReplicationResult]) -> RunResults {
    let s = Summary {
        network,
        config,
        reps,
        correlated: RefCell::new(Vec::new()),
        tails_short: RefCell::new(Vec::new()),
    };
    let spec = network.spec();
    let system = s.system();
    let senders = spec.blocking_senders();
    let reached = spec.class_stations();
    let stations = (0..spec.stations.len())
        .map(|i| s.station(i, &senders, &reached))
        .collect();
    let classes = (0..spec.classes.len())
        .map(|i| s.class(i))
        .zip(spec.chain_starts())
        .enumerate()
        // A class that jobs only switch into completes no interaction of
        // its own (they count for the class they started in): its figures
        // are not defined, not 0.
        .map(|(i, (cl, start))| {
            if start == i {
                cl
            } else {
                ClassResults::undefined(cl.name)
            }
        })
        .collect();
    let regions = (0..spec.regions.len()).map(|i| s.region(i)).collect();
    let warnings = s.warnings(&system);
    let n = reps.len().max(1) as f64;
    RunResults {
        system,
        stations,
        classes,
        regions,
        replications: reps.len() as u32,
        events: reps.iter().map(|r| r.events).sum(),
        measured_time_s: reps.iter().map(|r| r.measured_time_s).sum(),
        warmup_time_s: reps.iter().map(|r| r.warmup_time_s).sum::<f64>() / n,
        replication_results: reps.to_vec(),
        warnings,
    }
}

/// A replication figure: its value, or the weight that makes it additive.
type RepFn<'a> = &'a dyn Fn(&ReplicationResult) -> f64;

/// What the parts of [`summarize`] share: the run, and the warnings its
/// figures collect on the way (in the order the figures are summarized).
struct Summary<'a> {
    network: &'a Network,
    config: &'a RunConfig,
    reps: &'a [ReplicationResult],
    /// Figures of a single replication whose segment means are correlated.
    correlated: RefCell<Vec<String>>,
    /// Percentiles withheld for too few responses, one warning per scope.
    tails_short: RefCell<Vec<RunWarning>>,
}

/// The measured time of a replication: the weight of rates and time
/// averages.
fn time(r: &ReplicationResult) -> f64 {
    r.measured_time_s
}

/// A station's figures in one replication (zero where it kept none).
fn station_of(r: &ReplicationResult, i: usize) -> ReplicationStation {
    r.stations.get(i).cloned().unwrap_or_default()
}

impl Summary<'_> {
    /// One figure across replications, with the weight that makes it
    /// additive (see `Figure`): a t interval over replications, or with one
    /// replication a segment-means interval (`name` is then recorded when its
    /// segments are correlated).
    fn fig(&self, name: &dyn Fn() -> String, value: RepFn<'_>, weight: RepFn<'_>) -> Estimate {
        if let [one] = self.reps {
            let (e, ok) = segment_estimate(&Figure { value, weight }, one);
            if !ok && e.mean != 0.0 {
                self.correlated.borrow_mut().push(name());
            }
            e
        } else {
            estimate(self.reps.iter().map(value))
        }
    }

    /// Records the percentiles of `qs` that `fewest` responses cannot
    /// support, as one warning for `scope`.
    fn short(&self, scope: String, fewest: u64, qs: &[(f64, &str)]) {
        let out: Vec<&(f64, &str)> = qs
            .iter()
            .filter(|(q, _)| fewest < responses_needed(*q))
            .collect();
        if let Some((q, _)) = out.first() {
            self.tails_short
                .borrow_mut()
                .push(RunWarning::TailTooShort {
                    scope,
                    labels: out.iter().map(|(_, l)| l.to_string()).collect(),
                    fewest,
                    needed: responses_needed(*q),
                });
        }
    }

    fn system(&self) -> SystemResults {
        let system_x = self.fig(
            &|| "system.throughput_per_s".into(),
            &|r| r.system.throughput_per_s,
            &time,
        );
        let system_r = self.fig(
            &|| "system.response_time_s".into(),
            &|r| r.system.response_time_s,
            &|r| r.system.completions as f64,
        );
        let ([p50, p90, p95, p99, p999], fewest) = percentiles(self.reps.iter().map(|r| &r.system));
        self.short("system response time".into(), fewest, &LABELLED);
        SystemResults {
            throughput_per_s: system_x,
            response_time_s: ResponseEstimate {
                mean: system_r.mean,
                ci95: system_r.ci95,
                p50,
                p90,
                p95,
                p99,
                p999,
            },
            sla_violation: self.config.sla_s.map(|_| {
                self.fig(
                    &|| "system.sla_violation".into(),
                    &|r| r.system.sla_violation,
                    &|r| r.system.completions as f64,
                )
            }),
        }
    }

    /// A figure of station `i`, named `station.NAME.metric`.
    fn station_fig(
        &self,
        i: usize,
        metric: &str,
        f: &dyn Fn(&ReplicationStation) -> f64,
        weight: RepFn<'_>,
    ) -> Estimate {
        let name = &self.network.spec().stations[i].name;
        self.fig(
            &|| format!("station.{name}.{metric}"),
            &|r| f(&station_of(r, i)),
            weight,
        )
    }

    /// The figures of station `i`: those its kind and the model give it.
    fn station(&self, i: usize, senders: &[bool], reached: &[Vec<bool>]) -> StationResults {
        let spec = self.network.spec();
        let st = &spec.stations[i];
        let spin_cpu = spec.stations.iter().any(|l| {
            l.kind
                .as_latch()
                .and_then(|l| l.spin.as_ref())
                .is_some_and(|sp| sp.cpu == Some(i))
        });
        // Visits per interaction count departures per completion: jobs lost
        // at a full station or sent away by a population step down leave
        // without completing, so the ratio would not be a visit count there.
        let visits_defined =
            spec.capacity.iter().all(Option::is_none) && self.config.schedule.is_empty();
        let has_servers = !st.kind.is_delay();
        let spin = st.kind.as_latch().is_some_and(|l| l.spin.is_some());
        let sends = senders[i] && st.kind.as_fork().is_none();
        let flags = StationFlags {
            // A delay has no servers to be busy and a fork or join only
            // routes: no utilization, not a measured 0.
            servers: KindTag::from(&st.kind).can_saturate(),
            grouped: st.kind.serves_groups(),
            spin,
            mechanism: st.kind.is_contended_latch(),
            finite: self.network.capacity(i).is_some(),
            blocks: spec.blocks(i),
            sends,
            queue_sends: sends && st.kind.as_queue().is_some(),
        };
        let offered = |r: &ReplicationResult| {
            let s = station_of(r, i);
            (s.throughput_per_s + s.dropped_per_s) * r.measured_time_s
        };
        let departures = |r: &ReplicationResult| station_of(r, i).throughput_per_s * time(r);
        let batches = |r: &ReplicationResult| station_of(r, i).batches_per_s * time(r);
        let polls = |r: &ReplicationResult| station_of(r, i).polls_per_s * time(r);
        let base = StationResults {
            name: st.name.clone(),
            kind: KindTag::from(&st.kind),
            ..StationResults::default()
        };
        let mut r = base.with_figures(&flags, &|metric, value, weight| {
            let w: RepFn<'_> = match weight {
                StationWeight::Time => &time,
                StationWeight::Departures => &departures,
                StationWeight::Offered => &offered,
                StationWeight::Batches => &batches,
                StationWeight::Polls => &polls,
            };
            self.station_fig(i, metric, &value, w)
        });
        r.overload = self
            .network
            .overload()
            .map(|o| Box::new(self.station_overload(i, o, has_servers)));
        r.classes = station_classes(
            spec,
            self.reps,
            i,
            reached,
            has_servers && !spin_cpu,
            visits_defined,
            &|name, value, weight| self.fig(name, value, weight),
        )
        .into_iter()
        .map(|mut c| {
            c.tails = self.station_class_tails(i, &c);
            c
        })
        .collect();
        r.tails = self
            .config
            .station_tails
            .then(|| self.station_tails(i, &departures));
        r
    }

    /// The overload figures of station `i` (abandonment, balking, shedding,
    /// wasted work), each where the model gives the station that mechanism.
    fn station_overload(
        &self,
        i: usize,
        o: &crate::network::Overload,
        has_servers: bool,
    ) -> OverloadResults {
        let ov = |s: &ReplicationStation| s.overload.clone().unwrap_or_default();
        let arrivals = |r: &ReplicationResult| ov(&station_of(r, i)).arrivals as f64;
        let work = |r: &ReplicationResult| ov(&station_of(r, i)).work_s;
        let e = |metric: &str, f: &dyn Fn(&ReplicationStation) -> f64, w: RepFn<'_>| {
            self.station_fig(i, metric, f, w)
        };
        let at = o.stations[i].as_ref();
        let timeouts = o.classes.iter().flatten().any(|k| k.timeout.is_some());
        // A speed-curve, PS or latch station records no visit's server
        // time (it is not one number there): no wasted work for it.
        let recorded = self
            .reps
            .first()
            .is_some_and(|r| station_of(r, i).overload.is_some());
        OverloadResults {
            abandonment_probability: at.is_some_and(|x| x.patience.is_some()).then(|| {
                e(
                    "abandonment_probability",
                    &|s| ov(s).abandonment_probability,
                    &arrivals,
                )
            }),
            balking_probability: at.is_some_and(|x| x.balk.is_some()).then(|| {
                e(
                    "balking_probability",
                    &|s| ov(s).balking_probability,
                    &arrivals,
                )
            }),
            shed_probability: at
                .is_some_and(|x| x.shed_after_s.is_some())
                .then(|| e("shed_probability", &|s| ov(s).shed_probability, &arrivals)),
            wasted_work_fraction: (timeouts && has_servers && recorded).then(|| {
                e(
                    "wasted_work_fraction",
                    &|s| ov(s).wasted_work_fraction,
                    &work,
                )
            }),
        }
    }

    /// The distribution figures of station `i` (`simulation.station_tails`).
    fn station_tails(&self, i: usize, departures: RepFn<'_>) -> TailResults {
        let reps = self.reps;
        let t = |r: &ReplicationResult| station_of(r, i).tails.unwrap_or_default();
        let per_rep =
            |f: &dyn Fn(&ReplicationTails) -> f64| estimate(reps.iter().map(|r| f(&t(r))));
        // Each replication's own p50, p90, p99 of the visits there: unknown
        // where a replication has too few visits for ~10 beyond it.
        let fewest = reps
            .iter()
            .map(|r| departures(r).round() as u64)
            .min()
            .unwrap_or(0);
        let per_rep_q = |q: f64, f: &dyn Fn(&ReplicationTails) -> f64| {
            if fewest >= responses_needed(q) {
                per_rep(f)
            } else {
                Estimate::UNKNOWN
            }
        };
        let name = &self.network.spec().stations[i].name;
        self.short(
            format!("station {name} time and wait"),
            fewest,
            &[(0.5, "p50"), (0.9, "p90"), (0.99, "p99")],
        );
        TailResults {
            response_time_p50_s: per_rep_q(0.5, &|t| t.response_time_s[0]),
            response_time_p90_s: per_rep_q(0.9, &|t| t.response_time_s[1]),
            response_time_p99_s: per_rep_q(0.99, &|t| t.response_time_s[2]),
            wait_time_p50_s: per_rep_q(0.5, &|t| t.wait_time_s[0]),
            wait_time_p90_s: per_rep_q(0.9, &|t| t.wait_time_s[1]),
            wait_time_p99_s: per_rep_q(0.99, &|t| t.wait_time_s[2]),
            wait_probability: self.station_fig(
                i,
                "wait_probability",
                &|s| s.tails.as_ref().map_or(0.0, |t| t.wait_probability),
                departures,
            ),
            jobs_variance: per_rep(&|t| t.jobs_variance),
            jobs_tail_probability: self.station_fig(
                i,
                "jobs_tail_probability",
                &|s| s.tails.as_ref().map_or(0.0, |t| t.jobs_tail_probability),
                &time,
            ),
        }
    }

    /// The percentiles of class `c.class` at station `i`, where every
    /// replication kept them (`simulation.station_tails`): the station
    /// tails' p50, p90 and p99 of time and wait over the class's visits,
    /// from the replications' histograms pooled as for a class's response
    /// times (see [`percentiles`]).
    fn station_class_tails(&self, i: usize, c: &StationClassResults) -> Option<ClassTailResults> {
        let tails: Option<Vec<ReplicationClassTails>> = (self.reps.iter())
            .map(|r| {
                r.stations
                    .get(i)
                    .and_then(|s| s.classes.get(c.class))
                    .and_then(|x| x.tails.clone())
            })
            .collect();
        let tails = tails.filter(|t| !t.is_empty())?;
        let fewest = (tails.iter())
            .map(|t| t.response.as_ref().map_or(0, |h| h.count()))
            .min()
            .unwrap_or(0);
        const QS: [f64; 3] = [0.5, 0.9, 0.99];
        let name = &self.network.spec().stations[i].name;
        self.short(
            format!("station {name} class {} time and wait", c.name),
            fewest,
            &[(0.5, "p50"), (0.9, "p90"), (0.99, "p99")],
        );
        let both = |f: fn(&ReplicationClassTails) -> Option<&crate::hist::Histogram>,
                    own: fn(&ReplicationClassTails) -> [f64; 3]| {
            let hists = tails.iter().map(f).collect();
            let all = pooled(QS, hists, |k| estimate(tails.iter().map(|t| own(t)[k])));
            supported(QS, all, fewest)
        };
        let [r50, r90, r99] = both(|t| t.response.as_deref(), |t| t.response_time_s);
        let [w50, w90, w99] = both(|t| t.wait.as_deref(), |t| t.wait_time_s);
        Some(ClassTailResults {
            response_time_p50_s: r50,
            response_time_p90_s: r90,
            response_time_p99_s: r99,
            wait_time_p50_s: w50,
            wait_time_p90_s: w90,
            wait_time_p99_s: w99,
        })
    }

    /// The figures of class `i` (computed for every class; `summarize`
    /// drops those of classes jobs only switch into).
    fn class(&self, i: usize) -> ClassResults {
        let spec = self.network.spec();
        let c = &spec.classes[i];
        let pick = |r: &ReplicationResult| r.classes.get(i).cloned().unwrap_or_default();
        let count = |r: &ReplicationResult| pick(r).completions as f64;
        let m = self.fig(
            &|| format!("class.{}.response_time_s", c.name),
            &|r| pick(r).response_time_s,
            &count,
        );
        let picked: Vec<ReplicationClass> = self.reps.iter().map(pick).collect();
        let ([p50, p90, p95, p99, p999], fewest) = percentiles(picked.iter());
        // A class jobs only switch into has no figures of its own.
        if spec.chain_starts().get(i) == Some(&i) && spec.classes.len() > 1 {
            self.short(format!("class {} response time", c.name), fewest, &LABELLED);
        }
        let client = self
            .network
            .overload()
            .and_then(|o| o.classes[i].as_ref())
            .map(|_| self.client(i));
        ClassResults {
            client,
            name: c.name.clone(),
            throughput_per_s: self.fig(
                &|| format!("class.{}.throughput_per_s", c.name),
                &|r| pick(r).throughput_per_s,
                &time,
            ),
            response_time_s: ResponseEstimate {
                mean: m.mean,
                ci95: m.ci95,
                p50,
                p90,
                p95,
                p99,
                p999,
            },
            sla_violation: self
                .config
                .class_sla_s
                .get(i)
                .copied()
                .flatten()
                .or(self.config.sla_s)
                .map(|_| {
                    self.fig(
                        &|| format!("class.{}.sla_violation", c.name),
                        &|r| pick(r).sla_violation,
                        &count,
                    )
                }),
        }
    }

    /// The client figures of class `i` (timeouts and retries).
    fn client(&self, i: usize) -> ClientResults {
        let name = &self.network.spec().classes[i].name;
        let breaker = self
            .network
            .overload()
            .and_then(|o| o.classes[i].as_ref())
            .and_then(|k| k.breaker);
        let cp = |r: &ReplicationResult| {
            r.classes
                .get(i)
                .cloned()
                .unwrap_or_default()
                .client
                .unwrap_or_default()
        };
        let f = |m: &str,
                 v: &dyn Fn(&ReplicationClient) -> f64,
                 w: &dyn Fn(&ReplicationClient) -> f64| {
            self.fig(&|| format!("class.{name}.{m}"), &|r| v(&cp(r)), &|r| {
                w(&cp(r))
            })
        };
        let ended = |x: &ReplicationClient| x.interactions as f64;
        ClientResults {
            goodput_per_s: self.fig(
                &|| format!("class.{name}.goodput_per_s"),
                &|r| cp(r).goodput_per_s,
                &time,
            ),
            attempts_per_interaction: f(
                "attempts_per_interaction",
                &|x| x.attempts_per_interaction,
                &ended,
            ),
            timeout_probability: f("timeout_probability", &|x| x.timeout_probability, &|x| {
                x.attempts as f64
            }),
            failure_probability: f("failure_probability", &|x| x.failure_probability, &ended),
            breaker_open_fraction: breaker.map(|_| {
                self.fig(
                    &|| format!("class.{name}.breaker_open_fraction"),
                    &|r| cp(r).breaker_open_fraction.unwrap_or(0.0),
                    &time,
                )
            }),
            fast_failed_fraction: breaker.map(|_| {
                f(
                    "fast_failed_fraction",
                    &|x| x.fast_failed_fraction.unwrap_or(0.0),
                    &|x| x.attempts as f64,
                )
            }),
        }
    }

    fn region(&self, i: usize) -> RegionResults {
        let g = &self.network.spec().regions[i];
        let get = |r: &ReplicationResult| r.regions.get(i).cloned().unwrap_or_default();
        let base = RegionResults {
            name: g.name.clone(),
            ..RegionResults::default()
        };
        let flags = RegionFlags {
            limited: g.limit.is_some(),
        };
        base.with_figures(&flags, &|metric, value, weight| match weight {
            RegionWeight::Time => self.fig(
                &|| format!("region.{}.{metric}", g.name),
                &|r| value(&get(r)),
                &time,
            ),
            RegionWeight::Replications => estimate(self.reps.iter().map(|r| value(&get(r)))),
        })
    }

    /// The run's warnings: steadiness (or the schedule's note), tails too
    /// short, correlated segments, precision not reached.
    fn warnings(self, system: &SystemResults) -> Vec<RunWarning> {
        // A run with a schedule is a transient by design: one note, and the
        // per-phase figures, instead of advice to run longer.
        let mut warnings = match crate::recovery::run_trigger_window(self.config) {
            Some(w) => vec![RunWarning::LoadChanges {
                start_s: w.start_s,
                end_s: w.end_s,
                changes: match (
                    self.config.schedule.is_empty(),
                    self.config.station_schedule.is_empty(),
                ) {
                    (false, true) => "the load changes",
                    (true, false) => "a station's capacity changes",
                    _ => "the load and a station's capacity change",
                },
            }],
            None => steady_warnings(self.reps),
        };
        warnings.extend(self.tails_short.into_inner());
        let correlated = self.correlated.into_inner();
        if !correlated.is_empty() {
            warnings.push(RunWarning::SegmentsCorrelated {
                metrics: correlated,
            });
        }
        if let Some(p) = self.config.precision {
            let rel = |e: &Estimate| (e.ci95 / e.mean).abs();
            let reached = rel(&system.throughput_per_s).max(rel(&Estimate {
                mean: system.response_time_s.mean,
                ci95: system.response_time_s.ci95,
            }));
            // NaN (no interval) is not reached either.
            if reached.is_nan() || reached > p.relative_half_width {
                warnings.push(RunWarning::PrecisionNotReached {
                    target: p.relative_half_width,
                    reached,
                    replications: self.reps.len() as u32,
                });
            }
        }
        warnings
    }
}

/// The steady-state check on system throughput and mean response: a
/// drift between the halves of the measured window. (MSER on the segment
/// series flagged steady M/M/4 runs, so it is not used as an alarm.)
fn steady_warnings(reps: &[ReplicationResult]) -> Vec<RunWarning> {
    let time = |r: &ReplicationResult| r.measured_time_s;
    let count = |r: &ReplicationResult| r.system.completions as f64;
    let x = |r: &ReplicationResult| r.system.throughput_per_s;
    let resp = |r: &ReplicationResult| r.system.response_time_s;
    let figures: [(&'static str, Figure<'_>); 2] = [
        (
            "throughput_per_s",
            Figure {
                value: &x,
                weight: &time,
            },
        ),
        (
            "response_time_s",
            Figure {
                value: &resp,
                weight: &count,
            },
        ),
    ];
    let mut out = Vec::new();
    for (metric, fig) in &figures {
        if let Some((first_half, second_half)) = drift(fig, reps) {
            out.push(RunWarning::NotSteady {
                metric,
                first_half,
                second_half,
            });
        }
    }
    out
}

/// The per-class figures of station `i` across replications, for the
/// classes that can reach it, when the replications kept them;
/// `utilization` and `visits` say whether those apply. `fig` is the
/// summary of one figure with its weight (see `summarize`).
#[allow(clippy::type_complexity)]
fn station_classes(
    spec: &crate::network::NetworkSpec,
    reps: &[ReplicationResult],
    i: usize,
    reached: &[Vec<bool>],
    utilization: bool,
    visits: bool,
    fig: &dyn Fn(
        &dyn Fn() -> String,
        &dyn Fn(&ReplicationResult) -> f64,
        &dyn Fn(&ReplicationResult) -> f64,
    ) -> Estimate,
) -> Vec<StationClassResults> {
    let kept = reps
        .first()
        .and_then(|r| r.stations.get(i))
        .is_some_and(|s| !s.classes.is_empty());
    if !kept {
        return Vec::new();
    }
    let sname = &spec.stations[i].name;
    spec.classes
        .iter()
        .enumerate()
        .filter(|(c, _)| reached[*c].get(i).copied().unwrap_or(false))
        .map(|(c, cl)| {
            let get = |r: &ReplicationResult| {
                r.stations
                    .get(i)
                    .and_then(|s| s.classes.get(c))
                    .cloned()
                    .unwrap_or_default()
            };
            let time = |r: &ReplicationResult| r.measured_time_s;
            let departures = |r: &ReplicationResult| get(r).throughput_per_s * r.measured_time_s;
            let completions =
                |r: &ReplicationResult| r.classes.get(c).map_or(0.0, |x| x.completions as f64);
            let flags = StationClassFlags {
                utilization,
                visits: visits && reps.iter().all(|r| completions(r) > 0.0),
            };
            let base = StationClassResults {
                name: cl.name.clone(),
                class: c,
                ..StationClassResults::default()
            };
            base.with_figures(&flags, &|metric, value, weight| {
                let w: &dyn Fn(&ReplicationResult) -> f64 = match weight {
                    StationClassWeight::Time => &time,
                    StationClassWeight::Departures => &departures,
                    StationClassWeight::Completions => &completions,
                };
                fig(
                    &|| format!("station.{sname}.classes.{}.{metric}", cl.name),
                    &|r| value(&get(r)),
                    w,
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::percentiles;
    use crate::hist::Histogram;
    use crate::results::ReplicationClass;
    use std::sync::Arc;

    #[test]
    fn replications_that_agree_on_a_tail_still_get_an_interval() {
        // Three replications with the same 1,000 responses (1..=1000 ms):
        // their CDFs agree at every point, so a t interval of them is 0
        // wide. The pooled fraction below the p99 of 3,000 responses has a
        // binomial half-width of 1.96·sqrt(0.99·0.01/3000) = 0.0036, i.e.
        // about 3.6 ms here.
        let mut h = Histogram::new();
        for i in 1..=1000 {
            h.record(f64::from(i) * 1e-3);
        }
        let rep = ReplicationClass {
            completions: 1000,
            histogram: Some(Arc::new(h)),
            ..ReplicationClass::default()
        };
        let reps = [rep.clone(), rep.clone(), rep];
        let ([_, _, _, p99, _], fewest) = percentiles(reps.iter());
        assert_eq!(fewest, 1000);
        assert!((p99.mean - 0.990).abs() < 0.01, "{p99:?}");
        assert!(
            p99.ci95 > 0.003 && p99.ci95 < 0.005,
            "p99 {} ± {}: expected about ± 0.0036",
            p99.mean,
            p99.ci95
        );
    }
}
