//! Figures as qsim prints them: a value with its 95% interval to the
//! interval's second significant digit. `qsim sweep`'s summary and the HTML
//! report (`qsim report`) format with these, so they show the same text.

/// A response time to four significant digits, in ms below a second
/// (a mean from a run claims no more).
pub(crate) fn ms(s: f64) -> String {
    if s < 1.0 {
        let m = s * 1e3;
        let d = super::whatif::decimals(m);
        format!("{m:.d$} ms")
    } else {
        let d = super::whatif::decimals(s);
        format!("{s:.d$} s")
    }
}

/// A response time with its interval, to the interval's second
/// significant digit, in ms below a second; as [`ms`] without one.
pub(crate) fn ms_ci(s: f64, ci: Option<f64>) -> String {
    let Some(c) = ci.filter(|c| c.is_finite() && *c > 0.0) else {
        return ms(s);
    };
    let (k, unit) = if s < 1.0 { (1e3, "ms") } else { (1.0, "s") };
    let (x, c) = (s * k, c * k);
    let d = (1 - c.log10().floor() as i32).clamp(0, 9) as usize;
    format!("{x:.d$} ± {c:.d$} {unit}")
}

/// A throughput with its interval, to the interval's second significant
/// digit (`0.9006 ± 0.0093/s`); four significant digits without one.
pub(crate) fn rate(x: f64, ci: Option<f64>) -> String {
    match ci.filter(|c| c.is_finite() && *c > 0.0) {
        Some(c) => {
            let d = (1 - c.log10().floor() as i32).clamp(0, 9) as usize;
            format!("{x:.d$} ± {c:.d$}/s")
        }
        None => {
            let d = super::whatif::decimals(x);
            format!("{x:.d$}/s")
        }
    }
}
