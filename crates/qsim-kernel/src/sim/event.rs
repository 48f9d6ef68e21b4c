//! Event encoding: an event is a packed `u64` (kind, two operands) in the
//! future-event list, so scheduling one allocates nothing.

/// "No station" / "leave the network" marker in routing.
pub(super) const EXIT: u32 = u32::MAX;
/// Job slot id meaning "none".
pub(super) const NONE: u32 = u32::MAX;

// Event kinds (low 8 bits of a packed event); operand `a` is bits 8..32,
// operand `b` bits 32..64.
pub(super) const EV_ARRIVAL: u64 = 0; // a = class
pub(super) const EV_THINK: u64 = 1; // b = job
pub(super) const EV_DONE: u64 = 2; // a = station, b = job (fixed-speed completion)
pub(super) const EV_VDONE: u64 = 3; // a = station, b = version (virtual-clock completion)
pub(super) const EV_WARMUP: u64 = 4; // control: end of a timed warm-up
pub(super) const EV_STOP: u64 = 5; // control: end of a timed run
pub(super) const EV_BATCH_TIMER: u64 = 6; // a = station, b = version
pub(super) const EV_GROUP_DONE: u64 = 7; // a = station, b = slot (batch / link)
pub(super) const EV_LATCH_GRANT: u64 = 8; // a = station, b = job: hand-off finished, job holds the latch
pub(super) const EV_LATCH_POLL: u64 = 9; // a = station, b = version: a waiter polls or is switched back in
pub(super) const EV_EXIT_DONE: u64 = 10; // a = station, b = job: as EV_DONE, and the job then leaves the network
pub(super) const EV_LATCH_DONE: u64 = 11; // a = station, b = version: critical section over
pub(super) const EV_MARK: u64 = 12; // control: a batch boundary of a timed run (the last ends it)
pub(super) const EV_PLAIN_DONE: u64 = 40; // a = station, b = job (completion at a `Kind::Plain` station)
pub(super) const EV_SCHEDULE: u64 = 13; // a = schedule, b = step: a population step
pub(super) const EV_SCHED_ARRIVAL: u64 = 14; // a = schedule: an arrival of a rate-scheduled class
pub(super) const EV_TRACE: u64 = 15; // b = version: a trace interval boundary
pub(super) const EV_ARRIVAL_AT: u64 = 16; // a = class, b = station: an arrival of a class whose route is that one station
pub(super) const EV_PSDONE: u64 = 17; // a = station, b = slot: a completion at a spin cpu in direct mode
pub(super) const EV_CAPACITY: u64 = 18; // a = station schedule, b = step: a station's servers or speed change
// Client mode (see `client`):
pub(super) const EV_TIMEOUT: u64 = 50; // a = attempt tag, b = job: the client gives up on the attempt
pub(super) const EV_RETRY: u64 = 51; // b = job: a client's retry after its backoff
pub(super) const EV_RENEGE: u64 = 52; // a = wait tag, b = job: a waiting job's patience runs out

#[inline(always)]
pub(super) fn ev(kind: u64, a: u32, b: u32) -> u64 {
    kind | (u64::from(a) << 8) | (u64::from(b) << 32)
}

/// Operand `a` of a packed event (a station or class index).
#[inline(always)]
pub(super) fn operand_a(e: u64) -> usize {
    ((e >> 8) & 0xFF_FFFF) as usize
}

/// Operand `b` of a packed event.
#[inline(always)]
pub(super) fn operand_b(e: u64) -> u32 {
    (e >> 32) as u32
}

/// Adds a non-negative duration to a time without ever reaching infinity.
/// The simulation's clock is never -0.0 (it starts at +0.0 and takes the
/// times the event list hands out, whose bits are ordered as non-negative),
/// so neither is the result: it may go to `Fel::push_unsigned`.
#[inline(always)]
pub(super) fn later(now: f64, d: f64) -> f64 {
    (now + d).min(f64::MAX)
}
