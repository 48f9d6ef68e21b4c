use super::*;

#[test]
fn two_clusters_split_between_them() {
    // Four replications near 2000/s and one near 220/s: the run from
    // all jobs at a latch where one replication stayed collapsed.
    let t = split(&[1990.0, 2011.0, 219.0, 2003.0, 1985.0]).expect("two modes");
    assert!(t > 219.0 && t < 1985.0);
    // Two modes of two values each.
    assert!(split(&[10.0, 11.0, 50.0, 52.0]).is_some());
}

#[test]
fn a_mixed_run_is_split_into_its_modes() {
    // Replications 1 and 3 collapsed (about 50/s), the rest fast.
    let xs = [780.0, 51.0, 775.0, 49.5, 790.0];
    let results = RunResults {
        replication_results: reps(&xs),
        ..RunResults::default()
    };
    let modes = modes_of(&results);
    let idx = |m: &Vec<ReplicationResult>| m.iter().map(|r| r.index).collect::<Vec<_>>();
    assert_eq!(modes.len(), 2);
    assert_eq!(idx(&modes[0]), [1, 3]);
    assert_eq!(idx(&modes[1]), [0, 2, 4]);
    // The same values without the collapsed ones are one mode.
    let one = RunResults {
        replication_results: results
            .replication_results
            .iter()
            .filter(|r| r.system.throughput_per_s > 100.0)
            .cloned()
            .collect(),
        ..RunResults::default()
    };
    assert_eq!(modes_of(&one).len(), 1);
}

#[test]
fn one_cluster_does_not_split() {
    // Spread of a steady run: a few percent.
    assert_eq!(split(&[100.0, 103.0, 97.0, 101.0, 99.5]), None);
    // Evenly spread values have no gap that stands out.
    assert_eq!(split(&[100.0, 110.0, 121.0, 133.0, 146.0]), None);
    // A gap over 20% but within the groups' own noise.
    assert_eq!(split(&[10.0, 30.0, 5.0, 60.0, 90.0, 40.0]), None);
    assert_eq!(split(&[5.0]), None);
    assert_eq!(split(&[]), None);
}

fn reps(xs: &[f64]) -> Vec<ReplicationResult> {
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            let mut r = ReplicationResult {
                index: i as u32,
                ..ReplicationResult::default()
            };
            r.system.throughput_per_s = x;
            r
        })
        .collect()
}

#[test]
fn a_wide_other_end_does_not_agree_early() {
    // models/latch_bistable.toml run for 3e6 jobs: the run as given is
    // fast and tight; from all jobs at the latch one replication stays
    // collapsed most of its run and one leaves early. Their mean,
    // 297 ± 2658/s, "agrees" with 779/s only through its width: the
    // slow replication lies far outside the fast state's own noise.
    let given = reps(&[778.8, 778.7, 778.9, 778.75]);
    let other = reps(&[88.0, 506.3]);
    assert_eq!(split(&[778.8, 778.7, 778.9, 778.75, 88.0, 506.3]), None);
    assert_eq!(decided(&given, &other, false), Some(true));
    assert_eq!(leaves_within_run(&other), Some((88.0, 506.3)));
    // Two replications that agree but only within a wide interval
    // decide nothing early; a tight agreement decides one state.
    let noisy = reps(&[100.0, 104.0, 96.0, 101.0]);
    assert_eq!(decided(&noisy, &reps(&[85.0, 117.0]), false), None);
    assert_eq!(decided(&noisy, &reps(&[99.0, 101.5]), false), Some(false));
    assert_eq!(leaves_within_run(&reps(&[99.0, 101.5])), None);
}

#[test]
fn a_spread_run_against_a_still_collapsed_end_is_bistable() {
    // models/latch_retry.toml with a 15 ms timeout: the run's replications
    // left the fast state at different times within the run (their mean
    // 215 ± 321/s), while from all threads at the latch every attempt
    // times out (0/s). The other end's mean "agrees" with the run's only
    // through the run's width, and the values do not split into two
    // modes; a run replication far outside the collapsed end's tight
    // group decides it.
    let given = reps(&[590.0, 271.0, 0.5, 0.0]);
    let other = reps(&[0.0, 0.0]);
    assert_eq!(split(&[590.0, 271.0, 0.5, 0.0, 0.0, 0.0]), None);
    // Two replications of the other end measure no noise: undecided
    // early; all four of them still at 0 decide.
    assert_eq!(decided(&given, &other, false), None);
    assert_eq!(decided(&given, &reps(&[0.0; 4]), true), Some(true));
    assert_eq!(leaves_within_run(&given), Some((0.0, 590.0)));
    // A wide run never agrees early, even with a tight other end, and the
    // full check does not call a run bistable for a spread the other end
    // shares.
    let wide = reps(&[100.0, 130.0, 75.0, 95.0]);
    assert_eq!(decided(&wide, &reps(&[99.0, 101.0]), false), None);
    assert_eq!(
        decided(&wide, &reps(&[90.0, 121.0, 104.0, 80.0]), true),
        Some(false)
    );
}
