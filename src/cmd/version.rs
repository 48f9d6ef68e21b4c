//! What `qsim --version` prints: the package version, the commit it was
//! built from (see build.rs), and what the build includes.

/// `qsim -V`: the version and commit, e.g. `0.1.0 (rev 057843b1a2c3)`.
pub const SHORT: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (rev ",
    env!("QSIM_COMMIT"),
    ")"
);

/// `qsim --version`: [`SHORT`], then the build's features, target and
/// profile.
pub const LONG: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (rev ",
    env!("QSIM_COMMIT"),
    ")\n",
    "features: cli (default; the library builds without it); built in: charts (SVG, PNG; bundled font, no system libraries), HTML report (inline script), shell completions, man page\n",
    "target: ",
    env!("QSIM_TARGET"),
    ", profile: ",
    env!("QSIM_PROFILE")
);
