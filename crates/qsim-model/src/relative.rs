//! Relative overrides: `--set PATH=*0.8`, `/2`, `+10%`, `-10%` change the
//! number the model gives at PATH instead of replacing it. The grammar is
//! defined here once; `tree::apply` uses it for every override (run, sweep,
//! whatif).

use crate::tree::{Node, Origin, V};

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

    /// The new value of `old` (the node at `path`), tagged as set by
    /// override `index`, or why there is none.
    pub(crate) fn apply_to(
        self,
        old: &Node,
        path: &str,
        text: &str,
        index: usize,
    ) -> Result<Node, String> {
        let f = self.factor();
        let v = match old.v {
            V::Float(x) => {
                let y = x * f;
                if !y.is_finite() {
                    return Err(format!(
                        "{path}={text} gives {y} from {}; expected a finite number",
                        crate::num(x)
                    ));
                }
                V::Float(y)
            }
            V::Int(i) => {
                // Integer keys (population, servers, sizes) stay integers:
                // a result with a fraction is refused, not rounded.
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
                V::Int(r as i64)
            }
            ref other => {
                return Err(format!(
                    "{path}={text} changes a number, but {path} is {}",
                    other.describe()
                ));
            }
        };
        Ok(Node {
            v,
            origin: Origin::Set(index, None),
        })
    }
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
        let node = |v| Node {
            v,
            origin: Origin::File(0..1),
        };
        let r = Relative::Times(2.0).apply_to(&node(V::Int(150)), "p", "*2", 0);
        assert!(matches!(r.map(|n| n.v), Ok(V::Int(300))));
        let r = Relative::Percent(10.0).apply_to(&node(V::Int(150)), "p", "+10%", 0);
        assert!(matches!(r.map(|n| n.v), Ok(V::Int(165))));
        let r = Relative::Times(1.5).apply_to(&node(V::Int(5)), "p", "*1.5", 0);
        assert!(r.unwrap_err().contains("whole number"));
        let r = Relative::Times(0.5).apply_to(&node(V::Float(0.008)), "m", "*0.5", 0);
        assert!(matches!(r.map(|n| n.v), Ok(V::Float(x)) if x == 0.004));
        let r = Relative::Times(0.5).apply_to(&node(V::Str("ps".into())), "d", "*0.5", 0);
        assert!(r.unwrap_err().contains("changes a number"));
    }
}
