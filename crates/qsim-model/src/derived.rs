//! The values of a model's derived metrics (`[metrics]`) in a run's results.

use crate::{DerivedMetric, EvalError, Model};
use qsim_kernel::{Estimate, Network, ReplicationResult, RunResults, estimate};
use thiserror::Error;

/// Why a derived metric has no value in a run.
#[derive(Clone, Debug, PartialEq, Error)]
#[non_exhaustive]
pub enum DerivedError {
    /// Its expression failed in one replication (a division by zero, a
    /// name the network does not have): a mean over the others would hide
    /// the replications it failed in, so there is no value.
    #[error("{error} in replication {replication}")]
    Eval {
        /// The replication's index.
        replication: u32,
        /// Why the expression failed there.
        error: EvalError,
    },
    /// The results hold no replication to evaluate it on (a run's summary
    /// without its replications).
    #[error("no replication results to evaluate it on")]
    NoReplications,
}

/// One derived metric of a run: its mean and 95% CI over the replications,
/// or why it has none.
#[derive(Clone, Debug, PartialEq)]
pub struct DerivedValue {
    /// The metric's name (its key in `[metrics]`).
    pub name: String,
    /// Its estimate, or the reason there is none.
    pub value: Result<Estimate, DerivedError>,
}

impl DerivedMetric {
    /// The metric's mean and 95% CI over `replications` of a run of
    /// `network`: the expression is evaluated on each replication's
    /// figures (see [`metric_value`](crate::metric_value)), and the values
    /// are combined like any other metric. Fails with the first replication
    /// whose figures the expression cannot be evaluated on.
    pub fn estimate(
        &self,
        network: &Network,
        replications: &[ReplicationResult],
    ) -> Result<Estimate, DerivedError> {
        if replications.is_empty() {
            return Err(DerivedError::NoReplications);
        }
        let values = replications
            .iter()
            .map(|rep| {
                let lookup = |name: &str| crate::metric_value(network, rep, name);
                self.expr.eval(&lookup).map_err(|error| DerivedError::Eval {
                    replication: rep.index,
                    error,
                })
            })
            .collect::<Result<Vec<f64>, DerivedError>>()?;
        Ok(estimate(values))
    }
}

impl Model {
    /// Every derived metric of the model evaluated on `results` (a run of
    /// this model's network), in `[metrics]` order. A metric that cannot be
    /// evaluated carries its reason; the others are unaffected.
    pub fn derived_values(&self, results: &RunResults) -> Vec<DerivedValue> {
        self.derived
            .iter()
            .map(|metric| DerivedValue {
                name: metric.name.clone(),
                value: metric.estimate(&self.network, &results.replication_results),
            })
            .collect()
    }
}
