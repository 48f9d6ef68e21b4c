//! Tests of the distributions: sample moments against the closed forms,
//! the ziggurat's paths driven word by word, the constructors' limits and
//! their messages.
//!
//! Mutation testing (cargo-mutants, see ARCHITECTURE.md): these tests
//! catch 403 of the 457 mutants of `dist.rs` and time out 2 (tables on
//! which `exp1` never returns; 29 do not build). The 23 left are
//! equivalent:
//! - `>=` for `>` where two floats would have to tie exactly: a standard
//!   deviation of exactly 1e12 s in `in_range` (a gamma's is at most 1e9 s,
//!   a lognormal's is a product of `exp`s), a lognormal mean of exactly
//!   1e9 s, `|scv − 1| > 1e-9` and `|k·scv − 1| > 1e-6` (a number near 1
//!   minus 1 is a multiple of 2^-53, and neither tolerance is), and the
//!   wedge's height `y < e^-x`;
//! - `>=` for `mean > 0` before `from_mean_scv`'s standard deviation check
//!   (a mean of 0 has a standard deviation of 0);
//! - `−` for `+` in the balanced hyperexponential's `p`: it gives `1 − p`,
//!   and the means `mean/2p`, `mean/2(1 − p)` swap with it: the same law;
//! - the empirical draw's `min(len − 1)` as `len + 1` or `len / 1`: `unit`
//!   is at most 1 − 2^-53, whose product with a length below 2^53 rounds
//!   below the length, so the index never needs the clamp;
//! - `c_exp`: a neighbouring `k` in the range reduction (three mutants;
//!   |r| up to 1.5·ln 2, which the 27-term series still sums to an ulp)
//!   or a 28th term (below 1e-40); `c_ln`: first guesses off by at most 2
//!   (eight mutants of the mantissa bits or of `m − 1`), which the 8 Halley
//!   steps still bring to the root, or a 9th step;
//! - `zig_tables`: `<=` in the edge recursion also computes `x[256]`, which
//!   is then set to 0.

use super::*;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

fn check_moments(d: &Dist) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let n = 400_000;
    let (mut s, mut s2) = (0.0, 0.0);
    for _ in 0..n {
        let x = d.sample(&mut rng);
        assert!(x.is_finite() && x >= 0.0);
        s += x;
        s2 += x * x;
    }
    let m = s / n as f64;
    let v = s2 / n as f64 - m * m;
    // The sample mean has standard error sqrt(var/n); allow 5 of them.
    let se = (d.variance() / n as f64).sqrt();
    assert!(
        (m - d.mean()).abs() <= 5.0 * se + 1e-12,
        "{d:?}: sample mean {m} vs {}",
        d.mean()
    );
    if d.variance() > 0.0 {
        assert!(
            (v / d.variance() - 1.0).abs() < 0.05,
            "{d:?}: sample variance {v} vs {}",
            d.variance()
        );
    }
}

#[test]
fn const_math_matches_std() {
    // Out to ±700 (e^±700 is still a normal f64): the range reduction, not
    // the series, has to carry the far ends.
    for &x in &[-700.0, -7.7, -3.0, -0.5, 0.0, 0.3, 1.0, 5.0, 700.0] {
        assert!((c_exp(x) / x.exp() - 1.0).abs() < 2e-15, "exp {x}");
    }
    // 1e±300: the first guess from the exponent bits must be close, since a
    // Halley step from far off moves by at most 2.
    for &y in &[1e-300, 1e-3, 0.1, 0.5, 1.0, 2.0, 8.7, 1e300] {
        assert!(
            (c_ln(y) - y.ln()).abs() < 2e-15 * y.ln().abs().max(1.0),
            "ln {y}"
        );
    }
    // The recursion reproduces the standard table, and every
    // layer has area v.
    let x = |i: usize| {
        if i == 0 {
            ZIG_V / (-ZIG_R).exp()
        } else {
            ZIG.w[i] * (1u64 << 53) as f64
        }
    };
    // Top layer edge of the standard 256-layer table (Marsaglia & Tsang).
    assert!(
        (x(255) - 0.063_852_163_815_002_1).abs() < 1e-12,
        "{}",
        x(255)
    );
    for i in 1..255 {
        let area = x(i) * (ZIG.f[i + 1] - ZIG.f[i]);
        assert!((area / ZIG_V - 1.0).abs() < 1e-9, "layer {i}: {area}");
    }
}

#[test]
fn exp1_is_exponential_ks_moments_and_tail() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2024);
    let n = 1_000_000usize;
    let mut xs: Vec<f64> = (0..n).map(|_| exp1(&mut rng)).collect();
    assert!(xs.iter().all(|x| x.is_finite() && *x >= 0.0));
    let nf = n as f64;
    // Moments: mean 1 (sd 1/sqrt n), variance 1 (sd sqrt(8/n)).
    let m = xs.iter().sum::<f64>() / nf;
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / nf;
    assert!((m - 1.0).abs() < 5.0 / nf.sqrt(), "mean {m}");
    assert!((v - 1.0).abs() < 5.0 * (8.0 / nf).sqrt(), "variance {v}");
    // Tail: P(X > 5) = e^-5, binomial standard error.
    let p = (-5.0f64).exp();
    let tail = xs.iter().filter(|&&x| x > 5.0).count() as f64 / nf;
    assert!(
        (tail - p).abs() < 5.0 * (p * (1.0 - p) / nf).sqrt(),
        "P(X>5) {tail} vs {p}"
    );
    // Deep tail past the ziggurat's r = 7.70: P(X > 8) = e^-8.
    let p8 = (-8.0f64).exp();
    let tail8 = xs.iter().filter(|&&x| x > 8.0).count() as f64 / nf;
    assert!(
        (tail8 - p8).abs() < 5.0 * (p8 / nf).sqrt() + 1e-6,
        "P(X>8) {tail8} vs {p8}"
    );
    // Kolmogorov–Smirnov against 1 − e^-x: critical value at α = 0.001
    // is 1.95 / sqrt n.
    xs.sort_by(f64::total_cmp);
    let mut d = 0.0f64;
    for (i, &x) in xs.iter().enumerate() {
        let cdf = -(-x).exp_m1();
        d = d
            .max((cdf - i as f64 / nf).abs())
            .max(((i + 1) as f64 / nf - cdf).abs());
    }
    assert!(d < 1.95 / nf.sqrt(), "KS statistic {d}");
}

#[test]
fn samples_match_mean_and_variance() {
    check_moments(&Dist::exponential(2.0).unwrap());
    check_moments(&Dist::deterministic(0.5).unwrap());
    check_moments(&Dist::uniform(1.0, 3.0).unwrap());
    check_moments(&Dist::erlang(4, 1.0).unwrap());
    check_moments(&Dist::from_mean_scv(Family::HyperExponential, 1.0, 4.0).unwrap());
    check_moments(&Dist::from_mean_scv(Family::LogNormal, 1.0, 0.5).unwrap());
    check_moments(&Dist::from_mean_scv(Family::Gamma, 2.0, 0.25).unwrap());
    check_moments(&Dist::empirical(&[1.0, 2.0, 4.0]).unwrap());
}

#[test]
fn mean_scv_constructors_hit_their_targets() {
    for (fam, scv) in [
        (Family::Exponential, 1.0),
        (Family::Deterministic, 0.0),
        (Family::Uniform, 0.2),
        (Family::Erlang, 0.25),
        (Family::HyperExponential, 3.0),
        (Family::LogNormal, 2.0),
        (Family::Gamma, 0.5),
    ] {
        let d = Dist::from_mean_scv(fam, 0.7, scv).unwrap();
        assert!((d.mean() - 0.7).abs() < 1e-12, "{fam:?}");
        assert!((d.scv() - scv).abs() < 1e-9, "{fam:?}: {}", d.scv());
    }
}

#[test]
fn bad_parameters_are_rejected() {
    assert!(Dist::exponential(-1.0).is_err());
    assert!(Dist::exponential(0.0).is_err());
    assert!(Dist::exponential(f64::NAN).is_err());
    assert!(Dist::deterministic(-0.1).is_err());
    assert!(Dist::uniform(2.0, 1.0).is_err());
    assert!(Dist::erlang(0, 1.0).is_err());
    assert!(Dist::hyperexponential(1.5, 1.0, 1.0).is_err());
    assert!(Dist::empirical(&[]).is_err());
    assert!(Dist::empirical(&[1.0, -1.0]).is_err());
    assert!(Dist::from_mean_scv(Family::Erlang, 1.0, 0.3).is_err());
    assert!(Dist::from_mean_scv(Family::HyperExponential, 1.0, 0.5).is_err());
    assert!(Dist::from_mean_scv(Family::Uniform, 1.0, 0.5).is_err());
    let e = Dist::exponential(-1.0).unwrap_err().to_string();
    assert!(e.contains("found -1"), "{e}");
}

/// `a` equals `b` to 1e-12 relative (exactly, when `b` is 0).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs()
}

/// The message of a constructor's error.
fn msg(r: Result<Dist, DistError>) -> String {
    match r {
        Ok(d) => panic!("expected an error, built {d:?}"),
        Err(e) => e.to_string(),
    }
}

/// The number a message shows between `before` and `after`; the message
/// must be exactly those three parts.
fn number_between(msg: &str, before: &str, after: &str) -> f64 {
    let Some(n) = msg.strip_prefix(before).and_then(|r| r.strip_suffix(after)) else {
        panic!("unexpected message: {msg}");
    };
    n.parse().unwrap_or_else(|e| panic!("{n} in {msg}: {e}"))
}

/// One law of every kind, with its mean and variance in closed form.
fn every_kind() -> Vec<(Dist, f64, f64)> {
    let e = std::f64::consts::E;
    [
        (Dist::exponential(2.0), 2.0, 4.0),
        (Dist::deterministic(0.5), 0.5, 0.0),
        (Dist::uniform(1.0, 3.0), 2.0, 1.0 / 3.0),
        // k·θ and k·θ² with θ = mean/k: summed phases, then one gamma.
        (Dist::erlang(4, 2.0), 2.0, 1.0),
        (Dist::erlang(50, 2.0), 2.0, 0.08),
        // Mean 0.25·1 + 0.75·3; second moment 2(0.25·1² + 0.75·3²) = 14.
        (Dist::hyperexponential(0.25, 1.0, 3.0), 2.5, 14.0 - 6.25),
        (Dist::lognormal(0.0, 1.0), e.sqrt(), (e - 1.0) * e),
        (Dist::gamma(3.0, 2.0), 6.0, 12.0),
        // Deviations −4/3, −1/3, 5/3: (16 + 1 + 25)/9 over 3.
        (Dist::empirical(&[1.0, 2.0, 4.0]), 7.0 / 3.0, 14.0 / 9.0),
    ]
    .into_iter()
    .map(|(d, m, v)| (d.unwrap(), m, v))
    .collect()
}

#[test]
fn moments_are_the_closed_forms() {
    for (d, mean, var) in every_kind() {
        assert!(close(d.mean(), mean), "{d:?}: mean {} vs {mean}", d.mean());
        assert!(close(d.variance(), var), "{d:?}: variance {}", d.variance());
        let scv = var / (mean * mean);
        assert!(close(d.scv(), scv), "{d:?}: scv {} vs {scv}", d.scv());
    }
    // A mean of 0 has scv 0, not 0/0.
    assert_eq!(Dist::deterministic(0.0).unwrap().scv(), 0.0);
    assert!(Dist::exponential(3.0).unwrap().is_exponential());
    assert!(!Dist::deterministic(3.0).unwrap().is_exponential());
    assert!(!Dist::uniform(0.0, 6.0).unwrap().is_exponential());
    // Two times near 1e9 s that differ by 0.3 s: the variance is the
    // squared half-difference, not lost to cancellation (a one-pass
    // Σx² − n·mean² is off in the sixth digit here).
    let (a, b) = (1e9 - 0.3, 1e9);
    let d = Dist::empirical(&[a, b]).unwrap();
    let half = (b - a) / 2.0;
    assert!(close(d.variance(), half * half), "{}", d.variance());
}

#[test]
fn a_scaled_law_draws_the_same_stream_times_k() {
    let k = 2.5;
    for (d, ..) in every_kind() {
        let s = d.scaled(k).unwrap();
        assert!(close(s.mean(), k * d.mean()), "{d:?}: {}", s.mean());
        assert!(close(s.scv(), d.scv()), "{d:?}: scv {}", s.scv());
        let mut a = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut b = Xoshiro256PlusPlus::seed_from_u64(11);
        for _ in 0..1000 {
            let (x, y) = (s.sample(&mut a), d.sample(&mut b));
            assert!(close(x, k * y), "{d:?}: {x} vs {k} × {y}");
        }
    }
    let d = Dist::deterministic(0.5).unwrap();
    for (k, shown) in [
        (0.0, "0"),
        (-1.0, "-1"),
        (f64::INFINITY, "inf"),
        (f64::NAN, "NaN"),
    ] {
        let e = d.scaled(k).unwrap_err().to_string();
        assert_eq!(
            e,
            format!("a duration scale must be a positive number, found {shown}")
        );
    }
}

#[test]
fn erlang_up_to_32_phases_is_the_sum_of_its_phases() {
    // Below the switch a draw is k draws of `exp1` from the stream, summed
    // and scaled; above it, one gamma variate of the same law.
    for k in [1, 4, 32] {
        let d = Dist::erlang(k, 2.0).unwrap();
        let mut a = Xoshiro256PlusPlus::seed_from_u64(5);
        let mut b = Xoshiro256PlusPlus::seed_from_u64(5);
        for _ in 0..100 {
            let sum = (0..k).fold(0.0, |s, _| s + exp1(&mut b));
            assert_eq!(d.sample(&mut a), sum * (2.0 / f64::from(k)), "k {k}");
        }
    }
    check_moments(&Dist::erlang(33, 2.0).unwrap());
}

#[test]
fn messages_show_numbers_plainly_or_in_scientific_notation() {
    for (x, shown) in [
        (0.0, "0"),
        (0.5, "0.5"),
        (1e-4, "0.0001"),
        (123_456.0, "123456"),
        (1e15, "1e15"),
        (1e300, "1e300"),
        (-2.5e-7, "-2.5e-7"),
        (f64::INFINITY, "inf"),
        (f64::NAN, "NaN"),
    ] {
        assert_eq!(num(x), shown);
    }
}

#[test]
fn limits_are_inclusive_and_errors_say_what_was_found() {
    assert_eq!(
        msg(Dist::gamma(f64::INFINITY, 1.0)),
        "gamma shape must be a positive finite number, found inf"
    );
    assert_eq!(
        msg(Dist::gamma(0.0, 1.0)),
        "gamma shape must be a positive finite number, found 0"
    );
    assert_eq!(
        msg(Dist::deterministic(f64::INFINITY)),
        "deterministic value must be a finite number >= 0, found inf"
    );
    assert_eq!(
        msg(Dist::lognormal(0.0, f64::NAN)),
        "lognormal sigma must be a finite number >= 0, found NaN"
    );
    assert_eq!(
        msg(Dist::exponential(2e9)),
        "exponential mean must be at most 1e9 s (an f64 simulation clock cannot resolve short times next to longer ones), found 2000000000"
    );
    assert_eq!(Dist::exponential(MAX_TIME_S).unwrap().mean(), MAX_TIME_S);
    assert_eq!(Dist::uniform(1.0, 1.0).unwrap().variance(), 0.0);
    // A built law's mean (gamma: shape × scale) is at most 1e9 s.
    assert_eq!(Dist::gamma(1.0, 1e9).unwrap().mean(), MAX_TIME_S);
    assert_eq!(
        msg(Dist::gamma(2.0, 1e9)),
        "gamma has a mean of 2000000000 s; at most 1e9 s can be simulated"
    );
    // Lognormal mu −50, sigma 10: mean e^0 = 1 s, standard deviation
    // sqrt(e^100 − 1) = e^50 s.
    let m = msg(Dist::lognormal(-50.0, 10.0));
    let sd = number_between(
        &m,
        "lognormal has a standard deviation of ",
        " s; at most 1e12 s can be simulated (its tail would draw times the simulation clock cannot resolve)",
    );
    assert!(close(sd, 50f64.exp()), "{m}");
    // Lognormal mu ln(2e9) − 3.125, sigma 2.5: mean e^(mu + 6.25/2) = 2e9 s,
    // caught by lognormal's own check, which names mu and sigma.
    let mu = 2e9f64.ln() - 3.125;
    let m = msg(Dist::lognormal(mu, 2.5));
    let mean = number_between(
        &m,
        &format!("lognormal with mu {mu} and sigma 2.5 has the mean exp(mu + sigma^2/2) = "),
        " s; at most 1e9 s can be simulated (lower mu or sigma)",
    );
    assert!(close(mean, 2e9), "{m}");
}

#[test]
fn mean_scv_limits_and_errors() {
    use Family::*;
    let f = Dist::from_mean_scv;
    // An infinite mean is the family's error, not the standard deviation's.
    assert_eq!(
        msg(f(Exponential, f64::INFINITY, 1.0)),
        "exponential mean must be a positive finite number, found inf"
    );
    // mean·√scv = 1e9·√1e7 = 3.16e12 s is over 1e12 s whatever the family.
    let m = msg(f(Gamma, 1e9, 1e7));
    let sd = number_between(
        &m,
        "mean 1000000000 s with scv 10000000 gives a standard deviation of ",
        " s; at most 1e12 s can be simulated (its tail would draw times the simulation clock cannot resolve)",
    );
    assert!(close(sd, 1e9 * 1e7f64.sqrt()), "{m}");
    // Exactly 1e12 s passes that check (no "1e12 s; at most 1e12 s"); this
    // gamma then fails on its scale, mean·scv.
    assert_eq!(
        msg(f(Gamma, 1e6, 1e12)),
        "gamma scale must be at most 1e9 s (an f64 simulation clock cannot resolve short times next to longer ones), found 1e18"
    );
    assert_eq!(
        msg(f(Exponential, 1.0, 1.5)),
        "an exponential distribution has scv 1, found scv 1.5"
    );
    assert!(f(Exponential, 1.0, 1.0 + 1e-10).is_ok());
    // Uniform: scv up to 1/3 (uniform on [0, 2 mean]), with 1e-12 for
    // rounding, both inclusive.
    let u = f(Uniform, 1.0, 1.0 / 3.0).unwrap();
    assert!(
        close(u.mean(), 1.0) && close(u.variance(), 1.0 / 3.0),
        "{u:?}"
    );
    assert!(f(Uniform, 1.0, 1.0 / 3.0 + 1e-12).is_ok());
    assert_eq!(
        msg(f(Uniform, 1.0, 0.34)),
        "a uniform distribution on non-negative values has scv <= 1/3, found scv 0.34"
    );
    // Erlang: scv 1/k for a whole k from 1 (the exponential) to u32::MAX.
    let e = f(Erlang, 2.0, 1.0).unwrap();
    assert!(close(e.mean(), 2.0) && close(e.variance(), 4.0), "{e:?}");
    let top = 1.0 / f64::from(u32::MAX);
    let e = f(Erlang, 1.0, top).unwrap();
    assert!(close(e.mean(), 1.0) && close(e.scv(), top), "{e:?}");
    let over = 2f64.powi(-33);
    assert_eq!(
        msg(f(Erlang, 1.0, over)),
        format!("an erlang distribution has scv 1/k for a whole k >= 1, found scv {over}")
    );
    // Hyperexponential: scv from 1 (p = 1/2, two equal means).
    let h = f(HyperExponential, 2.0, 1.0).unwrap();
    assert!(close(h.mean(), 2.0) && close(h.variance(), 4.0), "{h:?}");
    assert_eq!(
        msg(f(HyperExponential, 1.0, 0.99)),
        "a hyperexponential distribution has scv >= 1, found scv 0.99"
    );
}

/// A stream that plays back fixed 64-bit words, to drive a sampler down
/// one exact path; the test fails if the sampler asks for more.
struct Script {
    words: Vec<u64>,
    next: usize,
}

impl rand::TryRng for Script {
    type Error = core::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok((self.try_next_u64()? >> 32) as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let Some(&w) = self.words.get(self.next) else {
            panic!("the sampler asked for more than {} words", self.words.len());
        };
        self.next += 1;
        Ok(w)
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        for b in dst {
            *b = self.try_next_u64()? as u8;
        }
        Ok(())
    }
}

/// One draw of `d` from exactly these words (all of them drawn).
fn draw(d: impl Fn(&mut Script) -> f64, words: &[u64]) -> f64 {
    let mut s = Script {
        words: words.to_vec(),
        next: 0,
    };
    let x = d(&mut s);
    assert_eq!(s.next, words.len(), "words drawn, for {x}");
    x
}

/// The word `exp1` reads as layer `i`, position `u` (< 2^53).
fn zig(i: usize, u: u64) -> u64 {
    (u << 11) | i as u64
}

/// The word `unit` reads as `v / 2^53`.
fn unit_word(v: u64) -> u64 {
    v << 11
}

/// The largest position, at a layer's outer edge.
const TOP: u64 = (1 << 53) - 1;

#[test]
fn ziggurat_paths_word_by_word() {
    let e = |words: &[u64]| draw(exp1::<Script>, words);
    let w = |i: usize| ZIG.w[i];
    // In a layer's rectangle: the position scaled to the layer.
    assert_eq!(e(&[zig(3, 12_345)]), 12_345.0 * w(3));
    assert_eq!(e(&[zig(3, ZIG.k[3] - 1)]), (ZIG.k[3] - 1) as f64 * w(3));
    // Past r in the base strip: the tail is r plus a fresh exponential
    // (memoryless), so one more word; twice, 2r plus one.
    assert_eq!(e(&[zig(0, TOP), zig(7, 5)]), ZIG_R + 5.0 * w(7));
    assert_eq!(
        e(&[zig(0, TOP), zig(0, TOP), zig(2, 9)]),
        2.0 * ZIG_R + 9.0 * w(2)
    );
    // A point of layer 9's wedge, between x[10] and x[9]: kept when a height
    // drawn uniformly between the layer's densities f[9] < f[10] falls
    // under e^-x, else the draw starts again.
    let u = (ZIG.k[9] + TOP) / 2;
    let x = u as f64 * w(9);
    let a = ((-x).exp() - ZIG.f[9]) / (ZIG.f[10] - ZIG.f[9]);
    assert!(0.1 < a && a < 0.9, "{a}");
    let height = |h: f64| unit_word((h * (1u64 << 53) as f64) as u64);
    assert_eq!(e(&[zig(9, u), height(a - 1e-6)]), x);
    assert_eq!(e(&[zig(9, u), height(a + 1e-6), zig(4, 77)]), 77.0 * w(4));
    assert_eq!(e(&[zig(0, TOP), zig(9, u), height(a - 1e-6)]), ZIG_R + x);
    // The fast path's bound is exclusive: u = k[i] is the wedge's first
    // point, kept (it lies left of x[i+1]) after drawing a height.
    let k = ZIG.k[9];
    assert_eq!(e(&[zig(9, k), unit_word(0)]), k as f64 * w(9));
}

#[test]
fn hyperexponential_p_0_and_1_never_and_always_pick_phase_1() {
    let x = 12_345.0 * ZIG.w[3];
    let never = Dist::hyperexponential(0.0, 1.0, 2.0).unwrap();
    let always = Dist::hyperexponential(1.0, 1.0, 2.0).unwrap();
    // The uniform choosing the phase at its extremes, 0 and 1 − 2^-53.
    for v in [0, TOP] {
        let words = [unit_word(v), zig(3, 12_345)];
        assert_eq!(draw(|s| never.sample(s), &words), 2.0 * x);
        assert_eq!(draw(|s| always.sample(s), &words), x);
    }
}
