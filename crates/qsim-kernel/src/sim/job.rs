//! Jobs: the slab they live in, and the start and end of an interaction
//! (an arrival, a think time, leaving the network).

use super::event::{EV_ARRIVAL, EV_THINK, EXIT, NONE, ev, later};
use super::{Simulation, WarmPlan};
use crate::dist::Dist;
use crate::rng::SimRng;

/// A distribution with the common cases unpacked so that sampling them
/// inlines into the event handlers.
#[derive(Clone, Debug)]
#[repr(u8)]
pub(super) enum Sampler {
    Exp(f64),
    Det(f64),
    /// Boxed so that the enum has a plain tag: telling `Exp` apart is one
    /// compare instead of decoding `Dist`'s niche.
    Any(Box<Dist>),
}

impl Sampler {
    pub(super) fn new(d: &Dist) -> Sampler {
        if d.is_exponential() {
            Sampler::Exp(d.mean())
        } else if d.variance() == 0.0 {
            // Every family with zero variance always returns its mean.
            Sampler::Det(d.mean())
        } else {
            Sampler::Any(Box::new(d.clone()))
        }
    }

    /// The mean of the distribution.
    pub(super) fn mean(&self) -> f64 {
        match self {
            Sampler::Exp(m) | Sampler::Det(m) => *m,
            Sampler::Any(d) => d.mean(),
        }
    }

    #[inline(always)]
    pub(super) fn sample(&self, rng: &mut SimRng) -> f64 {
        match self {
            Sampler::Exp(m) => crate::dist::exp1(rng) * m,
            Sampler::Det(v) => det(*v),
            Sampler::Any(d) => d.sample(rng),
        }
    }
}

/// A deterministic sample: marked cold so that the compiler tests for
/// `Exp` first (its tag compare is then one branch, not three).
#[cold]
#[inline(always)]
fn det(v: f64) -> f64 {
    v
}

/// One job (or fork sub-job) in the slab.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Job {
    /// Start of the interaction (leaving think, or arrival).
    pub(super) t0: f64,
    /// Arrival at the current station.
    pub(super) t_arr: f64,
    /// Start of service at the current station.
    pub(super) t_start: f64,
    pub(super) class: u32,
    /// Next index in a sequence route.
    pub(super) pos: u32,
    /// Current station (or EXIT while thinking / outside).
    pub(super) station: u32,
    /// Fork record of a sub-job, or NONE.
    pub(super) fork: u32,
    /// Target station while waiting for region admission.
    pub(super) pending: u32,
    /// Thread number (placement of closed jobs on NUMA nodes).
    pub(super) node: u32,
}

/// Asks the kernel to back the whole 2 MiB pages inside `[addr, addr +
/// bytes)` with huge pages, when there are at least eight of them (a hint:
/// contents and validity of the memory do not change, and a refusal is
/// ignored).
#[cfg(target_os = "linux")]
fn advise_huge_pages(addr: usize, bytes: usize) {
    const HUGE: usize = 2 << 20;
    const MADV_HUGEPAGE: i32 = 14;
    unsafe extern "C" {
        fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
    }
    let start = addr.next_multiple_of(HUGE);
    let end = (addr + bytes) / HUGE * HUGE;
    if end >= start + 8 * HUGE {
        // SAFETY: the range is page-aligned and inside one live allocation
        // (the caller's); MADV_HUGEPAGE changes how the kernel backs it,
        // never what it holds.
        unsafe { madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_addr: usize, _bytes: usize) {}

impl Simulation {
    #[inline]
    pub(super) fn alloc(&mut self, class: u32) -> u32 {
        let job = Job {
            class,
            station: EXIT,
            fork: NONE,
            pending: EXIT,
            ..Job::default()
        };
        match self.free.pop() {
            Some(j) => {
                debug_assert!((j as usize) < self.jobs.len());
                // SAFETY: the free list only holds ids of jobs the slab
                // handed out, and the slab never shrinks.
                *unsafe { self.jobs.get_unchecked_mut(j as usize) } = Job { node: j, ..job };
                j
            }
            None => {
                let j = self.jobs.len() as u32;
                self.jobs.push(Job { node: j, ..job });
                // The slab may have moved: the event list prefetches from it.
                self.fel
                    .set_records(self.jobs.as_ptr() as usize, std::mem::size_of::<Job>());
                j
            }
        }
    }

    /// Makes room for `n` jobs at once (closed populations). A slab of
    /// millions of jobs is read at random (each think time ends at its own
    /// moment): on Linux it is asked to live in huge pages, so that those
    /// reads do not also miss the address-translation cache.
    pub(super) fn reserve_jobs(&mut self, n: usize) {
        self.jobs.reserve_exact(n);
        let bytes = self.jobs.capacity() * std::mem::size_of::<Job>();
        advise_huge_pages(self.jobs.as_ptr() as usize, bytes);
        self.fel
            .set_records(self.jobs.as_ptr() as usize, std::mem::size_of::<Job>());
    }

    /// Job `j` ends its think time and starts an interaction.
    #[inline(always)]
    pub(super) fn on_think(&mut self, j: u32) {
        self.events += 1;
        self.in_network += 1;
        if self.in_network > self.max_jobs {
            self.unstable();
        }
        self.begin_hot(j);
    }

    /// An open class's arrival: the next one is scheduled, and a new job
    /// starts an interaction.
    pub(super) fn on_arrival(&mut self, c: usize) {
        self.events += 1;
        debug_assert!(c < self.classes.len());
        // SAFETY: EV_ARRIVAL events carry a class index (set up by `build`
        // and here), and `classes` is never resized.
        let cl = unsafe { self.classes.get_unchecked_mut(c) };
        if let Some(d) = &cl.open {
            let t = later(self.now, d.sample(&mut cl.rng));
            self.fel.push_unsigned(t, ev(EV_ARRIVAL, c as u32, 0));
        }
        let j = self.alloc(c as u32);
        self.in_network += 1;
        if self.in_network > self.max_jobs {
            self.unstable();
        }
        self.begin_hot(j);
    }

    /// Starts an interaction of job `j` now.
    #[inline]
    pub(super) fn begin(&mut self, j: u32) {
        self.begin_hot(j);
    }

    /// [`Simulation::begin`], inlined into the hot event handlers.
    #[inline(always)]
    fn begin_hot(&mut self, j: u32) {
        // SAFETY: job ids only come from the slab's allocator (`alloc`) and
        // the slab never shrinks, so `j` is in bounds.
        let job = unsafe { self.jobs.get_unchecked_mut(j as usize) };
        job.t0 = self.now;
        job.pos = 0;
        let to = self.next_target(j, EXIT);
        self.goto(j, EXIT, to);
    }

    /// End of an interaction.
    #[inline(always)]
    pub(super) fn exit(&mut self, j: u32) {
        let now = self.now;
        // SAFETY: job ids only come from the slab's allocator and the slab
        // never shrinks.
        let job = unsafe { self.jobs.get_unchecked_mut(j as usize) };
        job.station = EXIT;
        let c = job.class as usize;
        let r = now - job.t0;
        if let Some(m) = &mut self.mser {
            m.push(r);
        }
        // SAFETY: a job's class is a class index; `classes` is never resized.
        let cl = unsafe { self.classes.get_unchecked_mut(c) };
        let (open, thinks, sla, leaving) =
            (cl.open.is_some(), cl.think.is_some(), cl.sla, cl.leaving);
        if self.measuring {
            let st = &mut cl.stats;
            st.completions += 1;
            st.sum_resp += r;
            st.hist.record(r);
            st.sla_over += u64::from(r > self.sla);
            st.class_sla_over += u64::from(r > sla);
            #[cfg(feature = "bias")]
            if crate::bias::drops(self.completions) {
                st.completions -= 1;
                st.sum_resp -= r;
            }
            self.completions += 1;
            if self.completions >= self.next_mark {
                self.on_jobs_mark();
            }
        } else {
            self.warm_exit(r);
        }
        if open {
            self.in_network -= 1;
            self.free.push(j);
        } else if leaving != 0 {
            self.retire(j);
        } else if thinks {
            self.in_network -= 1;
            self.think(j);
        } else {
            self.begin(j);
        }
    }

    /// An interaction finished during the warm-up, with response time `r`.
    #[inline(never)]
    fn warm_exit(&mut self, r: f64) {
        if let Some(t) = &mut self.trace {
            t.warm_completions += 1;
            t.warm_sum_resp += r;
        }
        if let WarmPlan::Jobs(n) = self.warm {
            self.warm_count += 1;
            if self.warm_count >= n {
                self.start_measuring();
            }
        }
    }

    /// Job `j` starts thinking (closed classes).
    #[inline]
    pub(super) fn think(&mut self, j: u32) {
        // SAFETY: job ids only come from the slab's allocator (the slab
        // never shrinks); a job's class is a class index and `classes` is
        // never resized.
        let c = unsafe { self.jobs.get_unchecked(j as usize) }.class as usize;
        let cl = unsafe { self.classes.get_unchecked_mut(c) };
        match &cl.think {
            Some(d) => {
                let t = later(self.now, d.sample(&mut cl.rng));
                self.fel.push_unsigned(t, ev(EV_THINK, 0, j));
            }
            None => {
                self.in_network += 1;
                self.begin(j);
            }
        }
    }
}
