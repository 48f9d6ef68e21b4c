//! The metastability boundary: the smallest trigger (a schedule's size or
//! length, any overridable value) that tips a model into a collapse it
//! does not leave within the run.
//!
//! [`search`] is given a function that runs the model at a value and
//! counts its replications and those that tipped (collapsed and did not
//! recover; see `qsim_kernel::recovery`). It runs an even grid of values
//! from `lo` to `hi`, then halves the gap between the last value that did
//! not tip and the first that did, `refine` times (down to a gap of 1 for
//! whole numbers). A value tips when more than half of its replications
//! do. The answer is a bracket (the highest value seen not to tip below
//! the lowest seen to tip), or the reason there is none: every value
//! tipped, none did, or a value that tipped lies below one that did not
//! (the fraction is not monotone in the value at these replications).

use serde::Serialize;

/// One value tried.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct BoundaryPoint {
    /// The value.
    pub value: f64,
    /// Replications run.
    pub replications: u32,
    /// Replications that tipped.
    pub tipped: u32,
    /// The fraction tipped with its 95% (Wilson) interval (low, high).
    pub fraction: (f64, f64, f64),
}

impl BoundaryPoint {
    /// More than half of the replications tipped.
    pub fn tips(&self) -> bool {
        2 * self.tipped > self.replications
    }
}

/// What the search found.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum BoundaryVerdict {
    /// The boundary lies above `below` (did not tip) and at or below
    /// `above` (tipped).
    Between {
        /// The highest value that did not tip under the lowest that did.
        below: f64,
        /// The lowest value that tipped.
        above: f64,
    },
    /// Even the lowest value tipped: the boundary is at or below it.
    AllTipped {
        /// The lowest value tried.
        lowest: f64,
    },
    /// No value tipped: the boundary is above the highest.
    NoneTipped {
        /// The highest value tried.
        highest: f64,
    },
    /// A value that tipped lies below one that did not.
    NotMonotone {
        /// The value that tipped.
        tipped: f64,
        /// The larger value that did not.
        held: f64,
    },
}

/// The result of a search.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Boundary {
    /// Every value tried, in increasing order.
    pub points: Vec<BoundaryPoint>,
    /// What they say.
    pub verdict: BoundaryVerdict,
}

/// Searches `lo..=hi` (`points` >= 2 grid values, then `refine` halvings;
/// whole numbers when `integer`) with `eval(value)` giving (replications,
/// tipped).
pub fn search<E>(
    lo: f64,
    hi: f64,
    points: usize,
    refine: usize,
    integer: bool,
    mut eval: impl FnMut(f64) -> Result<(u32, u32), E>,
) -> Result<Boundary, E> {
    let fix = |v: f64| if integer { v.round() } else { v };
    let mut tried: Vec<BoundaryPoint> = Vec::new();
    let mut at = |v: f64, tried: &mut Vec<BoundaryPoint>| -> Result<bool, E> {
        if let Some(p) = tried.iter().find(|p| p.value == v) {
            return Ok(p.tips());
        }
        let (n, k) = eval(v)?;
        let p = BoundaryPoint {
            value: v,
            replications: n,
            tipped: k,
            fraction: qsim_kernel::recovery::wilson(k, n),
        };
        tried.push(p);
        Ok(p.tips())
    };
    let points = points.max(2);
    let mut grid: Vec<f64> = (0..points)
        .map(|i| fix(lo + (hi - lo) * i as f64 / (points - 1) as f64))
        .collect();
    grid.dedup();
    let mut first_tip = None;
    for (i, &v) in grid.iter().enumerate() {
        if at(v, &mut tried)? && first_tip.is_none() {
            first_tip = Some(i);
        }
    }
    if let Some(i) = first_tip.filter(|&i| i > 0) {
        let (mut a, mut b) = (grid[i - 1], grid[i]);
        for _ in 0..refine {
            let m = fix(0.5 * (a + b));
            if m <= a || m >= b {
                break;
            }
            if at(m, &mut tried)? {
                b = m;
            } else {
                a = m;
            }
        }
    }
    tried.sort_by(|x, y| x.value.total_cmp(&y.value));
    let verdict = verdict(&tried);
    Ok(Boundary {
        points: tried,
        verdict,
    })
}

fn verdict(points: &[BoundaryPoint]) -> BoundaryVerdict {
    let lowest_tip = points.iter().find(|p| p.tips());
    let Some(t) = lowest_tip else {
        return BoundaryVerdict::NoneTipped {
            highest: points.last().map_or(f64::NAN, |p| p.value),
        };
    };
    if let Some(h) = points.iter().rev().find(|p| !p.tips() && p.value > t.value) {
        return BoundaryVerdict::NotMonotone {
            tipped: t.value,
            held: h.value,
        };
    }
    match points.iter().rev().find(|p| !p.tips() && p.value < t.value) {
        Some(b) => BoundaryVerdict::Between {
            below: b.value,
            above: t.value,
        },
        None => BoundaryVerdict::AllTipped { lowest: t.value },
    }
}

impl BoundaryVerdict {
    /// The verdict in words.
    pub fn describe(&self, path: &str) -> String {
        match self {
            BoundaryVerdict::Between { below, above } => format!(
                "the boundary lies between {path} = {below} (did not tip) and {above} (tipped): the smallest trigger that tips the model is above {below} and at most {above}"
            ),
            BoundaryVerdict::AllTipped { lowest } => format!(
                "every value tipped, the lowest ({path} = {lowest}) too: the boundary is at or below it; search lower values"
            ),
            BoundaryVerdict::NoneTipped { highest } => format!(
                "no value tipped, up to {path} = {highest}: the boundary, if any, is above it; search higher values or run longer"
            ),
            BoundaryVerdict::NotMonotone { tipped, held } => format!(
                "no boundary: {path} = {tipped} tipped but {held}, larger, did not; near the boundary a trigger tips only some replications, so run more replications (each value's fraction and interval are listed)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_bracketed_to_one_unit() {
        // Tips from 137 on: the bracket is (136, 137).
        let b = search(100.0, 200.0, 5, 10, true, |v| {
            Ok::<_, ()>((4, if v >= 137.0 { 4 } else { 0 }))
        })
        .unwrap();
        assert_eq!(
            b.verdict,
            BoundaryVerdict::Between {
                below: 136.0,
                above: 137.0
            }
        );
        let all = search(100.0, 200.0, 3, 2, true, |_| Ok::<_, ()>((4, 3))).unwrap();
        assert_eq!(all.verdict, BoundaryVerdict::AllTipped { lowest: 100.0 });
        let none = search(100.0, 200.0, 3, 2, true, |_| Ok::<_, ()>((4, 1))).unwrap();
        assert_eq!(none.verdict, BoundaryVerdict::NoneTipped { highest: 200.0 });
    }
}
