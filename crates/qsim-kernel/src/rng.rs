//! Random streams.
//!
//! Every stream is a `Xoshiro256PlusPlus` whose 256-bit state is derived
//! from (root seed, replication index, stream id) by chaining SplitMix64
//! (a strong 64-bit mixer) over the three numbers and then expanding the
//! result with four more SplitMix64 outputs. A stream therefore depends on
//! nothing else — not on the thread, the order in which replications run, or
//! how many other streams exist — which is what makes results identical at
//! any thread count.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator used for every stream.
pub type SimRng = Xoshiro256PlusPlus;

/// One step of SplitMix64 (Steele, Lea, Flood 2014): advances `state` and
/// returns a well-mixed output.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Stream id of the service times of station `s`.
pub fn service_stream(s: usize) -> u64 {
    (1 << 32) | s as u64
}

/// Stream id of the mechanisms of station `s` (latch, fork spread, ...).
pub fn mechanism_stream(s: usize) -> u64 {
    (2 << 32) | s as u64
}

/// Stream id of the arrivals or think times of class `c`.
pub fn class_stream(c: usize) -> u64 {
    (3 << 32) | c as u64
}

/// Stream id of the routing decisions taken on leaving station `s`.
///
/// One stream per station (and per class for the first station of an
/// interaction, [`entry_routing_stream`]) rather than one shared by all
/// draws: a shared stream is consumed in event order, so any change of
/// timing anywhere would shift every later routing draw. With a stream per
/// decision point, two runs of slightly different models (a what-if) route
/// the k-th job leaving a station the same way, which is what makes their
/// difference precise (common random numbers).
pub fn routing_stream(s: usize) -> u64 {
    (4 << 32) | s as u64
}

/// Stream id of the routing decisions of class `c` when an interaction
/// starts (after thinking or arriving).
pub fn entry_routing_stream(c: usize) -> u64 {
    (5 << 32) | c as u64
}

/// The generator of stream `stream` of replication `replication` under `seed`.
pub fn stream(seed: u64, replication: u32, stream: u64) -> SimRng {
    let mut s = seed;
    let a = splitmix64(&mut s);
    let mut s = a ^ u64::from(replication).wrapping_mul(0xD1B5_4A32_D192_ED03);
    let b = splitmix64(&mut s);
    let mut s = b ^ stream.wrapping_mul(0xAEF1_7502_108E_F2D9);
    let mut state = splitmix64(&mut s);
    let mut bytes = [0u8; 32];
    for chunk in bytes.chunks_exact_mut(8) {
        chunk.copy_from_slice(&splitmix64(&mut state).to_le_bytes());
    }
    // An all-zero state would be a fixed point; SplitMix64 outputs are a
    // bijection of distinct inputs so four zeros cannot occur, but
    // `from_seed` also guards against it.
    Xoshiro256PlusPlus::from_seed(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_differ_and_repeat() {
        let mut a = stream(1, 0, service_stream(0));
        let mut b = stream(1, 0, service_stream(0));
        let mut c = stream(1, 1, service_stream(0));
        let mut d = stream(1, 0, service_stream(1));
        let x = a.next_u64();
        assert_eq!(x, b.next_u64());
        assert_ne!(x, c.next_u64());
        assert_ne!(x, d.next_u64());
    }
}
