//! Queues of jobs: the FIFO ring, the per-discipline waiting line, and the
//! min-heap of finish tags used by virtual clocks and latches.

use crate::network::Discipline;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A FIFO of job ids in a power-of-two ring: push and pop are a mask and
/// an index (no capacity branch on the hot path besides "full").
#[derive(Clone, Debug)]
pub(super) struct Ring {
    pub(super) buf: Vec<u32>,
    pub(super) head: usize,
    pub(super) len: usize,
}

impl Ring {
    pub(super) fn new() -> Ring {
        Ring {
            buf: vec![0; 16],
            head: 0,
            len: 0,
        }
    }

    #[inline(always)]
    pub(super) fn push_back(&mut self, j: u32) {
        if self.len == self.buf.len() {
            self.grow();
        }
        let mask = self.buf.len() - 1;
        let i = (self.head + self.len) & mask;
        // SAFETY: i is masked into 0..buf.len() (a power of two).
        unsafe { *self.buf.get_unchecked_mut(i) = j };
        self.len += 1;
    }

    #[inline(always)]
    pub(super) fn pop_front(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        // SAFETY: head is always kept in 0..buf.len().
        let j = unsafe { *self.buf.get_unchecked(self.head) };
        self.head = (self.head + 1) & (self.buf.len() - 1);
        self.len -= 1;
        Some(j)
    }

    /// The job pushed last (adaptive LIFO, off the hot path).
    pub(super) fn pop_back(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.buf[(self.head + self.len) & (self.buf.len() - 1)])
    }

    #[cold]
    pub(super) fn grow(&mut self) {
        let old = self.buf.len();
        let mut buf = vec![0; old * 2];
        for (k, slot) in buf.iter_mut().take(self.len).enumerate() {
            *slot = self.buf[(self.head + k) & (old - 1)];
        }
        self.buf = buf;
        self.head = 0;
    }
}

/// Jobs waiting for service, in discipline order.
#[derive(Clone, Debug)]
#[repr(u8)]
pub(super) enum Waiting {
    Fifo(Ring),
    Lifo(Vec<u32>),
    /// (priority, FIFO tie-break, job).
    Prio(BinaryHeap<(i32, Reverse<u64>, u32)>, u64),
}

impl Waiting {
    pub(super) fn new(d: Discipline) -> Waiting {
        match d {
            Discipline::Lcfs => Waiting::Lifo(Vec::new()),
            Discipline::Priority | Discipline::PreemptivePriority => {
                Waiting::Prio(BinaryHeap::new(), 0)
            }
            Discipline::Fcfs | Discipline::Ps => Waiting::Fifo(Ring::new()),
        }
    }
    #[inline(always)]
    pub(super) fn push(&mut self, j: u32, prio: i32) {
        match self {
            Waiting::Fifo(q) => q.push_back(j),
            Waiting::Lifo(q) => {
                // Marked rare so that FIFO is tested first.
                super::cold_path();
                q.push(j)
            }
            Waiting::Prio(q, seq) => {
                super::cold_path();
                q.push((prio, Reverse(*seq), j));
                *seq += 1;
            }
        }
    }
    /// Queues `j` at priority `prio` behind the jobs of that priority with
    /// a smaller `seq` (a preemptive-priority station numbers its arrivals,
    /// so a preempted job goes back ahead of those that came after it).
    /// Only a priority line takes it; the others queue `j` as `push` does.
    pub(super) fn push_seq(&mut self, j: u32, prio: i32, seq: u64) {
        match self {
            Waiting::Prio(q, _) => q.push((prio, Reverse(seq), j)),
            Waiting::Fifo(_) | Waiting::Lifo(_) => self.push(j, prio),
        }
    }
    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<u32> {
        match self {
            Waiting::Fifo(q) => q.pop_front(),
            Waiting::Lifo(q) => {
                // Rare, as in `push`: FIFO is tested first.
                super::cold_path();
                q.pop()
            }
            Waiting::Prio(q, _) => {
                super::cold_path();
                q.pop().map(|x| x.2)
            }
        }
    }
    /// The newest waiting job (adaptive LIFO): the last pushed of a FIFO;
    /// other disciplines pop as usual.
    pub(super) fn pop_newest(&mut self) -> Option<u32> {
        match self {
            Waiting::Fifo(q) => q.pop_back(),
            _ => self.pop(),
        }
    }
    pub(super) fn len(&self) -> usize {
        match self {
            Waiting::Fifo(q) => q.len,
            Waiting::Lifo(q) => q.len(),
            Waiting::Prio(q, _) => q.len(),
        }
    }
}

/// A tiny binary min-heap of (finish tag bits, job).
#[derive(Clone, Debug, Default)]
pub(super) struct TagHeap {
    pub(super) h: Vec<(u64, u32)>,
}

impl TagHeap {
    /// Takes job `j` out (a preemption): its finish tag, if it was in.
    /// Rebuilds the heap, which holds at most a station's servers.
    pub(super) fn remove(&mut self, j: u32) -> Option<f64> {
        let i = self.h.iter().position(|e| e.1 == j)?;
        let tag = f64::from_bits(self.h.swap_remove(i).0);
        let rest = std::mem::take(&mut self.h);
        for (bits, k) in rest {
            self.push(f64::from_bits(bits), k);
        }
        Some(tag)
    }
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.h.len()
    }
    #[inline]
    pub(super) fn push(&mut self, tag: f64, j: u32) {
        let e = ((tag + 0.0).to_bits(), j);
        let mut i = self.h.len();
        self.h.push(e);
        while i > 0 {
            let p = (i - 1) / 2;
            if e < self.h[p] {
                self.h[i] = self.h[p];
                i = p;
            } else {
                break;
            }
        }
        self.h[i] = e;
    }
    #[inline]
    pub(super) fn min_tag(&self) -> Option<f64> {
        self.h.first().map(|e| f64::from_bits(e.0))
    }
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(f64, u32)> {
        let last = self.h.pop()?;
        let n = self.h.len();
        if n == 0 {
            return Some((f64::from_bits(last.0), last.1));
        }
        let top = self.h[0];
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.h[r] < self.h[l] { r } else { l };
            if self.h[c] < last {
                self.h[i] = self.h[c];
                i = c;
            } else {
                break;
            }
        }
        self.h[i] = last;
        Some((f64::from_bits(top.0), top.1))
    }
}
