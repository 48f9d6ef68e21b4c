//! The grid of points, shards of it, and per-point seeds.

use crate::spec::{SpecError, VarySpec, VaryValue};
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// The cartesian product of the `--vary` specs, in a fixed order: the first
/// spec is the outermost loop and the last varies fastest, like nested `for`
/// loops written in command-line order. A point's *index* is its position in
/// that order; it decides the point's seed and its shard.
#[derive(Clone, Debug, PartialEq)]
pub struct Grid {
    specs: Vec<VarySpec>,
}

impl Grid {
    /// A grid over `specs` (at least one; each path at most once).
    pub fn new(specs: Vec<VarySpec>) -> Result<Grid, SpecError> {
        for (i, s) in specs.iter().enumerate() {
            if specs[..i].iter().any(|p| p.path() == s.path()) {
                return Err(SpecError::RepeatedPath {
                    spec: s.source().to_string(),
                    path: s.path().to_string(),
                });
            }
        }
        Ok(Grid { specs })
    }

    /// The specs, in command-line order.
    pub fn specs(&self) -> &[VarySpec] {
        &self.specs
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.specs.iter().map(|s| s.values().len()).product()
    }

    /// Whether the grid has no points (never, for specs that parsed).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// For point `index`, the position of its value in each spec.
    pub fn coordinates(&self, index: usize) -> Vec<usize> {
        let mut rest = index;
        let mut coords = vec![0; self.specs.len()];
        for (k, s) in self.specs.iter().enumerate().rev() {
            let n = s.values().len();
            coords[k] = rest % n;
            rest /= n;
        }
        coords
    }

    /// The values of point `index`, one per spec.
    pub fn point(&self, index: usize) -> Vec<&VaryValue> {
        self.coordinates(index)
            .into_iter()
            .zip(&self.specs)
            .map(|(c, s)| &s.values()[c])
            .collect()
    }

    /// The `(path, value)` overrides of point `index`.
    pub fn overrides(&self, index: usize) -> Vec<(String, String)> {
        self.point(index)
            .into_iter()
            .zip(&self.specs)
            .map(|(v, s)| (s.path().to_string(), v.text().to_string()))
            .collect()
    }
}

/// A deterministic slice of the grid: shard `index` of `count` runs the
/// points whose index k satisfies `k mod count == index`. Striding (rather
/// than contiguous blocks) spreads cheap and expensive points evenly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    count: u32,
}

/// A `--shard` that is not `I/N` with `0 <= I < N`.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ShardError {
    /// Not two integers `I/N` with `0 <= I < N`.
    #[error(
        "invalid --shard `{0}`: expected I/N with 0 <= I < N, e.g. 0/4 (shards are numbered from 0, like $SLURM_ARRAY_TASK_ID with --array=0-3 and $JOB_COMPLETION_INDEX)"
    )]
    Invalid(String),
    /// `N/N`: the shards were numbered from 1 (a Slurm `--array=1-N`), so
    /// the last one does not exist and shard 0 would never run.
    #[error(
        "invalid --shard `{count}/{count}`: shards are numbered from 0, so {count} shards are 0/{count} .. {last}/{count}; submit the Slurm array as --array=0-{last} (or pass $((SLURM_ARRAY_TASK_ID - 1)) for a 1-based array)",
        last = .count - 1
    )]
    NumberedFromOne {
        /// The number of shards.
        count: u32,
    },
}

impl Shard {
    /// Shard `index` of `count`.
    pub fn new(index: u32, count: u32) -> Result<Shard, ShardError> {
        if count > 0 && index == count {
            return Err(ShardError::NumberedFromOne { count });
        }
        if count == 0 || index > count {
            return Err(ShardError::Invalid(format!("{index}/{count}")));
        }
        Ok(Shard { index, count })
    }

    /// The whole grid as one shard.
    pub fn all() -> Shard {
        Shard { index: 0, count: 1 }
    }

    /// 0-based shard number.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// Number of shards.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Whether this shard runs point `k`.
    pub fn contains(&self, k: usize) -> bool {
        k % self.count as usize == self.index as usize
    }

    /// The points of a grid of `len` points that this shard runs, ascending.
    pub fn points(&self, len: usize) -> impl Iterator<Item = usize> + use<> {
        (self.index as usize..len).step_by(self.count as usize)
    }
}

impl FromStr for Shard {
    type Err = ShardError;
    fn from_str(s: &str) -> Result<Shard, ShardError> {
        let bad = || ShardError::Invalid(s.to_string());
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let i = i.trim().parse().map_err(|_| bad())?;
        let n = n.trim().parse().map_err(|_| bad())?;
        match Shard::new(i, n) {
            Err(ShardError::Invalid(_)) => Err(bad()),
            other => other,
        }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// The root seed of point `index`: a SplitMix64 mix of the sweep's root seed
/// and the point's global index, so it depends on neither the thread nor the
/// shard that runs the point. Replication r of the point is then replication
/// r of a run with this seed.
pub fn point_seed(root: u64, index: usize) -> u64 {
    let mut z = root ^ splitmix(index as u64 ^ 0x5157_4545_5000_0000);
    z = splitmix(z);
    // Seed 0 is legal but some generators treat it specially; avoid it.
    if z == 0 { 1 } else { z }
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(specs: &[&str]) -> Grid {
        Grid::new(specs.iter().map(|s| VarySpec::parse(s).unwrap()).collect()).unwrap()
    }

    #[test]
    fn order_is_nested_loops_in_command_order() {
        let g = grid(&["n=1..3", "limit=none,50"]);
        assert_eq!(g.len(), 6);
        let pts: Vec<String> = (0..6)
            .map(|k| {
                g.point(k)
                    .iter()
                    .map(|v| v.text())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        assert_eq!(pts, ["1 none", "1 50", "2 none", "2 50", "3 none", "3 50"]);
        assert_eq!(
            g.overrides(3),
            [("n".into(), "2".into()), ("limit".into(), "50".into())]
        );
    }

    #[test]
    fn repeated_path_is_rejected() {
        let specs = vec![
            VarySpec::parse("n=1..3").unwrap(),
            VarySpec::parse("n=5,6").unwrap(),
        ];
        let e = Grid::new(specs).unwrap_err().to_string();
        assert!(e.contains("`n=5,6`") && e.contains("already varied"), "{e}");
    }

    #[test]
    fn shards_partition_the_grid() {
        let n = 3;
        let mut seen = [0; 10];
        for i in 0..n {
            let s: Shard = format!("{i}/{n}").parse().unwrap();
            for k in s.points(10) {
                assert!(s.contains(k));
                seen[k] += 1;
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
        assert_eq!(Shard::all().points(4).collect::<Vec<_>>(), [0, 1, 2, 3]);
        for bad in ["3/3", "5/3", "1", "a/2", "0/0", "-1/2"] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains(bad), "{e}");
        }
        // A 1-based array's last task names the 0-based fix.
        let e = "4/4".parse::<Shard>().unwrap_err();
        assert_eq!(e, ShardError::NumberedFromOne { count: 4 });
        let e = e.to_string();
        assert!(
            e.contains("numbered from 0") && e.contains("--array=0-3"),
            "{e}"
        );
    }

    #[test]
    fn seeds_differ_per_point_and_root() {
        let a: Vec<u64> = (0..100).map(|k| point_seed(1, k)).collect();
        let mut b = a.clone();
        b.sort_unstable();
        b.dedup();
        assert_eq!(b.len(), 100);
        assert_ne!(point_seed(1, 0), point_seed(2, 0));
        assert_eq!(point_seed(7, 5), point_seed(7, 5));
    }
}
