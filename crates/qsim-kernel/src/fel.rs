//! The future-event list: a 4-ary min-heap of events keyed by
//! (time bits, sequence number).
//!
//! Times are finite and non-negative, so the IEEE-754 bit pattern of a time
//! orders like the number itself and the heap compares plain integers. The
//! sequence number is the order in which events were scheduled; it breaks
//! ties between equal times, which gives the kernel's rule for simultaneous
//! events: **events with equal times are processed in the order they were
//! scheduled (FIFO)**. An event is a packed `u64` (kind and operands), so
//! scheduling never allocates once the heap has grown to its working size.

/// One scheduled event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Bit pattern of the event time.
    pub t: u64,
    /// Scheduling order, unique per list.
    pub seq: u64,
    /// The packed event.
    pub ev: u64,
}

impl Entry {
    /// The event time in seconds.
    #[inline]
    pub fn time(&self) -> f64 {
        f64::from_bits(self.t)
    }
}

#[inline(always)]
fn less(a: &Entry, b: &Entry) -> bool {
    // Lexicographic (t, seq) as one 128-bit compare: compiles to cmp/sbb
    // without a branch, so choosing a child in the heap does not mispredict.
    ((u128::from(a.t) << 64) | u128::from(a.seq)) < ((u128::from(b.t) << 64) | u128::from(b.seq))
}

/// A 4-ary min-heap of [`Entry`] with FIFO order among equal times.
#[derive(Clone, Debug, Default)]
pub(crate) struct Fel {
    heap: Vec<Entry>,
    seq: u64,
}

impl Fel {
    /// An empty list.
    pub fn new() -> Fel {
        Fel {
            heap: Vec::with_capacity(64),
            seq: 0,
        }
    }

    /// Number of scheduled events (stale ones included).
    #[allow(dead_code)]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Schedules `ev` at `t` seconds (`t` finite and >= 0).
    #[inline(always)]
    pub fn push(&mut self, t: f64, ev: u64) {
        debug_assert!(t.is_finite() && t >= 0.0, "bad event time {t}");
        // `+ 0.0` turns a -0.0 into +0.0 so that its bits order correctly.
        let e = Entry {
            t: (t + 0.0).to_bits(),
            seq: self.seq,
            ev,
        };
        self.seq += 1;
        let mut i = self.heap.len();
        self.heap.push(e);
        let h = self.heap.as_mut_ptr();
        // SAFETY: every index used is < len: i starts at len − 1 (the slot
        // just pushed) and only decreases to parents (i − 1) / 4.
        unsafe {
            while i > 0 {
                let p = (i - 1) / 4;
                if less(&e, &*h.add(p)) {
                    *h.add(i) = *h.add(p);
                    i = p;
                } else {
                    break;
                }
            }
            *h.add(i) = e;
        }
    }

    /// Removes and returns the earliest event (the first scheduled among
    /// equal times).
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Entry> {
        let last = self.heap.pop()?;
        let n = self.heap.len();
        if n == 0 {
            return Some(last);
        }
        let h = self.heap.as_mut_ptr();
        // SAFETY: indices are checked against n = len before each access
        // (l < n, l + 1 < n), and i is always a previously checked child.
        unsafe {
            let top = *h;
            // Sift the former last element down from the root of the 4-ary
            // heap: pick the smallest of up to four children (tournament of
            // branch-free compares), move it up while it beats `last`.
            let mut i = 0;
            loop {
                let f = 4 * i + 1;
                let c = if f + 3 < n {
                    let a = f + usize::from(less(&*h.add(f + 1), &*h.add(f)));
                    let b = f + 2 + usize::from(less(&*h.add(f + 3), &*h.add(f + 2)));
                    if less(&*h.add(b), &*h.add(a)) { b } else { a }
                } else if f < n {
                    let mut m = f;
                    let mut k = f + 1;
                    while k < n {
                        if less(&*h.add(k), &*h.add(m)) {
                            m = k;
                        }
                        k += 1;
                    }
                    m
                } else {
                    break;
                };
                if less(&*h.add(c), &last) {
                    *h.add(i) = *h.add(c);
                    i = c;
                } else {
                    break;
                }
            }
            *h.add(i) = last;
            Some(top)
        }
    }

    /// The earliest event without removing it.
    #[inline]
    pub fn peek(&self) -> Option<&Entry> {
        self.heap.first()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn pops_in_time_order() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut fel = Fel::new();
        let mut times = Vec::new();
        for i in 0..10_000u64 {
            // Coarse times so that many are equal.
            let t = (rng.next_u64() % 500) as f64 * 0.25;
            times.push((t, i));
            fel.push(t, i);
        }
        // Expected order: by time, then by scheduling order.
        times.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (t, i) in times {
            let e = fel.pop().unwrap();
            assert_eq!(e.time(), t);
            assert_eq!(e.ev, i, "simultaneous events must pop in scheduling order");
        }
        assert!(fel.pop().is_none());
    }

    #[test]
    fn simultaneous_events_are_fifo_even_when_interleaved_with_pops() {
        let mut fel = Fel::new();
        fel.push(1.0, 10);
        fel.push(0.5, 1);
        fel.push(1.0, 11);
        assert_eq!(fel.pop().unwrap().ev, 1);
        // Scheduled later at the same time as 10 and 11: comes after them.
        fel.push(1.0, 12);
        fel.push(1.0, 13);
        let order: Vec<u64> = std::iter::from_fn(|| fel.pop().map(|e| e.ev)).collect();
        assert_eq!(order, vec![10, 11, 12, 13]);
    }

    #[test]
    fn zero_and_negative_zero_are_the_same_time() {
        let mut fel = Fel::new();
        fel.push(0.0, 1);
        fel.push(-0.0, 2);
        assert_eq!(fel.pop().unwrap().ev, 1);
        assert_eq!(fel.pop().unwrap().ev, 2);
    }
}
