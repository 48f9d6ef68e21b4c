//! `qsim run --export FORMAT=FILE`: one run written in several formats,
//! each file what `--format FORMAT` prints for the same seed.

use crate::support::{qsim, refused, stderr};
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn one_run_exports_every_format_as_format_prints_it() {
    let dir = scratch("export-run");
    let (json, csv) = (dir.join("run.json"), dir.join("run.csv"));
    let base = ["run", "models/mm1.toml", "--jobs", "20000", "--seed", "3"];
    let o = qsim(
        &[
            &base[..],
            &[
                "--export",
                &format!("json={}", json.display()),
                "--export",
                &format!("csv={}", csv.display()),
            ],
        ]
        .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    for (file, format) in [(&json, "json"), (&csv, "csv")] {
        let alone = qsim(&[&base[..], &["--format", format]].concat());
        assert!(alone.status.success(), "{}", stderr(&alone));
        assert_eq!(
            std::fs::read_to_string(file).unwrap(),
            String::from_utf8_lossy(&alone.stdout),
            "--export {format} differs from --format {format}"
        );
    }
    // The table still goes to standard output.
    assert!(String::from_utf8_lossy(&o.stdout).contains("throughput"));
}

#[test]
fn bad_exports_are_refused_before_the_run() {
    let dir = scratch("export-bad");
    let f = dir.join("x.out");
    let f = f.to_str().unwrap();
    refused(
        &["run", "models/mm1.toml", "--export", &format!("xml={f}")],
        &["unknown format", "table, json, csv"],
    );
    refused(
        &[
            "run",
            "models/mm1.toml",
            "--export",
            &format!("json={f}"),
            "--export",
            &format!("csv={f}"),
        ],
        &["written twice"],
    );
    refused(
        &["run", "models/mm1.toml", "--export", "json=models/mm1.toml"],
        &["--export models/mm1.toml: is the input models/mm1.toml itself"],
    );
}
