//! Fuzz harness: mutated models through the built `qsim` binary.
//!
//! Every model in `models/` and every complete model in
//! `docs/model-format.md` is mutated (edge numbers, deleted keys, duplicated
//! tables, swapped types, garbled strings, edge distributions, byte flips,
//! `--set` overrides with edge values) and given to `qsim check`, `qsim run`
//! with a short stop, and `qsim solve`, each process under a time limit
//! (CPU time, with a wall-clock backstop) and an address-space limit. A panic, a timeout, a death by signal or memory,
//! an error without a message, or a confident figure no correct run can give
//! fails the test. Cases come from proptest with a seed derived from
//! (`QSIM_FUZZ_SEED`, case index), so any case can be replayed alone. How to
//! run it for hours and replay a failure: `docs/fuzzing.md`.
//!
//! The binary is driven from outside (`CARGO_BIN_EXE_qsim`) so that an abort
//! or a runaway allocation is observed rather than taking the test down, and
//! so the harness does not follow the crates' internal APIs.

#[path = "fuzz/exec.rs"]
mod exec;
#[path = "fuzz/mutate.rs"]
mod mutate;
#[path = "fuzz/probes.rs"]
mod probes;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use exec::{Limits, Outcome, Subcommand, run_qsim};
use mutate::{Mutation, SetOverride};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Cases a plain `cargo test` runs: about a minute and a half on one core
/// of the 2-core CI machine when qsim behaves.
const DEFAULT_CASES: u64 = 300;
/// Seed of the case sequence when `QSIM_FUZZ_SEED` is not set.
const DEFAULT_SEED: u64 = 20261124;

/// Settings read from the environment (documented in docs/fuzzing.md).
struct Settings {
    seed: u64,
    first: u64,
    cases: u64,
    only: Option<u64>,
    report_only: bool,
    limits: Limits,
    shrink_budget: Duration,
}

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a whole number, found {v:?}")),
        Err(_) => default,
    }
}

impl Settings {
    fn from_env() -> Settings {
        Settings {
            seed: env_u64("QSIM_FUZZ_SEED", DEFAULT_SEED),
            first: env_u64("QSIM_FUZZ_FIRST", 0),
            cases: env_u64("QSIM_FUZZ_CASES", DEFAULT_CASES),
            only: std::env::var("QSIM_FUZZ_CASE")
                .ok()
                .map(|_| env_u64("QSIM_FUZZ_CASE", 0)),
            report_only: std::env::var("QSIM_FUZZ_REPORT").is_ok_and(|v| v == "1"),
            limits: Limits {
                time: Duration::from_secs(env_u64("QSIM_FUZZ_TIMEOUT_S", 20)),
                memory_bytes: env_u64("QSIM_FUZZ_MEMORY_MB", 2048) << 20,
            },
            shrink_budget: Duration::from_secs(env_u64("QSIM_FUZZ_SHRINK_S", 60)),
        }
    }
}

/// A model the mutations start from.
struct Seed {
    /// Where it came from: a file under models/, or `docs/model-format.md#N`.
    name: String,
    text: String,
}

/// A generated case: which model, which subcommand, what to change.
#[derive(Debug, Clone)]
struct Case {
    model: usize,
    sub: Subcommand,
    mutations: Vec<Mutation>,
    sets: Vec<SetOverride>,
    probe: Option<probes::Probe>,
}

fn case_strategy(models: usize) -> impl Strategy<Value = Case> {
    let sub = prop_oneof![
        1 => Just(Subcommand::Check),
        2 => Just(Subcommand::Run),
        1 => Just(Subcommand::Solve),
    ];
    (
        0..models,
        sub,
        vec(mutate::mutation(), 0..4),
        vec(mutate::set_override(), 0..3),
        probes::probe(),
    )
        .prop_map(|(model, sub, mutations, sets, probe)| Case {
            model,
            sub,
            mutations,
            sets,
            probe,
        })
}

/// The value tree of case `index`: its own ChaCha stream derived from the
/// seed and the index, so a case does not depend on the ones before it.
fn case_tree(seed: u64, index: u64, models: usize) -> impl ValueTree<Value = Case> {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes[8..16].copy_from_slice(&index.to_le_bytes());
    bytes[16..24].copy_from_slice(b"qsimfuzz");
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    case_strategy(models)
        .new_tree(&mut runner)
        .expect("the case strategy never rejects")
}

/// What is actually executed: a model text and `--set` arguments.
struct Concrete {
    label: String,
    model: usize,
    sub: Subcommand,
    text: Vec<u8>,
    sets: Vec<String>,
    /// Arguments after the `--set`s (a probe's flags).
    args: Vec<String>,
    /// `-o` names a hard link of the model: the model must survive.
    hard_link: bool,
}

impl Concrete {
    fn from_case(label: String, case: &Case, seeds: &[Seed]) -> Concrete {
        let original = &seeds[case.model].text;
        let probe = probes::apply(&case.probe, case.sub == Subcommand::Run);
        let mut text = mutate::apply(original, &case.mutations);
        if probe.padding_mib > 0 {
            text.extend_from_slice(b"\n# ");
            text.resize(text.len() + ((probe.padding_mib as usize) << 20), b'x');
            text.push(b'\n');
        }
        let mut sets = mutate::set_args(original, &case.sets);
        sets.extend(probe.sets);
        Concrete {
            label,
            model: case.model,
            sub: case.sub,
            text,
            sets,
            args: probe.args,
            hard_link: probe.hard_link,
        }
    }
}

/// The known failures of issue 10, always run first so that even a short
/// run checks them.
fn pinned(seeds: &[Seed]) -> Vec<Concrete> {
    let find = |name: &str| {
        seeds
            .iter()
            .position(|s| s.name == format!("models/{name}"))
            .unwrap_or_else(|| panic!("models/{name} is missing"))
    };
    let set_case = |label: &str, name: &str, sub, sets: &[&str]| {
        let model = find(name);
        Concrete {
            label: format!("pinned-{label}"),
            model,
            sub,
            text: seeds[model].text.clone().into_bytes(),
            sets: sets.iter().map(|s| s.to_string()).collect(),
            args: Vec::new(),
            hard_link: false,
        }
    };
    // The probes of issue 24, each once.
    let probe_case = |label: &str, name: &str, sub, probe| {
        let case = Case {
            model: find(name),
            sub,
            mutations: Vec::new(),
            sets: Vec::new(),
            probe: Some(probe),
        };
        Concrete::from_case(format!("pinned-{label}"), &case, seeds)
    };
    let huge_population = "workload.population=1000000000";
    let endless_samples = r#"stations.server.service={ dist = "empirical", file = "/dev/zero" }"#;
    let zero_time = Case {
        model: find("cpu_two_disks.toml"),
        sub: Subcommand::Run,
        mutations: vec![Mutation::AllDists { kind: 0 }],
        sets: Vec::new(),
        probe: None,
    };
    vec![
        set_case(
            "population-run",
            "cpu_two_disks.toml",
            Subcommand::Run,
            &[huge_population],
        ),
        set_case(
            "population-solve",
            "cpu_two_disks.toml",
            Subcommand::Solve,
            &[huge_population],
        ),
        set_case(
            "fan-out",
            "gr_bucket.toml",
            Subcommand::Run,
            &["stations.replicate.fan_out=4294967295"],
        ),
        set_case(
            "endless-samples-check",
            "mm1.toml",
            Subcommand::Check,
            &[endless_samples],
        ),
        set_case(
            "endless-samples-run",
            "mm1.toml",
            Subcommand::Run,
            &[endless_samples],
        ),
        set_case(
            "warmup",
            "mm1.toml",
            Subcommand::Run,
            &["simulation.warmup={ jobs = 4294967295 }"],
        ),
        Concrete::from_case("pinned-zero-time".to_string(), &zero_time, seeds),
        probe_case(
            "model-size",
            "mm1.toml",
            Subcommand::Check,
            probes::Probe::ModelSize { mib: 40 },
        ),
        probe_case(
            "replications",
            "mm1.toml",
            Subcommand::Run,
            probes::Probe::Replications(100_000),
        ),
        probe_case(
            "trace-interval",
            "mm1.toml",
            Subcommand::Run,
            probes::Probe::TraceInterval(1e-12),
        ),
        probe_case(
            "time-warmup",
            "mm1.toml",
            Subcommand::Run,
            probes::Probe::TimeStop(4_294_967_295.0),
        ),
        probe_case(
            "time-stop",
            "mm1.toml",
            Subcommand::Check,
            probes::Probe::TimeStop(1e10),
        ),
        probe_case(
            "dropped-arrivals",
            "connection_pool.toml",
            Subcommand::Run,
            probes::Probe::DroppedArrivals(4_294_967_295.0),
        ),
        probe_case(
            "hard-link",
            "mm1.toml",
            Subcommand::Run,
            probes::Probe::HardLink,
        ),
    ]
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Models under models/, then the complete models among the ```toml blocks
/// of docs/model-format.md (fragments are skipped: `qsim check` refuses them).
fn load_seeds(qsim: &Path, work: &Path, limits: Limits) -> Vec<Seed> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("models"))
        .expect("read models/")
        .map(|e| e.expect("models/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    let mut seeds: Vec<Seed> = files
        .iter()
        .map(|p| Seed {
            name: format!("models/{}", p.file_name().unwrap().to_string_lossy()),
            text: std::fs::read_to_string(p).expect("read a model"),
        })
        .collect();
    let doc = std::fs::read_to_string(root().join("docs/model-format.md")).unwrap_or_default();
    for (i, block) in doc.split("```toml\n").skip(1).enumerate() {
        let text = block.split("```").next().unwrap_or_default().to_string();
        let path = work.join("doc-example.toml");
        std::fs::write(&path, &text).expect("write a docs example");
        if run_qsim(qsim, work, Subcommand::Check, &path, &[], &[], limits).0 == Outcome::Ok {
            seeds.push(Seed {
                name: format!("docs/model-format.md#{}", i + 1),
                text,
            });
        }
    }
    seeds
}

/// One executed case and what it did.
struct Record {
    concrete: Concrete,
    outcome: Outcome,
    stderr: String,
    /// The generated case index, for replay and shrinking (None when pinned).
    index: Option<u64>,
}

/// Groups failures for the report: the signature, plus (for outcomes that
/// carry no location, such as a timeout) the keys the case changed.
fn group_key(c: &Concrete, outcome: &Outcome, stderr: &str, seeds: &[Seed]) -> String {
    let sig = signature(c.sub, outcome);
    if matches!(outcome, Outcome::Panic(_) | Outcome::Suspect(_)) {
        return sig;
    }
    // An allocation failure qsim caught and reported names what it was
    // doing ("cannot read the samples file /dev/zero: out of memory"):
    // that, without the path, is the cause.
    if let Some(line) = stderr.lines().find(|l| l.ends_with(": out of memory")) {
        let doing = line.trim_end_matches(": out of memory");
        let doing = doing.rsplit_once(": ").map_or(doing, |(_, d)| d);
        let doing = doing.rsplit_once(' ').map_or(doing, |(d, _)| d);
        return format!("{sig} [{doing}]");
    }
    let mut keys: Vec<String> = c
        .sets
        .iter()
        .map(|s| s.split('=').next().unwrap_or(s).trim().to_string())
        .collect();
    let old = &seeds[c.model].text;
    let new = String::from_utf8_lossy(&c.text);
    for line in diff(old, &new).lines().filter(|l| l.contains(" + ")) {
        let text = line.split(" + ").nth(1).unwrap_or_default();
        keys.push(
            text.split('=')
                .next()
                .unwrap_or(text)
                .trim()
                .chars()
                .take(40)
                .collect(),
        );
    }
    keys.sort();
    keys.dedup();
    format!("{sig} [{}]", keys.join(", "))
}

/// Groups failures that very likely share a root cause (what shrinking keeps).
fn signature(sub: Subcommand, outcome: &Outcome) -> String {
    let detail = match outcome {
        Outcome::Panic(line) => line
            .split("panicked at")
            .nth(1)
            .unwrap_or(line)
            .trim()
            .to_string(),
        Outcome::Suspect(why) => why.split([' ', '=']).next().unwrap_or(why).to_string(),
        other => other.to_string(),
    };
    format!("{sub}: {} {detail}", outcome.class())
}

fn execute(qsim: &Path, work: &Path, c: &Concrete, limits: Limits) -> (Outcome, String) {
    let model = work.join("model.toml");
    std::fs::write(&model, &c.text).expect("write the mutated model");
    let link = work.join("link.toml");
    let _ = std::fs::remove_file(&link);
    let _ = std::fs::remove_file(work.join("trace.csv"));
    if c.hard_link {
        std::fs::hard_link(&model, &link).expect("link the model");
    }
    let (outcome, stderr) = run_qsim(qsim, work, c.sub, &model, &c.sets, &c.args, limits);
    // An output written through a hard link replaces the model itself.
    if c.hard_link
        && !outcome.is_failure()
        && std::fs::read(&model).ok().as_deref() != Some(c.text.as_slice())
    {
        return (
            Outcome::Suspect("output replaced the model through a hard link".into()),
            stderr,
        );
    }
    (outcome, stderr)
}

/// Prints how to reproduce a failure: the saved model, the command, and the
/// lines that differ from the original model.
fn reproducer(
    c: &Concrete,
    seeds: &[Seed],
    out: &Path,
    settings: &Settings,
    index: Option<u64>,
) -> String {
    let saved = out.join(format!("{}.toml", c.label));
    std::fs::write(&saved, &c.text).expect("save the failing model");
    let mut s = String::new();
    let _ = write!(s, "  qsim {} {}", c.sub.args().join(" "), saved.display());
    for set in &c.sets {
        let _ = write!(s, " --set '{set}'");
    }
    for arg in &c.args {
        let _ = write!(s, " {arg}");
    }
    if c.hard_link {
        let _ = write!(s, "  (link.toml: a hard link of the model)");
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "  from {}", seeds[c.model].name);
    if let Some(i) = index {
        let _ = writeln!(
            s,
            "  replay: QSIM_FUZZ_SEED={} QSIM_FUZZ_CASE={i} cargo test --test fuzz -- --nocapture",
            settings.seed
        );
    }
    let original = seeds[c.model].text.as_bytes();
    if original != c.text.as_slice() {
        s.push_str(&diff(
            &seeds[c.model].text,
            &String::from_utf8_lossy(&c.text),
        ));
    }
    s
}

/// The lines that differ between two texts (a longest-common-subsequence
/// diff; models are a few hundred lines, so the quadratic table is small).
fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    if a.len() * b.len() > 4_000_000 {
        return "  (texts too long to diff)\n".to_string();
    }
    // lcs[i][j]: length of the common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let clip = |l: &str| {
        if l.len() > 200 {
            let cut = (0..=200)
                .rev()
                .find(|&i| l.is_char_boundary(i))
                .unwrap_or(0);
            format!("{}... ({} bytes)", &l[..cut], l.len())
        } else {
            l.to_string()
        }
    };
    let mut s = String::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            let _ = writeln!(s, "  {:>4} + {}", j + 1, clip(b[j]));
            j += 1;
        } else {
            let _ = writeln!(s, "  {:>4} - {}", i + 1, clip(a[i]));
            i += 1;
        }
    }
    s
}

/// Shrinks a failing generated case with proptest's value tree while the
/// failure keeps its signature, within `deadline`.
fn shrink(
    qsim: &Path,
    work: &Path,
    seeds: &[Seed],
    settings: &Settings,
    index: u64,
    want: &str,
    deadline: Instant,
) -> Option<Concrete> {
    let mut tree = case_tree(settings.seed, index, seeds.len());
    let mut best = None;
    let mut steps = 0;
    if !tree.simplify() {
        return None;
    }
    while Instant::now() < deadline && steps < 200 {
        steps += 1;
        let c = Concrete::from_case(
            format!("shrunk-{}-{index}", settings.seed),
            &tree.current(),
            seeds,
        );
        let (outcome, _) = execute(qsim, work, &c, settings.limits);
        let fails = signature(c.sub, &outcome) == want;
        if fails {
            best = Some(c);
            if !tree.simplify() {
                break;
            }
        } else if !tree.complicate() {
            break;
        }
    }
    best
}

#[test]
fn fuzz_models() {
    let settings = Settings::from_env();
    let qsim = PathBuf::from(env!("CARGO_BIN_EXE_qsim"));
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    // Per process, so two runs of the harness never share a model file.
    let work = tmp.join(format!("fuzz-work-{}", std::process::id()));
    let out = tmp.join("fuzz-failures");
    std::fs::create_dir_all(&work).expect("create the work directory");
    std::fs::create_dir_all(&out).expect("create the failures directory");
    let seeds = load_seeds(&qsim, &work, settings.limits);
    eprintln!(
        "fuzz: {} seed models, seed {}, cases {}..{}",
        seeds.len(),
        settings.seed,
        settings.first,
        settings.first + settings.cases
    );

    let mut planned: Vec<(Option<u64>, Concrete)> = Vec::new();
    match settings.only {
        Some(i) => {
            let case = case_tree(settings.seed, i, seeds.len()).current();
            eprintln!("case {i}: {case:?}");
            planned.push((
                Some(i),
                Concrete::from_case(format!("case-{}-{i}", settings.seed), &case, &seeds),
            ));
        }
        None => {
            planned.extend(pinned(&seeds).into_iter().map(|c| (None, c)));
            for i in settings.first..settings.first + settings.cases {
                let case = case_tree(settings.seed, i, seeds.len()).current();
                planned.push((
                    Some(i),
                    Concrete::from_case(format!("case-{}-{i}", settings.seed), &case, &seeds),
                ));
            }
        }
    }

    let started = Instant::now();
    let total = planned.len();
    let mut records = Vec::with_capacity(total);
    let mut slowest = Duration::ZERO;
    for (n, (index, concrete)) in planned.into_iter().enumerate() {
        let t = Instant::now();
        let (outcome, stderr) = execute(&qsim, &work, &concrete, settings.limits);
        if outcome != Outcome::Timeout {
            slowest = slowest.max(t.elapsed());
        }
        if outcome.is_failure() {
            eprintln!("fuzz: {} {}: {outcome}", concrete.label, concrete.sub);
        }
        if (n + 1) % 100 == 0 {
            eprintln!("fuzz: {}/{total} cases, {:.0?}", n + 1, started.elapsed());
        }
        records.push(Record {
            concrete,
            outcome,
            stderr,
            index,
        });
    }

    // Counts per subcommand and class.
    let mut counts: BTreeMap<(Subcommand, &'static str), u64> = BTreeMap::new();
    for r in &records {
        *counts
            .entry((r.concrete.sub, r.outcome.class()))
            .or_default() += 1;
    }
    let classes = [
        "ok", "refused", "failed", "SUSPECT", "SILENT", "PANIC", "TIMEOUT", "OOM", "SIGNAL", "EXIT",
    ];
    let mut table = format!("{:<8}", "command");
    for c in classes {
        let _ = write!(table, "{c:>9}");
    }
    table.push('\n');
    for sub in Subcommand::ALL {
        let _ = write!(table, "{:<8}", sub.to_string());
        for c in classes {
            let _ = write!(table, "{:>9}", counts.get(&(sub, c)).copied().unwrap_or(0));
        }
        table.push('\n');
    }
    let _ = writeln!(
        table,
        "{total} cases in {:.0?}; slowest finished process {:.1?} of wall time (limit {:?} of CPU time, memory limit {} MiB)",
        started.elapsed(),
        slowest,
        settings.limits.time,
        settings.limits.memory_bytes >> 20
    );

    // Distinct failures, first occurrence of each, shrunk when generated.
    let mut groups: BTreeMap<String, Vec<&Record>> = BTreeMap::new();
    for r in records.iter().filter(|r| r.outcome.is_failure()) {
        groups
            .entry(group_key(&r.concrete, &r.outcome, &r.stderr, &seeds))
            .or_default()
            .push(r);
    }
    let deadline = Instant::now() + settings.shrink_budget;
    let mut failures = String::new();
    for (key, rs) in &groups {
        let first = rs[0];
        let sig = signature(first.concrete.sub, &first.outcome);
        let _ = writeln!(failures, "\n{key}  ({} cases)", rs.len());
        let stderr: String = first
            .stderr
            .lines()
            .take(3)
            .collect::<Vec<_>>()
            .join("\n    ");
        if !stderr.is_empty() {
            let _ = writeln!(failures, "  stderr: {stderr}");
        }
        failures.push_str(&reproducer(
            &first.concrete,
            &seeds,
            &out,
            &settings,
            first.index,
        ));
        let small = first
            .index
            .and_then(|i| shrink(&qsim, &work, &seeds, &settings, i, &sig, deadline));
        if let Some(small) = small {
            let _ = writeln!(failures, "  shrunk:");
            failures.push_str(&reproducer(&small, &seeds, &out, &settings, None));
        }
    }

    let _ = std::fs::remove_dir_all(&work);
    eprintln!("\n{table}");
    if groups.is_empty() {
        return;
    }
    eprintln!("{} distinct failures:{failures}", groups.len());
    assert!(
        settings.report_only,
        "the fuzz harness found {} distinct failures (listed above); QSIM_FUZZ_REPORT=1 only reports",
        groups.len()
    );
}
