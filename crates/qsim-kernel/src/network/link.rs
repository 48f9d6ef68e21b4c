//! `link` stations (a serial channel with a round-trip time): parameters
//! and range rules.

use super::{Check, Field};

/// Parameters of a `link` station.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// Round trips in flight at once, at least 1.
    pub pipeline: u32,
    /// Jobs carried per round trip, at least 1.
    pub max_batch: u32,
}

impl LinkSpec {
    pub(super) fn check(&self, c: &mut Check<'_>) {
        if self.pipeline == 0 {
            c.error(
                &[Field::Key("pipeline")],
                "expected a pipeline depth >= 1, found 0",
            );
        }
        if self.max_batch == 0 {
            c.error(
                &[Field::Key("max_batch")],
                "expected a batch size >= 1, found 0",
            );
        }
    }
}
