//! A figure of the knee analysis at the edge of the swept range: the grid
//! cannot tell whether the true peak, knee or best limit lies beyond it, so
//! the summary says so and suggests values to add.

/// The sentence for `figure` (e.g. `knee`) found at `at` along the axis
/// `path` whose swept values are `values`, when `at` is the lowest or the
/// highest of them (and the axis has at least two values); `None` inside.
///
/// The suggested range continues the grid's own spacing at its edge (the
/// step between the two outermost values): five more steps above the top,
/// or five below the bottom; when five steps would reach zero, from a tenth
/// of the lowest value up to it, by that tenth (whole numbers on a grid of
/// whole numbers, such as a population).
pub fn edge_warning(figure: &str, path: &str, at: f64, values: &[f64]) -> Option<String> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    if v.len() < 2 || !at.is_finite() {
        return None;
    }
    let (lo, hi) = (v[0], v[v.len() - 1]);
    let integers = v.iter().all(|x| x.fract() == 0.0);
    if at == lo {
        let step = v[1] - v[0];
        let (from, to, by) = if lo > 5.0 * step {
            (lo - 5.0 * step, lo - step, step)
        } else if integers {
            let by = (lo / 10.0).round().max(1.0);
            (by, lo, by)
        } else {
            (lo / 10.0, lo, lo / 10.0)
        };
        let range = if lo > 0.0 {
            format!(
                "; add lower values, e.g. --vary {path}={}..{}:{}",
                num(from),
                num(to),
                num(by)
            )
        } else {
            String::new()
        };
        Some(format!(
            "the {figure} is at the lowest {path} swept ({}): it may lie below the grid{range}",
            num(lo)
        ))
    } else if at == hi {
        let step = v[v.len() - 1] - v[v.len() - 2];
        Some(format!(
            "the {figure} is at the highest {path} swept ({}): it may lie above the grid; add higher values, e.g. --vary {path}={}..{}:{}",
            num(hi),
            num(hi + step),
            num(hi + 5.0 * step),
            num(step)
        ))
    } else {
        None
    }
}

/// A value as typed on a command line: integers without a decimal point,
/// others with up to 6 significant digits.
fn num(x: f64) -> String {
    if x == x.round() && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        let s = format!("{:.6}", x);
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::edge_warning;

    #[test]
    fn inside_the_grid_says_nothing() {
        let v = [10.0, 20.0, 30.0];
        assert_eq!(edge_warning("knee", "p", 20.0, &v), None);
        assert_eq!(edge_warning("knee", "p", 10.0, &[10.0]), None);
    }

    #[test]
    fn at_the_first_point_suggests_lower_values() {
        let v: Vec<f64> = (1..=60).map(|i| f64::from(i) * 10.0).collect();
        assert_eq!(
            edge_warning("knee", "workload.population", 10.0, &v).unwrap(),
            "the knee is at the lowest workload.population swept (10): it may lie below the grid; add lower values, e.g. --vary workload.population=1..10:1"
        );
        let v = [300.0, 400.0, 500.0];
        assert!(
            edge_warning("knee", "n", 300.0, &v)
                .unwrap()
                .ends_with("--vary n=30..300:30")
        );
        let v = [700.0, 800.0];
        assert!(
            edge_warning("knee", "n", 700.0, &v)
                .unwrap()
                .ends_with("--vary n=200..600:100")
        );
        let v = [15.0, 20.0];
        assert!(
            edge_warning("knee", "n", 15.0, &v)
                .unwrap()
                .ends_with("--vary n=2..15:2")
        );
    }

    #[test]
    fn at_the_last_point_suggests_higher_values() {
        let v = [100.0, 200.0, 300.0];
        assert!(
            edge_warning("peak", "n", 300.0, &v).unwrap().ends_with(
                "it may lie above the grid; add higher values, e.g. --vary n=400..800:100"
            )
        );
        let v = [0.1, 0.2, 0.35];
        assert!(
            edge_warning("peak", "x", 0.35, &v)
                .unwrap()
                .ends_with("--vary x=0.5..1.1:0.15")
        );
    }
}
