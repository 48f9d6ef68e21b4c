//! What "station s is f times as fast" means for each kind of station (a
//! what-if's speed-up). Each law changes only the work the station does,
//! never its policies (servers, batch limits, timers) or the hardware
//! costs of passing a latch:
//!
//! | kind | with a speed curve | without one |
//! |---|---|---|
//! | delay, queue | every rate of the curve × f | service / f |
//! | latch (plain, NUMA, spin) | every rate × f | hold time (service) / f; hand-off, migration and spin costs unchanged |
//! | batch | (no curve) | batch service / f and `per_job_s` / f; `max_batch`, `max_wait_s` unchanged |
//! | link | (no curve) | round trip (service) / f; `pipeline`, `max_batch` unchanged |
//! | fork, join | n/a: they do no work | |
//!
//! The same uniform draws give the scaled durations (see
//! [`Dist::scaled`](crate::Dist::scaled)), so a baseline and a sped-up run
//! with the same seed use common random numbers.

use super::{BatchSpec, Speed, StationKind, StationSpec};
use thiserror::Error;

/// Why a station cannot be sped up.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("station {station}: {message}")]
pub struct SpeedUpError {
    /// The station's name.
    pub station: String,
    /// What is wrong.
    pub message: String,
}

impl StationSpec {
    /// This station `factor` times as fast (`factor` > 0; 1.25 is a 25%
    /// speed-up), by the law of its kind (see the module docs).
    pub fn sped_up(&self, factor: f64) -> Result<StationSpec, SpeedUpError> {
        let err = |message: String| SpeedUpError {
            station: self.name.clone(),
            message,
        };
        if !(factor.is_finite() && factor > 0.0) {
            return Err(err(format!(
                "expected a speed-up factor > 0, found {factor}"
            )));
        }
        let mut out = self.clone();
        if !self.kind.takes_service() {
            return Err(err(
                "a fork or join does no work, so it cannot be sped up; speed up the stations its sub-jobs visit"
                    .into(),
            ));
        }
        if let Some(speed) = &self.speed {
            // The curve sets the rate; the service gives only the shape.
            out.speed = Some(speed.sped_up(factor));
            return Ok(out);
        }
        // The law of each kind: a batch's per-job time scales too; the
        // others are their service times alone.
        match &self.kind {
            StationKind::Batch(b) => out.kind = StationKind::Batch(b.sped_up(factor)),
            StationKind::Delay
            | StationKind::Queue { .. }
            | StationKind::Latch(_)
            | StationKind::Link(_)
            | StationKind::Fork(_)
            | StationKind::Join(_) => {}
        }
        out.service = self
            .service
            .iter()
            .map(|d| d.as_ref().map(|d| d.scaled(1.0 / factor)).transpose())
            .collect::<Result<_, _>>()
            .map_err(|e| err(e.to_string()))?;
        Ok(out)
    }
}

impl Speed {
    /// The curve with every rate multiplied by `factor`.
    pub fn sped_up(&self, factor: f64) -> Speed {
        match self {
            Speed::Table(points) => {
                Speed::Table(points.iter().map(|&(n, r)| (n, r * factor)).collect())
            }
            Speed::Usl {
                sigma,
                kappa,
                lambda,
            } => Speed::Usl {
                sigma: *sigma,
                kappa: *kappa,
                lambda: lambda * factor,
            },
        }
    }
}

impl BatchSpec {
    /// The batch's per-job cost divided by `factor` (its size limit and
    /// timer are policies and stay).
    pub fn sped_up(&self, factor: f64) -> BatchSpec {
        BatchSpec {
            per_job_s: self.per_job_s / factor,
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::Dist;
    use crate::network::{Discipline, ForkSpec, LatchSpec, Spread};
    use crate::rng::{service_stream, stream};

    fn station(kind: StationKind, speed: Option<Speed>) -> StationSpec {
        StationSpec {
            name: "s".into(),
            kind,
            service: vec![Some(Dist::erlang(2, 0.01).unwrap())],
            speed,
        }
    }

    #[test]
    fn every_kind_has_a_law() {
        let queue = StationKind::Queue {
            servers: 2,
            discipline: Discipline::Fcfs,
        };
        let q = station(queue.clone(), None).sped_up(2.0).unwrap();
        assert!((q.service[0].as_ref().unwrap().mean() - 0.005).abs() < 1e-15);
        let usl = Speed::Usl {
            sigma: 1.0,
            kappa: 0.01,
            lambda: 100.0,
        };
        let c = station(StationKind::Latch(LatchSpec::default()), Some(usl.clone()))
            .sped_up(1.25)
            .unwrap();
        assert_eq!(c.speed.as_ref().unwrap().rate(7.0), usl.rate(7.0) * 1.25);
        assert!((c.service[0].as_ref().unwrap().mean() - 0.01).abs() < 1e-15);
        let b = BatchSpec {
            max_batch: 8,
            max_wait_s: Some(0.001),
            per_job_s: 0.0002,
        };
        let sb = station(StationKind::Batch(b), None).sped_up(2.0).unwrap();
        let StationKind::Batch(sb_kind) = &sb.kind else {
            panic!("a batch stays a batch")
        };
        assert_eq!(sb_kind.per_job_s, 0.0001);
        assert_eq!(sb_kind.max_wait_s, Some(0.001));
        let fork = StationKind::Fork(ForkSpec {
            fan_out: 1,
            targets: vec![(0, 1.0)],
            spread: Spread::Even,
            join: 1,
            routes: Vec::new(),
        });
        assert!(station(fork, None).sped_up(2.0).is_err());
        assert!(station(queue, None).sped_up(0.0).is_err());
    }

    #[test]
    fn scaled_draws_use_the_same_numbers() {
        for d in [
            Dist::exponential(0.01).unwrap(),
            Dist::erlang(3, 0.01).unwrap(),
            Dist::gamma(0.5, 0.02).unwrap(),
            Dist::lognormal(-4.0, 0.5).unwrap(),
            Dist::hyperexponential(0.3, 0.001, 0.02).unwrap(),
        ] {
            let k = 0.8;
            let s = d.scaled(k).unwrap();
            let mut a = stream(7, 0, service_stream(0));
            let mut b = stream(7, 0, service_stream(0));
            for _ in 0..100 {
                let (x, y) = (d.sample(&mut a), s.sample(&mut b));
                assert!(
                    (y - k * x).abs() <= 1e-12 * x.max(1e-300),
                    "{d:?}: {y} vs {x}"
                );
            }
        }
    }
}
