//! The future-event list: events keyed by (time bits, sequence number),
//! kept in a sorted array while there are few of them and in a 4-ary
//! min-heap once there are many.
//!
//! Times are finite and non-negative, so the IEEE-754 bit pattern of a time
//! orders like the number itself and the heap compares plain integers. The
//! sequence number is the order in which events were scheduled; it breaks
//! ties between equal times, which gives the kernel's rule for simultaneous
//! events: **events with equal times are processed in the order they were
//! scheduled (FIFO)**. An event is a packed `u64` (kind and operands), so
//! scheduling never allocates once the list has grown to its working size.
//!
//! Why two layouts: most models keep a few dozen events pending (one per
//! busy server and per thinking user). For those, inserting into a sorted
//! array by shifting a handful of entries and taking the earliest from its
//! end is cheaper than a heap's sift, whose early exit is a branch the
//! processor mispredicts about once per event. Past [`SMALL_MAX`] pending
//! events the heap's logarithmic cost wins and the list switches to it,
//! switching back below [`SMALL_MIN`] (the gap keeps a list that hovers
//! around one size from converting back and forth).
//!
//! The array needs no sequence numbers: a new event is placed before every
//! pending event with the same time (the array is sorted latest first), so
//! one 64-bit compare of times decides, and the array's order among equal
//! times *is* the scheduling order. Switching to the heap numbers the
//! entries in that order; switching back sorts by (time, sequence). Which
//! layout holds the events therefore never changes the order in which they
//! are handed out.

/// One scheduled event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Bit pattern of the event time.
    pub t: u64,
    /// Scheduling order, unique per list while in the heap layout (0 for
    /// an event handed out by the array layout, which orders without it).
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

/// Padding entry that sorts after every real event (real times are finite,
/// so their bits are below `u64::MAX`).
const SENTINEL: Entry = Entry {
    t: u64::MAX,
    seq: u64::MAX,
    ev: 0,
};

/// An event in the array layout: no sequence number (see the module docs).
#[derive(Clone, Copy, Debug)]
struct Slot {
    t: u64,
    ev: u64,
}

/// Sentinel slots kept after the live entries: the children `4i+1..=4i+4`
/// of any node with `4i+1 < n` then all exist, so picking the smallest child
/// is always the same branch-free tournament of four.
const PAD: usize = 3;

/// Above this many pending events the list becomes a heap.
pub(crate) const SMALL_MAX: usize = 48;

/// Below this many pending events a heap becomes a sorted array again.
pub(crate) const SMALL_MIN: usize = 24;

/// Sifts `e` down from the root of the 4-ary heap at `h` with `n` live
/// slots (the root being free) and stores it.
///
/// # Safety
/// `h` must point to at least `n + PAD` initialized entries, `n >= 1`, with
/// sentinels in every slot from `n` on.
#[inline(always)]
unsafe fn sift_down(h: *mut Entry, n: usize, e: Entry) {
    // SAFETY (all accesses): the loop only reads children f..=f+3 with
    // f < n, so f + 3 < n + PAD; i is always 0 or a previously read index.
    unsafe {
        let mut i = 0;
        loop {
            let f = 4 * i + 1;
            if f >= n {
                break;
            }
            // The smallest of the four children (tournament of branch-free
            // compares; missing children are sentinels and never win).
            let a = f + usize::from(less(&*h.add(f + 1), &*h.add(f)));
            let b = f + 2 + usize::from(less(&*h.add(f + 3), &*h.add(f + 2)));
            let c = if less(&*h.add(b), &*h.add(a)) { b } else { a };
            if less(&*h.add(c), &e) {
                *h.add(i) = *h.add(c);
                i = c;
            } else {
                break;
            }
        }
        *h.add(i) = e;
    }
}

/// The future-event list, FIFO among equal times.
///
/// Besides `push` and `pop`, the event loop uses [`Fel::take_min`] and
/// [`Fel::settle`]. In heap layout `take_min` hands out the earliest event
/// but leaves its root slot empty (a "hole"); the first event scheduled
/// while handling it drops straight into the hole and is sifted down once,
/// instead of the usual remove-the-root plus insert-at-the-bottom (two
/// sifts). `settle` closes a hole nothing filled. In array layout
/// `take_min` simply removes the last entry and `settle` has nothing to do.
#[derive(Clone, Debug)]
pub(crate) struct Fel {
    /// Array layout (`small`): the pending events sorted latest first, so
    /// the earliest is at the end; among equal times the later scheduled
    /// comes first. Fixed capacity (`SMALL_MAX + 1`), live slots
    /// `list[..len]`: no capacity checks on the hot path.
    list: Box<[Slot]>,
    len: usize,
    /// Heap layout (`!small`): live entries `heap[..heap.len() - PAD]`,
    /// then `PAD` sentinels; with `hole`, slot 0 is free (its old entry was
    /// handed out). Holds only the sentinels in array layout.
    heap: Vec<Entry>,
    /// Next sequence number (heap layout).
    seq: u64,
    hole: bool,
    small: bool,
}

impl Default for Fel {
    fn default() -> Self {
        Fel::new()
    }
}

impl Fel {
    /// An empty list.
    pub fn new() -> Fel {
        let mut heap = Vec::with_capacity(64);
        heap.extend([SENTINEL; PAD]);
        Fel {
            list: vec![Slot { t: 0, ev: 0 }; SMALL_MAX + 1].into_boxed_slice(),
            len: 0,
            heap,
            seq: 0,
            hole: false,
            small: true,
        }
    }

    /// Number of scheduled events (stale ones included).
    #[allow(dead_code)]
    #[inline]
    pub fn len(&self) -> usize {
        if self.small {
            self.len
        } else {
            self.heap.len() - PAD - usize::from(self.hole)
        }
    }

    /// Whether the events are in the sorted-array layout (tests).
    #[allow(dead_code)]
    pub(crate) fn is_small(&self) -> bool {
        self.small
    }

    /// Inserts an event into the sorted array; switches to the heap layout
    /// when the array grows past [`SMALL_MAX`].
    #[inline(always)]
    fn insert_sorted(&mut self, t: u64, ev: u64) {
        let n = self.len;
        let e = Slot { t, ev };
        self.len = n + 1;
        let p = self.list.as_mut_ptr();
        // SAFETY: n <= SMALL_MAX (the array switches to the heap layout as
        // soon as it holds SMALL_MAX + 1 events), so slots 0..=n exist; i
        // runs from n down to 0 and only slots i - 1 and i are touched.
        unsafe {
            if n == 1 {
                // One pending event (a single-server queue and its arrival
                // stream): order the pair without a branch, which would be
                // a coin flip; computed store addresses, because selects
                // may be compiled back into a branch.
                let o = *p;
                let k = usize::from(o.t <= t);
                *p.add(k) = o;
                *p.add(1 - k) = e;
                return;
            }
            let mut i = n;
            // Entries due no later than the new one go after it (towards
            // the end, handed out first): shift them one slot.
            while i > 0 && (*p.add(i - 1)).t <= t {
                *p.add(i) = *p.add(i - 1);
                i -= 1;
            }
            *p.add(i) = e;
        }
        if n >= SMALL_MAX {
            self.switch_to_heap();
        }
    }

    /// Array layout to heap layout: the array read backwards is sorted by
    /// (time, scheduling order), which numbered in that order is a heap.
    #[cold]
    fn switch_to_heap(&mut self) {
        debug_assert!(self.small && !self.hole);
        self.heap.clear();
        let mut seq = self.seq;
        let n = std::mem::take(&mut self.len);
        self.heap.extend(self.list[..n].iter().rev().map(|x| {
            seq += 1;
            Entry {
                t: x.t,
                seq,
                ev: x.ev,
            }
        }));
        self.seq = seq + 1;
        self.heap.extend([SENTINEL; PAD]);
        self.small = false;
    }

    /// Heap layout to array layout.
    #[cold]
    fn switch_to_array(&mut self) {
        debug_assert!(!self.small && !self.hole);
        let n = self.heap.len() - PAD;
        let live = &mut self.heap[..n];
        live.sort_unstable_by_key(|e| std::cmp::Reverse((e.t, e.seq)));
        for (slot, e) in self.list.iter_mut().zip(live.iter()) {
            *slot = Slot { t: e.t, ev: e.ev };
        }
        self.len = n;
        self.heap.truncate(0);
        self.heap.extend([SENTINEL; PAD]);
        self.small = true;
    }

    /// Schedules `ev` at `t` seconds (`t` finite and >= 0).
    #[inline(always)]
    pub fn push(&mut self, t: f64, ev: u64) {
        debug_assert!(t.is_finite() && t >= 0.0, "bad event time {t}");
        // `+ 0.0` turns a -0.0 into +0.0 so that its bits order correctly.
        let t = (t + 0.0).to_bits();
        if self.small {
            self.insert_sorted(t, ev);
            return;
        }
        let e = Entry {
            t,
            seq: self.seq,
            ev,
        };
        self.seq += 1;
        let n = self.heap.len() - PAD;
        if self.hole {
            // Fill the root left by `take_min`: one sift down.
            self.hole = false;
            let h = self.heap.as_mut_ptr();
            // SAFETY: the vector holds n + PAD entries, n >= 1 (the hole),
            // sentinels from n on.
            // (The heap layout never holds fewer than SMALL_MIN events.)
            unsafe { sift_down(h, n, e) };
            return;
        }
        // One more sentinel at the end; the new entry goes into the first
        // sentinel slot, index n (the old live length).
        let mut i = n;
        self.heap.push(SENTINEL);
        let h = self.heap.as_mut_ptr();
        // SAFETY: every index used is < len: i starts at n < len and only
        // decreases to parents (i − 1) / 4.
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

    /// The earliest event (the first scheduled among equal times), leaving
    /// its slot as a hole for the next `push`; call [`Fel::settle`] once the
    /// event has been handled.
    #[inline(always)]
    pub fn take_min(&mut self) -> Option<Entry> {
        debug_assert!(!self.hole, "take_min with a hole: settle first");
        if self.small {
            if self.len == 0 {
                return None;
            }
            self.len -= 1;
            // SAFETY: len < list.len() always (see `insert_sorted`).
            let x = unsafe { *self.list.get_unchecked(self.len) };
            return Some(Entry {
                t: x.t,
                seq: 0,
                ev: x.ev,
            });
        }
        if self.heap.len() == PAD {
            return None;
        }
        self.hole = true;
        // SAFETY: the heap is non-empty, so slot 0 is live.
        Some(unsafe { *self.heap.as_ptr() })
    }

    /// Closes the hole left by [`Fel::take_min`] if no `push` filled it.
    #[inline(always)]
    pub fn settle(&mut self) {
        if !self.hole {
            return;
        }
        self.hole = false;
        // Drop one sentinel; the last live entry (index n) becomes a
        // sentinel slot and is sifted down into the hole at the root.
        self.heap.pop();
        let n = self.heap.len() - PAD;
        let h = self.heap.as_mut_ptr();
        // SAFETY: the vector now has n + PAD elements and slot n was live.
        unsafe {
            let last = *h.add(n);
            *h.add(n) = SENTINEL;
            if n > 0 {
                sift_down(h, n, last);
            }
        }
        if n < SMALL_MIN {
            self.switch_to_array();
        }
    }

    /// Removes and returns the earliest event (the first scheduled among
    /// equal times).
    #[allow(dead_code)]
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Entry> {
        let e = self.take_min()?;
        self.settle();
        Some(e)
    }

    /// The earliest event without removing it.
    #[inline]
    pub fn peek(&self) -> Option<Entry> {
        debug_assert!(!self.hole, "peek with a hole");
        if self.small {
            self.list[..self.len].last().map(|x| Entry {
                t: x.t,
                seq: 0,
                ev: x.ev,
            })
        } else if self.heap.len() > PAD {
            self.heap.first().copied()
        } else {
            None
        }
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
    fn interleaved_pushes_and_pops_match_a_sorted_reference() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut fel = Fel::new();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut next = 0u64;
        for _ in 0..50_000 {
            if reference.is_empty() || rng.next_u64() % 3 != 0 {
                let t = (rng.next_u64() % 64) as f64;
                fel.push(t, next);
                reference.push((t.to_bits(), next));
                next += 1;
            } else {
                let i = (0..reference.len()).min_by_key(|&i| reference[i]).unwrap();
                let (t, e) = reference.swap_remove(i);
                let got = fel.pop().unwrap();
                assert_eq!((got.t, got.ev), (t, e));
            }
            assert_eq!(fel.len(), reference.len());
            assert_eq!(fel.peek().is_some(), !reference.is_empty());
        }
    }

    #[test]
    fn take_min_then_push_fills_the_hole_correctly() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut fel = Fel::new();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut next = 0u64;
        for _ in 0..20 {
            let t = (rng.next_u64() % 16) as f64;
            fel.push(t, next);
            reference.push((t.to_bits(), next));
            next += 1;
        }
        for _ in 0..50_000 {
            let Some(got) = fel.take_min() else { break };
            let i = (0..reference.len()).min_by_key(|&i| reference[i]).unwrap();
            let (t, e) = reference.swap_remove(i);
            assert_eq!((got.t, got.ev), (t, e));
            // Schedule 0, 1 or 2 events while "handling" it.
            let k = rng.next_u64() % 3;
            for _ in 0..k.min(2) {
                let t = f64::from_bits(got.t) + (rng.next_u64() % 8) as f64;
                fel.push(t, next);
                reference.push((t.to_bits(), next));
                next += 1;
            }
            fel.settle();
            assert_eq!(fel.len(), reference.len());
        }
    }

    #[test]
    fn switching_layouts_keeps_the_order() {
        // Grow past SMALL_MAX, shrink below SMALL_MIN, grow again, with
        // coarse times so that ties cross the switches; every pop must
        // match a sorted reference and both layouts must have been used.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let mut fel = Fel::new();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut next = 0u64;
        let (mut saw_small, mut saw_heap, mut switches) = (false, false, 0);
        let mut was_small = fel.is_small();
        let mut now = 0.0f64;
        for round in 0..40 {
            let target = if round % 2 == 0 {
                3 * SMALL_MAX
            } else {
                SMALL_MIN / 2
            };
            while fel.len() != target {
                if fel.len() < target {
                    let t = now + (rng.next_u64() % 8) as f64;
                    fel.push(t, next);
                    reference.push((t.to_bits(), next));
                    next += 1;
                } else {
                    let got = fel.take_min().unwrap();
                    now = got.time();
                    // Sometimes schedule one event while handling it.
                    if rng.next_u64() % 4 == 0 {
                        let t = now + (rng.next_u64() % 8) as f64;
                        fel.push(t, next);
                        reference.push((t.to_bits(), next));
                        next += 1;
                    }
                    fel.settle();
                    let i = (0..reference.len()).min_by_key(|&i| reference[i]).unwrap();
                    assert_eq!((got.t, got.ev), reference.swap_remove(i));
                }
                saw_small |= fel.is_small();
                saw_heap |= !fel.is_small();
                switches += usize::from(fel.is_small() != was_small);
                was_small = fel.is_small();
                assert_eq!(fel.len(), reference.len());
            }
        }
        assert!(saw_small && saw_heap);
        assert!(switches >= 40, "only {switches} layout switches");
    }

    #[test]
    fn hovering_at_both_thresholds_with_ties_and_an_open_hole() {
        // Sizes oscillate around SMALL_MIN and SMALL_MAX, times come from
        // {now, now + 1, now + 2} (many ties), and up to two events are
        // scheduled while the earliest is being handled; every pop and
        // every peek must match a map ordered by (time, scheduling order).
        use std::collections::BTreeMap;
        for seed in 0..200u64 {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let mut fel = Fel::new();
            let mut reference: BTreeMap<(u64, u64), ()> = BTreeMap::new();
            let mut next = 0u64;
            let mut now = 0.0f64;
            let mut switches = 0;
            let mut was_small = fel.is_small();
            let sizes = [
                SMALL_MIN - 2,
                SMALL_MIN - 1,
                SMALL_MIN,
                SMALL_MAX,
                SMALL_MAX + 1,
                SMALL_MAX + 2,
            ];
            for step in 0..20_000u64 {
                let target = sizes[(step / 997 % 6) as usize];
                let grow = if fel.len() < target {
                    rng.next_u64() % 4 != 0
                } else {
                    rng.next_u64() % 4 == 0
                };
                if grow {
                    let t = now + (rng.next_u64() % 3) as f64;
                    fel.push(t, next);
                    reference.insert((t.to_bits(), next), ());
                    next += 1;
                } else if let Some(got) = fel.take_min() {
                    now = got.time();
                    let (t, e) = reference.pop_first().unwrap().0;
                    assert_eq!((got.t, got.ev), (t, e), "seed {seed} step {step}");
                    for _ in 0..(rng.next_u64() % 5).saturating_sub(2) {
                        let t = now + (rng.next_u64() % 2) as f64;
                        fel.push(t, next);
                        reference.insert((t.to_bits(), next), ());
                        next += 1;
                    }
                    fel.settle();
                }
                assert_eq!(fel.len(), reference.len());
                assert_eq!(
                    fel.peek().map(|e| (e.t, e.ev)),
                    reference.keys().next().copied(),
                    "peek, seed {seed} step {step}"
                );
                switches += usize::from(fel.is_small() != was_small);
                was_small = fel.is_small();
            }
            assert!(switches > 2, "seed {seed}: {switches} layout switches");
        }
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
