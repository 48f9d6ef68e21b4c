//! `latch` stations (mutual exclusion) with their mechanisms, NUMA
//! hand-offs and spin-waiting: parameters and range rules.

use super::{Check, Discipline, Field, StationId, fmt_num};

/// Parameters of a `latch` station.
#[derive(Clone, Debug, Default)]
pub struct LatchSpec {
    /// NUMA hand-off costs; `None` for a plain latch.
    pub numa: Option<NumaSpec>,
    /// Spin-then-sleep waiting; `None` means waiters sleep at once and are
    /// handed the latch in FIFO order.
    pub spin: Option<SpinSpec>,
    /// Whom a release wakes.
    pub wake: Wake,
}

/// NUMA contention: the latch's cache line moves between cores and nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct NumaSpec {
    /// NUMA nodes, at least 1.
    pub nodes: u32,
    /// Cores per node, at least 1.
    pub cores_per_node: u32,
    /// Extra time to hand the latch to a thread on the same node, seconds.
    pub local_handoff_s: f64,
    /// Extra time to hand the latch to a thread on another node, seconds.
    pub remote_handoff_s: f64,
    /// Extra time when the next holder had been migrated off its core (its
    /// cache is cold), seconds.
    pub migration_s: f64,
}

/// Spin-wait before sleeping (InnoDB-style `spin_wait_delay`).
#[derive(Clone, Debug, PartialEq)]
pub struct SpinSpec {
    /// `spin_wait_delay` d: the bound of a poll's delay, in units of
    /// `pauses_per_unit` PAUSE instructions (see [`PollDelay`]).
    pub spin_wait_delay: f64,
    /// How a poll's delay is drawn from d.
    pub poll_delay: PollDelay,
    /// Cycles per PAUSE instruction (10 on Broadwell, 140 on Skylake).
    pub pause_cycles: f64,
    /// PAUSE instructions per unit of delay (50 in InnoDB).
    pub pauses_per_unit: f64,
    /// Clock rate in GHz.
    pub clock_ghz: f64,
    /// Polls before the waiter gives up and sleeps.
    pub spin_rounds: u32,
    /// Cost of a sleep and wake-up (context switch), seconds of CPU.
    pub context_switch_s: f64,
    /// The CPU the waiters spin on, if any: a PS queue. While spinning,
    /// being switched back in or holding the latch, a thread counts as one
    /// more job there for sharing and utilization, and its poll waits,
    /// switch-in and critical section go at its share of a server.
    pub cpu: Option<StationId>,
    /// Run the spin mechanism poll by poll (one event per poll), the
    /// reference the default event-saving path is tested against; the two
    /// give the same distribution of outcomes.
    #[doc(hidden)]
    pub poll_by_poll: bool,
}

/// The distribution of one poll's delay (`ut_delay`) given
/// `spin_wait_delay` d, with u = pauses_per_unit·pause_cycles/clock_ghz ns
/// the length of one unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PollDelay {
    /// InnoDB: a whole number of units, uniform on {0, 1, …, d − 1} (mean
    /// (d − 1)/2 units); d must be a whole number; d = 0 means no delay.
    #[default]
    Units,
    /// A continuous uniform on [0, d·u) (mean d/2 units).
    Uniform,
}

impl SpinSpec {
    /// Length of one unit of delay in seconds of CPU.
    pub fn unit_s(&self) -> f64 {
        self.pauses_per_unit * self.pause_cycles / self.clock_ghz * 1e-9
    }

    /// Mean delay of one poll in seconds of CPU (the exact mean of the
    /// `poll_delay` distribution).
    pub fn mean_poll_delay_s(&self) -> f64 {
        let d = self.spin_wait_delay;
        let units = match self.poll_delay {
            PollDelay::Units => (d - 1.0).max(0.0) / 2.0,
            PollDelay::Uniform => d / 2.0,
        };
        units * self.unit_s()
    }
}

/// Whom a latch release wakes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Wake {
    /// The first sleeper only.
    #[default]
    One,
    /// Every sleeper (thundering herd): all wake, one wins, the rest sleep
    /// again. Only meaningful with a spin mechanism: without one, waiters
    /// are handed the latch in FIFO order and this behaves like `One`.
    All,
}

impl LatchSpec {
    pub(super) fn check(&self, c: &mut Check<'_>) {
        if let Some(n) = &self.numa {
            let numa = Field::Key("numa");
            for (k, v, what) in [
                ("nodes", n.nodes, "a number of nodes"),
                ("cores_per_node", n.cores_per_node, "a number of cores"),
            ] {
                if v == 0 {
                    c.error(
                        &[numa, Field::Key(k)],
                        format!("expected {what} >= 1, found 0"),
                    );
                }
            }
            for (k, v) in [
                ("local_handoff_s", n.local_handoff_s),
                ("remote_handoff_s", n.remote_handoff_s),
                ("migration_s", n.migration_s),
            ] {
                c.time(&[numa, Field::Key(k)], v);
            }
        }
        let Some(s) = &self.spin else { return };
        let spin = Field::Key("spin");
        for (k, v, what) in [
            ("spin_wait_delay", s.spin_wait_delay, "a delay in units"),
            ("pause_cycles", s.pause_cycles, "a number of cycles"),
            ("pauses_per_unit", s.pauses_per_unit, "a number of pauses"),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                c.error(
                    &[spin, Field::Key(k)],
                    format!("expected {what} >= 0, found {}", fmt_num(v)),
                );
            }
        }
        let d = s.spin_wait_delay;
        if s.poll_delay == PollDelay::Units
            && d.is_finite()
            && d >= 0.0
            && (d.fract() != 0.0 || d > 1e9)
        {
            c.error(
                &[spin, Field::Key("spin_wait_delay")],
                format!(
                    "expected a whole number of units up to 1e9 with poll_delay = \"units\", found {}; use poll_delay = \"uniform\" for a continuous delay",
                    fmt_num(d)
                ),
            );
        }
        c.time(&[spin, Field::Key("context_switch_s")], s.context_switch_s);
        if !(s.clock_ghz.is_finite() && s.clock_ghz > 0.0) {
            c.error(
                &[spin, Field::Key("clock_ghz")],
                format!(
                    "expected a positive clock rate, found {}",
                    fmt_num(s.clock_ghz)
                ),
            );
        }
        let Some(cpu) = s.cpu else { return };
        let at = [spin, Field::Key("cpu")];
        match c.station(cpu) {
            Err(()) => c.error(&at, format!("no station with index {cpu}")),
            // The cpu could not be read: its own errors say why.
            Ok(None) => {}
            // Spinners take a processor-sharing slice of the cpu; other
            // disciplines have no slice to give.
            Ok(Some(st)) => {
                if st.kind.as_queue().is_none_or(|(_, d)| d != Discipline::Ps) {
                    let name = st.name.clone();
                    c.error(
                        &at,
                        format!(
                            "station {name} is not a PS queue; spinning waiters share a cpu's capacity with its jobs, so spin.cpu must name a queue with discipline = \"ps\""
                        ),
                    );
                }
            }
        }
    }
}
