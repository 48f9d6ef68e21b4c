//! Records what `qsim --version` reports beside the package version: the
//! commit it was built from (`git rev-parse`, with `-dirty` when the work
//! tree had changes), the target and the profile. Without git, or outside a
//! repository (a crate tarball), the commit is `unknown`: the build never
//! fails for it.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).map_or_else(
        || "unknown".to_string(),
        |rev| match git(&["status", "--porcelain", "--untracked-files=no"]) {
            Some(_) => format!("{rev}-dirty"),
            None => rev,
        },
    );
    println!("cargo:rustc-env=QSIM_COMMIT={commit}");
    println!(
        "cargo:rustc-env=QSIM_TARGET={}",
        std::env::var("TARGET").unwrap_or_else(|_| "unknown".into())
    );
    println!(
        "cargo:rustc-env=QSIM_PROFILE={}",
        std::env::var("PROFILE").unwrap_or_else(|_| "unknown".into())
    );
    // Rebuild the version when HEAD moves or the index changes.
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/index");
        if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{head}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
