//! The library is usable without the command line: `qsim` with
//! `default-features = false` depends on the qsim crates only, none of the
//! binary's argument parsing, progress or signal handling.

use std::process::Command;

#[test]
fn the_library_without_default_features_pulls_no_command_line_crate() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--offline",
            "--locked",
            "-p",
            "qsim",
            "--no-default-features",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .output()
        .expect("cargo tree runs");
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cargo tree failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(tree.contains("qsim-kernel"), "{tree}");
    for cli in [
        "clap ",
        "clap_complete",
        "clap_mangen",
        "indicatif",
        "ctrlc",
        "anyhow",
    ] {
        assert!(
            !tree.lines().any(|l| l.starts_with(cli.trim_end())),
            "the library depends on {cli}:\n{tree}"
        );
    }
}
