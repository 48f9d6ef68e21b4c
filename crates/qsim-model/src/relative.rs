//! Relative overrides: `--set PATH=*0.8`, `/2`, `+10%`, `-10%` change the
//! number the model gives at PATH instead of replacing it. The grammar is
//! defined here once; `tree::apply` uses it for every override (run, sweep,
//! whatif).

/// A relative change of a number, as typed after `=`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Relative {
    /// `*F`: multiply by F.
    Times(f64),
    /// `/D`: divide by D.
    Divide(f64),
    /// `+P%` or `-P%`: add P percent (negative for `-`).
    Percent(f64),
}

impl Relative {
    /// Reads a relative value: `None` when `text` is not one (then it is an
    /// absolute value), `Some(Err)` when it starts like one but is
    /// malformed.
    pub fn parse(text: &str) -> Option<Result<Relative, String>> {
        let t = text.trim();
        let number = |s: &str| -> Result<f64, String> {
            match s.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(x),
                _ => Err(format!(
                    "malformed relative value {t}: expected a number after the operator, found `{}`",
                    s.trim()
                )),
            }
        };
        if let Some(rest) = t.strip_prefix('*') {
            return Some(number(rest).map(Relative::Times));
        }
        if let Some(rest) = t.strip_prefix('/') {
            return Some(number(rest).and_then(|d| {
                if d == 0.0 {
                    Err(format!(
                        "malformed relative value {t}: cannot divide by zero"
                    ))
                } else {
                    Ok(Relative::Divide(d))
                }
            }));
        }
        let rest = t.strip_suffix('%')?;
        let (sign, body) = if let Some(b) = rest.strip_prefix('+') {
            (1.0, b)
        } else if let Some(b) = rest.strip_prefix('-') {
            (-1.0, b)
        } else {
            return Some(Err(format!(
                "malformed relative value {t}: a percentage needs a sign, e.g. +10% or -10%"
            )));
        };
        Some(number(body).map(|p| Relative::Percent(sign * p)))
    }

    /// The factor the old value is multiplied by.
    pub fn factor(self) -> f64 {
        match self {
            Relative::Times(f) => f,
            Relative::Divide(d) => 1.0 / d,
            Relative::Percent(p) => 1.0 + p / 100.0,
        }
    }

    /// The new value of `old` (the number at `path`), or why there is
    /// none. Whole numbers stay whole: a result with a fraction is
    /// refused, not rounded.
    pub(crate) fn change(self, old: Number, path: &str, text: &str) -> Result<Number, String> {
        let f = self.factor();
        match old {
            Number::Float(x) => {
                let y = x * f;
                if !y.is_finite() {
                    return Err(format!(
                        "{path}={text} gives {y} from {}; expected a finite number",
                        crate::num(x)
                    ));
                }
                Ok(Number::Float(y))
            }
            Number::Int(i) => {
                let y = i as f64 * f;
                let r = y.round();
                if !y.is_finite() || (y - r).abs() > 1e-9 * r.abs().max(1.0) {
                    return Err(format!(
                        "{path}={text} gives {} from {i}, but {path} takes a whole number; choose a change that gives one",
                        crate::num(y)
                    ));
                }
                if r.abs() >= 9.0e15 {
                    return Err(format!(
                        "{path}={text} gives {} from {i}; expected a number below 9e15",
                        crate::num(y)
                    ));
                }
                Ok(Number::Int(r as i64))
            }
        }
    }
}

/// A number of the model that a relative value changes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Number {
    /// A TOML integer (populations, counts).
    Int(i64),
    /// A TOML float.
    Float(f64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar() {
        let f = |s: &str| Relative::parse(s).map(|r| r.map(Relative::factor));
        assert_eq!(f("*0.8"), Some(Ok(0.8)));
        assert_eq!(f("/2"), Some(Ok(0.5)));
        assert_eq!(f("+10%"), Some(Ok(1.1)));
        assert_eq!(f("-10%"), Some(Ok(0.9)));
        assert_eq!(f("-25.5%"), Some(Ok(1.0 - 0.255)));
        // Absolute values are not relative.
        for abs in [
            "0.8",
            "-10",
            "+10",
            "\"*\"",
            "{ dist = \"exponential\" }",
            "none",
        ] {
            assert_eq!(f(abs), None, "{abs}");
        }
        for bad in ["*", "*x", "/0", "10%", "+%", "*inf", "/nan"] {
            assert!(matches!(f(bad), Some(Err(_))), "{bad}");
        }
    }

    #[test]
    fn integers_stay_integers() {
        let r = Relative::Times(2.0).change(Number::Int(150), "p", "*2");
        assert_eq!(r, Ok(Number::Int(300)));
        let r = Relative::Percent(10.0).change(Number::Int(150), "p", "+10%");
        assert_eq!(r, Ok(Number::Int(165)));
        let r = Relative::Times(1.5).change(Number::Int(5), "p", "*1.5");
        assert!(r.unwrap_err().contains("whole number"));
        let r = Relative::Times(0.5).change(Number::Float(0.008), "m", "*0.5");
        assert_eq!(r, Ok(Number::Float(0.004)));
    }
}
