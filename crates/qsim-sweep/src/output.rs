//! A sweep's output directory: `sweep.json` (settings), `points.csv` and
//! `points.jsonl` (one line per finished point, appended as points finish,
//! in grid order), `summary.json` (knee analysis). Resuming, merging shards
//! and reading a saved sweep back.
//!
//! Points are appended in grid order: a point that finishes before an
//! earlier one waits in memory until the earlier one is written. When the
//! sweep ends, both files are rewritten from the sorted records, so the final
//! bytes depend only on the records, never on thread timing, resumes or
//! shard splits.

use crate::error::{SweepError, io};
use crate::grid::{Grid, Shard};
use crate::record::{Columns, Point, PointRecord};
use crate::spec::VarySpec;
use crate::summary::{Axes, SweepSummary};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Settings file name.
pub const MANIFEST_FILE: &str = "sweep.json";
/// CSV file name.
pub const CSV_FILE: &str = "points.csv";
/// JSON-lines file name.
pub const JSONL_FILE: &str = "points.jsonl";
/// Knee-analysis file name.
pub const SUMMARY_FILE: &str = "summary.json";
/// The results file of a hysteresis sweep (`qsim sweep --hysteresis`),
/// which never shares a directory with a plain sweep's files.
pub const HYSTERESIS_FILE: &str = "hysteresis.json";

const FORMAT: &str = "qsim-sweep/2";

/// Everything that decides a sweep's points: resuming requires the same,
/// merging requires the same except the shard.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Format tag, `qsim-sweep/2`.
    pub format: String,
    /// The model as named on the command line.
    pub model: String,
    /// Base overrides (`--set`), as `PATH=VALUE`.
    pub set: Vec<String>,
    /// The `--vary` specs as typed.
    pub vary: Vec<String>,
    /// Root seed of the sweep.
    pub seed: u64,
    /// Replications per point (before any precision-driven extension).
    pub replications: u32,
    /// Run length, warm-up and precision of every point.
    pub run: serde_json::Value,
    /// Points in the whole grid.
    pub points: usize,
    /// Roles of the swept paths in the analysis.
    pub axes: Axes,
    /// What the CSV columns are.
    pub columns: Columns,
    /// `I/N` for a shard, absent for a whole sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// Digest of the model text and of the samples files it reads
    /// (FNV-1a 64, hex), absent for models that do not come from a text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_fingerprint: Option<String>,
    /// The qsim version that wrote the directory: another version may
    /// compute other numbers for the same settings.
    pub qsim_version: String,
}

/// A manifest field as an error message names it.
fn describe(field: String) -> String {
    if field == "model_fingerprint" {
        "the model file's text or a samples file it reads (model_fingerprint)".into()
    } else {
        field
    }
}

/// A stable digest of a model's text (FNV-1a, 64 bits, as 16 hex digits):
/// the same text gives the same digest on every platform and Rust version.
pub fn fingerprint(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

impl Manifest {
    /// A new manifest tagged with the current format.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        model: String,
        set: Vec<String>,
        vary: Vec<String>,
        seed: u64,
        replications: u32,
        run: serde_json::Value,
        points: usize,
        axes: Axes,
        columns: Columns,
        shard: Option<Shard>,
    ) -> Manifest {
        Manifest {
            format: FORMAT.to_string(),
            model,
            set,
            vary,
            seed,
            replications,
            run,
            points,
            axes,
            columns,
            shard: shard.filter(|s| s.count() > 1).map(|s| s.to_string()),
            model_fingerprint: None,
            qsim_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// Records the digest of the model text (see [`fingerprint`]).
    pub(crate) fn with_model_fingerprint(mut self, digest: Option<String>) -> Manifest {
        self.model_fingerprint = digest;
        self
    }

    /// The grid the `vary` specs describe.
    pub fn grid(&self) -> Result<Grid, SweepError> {
        let specs = self
            .vary
            .iter()
            .map(|s| VarySpec::parse(s))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Grid::new(specs)?)
    }

    /// The shard this output holds.
    pub fn shard(&self) -> Result<Shard, SweepError> {
        match &self.shard {
            None => Ok(Shard::all()),
            Some(s) => Ok(s.parse()?),
        }
    }

    fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("manifests always serialize");
        s.push('\n');
        s
    }

    /// The first field that differs from `other`: (name, ours, theirs).
    fn first_difference(&self, other: &Manifest) -> Option<(String, String, String)> {
        let a = serde_json::to_value(self).ok()?;
        let b = serde_json::to_value(other).ok()?;
        let (a, b) = (a.as_object()?, b.as_object()?);
        let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
        keys.dedup();
        keys.into_iter().find_map(|k| {
            let (x, y) = (a.get(k), b.get(k));
            (x != y).then(|| {
                let show = |v: Option<&serde_json::Value>| {
                    v.map_or("nothing".to_string(), |v| v.to_string())
                };
                (k.clone(), show(x), show(y))
            })
        })
    }
}

/// A sweep read back from disk.
#[derive(Clone, Debug)]
pub struct SavedSweep {
    /// Its settings.
    pub manifest: Manifest,
    /// Its grid.
    pub grid: Grid,
    /// Its finished points, sorted by index.
    pub records: Vec<PointRecord>,
}

impl SavedSweep {
    /// Reads `dir/sweep.json` and the complete lines of `dir/points.jsonl`.
    /// A torn last line (a killed writer) and anything after it are ignored.
    pub fn read(dir: &Path) -> Result<SavedSweep, SweepError> {
        let mpath = dir.join(MANIFEST_FILE);
        let text = fs::read_to_string(&mpath).map_err(|e| SweepError::NotASweep {
            path: dir.to_path_buf(),
            message: format!("no readable {MANIFEST_FILE} ({e}): not a sweep output directory"),
        })?;
        let manifest: Manifest =
            serde_json::from_str(&text).map_err(|e| SweepError::NotASweep {
                path: mpath.clone(),
                message: format!("not a qsim sweep manifest: {e}"),
            })?;
        if manifest.format != FORMAT {
            return Err(SweepError::NotASweep {
                path: mpath,
                message: format!("format {} is not {FORMAT}", manifest.format),
            });
        }
        let grid = manifest.grid()?;
        let shard = manifest.shard()?;
        let jpath = dir.join(JSONL_FILE);
        let text = match fs::read_to_string(&jpath) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(io(jpath)(e)),
        };
        let mut records: Vec<PointRecord> = Vec::new();
        let mut seen = vec![false; grid.len()];
        for line in text.split_inclusive('\n') {
            if !line.ends_with('\n') {
                break;
            }
            let Ok(mut r) = serde_json::from_str::<PointRecord>(line) else {
                break;
            };
            if r.index >= grid.len() || !shard.contains(r.index) || seen[r.index] {
                continue;
            }
            seen[r.index] = true;
            // The grid is the source of truth for the values' text.
            r.point = point_of(&grid, r.index);
            records.push(r);
        }
        records.sort_by_key(|r| r.index);
        Ok(SavedSweep {
            manifest,
            grid,
            records,
        })
    }

    /// The knee analysis of the saved points.
    pub fn summary(&self) -> SweepSummary {
        SweepSummary::analyze(&self.grid, &self.manifest.axes, &self.records)
    }
}

/// The [`Point`] of grid index `k`.
pub fn point_of(grid: &Grid, k: usize) -> Point {
    Point(
        grid.specs()
            .iter()
            .zip(grid.point(k))
            .map(|(s, v)| (s.path().to_string(), v.clone()))
            .collect(),
    )
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), SweepError> {
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, bytes).map_err(io(&tmp))?;
    fs::rename(&tmp, path).map_err(io(path))
}

fn render(columns: &Columns, records: &[PointRecord]) -> (Vec<u8>, Vec<u8>) {
    let mut csv = columns.header_csv();
    let mut jsonl = Vec::new();
    for r in records {
        csv.extend(columns.row_csv(r));
        jsonl.extend(r.to_json_line().into_bytes());
    }
    (csv, jsonl)
}

/// Writes a complete sweep (settings, points, summary) into `dir`.
pub(crate) fn write_complete(
    dir: &Path,
    manifest: &Manifest,
    records: &[PointRecord],
    summary: Option<&SweepSummary>,
) -> Result<(), SweepError> {
    fs::create_dir_all(dir).map_err(io(dir))?;
    write_atomic(&dir.join(MANIFEST_FILE), manifest.to_json().as_bytes())?;
    let (csv, jsonl) = render(&manifest.columns, records);
    write_atomic(&dir.join(CSV_FILE), &csv)?;
    write_atomic(&dir.join(JSONL_FILE), &jsonl)?;
    let spath = dir.join(SUMMARY_FILE);
    match summary {
        Some(s) => write_atomic(&spath, s.to_json().as_bytes())?,
        None => match fs::remove_file(&spath) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(spath)(e)),
            _ => {}
        },
    }
    Ok(())
}

/// An output directory being written.
pub(crate) struct OutputDir {
    dir: PathBuf,
    manifest: Manifest,
    csv: File,
    jsonl: File,
}

impl OutputDir {
    /// Opens `dir` for `manifest`. Without `resume`, a previous run of the
    /// same sweep there is replaced, and a different sweep only with
    /// `force`. With `resume`, the settings must match, and the points
    /// already there are returned (torn lines dropped, files healed).
    pub(crate) fn open(
        dir: &Path,
        manifest: &Manifest,
        resume: bool,
        force: bool,
    ) -> Result<(OutputDir, Vec<PointRecord>), SweepError> {
        if !resume && !force && dir.join(MANIFEST_FILE).exists() {
            // Anything unreadable or of another format counts as different.
            let saved = SavedSweep::read(dir).map(|s| s.manifest);
            let difference = match &saved {
                Ok(m) => m.first_difference(manifest),
                Err(e) => Some(("format".into(), e.to_string(), FORMAT.into())),
            };
            if let Some((field, was, now)) = difference {
                return Err(SweepError::OutputInUse {
                    dir: dir.to_path_buf(),
                    field: describe(field),
                    was,
                    now,
                });
            }
        }
        let done = if resume && dir.join(MANIFEST_FILE).exists() {
            let saved = SavedSweep::read(dir)?;
            if let Some((field, was, now)) = saved.manifest.first_difference(manifest) {
                return Err(SweepError::ResumeMismatch {
                    dir: dir.to_path_buf(),
                    field: describe(field),
                    was,
                    now,
                });
            }
            saved.records
        } else {
            Vec::new()
        };
        write_complete(dir, manifest, &done, None)?;
        let append = |name: &str| {
            let p = dir.join(name);
            OpenOptions::new().append(true).open(&p).map_err(io(p))
        };
        Ok((
            OutputDir {
                dir: dir.to_path_buf(),
                manifest: manifest.clone(),
                csv: append(CSV_FILE)?,
                jsonl: append(JSONL_FILE)?,
            },
            done,
        ))
    }

    /// Appends one finished point to both files.
    pub(crate) fn append(&mut self, r: &PointRecord) -> Result<(), SweepError> {
        // JSON first: it is what a resume reads.
        self.jsonl
            .write_all(r.to_json_line().as_bytes())
            .map_err(io(self.dir.join(JSONL_FILE)))?;
        self.csv
            .write_all(&self.manifest.columns.row_csv(r))
            .map_err(io(self.dir.join(CSV_FILE)))
    }

    /// Rewrites everything from the sorted records, and the summary.
    pub(crate) fn finish(
        self,
        records: &[PointRecord],
        summary: Option<&SweepSummary>,
    ) -> Result<(), SweepError> {
        drop((self.csv, self.jsonl));
        write_complete(&self.dir, &self.manifest, records, summary)
    }
}

/// Combines the outputs of shards `0/N ... N-1/N` of one sweep into `out`,
/// which then holds exactly what an unsharded run would have written.
/// Returns the merged sweep.
pub fn merge(out: &Path, shard_dirs: &[PathBuf]) -> Result<SavedSweep, SweepError> {
    if shard_dirs.is_empty() {
        return Err(SweepError::Merge("no shard directories given".into()));
    }
    // Writing into a shard would replace the very points being merged.
    if let Ok(target) = fs::canonicalize(out) {
        for d in shard_dirs {
            if fs::canonicalize(d).is_ok_and(|d| d == target) {
                return Err(SweepError::Merge(format!(
                    "the output {} is one of the shard directories; merge into a new directory",
                    out.display()
                )));
            }
        }
    }
    let mut saved = Vec::new();
    for d in shard_dirs {
        saved.push((d, SavedSweep::read(d)?));
    }
    let first = &saved[0].1.manifest;
    let mut whole = first.clone();
    whole.shard = None;
    let count = saved[0].1.manifest.shard()?.count();
    let mut present: Vec<Option<&PathBuf>> = vec![None; count as usize];
    for (d, s) in &saved {
        let mut m = s.manifest.clone();
        m.shard = None;
        if let Some((field, a, b)) = m.first_difference(&whole) {
            return Err(SweepError::Merge(format!(
                "{} and {} are not shards of one sweep ({field}: {a} vs {b})",
                d.display(),
                saved[0].0.display()
            )));
        }
        let sh = s.manifest.shard()?;
        if sh.count() != count {
            return Err(SweepError::Merge(format!(
                "{} is shard {sh} but {} is of {count} shards",
                d.display(),
                saved[0].0.display()
            )));
        }
        if let Some(other) = present[sh.index() as usize] {
            return Err(SweepError::Merge(format!(
                "{} and {} are both shard {sh}",
                other.display(),
                d.display()
            )));
        }
        present[sh.index() as usize] = Some(d);
        let expected = sh.points(whole.points).count();
        if s.records.len() != expected {
            return Err(SweepError::Merge(format!(
                "shard {sh} in {} is incomplete: {} of {expected} points; finish it with `qsim sweep ... --shard {sh} --resume`",
                d.display(),
                s.records.len()
            )));
        }
    }
    let missing: Vec<String> = present
        .iter()
        .enumerate()
        .filter(|(_, p)| p.is_none())
        .map(|(i, _)| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(SweepError::Merge(format!(
            "missing shard(s) {}",
            missing.join(", ")
        )));
    }
    let grid = whole.grid()?;
    let mut records: Vec<PointRecord> = saved.into_iter().flat_map(|(_, s)| s.records).collect();
    records.sort_by_key(|r| r.index);
    let merged = SavedSweep {
        manifest: whole,
        grid,
        records,
    };
    write_complete(
        out,
        &merged.manifest,
        &merged.records,
        Some(&merged.summary()),
    )?;
    Ok(merged)
}
