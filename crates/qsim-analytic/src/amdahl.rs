//! Amdahl's and Gustafson's speed-up laws.
//!
//! Both take the parallel fraction `p` of the work (0..=1) and the number of
//! processors `n` (≥ 1, need not be an integer).

use crate::error::{Result, fraction, invalid};

fn check_n(n: f64) -> Result<f64> {
    if n.is_finite() && n >= 1.0 {
        Ok(n)
    } else {
        Err(invalid("n", n, "a finite number at least 1"))
    }
}

/// Amdahl (fixed problem size): `S(n) = 1 / ((1 − p) + p/n)`.
pub fn amdahl_speedup(parallel_fraction: f64, n: f64) -> Result<f64> {
    let p = fraction("parallel_fraction", parallel_fraction)?;
    let n = check_n(n)?;
    Ok(1.0 / ((1.0 - p) + p / n))
}

/// Amdahl's limit as n → ∞: `1 / (1 − p)` (infinite when p = 1).
pub fn amdahl_limit(parallel_fraction: f64) -> Result<f64> {
    let p = fraction("parallel_fraction", parallel_fraction)?;
    Ok(if p == 1.0 {
        f64::INFINITY
    } else {
        1.0 / (1.0 - p)
    })
}

/// Gustafson (problem grows with n): `S(n) = (1 − p) + p·n`.
pub fn gustafson_speedup(parallel_fraction: f64, n: f64) -> Result<f64> {
    let p = fraction("parallel_fraction", parallel_fraction)?;
    let n = check_n(n)?;
    Ok((1.0 - p) + p * n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // 95% parallel on 8 processors: 1/(0.05 + 0.11875) = 5.925…
        let s = amdahl_speedup(0.95, 8.0).unwrap();
        assert!((s - 1.0 / 0.16875).abs() < 1e-12);
        assert!((amdahl_limit(0.95).unwrap() - 20.0).abs() < 1e-9);
        assert_eq!(amdahl_speedup(0.0, 64.0).unwrap(), 1.0);
        assert_eq!(amdahl_speedup(1.0, 64.0).unwrap(), 64.0);
        assert!((gustafson_speedup(0.95, 8.0).unwrap() - 7.65).abs() < 1e-12);
        assert!(amdahl_speedup(1.1, 2.0).is_err());
        assert!(gustafson_speedup(0.5, 0.5).is_err());
        assert!(amdahl_speedup(0.5, f64::NAN).is_err());
    }
}
