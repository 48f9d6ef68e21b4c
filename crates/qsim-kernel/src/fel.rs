//! The future-event list: events keyed by time, kept in a sorted array
//! while there are few of them and in a radix heap once there are many.
//!
//! Times are finite and non-negative, so the IEEE-754 bit pattern of a time
//! orders like the number itself and the list compares plain integers.
//! Ties between equal times follow the kernel's rule for simultaneous
//! events: **events with equal times are processed in the order they were
//! scheduled (FIFO)**. An event is a packed `u64` (kind and operands), so
//! scheduling never allocates once the list has grown to its working size.
//!
//! Events are handed out in time order, and the kernel only schedules at
//! or after the current time, so the list is *monotone*: a pushed time is
//! never earlier than the last event handed out. The radix heap is built
//! for that case; an earlier push is still placed correctly, at the cost of
//! rebuilding the heap (tests do it, the kernel does not).
//!
//! Why two layouts: most models keep a few dozen events pending (one per
//! busy server and per thinking user). For those, inserting into a sorted
//! array by shifting a handful of entries and taking the earliest from its
//! end is the cheapest there is. Past [`SMALL_MAX`] pending events the list
//! switches to a radix heap, switching back below [`SMALL_MIN`] (the gap
//! keeps a list that hovers around one size from converting back and
//! forth).
//!
//! The radix heap works on the time bits one byte (digit) at a time.
//! Bucket (d, v) holds the pending events whose bits first differ from
//! `last` (a lower bound of every pending time) in byte d, where they read
//! v; `cur` holds the earliest events, in time order, handed out from its
//! front, and every event there is due before `hi`, every one in the
//! buckets at or after it. A push due at or after `hi` is an xor, a
//! leading-zero count and an append to its bucket. When `cur` runs dry,
//! the first non-empty bucket (lowest level, then lowest digit; one
//! occupancy bit per bucket finds it) holds the earliest events:
//!
//! - a lone event is handed out at once (its time becomes `last`);
//! - a bucket of at most [`RUN_MAX`] events becomes `cur` as a sorted
//!   *run* (a counting sort on the next byte, then an insertion sort; an
//!   insertion sort alone for a few), with `hi` the end of the bucket's
//!   range. Events scheduled before `hi` (a short service while a
//!   million users think) join the run in order, shifting the nearer end
//!   of it, instead of going through the buckets. A run is the wrong
//!   place for them when they keep landing deep inside it (hundreds of
//!   short events pending, each scheduling the next a little ahead of
//!   now): once their shifts add up to [`DEBT_PER_EVENT`] per event in
//!   the run, or the run has grown to [`RUN_GROW`], it goes back to the
//!   buckets, filed relative to the last event handed out, so the events
//!   due soon spread over the lowest levels and the next runs are short;
//! - a larger bucket moves its earliest events to `cur` and the rest one
//!   level down or more, relative to their earliest time.
//!
//! An event only ever moves down a level, so it moves at most 8 times
//! (about 3 for a typical think-time spread before it lands in a run), and
//! all the work is appends and sequential passes over contiguous vectors:
//! with a million events pending, a binary or 4-ary heap pays a cache
//! miss per level instead. What remains is the miss on each handed-out
//! event's job record: a bucket that becomes a run prefetches the records
//! of its events, which are the next ones handed out, and handing out an
//! event prefetches the record of the likely next one
//! ([`Fel::set_records`]).
//!
//! FIFO among equal times without sequence numbers: in both layouts every
//! container keeps its events in scheduling order among equal times. The
//! array places a new event before every pending one with the same time
//! (it is sorted latest first and handed out from the end). A heap bucket
//! only ever receives appended new events, or the whole content of a higher
//! bucket or of a run, in order, while it is empty; equal times always
//! share a bucket; a run is sorted stably and takes a new event after
//! every one due no later; and `cur` is read from the front. Switching
//! layouts keeps that order
//! (a stable sort by time on the way back), so which layout holds the
//! events never changes the order in which they are handed out.

/// One scheduled event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Bit pattern of the event time.
    pub t: u64,
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

/// Above this many pending events the list becomes a radix heap.
pub(crate) const SMALL_MAX: usize = 48;

/// Below this many pending events a radix heap becomes a sorted array again.
pub(crate) const SMALL_MIN: usize = 24;

/// The array layout's slot 0: due after every event (no time has these
/// bits), so the insertion scan stops there without testing its index.
const SENTINEL: Entry = Entry { t: u64::MAX, ev: 0 };

/// Levels of the radix heap: one per byte of the time bits.
const LEVELS: usize = 8;

/// Buckets of the radix heap: 256 per level.
const BUCKETS: usize = 256 * LEVELS;

/// Capacity (events) an emptied radix bucket keeps.
const KEEP: usize = 256;

/// An emptied bucket of at most this many events becomes `cur`, sorted,
/// and prefetches their records (see [`Fel::set_records`]).
const RUN_MAX: usize = 256;

/// A run in `cur` that pushes have grown to this many events goes back to
/// the buckets.
const RUN_GROW: usize = 2 * RUN_MAX;

/// A run in `cur` goes back to the buckets once pushes into it have
/// shifted this many entries per event it holds: filing them costs about
/// as much as these shifts did.
const DEBT_PER_EVENT: usize = 4;

/// Writes `src` into the empty `out` sorted by time, FIFO among equal
/// times, when its times spread over byte `shift / 8`: a counting sort on
/// that byte (stable), then an insertion sort for the lower bytes, which
/// has little left to do. False, with `out` untouched, when too many
/// events share a value of that byte for the insertion sort to stay short.
fn sort_run(src: &[Entry], out: &mut Vec<Entry>, shift: u32) -> bool {
    const CROWD: u32 = 16;
    let digit = |e: &Entry| ((e.t >> shift) & 0xFF) as usize;
    let mut count = [0u32; 256];
    for e in src {
        count[digit(e)] += 1;
    }
    let mut sum = 0;
    let mut most = 0;
    for c in &mut count {
        let n = *c;
        most = most.max(n);
        *c = sum;
        sum += n;
    }
    if most > CROWD {
        return false;
    }
    out.resize(src.len(), Entry { t: 0, ev: 0 });
    for e in src {
        let k = &mut count[digit(e)];
        out[*k as usize] = *e;
        *k += 1;
    }
    insertion_sort(out);
    true
}

/// A bucket of at most this many events becomes a run sorted by
/// insertion alone.
const SHORT_RUN: usize = 16;

/// Sorts `v` by time, stably (FIFO among equal times): fast when few
/// entries are out of place, or when there are few.
fn insertion_sort(v: &mut [Entry]) {
    for k in 1..v.len() {
        let x = v[k];
        let mut j = k;
        while j > 0 && v[j - 1].t > x.t {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// The radix-heap layout (see the module docs).
#[derive(Clone, Debug)]
struct Radix {
    /// The earliest events in time order (FIFO among equal times), read
    /// from the front: live ones are `cur[head..]`. All due before `hi`.
    cur: Vec<Entry>,
    head: usize,
    /// Bucket `256·d + v`: the events whose time bits first differ from
    /// `last` in byte `d`, where they read `v`. Allocated on first use.
    buckets: Vec<Vec<Entry>>,
    /// Bit `i % 64` of word `i / 64` set when bucket `i` is non-empty. In
    /// index order the buckets are in time order (lower level first, then
    /// lower digit), so the first set bit names the earliest bucket.
    occupied: [u64; BUCKETS / 64],
    /// Bit `w` set when word `w` of `occupied` is not zero.
    words: u32,
    /// Time bits below every pending time, to which the buckets refer
    /// (the last event handed out, or just below the run in `cur`).
    last: u64,
    /// Every event in `cur` is due before `hi`, every one in the buckets
    /// at or after it; `last < hi`.
    hi: u64,
    /// Time bits of the last event handed out (0 before the first and
    /// after a rebuild: a lower bound all the same).
    now: u64,
    /// Entries shifted by pushes into the run in `cur` since it was formed.
    debt: usize,
    len: usize,
    /// Where the records named by an event's operand `b` live (address of
    /// record 0 and bytes per record; 0 when not set): see
    /// [`Fel::set_records`].
    rec_base: usize,
    rec_size: usize,
}

impl Default for Radix {
    fn default() -> Self {
        Radix {
            cur: Vec::new(),
            head: 0,
            buckets: Vec::new(),
            occupied: [0; BUCKETS / 64],
            words: 0,
            last: 0,
            hi: 1,
            now: 0,
            debt: 0,
            len: 0,
            rec_base: 0,
            rec_size: 0,
        }
    }
}

impl Radix {
    #[inline(always)]
    fn push(&mut self, e: Entry) {
        if e.t >= self.hi {
            // Later than every event in `cur`, so later than `last`.
            self.len += 1;
            self.place(e);
        } else {
            self.push_near(e);
        }
    }

    /// An event due before `hi`: it joins `cur` in time order, behind the
    /// events there due no later than it.
    #[inline(never)]
    fn push_near(&mut self, e: Entry) {
        if e.t < self.last {
            self.push_before_last(e);
            return;
        }
        self.len += 1;
        match self.cur[self.head..].last() {
            Some(l) if l.t > e.t => {}
            // Empty, or due no earlier than all of `cur` (an event at the
            // current time, or one in the run's range but after it).
            _ => {
                self.cur.push(e);
                return;
            }
        }
        // The first event due after `e`: scanned from the front, where an
        // event scheduled a short time ahead belongs, then by bisection.
        // The last event of `cur` is due after `e`: the scan stops there.
        let h = self.head;
        let mut pos = h;
        while self.cur[pos].t <= e.t {
            pos += 1;
            if pos - h == 8 {
                pos += self.cur[pos..].partition_point(|x| x.t <= e.t);
                break;
            }
        }
        // Shift the shorter side: the events before `pos` one slot towards
        // the front when the slots before `head` are free, else those
        // from `pos` on one slot towards the back.
        let front = pos - h;
        let back = self.cur.len() - pos;
        let shifted = if h > 0 && front <= back {
            if front < 8 {
                for k in h..pos {
                    self.cur[k - 1] = self.cur[k];
                }
            } else {
                self.cur.copy_within(h..pos, h - 1);
            }
            self.head = h - 1;
            self.cur[pos - 1] = e;
            front
        } else {
            self.cur.insert(pos, e);
            back
        };
        self.debt += shifted;
        let live = self.cur.len() - self.head;
        if self.debt > DEBT_PER_EVENT * live || live >= RUN_GROW {
            self.refile();
        }
    }

    /// Sends a run that pushes keep landing inside back to the buckets,
    /// filed relative to the last event handed out rather than to the
    /// start of the run's range: events due soon (the ones those pushes
    /// are next to) then spread over the lowest levels, where a push is
    /// an append, and a later run covers a range too short for most of
    /// them. The events at the new `last` stay in `cur`.
    #[cold]
    fn refile(&mut self) {
        self.debt = 0;
        // A lower bound of every pending event and of every push to come
        // (the kernel never schedules before the last event handed out),
        // inside the run's range [old last + 1, hi): the buckets keep
        // their places relative to it, as when the run was formed.
        let base = self.now.min(self.cur[self.head].t);
        if base <= self.last {
            return;
        }
        self.last = base;
        self.hi = base + 1;
        let run = std::mem::take(&mut self.cur);
        let mut keep = self.head;
        while keep < run.len() && run[keep].t == base {
            keep += 1;
        }
        for &x in &run[keep..] {
            self.place(x);
        }
        self.cur = run;
        self.cur.truncate(keep);
        self.cur.drain(..self.head);
        self.head = 0;
    }

    /// Files an event later than `last` into its bucket.
    #[inline(always)]
    fn place(&mut self, e: Entry) {
        let d = ((63 - (e.t ^ self.last).leading_zeros()) >> 3) as usize;
        let i = (d << 8) | ((e.t >> (8 * d)) & 0xFF) as usize;
        self.occupied[i >> 6] |= 1 << (i & 63);
        self.words |= 1 << (i >> 6);
        // SAFETY: d < LEVELS, so i < BUCKETS, and `buckets` holds BUCKETS
        // vectors from the switch to this layout on.
        unsafe { self.buckets.get_unchecked_mut(i) }.push(e);
    }

    /// Index of the earliest non-empty bucket; `words` must not be 0.
    #[inline(always)]
    fn earliest(&self) -> usize {
        let w = self.words.trailing_zeros() as usize & (BUCKETS / 64 - 1);
        64 * w + self.occupied[w].trailing_zeros() as usize
    }

    /// An event earlier than `last` (a non-monotone push, or a push after a
    /// `peek` moved `last` up to the earliest pending time; the kernel does
    /// neither). It is earlier than every pending event: rebuild the
    /// buckets around it, in order.
    #[cold]
    fn push_before_last(&mut self, e: Entry) {
        let mut all = Vec::with_capacity(self.len);
        self.drain_sorted(&mut all);
        self.last = e.t;
        self.hi = e.t + 1;
        self.push(e);
        for &x in &all {
            self.push(x);
        }
    }

    /// Takes the earliest event once `cur` has run dry (`len` is left to
    /// the caller). A lone event in the earliest bucket (the common case
    /// at the lowest levels once events are spread out) is returned
    /// without passing through `cur`; otherwise the bucket's events move to
    /// `cur` or to lower levels and the first of `cur` is returned, with
    /// `head` at 1. None when the heap is empty.
    #[inline(never)]
    fn take_earliest(&mut self) -> Option<Entry> {
        self.cur.clear();
        self.head = 0;
        if self.words == 0 {
            return None;
        }
        let i = self.earliest();
        let w = i >> 6;
        let left = self.occupied[w] & (self.occupied[w] - 1);
        self.occupied[w] = left;
        if left == 0 {
            self.words &= !(1 << w);
        }
        // SAFETY: i < BUCKETS (see `place`).
        let bucket = unsafe { self.buckets.get_unchecked_mut(i) };
        if let [e] = bucket[..] {
            bucket.clear();
            self.last = e.t;
            self.hi = e.t + 1;
            return Some(e);
        }
        self.spill(i);
        self.head = 1;
        Some(self.cur[0])
    }

    /// Empties bucket `i`, the earliest, of two or more events into `cur`
    /// (and lower levels when it holds many).
    fn spill(&mut self, i: usize) {
        let mut src = std::mem::take(&mut self.buckets[i]);
        let d = i >> 8;
        if d == 0 {
            // Only byte 0 differs from `last`: every event here has the
            // same time; the bucket becomes `cur` as it is.
            self.last = src[0].t;
            self.hi = self.last + 1;
            std::mem::swap(&mut self.cur, &mut src);
        } else if src.len() <= RUN_MAX {
            // A few events: sorted by time (stably: FIFO among equal
            // times), they are `cur`, a run handed out from the front. The
            // bucket covers [lo, hi); every other pending event is due at
            // or after `hi`. `last` goes just below `lo`: every other
            // bucket keeps its place relative to it (above byte d it
            // agrees with the old `last`, and byte d is v - 1, where the
            // old one read at most that), and every event of the run is
            // later than it. For the same reason `refile` may later move
            // `last` anywhere in [lo, hi): the buckets stay valid.
            if self.rec_base != 0 {
                // These are the next events handed out (with any scheduled
                // meanwhile): fetching their records now overlaps the
                // misses that each handler would otherwise wait for in turn.
                for e in &src {
                    self.prefetch(e.ev);
                }
            }
            self.debt = 0;
            let shift = 8 * d as u32;
            let lo = ((self.last >> shift >> 8 << 8) | (i & 0xFF) as u64) << shift;
            self.last = lo - 1;
            self.hi = lo.saturating_add(1 << shift);
            if src.len() <= SHORT_RUN {
                // Too few for the counting pass, whose 256 counters cost
                // more than sorting them outright, in place.
                insertion_sort(&mut src);
                std::mem::swap(&mut self.cur, &mut src);
            } else if !sort_run(&src, &mut self.cur, shift - 8) {
                src.sort_by_key(|e| e.t);
                std::mem::swap(&mut self.cur, &mut src);
            }
        } else {
            let min = src.iter().map(|e| e.t).min().unwrap_or(self.last);
            self.last = min;
            self.hi = min + 1;
            // Every event moves to a lower level (or to `cur`), into
            // buckets that are empty now: their scheduling order is kept.
            for &e in &src {
                if e.t == min {
                    self.cur.push(e);
                } else {
                    self.place(e);
                }
            }
        }
        src.clear();
        // A bucket keeps a small capacity for reuse; a large one (a high
        // bucket that held a share of a big population) is freed, or the
        // list would keep the high-water mark of every bucket it ever used
        // and grow with the length of the run.
        if src.capacity() > KEEP {
            src = Vec::new();
        }
        self.buckets[i] = src;
    }

    /// Makes `cur[head]` the earliest event; false when empty.
    #[inline]
    fn refill(&mut self) -> bool {
        if self.head < self.cur.len() {
            return true;
        }
        match self.take_earliest() {
            None => false,
            Some(e) => {
                if self.head == 1 {
                    self.head = 0;
                } else {
                    self.cur.push(e);
                }
                true
            }
        }
    }

    /// Prefetches the record of the event that will probably be handed
    /// out next: the next one in `cur`, else the first of the earliest
    /// bucket (the next exactly when it is alone there). Reading that
    /// bucket's first event now also brings the bucket itself into the
    /// cache before the next `pop` needs it.
    #[inline(always)]
    fn prefetch_next(&self) {
        let next = if let Some(e) = self.cur.get(self.head) {
            e.ev
        } else if self.words != 0 {
            match self.buckets.get(self.earliest()).and_then(|b| b.first()) {
                Some(e) => e.ev,
                None => return,
            }
        } else {
            return;
        };
        self.prefetch(next);
    }

    /// Prefetches the record named by operand `b` of event `ev`.
    #[inline(always)]
    fn prefetch(&self, ev: u64) {
        let addr = self
            .rec_base
            .wrapping_add(((ev >> 32) as usize).wrapping_mul(self.rec_size));
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch is only a hint: it reads nothing the program
        // sees and never faults, whatever the address.
        unsafe {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            _mm_prefetch::<_MM_HINT_T0>(addr as *const i8);
            // A record may straddle two cache lines: its first 32 bytes
            // (the fields read first) are covered either way.
            _mm_prefetch::<_MM_HINT_T0>(addr.wrapping_add(31) as *const i8);
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = addr;
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Entry> {
        let e = if self.head < self.cur.len() {
            let e = self.cur[self.head];
            self.head += 1;
            e
        } else {
            self.take_earliest()?
        };
        self.len -= 1;
        self.now = e.t;
        Some(e)
    }

    /// Every pending event, earliest first (FIFO among equal times); the
    /// heap is left empty, its buckets keep their capacity.
    fn drain_sorted(&mut self, out: &mut Vec<Entry>) {
        out.extend_from_slice(&self.cur[self.head..]);
        self.cur.clear();
        for b in &mut self.buckets {
            out.extend_from_slice(b);
            b.clear();
        }
        // Stable: equal times keep their (scheduling) order.
        out.sort_by_key(|e| e.t);
        self.head = 0;
        self.occupied = [0; BUCKETS / 64];
        self.words = 0;
        self.len = 0;
        self.last = 0;
        self.hi = 1;
        self.now = 0;
        self.debt = 0;
    }
}

/// The future-event list, FIFO among equal times, monotone (see the module
/// docs).
///
/// Besides `push` and `pop`, the event loop uses [`Fel::take_min`] and
/// [`Fel::settle`]: `take_min` hands out the earliest event, `settle`
/// (after the event has been handled) lets a radix heap that has shrunk
/// become an array again.
#[derive(Clone, Debug)]
pub(crate) struct Fel {
    /// Array layout (`small`): the pending events sorted latest first, so
    /// the earliest is at the end; among equal times the later scheduled
    /// comes first. Slot 0 holds a sentinel due after every time (time
    /// bits `u64::MAX`); the events are in `list[1..=len]`. Fixed capacity
    /// (`SMALL_MAX + 2`): no capacity checks on the hot path.
    list: Box<[Entry]>,
    /// Events in the array; 0 in the radix layout.
    len: usize,
    /// Radix-heap layout (`!small`); empty in array layout. Boxed: its
    /// bucket masks would otherwise push the simulation's hot fields apart.
    radix: Box<Radix>,
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
        Fel {
            list: std::iter::once(SENTINEL)
                .chain(std::iter::repeat_n(Entry { t: 0, ev: 0 }, SMALL_MAX + 1))
                .collect(),
            len: 0,
            radix: Box::default(),
            small: true,
        }
    }

    /// Number of scheduled events (stale ones included).
    #[allow(dead_code)]
    #[inline]
    pub fn len(&self) -> usize {
        if self.small { self.len } else { self.radix.len }
    }

    /// Whether the events are in the sorted-array layout (tests).
    #[allow(dead_code)]
    pub(crate) fn is_small(&self) -> bool {
        self.small
    }

    /// Inserts an event into the sorted array; switches to the radix heap
    /// when the array grows past [`SMALL_MAX`].
    #[inline(always)]
    fn insert_sorted(&mut self, t: u64, ev: u64) {
        let n = self.len;
        let e = Entry { t, ev };
        self.len = n + 1;
        // SAFETY: `list` has SMALL_MAX + 2 slots, the sentinel and SMALL_MAX
        // + 1 events; n <= SMALL_MAX (the array switches to the radix heap
        // as soon as it holds SMALL_MAX + 1 events), so `p` (the first
        // event's slot) and slots p - 1 ..= p + n exist; i runs from n down
        // to 0 (the sentinel at p - 1 is due after any time) and only slots
        // i - 1 and i are touched.
        unsafe {
            let p = self.list.as_mut_ptr().add(1);
            if n == 1 {
                // One pending event (a single-server queue and its arrival
                // stream): order the pair without a branch, which would be
                // a coin flip. The values are selected into fixed slots:
                // storing to a slot chosen by the compare would make the
                // next `take_min` wait for that address.
                let o = *p;
                let first = o.t <= t;
                let lo = Entry {
                    t: if first { t } else { o.t },
                    ev: if first { ev } else { o.ev },
                };
                let hi = Entry {
                    t: if first { o.t } else { t },
                    ev: if first { o.ev } else { ev },
                };
                *p = lo;
                *p.add(1) = hi;
                return;
            }
            let mut i = n;
            // Entries due no later than the new one go after it (towards
            // the end, handed out first): shift them one slot. The
            // sentinel before slot 0 ends the scan.
            while (*p.add(i).sub(1)).t <= t {
                *p.add(i) = *p.add(i).sub(1);
                i -= 1;
            }
            *p.add(i) = e;
        }
        if n >= SMALL_MAX {
            self.switch_to_radix();
        }
    }

    /// Array layout to radix heap: the array read backwards is in the
    /// order the events are due (FIFO among equal times).
    #[cold]
    fn switch_to_radix(&mut self) {
        debug_assert!(self.small && self.radix.len == 0);
        let n = std::mem::take(&mut self.len);
        if self.radix.buckets.is_empty() {
            self.radix.buckets = vec![Vec::new(); BUCKETS];
        }
        // The last event handed out is not known here; 0 is a lower bound
        // of every time (the first refill then sorts the events out).
        self.radix.last = 0;
        self.radix.hi = 1;
        for &e in self.list[1..=n].iter().rev() {
            self.radix.push(e);
        }
        self.small = false;
    }

    /// Radix heap to array layout.
    #[cold]
    fn switch_to_array(&mut self) {
        debug_assert!(!self.small);
        let mut all = Vec::with_capacity(self.radix.len);
        self.radix.drain_sorted(&mut all);
        self.len = all.len();
        for (slot, e) in self.list[1..].iter_mut().zip(all.iter().rev()) {
            *slot = *e;
        }
        self.small = true;
    }

    /// Schedules `ev` at `t` seconds (`t` finite and >= 0; fast when no
    /// earlier than the last event handed out).
    #[inline(always)]
    pub fn push(&mut self, t: f64, ev: u64) {
        debug_assert!(t.is_finite() && t >= 0.0, "bad event time {t}");
        // `+ 0.0` turns a -0.0 into +0.0 so that its bits order correctly.
        let t = (t + 0.0).to_bits();
        if self.small {
            self.insert_sorted(t, ev);
            return;
        }
        self.radix_push(Entry { t, ev });
    }

    /// [`Fel::push`] for a time whose sign bit is clear (not -0.0), such
    /// as `now + d` with `d >= 0` and `now` a time this list handed out
    /// (those are never -0.0): skips turning -0.0 into +0.0, which is on
    /// the hot path's critical chain.
    #[inline(always)]
    pub fn push_unsigned(&mut self, t: f64, ev: u64) {
        debug_assert!(t.is_finite() && t.is_sign_positive(), "bad event time {t}");
        let t = t.to_bits();
        if self.small {
            self.insert_sorted(t, ev);
            return;
        }
        self.radix_push(Entry { t, ev });
    }

    // The radix layout's entry points stay out of line so that the event
    // loop, inlined around the array layout, keeps its registers.
    #[inline(never)]
    fn radix_push(&mut self, e: Entry) {
        self.radix.push(e);
    }

    /// Tells the list where the records named by operand `b` of an event
    /// (bits 32..64) live: `base` is the address of record 0, `size` the
    /// bytes per record. With many events pending, the radix heap empties
    /// its earliest bucket into lower ones before it hands out any of its
    /// events; a bucket of at most [`RUN_MAX`] events then prefetches
    /// their records, which are otherwise one cache miss after another
    /// that the handlers wait for, each in turn. Only an address is
    /// computed (a prefetch never faults), so a stale `base` costs speed,
    /// never correctness.
    pub fn set_records(&mut self, base: usize, size: usize) {
        self.radix.rec_base = base;
        self.radix.rec_size = size;
    }

    /// Removes the pending event `ev` scheduled at `t` if the list is in
    /// the array layout (a scan of at most [`SMALL_MAX`] entries, earliest
    /// first); in the radix layout, or when it is not found, the event
    /// stays and its handler must recognize it as stale.
    #[inline]
    pub fn cancel(&mut self, t: f64, ev: u64) {
        if !self.small {
            return;
        }
        let t = (t + 0.0).to_bits();
        let n = self.len;
        let live = &mut self.list[1..=n];
        let mut i = n;
        while i > 0 {
            i -= 1;
            if live[i].t == t && live[i].ev == ev {
                // Closing the gap keeps the array sorted, ties in order
                // (a plain loop: the gap is a few entries, memmove's call
                // would cost more).
                for k in i..n - 1 {
                    live[k] = live[k + 1];
                }
                self.len = n - 1;
                return;
            }
        }
    }

    /// Removes and returns the earliest event (the first scheduled among
    /// equal times); call [`Fel::settle`] once the event has been handled.
    ///
    /// A radix heap that has shrunk below [`SMALL_MIN`] turns back into the
    /// array first, as [`Fel::settle`] would have done: so the event loop
    /// may skip `settle`.
    #[inline(always)]
    pub fn take_min(&mut self) -> Option<Entry> {
        // `len` counts the array's events and stays 0 in the radix layout:
        // one test covers both the layout and an empty array.
        if self.len != 0 {
            debug_assert!(self.small);
            self.len -= 1;
            // SAFETY: len + 1 < list.len() always (see `insert_sorted`).
            return Some(unsafe { *self.list.get_unchecked(self.len + 1) });
        }
        self.take_min_slow()
    }

    /// [`Fel::take_min`] in the radix layout, or from an empty array.
    #[inline(never)]
    fn take_min_slow(&mut self) -> Option<Entry> {
        if self.small {
            return None;
        }
        if self.radix.len < SMALL_MIN {
            self.switch_to_array();
            if self.len == 0 {
                return None;
            }
            self.len -= 1;
            return Some(self.list[self.len + 1]);
        }
        let e = self.radix.pop();
        if self.radix.rec_base != 0 {
            self.radix.prefetch_next();
        }
        e
    }

    /// Returns a radix heap that has shrunk below [`SMALL_MIN`] to the
    /// array layout.
    #[inline(always)]
    pub fn settle(&mut self) {
        if self.small {
            return;
        }
        if self.radix.len < SMALL_MIN {
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

    /// The earliest event without removing it (a radix heap may sort its
    /// buckets to find it, hence `&mut`).
    #[inline]
    pub fn peek(&mut self) -> Option<Entry> {
        if self.small {
            self.list[1..=self.len].last().copied()
        } else if self.radix.refill() {
            Some(self.radix.cur[self.radix.head])
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests;
