//! Streaming statistics: per-station and per-class accumulators, MSER-5
//! segment means, and the figures of a replication ([`Simulation::result`]).

use super::event::{EV_MARK, ev, later};
use super::job::Job;
use super::perclass::PerClass;
use super::regions::RegionStats;
use super::{Kind, Simulation, StationRt, StopPlan};
use crate::hist::Histogram;
use crate::results::*;
use crate::steady::SEGMENTS;

/// Additive statistics of one class.
#[derive(Clone, Debug, Default)]
pub(super) struct ClassStats {
    pub(super) completions: u64,
    pub(super) sum_resp: f64,
    pub(super) sla_over: u64,
    /// Over the class's own SLA (see `ClassRt::sla`).
    pub(super) class_sla_over: u64,
    pub(super) hist: Histogram,
}

/// Additive statistics of one station.
///
/// Time-weighted sums come in two forms. Stations of most kinds integrate
/// them with [`StStats::acc`] at every change of `n` or `busy`. Plain
/// queue and delay stations (fixed speed, the hot path) skip that: their
/// time-weighted sums follow from per-job sums, since the time jobs spend
/// present adds up to the area under `n` (Little's law holds path by path).
/// They keep `sum_arr`, the sum of arrival times of the jobs present, and
/// `sum_start`, the sum of service start times of the jobs in service, so
/// that `n * t - sum_arr` is the time the present jobs have spent so far;
/// see [`StStats::plain_areas`]. Any code that changes `n`, `busy`, a job's
/// `t_arr` or `t_start` at a plain station must keep these two sums in
/// step; debug builds (the tests) also integrate the areas with `acc` and
/// compare both in `result`.
#[derive(Clone, Debug, Default)]
pub(super) struct StStats {
    /// Jobs present (queued and in service).
    pub(super) n: u32,
    /// Busy servers.
    pub(super) busy: u32,
    pub(super) last: f64,
    pub(super) area_n: f64,
    pub(super) area_busy: f64,
    /// Plain stations: sum of `t_arr` over the jobs present.
    pub(super) sum_arr: f64,
    /// Plain stations: sum of `t_start` over the jobs in service.
    pub(super) sum_start: f64,
    /// Plain stations: time the jobs present at the start of the
    /// measurement had spent there (present, in service) before it.
    pub(super) before_n: f64,
    pub(super) before_busy: f64,
    pub(super) departures: u64,
    pub(super) sum_resp: f64,
    pub(super) sum_wait: f64,
    pub(super) batches: u64,
    pub(super) batch_jobs: u64,
    /// Finite-capacity stations: arrivals, and those lost because the
    /// station was full.
    pub(super) offered: u64,
    pub(super) dropped: u64,
    /// Per-station distributions, when `station_tails` is set.
    pub(super) tails: Option<Box<StationTails>>,
}

/// Buckets of the number-present distribution: 0, 1, ..., `JOBS_BINS - 2`,
/// and the last for `JOBS_BINS - 1` or more.
pub(crate) const JOBS_BINS: usize = 1024;

/// Distributions of one station (`RunConfig::station_tails`): response and
/// waiting times of the jobs that left, how many waited, and the time spent
/// with each number of jobs present.
#[derive(Clone, Debug)]
pub(super) struct StationTails {
    pub(super) response: Histogram,
    pub(super) wait: Histogram,
    pub(super) waited: u64,
    /// Time with n jobs present, by n (see [`JOBS_BINS`]).
    pub(super) jobs_time: Box<[f64; JOBS_BINS]>,
    /// Integral of n^2 over time.
    pub(super) area_n2: f64,
}

impl StationTails {
    pub(super) fn new() -> StationTails {
        StationTails {
            response: Histogram::new(),
            wait: Histogram::new(),
            waited: 0,
            jobs_time: Box::new([0.0; JOBS_BINS]),
            area_n2: 0.0,
        }
    }

    fn clear(&mut self) {
        self.response.clear();
        self.wait.clear();
        self.waited = 0;
        self.jobs_time.fill(0.0);
        self.area_n2 = 0.0;
    }

    /// `dt` seconds passed with `n` jobs present.
    #[inline]
    fn time_at(&mut self, n: u32, dt: f64) {
        self.jobs_time[(n as usize).min(JOBS_BINS - 1)] += dt;
        self.area_n2 += f64::from(n) * f64::from(n) * dt;
    }
}

impl StStats {
    /// Integrates the time-weighted sums up to `now`; call before changing
    /// `n` or `busy`.
    #[inline(always)]
    pub(super) fn acc(&mut self, now: f64) {
        let dt = now - self.last;
        self.area_n += f64::from(self.n) * dt;
        self.area_busy += f64::from(self.busy) * dt;
        self.last = now;
        if let Some(t) = &mut self.tails {
            t.time_at(self.n, dt);
        }
    }

    fn reset(&mut self, now: f64) {
        let mut tails = self.tails.take();
        if let Some(t) = &mut tails {
            t.clear();
        }
        *self = StStats {
            tails,
            n: self.n,
            busy: self.busy,
            last: now,
            sum_arr: self.sum_arr,
            sum_start: self.sum_start,
            before_n: f64::from(self.n) * now - self.sum_arr,
            before_busy: f64::from(self.busy) * now - self.sum_start,
            ..StStats::default()
        };
    }

    /// Areas under `n` and `busy` from the start of the measurement to
    /// `now` for a plain station: the time spent by the jobs that departed
    /// (`sum_resp`; in service: `sum_resp - sum_wait`) plus that of the
    /// jobs still present, minus what the jobs present at the start had
    /// spent before it.
    /// A delay station has no servers: its busy area is 0.
    pub(super) fn plain_areas(&self, now: f64, servers: bool) -> (f64, f64) {
        let area_n = self.sum_resp + (f64::from(self.n) * now - self.sum_arr) - self.before_n;
        let area_busy = if servers {
            (self.sum_resp - self.sum_wait) + (f64::from(self.busy) * now - self.sum_start)
                - self.before_busy
        } else {
            0.0
        };
        // Both are sums of non-negative durations; only rounding can take
        // them below 0, by far less than this.
        debug_assert!(
            area_n > -1e-9 * (1.0 + self.sum_resp.abs() + now * f64::from(self.n))
                && area_busy > -1e-9 * (1.0 + self.sum_resp.abs() + now * f64::from(self.busy)),
            "negative area: a path changed a plain station without its sums: {self:?}"
        );
        (area_n.max(0.0), area_busy.max(0.0))
    }
}

/// Batch means of system response times for MSER-5 with bounded memory.
///
/// Observations are summed in batches of 5; when 512 batches exist,
/// neighbours are merged pairwise and the batch size doubles, so memory
/// stays at most 512 sums whatever the run length.
#[derive(Clone, Debug)]
pub(crate) struct Mser {
    pub(super) batch: u64,
    pub(super) cur_sum: f64,
    pub(super) cur_n: u64,
    pub(super) sums: Vec<f64>,
}

impl Mser {
    pub(super) fn new() -> Mser {
        Mser {
            batch: 5,
            cur_sum: 0.0,
            cur_n: 0,
            sums: Vec::with_capacity(512),
        }
    }

    #[inline]
    pub(super) fn push(&mut self, x: f64) {
        self.cur_sum += x;
        self.cur_n += 1;
        if self.cur_n == self.batch {
            self.sums.push(self.cur_sum);
            self.cur_sum = 0.0;
            self.cur_n = 0;
            if self.sums.len() == 512 {
                for i in 0..256 {
                    self.sums[i] = self.sums[2 * i] + self.sums[2 * i + 1];
                }
                self.sums.truncate(256);
                self.batch *= 2;
            }
        }
    }

    /// Observations to discard: d·batch where d minimizes
    /// MSER(d) = Σ_{j>d}(Z_j − Z̄_d)² / (m−d)² over d ≤ m/2.
    pub(crate) fn truncation(&self) -> u64 {
        let m = self.sums.len();
        if m < 4 {
            return 0;
        }
        let b = self.batch as f64;
        let z: Vec<f64> = self.sums.iter().map(|s| s / b).collect();
        // Suffix sums of z and z².
        let mut s1 = vec![0.0; m + 1];
        let mut s2 = vec![0.0; m + 1];
        for j in (0..m).rev() {
            s1[j] = s1[j + 1] + z[j];
            s2[j] = s2[j + 1] + z[j] * z[j];
        }
        let mut best = (f64::INFINITY, 0);
        for d in 0..=m / 2 {
            let k = (m - d) as f64;
            let ss = (s2[d] - s1[d] * s1[d] / k).max(0.0);
            let stat = ss / (k * k);
            if stat < best.0 {
                best = (stat, d);
            }
        }
        best.1 as u64 * self.batch
    }
}

/// Completions at segment boundary `k` of a run of `n` jobs: `ceil(n·k/B)`,
/// so the last boundary is `n` itself.
fn jobs_mark(n: u64, k: usize) -> u64 {
    (u128::from(n) * k as u128).div_ceil(SEGMENTS as u128) as u64
}

impl Simulation {
    /// Job `job` leaves a station now (its `stats` and `per_class`), the
    /// areas integrated up to now where they are kept: one fewer present,
    /// the departure recorded, and the per-class figures of a multi-class
    /// model. The bookkeeping shared by the completions of `Kind::Plain`,
    /// virtual-clock and direct-mode stations.
    #[inline(always)]
    pub(super) fn depart_counts(
        stats: &mut StStats,
        per_class: &mut Option<Box<PerClass>>,
        job: &Job,
        now: f64,
    ) {
        stats.n -= 1;
        Simulation::record_departure(stats, job, now);
        if let Some(pc) = per_class {
            pc.acc(now, stats.busy);
            pc.depart(job.class as usize, now, job.t_arr, job.t_start);
        }
    }

    /// [`Simulation::depart_counts`] after integrating the station's areas
    /// up to now: the completions of the virtual-clock and direct-mode
    /// stations.
    #[inline(always)]
    pub(super) fn depart_now(
        stats: &mut StStats,
        per_class: &mut Option<Box<PerClass>>,
        job: &Job,
        now: f64,
    ) {
        stats.acc(now);
        Simulation::depart_counts(stats, per_class, job, now);
    }

    /// Job `job` joins a station (its `stats` and `per_class`, the areas
    /// integrated up to now) that serves it at once: one more present, its
    /// arrival in the per-class figures of a multi-class model, its
    /// service started now. The arrivals of weighted PS and direct mode.
    #[inline(always)]
    pub(super) fn start_counts(
        stats: &mut StStats,
        per_class: &mut Option<Box<PerClass>>,
        job: &mut Job,
        now: f64,
    ) {
        stats.n += 1;
        if let Some(pc) = per_class {
            pc.acc(now, stats.busy);
            pc.arrive(job.class as usize, now, true);
        }
        job.t_start = now;
    }

    /// Records the departure of job `j` from station stats `st`, and its
    /// times in the station tails if they are kept.
    #[inline(always)]
    pub(super) fn record_departure(stats: &mut StStats, job: &Job, now: f64) {
        Simulation::record_departure_plain(stats, job, now);
        if let Some(t) = &mut stats.tails {
            t.response.record(now - job.t_arr);
            let w = job.t_start - job.t_arr;
            t.wait.record(w);
            t.waited += u64::from(w > 0.0);
        }
    }

    /// [`Simulation::record_departure`] without station tails, for the hot
    /// plain queue and delay (which become [`Kind::Plain`] when tails are
    /// kept).
    #[inline(always)]
    pub(super) fn record_departure_plain(stats: &mut StStats, job: &Job, now: f64) {
        stats.departures += 1;
        stats.sum_resp += now - job.t_arr;
        stats.sum_wait += job.t_start - job.t_arr;
    }

    /// Resets every accumulator: the measured part starts now.
    pub(super) fn start_measuring(&mut self) {
        self.lazy_settle_all();
        let now = self.now;
        if self.trace.is_some() {
            self.trace_warmup_end();
        }
        self.measuring = true;
        self.measure_start = now;
        self.completions = 0;
        for st in &mut self.stations {
            st.stats.acc(now);
            if let Some(pc) = &mut st.per_class {
                pc.acc(now, st.stats.busy);
                pc.reset(now);
            }
            st.stats.reset(now);
            if let Kind::Latch(l) = &mut st.kind {
                l.area_spin = 0.0;
                l.area_sleep = 0.0;
                l.counts_since = now;
                l.area_occ = 0.0;
                l.occ_since = now;
                l.poll_count = 0;
                l.poll_sum = 0.0;
            }
        }
        for b in &mut self.blocking {
            b.reset(now);
        }
        if let Some(ct) = &mut self.client {
            ct.reset(now);
        }
        for cl in &mut self.classes {
            cl.stats.completions = 0;
            cl.stats.sum_resp = 0.0;
            cl.stats.sla_over = 0;
            cl.stats.class_sla_over = 0;
            if cl.stats.hist.count() > 0 {
                cl.stats.hist.clear();
            }
        }
        for reg in &mut self.regions {
            reg.acc(now);
            reg.stats = RegionStats {
                last: now,
                ..RegionStats::default()
            };
        }
        self.marks.clear();
        match self.stop {
            StopPlan::Jobs(n) => self.next_mark = jobs_mark(n, 1),
            StopPlan::Time(t) => self.mark_end = later(now, t),
            StopPlan::AbsTime(t) => self.mark_end = t.max(now),
        }
        if !matches!(self.stop, StopPlan::Jobs(_)) {
            self.fel.push(self.time_mark(1), ev(EV_MARK, 0, 0));
        }
        if self.trace.is_some() {
            self.trace_measure_start();
        }
    }

    /// Absolute time of segment boundary `k` (1..=SEGMENTS) of a timed run;
    /// the last is exactly the end of the run.
    fn time_mark(&self, k: usize) -> f64 {
        if k >= SEGMENTS {
            return self.mark_end;
        }
        let start = self.measure_start;
        start + (self.mark_end - start) * k as f64 / SEGMENTS as f64
    }

    /// A segment boundary of a [`StopPlan::Jobs`] run has been reached:
    /// records the cumulative figures (once per boundary passed, so a run
    /// shorter than [`SEGMENTS`] jobs gets empty segments) and moves the
    /// target to the next boundary, or ends the run after the last.
    #[cold]
    #[inline(never)]
    pub(super) fn on_jobs_mark(&mut self) {
        let StopPlan::Jobs(n) = self.stop else {
            self.next_mark = u64::MAX;
            return;
        };
        self.lazy_settle_all();
        loop {
            self.marks.push(self.figures(false));
            let k = self.marks.len();
            if k >= SEGMENTS {
                self.next_mark = u64::MAX;
                self.finish();
                return;
            }
            let next = jobs_mark(n, k + 1);
            if self.completions < next {
                self.next_mark = next;
                return;
            }
        }
    }

    /// A segment boundary of a timed run: records the cumulative figures and
    /// schedules the next boundary, or ends the run after the last.
    #[cold]
    #[inline(never)]
    pub(super) fn on_time_mark(&mut self) {
        self.lazy_settle_all();
        self.marks.push(self.figures(false));
        let k = self.marks.len();
        if k >= SEGMENTS {
            self.finish();
        } else {
            self.fel.push(self.time_mark(k + 1), ev(EV_MARK, 0, 0));
        }
    }

    /// MSER-5 truncation (observations to discard), when collected.
    pub(crate) fn mser_truncation(&self) -> Option<u64> {
        self.mser.as_deref().map(Mser::truncation)
    }

    /// Interactions completed in the measured part so far.
    pub(crate) fn completions(&self) -> u64 {
        self.completions
    }

    /// The figures of the measured part so far (the whole replication once
    /// [`Simulation::run`] has returned).
    pub fn result(&self) -> ReplicationResult {
        let mut r = self.figures(true);
        r.checkpoints = self.marks.clone();
        r.trace = self.trace_result();
        r.final_state = self.placement();
        r
    }

    /// The figures of the measured part so far, without checkpoints;
    /// percentiles only if `percentiles` (else 0: checkpoints skip them).
    fn figures(&self, percentiles: bool) -> ReplicationResult {
        let now = self.now;
        let t = now - self.measure_start;
        let (system, mut classes) = self.class_figures(t, percentiles);
        // Spinning latch waiters are in a cpu station's `busy` already.
        let mut stations: Vec<ReplicationStation> = (0..self.stations.len())
            .map(|i| self.station_figures(i, t, percentiles))
            .collect();
        let regions = self
            .regions
            .iter()
            .map(|r| {
                let dt = now - r.stats.last;
                let area_inside = r.stats.area_inside + f64::from(r.inside) * dt;
                ReplicationRegion {
                    wait_time_s: ratio(r.stats.sum_wait, r.stats.admitted as f64),
                    mean_waiting: ratio(r.stats.area_waiting + r.queue.len() as f64 * dt, t),
                    mean_inside: ratio(area_inside, t),
                    // Little's law: jobs inside over admissions per second.
                    inside_time_s: ratio(area_inside, r.stats.admitted as f64),
                    utilization: match r.limit {
                        u32::MAX => 0.0,
                        l => ratio(area_inside, t * f64::from(l)),
                    },
                }
            })
            .collect();
        if let Some(ct) = &self.client {
            ct.figures(t, self.now, &self.stations, &mut classes, &mut stations);
        }
        ReplicationResult {
            index: self.index,
            events: self.events,
            measured_time_s: t,
            warmup_time_s: self.measure_start,
            system,
            classes,
            stations,
            regions,
            checkpoints: Vec::new(),
            trace: None,
            final_state: Vec::new(),
        }
    }

    /// The system's and each class's figures over the `t` measured seconds.
    fn class_figures(
        &self,
        t: f64,
        percentiles: bool,
    ) -> (ReplicationClass, Vec<ReplicationClass>) {
        let qs = [0.5, 0.9, 0.95, 0.99, 0.999];
        let class_result = |s: &ClassStats, over: u64| {
            let n = s.completions as f64;
            ReplicationClass {
                completions: s.completions,
                throughput_per_s: ratio(n, t),
                response_time_s: ratio(s.sum_resp, n),
                percentiles_s: if percentiles {
                    s.hist.quantiles(qs)
                } else {
                    [0.0; 5]
                },
                sla_violation: ratio(over as f64, n),
                histogram: (percentiles && s.completions > 0)
                    .then(|| std::sync::Arc::new(s.hist.clone())),
                client: None,
            }
        };
        // A class's P(R > SLA) is against its own SLA; the system's against
        // the run's.
        let classes: Vec<ReplicationClass> = self
            .classes
            .iter()
            .map(|c| class_result(&c.stats, c.stats.class_sla_over))
            .collect();
        let system = if self.classes.len() == 1 {
            let s = &self.classes[0].stats;
            ReplicationClass {
                sla_violation: ratio(s.sla_over as f64, s.completions as f64),
                ..classes[0].clone()
            }
        } else {
            let mut all = ClassStats::default();
            for c in &self.classes {
                all.completions += c.stats.completions;
                all.sum_resp += c.stats.sum_resp;
                all.sla_over += c.stats.sla_over;
                if percentiles {
                    all.hist.merge(&c.stats.hist);
                }
            }
            class_result(&all, all.sla_over)
        };
        (system, classes)
    }

    /// The figures of station `i` over the `t` measured seconds.
    fn station_figures(&self, i: usize, t: f64, percentiles: bool) -> ReplicationStation {
        let now = self.now;
        let st = &self.stations[i];
        let s = &st.stats;
        let per_s = |x: f64| ratio(x, t);
        // Blocking: the waits at this station as a target, and the jobs it
        // holds blocked as a sender.
        let (waited, area_blocked, episodes, sum_blocked) = match self.blocking.get(i) {
            Some(b) => (b.waited, b.area(now), b.episodes, b.sum_blocked),
            None => (0, 0.0, 0, 0.0),
        };
        let (area_n, area_busy) = station_areas(st, now);
        let d = s.departures as f64;
        let grouped = matches!(st.kind, Kind::Group(_));
        // Spin latches: threads polling, and threads asleep or being
        // switched back in after a wake.
        let (spinning, sleeping) = match &st.kind {
            Kind::Latch(l) if l.spin.is_some() => {
                let dt = now - l.counts_since;
                (
                    per_s(l.area_spin + f64::from(l.spinners) * dt),
                    per_s(l.area_sleep + f64::from(l.sleeping()) * dt),
                )
            }
            _ => (0.0, 0.0),
        };
        // Latches with mechanisms: `busy` is "held", so utilization is the
        // held fraction; occupancy counts anyone present.
        let (occupancy, polls, poll_delay) = match &st.kind {
            Kind::Latch(l) => (
                per_s(l.area_occ + if s.n > 0 { now - l.occ_since } else { 0.0 }),
                per_s(l.poll_count as f64),
                ratio(l.poll_sum, l.poll_count as f64),
            ),
            _ => (0.0, 0.0, 0.0),
        };
        ReplicationStation {
            throughput_per_s: per_s(d),
            // `busy` counts blocked servers too (occupied); the serving
            // fraction leaves them out.
            utilization: if st.servers > 0.0 {
                per_s((area_busy - area_blocked).max(0.0)) / st.servers
            } else {
                0.0
            },
            blocked_fraction: if st.servers > 0.0 {
                per_s(area_blocked) / st.servers
            } else {
                0.0
            },
            blocking_time_s: ratio(sum_blocked, episodes as f64),
            blocking_probability: ratio(waited as f64, s.offered as f64),
            mean_jobs: per_s(area_n),
            response_time_s: ratio(s.sum_resp, d),
            wait_time_s: ratio(s.sum_wait, d),
            mean_batch_size: if grouped {
                ratio(s.batch_jobs as f64, s.batches as f64)
            } else {
                0.0
            },
            batches_per_s: if grouped {
                per_s(s.batches as f64)
            } else {
                0.0
            },
            mean_spinning: spinning,
            mean_sleeping: sleeping,
            occupancy,
            polls_per_s: polls,
            mean_poll_delay_s: poll_delay,
            dropped_per_s: per_s(s.dropped as f64),
            loss_probability: ratio(s.dropped as f64, s.offered as f64),
            overload: None,
            classes: st.per_class.as_ref().map_or_else(Vec::new, |pc| {
                // Spinning latch threads hold part of a cpu's busy servers
                // but belong to no class here.
                let spin_cpu = matches!(&st.kind, Kind::V(vc) if !vc.latches.is_empty());
                let servers = if spin_cpu { 0.0 } else { st.servers };
                pc.figures(
                    now,
                    t,
                    s.busy,
                    servers,
                    |c| self.classes[c].stats.completions,
                    percentiles,
                )
            }),
            tails: s
                .tails
                .as_ref()
                .map(|tl| self.tail_figures(s, tl, t, area_n, percentiles)),
        }
    }

    /// A station's distribution figures (`RunConfig::station_tails`) over
    /// the `t` measured seconds, `area_n` being the area under its jobs.
    fn tail_figures(
        &self,
        s: &StStats,
        tl: &StationTails,
        t: f64,
        area_n: f64,
        percentiles: bool,
    ) -> ReplicationTails {
        let per_s = |x: f64| ratio(x, t);
        let dt = self.now - s.last;
        let mean = per_s(area_n);
        let n2 = per_s(tl.area_n2 + f64::from(s.n) * f64::from(s.n) * dt);
        let k = self.jobs_tail_k as usize;
        let at_least = if k >= JOBS_BINS {
            f64::NAN
        } else {
            let mut time: f64 = tl.jobs_time[k..].iter().sum();
            if s.n as usize >= k {
                time += dt;
            }
            per_s(time)
        };
        let q3 = |h: &Histogram| {
            if percentiles {
                h.quantiles([0.5, 0.9, 0.99])
            } else {
                [0.0; 3]
            }
        };
        ReplicationTails {
            response_time_s: q3(&tl.response),
            wait_time_s: q3(&tl.wait),
            wait_probability: ratio(tl.waited as f64, s.departures as f64),
            jobs_variance: (n2 - mean * mean).max(0.0),
            jobs_tail_probability: at_least,
        }
    }
}

/// `a / b`, or 0 when `b` is 0 (a rate over no time, a mean of nothing).
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// The areas under a station's jobs present and busy servers up to `now`.
fn station_areas(st: &StationRt, now: f64) -> (f64, f64) {
    let s = &st.stats;
    if matches!(
        st.kind,
        Kind::Queue { .. } | Kind::Plain { .. } | Kind::Delay
    ) {
        let (area_n, area_busy) = s.plain_areas(now, !matches!(st.kind, Kind::Delay));
        // Debug builds (tests) also integrate the areas the other way
        // (`acc` at every change) and compare.
        #[cfg(debug_assertions)]
        {
            let dt = now - s.last;
            let n = s.area_n + f64::from(s.n) * dt;
            let b = if !matches!(st.kind, Kind::Delay) {
                s.area_busy + f64::from(s.busy) * dt
            } else {
                0.0
            };
            let tol = 1e-6 * (1.0 + n.abs() + b.abs());
            debug_assert!(
                (area_n - n).abs() <= tol && (area_busy - b).abs() <= tol,
                "plain station areas ({area_n}, {area_busy}) differ from \
                 integrated ({n}, {b}): {s:?}"
            );
        }
        (area_n, area_busy)
    } else {
        let dt = now - s.last;
        (
            s.area_n + f64::from(s.n) * dt,
            s.area_busy + f64::from(s.busy) * dt,
        )
    }
}
