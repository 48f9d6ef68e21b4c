//! Per-class figures at a station of a multi-class model: departures,
//! response and wait sums, and the time-weighted jobs present and servers
//! busy of each class.
//!
//! Only plain queue and delay stations (which a multi-class model runs as
//! [`Kind::Plain`](super::Kind::Plain), off the hot path) and
//! virtual-clock stations (PS, speed curves) keep them: single-class
//! models and the other kinds pay nothing.
//!
//! At a plain station every job in service holds one server, so the time
//! averages follow from per-job sums, as for the station itself (see
//! [`StStats`](super::stats::StStats)): each event touches only its own
//! class. Under PS a job's part of the busy servers changes with every
//! arrival and departure, so a virtual-clock station integrates every
//! class at each change instead.
//!
//! With `station_tails` a class also keeps the histograms of its time and
//! wait at each such station it can reach (and only those: a class that
//! never visits a station costs it nothing), for its percentiles there.

use crate::hist::Histogram;
use crate::results::{ReplicationClassTails, ReplicationStationClass};
use std::sync::Arc;

/// Additive figures of one class at one station.
#[derive(Clone, Debug, Default)]
pub(super) struct ClassAt {
    /// Jobs of the class present (queued and in service).
    n: u32,
    /// Jobs of the class in service.
    svc: u32,
    area_n: f64,
    area_busy: f64,
    /// Plain stations: sums of the arrival times of the class's jobs
    /// present, of the service start times of those in service, and what
    /// the jobs present at the start of the measurement had spent there
    /// (present, in service) before it.
    sum_arr: f64,
    sum_start: f64,
    before_n: f64,
    before_busy: f64,
    departures: u64,
    sum_resp: f64,
    sum_wait: f64,
}

/// The per-class figures of one station.
#[derive(Clone, Debug)]
pub(super) struct PerClass {
    /// Areas from per-job sums (plain stations) instead of integration.
    sums: bool,
    last: f64,
    /// Jobs in service over all classes: a class's share of the busy
    /// servers is its part of them.
    svc: u32,
    classes: Box<[ClassAt]>,
    /// Per class, its time and wait histograms where it keeps them.
    tails: Box<[Option<Box<ClassTails>>]>,
    /// Per class, the part of a server each of its jobs in service holds,
    /// when it is not an equal part of the busy servers (weighted PS).
    shares: Option<Box<[f64]>>,
}

/// The distributions of one class's visits to one station.
#[derive(Clone, Debug)]
struct ClassTails {
    response: Histogram,
    wait: Histogram,
}

impl PerClass {
    /// Figures for `classes` classes; `sums` for a plain station;
    /// histograms of time and wait for the classes `tails` marks.
    pub(super) fn new(classes: usize, sums: bool, tails: &[bool]) -> PerClass {
        PerClass {
            sums,
            last: 0.0,
            svc: 0,
            classes: vec![ClassAt::default(); classes].into_boxed_slice(),
            tails: (0..classes)
                .map(|c| {
                    tails.get(c).copied().unwrap_or(false).then(|| {
                        Box::new(ClassTails {
                            response: Histogram::new(),
                            wait: Histogram::new(),
                        })
                    })
                })
                .collect(),
            shares: None,
        }
    }

    /// Integrates up to `now` with `busy` servers busy since the last
    /// change; call before a job of any class comes, starts or leaves.
    #[inline]
    pub(super) fn acc(&mut self, now: f64, busy: u32) {
        if self.sums {
            return;
        }
        let dt = now - self.last;
        self.last = now;
        if dt <= 0.0 {
            return;
        }
        // Each job in service holds an equal part of the busy servers: one
        // each at a plain queue, min(n, c) / n each under PS.
        let share = if self.svc > 0 {
            f64::from(busy) / f64::from(self.svc) * dt
        } else {
            0.0
        };
        if let Some(shares) = &self.shares {
            for (c, r) in self.classes.iter_mut().zip(shares.iter()) {
                c.area_n += f64::from(c.n) * dt;
                c.area_busy += f64::from(c.svc) * r * dt;
            }
            return;
        }
        for c in self.classes.iter_mut() {
            c.area_n += f64::from(c.n) * dt;
            c.area_busy += f64::from(c.svc) * share;
        }
    }

    /// Weighted PS: from now on each job of class k in service holds
    /// `shares[k]` of a server (until the next call).
    pub(super) fn set_shares(&mut self, shares: &[f64]) {
        match &mut self.shares {
            Some(s) => s.copy_from_slice(shares),
            None => self.shares = Some(shares.into()),
        }
    }

    /// A job of `class` arrives at `now`; `served` if it enters service
    /// at once.
    #[inline]
    pub(super) fn arrive(&mut self, class: usize, now: f64, served: bool) {
        let c = &mut self.classes[class];
        c.n += 1;
        c.sum_arr += now;
        if served {
            c.svc += 1;
            c.sum_start += now;
            self.svc += 1;
        }
    }

    /// A waiting job of `class` that arrived at `t_arr` leaves the queue
    /// unserved at `now` (client mode: cancelled, reneged, shed); its time
    /// there still counts in the area under the jobs present.
    pub(super) fn leave_queue(&mut self, class: usize, now: f64, t_arr: f64) {
        let c = &mut self.classes[class];
        c.n -= 1;
        c.sum_arr -= t_arr;
        c.before_n -= now - t_arr;
    }

    /// A waiting job of `class` enters service at `now`.
    #[inline]
    pub(super) fn start(&mut self, class: usize, now: f64) {
        let c = &mut self.classes[class];
        c.svc += 1;
        c.sum_start += now;
        self.svc += 1;
    }

    /// A job of `class` in service since `t_start` (its first start) is
    /// preempted: it waits again, keeping `t_start` for when it resumes.
    pub(super) fn preempt(&mut self, class: usize, t_start: f64) {
        let c = &mut self.classes[class];
        c.svc -= 1;
        c.sum_start -= t_start;
        self.svc -= 1;
    }

    /// A preempted job of `class`, first started at `t_start`, resumes.
    pub(super) fn resume(&mut self, class: usize, t_start: f64) {
        let c = &mut self.classes[class];
        c.svc += 1;
        c.sum_start += t_start;
        self.svc += 1;
    }

    /// A job of `class` that arrived at `t_arr` and entered service at
    /// `t_start` leaves at `now`.
    #[inline]
    pub(super) fn depart(&mut self, class: usize, now: f64, t_arr: f64, t_start: f64) {
        let c = &mut self.classes[class];
        c.n -= 1;
        c.svc -= 1;
        c.sum_arr -= t_arr;
        c.sum_start -= t_start;
        self.svc -= 1;
        c.departures += 1;
        c.sum_resp += now - t_arr;
        c.sum_wait += t_start - t_arr;
        if let Some(t) = &mut self.tails[class] {
            #[cfg(feature = "bias")]
            let (now, t_start) = crate::bias::perclass_ends(t_arr, now, t_start);
            t.response.record(now - t_arr);
            t.wait.record(t_start - t_arr);
        }
    }

    /// The measurement starts at `now` (after [`PerClass::acc`]): the sums
    /// restart, the jobs present stay.
    pub(super) fn reset(&mut self, now: f64) {
        self.last = now;
        for t in self.tails.iter_mut().flatten() {
            t.response.clear();
            t.wait.clear();
        }
        for c in self.classes.iter_mut() {
            *c = ClassAt {
                n: c.n,
                svc: c.svc,
                sum_arr: c.sum_arr,
                sum_start: c.sum_start,
                before_n: f64::from(c.n) * now - c.sum_arr,
                before_busy: f64::from(c.svc) * now - c.sum_start,
                ..ClassAt::default()
            };
        }
    }

    /// Areas under the class's jobs present and in service up to `now`,
    /// for a plain station: the time spent by the jobs that left plus that
    /// of the jobs still present, minus what the jobs present at the start
    /// had spent before it.
    fn plain_areas(c: &ClassAt, now: f64) -> (f64, f64) {
        let n = c.sum_resp + (f64::from(c.n) * now - c.sum_arr) - c.before_n;
        let busy =
            (c.sum_resp - c.sum_wait) + (f64::from(c.svc) * now - c.sum_start) - c.before_busy;
        // Sums of non-negative durations: only rounding takes them below 0.
        (n.max(0.0), busy.max(0.0))
    }

    /// The figures of each class over the `t` seconds measured up to
    /// `now`, with `busy` servers busy since the last change, `servers`
    /// the denominator of utilization (0: not defined, NaN) and
    /// `completions` each class's completed interactions; percentiles only
    /// if `percentiles` (else 0: checkpoints skip them).
    pub(super) fn figures(
        &self,
        now: f64,
        t: f64,
        busy: u32,
        servers: f64,
        completions: impl Fn(usize) -> u64,
        percentiles: bool,
    ) -> Vec<ReplicationStationClass> {
        // A copy without the histograms, to integrate up to `now`.
        let mut pc = PerClass {
            sums: self.sums,
            last: self.last,
            svc: self.svc,
            classes: self.classes.clone(),
            tails: Box::default(),
            shares: self.shares.clone(),
        };
        pc.acc(now, busy);
        let per_s = |x: f64| if t > 0.0 { x / t } else { 0.0 };
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        pc.classes
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let d = c.departures as f64;
                let (area_n, area_busy) = if pc.sums {
                    PerClass::plain_areas(c, now)
                } else {
                    (c.area_n, c.area_busy)
                };
                ReplicationStationClass {
                    throughput_per_s: per_s(d),
                    utilization: if servers > 0.0 {
                        per_s(area_busy) / servers
                    } else {
                        f64::NAN
                    },
                    mean_jobs: per_s(area_n),
                    response_time_s: ratio(c.sum_resp, d),
                    wait_time_s: ratio(c.sum_wait, d),
                    visits: ratio(d, completions(i) as f64),
                    tails: self.tails[i].as_ref().map(|h| h.figures(percentiles)),
                }
            })
            .collect()
    }
}

impl ClassTails {
    /// The replication's percentiles, and (with `percentiles`) the
    /// histograms for pooling across replications.
    fn figures(&self, percentiles: bool) -> ReplicationClassTails {
        if !percentiles {
            return ReplicationClassTails::default();
        }
        ReplicationClassTails {
            response_time_s: self.response.quantiles([0.5, 0.9, 0.99]),
            wait_time_s: self.wait.quantiles([0.5, 0.9, 0.99]),
            response: Some(Arc::new(self.response.clone())),
            wait: Some(Arc::new(self.wait.clone())),
        }
    }
}
