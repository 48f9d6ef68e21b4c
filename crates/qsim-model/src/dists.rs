//! Distribution tables: `{ dist = "exponential", mean = 0.5 }` and friends.

use crate::ctx::{Ctx, child};
use crate::format::FAMILIES;
use crate::num;
use crate::tree::{Node, V};
use qsim_kernel::{Dist, DistError, Family};
use std::path::Path;

/// Reports a table of tables where a distribution belongs (`service = {
/// web = { ... }, batch = { ... } }`), which is the per-class form under
/// the wrong key: one error that names the form to use, rather than each
/// class name as an unknown distribution parameter with a guess at a
/// parameter it resembles. Whether it reported one.
fn nested_tables(ctx: &mut Ctx<'_>, node: &Node, path: &str) -> bool {
    let Some(entries) = node.table() else {
        return false;
    };
    if node.get("dist").is_some() {
        return false;
    }
    let nested: Vec<&str> = entries
        .iter()
        .filter(|e| matches!(e.node.v, V::Table(_)))
        .map(|e| e.key.as_str())
        .collect();
    let Some(first) = nested.first() else {
        return false;
    };
    let hint = match path.strip_suffix(".service") {
        Some(station) => format!(
            "service times per class are written {} = {{ {first} = {{ dist = ... }}, ... }}; service is one distribution for every class",
            child(station, "service_by_class")
        ),
        None => "a distribution is one table of dist and its parameters; a class with its own writes it in its [classes.NAME] table".to_string(),
    };
    ctx.error_hint(
        &node.origin,
        path,
        format!(
            "expected a distribution such as {{ dist = \"exponential\", mean = 1.0 }}, found a table of tables ({})",
            nested.join(", ")
        ),
        Some(hint),
    );
    true
}

/// Reads a distribution table; `base` is the directory of the model file
/// (for `empirical` sample files).
pub(crate) fn dist(ctx: &mut Ctx<'_>, node: &Node, path: &str, base: &Path) -> Option<Dist> {
    ctx.table(
        node,
        path,
        "a distribution such as { dist = \"exponential\", mean = 1.0 }",
    )?;
    if nested_tables(ctx, node, path) {
        return None;
    }
    let family_node = ctx.required(
        node,
        path,
        "dist",
        &format!("the distribution family, one of: {}", FAMILIES.join(", ")),
    );
    let Some(family) = family_node.and_then(|n| ctx.choice(n, &child(path, "dist"), FAMILIES))
    else {
        // Still check the parameters we can recognise.
        ctx.check_keys(
            node,
            path,
            &crate::format::DISTRIBUTION.names(),
            "a distribution",
        );
        return None;
    };
    let what = format!(
        "{} {family} distribution",
        if family.starts_with('e') { "an" } else { "a" }
    );
    let (allowed, forms) = parameter_sets(family);
    ctx.check_keys(node, path, allowed, &what);
    let p = Params {
        node,
        path,
        allowed,
        what: &what,
        forms,
    };
    let result: Result<Dist, DistError> = match family {
        "exponential" => p.exponential(ctx)?,
        "deterministic" => p.deterministic(ctx)?,
        "empirical" => return empirical(ctx, node, path, base),
        _ => p.two_parameter(ctx, family)?,
    };
    match result {
        Ok(d) => Some(d),
        Err(e) => {
            ctx.error(&node.origin, path, format!("{e}"));
            None
        }
    }
}

/// The keys a family takes, and its parameter sets as a message says them.
fn parameter_sets(family: &str) -> (&'static [&'static str], &'static str) {
    match family {
        "exponential" => (
            &["dist", "mean", "rate_per_s", "scv"],
            "mean, or rate_per_s",
        ),
        "deterministic" => (&["dist", "value", "mean", "scv"], "value (or mean)"),
        "uniform" => (
            &["dist", "min", "max", "mean", "scv"],
            "min and max, or mean and scv",
        ),
        "erlang" => (&["dist", "k", "mean", "scv"], "k and mean, or mean and scv"),
        "hyperexponential" => (
            &["dist", "p", "mean1", "mean2", "mean", "scv"],
            "p, mean1 and mean2, or mean and scv",
        ),
        "lognormal" => (
            &["dist", "mu", "sigma", "mean", "scv"],
            "mu and sigma, or mean and scv",
        ),
        "gamma" => (
            &["dist", "shape", "scale", "mean", "scv"],
            "shape and scale, or mean and scv",
        ),
        _ => (&["dist", "samples", "file"], "samples, or file"),
    }
}

/// A distribution table of a known family, being read. Its readers return
/// None after reporting an error, else the kernel's verdict on the values.
struct Params<'a> {
    node: &'a Node,
    path: &'a str,
    allowed: &'a [&'a str],
    what: &'a str,
    forms: &'a str,
}

impl Params<'_> {
    fn has(&self, k: &str) -> bool {
        self.node.get(k).is_some()
    }

    fn num(&self, ctx: &mut Ctx<'_>, k: &str) -> Option<f64> {
        let n = self.node.get(k)?;
        ctx.f64(n, &child(self.path, k))
    }

    /// Reports a mix of parameters that is no parameter set (once).
    fn bad_mix(&self, ctx: &mut Ctx<'_>) {
        let given: Vec<&str> = self
            .node
            .table()
            .unwrap_or(&[])
            .iter()
            .map(|e| e.key.as_str())
            .filter(|k| *k != "dist" && self.allowed.contains(k))
            .collect();
        ctx.error(
            &self.node.origin,
            self.path,
            format!(
                "{} needs {}; found {}",
                self.what,
                self.forms,
                if given.is_empty() {
                    "no parameters".to_string()
                } else {
                    given.join(", ")
                }
            ),
        );
    }

    fn exponential(&self, ctx: &mut Ctx<'_>) -> Option<Result<Dist, DistError>> {
        let (node, path) = (self.node, self.path);
        Some(match (self.has("mean"), self.has("rate_per_s")) {
            (true, false) => {
                let m = self.num(ctx, "mean")?;
                match node.get("scv") {
                    Some(_) => Dist::from_mean_scv(Family::Exponential, m, self.num(ctx, "scv")?),
                    None => Dist::exponential(m),
                }
            }
            (false, true) if !self.has("scv") => {
                let r = self.num(ctx, "rate_per_s")?;
                if r <= 0.0 {
                    ctx.error(
                        &node.get("rate_per_s")?.origin,
                        &child(path, "rate_per_s"),
                        format!("expected a positive rate, found {}", num(r)),
                    );
                    return None;
                }
                Dist::exponential(1.0 / r)
            }
            _ => {
                self.bad_mix(ctx);
                return None;
            }
        })
    }

    fn deterministic(&self, ctx: &mut Ctx<'_>) -> Option<Result<Dist, DistError>> {
        Some(match (self.has("value"), self.has("mean")) {
            (true, false) if !self.has("scv") => Dist::deterministic(self.num(ctx, "value")?),
            (false, true) => match self.node.get("scv") {
                Some(_) => Dist::from_mean_scv(
                    Family::Deterministic,
                    self.num(ctx, "mean")?,
                    self.num(ctx, "scv")?,
                ),
                None => Dist::deterministic(self.num(ctx, "mean")?),
            },
            _ => {
                self.bad_mix(ctx);
                return None;
            }
        })
    }

    /// The families given by their own two or three parameters or by mean
    /// and scv: uniform, erlang, hyperexponential, lognormal, gamma.
    fn two_parameter(&self, ctx: &mut Ctx<'_>, family: &str) -> Option<Result<Dist, DistError>> {
        let direct: &[&str] = match family {
            "uniform" => &["min", "max"],
            "erlang" => &["k", "mean"],
            "hyperexponential" => &["p", "mean1", "mean2"],
            "lognormal" => &["mu", "sigma"],
            _ => &["shape", "scale"],
        };
        let f = match family {
            "uniform" => Family::Uniform,
            "erlang" => Family::Erlang,
            "hyperexponential" => Family::HyperExponential,
            "lognormal" => Family::LogNormal,
            _ => Family::Gamma,
        };
        let by_scv = self.has("mean") && self.has("scv");
        let given = self
            .node
            .table()
            .unwrap_or(&[])
            .iter()
            .filter(|e| e.key != "dist" && self.allowed.contains(&e.key.as_str()))
            .count();
        Some(if by_scv && given == 2 {
            let (m, s) = (self.num(ctx, "mean"), self.num(ctx, "scv"));
            Dist::from_mean_scv(f, m?, s?)
        } else if direct.iter().all(|k| self.has(k)) && given == direct.len() {
            let vals: Vec<Option<f64>> = direct.iter().map(|k| self.num(ctx, k)).collect();
            let vals: Vec<f64> = vals.into_iter().collect::<Option<_>>()?;
            match family {
                "uniform" => Dist::uniform(vals[0], vals[1]),
                "erlang" => {
                    let k = ctx.u32(
                        self.node.get("k")?,
                        &child(self.path, "k"),
                        1,
                        "a number of phases",
                    )?;
                    Dist::erlang(k, vals[1])
                }
                "hyperexponential" => Dist::hyperexponential(vals[0], vals[1], vals[2]),
                "lognormal" => Dist::lognormal(vals[0], vals[1]),
                _ => Dist::gamma(vals[0], vals[1]),
            }
        } else {
            self.bad_mix(ctx);
            return None;
        })
    }
}

fn empirical(ctx: &mut Ctx<'_>, node: &Node, path: &str, base: &Path) -> Option<Dist> {
    let samples: Vec<f64> = match (node.get("samples"), node.get("file")) {
        (Some(s), None) => {
            let p = child(path, "samples");
            let V::Array(items) = &s.v else {
                ctx.error(
                    &s.origin,
                    &p,
                    format!("expected an array of numbers, found {}", s.v.describe()),
                );
                return None;
            };
            let mut out = Vec::with_capacity(items.len());
            let mut ok = true;
            for (i, it) in items.iter().enumerate() {
                match ctx.non_negative(it, &format!("{p}[{i}]"), "time in seconds") {
                    Some(v) => out.push(v),
                    None => ok = false,
                }
            }
            if !ok {
                return None;
            }
            out
        }
        (None, Some(f)) => {
            let p = child(path, "file");
            let name = ctx.str(f, &p, "a file name")?;
            let full = base.join(name);
            let text = read_samples_file(ctx, f, &p, &full)?;
            let mut out = Vec::new();
            for (i, line) in text.lines().enumerate() {
                let field = line.split(',').next().unwrap_or("").trim();
                if field.is_empty() || field.starts_with('#') {
                    continue;
                }
                match field.parse::<f64>() {
                    Ok(_) if out.len() == MAX_SAMPLES => {
                        ctx.error(
                            &f.origin,
                            &p,
                            format!(
                                "{} has more than {MAX_SAMPLES} samples (the limit; found one more on line {}); expected a sample of at most {MAX_SAMPLES} values",
                                full.display(),
                                i + 1
                            ),
                        );
                        return None;
                    }
                    Ok(v) if v.is_finite() && v >= 0.0 => out.push(v),
                    Ok(v) => {
                        ctx.error(
                            &f.origin,
                            &p,
                            format!(
                                "line {} of {}: expected a time in seconds >= 0, found {}",
                                i + 1,
                                full.display(),
                                num(v)
                            ),
                        );
                        return None;
                    }
                    // A header line is allowed before the first number.
                    Err(_) if out.is_empty() && i == 0 => {}
                    Err(_) => {
                        ctx.error(
                            &f.origin,
                            &p,
                            format!(
                                "line {} of {}: expected a number, found \"{field}\"",
                                i + 1,
                                full.display()
                            ),
                        );
                        return None;
                    }
                }
            }
            out
        }
        _ => {
            ctx.error(
                &node.origin,
                path,
                "an empirical distribution needs either samples = [...] or file = \"name.csv\", not both and not neither",
            );
            return None;
        }
    };
    match Dist::empirical(&samples) {
        Ok(d) => Some(d),
        Err(e) => {
            ctx.error(&node.origin, path, format!("{e}"));
            None
        }
    }
}

/// Most bytes read from an `empirical` samples file: a file of ten
/// million samples fits; an endless device (`/dev/zero`) or a huge file is
/// refused instead of filling memory.
const MAX_SAMPLES_FILE_BYTES: u64 = 64 << 20;
/// Most samples an `empirical` distribution keeps (8 bytes each).
const MAX_SAMPLES: usize = 10_000_000;

/// The text of a samples file, read with a bound; a located error names the
/// file, how much was read and the limit.
fn read_samples_file(ctx: &mut Ctx<'_>, f: &Node, p: &str, full: &Path) -> Option<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    let read = std::fs::File::open(full).and_then(|file| {
        file.take(MAX_SAMPLES_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
    });
    if let Err(e) = read {
        ctx.error(
            &f.origin,
            p,
            format!("cannot read the samples file {}: {e}", full.display()),
        );
        return None;
    }
    if bytes.len() as u64 > MAX_SAMPLES_FILE_BYTES {
        ctx.error_hint(
            &f.origin,
            p,
            format!(
                "the samples file {} is too large: read {} bytes and it goes on; expected at most {} bytes ({} MiB)",
                full.display(),
                bytes.len(),
                MAX_SAMPLES_FILE_BYTES,
                MAX_SAMPLES_FILE_BYTES >> 20
            ),
            Some(format!(
                "use a random subset of at most {MAX_SAMPLES} samples, one number per line"
            )),
        );
        return None;
    }
    match String::from_utf8(bytes) {
        Ok(t) => Some(t),
        Err(e) => {
            ctx.error(
                &f.origin,
                p,
                format!(
                    "the samples file {} is not text (invalid UTF-8 at byte {}); expected one number per line",
                    full.display(),
                    e.utf8_error().valid_up_to()
                ),
            );
            None
        }
    }
}
