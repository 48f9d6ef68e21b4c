//! Every resource bounded and nothing lost (issue 24): each probe a careless
//! or hostile user could type is refused fast with a message that says
//! where and why, or runs within its budget. Refusals are timed (they must
//! come before any work) and the ones that read a lot run under `prlimit`.

use crate::support::{qsim, stderr};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("limits");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs qsim with `args` under an address-space limit of `as_bytes` (when
/// `prlimit` is installed) and asserts it ends within `secs` seconds.
fn bounded(args: &[&str], as_bytes: u64, secs: u64) -> Output {
    let start = Instant::now();
    let exe = env!("CARGO_BIN_EXE_qsim");
    let have_prlimit = Command::new("prlimit")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let mut cmd = if have_prlimit {
        let mut c = Command::new("prlimit");
        c.arg(format!("--as={as_bytes}")).arg(exe);
        c
    } else {
        Command::new(exe)
    };
    let out = cmd
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let took = start.elapsed();
    assert!(
        took < Duration::from_secs(secs),
        "{args:?} took {took:?}: {}",
        stderr(&out)
    );
    out
}

/// Asserts `out` is a usage refusal (exit 2) whose message holds every
/// one of `wanted`, with no panic.
fn refused_with(out: &Output, wanted: &[&str]) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in wanted {
        assert!(err.contains(w), "expected {w:?} in: {err}");
    }
}

const GIB: u64 = 1 << 30;

#[test]
fn a_model_file_is_read_within_a_bound() {
    // An endless device and a 20 MB file: refused after reading 16 MiB.
    let out = bounded(&["check", "/dev/zero"], 2 * GIB, 5);
    refused_with(&out, &["/dev/zero", "too large", "16 MiB"]);
    let big = scratch("big.toml");
    let mut text = std::fs::read_to_string("models/mm1.toml").unwrap();
    text.push_str(&format!("# {}\n", "x".repeat(20 << 20)));
    std::fs::write(&big, text).unwrap();
    let out = bounded(&["check", big.to_str().unwrap()], 2 * GIB, 5);
    refused_with(&out, &["too large"]);
}

#[test]
fn a_megabyte_unknown_name_gets_a_short_error_fast() {
    let path = scratch("long_key.toml");
    let mut text = std::fs::read_to_string("models/mm1.toml").unwrap();
    text = text.replace(
        "servers = 1",
        &format!("servers = 1\nk{} = 1", "x".repeat(1 << 20)),
    );
    text = text.replace(
        "route = [\"server\"]",
        &format!("route = [\"{}\"]", "y".repeat(1 << 20)),
    );
    std::fs::write(&path, text).unwrap();
    let out = bounded(&["check", path.to_str().unwrap()], 2 * GIB, 5);
    refused_with(&out, &["unknown key", "no station named", "characters]"]);
    // The name is shown by its ends, not whole.
    assert!(stderr(&out).len() < 4000, "{}", stderr(&out).len());
}

#[test]
fn replications_and_traces_count_in_the_memory_estimate() {
    // 100,000 replications keep 100,000 results (about 88 KiB each).
    let out = bounded(
        &[
            "run",
            "models/mm1.toml",
            "--replications",
            "100000",
            "--jobs",
            "10",
            "--max-memory",
            "1G",
        ],
        2 * GIB,
        5,
    );
    refused_with(
        &out,
        &["--replications 100000", "more than the limit of 1.000 GiB"],
    );
    // A trace at 1e-12 s intervals: capped intervals, still a file of
    // gigabytes: refused before the run.
    let csv = scratch("t.csv");
    let out = bounded(
        &[
            "run",
            "models/mm1.toml",
            "--jobs",
            "1000",
            "--trace",
            csv.to_str().unwrap(),
            "--trace-interval",
            "1e-12",
        ],
        2 * GIB,
        5,
    );
    refused_with(&out, &["--trace", "raise --trace-interval"]);
    assert!(!csv.exists());
}

#[test]
fn time_stops_warmups_and_dropped_arrivals_are_under_the_event_budget() {
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &["run", "models/mm1.toml", "--time", "1e10"],
            &["--time 10000000000: the run needs at least", "--max-events"],
        ),
        (
            &[
                "run",
                "models/mm1.toml",
                "--time",
                "1000000",
                "--max-events",
                "1e3",
            ],
            &["--time 1000000: the run needs at least", "limit 1e3"],
        ),
        (
            &[
                "run",
                "models/mm1.toml",
                "--set",
                "simulation.warmup={ time_s = 4294967295 }",
            ],
            &["simulation.warmup: the run needs at least"],
        ),
        (
            // Arrivals at 4.3e9/s to a pool that completes at most 100/s:
            // almost every arrival is dropped, and each is an event.
            &[
                "run",
                "models/connection_pool.toml",
                "--set",
                "workload.rate_per_s=4294967295",
                "--max-events",
                "1e6",
            ],
            &["simulation.stop", "needs at least"],
        ),
    ];
    for (args, wanted) in cases {
        let out = bounded(args, 2 * GIB, 5);
        refused_with(&out, wanted);
    }
    // A closed model stopped by time: refused from its throughput's lower
    // bound where theory gives one ...
    let out = bounded(
        &[
            "run",
            "models/cpu_two_disks.toml",
            "--time",
            "1000000",
            "--max-events",
            "2e5",
            "--replications",
            "2",
        ],
        2 * GIB,
        5,
    );
    refused_with(&out, &["--time 1000000: the run needs at least"]);
    // ... and where none holds (blocking), each replication is held to
    // its share of --max-events instead.
    let out = bounded(
        &[
            "run",
            "models/app_db_blocking.toml",
            "--time",
            "1000000",
            "--max-events",
            "2e5",
            "--replications",
            "2",
            "--no-bistability-check",
        ],
        2 * GIB,
        20,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("share of --max-events"), "{err}");
}

#[test]
fn memory_beyond_the_machine_and_absurd_threads_are_refused() {
    let out = bounded(
        &[
            "run",
            "models/cpu_two_disks.toml",
            "--set",
            "workload.population=1000000000",
            "--max-memory",
            "1T",
        ],
        4 * GIB,
        5,
    );
    refused_with(&out, &["workload.population", "which --max-memory"]);
    let out = qsim(&["run", "models/mm1.toml", "--threads", "4096"]);
    refused_with(&out, &["--threads must be at most 1024"]);
    // 1024 threads asked, 5 replications: the pool has 5.
    let out = bounded(
        &[
            "run",
            "models/mm1.toml",
            "--jobs",
            "1000",
            "--replications",
            "5",
            "--threads",
            "1024",
        ],
        8 * GIB,
        10,
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn check_says_valid_whatever_the_free_memory_and_names_the_limit() {
    // Without --max-memory, the machine's free memory is a note, not the
    // verdict; with it, the refusal names the limit and where it is from.
    let out = qsim(&[
        "check",
        "models/cpu_two_disks.toml",
        "--set",
        "workload.population=1000000000",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains(": ok ("), "{text}");
    assert!(text.contains("note: on this machine now"), "{text}");
    let out = qsim(&[
        "check",
        "models/cpu_two_disks.toml",
        "--set",
        "workload.population=1000000000",
        "--max-memory",
        "8G",
    ]);
    refused_with(&out, &["(the limit is --max-memory 8.000 GiB)"]);
}

#[test]
fn check_and_solve_refuse_an_overflowing_rate_at_its_key() {
    for cmd in ["check", "solve"] {
        let out = qsim(&[
            cmd,
            "models/pgo.toml",
            "--set",
            "stations.latch.speed.usl.lambda=1e308",
        ]);
        refused_with(
            &out,
            &[
                "stations.latch.speed.usl.lambda",
                "expected a rate of at most 1e12 per second",
            ],
        );
    }
}

#[test]
fn no_output_can_replace_an_input() {
    let model = scratch("linked.toml");
    let samples = scratch("linked_samples.csv");
    std::fs::write(&samples, "0.5\n1.0\n1.5\n").unwrap();
    let text = std::fs::read_to_string("models/mm1.toml").unwrap().replace(
        "service = { dist = \"exponential\", mean = 1.0 }",
        "service = { dist = \"empirical\", file = \"linked_samples.csv\" }",
    );
    std::fs::write(&model, &text).unwrap();
    let hard = scratch("hard.toml");
    let soft = scratch("soft.toml");
    let _ = std::fs::remove_file(&hard);
    let _ = std::fs::remove_file(&soft);
    std::fs::hard_link(&model, &hard).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&model, &soft).unwrap();
    let m = model.to_str().unwrap();
    let outputs = [
        hard.to_str().unwrap(),
        soft.to_str().unwrap(),
        samples.to_str().unwrap(),
    ];
    for out_path in outputs {
        for flag in ["-o", "--trace"] {
            let out = qsim(&[
                "run",
                m,
                "--jobs",
                "100",
                "--replications",
                "2",
                flag,
                out_path,
            ]);
            refused_with(&out, &[out_path]);
        }
    }
    // The report and the trace in one file.
    let both = scratch("both.csv");
    let b = both.to_str().unwrap();
    let out = qsim(&["run", m, "--jobs", "100", "-o", b, "--trace", b]);
    refused_with(&out, &["name the same file"]);
    assert_eq!(std::fs::read_to_string(&model).unwrap(), text);
    assert_eq!(
        std::fs::read_to_string(&samples).unwrap(),
        "0.5\n1.0\n1.5\n"
    );
}

#[test]
fn resume_notices_a_changed_samples_file() {
    let model = scratch("resume.toml");
    let samples = scratch("resume_samples.csv");
    std::fs::write(&samples, "0.5\n1.0\n1.5\n").unwrap();
    let text = std::fs::read_to_string("models/mm1.toml").unwrap().replace(
        "service = { dist = \"exponential\", mean = 1.0 }",
        "service = { dist = \"empirical\", file = \"resume_samples.csv\" }",
    );
    std::fs::write(&model, text).unwrap();
    let dir = scratch("resume-sweep");
    let _ = std::fs::remove_dir_all(&dir);
    let args = [
        "sweep",
        model.to_str().unwrap(),
        "--vary",
        "workload.rate_per_s=0.2..0.4:0.2",
        "--jobs",
        "1000",
        "--replications",
        "2",
        "-o",
        dir.to_str().unwrap(),
    ];
    let out = qsim(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(&samples, "0.1\n0.2\n0.3\n").unwrap();
    let mut again = args.to_vec();
    again.push("--resume");
    let out = qsim(&again);
    assert!(!out.status.success(), "resumed over a changed samples file");
    assert!(stderr(&out).contains("samples file"), "{}", stderr(&out));
}

#[test]
fn a_closed_or_full_output_is_not_a_crash() {
    let exe = env!("CARGO_BIN_EXE_qsim");
    if std::path::Path::new("/dev/full").exists() {
        for args in [
            &["completions", "bash"][..],
            &["check", "models/mm1.toml"][..],
        ] {
            let full = std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap();
            let out = Command::new(exe)
                .args(args)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .stdout(full)
                .output()
                .unwrap();
            let err = stderr(&out);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(!err.contains("panicked"), "{err}");
            assert!(err.contains("No space left"), "{err}");
        }
    }
    // A reader that takes one byte and closes the pipe: exit 0, every time.
    for _ in 0..20 {
        let mut child = Command::new(exe)
            .args(["completions", "bash"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 1];
        use std::io::Read;
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"));
    }
}
