//! Tests of the future-event list: every layout against ordered
//! references, FIFO among equal times, the switches between layouts.

use super::*;
use rand::{Rng, RngExt, SeedableRng};
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
fn pushes_while_handling_an_event_keep_the_order() {
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
fn hovering_at_both_thresholds_with_ties_and_pushes_while_handling() {
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
fn emptied_radix_buckets_give_back_large_capacity() {
    // 5000 events pending, each one handed out rescheduled about 1000 s
    // later, for 40 turnovers (the clock crosses several powers of
    // two, so many high buckets fill and empty). A bucket holding more
    // than KEEP events' room must be one filled since it was last
    // emptied (room at most twice its events, from doubling), or the
    // list keeps every bucket's high-water mark.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(17);
    let mut fel = Fel::new();
    for i in 0..5000u64 {
        fel.push(rng.random::<f64>() * 2000.0, i);
    }
    for step in 0..200_000u64 {
        let e = fel.pop().unwrap();
        fel.push(e.time() + rng.random::<f64>() * 2000.0, e.ev);
        if step % 10_000 == 0 {
            for (k, b) in fel.radix.buckets.iter().enumerate() {
                assert!(
                    b.capacity() <= KEEP.max(2 * b.len()),
                    "step {step}: bucket {k} holds {} events in room for {}",
                    b.len(),
                    b.capacity()
                );
            }
        }
    }
    assert!(!fel.is_small());
}

#[test]
fn zero_and_negative_zero_are_the_same_time() {
    let mut fel = Fel::new();
    fel.push(0.0, 1);
    fel.push(-0.0, 2);
    assert_eq!(fel.pop().unwrap().ev, 1);
    assert_eq!(fel.pop().unwrap().ev, 2);
}

/// Drives the list like the kernel (take the earliest, schedule a few
/// events no earlier than it, settle) against a map ordered by (time,
/// scheduling order), checking every event handed out and every peek.
/// `draw(rng, now)` gives the time of a new event.
fn check_against_map(
    seed: u64,
    steps: usize,
    initial: usize,
    draw: impl Fn(&mut Xoshiro256PlusPlus, f64) -> f64,
) -> (bool, bool) {
    use std::collections::BTreeMap;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut fel = Fel::new();
    let mut reference: BTreeMap<(u64, u64), ()> = BTreeMap::new();
    let mut next = 0u64;
    let (mut saw_small, mut saw_radix) = (false, false);
    for _ in 0..initial {
        let t = draw(&mut rng, 0.0);
        fel.push(t, next);
        reference.insert(((t + 0.0).to_bits(), next), ());
        next += 1;
    }
    for step in 0..steps {
        if step % 7 == 0 {
            assert_eq!(
                fel.peek().map(|e| (e.t, e.ev)),
                reference.keys().next().copied(),
                "peek, seed {seed} step {step}"
            );
        }
        let Some(got) = fel.take_min() else {
            let t = draw(&mut rng, 0.0);
            fel.push(t, next);
            reference.insert(((t + 0.0).to_bits(), next), ());
            next += 1;
            continue;
        };
        let (t, e) = reference.pop_first().unwrap().0;
        assert_eq!((got.t, got.ev), (t, e), "seed {seed} step {step}");
        let now = got.time();
        // Alternately shrink (half an event per event on average) and
        // grow (one and a half) for 400 steps: ±200 events, across
        // both switching thresholds.
        let k = if step / 400 % 2 == 0 { 2 } else { 4 };
        for _ in 0..rng.next_u64() % k {
            let t = draw(&mut rng, now);
            fel.push(t, next);
            reference.insert(((t + 0.0).to_bits(), next), ());
            next += 1;
        }
        fel.settle();
        assert_eq!(fel.len(), reference.len());
        saw_small |= fel.is_small();
        saw_radix |= !fel.is_small();
    }
    (saw_small, saw_radix)
}

#[test]
fn radix_layout_matches_an_ordered_map_with_ties() {
    // Ties at the current time (zero delays), on a coarse grid, and
    // continuous times, across both layouts and their switches.
    for seed in 0..200u64 {
        let (small, radix) =
            check_against_map(seed, 3_000, 60, |rng, now| match rng.next_u64() % 4 {
                0 => now,
                1 => now.ceil() + (rng.next_u64() % 4) as f64,
                _ => now + rng.random::<f64>() * 10.0,
            });
        assert!(small && radix, "seed {seed}: one layout unused");
    }
}

#[test]
fn radix_layout_handles_times_of_every_magnitude() {
    // Times from 1e-300 to 1e300 and exactly 0.0 use every bucket.
    for seed in 0..20u64 {
        check_against_map(seed, 20_000, 2_000, |rng, now| {
            let e = (rng.next_u64() % 600) as i32 - 300;
            match rng.next_u64() % 8 {
                0 => now,
                _ => (now + 10f64.powi(e) * rng.random::<f64>()).min(f64::MAX),
            }
        });
    }
}

#[test]
fn many_pending_events_come_out_in_order() {
    // 100,000 pending continuous times: the kernel's large-population
    // case, where most events move down several buckets.
    check_against_map(1, 300_000, 100_000, |rng, now| {
        now - (-rng.random::<f64>()).ln_1p() * 1000.0
    });
}

#[test]
fn cancel_removes_from_the_array_and_leaves_the_radix_heap_alone() {
    // Random pushes (many ties), takes and cancels of pending, already
    // handed out and never scheduled events, checked against a map.
    use std::collections::BTreeMap;
    for seed in 0..200u64 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut fel = Fel::new();
        let mut reference: BTreeMap<(u64, u64), ()> = BTreeMap::new();
        let (mut next, mut now) = (0u64, 0.0f64);
        for step in 0..2_000 {
            match rng.next_u64() % 4 {
                0 | 1 if fel.len() < SMALL_MAX => {
                    let t = now + (rng.next_u64() % 3) as f64;
                    fel.push(t, next);
                    reference.insert((t.to_bits(), next), ());
                    next += 1;
                }
                2 => {
                    // A pending event (or, half the time, one with a
                    // time it does not have).
                    let Some(&(t, e)) = reference.keys().nth(step % (reference.len() + 1)) else {
                        continue;
                    };
                    let exact = rng.next_u64() % 2 == 0;
                    let t = f64::from_bits(t) + if exact { 0.0 } else { 0.5 };
                    fel.cancel(t, e);
                    if exact {
                        reference.remove(&(t.to_bits(), e));
                    }
                }
                _ => {
                    if let Some(got) = fel.pop() {
                        now = got.time();
                        let want = reference.pop_first().unwrap().0;
                        assert_eq!((got.t, got.ev), want, "seed {seed} step {step}");
                        // Already handed out: nothing to remove.
                        fel.cancel(now, got.ev);
                    }
                }
            }
            assert_eq!(fel.len(), reference.len(), "seed {seed} step {step}");
        }
    }
    // Radix layout: the event stays (its handler sees it is stale).
    let mut fel = Fel::new();
    for i in 0..100u64 {
        fel.push(i as f64, i);
    }
    assert!(!fel.is_small());
    fel.cancel(50.0, 50);
    assert_eq!(fel.len(), 100);
}

#[test]
fn runs_keep_the_order_when_pushes_land_inside_them() {
    // A few thousand events pending, then every event handed out schedules
    // more: long ones (into the buckets), short ones inside the run being
    // handed out (near its front, or far enough in to be bisected), and
    // ties at the current time and on a coarse grid. In the growing phases
    // two mostly very short ones: more land inside the run than leave it,
    // which must send it back to the buckets. Every pop and peek must match a map
    // ordered by (time, scheduling order).
    use std::collections::BTreeMap;
    let mut refiled = 0;
    for seed in 0..12u64 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut fel = Fel::new();
        let mut reference: BTreeMap<(u64, u64), ()> = BTreeMap::new();
        let mut next = 0u64;
        let mut push = |fel: &mut Fel, reference: &mut BTreeMap<_, _>, t: f64| {
            fel.push(t, next);
            reference.insert((t.to_bits(), next), ());
            next += 1;
        };
        for _ in 0..3000 {
            let t = rng.random::<f64>() * 100.0;
            push(&mut fel, &mut reference, t);
        }
        for step in 0..40_000u64 {
            let live = |fel: &Fel| {
                if fel.is_small() {
                    0
                } else {
                    fel.radix.cur.len() - fel.radix.head
                }
            };
            let before = live(&fel);
            let Some(got) = fel.take_min() else { break };
            let want = reference.pop_first().unwrap().0;
            assert_eq!((got.t, got.ev), want, "seed {seed} step {step}");
            let now = got.time();
            let growing = step / 2000 % 2 == 1;
            let n = if growing { 2 } else { rng.next_u64() % 2 };
            for _ in 0..n {
                let kind = if growing && rng.next_u64() % 8 != 0 {
                    3
                } else {
                    rng.next_u64() % 8
                };
                let t = match kind {
                    0 => now,
                    1 => now.ceil() + (rng.next_u64() % 2) as f64,
                    2 => now + rng.random::<f64>() * 0.05,
                    3 | 4 => now + rng.random::<f64>() * 1e-4,
                    _ => now + rng.random::<f64>() * 100.0,
                };
                push(&mut fel, &mut reference, t);
            }
            fel.settle();
            assert_eq!(fel.len(), reference.len());
            // A run only loses events by handing them out, or all of them
            // (but those at the current time) to the buckets.
            refiled += usize::from(!fel.is_small() && before > 1 && live(&fel) + 1 < before);
            if step % 13 == 0 {
                assert_eq!(
                    fel.peek().map(|e| (e.t, e.ev)),
                    reference.keys().next().copied(),
                    "peek, seed {seed} step {step}"
                );
            }
        }
    }
    assert!(refiled > 0, "no run went back to the buckets");
}

#[test]
fn a_crowded_bucket_is_sorted_with_its_ties_in_order() {
    // 200 events within a few nanoseconds of 1000 s, many at equal times:
    // every bucket holding them agrees on the byte below its own too, so
    // the run is sorted without the counting pass.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
    let mut fel = Fel::new();
    let mut want = Vec::new();
    for i in 0..200u64 {
        let t = 1000.0 + (rng.next_u64() % 50) as f64 * 1e-12;
        fel.push(t, i);
        want.push((t.to_bits(), i));
    }
    want.sort();
    let got: Vec<(u64, u64)> = std::iter::from_fn(|| fel.pop().map(|e| (e.t, e.ev))).collect();
    assert_eq!(got, want);
}

#[test]
fn sort_run_sorts_stably_or_declines_a_crowd() {
    // Spread over byte 1 (at most a few per value): sorted by time, equal
    // times in their original order.
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(4);
    let spread: Vec<Entry> = (0..256u64)
        .map(|i| Entry {
            t: ((rng.next_u64() % 256) << 8) | (rng.next_u64() % 4),
            ev: i,
        })
        .collect();
    let mut out = Vec::new();
    assert!(sort_run(&spread, &mut out, 8));
    let mut want = spread.clone();
    want.sort_by_key(|e| e.t);
    assert_eq!(out, want);
    // Seventeen sharing one value of byte 1: declined, `out` untouched.
    let crowd: Vec<Entry> = (0..17u64)
        .map(|i| Entry {
            t: 0x500 | (16 - i),
            ev: i,
        })
        .collect();
    let mut out = Vec::new();
    assert!(!sort_run(&crowd, &mut out, 8));
    assert!(out.is_empty());
}

#[test]
fn dense_short_events_a_little_ahead_of_now_keep_the_order() {
    // Hundreds pending around 0.01-0.1 s, nearly every push due within a
    // few microseconds (50 ns critical sections, 1 us bursts, polls),
    // bursts of equal times (every sleeper woken at once), events at the
    // current time and a few long ones (think times, stale retimed
    // events). The runs the earliest buckets form are where the next
    // pushes land, so they must go back to the buckets, several times per
    // seed; every pop and peek must match a map ordered by (time,
    // scheduling order).
    use std::collections::BTreeMap;
    for seed in 0..6u64 {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut fel = Fel::new();
        let mut reference: BTreeMap<(u64, u64), ()> = BTreeMap::new();
        let mut next = 0u64;
        let mut push = |fel: &mut Fel, reference: &mut BTreeMap<_, _>, t: f64| {
            fel.push(t, next);
            reference.insert((t.to_bits(), next), ());
            next += 1;
        };
        let exp = |rng: &mut Xoshiro256PlusPlus, mean: f64| -(-rng.random::<f64>()).ln_1p() * mean;
        for _ in 0..250 {
            let t = 0.01 + rng.random::<f64>() * if rng.next_u64() % 4 == 0 { 1e-2 } else { 2e-5 };
            push(&mut fel, &mut reference, t);
        }
        let (mut refiled, mut in_runs) = (0, 0);
        for step in 0..30_000u64 {
            let live = |fel: &Fel| {
                if fel.is_small() {
                    0
                } else {
                    fel.radix.cur.len() - fel.radix.head
                }
            };
            let before = live(&fel);
            let got = fel.take_min().expect("never empty");
            let want = reference.pop_first().unwrap().0;
            assert_eq!((got.t, got.ev), want, "seed {seed} step {step}");
            let now = got.time();
            // About one push per event, more when few are pending and
            // none when many are: between ~150 and ~350 pending.
            let n = match reference.len() {
                0..150 => 2,
                150..350 => 1,
                _ => 0,
            };
            for _ in 0..n {
                match rng.next_u64() % 16 {
                    0 => push(&mut fel, &mut reference, now),
                    1 => {
                        let t = now + exp(&mut rng, 1e-6);
                        for _ in 0..1 + rng.next_u64() % 6 {
                            push(&mut fel, &mut reference, t);
                        }
                    }
                    2 => {
                        let t = now + exp(&mut rng, 4e-3);
                        push(&mut fel, &mut reference, t);
                    }
                    3..7 => {
                        let t = now + exp(&mut rng, 5e-8);
                        push(&mut fel, &mut reference, t);
                    }
                    7..10 => {
                        let t = now + rng.random::<f64>() * 5e-6;
                        push(&mut fel, &mut reference, t);
                    }
                    _ => {
                        let t = now + exp(&mut rng, 1e-6);
                        push(&mut fel, &mut reference, t);
                    }
                }
            }
            fel.settle();
            assert_eq!(fel.len(), reference.len());
            assert!(!fel.is_small(), "seed {seed} step {step}: too few pending");
            refiled += usize::from(before > 1 && live(&fel) + 1 < before);
            in_runs += live(&fel);
            if step % 11 == 0 {
                assert_eq!(
                    fel.peek().map(|e| (e.t, e.ev)),
                    reference.keys().next().copied(),
                    "peek, seed {seed} step {step}"
                );
            }
        }
        assert!(
            refiled >= 2,
            "seed {seed}: {refiled} runs went back to the buckets"
        );
        // Pushes land in runs of a few events, not in one run holding
        // most of the ~250 pending (where each would shift dozens).
        let mean = in_runs as f64 / 30_000.0;
        assert!(
            mean < 24.0,
            "seed {seed}: {mean} events in the run on average"
        );
    }
}
