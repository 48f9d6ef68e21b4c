//! Shared helpers: load a model from text, run it, compare with an exact
//! value using the run's own confidence interval.

use qsim_kernel::{Estimate, RunConfig, RunResults, Stop, Warmup};
use qsim_model::{Model, Override, load_str};

/// Loads a model from TOML text (panics with the located errors: a test bug).
pub fn model(text: &str, overrides: &[&str]) -> Model {
    let overrides: Vec<Override> = overrides
        .iter()
        .map(|o| Override::parse(o).unwrap())
        .collect();
    match load_str("test.toml", text, &overrides) {
        Ok(m) => m,
        Err(e) => panic!("test model does not load:\n{e}"),
    }
}

/// Runs a model with `reps` replications of `jobs` completions each.
pub fn run(model: &Model, reps: u32, jobs: u64, warmup: u64) -> RunResults {
    let config = RunConfig {
        seed: 20261122,
        replications: reps,
        stop: Stop::Jobs(jobs),
        warmup: Warmup::Jobs(warmup),
        ..model.run.clone()
    };
    qsim_kernel::run(&model.network, &config).expect("run fails")
}

/// Two-sided 99.9% quantile of Student's t over the 95% one, for `df`
/// degrees of freedom: widening a reported 95% half-width by this factor
/// gives a 99.9% interval, so a correct simulator fails one comparison in a
/// thousand rather than one in twenty.
pub fn widen_95_to_999(df: u32) -> f64 {
    let (t999, t95) = match df {
        4 => (8.610, 2.776),
        9 => (4.781, 2.262),
        19 => (3.883, 2.093),
        29 => (3.659, 2.045),
        _ => panic!("add the t quantiles for {df} degrees of freedom"),
    };
    t999 / t95
}

/// Asserts that `exact` lies in the 99.9% confidence interval of `sim`,
/// widened by `bias` (a relative allowance for a known discretization, such
/// as the 1% bucket width of the percentile histogram). Also asserts the
/// interval is narrow (below `max_rel_ci` of the exact value) so the test
/// can actually fail.
pub fn assert_close(label: &str, sim: Estimate, exact: f64, reps: u32, bias: f64, max_rel_ci: f64) {
    let half = sim.ci95 * widen_95_to_999(reps - 1) + bias * exact.abs();
    assert!(
        (sim.mean - exact).abs() <= half,
        "{label}: simulated {} ± {} (99.9% half-width {half}), exact {exact}",
        sim.mean,
        sim.ci95
    );
    assert!(
        sim.ci95 <= max_rel_ci * exact.abs(),
        "{label}: confidence interval too wide to test anything: ± {} around {}",
        sim.ci95,
        sim.mean
    );
}

/// A response-time mean as an [`Estimate`].
pub fn mean_of(r: &qsim_kernel::ResponseEstimate) -> Estimate {
    Estimate {
        mean: r.mean,
        ci95: r.ci95,
    }
}

/// Runs the built `qsim` binary from the package root.
pub fn qsim(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_qsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("qsim runs")
}

/// The standard error of a run of `qsim`, as text.
pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `qsim` with `args`, asserts success and parses its JSON output.
pub fn qsim_json(args: &[&str]) -> serde_json::Value {
    let out = qsim(args);
    assert!(out.status.success(), "{:?}: {}", args, stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs `qsim` and asserts exit code 2 (a usage error, no panic) with every
/// one of `wanted` in its stderr; returns the output.
pub fn refused(args: &[&str], wanted: &[&str]) -> std::process::Output {
    let out = qsim(args);
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: exit code; stderr:\n{err}"
    );
    assert!(!err.contains("panicked"), "{args:?}: panicked:\n{err}");
    for w in wanted {
        assert!(err.contains(w), "{args:?}: no `{w}` in:\n{err}");
    }
    out
}

/// A model's text built a table at a time, in the order given (stations
/// and regions in the order they are added are the spec order): for tests
/// that write the same workload, station and region tables with other
/// names and numbers. Numbers are written as Rust prints them (`{:?}`), so
/// `1.0` stays `1.0`.
#[derive(Clone, Debug, Default)]
pub struct Toml(pub String);

impl Toml {
    /// A table `[name]` (`workload`, `classes.web`, `stations.cpu`, ...).
    pub fn table(mut self, name: &str) -> Toml {
        if !self.0.is_empty() {
            self.0.push('\n');
        }
        self.0 += &format!("[{name}]\n");
        self
    }

    /// A line `key = value` in the last table.
    pub fn with(mut self, key: &str, value: impl std::fmt::Display) -> Toml {
        self.0 += &format!("{key} = {value}\n");
        self
    }

    /// A closed class in table `name`: `population` users thinking an
    /// exponential `think_s` between interactions along `route` (none: a
    /// routing table follows).
    pub fn closed(self, name: &str, population: u32, think_s: f64, route: &[&str]) -> Toml {
        self.table(name)
            .with("type", "\"closed\"")
            .with("population", population)
            .with("think", exponential(think_s))
            .route(route)
    }

    /// An open class in table `name`: Poisson arrivals of `rate_per_s`
    /// along `route` (none: a routing table follows).
    pub fn open(self, name: &str, rate_per_s: f64, route: &[&str]) -> Toml {
        self.table(name)
            .with("type", "\"open\"")
            .with("rate_per_s", format!("{rate_per_s:?}"))
            .route(route)
    }

    /// A class's `route`, unless it is empty.
    fn route(self, route: &[&str]) -> Toml {
        if route.is_empty() {
            self
        } else {
            self.with("route", format!("{route:?}"))
        }
    }

    /// Station `name` of `kind` with exponential service of mean `mean_s`.
    pub fn station(self, name: &str, kind: &str, mean_s: f64) -> Toml {
        self.table(&format!("stations.{name}"))
            .with("kind", format!("{kind:?}"))
            .with("service", exponential(mean_s))
    }

    /// Region `name` over `stations`, holding at most `limit` jobs.
    pub fn region(self, name: &str, stations: &[&str], limit: u32) -> Toml {
        self.table(&format!("regions.{name}"))
            .with("stations", format!("{stations:?}"))
            .with("limit", limit)
    }

    /// The text.
    pub fn text(&self) -> &str {
        &self.0
    }
}

/// An exponential distribution of mean `mean_s`, as a TOML inline table.
pub fn exponential(mean_s: f64) -> String {
    format!("{{ dist = \"exponential\", mean = {mean_s:?} }}")
}

/// Two open classes `names` at one queue `server` with `servers` servers
/// and `discipline`, each with its own arrival rate and exponential service
/// mean; the first has priority 1.
pub fn open_pair(
    names: [&str; 2],
    discipline: &str,
    servers: u32,
    rates: [f64; 2],
    means: [f64; 2],
) -> Toml {
    let [a, b] = names;
    Toml::default()
        .open(&format!("classes.{a}"), rates[0], &["server"])
        .with("priority", 1)
        .open(&format!("classes.{b}"), rates[1], &["server"])
        .table("stations.server")
        .with("kind", "\"queue\"")
        .with("servers", servers)
        .with("discipline", format!("{discipline:?}"))
        .with("service", exponential(means[0]))
        .with(
            "service_by_class",
            format!("{{ {b} = {} }}", exponential(means[1])),
        )
}
