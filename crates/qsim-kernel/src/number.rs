//! The one formatter of numbers in messages, tables and charts' labels: a
//! fixed count of significant digits, in plain decimals for everyday
//! magnitudes and in exponent form for very small or very large ones.
//!
//! Every crate above the kernel uses it (qsim-analytic, which does not
//! depend on the kernel, keeps its TOML-float writer for `qsim fit`'s
//! suggested speed curve: a TOML float must always have a point).

/// `x` with `digits` significant digits (at least 1): `0.02771`, `90.00`,
/// `1234`, `1.044e-4`, `2.500e9`. Exponent form below 10^-3 and from 10^9
/// on; zero and non-finite values as Rust writes them (`0`, `NaN`, `inf`).
pub fn sig(x: f64, digits: u32) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = digits.max(1) as i32;
    let e = x.abs().log10().floor() as i32;
    if !(-3..9).contains(&e) {
        let d = (digits - 1) as usize;
        return format!("{x:.d$e}");
    }
    let d = (digits - 1 - e).max(0) as usize;
    format!("{x:.d$}")
}

/// [`sig`] without the trailing zeros of its decimals: `1.02`, `50`, `0.0111`.
pub fn sig_trimmed(x: f64, digits: u32) -> String {
    let s = sig(x, digits);
    match s.split_once('e') {
        Some((m, e)) if m.contains('.') => {
            format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.'))
        }
        None if s.contains('.') => s.trim_end_matches('0').trim_end_matches('.').to_string(),
        _ => s,
    }
}

/// Decimals that give a number about four significant digits, or `None`
/// when it reads better in exponent form.
fn decimals(x: f64) -> Option<usize> {
    let a = x.abs();
    if a == 0.0 {
        Some(0)
    } else if !(1e-3..1e6).contains(&a) {
        None
    } else if a >= 1000.0 {
        Some(0)
    } else if a >= 100.0 {
        Some(1)
    } else if a >= 10.0 {
        Some(2)
    } else if a >= 1.0 {
        Some(3)
    } else {
        Some(4)
    }
}

/// A number with about four significant digits, without exponent for the
/// usual ranges.
pub fn num(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    match decimals(x) {
        Some(d) => format!("{x:.d$}"),
        None => format!("{x:.3e}"),
    }
}

/// A mean and its CI half-width, the half-width shown to the same decimal
/// place as the mean (so ± 0.0 means below the last shown digit).
pub fn mean_ci(mean: f64, ci: f64) -> String {
    // A figure that is not defined (a class with no interactions of its
    // own).
    if mean.is_nan() {
        return "n/a".into();
    }
    // No interval (one replication without usable segment means).
    if ci.is_nan() && mean.is_finite() {
        return match decimals(mean) {
            Some(d) => format!("{mean:.d$} ± n/a"),
            None => format!("{mean:.3e} ± n/a"),
        };
    }
    if !mean.is_finite() || !ci.is_finite() {
        return format!("{mean} ± {ci}");
    }
    match decimals(mean) {
        Some(d) => format!("{mean:.d$} ± {ci:.d$}"),
        None => format!("{mean:.3e} ± {ci:.1e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::{sig, sig_trimmed};

    #[test]
    fn significant_digits() {
        assert_eq!(sig(0.027_714, 4), "0.02771");
        assert_eq!(sig(90.0, 4), "90.00");
        assert_eq!(sig(1234.4, 4), "1234");
        assert_eq!(sig(123_456.0, 4), "123456");
        assert_eq!(sig(-1.5, 3), "-1.50");
        assert_eq!(sig(1.044e-4, 4), "1.044e-4");
        assert_eq!(sig(2.5e9, 4), "2.500e9");
        assert_eq!(sig(0.001, 4), "0.001000");
        assert_eq!(sig(0.0, 4), "0");
        assert_eq!(sig(f64::NAN, 4), "NaN");
        assert_eq!(sig(7.0, 0), "7");
        assert_eq!(sig_trimmed(1.0204, 3), "1.02");
        assert_eq!(sig_trimmed(50.0, 3), "50");
        assert_eq!(sig_trimmed(0.011111, 3), "0.0111");
        assert_eq!(sig_trimmed(2.0e-5, 3), "2e-5");
    }
}
