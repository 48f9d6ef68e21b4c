//! Typed settings of a network: the operating points and changes of a
//! what-if on a network built in code, without key-path strings.
//!
//! A [`Setting`] changes one thing of a [`NetworkSpec`] (a class's
//! population or arrival rate, a station's servers, mean service time or
//! speed); [`adjusted`] applies a list of them to a [`Network`] and checks
//! the result like a loaded model (the kernel's rules, then stability).
//! [`crate::what_if_network`] takes operating points as lists of settings
//! and [`crate::Change::Settings`] as a change; `qsim whatif --speedup`
//! runs [`Setting::SpeedUp`].

use qsim_kernel::{Network, NetworkSpec, StationKind, Workload};
use std::fmt;

/// One typed setting of a network.
#[derive(Clone, Debug, PartialEq)]
pub enum Setting {
    /// The number of jobs of a closed class (`class`: its name, or `None`
    /// for the only class).
    Population {
        /// The class's name; `None`: the network's only class.
        class: Option<String>,
        /// Jobs, at least 1.
        jobs: u32,
    },
    /// The arrival rate of an open class: its interarrival distribution
    /// rescaled to mean 1/rate (same shape).
    ArrivalRate {
        /// The class's name; `None`: the network's only class.
        class: Option<String>,
        /// Arrivals per second, > 0.
        per_s: f64,
    },
    /// The servers of a queue station.
    Servers {
        /// The station's name.
        station: String,
        /// Servers, at least 1.
        servers: u32,
    },
    /// A station's mean service time: each class's service distribution
    /// rescaled to this mean (same shape).
    ServiceMean {
        /// The station's name.
        station: String,
        /// Mean service time in seconds, > 0.
        mean_s: f64,
    },
    /// A station `factor` times as fast, by the speed-up law of its kind
    /// ([`qsim_kernel::StationSpec::sped_up`]).
    SpeedUp {
        /// The station's name.
        station: String,
        /// How many times as fast, > 0 (1.25: a 25% speed-up).
        factor: f64,
    },
}

impl fmt::Display for Setting {
    /// How the setting reads in reports: `population=20`,
    /// `classes.web.rate_per_s=50`, `stations.cpu.servers=2`,
    /// `stations.cpu.service.mean=0.01`, `speedup cpu x1.25`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let class = |c: &Option<String>| {
            c.as_ref()
                .map_or(String::new(), |c| format!("classes.{c}."))
        };
        match self {
            Setting::Population { class: c, jobs } => write!(f, "{}population={jobs}", class(c)),
            Setting::ArrivalRate { class: c, per_s } => {
                write!(f, "{}rate_per_s={per_s}", class(c))
            }
            Setting::Servers { station, servers } => {
                write!(f, "stations.{station}.servers={servers}")
            }
            Setting::ServiceMean { station, mean_s } => {
                write!(f, "stations.{station}.service.mean={mean_s}")
            }
            Setting::SpeedUp { station, factor } => write!(f, "speedup {station} x{factor}"),
        }
    }
}

impl Setting {
    /// Applies the setting to `spec`; why not, naming what is wrong.
    pub fn apply(&self, spec: &mut NetworkSpec) -> Result<(), String> {
        match self {
            Setting::Population { class, jobs } => {
                let c = class_index(spec, class.as_deref())?;
                if *jobs == 0 {
                    return Err(format!("{self}: expected a population of at least 1"));
                }
                match &mut spec.classes[c].workload {
                    Workload::Closed { population, .. } => *population = *jobs,
                    Workload::Open { .. } => {
                        return Err(format!(
                            "{self}: class {} is open (arrivals from outside); a population applies to a closed class",
                            spec.classes[c].name
                        ));
                    }
                }
            }
            Setting::ArrivalRate { class, per_s } => {
                let c = class_index(spec, class.as_deref())?;
                if !(per_s.is_finite() && *per_s > 0.0) {
                    return Err(format!("{self}: expected a positive arrival rate"));
                }
                match &mut spec.classes[c].workload {
                    Workload::Open { interarrival } => {
                        *interarrival = interarrival
                            .scaled(1.0 / (per_s * interarrival.mean()))
                            .map_err(|e| format!("{self}: {e}"))?;
                    }
                    Workload::Closed { .. } => {
                        return Err(format!(
                            "{self}: class {} is closed (a fixed population); an arrival rate applies to an open class",
                            spec.classes[c].name
                        ));
                    }
                }
            }
            Setting::Servers { station, servers } => {
                let s = station_index(spec, station, "set the servers of")?;
                if *servers == 0 {
                    return Err(format!("{self}: expected at least 1 server"));
                }
                match &mut spec.stations[s].kind {
                    StationKind::Queue { servers: n, .. } => *n = *servers,
                    _ => {
                        return Err(format!(
                            "{self}: station {station} is not a queue; servers apply to a queue station"
                        ));
                    }
                }
            }
            Setting::ServiceMean { station, mean_s } => {
                let s = station_index(spec, station, "set the service time of")?;
                if !(mean_s.is_finite() && *mean_s > 0.0) {
                    return Err(format!("{self}: expected a positive mean service time"));
                }
                let st = &mut spec.stations[s];
                if st.speed.is_some() || !st.kind.takes_service() {
                    return Err(format!(
                        "{self}: station {station} has no service time of its own to set (a speed curve sets its rate, or it does no work); use a speed-up"
                    ));
                }
                for d in st.service.iter_mut().flatten() {
                    *d = d
                        .scaled(mean_s / d.mean())
                        .map_err(|e| format!("{self}: {e}"))?;
                }
            }
            Setting::SpeedUp { station, factor } => {
                let s = station_index(spec, station, "speed up")?;
                spec.stations[s] = spec.stations[s]
                    .sped_up(*factor)
                    .map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }
}

fn class_index(spec: &NetworkSpec, class: Option<&str>) -> Result<usize, String> {
    let names = || {
        spec.classes
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match class {
        None if spec.classes.len() == 1 => Ok(0),
        None => Err(format!(
            "the network has {} classes; name the class (one of {})",
            spec.classes.len(),
            names()
        )),
        Some(c) => spec
            .classes
            .iter()
            .position(|x| x.name == c)
            .ok_or_else(|| format!("no class named `{c}`; the classes are {}", names())),
    }
}

fn station_index(spec: &NetworkSpec, station: &str, verb: &str) -> Result<usize, String> {
    spec.stations
        .iter()
        .position(|s| s.name == station)
        .ok_or_else(|| {
            let names: Vec<&str> = spec.stations.iter().map(|s| s.name.as_str()).collect();
            format!(
                "no station named `{station}` to {verb}; the stations are {}",
                names.join(", ")
            )
        })
}

/// `network` with `settings` applied in order and checked like a loaded
/// model: the kernel's rules, then stability (a saturated station has no
/// steady state to compare). Errors name `what` (e.g. `cpu sped up x1.25`)
/// and the operating point `at` (empty: none), and end with `hint`.
pub fn adjusted(
    network: &Network,
    settings: &[Setting],
    what: &str,
    at: &str,
    hint: &str,
) -> Result<Network, String> {
    let mut spec = network.spec().clone();
    for s in settings {
        s.apply(&mut spec)?;
    }
    let net = network.rebuilt(spec).map_err(|errs| {
        format!(
            "{what}: {}",
            errs.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        )
    })?;
    let unstable = qsim_model::instability(&net);
    if !unstable.is_empty() {
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" at {at}")
        };
        return Err(format!("{what}{at}: {}{hint}", unstable.join("; ")));
    }
    Ok(net)
}

#[cfg(test)]
mod tests {
    use super::*;
    use qsim_kernel::{ClassSpec, Discipline, Dist, Routing, StationSpec};

    fn open_queue() -> NetworkSpec {
        NetworkSpec {
            stations: vec![StationSpec {
                name: "cpu".into(),
                kind: StationKind::Queue {
                    servers: 1,
                    discipline: Discipline::Fcfs,
                },
                service: vec![Some(Dist::exponential(0.01).expect("valid"))],
                speed: None,
            }],
            classes: vec![ClassSpec {
                name: "web".into(),
                workload: Workload::Open {
                    interarrival: Dist::exponential(0.02).expect("valid"),
                },
                routing: Routing::Sequence(vec![0]),
                priority: 0,
            }],
            ..NetworkSpec::default()
        }
    }

    #[test]
    fn settings_change_what_they_name() {
        let mut spec = open_queue();
        Setting::ArrivalRate {
            class: None,
            per_s: 80.0,
        }
        .apply(&mut spec)
        .expect("an open class");
        let Workload::Open { interarrival } = &spec.classes[0].workload else {
            panic!("still open")
        };
        assert!((interarrival.mean() - 1.0 / 80.0).abs() < 1e-15);
        Setting::ServiceMean {
            station: "cpu".into(),
            mean_s: 0.008,
        }
        .apply(&mut spec)
        .expect("a queue");
        let mean = spec.stations[0].service[0].as_ref().expect("served").mean();
        assert!((mean - 0.008).abs() < 1e-15);
        Setting::Servers {
            station: "cpu".into(),
            servers: 3,
        }
        .apply(&mut spec)
        .expect("a queue");
        assert_eq!(spec.stations[0].kind.as_queue().map(|q| q.0), Some(3));
    }

    #[test]
    fn a_setting_that_does_not_fit_says_why() {
        let mut spec = open_queue();
        let err = |s: Setting, spec: &mut NetworkSpec| s.apply(spec).expect_err("refused");
        let e = err(
            Setting::Population {
                class: None,
                jobs: 5,
            },
            &mut spec,
        );
        assert!(e.contains("class web is open"), "{e}");
        let e = err(
            Setting::Servers {
                station: "disk".into(),
                servers: 2,
            },
            &mut spec,
        );
        assert!(
            e.contains("no station named `disk`") && e.contains("cpu"),
            "{e}"
        );
        let e = err(
            Setting::ArrivalRate {
                class: Some("batch".into()),
                per_s: 1.0,
            },
            &mut spec,
        );
        assert!(e.contains("no class named `batch`"), "{e}");
        let e = err(
            Setting::ServiceMean {
                station: "cpu".into(),
                mean_s: -1.0,
            },
            &mut spec,
        );
        assert!(e.contains("positive mean service time"), "{e}");
    }

    #[test]
    fn an_unstable_operating_point_is_refused() {
        let net = Network::new(open_queue()).expect("valid");
        let e = adjusted(
            &net,
            &[Setting::ArrivalRate {
                class: None,
                per_s: 150.0,
            }],
            "the operating point rate_per_s=150",
            "",
            "",
        )
        .expect_err("utilization 1.5");
        assert!(e.starts_with("the operating point rate_per_s=150: "), "{e}");
    }
}
