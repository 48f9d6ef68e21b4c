//! Running the built `qsim` binary under a memory and a time limit, and
//! sorting what it did into outcome classes.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The subcommand a case runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Subcommand {
    /// `qsim check`
    Check,
    /// `qsim run` with a short stop
    Run,
    /// `qsim solve`
    Solve,
}

impl Subcommand {
    /// Every subcommand, in report order.
    pub const ALL: [Subcommand; 3] = [Subcommand::Check, Subcommand::Run, Subcommand::Solve];

    /// The arguments after the binary, before the model path.
    pub fn args(self) -> &'static [&'static str] {
        match self {
            Subcommand::Check => &["check"],
            // Short stops: 2 replications of 50 jobs (after the model's own
            // warm-up) on one thread, and no second (bistability) run. A
            // spin_fanout job is 256 sub-jobs on spin latches: 200 of them
            // already take 7 s of CPU.
            Subcommand::Run => &[
                "run",
                "--jobs",
                "50",
                "--replications",
                "2",
                "--threads",
                "1",
                "--no-bistability-check",
                // Runs qsim estimates beyond what the time limit allows
                // must be refused up front, not time out.
                "--max-events",
                "1e8",
                "--format",
                "json",
            ],
            Subcommand::Solve => &["solve", "--threads", "1", "--format", "json"],
        }
    }
}

impl fmt::Display for Subcommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.args()[0])
    }
}

/// What one qsim process did.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Outcome {
    /// Exit 0 and an output that passed the sanity checks.
    Ok,
    /// Exit 2 with a message: the model or the flags were refused.
    Refused,
    /// Exit 1 with a message: the run failed and said why.
    Failed,
    /// Exit 0, but the output shows a figure no correct run can give and
    /// no warning says so (the reason is kept).
    Suspect(String),
    /// Exit 1 or 2 with nothing on stderr.
    Silent,
    /// A Rust panic (exit 101 or "panicked at"); keeps the panic's location line.
    Panic(String),
    /// Still running at the time limit, then killed.
    Timeout,
    /// Died of the memory limit (an allocation failed).
    OutOfMemory,
    /// Killed by a signal for another reason.
    Signal(i32),
    /// Any other exit code.
    Exit(i32),
}

impl Outcome {
    /// Whether this outcome breaks the harness's promise (no panic, no
    /// hang, no runaway allocation, no confident wrong answer).
    pub fn is_failure(&self) -> bool {
        !matches!(self, Outcome::Ok | Outcome::Refused | Outcome::Failed)
    }

    /// The class name used in the summary table.
    pub fn class(&self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Refused => "refused",
            Outcome::Failed => "failed",
            Outcome::Suspect(_) => "SUSPECT",
            Outcome::Silent => "SILENT",
            Outcome::Panic(_) => "PANIC",
            Outcome::Timeout => "TIMEOUT",
            Outcome::OutOfMemory => "OOM",
            Outcome::Signal(_) => "SIGNAL",
            Outcome::Exit(_) => "EXIT",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Suspect(why) => write!(f, "SUSPECT ({why})"),
            Outcome::Panic(at) => write!(f, "PANIC ({at})"),
            Outcome::Signal(s) => write!(f, "SIGNAL {s}"),
            Outcome::Exit(c) => write!(f, "EXIT {c}"),
            other => f.write_str(other.class()),
        }
    }
}

/// Limits every qsim process runs under.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Time limit; the process is killed when its CPU time reaches it, or
    /// its wall-clock time reaches three times it (a process blocked
    /// without using CPU). CPU time, because on a shared machine a
    /// single-threaded process's wall time is a multiple of its work.
    pub time: Duration,
    /// Address-space limit in bytes (RLIMIT_AS).
    pub memory_bytes: u64,
}

/// Runs `qsim ARGS MODEL SETS EXTRA` in `dir` under `limits` and classifies the result.
/// Output goes to files (capped by RLIMIT_FSIZE) so a chatty process can
/// neither block on a full pipe nor fill the disk.
pub fn run_qsim(
    qsim: &Path,
    dir: &Path,
    sub: Subcommand,
    model: &Path,
    sets: &[String],
    extra: &[String],
    limits: Limits,
) -> (Outcome, String) {
    let out_path = dir.join("stdout.txt");
    let err_path = dir.join("stderr.txt");
    let stdout = File::create(&out_path).expect("create stdout file");
    let stderr = File::create(&err_path).expect("create stderr file");
    // prlimit sets the limits on itself, then executes qsim, so the limits
    // hold from qsim's first instruction and the child's pid is qsim's.
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--as={}", limits.memory_bytes))
        .arg(format!("--fsize={}", 64 << 20))
        .arg("--core=0")
        .arg("--")
        .arg(qsim)
        .args(sub.args())
        .arg(model);
    for s in sets {
        cmd.arg("--set").arg(s);
    }
    cmd.args(extra);
    cmd.current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .env("RUST_BACKTRACE", "0");
    let mut child = cmd
        .spawn()
        .expect("cannot start prlimit (util-linux) to run qsim");
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for qsim") {
            break Some(status);
        }
        if start.elapsed() >= 3 * limits.time || cpu_time(child.id()) >= limits.time {
            // Only this child, by its own pid.
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stderr = read_capped(&err_path);
    let outcome = match status {
        None => Outcome::Timeout,
        Some(status) => classify(status, &stderr, &out_path, sub),
    };
    (outcome, stderr)
}

/// CPU time (user + system) used so far by process `pid`, from
/// /proc/PID/stat, whose times are in USER_HZ ticks (100 per second on
/// Linux whatever the kernel's own tick).
fn cpu_time(pid: u32) -> Duration {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return Duration::ZERO;
    };
    // The command name (field 2) may contain spaces; fields after it are
    // plain. utime and stime are fields 14 and 15.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

fn classify(
    status: std::process::ExitStatus,
    stderr: &str,
    out_path: &Path,
    sub: Subcommand,
) -> Outcome {
    if let Some(line) = stderr.lines().find(|l| l.contains("panicked at")) {
        return Outcome::Panic(line.trim().to_string());
    }
    // A process that reached the address-space limit, whether it aborted or
    // caught the failed allocation and reported it ("out of memory" from an
    // io::Error): either way it tried to use more memory than the limit.
    if ["memory allocation of", "capacity overflow", "out of memory"]
        .iter()
        .any(|m| stderr.contains(m))
    {
        return Outcome::OutOfMemory;
    }
    if let Some(sig) = status.signal() {
        return Outcome::Signal(sig);
    }
    let has_message = !stderr.trim().is_empty();
    match status.code() {
        Some(0) => match sub {
            Subcommand::Check => Outcome::Ok,
            Subcommand::Run | Subcommand::Solve => match sanity(&read_capped(out_path), sub) {
                None => Outcome::Ok,
                Some(why) => Outcome::Suspect(why),
            },
        },
        Some(1) if has_message => Outcome::Failed,
        Some(2) if has_message => Outcome::Refused,
        Some(1 | 2) => Outcome::Silent,
        Some(101) => Outcome::Panic("exit 101".to_string()),
        Some(c) => Outcome::Exit(c),
        None => Outcome::Exit(-1),
    }
}

fn read_capped(path: &Path) -> String {
    let mut bytes = Vec::new();
    if let Ok(f) = File::open(path) {
        let _ = f.take(8 << 20).read_to_end(&mut bytes);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Checks a successful run's or solve's JSON for figures no correct answer
/// has, unless the output carries a warning: NaN or infinity (written as
/// `null`), negative times, rates or interval half-widths, and for a run
/// that completed jobs, a throughput that is not positive or a measurement
/// that took no simulated time. Returns why the output is suspect.
fn sanity(out: &str, sub: Subcommand) -> Option<String> {
    let json: serde_json::Value = match serde_json::from_str(out) {
        Ok(j) => j,
        Err(e) => return Some(format!("stdout is not JSON: {e}")),
    };
    let warned = json
        .get("warnings")
        .and_then(|w| w.as_array())
        .is_some_and(|w| !w.is_empty());
    if warned {
        return None;
    }
    let mut problems = Vec::new();
    walk(&json, "", &mut problems);
    if sub == Subcommand::Run {
        let x = json
            .pointer("/system/throughput_per_s/mean")
            .and_then(|v| v.as_f64());
        if !x.is_some_and(|x| x > 0.0 && x.is_finite()) {
            problems.push(format!(
                "system.throughput_per_s.mean = {x:?} after 50 jobs"
            ));
        }
        let t = json.pointer("/measured_time_s").and_then(|v| v.as_f64());
        if !t.is_some_and(|t| t > 0.0) {
            problems.push(format!("measured_time_s = {t:?}"));
        }
    }
    problems.first().cloned()
}

fn walk(v: &serde_json::Value, path: &str, problems: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(map) => {
            // The bounds' `lower_unavailable` reason states that the lower
            // throughput bound, and the response bound from it, are not
            // available: those nulls are not silent NaNs (others still are).
            let explained = map.get("lower_unavailable").is_some_and(|v| v.is_string());
            for (k, v) in map {
                let stated = matches!(k.as_str(), "throughput_lower_per_s" | "response_upper_s");
                if explained && stated && v.is_null() {
                    continue;
                }
                walk(v, &format!("{path}.{k}"), problems);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                walk(v, &format!("{path}[{i}]"), problems);
            }
        }
        serde_json::Value::Null if is_figure(path) => problems.push(format!("{path} is null")),
        serde_json::Value::Number(n) if is_figure(path) && n.as_f64().is_some_and(|x| x < 0.0) => {
            problems.push(format!("{path} = {n} is negative"))
        }
        _ => {}
    }
}

/// Whether a JSON path names a figure that can be neither NaN nor negative.
fn is_figure(path: &str) -> bool {
    let last = path.rsplit('.').next().unwrap_or(path);
    let figure_key = matches!(last, "mean" | "ci95" | "analytic" | "utilization")
        || last.ends_with("_s")
        || last.ends_with("_per_s");
    // Derived metrics are user expressions and may be negative.
    figure_key && !path.starts_with(".derived")
}
