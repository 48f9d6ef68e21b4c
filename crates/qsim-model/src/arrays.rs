//! Station groups (arrays): `[stations.NAME]` with `count = N` and member
//! station tables is written out, after the overrides, as N copies of its
//! members named `NAME[k].MEMBER` (k from 0), in the tree, so everything
//! after this step sees plain stations. In a member, `[i]` in a string
//! stands for its own index (`spin.cpu = "instance[i].cpu"`). Outside
//! groups, a routing row whose key has `[i]`, an item of a fork's `to` or
//! of a region's `stations` with `[i]` stands for one per member.
//!
//! Copies keep the template's locations, so a problem in a member is
//! reported at the template's file:line:column under the member's key path
//! (`stations.instance[3].cpu.servers`). Sizes are estimated before
//! anything is copied.

use crate::tree::{self, Entry, MemberSet, Node, Origin, Segment, V, is_group};
use qsim_kernel::MAX_STATIONS;
use std::collections::HashMap;

/// The most tree nodes all groups may expand to (a station is a few
/// dozen): about half a gigabyte at most.
const MAX_NODES: u128 = 1 << 22;

/// A problem found while writing groups out.
pub(crate) struct Problem {
    pub origin: Origin,
    pub path: String,
    pub message: String,
    pub hint: Option<String>,
    /// Caused by this override (located at the override).
    pub ov: Option<usize>,
}

/// Writes every station group out, then applies member overrides and the
/// `[i]` forms outside groups.
pub(crate) fn expand(root: &mut Node, sets: Vec<MemberSet>) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut sizes: HashMap<String, usize> = HashMap::new();
    let Some(V::Table(stations)) = root_stations(root).map(|n| &mut n.v) else {
        return problems;
    };
    if !stations.iter().any(|e| is_group(&e.node)) {
        for s in &sets {
            problems.push(not_a_group(s));
        }
        return problems;
    }
    let plain = stations.iter().filter(|e| !is_group(&e.node)).count() as u128;
    let mut out = Vec::with_capacity(stations.len());
    let mut total_nodes = 0u128;
    let mut total_stations = plain;
    for e in std::mem::take(stations) {
        if !is_group(&e.node) {
            out.push(e);
            continue;
        }
        let path = format!("stations.{}", crate::quote_key(&e.key));
        let Some(n) = group_count(&e.node, &path, &mut problems) else {
            sizes.insert(e.key.clone(), 0);
            continue;
        };
        let members: Vec<&Entry> = e
            .node
            .table()
            .unwrap_or_default()
            .iter()
            .filter(|m| m.key != "count")
            .collect();
        let mut ok = true;
        for m in &members {
            if m.node.table().is_none() {
                problems.push(Problem {
                    origin: m.node.origin.clone(),
                    path: tree::child(&path, &m.key),
                    message: format!(
                        "expected a member station (a table with kind = ...), found {}",
                        m.node.v.describe()
                    ),
                    hint: None,
                    ov: None,
                });
                ok = false;
            }
        }
        if members.is_empty() {
            problems.push(Problem {
                origin: e.node.origin.clone(),
                path: path.clone(),
                message: "a station group needs member stations; expected [stations.NAME.MEMBER] tables beside count".into(),
                hint: None,
                ov: None,
            });
            ok = false;
        }
        let per_member: u128 = members.iter().map(|m| nodes(&m.node)).sum();
        total_nodes += per_member * n as u128;
        total_stations += (members.len() * n) as u128;
        if total_nodes > MAX_NODES || total_stations > MAX_STATIONS as u128 {
            let count = e
                .node
                .get("count")
                .map_or(e.node.origin.clone(), |c| c.origin.clone());
            problems.push(Problem {
                origin: count,
                path: tree::child(&path, "count"),
                message: format!(
                    "{n} members of {} stations would make {total_stations} stations ({total_nodes} keys and values in all); expected at most {MAX_STATIONS} stations and {MAX_NODES} keys and values",
                    members.len()
                ),
                hint: Some("lower count, or model the members as one station with more servers".into()),
                ov: None,
            });
            ok = false;
        }
        if !ok {
            // Names indexing it are left out: its own problem says why.
            sizes.insert(e.key.clone(), 0);
            continue;
        }
        sizes.insert(e.key.clone(), n);
        for k in 0..n {
            let ix = format!("[{k}]");
            for m in &members {
                out.push(Entry {
                    key: format!("{}{ix}.{}", e.key, m.key),
                    key_origin: m.key_origin.clone(),
                    node: substitute(&m.node, &ix),
                });
            }
        }
    }
    *stations = out;
    for s in sets {
        if let Some(p) = apply_set(root, s, &sizes) {
            problems.push(p);
        }
    }
    indexed_outside(root, &sizes);
    problems
}

/// Applies one override of a member (`stations.NAME[k].KEY = ...`) once
/// groups are written out, `sizes` being each group's member count (0: the
/// group was refused); the problem, if any.
fn apply_set(root: &mut Node, s: MemberSet, sizes: &HashMap<String, usize>) -> Option<Problem> {
    let n = match sizes.get(&s.group) {
        None => return Some(not_a_group(&s)),
        // The group was refused; its own problem says why.
        Some(0) => return None,
        Some(&n) => n,
    };
    if s.index >= n {
        return Some(Problem {
            origin: Origin::Set(s.ov, None),
            path: String::new(),
            message: format!(
                "unknown key path stations.{}[{}]; the group has {n} members, so the index must be below {n}",
                s.group, s.index
            ),
            hint: None,
            ov: Some(s.ov),
        });
    }
    let first = s.rest.first()?;
    let member = format!("{}[{}].{}", s.group, s.index, first.key);
    let mut segs = vec![Segment::named("stations"), Segment::named(member)];
    segs.extend(s.rest.iter().skip(1).cloned());
    if first.pattern || !first.indices.is_empty() || tree::step_exists(root, &segs[..2]).is_none() {
        let members: Vec<String> = root_stations(root)
            .and_then(|n| n.table())
            .unwrap_or_default()
            .iter()
            .filter_map(|e| {
                let m = e.key.strip_prefix(&format!("{}[{}].", s.group, s.index))?;
                Some(format!("stations.{}[{}].{m}", s.group, s.index))
            })
            .collect();
        return Some(Problem {
            origin: Origin::Set(s.ov, None),
            path: String::new(),
            message: format!(
                "unknown key path stations.{}[{}].{}; expected one of: {}",
                s.group,
                s.index,
                first.key,
                members.join(", ")
            ),
            hint: None,
            ov: Some(s.ov),
        });
    }
    let e = tree::apply_at(root, &segs, s.value, s.ov).err()?;
    Some(Problem {
        origin: Origin::Set(s.ov, None),
        path: String::new(),
        message: e.message,
        hint: e.hint,
        ov: Some(s.ov),
    })
}

fn not_a_group(s: &MemberSet) -> Problem {
    Problem {
        origin: Origin::Set(s.ov, None),
        path: String::new(),
        message: format!(
            "unknown key path stations.{}[{}]; stations.{} is not a station group (a table with count)",
            s.group, s.index, s.group
        ),
        hint: None,
        ov: Some(s.ov),
    }
}

fn root_stations(root: &mut Node) -> Option<&mut Node> {
    let V::Table(t) = &mut root.v else {
        return None;
    };
    t.iter_mut()
        .find(|e| e.key == "stations")
        .map(|e| &mut e.node)
}

/// The group's `count`: a whole number >= 1.
fn group_count(node: &Node, path: &str, problems: &mut Vec<Problem>) -> Option<usize> {
    let c = node.get("count")?;
    let n = match c.v {
        V::Int(n) if n >= 1 => Some(n),
        V::Float(f) if f.fract() == 0.0 && (1.0..9.0e15).contains(&f) => Some(f as i64),
        _ => None,
    };
    match n.and_then(|n| usize::try_from(n).ok()) {
        Some(n) => Some(n),
        None => {
            problems.push(Problem {
                origin: c.origin.clone(),
                path: tree::child(path, "count"),
                message: format!(
                    "expected a number of members >= 1, found {}",
                    c.v.describe()
                ),
                hint: None,
                ov: None,
            });
            None
        }
    }
}

/// Keys and values in a subtree.
fn nodes(n: &Node) -> u128 {
    1 + match &n.v {
        V::Array(items) => items.iter().map(nodes).sum(),
        V::Table(t) => t.iter().map(|e| nodes(&e.node)).sum(),
        _ => 0,
    }
}

/// A copy of `n` with `[i]` replaced by `ix` in strings and keys.
fn substitute(n: &Node, ix: &str) -> Node {
    let v = match &n.v {
        V::Str(s) if s.contains("[i]") => V::Str(s.replace("[i]", ix)),
        V::Array(items) => V::Array(items.iter().map(|x| substitute(x, ix)).collect()),
        V::Table(t) => V::Table(
            t.iter()
                .map(|e| Entry {
                    key: e.key.replace("[i]", ix),
                    key_origin: e.key_origin.clone(),
                    node: substitute(&e.node, ix),
                })
                .collect(),
        ),
        other => other.clone(),
    };
    Node {
        v,
        origin: n.origin.clone(),
    }
}

/// The group a name indexes with `[i]` and its size.
fn indexed(name: &str, sizes: &HashMap<String, usize>) -> Option<usize> {
    let k = name.find("[i]")?;
    sizes.get(&name[..k]).copied()
}

/// `[i]` outside groups: routing rows (`"instance[i].cpu" = { ... }`),
/// fork targets (`to`) and region stations, one per member.
fn indexed_outside(root: &mut Node, sizes: &HashMap<String, usize>) {
    let V::Table(top) = &mut root.v else { return };
    for sec in top.iter_mut() {
        match sec.key.as_str() {
            "workload" => rows(&mut sec.node, sizes),
            "classes" | "stations" | "regions" => {
                let V::Table(items) = &mut sec.node.v else {
                    continue;
                };
                for it in items.iter_mut() {
                    match sec.key.as_str() {
                        "classes" => rows(&mut it.node, sizes),
                        "stations" => list(&mut it.node, "to", sizes),
                        _ => list(&mut it.node, "stations", sizes),
                    }
                }
            }
            _ => {}
        }
    }
}

/// Rows of `node`'s routing table whose key indexes a group: one per member.
fn rows(node: &mut Node, sizes: &HashMap<String, usize>) {
    let V::Table(t) = &mut node.v else { return };
    if let Some(rt) = t.iter_mut().find(|e| e.key == "routing") {
        rows_in(&mut rt.node, sizes);
    }
}

/// Items of the list (or keys of the weight table) at `key` that index a
/// group: one per member.
fn list(node: &mut Node, key: &str, sizes: &HashMap<String, usize>) {
    let V::Table(t) = &mut node.v else { return };
    let Some(l) = t.iter_mut().find(|e| e.key == key) else {
        return;
    };
    match &mut l.node.v {
        V::Array(items) => {
            let mut out = Vec::new();
            for it in std::mem::take(items) {
                match &it.v {
                    V::Str(s) if indexed(s, sizes).is_some() => {
                        let n = indexed(s, sizes).unwrap_or(0);
                        out.extend((0..n).map(|k| substitute(&it, &format!("[{k}]"))));
                    }
                    _ => out.push(it),
                }
            }
            *items = out;
        }
        V::Table(_) => rows_in(&mut l.node, sizes),
        _ => {}
    }
}

/// Keys of a table that index a group: one entry per member.
fn rows_in(node: &mut Node, sizes: &HashMap<String, usize>) {
    let V::Table(entries) = &mut node.v else {
        return;
    };
    let mut out = Vec::new();
    for e in std::mem::take(entries) {
        match indexed(&e.key, sizes) {
            Some(n) => out.extend((0..n).map(|k| {
                let ix = format!("[{k}]");
                Entry {
                    key: e.key.replace("[i]", &ix),
                    key_origin: e.key_origin.clone(),
                    node: substitute(&e.node, &ix),
                }
            })),
            None => out.push(e),
        }
    }
    *entries = out;
}
