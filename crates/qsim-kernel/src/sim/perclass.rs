//! Per-class figures at a station of a multi-class model: departures,
//! response and wait sums, and the time-weighted jobs present and servers
//! busy of each class.
//!
//! Only plain queue and delay stations (which a multi-class model runs as
//! [`Kind::Plain`](super::Kind::Plain), off the hot path) and
//! virtual-clock stations (PS, speed curves) keep them: single-class
//! models and the other kinds pay nothing.

use crate::results::ReplicationStationClass;

/// Additive figures of one class at one station.
#[derive(Clone, Debug, Default)]
pub(super) struct ClassAt {
    /// Jobs of the class present (queued and in service).
    n: u32,
    /// Jobs of the class in service.
    svc: u32,
    area_n: f64,
    area_busy: f64,
    departures: u64,
    sum_resp: f64,
    sum_wait: f64,
}

/// The per-class figures of one station.
#[derive(Clone, Debug)]
pub(super) struct PerClass {
    last: f64,
    /// Jobs in service over all classes: a class's share of the busy
    /// servers is its part of them.
    svc: u32,
    classes: Box<[ClassAt]>,
}

impl PerClass {
    pub(super) fn new(classes: usize) -> PerClass {
        PerClass {
            last: 0.0,
            svc: 0,
            classes: vec![ClassAt::default(); classes].into_boxed_slice(),
        }
    }

    /// Integrates up to `now` with `busy` servers busy since the last
    /// change; call before a job of any class comes, starts or leaves.
    pub(super) fn acc(&mut self, now: f64, busy: u32) {
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
        for c in self.classes.iter_mut() {
            c.area_n += f64::from(c.n) * dt;
            c.area_busy += f64::from(c.svc) * share;
        }
    }

    /// A job of `class` arrives; `served` if it enters service at once.
    #[inline]
    pub(super) fn arrive(&mut self, class: usize, served: bool) {
        let c = &mut self.classes[class];
        c.n += 1;
        if served {
            c.svc += 1;
            self.svc += 1;
        }
    }

    /// A waiting job of `class` enters service.
    #[inline]
    pub(super) fn start(&mut self, class: usize) {
        self.classes[class].svc += 1;
        self.svc += 1;
    }

    /// A job of `class` leaves from service after `resp` seconds at the
    /// station, `wait` of them before service.
    #[inline]
    pub(super) fn depart(&mut self, class: usize, resp: f64, wait: f64) {
        let c = &mut self.classes[class];
        c.n -= 1;
        c.svc -= 1;
        self.svc -= 1;
        c.departures += 1;
        c.sum_resp += resp;
        c.sum_wait += wait;
    }

    /// The measurement starts at `now` (after [`PerClass::acc`]): the sums
    /// restart, the jobs present stay.
    pub(super) fn reset(&mut self, now: f64) {
        self.last = now;
        for c in self.classes.iter_mut() {
            *c = ClassAt {
                n: c.n,
                svc: c.svc,
                ..ClassAt::default()
            };
        }
    }

    /// The figures of each class over the `t` seconds measured up to
    /// `now`, with `busy` servers busy since the last change, `servers`
    /// the denominator of utilization (0: not defined, NaN) and
    /// `completions` each class's completed interactions.
    pub(super) fn figures(
        &self,
        now: f64,
        t: f64,
        busy: u32,
        servers: f64,
        completions: impl Fn(usize) -> u64,
    ) -> Vec<ReplicationStationClass> {
        let mut pc = self.clone();
        pc.acc(now, busy);
        let per_s = |x: f64| if t > 0.0 { x / t } else { 0.0 };
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        pc.classes
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let d = c.departures as f64;
                ReplicationStationClass {
                    throughput_per_s: per_s(d),
                    utilization: if servers > 0.0 {
                        per_s(c.area_busy) / servers
                    } else {
                        f64::NAN
                    },
                    mean_jobs: per_s(c.area_n),
                    response_time_s: ratio(c.sum_resp, d),
                    wait_time_s: ratio(c.sum_wait, d),
                    visits: ratio(d, completions(i) as f64),
                }
            })
            .collect()
    }
}
