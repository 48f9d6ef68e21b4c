//! Clients and servers under overload: a class's `client` table (timeout,
//! retries, backoff, retry budget) and a queue's `patience`, `balk_at`,
//! `balk_probabilities`, `shed_after_s` and `lcfs_from`. Shapes and types here; the
//! range rules are the kernel's (`Overload::check`).

use super::{Table, non_empty_array};
use crate::ctx::{Ctx, child};
use crate::dists::dist;
use qsim_kernel::{
    Backoff, Balk, Breaker, ClientSpec, OnTimeout, RetryBudget, RetrySpec, StationOverload,
};
use std::path::Path;

/// A queue station's overload keys.
pub(crate) const STATION_KEYS: &[&str] = &[
    "patience",
    "balk_at",
    "balk_probabilities",
    "shed_after_s",
    "lcfs_from",
];

const ON_TIMEOUT: &[&str] = &["continue", "cancel"];

/// Doubling backoff without `backoff_cap_s`: the delay stops doubling
/// after ten retries.
const DEFAULT_CAP_DOUBLINGS: f64 = 1024.0;

/// The `client` table of class table `t`: `Some(None)` without one, `None`
/// after an error.
pub(super) fn client(
    ctx: &mut Ctx<'_>,
    t: Table<'_, '_>,
    base: &Path,
) -> Option<Option<ClientSpec>> {
    let Some(node) = t.get("client") else {
        return Some(None);
    };
    let path = child(t.path, "client");
    ctx.table(node, &path, "a client table")?;
    ctx.check_keys(
        node,
        &path,
        &crate::format::CLIENT.names(),
        "a client table",
    );
    let c = Table { node, path: &path };
    let before = ctx.has_errors();
    let timeout = c.opt(ctx, "timeout", None, |ctx, n, p| {
        dist(ctx, n, p, base).map(Some)
    });
    let on_timeout = c.opt(ctx, "on_timeout", OnTimeout::Continue, |ctx, n, p| {
        ctx.choice(n, p, ON_TIMEOUT).map(|x| match x {
            "cancel" => OnTimeout::Cancel,
            _ => OnTimeout::Continue,
        })
    });
    let deadline_s = c.opt(ctx, "deadline_s", None, |ctx, n, p| ctx.f64(n, p).map(Some));
    let max_attempts = c.opt(ctx, "max_attempts", None, |ctx, n, p| {
        ctx.int(n, p, 0, i64::from(u32::MAX - 1), "a number of attempts")
            .map(|v| Some(v as u32))
    });
    let probability = c.opt(ctx, "retry_probability", None, |ctx, n, p| {
        ctx.f64(n, p).map(Some)
    });
    let backoff_dist = c.opt(ctx, "backoff", None, |ctx, n, p| {
        dist(ctx, n, p, base).map(Some)
    });
    let base_s = c.opt(ctx, "backoff_base_s", None, |ctx, n, p| {
        ctx.f64(n, p).map(Some)
    });
    let cap_s = c.opt(ctx, "backoff_cap_s", None, |ctx, n, p| {
        ctx.f64(n, p).map(Some)
    });
    let jitter = c.opt(ctx, "backoff_jitter", None, |ctx, n, p| {
        ctx.f64(n, p).map(Some)
    });
    let ratio = c.opt(ctx, "retry_budget", None, |ctx, n, p| {
        ctx.f64(n, p).map(Some)
    });
    let budget_cap = c.opt(ctx, "retry_budget_cap", None, |ctx, n, p| {
        ctx.f64(n, p).map(Some)
    });
    let breaker = breaker(ctx, &c)?;
    let (max_attempts, probability, backoff_dist, base_s, cap_s, jitter, ratio, budget_cap) = (
        max_attempts?,
        probability?,
        backoff_dist?,
        base_s?,
        cap_s?,
        jitter?,
        ratio?,
        budget_cap?,
    );
    let retries = max_attempts.is_some() || probability.is_some();
    // Retry keys without retries, and two backoffs at once.
    for (key, given) in [
        ("backoff", backoff_dist.is_some()),
        ("backoff_base_s", base_s.is_some()),
        ("backoff_cap_s", cap_s.is_some()),
        ("backoff_jitter", jitter.is_some()),
        ("retry_budget", ratio.is_some()),
        ("retry_budget_cap", budget_cap.is_some()),
    ] {
        let n = node.get(key);
        if given && !retries {
            ctx.error(
                &n.expect("given").origin,
                &child(&path, key),
                format!("{key} applies to retries; expected max_attempts or retry_probability next to it"),
            );
        }
    }
    if backoff_dist.is_some() && base_s.is_some() {
        ctx.error(
            &node.get("backoff_base_s").expect("given").origin,
            &child(&path, "backoff_base_s"),
            "expected one backoff: a distribution (backoff) or the doubling schedule (backoff_base_s), not both",
        );
    }
    for (key, given) in [
        ("backoff_cap_s", cap_s.is_some()),
        ("backoff_jitter", jitter.is_some()),
    ] {
        if given && base_s.is_none() {
            ctx.error(
                &node.get(key).expect("given").origin,
                &child(&path, key),
                format!(
                    "{key} is part of the doubling schedule; expected backoff_base_s next to it"
                ),
            );
        }
    }
    if budget_cap.is_some() && ratio.is_none() {
        ctx.error(
            &node.get("retry_budget_cap").expect("given").origin,
            &child(&path, "retry_budget_cap"),
            "retry_budget_cap is the retry budget's burst; expected retry_budget next to it",
        );
    }
    if ctx.has_errors() && !before {
        return None;
    }
    let backoff = match (backoff_dist, base_s) {
        (Some(d), _) => Backoff::Dist(d),
        (None, Some(b)) => Backoff::Doubling {
            base_s: b,
            cap_s: cap_s.unwrap_or(b * DEFAULT_CAP_DOUBLINGS),
            jitter: jitter.unwrap_or(0.0),
        },
        (None, None) => Backoff::None,
    };
    let retry = retries.then(|| RetrySpec {
        max_attempts: max_attempts.unwrap_or(u32::MAX),
        probability: probability.unwrap_or(1.0),
        backoff,
        budget: ratio.map(|ratio| RetryBudget {
            ratio,
            cap: budget_cap.unwrap_or(10.0),
        }),
    });
    Some(Some(ClientSpec {
        timeout: timeout?,
        on_timeout: on_timeout?,
        deadline_s: deadline_s?,
        retry,
        breaker,
    }))
}

/// The circuit breaker keys of client table `c`: `Some(None)` without
/// `breaker_window`, `None` after an error in one of its keys.
fn breaker(ctx: &mut Ctx<'_>, c: &Table<'_, '_>) -> Option<Option<Breaker>> {
    let (node, path) = (c.node, c.path);
    let breaker_window = c.opt(ctx, "breaker_window", None, |ctx, n, p| {
        ctx.int(n, p, 0, i64::from(u32::MAX), "a number of attempts")
            .map(|v| Some(v as u32))
    });
    let breaker_ratio = c.opt(ctx, "breaker_failure_ratio", None, |ctx, n, p| {
        ctx.f64(n, p).map(Some)
    });
    let breaker_cool_down = c.opt(ctx, "breaker_cool_down_s", None, |ctx, n, p| {
        ctx.f64(n, p).map(Some)
    });
    let (breaker_window, breaker_ratio, breaker_cool_down) =
        (breaker_window?, breaker_ratio?, breaker_cool_down?);
    for (key, given) in [
        ("breaker_failure_ratio", breaker_ratio.is_some()),
        ("breaker_cool_down_s", breaker_cool_down.is_some()),
    ] {
        if given && breaker_window.is_none() {
            ctx.error(
                &node.get(key).expect("given").origin,
                &child(path, key),
                format!("{key} is part of a circuit breaker; expected breaker_window next to it"),
            );
        }
    }
    Some(breaker_window.map(|window| Breaker {
        failure_ratio: breaker_ratio.unwrap_or(0.5),
        window,
        cool_down_s: breaker_cool_down.unwrap_or(1.0),
    }))
}

/// The overload keys of station table `t`: `Some(None)` without any, `None`
/// after an error.
pub(super) fn station(
    ctx: &mut Ctx<'_>,
    t: Table<'_, '_>,
    base: &Path,
) -> Option<Option<StationOverload>> {
    if STATION_KEYS.iter().all(|k| t.get(k).is_none()) {
        return Some(None);
    }
    let patience = t.opt(ctx, "patience", None, |ctx, n, p| {
        dist(ctx, n, p, base).map(Some)
    });
    let balk_at = t.opt(ctx, "balk_at", None, |ctx, n, p| {
        ctx.int(n, p, 0, i64::from(u32::MAX), "a number of jobs")
            .map(|v| Some(Balk::AtLeast(v as u32)))
    });
    let balk_p = t.opt(ctx, "balk_probabilities", None, |ctx, n, p| {
        let items = non_empty_array(ctx, n, p, "probabilities", "probability")?;
        let mut out = Vec::new();
        for (i, x) in items.iter().enumerate() {
            out.push(ctx.f64(x, &format!("{p}[{i}]"))?);
        }
        Some(Some(Balk::Probabilities(out)))
    });
    let shed_after_s = t.opt(ctx, "shed_after_s", None, |ctx, n, p| {
        ctx.f64(n, p).map(Some)
    });
    let lcfs_from = t.opt(ctx, "lcfs_from", None, |ctx, n, p| {
        ctx.int(n, p, 0, i64::from(u32::MAX), "a number of jobs")
            .map(|v| Some(v as u32))
    });
    let (patience, balk_at, balk_p, shed_after_s, lcfs_from) =
        (patience?, balk_at?, balk_p?, shed_after_s?, lcfs_from?);
    if balk_at.is_some() && balk_p.is_some() {
        ctx.error(
            &t.get("balk_probabilities").expect("given").origin,
            &child(t.path, "balk_probabilities"),
            "expected one way of balking: balk_at or balk_probabilities, not both",
        );
        return None;
    }
    Some(Some(StationOverload {
        patience,
        balk: balk_at.or(balk_p),
        shed_after_s,
        lcfs_from,
    }))
}
