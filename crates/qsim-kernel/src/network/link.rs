//! `link` stations (a serial channel with a round-trip time): parameters
//! and range rules.

use super::{Check, Field};

/// Deepest pipeline of a link: the simulator allocates a slot per round
/// trip in flight when a replication starts (2^20 slots is about 30 MB).
pub const MAX_PIPELINE: u32 = 1 << 20;

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
        } else if self.pipeline > MAX_PIPELINE {
            c.error(
                &[Field::Key("pipeline")],
                format!(
                    "expected a pipeline depth of at most {MAX_PIPELINE}, found {} (the simulator keeps a slot per round trip in flight)",
                    self.pipeline
                ),
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
