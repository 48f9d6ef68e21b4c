//! Guards of the `qsim` binary: runs refused before anything is allocated,
//! and the two-ended bistability check.

use crate::support::{qsim, stderr};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

fn model_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("guards-models");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A population of 10^9 passes validation but needs ~100 GiB of job slab:
/// refused with the key, the estimate and the limit, in well under a
/// second because nothing is allocated (a run would take minutes to even
/// place the jobs).
#[test]
fn huge_population_is_refused_fast() {
    let start = Instant::now();
    let out = qsim(&[
        "run",
        "models/cpu_two_disks.toml",
        "--set",
        "workload.population=1000000000",
        "--max-memory",
        "8G",
    ]);
    let took = start.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(
        err.contains("workload.population: the run would need about"),
        "{err}"
    );
    assert!(err.contains("more than the limit of 8.000 GiB"), "{err}");
    // `check` refuses the same model the same way, naming the override.
    let out = qsim(&[
        "check",
        "models/cpu_two_disks.toml",
        "--set",
        "workload.population=1000000000",
        "--max-memory",
        "8G",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("workload.population: the run would need about")
            && err.contains("(set by --set workload.population=1000000000)"),
        "{err}"
    );
}

#[test]
fn huge_fan_out_is_refused() {
    let start = Instant::now();
    let out = qsim(&[
        "run",
        "models/spin_fanout.toml",
        "--set",
        "stations.split.fan_out=4294967295",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(start.elapsed() < Duration::from_secs(1));
    assert!(
        err.contains("stations.split.fan_out: the run would need about"),
        "{err}"
    );
    assert!(err.contains("TiB"), "{err}");
}

/// 4294967295 warm-up jobs of 20 events each cannot fit in one
/// replication's 2·10^10-event limit: refused at once instead of failing
/// hours later; of 2 events each, they exceed the whole run's default.
#[test]
fn endless_warmup_is_refused() {
    let out = qsim(&[
        "run",
        "models/cpu_two_disks.toml",
        "--set",
        "simulation.warmup={ jobs = 4294967295 }",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("simulation.warmup: one replication needs at least"),
        "{err}"
    );
    // On M/M/1 (two events a job) the same warm-up fits one replication's
    // limit, but ten of them are over an hour of work: refused by the run's
    // default event limit, fast, with the way to run it anyway.
    let start = Instant::now();
    let out = qsim(&[
        "run",
        "models/mm1.toml",
        "--set",
        "simulation.warmup={ jobs = 4294967295 }",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(
        err.contains("simulation.warmup: the run needs at least") && err.contains("--max-events"),
        "{err}"
    );
    // Many replications of a long (but possible) run: refused with a
    // duration estimate unless --force.
    let out = qsim(&["check", "models/cpu_two_disks.toml"]);
    assert!(out.status.success());
    let out = qsim(&[
        "run",
        "models/cpu_two_disks.toml",
        "--jobs",
        "100000000",
        "--replications",
        "1000",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--jobs 100000000: the run needs at least"),
        "{err}"
    );
    assert!(err.contains("--force runs it anyway"), "{err}");
}

const LATCH: &str = "[workload]\ntype = \"closed\"\npopulation = 120\nthink = { dist = \"exponential\", mean = 0.15 }\nroute = [\"latch\"]\n\n[stations.latch]\nkind = \"latch\"\nservice = { dist = \"exponential\", mean = 0.001 }\nspeed = { table = [{ n = 50, rate = 1000 }, { n = 100, rate = 50 }] }\n";

/// The latch model of `cli.rs` (fast: ~730/s; collapsed: ~53/s, both
/// stable) started at the latch used to print the collapsed answer alone;
/// now the check runs the all-thinking end too and flags it.
#[test]
fn bistable_model_started_at_the_latch_is_flagged() {
    let text = LATCH.replace(
        "[workload]",
        "[simulation]\ninitial = { station = \"latch\" }\n\n[workload]",
    );
    let path = model_file("latch_start.toml", &text);
    let out = qsim(&[
        "run",
        path.to_str().unwrap(),
        "--format",
        "json",
        "--jobs",
        "50000",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("the model is bistable")),
        "{v}"
    );
}

/// A model whose speed falls but which has one operating point says the
/// check ran and passed: the same latch with 60 jobs slows to 810/s when
/// all of them queue there, still twice the most they can ask for
/// (60 / 0.15 s = 400/s), so it drains from either end to one state.
#[test]
fn single_operating_point_says_the_check_passed() {
    let text = LATCH.replace("population = 120", "population = 60");
    let path = model_file("latch_small.toml", &text);
    let out = qsim(&[
        "run",
        path.to_str().unwrap(),
        "--format",
        "json",
        "--jobs",
        "20000",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["warnings"].as_array().unwrap().is_empty(), "{v}");
    let checks = v["checks"].as_array().unwrap();
    assert!(
        checks
            .iter()
            .any(|c| c.as_str().unwrap().starts_with("bistability check passed")),
        "{v}"
    );
    let out = qsim(&["run", path.to_str().unwrap(), "--jobs", "20000"]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("\ncheck: bistability check passed"),
        "{table}"
    );
}

/// Ctrl-C on a sweep (a real SIGINT to the process): exit 130, the points
/// that had finished are on disk, and `--resume` runs the rest to exactly
/// the files of an uninterrupted sweep.
#[test]
fn interrupted_sweep_keeps_its_points_and_resumes() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let (cut, full) = (
        tmp.join("guards-sigint-cut"),
        tmp.join("guards-sigint-full"),
    );
    for d in [&cut, &full] {
        let _ = std::fs::remove_dir_all(d);
    }
    let args = |dir: &PathBuf| -> Vec<String> {
        [
            "sweep",
            "models/cpu_two_disks.toml",
            "--vary",
            "workload.population=1..30:1",
            "--jobs",
            "100000",
            "--replications",
            "2",
            "--threads",
            "2",
            "-o",
            dir.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec()
    };
    let child = Command::new(env!("CARGO_BIN_EXE_qsim"))
        .args(args(&cut))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt as soon as the first point is on disk.
    let csv = cut.join("points.csv");
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(&csv).map_or(0, |t| t.lines().count()) < 2 {
        assert!(Instant::now() < deadline, "no point written within 60 s");
        std::thread::sleep(Duration::from_millis(10));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let kept = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
    assert!((1..30).contains(&kept), "{kept} points kept");
    assert!(
        err.contains(&format!(
            "interrupted: {kept} of 30 points kept in {}",
            cut.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("; resume with qsim sweep models/cpu_two_disks.toml"),
        "{err}"
    );
    assert!(err.trim_end().ends_with("--resume"), "{err}");

    let mut resume = args(&cut);
    resume.push("--resume".into());
    let resume: Vec<&str> = resume.iter().map(String::as_str).collect();
    let out = qsim(&resume);
    assert!(out.status.success(), "{}", stderr(&out));
    let whole: Vec<String> = args(&full);
    let out = qsim(&whole.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", stderr(&out));
    for name in ["points.csv", "points.jsonl", "summary.json"] {
        let a = std::fs::read(cut.join(name)).unwrap();
        let b = std::fs::read(full.join(name)).unwrap();
        assert!(!a.is_empty() && a == b, "{name} differs after the resume");
    }
    for d in [&cut, &full] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// `qsim solve` takes the memory limit from the same `--max-memory` as run
/// and sweep, and refuses exact MVA beyond it with the key, the estimate
/// and the limit. Exact MVA of cpu_two_disks at N = 200,000 keeps about
/// 27.5 MiB (144 bytes per population: 48 + 32 per station): refused under
/// a 16 MiB limit, solved under 64 MiB.
#[test]
fn solve_takes_the_memory_limit_of_max_memory() {
    let args = |limit: &'static str| {
        [
            "solve",
            "models/cpu_two_disks.toml",
            "--set",
            "workload.population=200000",
            "--max-memory",
            limit,
        ]
    };
    let start = Instant::now();
    let out = qsim(&args("16M"));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(start.elapsed() < Duration::from_secs(2));
    assert!(
        err.contains("workload.population: exact MVA would need about 27.5 MiB of memory, more than the limit of 16.0 MiB"),
        "{err}"
    );
    assert!(err.contains("raise --max-memory"), "{err}");
    let out = qsim(&args("64M"));
    assert!(out.status.success(), "{}", stderr(&out));
    // Within the limit, X is the bound 1/D_max = 7.407/s at this population.
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("system.throughput_per_s              7.407407"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The range form names its flag; the limit binds there too.
    let out = qsim(&[
        "solve",
        "models/cpu_two_disks.toml",
        "--population-range",
        "1..200000:1000",
        "--max-memory",
        "16M",
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--population-range 1..200000:1000: exact MVA would need about"),
        "{err}"
    );
}

/// Under an address-space limit (`prlimit --as`, `ulimit -v`) the default
/// `--max-memory` is half of it, so what cannot be allocated there is
/// refused with the limit named instead of dying of a failed allocation:
/// exact MVA of cpu_two_disks at N = 5·10^6 needs about 687 MiB, more than
/// half of a 1 GiB limit.
#[test]
fn default_memory_limit_follows_the_address_space_limit() {
    let out = Command::new("prlimit")
        .arg(format!("--as={}", 1u64 << 30))
        .arg(env!("CARGO_BIN_EXE_qsim"))
        .args([
            "solve",
            "models/cpu_two_disks.toml",
            "--set",
            "workload.population=5000000",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("prlimit (util-linux) runs");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "exact MVA would need about 686.6 MiB of memory, more than the limit of 512.0 MiB"
        ),
        "{err}"
    );
}
