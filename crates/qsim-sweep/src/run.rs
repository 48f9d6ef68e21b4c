//! Running a sweep: points × replications on a local rayon pool.

use crate::error::{SweepError, io};
use crate::grid::{Grid, Shard, point_seed};
use crate::output::{Manifest, OutputDir, point_of};
use crate::record::{Columns, PointMetrics, PointRecord};
use crate::spec::VarySpec;
use crate::summary::{Axes, SweepSummary};
use qsim_kernel::budget::BudgetError;
use qsim_kernel::{
    Budget, Control, Network, ReplicationResult, ReplicationRounds, RunConfig, RunError, Stop,
    run_replication, run_replication_with, summarize,
};
use qsim_model::{DerivedMetric, Model, ModelErrors, Override};
use rayon::prelude::*;
use std::collections::{BTreeMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, OnceLock, mpsc};

/// Where the models of a sweep come from: one load per point, with the
/// base overrides followed by the point's.
pub trait ModelSource: Send + Sync {
    /// Loads the model with these overrides.
    fn load(&self, overrides: &[Override]) -> Result<Model, ModelErrors>;

    /// A digest of the model's text, recorded in `sweep.json` so that a
    /// resume or merge notices an edited model; `None` when there is no text.
    fn fingerprint(&self) -> Option<String> {
        None
    }
}

/// A model file, read once and parsed per point.
#[derive(Clone, Debug)]
pub struct ModelFile {
    name: String,
    text: String,
}

impl ModelFile {
    /// Reads `path` (at most [`qsim_model::MAX_MODEL_FILE_BYTES`]).
    pub fn read(path: &Path) -> Result<ModelFile, SweepError> {
        let text = qsim_model::read_model_text(path).map_err(|message| {
            io(path)(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                message,
            ))
        })?;
        Ok(ModelFile {
            name: path.display().to_string(),
            text,
        })
    }
}

impl ModelSource for ModelFile {
    fn load(&self, overrides: &[Override]) -> Result<Model, ModelErrors> {
        qsim_model::load_str(&self.name, &self.text, overrides)
    }

    /// The model's text, followed by the name and contents of every
    /// samples file it reads (a model without one keeps the digest of its
    /// text alone, so sweeps made before still resume).
    fn fingerprint(&self) -> Option<String> {
        let mut text = self.text.clone();
        for file in qsim_model::sample_files(&self.name, &self.text) {
            text.push('\0');
            text.push_str(&file.display().to_string());
            text.push('\0');
            // Bounded as loading bounds it (64 MiB); a longer file is
            // refused when the model loads.
            let read = std::fs::File::open(&file).and_then(|f| {
                use std::io::Read;
                let mut bytes = Vec::new();
                f.take((64 << 20) + 1)
                    .read_to_end(&mut bytes)
                    .map(|_| bytes)
            });
            match read {
                Ok(bytes) => text.push_str(&String::from_utf8_lossy(&bytes)),
                Err(e) => text.push_str(&format!("unreadable: {}", e.kind())),
            }
        }
        Some(crate::output::fingerprint(&text))
    }
}

impl<F> ModelSource for F
where
    F: Fn(&[Override]) -> Result<Model, ModelErrors> + Send + Sync,
{
    fn load(&self, overrides: &[Override]) -> Result<Model, ModelErrors> {
        self(overrides)
    }
}

/// How to run a sweep. `Default` runs the model's own `[simulation]` on all
/// cores, without an output directory.
#[derive(Clone, Debug, Default)]
pub struct SweepOptions {
    /// Root seed; the model's when `None`.
    pub seed: Option<u64>,
    /// Replications per point; the model's when `None`.
    pub replications: Option<u32>,
    /// Length of each replication; the model's when `None`.
    pub stop: Option<Stop>,
    /// Worker threads; 0 means one per core. Never changes results.
    pub threads: usize,
    /// The slice of the grid to run; all of it when `None`.
    pub shard: Option<Shard>,
    /// Directory to write `points.csv`, `points.jsonl`, `summary.json` and
    /// `sweep.json` into, as points finish.
    pub output: Option<PathBuf>,
    /// Keep the points already in `output` and run only the others.
    pub resume: bool,
    /// Replace a sweep with other settings in `output` (without it, only an
    /// earlier run of the same sweep is replaced).
    pub force: bool,
    /// The load axis of the knee analysis, if not inferred.
    pub load_path: Option<String>,
    /// The throttle-limit axis, if not inferred.
    pub limit_path: Option<String>,
    /// Cancelled (e.g. by Ctrl-C): no new replication starts, running ones
    /// stop at their next check, and every point already finished is kept.
    pub control: Option<Arc<Control>>,
    /// Limits each point must stay within: every point is estimated before
    /// any runs, and one beyond them refuses the sweep
    /// ([`SweepError::Budget`], with the key, the estimate and the limit).
    pub budget: Option<Budget>,
    /// Skip the second run from the other end at points where a falling
    /// speed curve could make the model bistable ([`crate::bistable`]).
    pub no_bistability_check: bool,
}

/// Progress of a running sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Points finished, resumed ones included.
    pub done: usize,
    /// Points this run (or shard) has to finish.
    pub total: usize,
    /// Points that were already in the output directory.
    pub resumed: usize,
}

/// Told about a sweep's progress, on the thread that called [`Sweep::run`].
pub trait Observer {
    /// Before the first point runs.
    fn started(&mut self, progress: Progress) {
        let _ = progress;
    }
    /// After each point finishes (in grid order) and is written.
    fn point_done(&mut self, record: &PointRecord, progress: Progress) {
        let _ = (record, progress);
    }
}

impl Observer for () {}

/// The result of [`Sweep::run`].
#[derive(Clone, Debug)]
pub struct SweepOutcome {
    /// Every point of the run (or shard), resumed ones included, by index.
    pub records: Vec<PointRecord>,
    /// The knee analysis; `None` for a shard of a larger sweep (merge the
    /// shards to analyze them).
    pub summary: Option<SweepSummary>,
    /// The settings written to `sweep.json`.
    pub manifest: Manifest,
    /// Points run now (not resumed).
    pub ran: usize,
    /// True when the sweep was cancelled through
    /// [`SweepOptions::control`]: `records` holds the finished points only
    /// and there is no summary; `--resume` runs the rest.
    pub interrupted: bool,
}

/// A sweep ready to run: a model, base overrides, a grid and options,
/// checked up front.
pub struct Sweep {
    source: Box<dyn ModelSource>,
    base: Vec<Override>,
    grid: Grid,
    options: SweepOptions,
    manifest: Manifest,
    base_run: RunConfig,
}

impl std::fmt::Debug for Sweep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sweep")
            .field("grid", &self.grid)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Sweep {
    /// A sweep of the model file at `model_path`.
    pub fn new(
        model_path: &Path,
        base: &[Override],
        vary: Vec<VarySpec>,
        options: SweepOptions,
    ) -> Result<Sweep, SweepError> {
        let file = ModelFile::read(model_path)?;
        let name = file.name.clone();
        Sweep::with_source(name, file, base, vary, options)
    }

    /// A sweep of models from any source; `name` identifies the model in
    /// `sweep.json`.
    ///
    /// Each spec is tried on the base model with its values in turn until
    /// one loads, so an unknown path (or a path no value of which the model
    /// accepts) is an error naming the spec, before anything runs.
    pub fn with_source(
        name: impl Into<String>,
        source: impl ModelSource + 'static,
        base: &[Override],
        vary: Vec<VarySpec>,
        options: SweepOptions,
    ) -> Result<Sweep, SweepError> {
        if vary.is_empty() {
            return Err(SweepError::Option(
                "nothing to sweep: give at least one axis to vary (--vary PATH=SPEC on the command line)".into(),
            ));
        }
        if options.replications == Some(0) {
            return Err(SweepError::Option("replications must be at least 1".into()));
        }
        if options.resume && options.output.is_none() {
            return Err(SweepError::Option(
                "resume needs an output directory".into(),
            ));
        }
        let grid = Grid::new(vary)?;
        let base_model = source
            .load(base)
            .map_err(|e| SweepError::Model(e.to_string()))?;
        // A spec is rejected only when none of its values loads (an unknown
        // path, a value of the wrong type throughout); a value that fails on
        // its own (e.g. an unstable arrival rate) becomes a failed point.
        let mut first_model = None;
        for spec in grid.specs() {
            let mut first_err = None;
            for v in spec.values() {
                let mut ov = base.to_vec();
                ov.push(Override::new(spec.path(), v.text(), "--vary"));
                match source.load(&ov) {
                    Ok(m) => {
                        first_model.get_or_insert(m);
                        first_err = None;
                        break;
                    }
                    Err(e) => {
                        let text = as_vary(spec, v.text(), e.to_string());
                        first_err.get_or_insert((v.text().to_string(), text));
                    }
                }
            }
            if let Some((value, message)) = first_err {
                return Err(SweepError::VaryRejected {
                    spec: spec.source().to_string(),
                    path: spec.path().to_string(),
                    value,
                    message,
                });
            }
        }
        let first_model = first_model.expect("a grid has points");
        let mut base_run = base_model.run.clone();
        if let Some(s) = options.seed {
            base_run.seed = s;
        }
        if let Some(r) = options.replications {
            base_run.replications = r;
        }
        if let Some(stop) = options.stop {
            base_run.stop = stop;
        }
        let mut axes = Axes::infer(
            grid.specs(),
            options.load_path.as_deref(),
            options.limit_path.as_deref(),
        );
        axes.workload = crate::summary::Workload::of(&first_model.network);
        // An inferred axis is always swept: only a named one can miss.
        for (flag, p) in [("--load-axis", &axes.load), ("--limit-axis", &axes.limit)] {
            if let Some(p) = p
                && !grid.specs().iter().any(|s| s.path() == p)
            {
                let swept: Vec<&str> = grid.specs().iter().map(|s| s.path()).collect();
                return Err(SweepError::Option(format!(
                    "{flag} {p}: not a swept path; the swept paths are {}",
                    swept.join(", ")
                )));
            }
        }
        let net = first_model.network.spec();
        let columns = Columns {
            paths: grid.specs().iter().map(|s| s.path().to_string()).collect(),
            stations: net.stations.iter().map(|s| s.name.clone()).collect(),
            regions: net.regions.iter().map(|g| g.name.clone()).collect(),
            derived: first_model.derived.iter().map(|d| d.name.clone()).collect(),
            bistability: !options.no_bistability_check
                && crate::bistable::may_apply(&first_model.network),
        };
        let run_json = serde_json::json!({
            "stop": base_run.stop,
            "warmup": base_run.warmup,
            "precision": base_run.precision,
            "sla_s": base_run.sla_s,
        });
        let manifest = Manifest::new(
            name.into(),
            base.iter()
                .map(|o| format!("{}={}", o.path, o.value))
                .collect(),
            grid.specs()
                .iter()
                .map(|s| s.source().to_string())
                .collect(),
            base_run.seed,
            base_run.replications,
            run_json,
            grid.len(),
            axes,
            columns,
            options.shard,
        )
        .with_model_fingerprint(source.fingerprint());
        Ok(Sweep {
            source: Box::new(source),
            base: base.to_vec(),
            grid,
            options,
            manifest,
            base_run,
        })
    }

    /// The grid.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// The settings that will be written to `sweep.json`.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Runs the points of this shard that are not done yet, writing each to
    /// the output directory as it finishes (in grid order), and analyzes
    /// the sweep. A point that fails is recorded with its error; only I/O
    /// problems stop the sweep.
    pub fn run(&self, observer: &mut dyn Observer) -> Result<SweepOutcome, SweepError> {
        let shard = self.options.shard.unwrap_or_else(Shard::all);
        let threads = match self.options.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("qsim-sweep-{i}"))
            .build()
            .map_err(|e| SweepError::Option(format!("cannot start {threads} threads: {e}")))?;
        // Every point is loaded and estimated before the output directory
        // is touched or anything runs: a point beyond the budget refuses
        // the whole sweep at once, not after hours of the others.
        let mine: Vec<usize> = shard.points(self.grid.len()).collect();
        let estimated: Vec<Result<Loaded, BudgetError>> =
            pool.install(|| mine.par_iter().map(|&k| self.load_point(k)).collect());
        let mut loaded: Vec<Option<Loaded>> = (0..self.grid.len()).map(|_| None).collect();
        for (&k, l) in mine.iter().zip(estimated) {
            match l {
                Ok(l) => loaded[k] = Some(l),
                Err(error) => {
                    return Err(SweepError::Budget {
                        index: k,
                        point: point_of(&self.grid, k).to_string(),
                        error,
                    });
                }
            }
        }
        let mut out = None;
        let mut done: Vec<PointRecord> = Vec::new();
        if let Some(dir) = &self.options.output {
            let (o, d) =
                OutputDir::open(dir, &self.manifest, self.options.resume, self.options.force)?;
            out = Some(o);
            done = d;
        }
        let mut have = vec![false; self.grid.len()];
        for r in &done {
            have[r.index] = true;
        }
        let todo: Vec<usize> = shard
            .points(self.grid.len())
            .filter(|&k| !have[k])
            .collect();
        let mut progress = Progress {
            done: done.len(),
            total: done.len() + todo.len(),
            resumed: done.len(),
        };
        observer.started(progress);

        let engine = Engine::new(self, &todo, &mut loaded);
        let (tx, rx) = mpsc::channel::<(usize, PointRecord)>();
        let mut records = done;
        let mut write_error = None;
        std::thread::scope(|scope| {
            let engine = &engine;
            let worker = scope.spawn(move || {
                pool.broadcast(|_| engine.work(&tx));
                drop(tx);
            });
            // Write in grid order: hold early finishers until their turn.
            let mut pending: BTreeMap<usize, PointRecord> = BTreeMap::new();
            let mut next = 0;
            for (slot, rec) in rx {
                pending.insert(slot, rec);
                while let Some(rec) = pending.remove(&next) {
                    next += 1;
                    if write_error.is_none()
                        && let Some(o) = out.as_mut()
                        && let Err(e) = o.append(&rec)
                    {
                        // Stop handing out work; finish what is running.
                        engine.abort();
                        write_error = Some(e);
                    }
                    progress.done += 1;
                    observer.point_done(&rec, progress);
                    records.push(rec);
                }
            }
            worker.join().expect("sweep workers do not panic");
            // Cancelled: points that finished after one that did not are
            // still waiting for their turn; keep them too.
            for rec in std::mem::take(&mut pending).into_values() {
                if write_error.is_none()
                    && let Some(o) = out.as_mut()
                    && let Err(e) = o.append(&rec)
                {
                    write_error = Some(e);
                }
                progress.done += 1;
                observer.point_done(&rec, progress);
                records.push(rec);
            }
        });
        if let Some(e) = write_error {
            return Err(e);
        }
        let interrupted = self.options.control.as_ref().is_some_and(|c| c.cancelled())
            && records.len() < progress.total;
        if interrupted {
            records.sort_by_key(|r| r.index);
            if let Some(o) = out {
                o.finish(&records, None)?;
            }
            return Ok(SweepOutcome {
                ran: records.len() - progress.resumed,
                records,
                summary: None,
                manifest: self.manifest.clone(),
                interrupted,
            });
        }
        records.sort_by_key(|r| r.index);
        let summary = (shard.count() == 1)
            .then(|| SweepSummary::analyze(&self.grid, &self.manifest.axes, &records));
        if let Some(o) = out {
            o.finish(&records, summary.as_ref())?;
        }
        Ok(SweepOutcome {
            ran: todo.len(),
            records,
            summary,
            manifest: self.manifest.clone(),
            interrupted: false,
        })
    }

    /// Loads point `k` and estimates its run: `Err` when the run is
    /// beyond the budget; `Ok(Err(..))` when the point fails on its own
    /// (a value the model rejects, an unstable arrival rate).
    fn load_point(&self, k: usize) -> Result<Loaded, BudgetError> {
        let overrides = self.grid.overrides(k);
        let mut ov = self.base.clone();
        ov.extend(
            overrides
                .iter()
                .map(|(path, value)| Override::new(path.clone(), value.clone(), "--vary")),
        );
        match catch_unwind(AssertUnwindSafe(|| self.source.load(&ov))) {
            Ok(Ok(m)) => {
                let c = self.config(&m, k);
                if let Some(b) = &self.options.budget {
                    // Replications of all points share the pool: the
                    // threads bound how many run at once.
                    let at_once = RunConfig {
                        threads: self.options.threads,
                        ..c.clone()
                    };
                    b.check(&m.network, &at_once, &class_visits(&m.network))?;
                }
                Ok(Ok((m.network, c, m.derived)))
            }
            Ok(Err(e)) => {
                let mut text = e.to_string();
                for (spec, (_, value)) in self.grid.specs().iter().zip(&overrides) {
                    text = as_vary(spec, value, text);
                }
                Ok(Err(text))
            }
            Err(p) => Ok(Err(format!(
                "internal error loading the model: {}",
                panic_message(&*p)
            ))),
        }
    }

    /// The run configuration of point `k`.
    fn config(&self, model: &Model, k: usize) -> RunConfig {
        let mut c = model.run.clone();
        c.seed = point_seed(self.base_run.seed, k);
        c.replications = self.base_run.replications;
        c.stop = self.base_run.stop;
        c.threads = 1;
        c
    }
}

/// A loaded point: its network and run configuration, or why it failed.
type Loaded = Result<(Network, RunConfig, Vec<DerivedMetric>), String>;

struct PointState {
    reps: Vec<Option<ReplicationResult>>,
    planned: u32,
    finished: u32,
    /// Lowest failing replication and its error.
    failed: Option<(u32, String)>,
}

struct Queue {
    tasks: VecDeque<(usize, u32)>,
    /// Points not yet finished.
    outstanding: usize,
    aborted: bool,
}

/// The shared state of the workers. Work items are (slot, replication),
/// handed out in grid order so points finish roughly in order.
struct Engine<'a> {
    sweep: &'a Sweep,
    todo: &'a [usize],
    loaded: Vec<OnceLock<Loaded>>,
    points: Vec<Mutex<PointState>>,
    queue: Mutex<Queue>,
    wake: Condvar,
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

impl<'a> Engine<'a> {
    fn new(sweep: &'a Sweep, todo: &'a [usize], loaded: &mut [Option<Loaded>]) -> Engine<'a> {
        let reps = sweep.base_run.replications;
        let tasks = (0..todo.len())
            .flat_map(|slot| (0..reps).map(move |r| (slot, r)))
            .collect();
        Engine {
            sweep,
            todo,
            loaded: todo
                .iter()
                .map(|&k| match loaded[k].take() {
                    Some(l) => OnceLock::from(l),
                    None => OnceLock::new(),
                })
                .collect(),
            points: (0..todo.len())
                .map(|_| {
                    Mutex::new(PointState {
                        reps: vec![None; reps as usize],
                        planned: reps,
                        finished: 0,
                        failed: None,
                    })
                })
                .collect(),
            queue: Mutex::new(Queue {
                tasks,
                outstanding: todo.len(),
                aborted: false,
            }),
            wake: Condvar::new(),
        }
    }

    fn cancelled(&self) -> bool {
        self.sweep
            .options
            .control
            .as_ref()
            .is_some_and(|c| c.cancelled())
    }

    fn abort(&self) {
        let mut q = self.queue.lock().expect("queue lock");
        q.aborted = true;
        q.tasks.clear();
        self.wake.notify_all();
    }

    fn load(&self, slot: usize) -> &Loaded {
        // Filled by the estimate of every point before the engine starts;
        // loaded here only for a point that estimate did not cover.
        self.loaded[slot].get_or_init(|| {
            self.sweep
                .load_point(self.todo[slot])
                .unwrap_or_else(|e| Err(e.to_string()))
        })
    }

    /// A worker: takes tasks until every point is finished.
    fn work(&self, tx: &mpsc::Sender<(usize, PointRecord)>) {
        loop {
            if self.cancelled() {
                self.abort();
                return;
            }
            let (slot, rep) = {
                let mut q = self.queue.lock().expect("queue lock");
                loop {
                    if let Some(t) = q.tasks.pop_front() {
                        break t;
                    }
                    if q.outstanding == 0 || q.aborted {
                        return;
                    }
                    q = self.wake.wait(q).expect("queue lock");
                }
            };
            let skip = {
                let st = self.points[slot].lock().expect("point lock");
                matches!(st.failed, Some((f, _)) if f < rep)
            };
            let result = if skip {
                None
            } else {
                Some(match self.load(slot) {
                    Err(e) => Err(e.clone()),
                    Ok((net, cfg, _)) => {
                        let control = self.sweep.options.control.as_ref();
                        let run = || match control {
                            Some(c) => run_replication_with(net, cfg, rep, c),
                            None => run_replication(net, cfg, rep),
                        };
                        match catch_unwind(AssertUnwindSafe(run)) {
                            // Not a result: the point stays unfinished
                            // (not written), for `--resume` to run.
                            Ok(Err(RunError::Cancelled)) => {
                                self.abort();
                                return;
                            }
                            Ok(Ok(r)) => Ok(r),
                            Ok(Err(e)) => Err(e.to_string()),
                            Err(p) => Err(format!(
                                "internal error in replication {rep}: {}",
                                panic_message(&*p)
                            )),
                        }
                    }
                })
            };
            self.finish_task(slot, rep, result, tx);
        }
    }

    fn finish_task(
        &self,
        slot: usize,
        rep: u32,
        result: Option<Result<ReplicationResult, String>>,
        tx: &mpsc::Sender<(usize, PointRecord)>,
    ) {
        let mut st = self.points[slot].lock().expect("point lock");
        match result {
            Some(Ok(r)) => st.reps[rep as usize] = Some(r),
            Some(Err(e)) if st.failed.as_ref().is_none_or(|(f, _)| rep < *f) => {
                st.failed = Some((rep, e));
            }
            Some(Err(_)) | None => {}
        }
        st.finished += 1;
        if st.finished < st.planned {
            return;
        }
        // Every planned replication is in: extend (precision target) or finish.
        let k = self.todo[slot];
        let seed = match self.load(slot) {
            Ok((_, c, _)) => c.seed,
            Err(_) => point_seed(self.sweep.base_run.seed, k),
        };
        let point = point_of(&self.sweep.grid, k);
        let mut first = None;
        let mut record = match (&st.failed, self.load(slot)) {
            (Some((_, e)), _) | (None, Err(e)) => PointRecord {
                index: k,
                point,
                seed,
                error: Some(e.clone()),
                results: None,
            },
            (None, Ok((net, cfg, derived))) => {
                // Every replication so far, in index order (none failed).
                let reps: Vec<ReplicationResult> = st.reps.iter().flatten().cloned().collect();
                // The kernel's rule decides whether to extend, so the point
                // runs the same replications as `qsim run --seed <seed>`.
                if let Some(round) = ReplicationRounds::new(cfg).next(&reps) {
                    debug_assert_eq!(round.start, st.planned);
                    st.planned = round.end;
                    st.reps.resize(round.end as usize, None);
                    drop(st);
                    let mut q = self.queue.lock().expect("queue lock");
                    for r in round.rev() {
                        q.tasks.push_front((slot, r));
                    }
                    self.wake.notify_all();
                    return;
                }
                let summary = catch_unwind(AssertUnwindSafe(|| summarize(net, cfg, &reps)));
                match summary {
                    Ok(s) => {
                        let mut results = PointMetrics::from_results(&s)
                            .with_derived(crate::record::derived_values(net, derived, &reps));
                        // A point too short to forget its start says so,
                        // as `qsim run` does.
                        results.warnings.extend(
                            qsim_theory::relaxation::short_run(net.spec(), &s)
                                .map(|w| w.to_string()),
                        );
                        first = Some(s);
                        PointRecord {
                            index: k,
                            point,
                            seed,
                            error: None,
                            results: Some(results),
                        }
                    }
                    Err(p) => PointRecord {
                        index: k,
                        point,
                        seed,
                        error: Some(format!(
                            "internal error summarizing: {}",
                            panic_message(&*p)
                        )),
                        results: None,
                    },
                }
            }
        };
        drop(st);
        if let (Some(s), Ok((net, cfg, _))) = (first, self.load(slot))
            && self.sweep.manifest.columns.bistability
        {
            let control = self.sweep.options.control.as_ref();
            match crate::bistable::check(net, cfg, &s, control) {
                Ok(b) => {
                    if let Some(m) = record.results.as_mut() {
                        m.bistability = b;
                    }
                }
                // Unfinished, like a cancelled replication: `--resume` runs it.
                Err(_) => {
                    self.abort();
                    return;
                }
            }
        }
        let _ = tx.send((slot, record));
        let mut q = self.queue.lock().expect("queue lock");
        q.outstanding -= 1;
        self.wake.notify_all();
    }
}

/// The model's error at a swept value, its override named as the whole
/// `--vary` that set it (`--vary a=1,2,3`, not the one value `a=2`).
pub(crate) fn as_vary(spec: &VarySpec, value: &str, text: String) -> String {
    let path = spec.path();
    let source = spec.source();
    text.replace(
        &format!("(set by --vary {path}={value})"),
        &format!("(set by --vary {source})"),
    )
    .replace(
        &format!("--vary {path}={value}: "),
        &format!("--vary {source}: "),
    )
}

/// Each class's visits per interaction, for the budget's event count (the
/// same count `qsim run` checks).
pub(crate) fn class_visits(network: &Network) -> Vec<Option<Vec<f64>>> {
    let spec = network.spec();
    (0..spec.classes.len())
        .map(|c| qsim_theory::visits::visit_ratios(spec, c).map(|v| v.parent))
        .collect()
}
