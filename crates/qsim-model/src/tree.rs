//! An owned TOML tree that remembers where every key and value came from:
//! a byte span in the file, or an override.

use crate::Override;
use std::ops::Range;
use toml::de::{DeTable, DeValue};

/// Where a node came from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Origin {
    /// Bytes of the model file.
    File(Range<usize>),
    /// Set by override number `i`; `was` is the span of the value it replaced, if any.
    Set(usize, Option<Range<usize>>),
}

#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub v: V,
    pub origin: Origin,
}

#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub key: String,
    pub key_origin: Origin,
    pub node: Node,
}

#[derive(Clone, Debug)]
pub(crate) enum V {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A value we never accept (a date or time), with its TOML type name.
    Other(&'static str),
    Array(Vec<Node>),
    /// Entries in file order.
    Table(Vec<Entry>),
}

impl V {
    pub fn type_name(&self) -> &'static str {
        match self {
            V::Str(_) => "a string",
            V::Int(_) => "an integer",
            V::Float(_) => "a float",
            V::Bool(_) => "a boolean",
            V::Other(t) => t,
            V::Array(_) => "an array",
            V::Table(_) => "a table",
        }
    }

    /// How the value reads in a message: `-5`, `"fcfs"`, `a table`.
    pub fn describe(&self) -> String {
        match self {
            V::Str(s) => format!("\"{s}\""),
            V::Int(i) => i.to_string(),
            V::Float(f) => crate::num(*f),
            V::Bool(b) => b.to_string(),
            V::Other(t) => t.to_string(),
            V::Array(_) => "an array".into(),
            V::Table(_) => "a table".into(),
        }
    }
}

impl Node {
    pub fn table(&self) -> Option<&[Entry]> {
        match &self.v {
            V::Table(t) => Some(t),
            _ => None,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        self.table()?.iter().find(|e| e.key == key).map(|e| &e.node)
    }
}

fn convert(v: &DeValue<'_>, span: Range<usize>, origin: &dyn Fn(Range<usize>) -> Origin) -> Node {
    let v = match v {
        DeValue::String(s) => V::Str(s.to_string()),
        DeValue::Integer(i) => {
            let digits = i.as_str();
            match i64::from_str_radix(digits, i.radix()) {
                Ok(n) => V::Int(n),
                // Out of the i64 range: keep it as a float so the range check reports it.
                Err(_) => V::Float(digits.parse::<f64>().unwrap_or(f64::INFINITY)),
            }
        }
        DeValue::Float(f) => V::Float(f.as_str().replace('_', "").parse().unwrap_or(f64::NAN)),
        DeValue::Boolean(b) => V::Bool(*b),
        DeValue::Datetime(_) => V::Other("a date-time"),
        DeValue::Array(a) => V::Array(
            a.iter()
                .map(|x| convert(x.get_ref(), x.span(), origin))
                .collect(),
        ),
        DeValue::Table(t) => V::Table(convert_table(t, origin)),
    };
    Node {
        v,
        origin: origin(span),
    }
}

fn convert_table(t: &DeTable<'_>, origin: &dyn Fn(Range<usize>) -> Origin) -> Vec<Entry> {
    let mut entries: Vec<(usize, Entry)> = t
        .iter()
        .map(|(k, v)| {
            (
                k.span().start,
                Entry {
                    key: k.get_ref().to_string(),
                    key_origin: origin(k.span()),
                    node: convert(v.get_ref(), v.span(), origin),
                },
            )
        })
        .collect();
    // The map is sorted by key; the spans give back the file order.
    entries.sort_by_key(|(start, _)| *start);
    entries.into_iter().map(|(_, e)| e).collect()
}

/// Parses a document; on a syntax error returns its message and byte offset.
pub(crate) fn parse_document(text: &str) -> Result<Node, (String, usize)> {
    match DeTable::parse(text) {
        Ok(t) => {
            let span = t.span();
            Ok(Node {
                v: V::Table(convert_table(t.get_ref(), &|s| Origin::File(s))),
                origin: Origin::File(span),
            })
        }
        Err(e) => Err((
            e.message().trim().to_string(),
            e.span().map_or(0, |s| s.start),
        )),
    }
}

/// Parses the value of an override: a TOML value, or else the bare word as a string.
pub(crate) fn parse_override_value(text: &str, index: usize) -> Node {
    let origin = |_s: Range<usize>| Origin::Set(index, None);
    match DeValue::parse(text) {
        Ok(v) => convert(v.get_ref(), v.span(), &origin),
        Err(_) => Node {
            v: V::Str(text.to_string()),
            origin: Origin::Set(index, None),
        },
    }
}

/// One segment of a key path: a key, then optional array indices.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Segment {
    pub key: String,
    pub indices: Vec<usize>,
    /// The key is a glob pattern (`latch*`, `cpu??`): a bare key with `*` or `?`.
    pub pattern: bool,
}

impl Segment {
    /// A plain key without indices.
    pub fn named(key: impl Into<String>) -> Segment {
        Segment {
            key: key.into(),
            indices: Vec::new(),
            pattern: false,
        }
    }
}

/// Whether `name` matches the glob `pattern`: `*` stands for any run of
/// characters (possibly none), `?` for exactly one, anything else for itself.
pub(crate) fn glob_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    // The last `*` seen and the position in `name` it is tried at; on a
    // mismatch the star takes one more character (no exponential search).
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || (p[pi] != '*' && p[pi] == n[ni])) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Splits `stations.l.speed.table[1].rate`; quoted keys (`stations."my disk".servers`) are allowed.
/// An unquoted key with `*` or `?` is a pattern; a quoted key never is.
pub(crate) fn split_path(path: &str) -> Result<Vec<Segment>, String> {
    let mut segs = Vec::new();
    let mut chars = path.chars().peekable();
    loop {
        let mut key = String::new();
        let quoted = chars.peek() == Some(&'"');
        if quoted {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some(c) => key.push(c),
                    None => return Err("unterminated quoted key".into()),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' || c == '[' {
                    break;
                }
                key.push(c);
                chars.next();
            }
            key = key.trim().to_string();
            if key.is_empty() {
                return Err("empty key in the path".into());
            }
        }
        let mut indices = Vec::new();
        while chars.peek() == Some(&'[') {
            chars.next();
            let mut num = String::new();
            loop {
                match chars.next() {
                    Some(']') => break,
                    Some(c) => num.push(c),
                    None => return Err("missing ']'".into()),
                }
            }
            indices.push(
                num.trim()
                    .parse()
                    .map_err(|_| format!("expected an array index, found [{num}]"))?,
            );
        }
        let pattern = !quoted && key.contains(['*', '?']);
        segs.push(Segment {
            key,
            indices,
            pattern,
        });
        match chars.next() {
            None => return Ok(segs),
            Some('.') => {}
            Some(c) => return Err(format!("expected '.' or '[' after a key, found '{c}'")),
        }
    }
}

pub(crate) fn join_path(segs: &[Segment]) -> String {
    let mut s = String::new();
    for (i, seg) in segs.iter().enumerate() {
        if i > 0 {
            s.push('.');
        }
        if seg.pattern {
            s.push_str(&seg.key);
        } else {
            s.push_str(&crate::quote_key(&seg.key));
        }
        for ix in &seg.indices {
            s.push_str(&format!("[{ix}]"));
        }
    }
    s
}

/// Keys of a table, as dotted paths under `prefix`, for "expected one of" lists.
pub(crate) fn child_paths(node: &Node, prefix: &str) -> Vec<String> {
    node.table()
        .map(|t| {
            t.iter()
                .map(|e| {
                    if prefix.is_empty() {
                        crate::quote_key(&e.key)
                    } else {
                        format!("{prefix}.{}", crate::quote_key(&e.key))
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Resolves aliases: `workload.X` for a model with one class under `[classes]`,
/// and `NAME.X` for a uniquely named region, station or class (or a pattern
/// `NA*.X` that matches names in only one of those sections).
pub(crate) fn resolve_aliases(root: &Node, mut segs: Vec<Segment>) -> Vec<Segment> {
    let first = segs[0].key.clone();
    let pattern = segs[0].pattern;
    let has_first = |table: &Node| {
        if pattern {
            table
                .table()
                .is_some_and(|t| t.iter().any(|e| glob_match(&first, &e.key)))
        } else {
            table.get(&first).is_some()
        }
    };
    if has_first(root) || !segs[0].indices.is_empty() {
        return segs;
    }
    if first == "workload" {
        if let Some(classes) = root.get("classes").and_then(Node::table) {
            let closed: Vec<&Entry> = classes
                .iter()
                .filter(|e| {
                    e.node.get("population").is_some()
                        || matches!(e.node.get("type").map(|n| &n.v), Some(V::Str(s)) if s == "closed")
                })
                .collect();
            let pick = if classes.len() == 1 {
                Some(&classes[0])
            } else if closed.len() == 1
                && segs
                    .get(1)
                    .is_some_and(|s| s.key == "population" || s.key == "think")
            {
                Some(closed[0])
            } else {
                None
            };
            if let Some(e) = pick {
                let mut out = vec![Segment::named("classes"), Segment::named(e.key.clone())];
                out.extend(segs.drain(1..));
                return out;
            }
        }
        return segs;
    }
    let mut found = Vec::new();
    for section in ["regions", "stations", "classes"] {
        if root.get(section).is_some_and(has_first) {
            found.push(section);
        }
    }
    if found.len() == 1 {
        let mut out = vec![Segment::named(found[0])];
        out.append(&mut segs);
        return out;
    }
    segs
}

/// Keys of fixed name that an override may create on its way to the key it
/// sets (names chosen by the user, like stations, are never created).
const CREATABLE: &[&str] = &[
    "simulation",
    "metrics",
    "stop",
    "warmup",
    "precision",
    "initial",
    "numa",
    "spin",
    "speed",
    "usl",
    "service",
    "rtt",
    "think",
    "arrival",
    "service_by_class",
];

/// An override of one member (`--set stations.instance[3].latch.x=1`),
/// applied to that member after the group is written out, so it wins over
/// the group's value whatever the order of the overrides.
pub(crate) struct MemberSet {
    pub group: String,
    pub index: usize,
    /// The path below the member: the member station's name, then its keys.
    pub rest: Vec<Segment>,
    pub value: Node,
    /// The override's number.
    pub ov: usize,
}

/// Whether `node` (a station entry) is a group: a table with `count` and
/// no `kind`.
pub(crate) fn is_group(node: &Node) -> bool {
    node.get("count").is_some() && node.get("kind").is_none()
}

/// Why an override could not be applied.
pub(crate) struct ApplyError {
    pub message: String,
    pub hint: Option<String>,
}

/// Applies one override to the tree and returns what went wrong. A path
/// with patterns is applied to each concrete path it stands for, in
/// sorted key order. The final key may be created if its parent table
/// exists (whether the key is allowed there is checked later, by the same
/// code that checks the file).
///
/// A path into one member of a station group (`stations.instance[3].x`)
/// is kept in `members`, to be applied when the group is written out.
pub(crate) fn apply(
    root: &mut Node,
    ov: &Override,
    index: usize,
    members: &mut Vec<MemberSet>,
) -> Vec<ApplyError> {
    let segs = match split_path(&ov.path) {
        Ok(segs) => segs,
        Err(m) => {
            return vec![ApplyError {
                message: format!("malformed key path {}: {m}", ov.path),
                hint: Some(
                    "a key path looks like stations.cpu.servers or stations.l.speed.table[1].rate"
                        .into(),
                ),
            }];
        }
    };
    let segs = resolve_aliases(root, segs);
    if let [first, group, rest @ ..] = segs.as_slice()
        && first.key == "stations"
        && group.indices.len() == 1
        && !group.pattern
        && !rest.is_empty()
        && root
            .get("stations")
            .and_then(|s| s.get(&group.key))
            .is_some_and(is_group)
    {
        members.push(MemberSet {
            group: group.key.clone(),
            index: group.indices[0],
            rest: rest.to_vec(),
            value: parse_override_value(&ov.value, index),
            ov: index,
        });
        return Vec::new();
    }
    let paths = match expand(root, &segs) {
        Ok(paths) => paths,
        Err(e) => return vec![e],
    };
    if let Some(rel) = crate::relative::Relative::parse(&ov.value) {
        return apply_relative(root, ov, &paths, rel, index);
    }
    let value = parse_override_value(&ov.value, index);
    paths
        .iter()
        .filter_map(|segs| apply_at(root, segs, value.clone(), index).err())
        .collect()
}

/// Applies a relative override (`*0.8`, `+10%`; see [`crate::relative`])
/// at each concrete path: the value there, changed.
fn apply_relative(
    root: &mut Node,
    ov: &Override,
    paths: &[Vec<Segment>],
    rel: Result<crate::relative::Relative, String>,
    index: usize,
) -> Vec<ApplyError> {
    let rel = match rel {
        Ok(r) => r,
        Err(message) => {
            return vec![ApplyError {
                message,
                hint: Some("a relative value looks like *0.8, /2, +10% or -10%".into()),
            }];
        }
    };
    let mut errors = Vec::new();
    for segs in paths {
        let full = join_path(segs);
        let mut node: Result<&Node, Unreached> = Ok(&*root);
        let mut walked = Vec::new();
        // Whether only the last key is missing from a table that exists:
        // a key left at its default, which has no number to change.
        let mut leaf_missing = false;
        for (i, seg) in segs.iter().enumerate() {
            if let Ok(n) = node {
                leaf_missing = i + 1 == segs.len()
                    && seg.indices.is_empty()
                    && n.table()
                        .is_some_and(|t| t.iter().all(|e| e.key != seg.key));
            }
            node = node.and_then(|n| step(n, seg, &walked));
            walked.push(seg.clone());
        }
        let new = match node {
            Ok(old) => relative_value(rel, old, &full, &ov.value, index),
            Err(_) if leaf_missing => {
                errors.push(ApplyError {
                    message: format!(
                        "unknown key path {full}; {full} is not written in the model, and a relative value changes a number the model gives"
                    ),
                    hint: Some(format!(
                        "for a key left at its default, give an absolute value: {} {full}=N", ov.flag
                    )),
                });
                continue;
            }
            Err((why, hint)) => {
                errors.push(ApplyError {
                    message: format!(
                        "unknown key path {full}; {why} (a relative value changes a number the model gives)"
                    ),
                    hint,
                });
                continue;
            }
        };
        match new {
            Ok(v) => errors.extend(apply_at(root, segs, v, index).err()),
            Err(message) => errors.push(ApplyError {
                message,
                hint: None,
            }),
        }
    }
    errors
}

/// The value of relative override `text` (`rel`) applied to `old`, the
/// node at `path`, tagged as set by override `index`.
fn relative_value(
    rel: crate::relative::Relative,
    old: &Node,
    path: &str,
    text: &str,
    index: usize,
) -> Result<Node, String> {
    use crate::relative::Number;
    let n = match old.v {
        V::Int(i) => Number::Int(i),
        V::Float(x) => Number::Float(x),
        ref other => {
            return Err(format!(
                "{path}={text} changes a number, but {path} is {}",
                other.describe()
            ));
        }
    };
    let v = match rel.change(n, path, text)? {
        Number::Int(i) => V::Int(i),
        Number::Float(x) => V::Float(x),
    };
    Ok(Node {
        v,
        origin: Origin::Set(index, None),
    })
}

/// Why a branch of a path with patterns reaches no node: what follows
/// "unknown key path PATH; " in the message, and a hint.
type Unreached = (String, Option<String>);

/// The node at `seg` (a key, then indices) under `node`, whose path is `walked`.
fn step<'n>(node: &'n Node, seg: &Segment, walked: &[Segment]) -> Result<&'n Node, Unreached> {
    let prefix = join_path(walked);
    let Some(table) = node.table() else {
        let what = node.v.type_name();
        return Err((format!("{prefix} is {what}, not a table"), None));
    };
    let Some(mut n) = table.iter().find(|e| e.key == seg.key).map(|e| &e.node) else {
        let expected = child_paths(node, &prefix);
        let here = child(&prefix, &seg.key);
        let hint = crate::did_you_mean(&here, &expected).map(|s| format!("did you mean {s}?"));
        let why = format!("{here} does not exist{}", expected_list(&expected));
        return Err((why, hint));
    };
    let mut path = walked.to_vec();
    path.push(Segment::named(seg.key.clone()));
    for &ix in &seg.indices {
        let here = join_path(&path);
        match &n.v {
            V::Array(items) if ix < items.len() => n = &items[ix],
            V::Array(items) => {
                let len = items.len();
                let s = if len == 1 { "" } else { "s" };
                let why = format!("{here} has {len} element{s}, so the index must be below {len}");
                return Err((why, None));
            }
            other => {
                let why = format!("{here} is {}, not an array", other.type_name());
                return Err((why, None));
            }
        }
        if let Some(last) = path.last_mut() {
            last.indices.push(ix);
        }
    }
    Ok(n)
}

/// The concrete paths that `segs` stands for: itself when it has no
/// pattern, else one per combination of matching keys, in sorted key order
/// (the first pattern varies slowest). A pattern only matches keys that
/// exist; a branch whose table lacks a later pattern's parent is dropped, and
/// a pattern that matches nothing on any branch is an error.
fn expand(root: &Node, segs: &[Segment]) -> Result<Vec<Vec<Segment>>, ApplyError> {
    if !segs.iter().any(|s| s.pattern) {
        return Ok(vec![segs.to_vec()]);
    }
    let full = join_path(segs);
    let mut branches: Vec<(Vec<Segment>, Result<&Node, Unreached>)> = vec![(Vec::new(), Ok(root))];
    for (si, seg) in segs.iter().enumerate() {
        if !seg.pattern {
            for (path, node) in &mut branches {
                if let Ok(n) = node {
                    *node = step(n, seg, path);
                }
                path.push(seg.clone());
            }
            continue;
        }
        let mut next = Vec::new();
        let mut keys_here = Vec::new();
        for (path, node) in &branches {
            let Ok(n) = *node else { continue };
            let Some(table) = n.table() else { continue };
            keys_here.extend(child_paths(n, &join_path(path)));
            let mut names: Vec<&str> = table
                .iter()
                .map(|e| e.key.as_str())
                .filter(|k| glob_match(&seg.key, k))
                .collect();
            names.sort_unstable();
            for name in names {
                let concrete = Segment {
                    key: name.to_string(),
                    indices: seg.indices.clone(),
                    pattern: false,
                };
                let reached = step(n, &concrete, path);
                let mut p = path.clone();
                p.push(concrete);
                next.push((p, reached));
            }
        }
        if next.is_empty() {
            let (why, hint) = if keys_here.is_empty() {
                // No branch reached a table here: say why the first did not.
                match &branches[0] {
                    (_, Err(unreached)) => unreached.clone(),
                    (path, Ok(n)) => {
                        let what = n.v.type_name();
                        (format!("{} is {what}, not a table", join_path(path)), None)
                    }
                }
            } else {
                let pattern = join_path(&segs[..=si]);
                // A long list (a model with dozens of stations) is cut
                // short: the first few keys show what the names look like.
                const SHOWN: usize = 12;
                let mut keys = keys_here
                    .iter()
                    .take(SHOWN)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ");
                if keys_here.len() > SHOWN {
                    keys.push_str(&format!(" and {} more", keys_here.len() - SHOWN));
                }
                let why =
                    format!("no key matches the pattern {pattern}; the keys there are {keys}");
                (why, None)
            };
            return Err(ApplyError {
                message: format!("unknown key path {full}; {why}"),
                hint,
            });
        }
        branches = next;
    }
    Ok(branches.into_iter().map(|(path, _)| path).collect())
}

/// The node at the plain keys `segs` (no indices), if it exists.
pub(crate) fn step_exists<'n>(root: &'n Node, segs: &[Segment]) -> Option<&'n Node> {
    segs.iter().try_fold(root, |n, s| n.get(&s.key))
}

/// Applies `value` at the concrete path `segs`.
pub(crate) fn apply_at(
    root: &mut Node,
    segs: &[Segment],
    value: Node,
    index: usize,
) -> Result<(), ApplyError> {
    let mut value = Some(value);
    let full = join_path(segs);
    let mut node = root;
    let mut walked: Vec<Segment> = Vec::new();
    let last = segs.len() - 1;
    for (si, seg) in segs.iter().enumerate() {
        let prefix = join_path(&walked);
        let Some(table) = node.table() else {
            return Err(ApplyError {
                message: format!(
                    "unknown key path {full}; {prefix} is {}, not a table",
                    node.v.type_name()
                ),
                hint: None,
            });
        };
        let mut pos = table.iter().position(|e| e.key == seg.key);
        let is_last = si == last && seg.indices.is_empty();
        if pos.is_none()
            && !is_last
            && seg.indices.is_empty()
            && CREATABLE.contains(&seg.key.as_str())
        {
            // A fixed-name table may be created on the way; the model reader
            // then checks it like any other.
            if let V::Table(entries) = &mut node.v {
                entries.push(Entry {
                    key: seg.key.clone(),
                    key_origin: Origin::Set(index, None),
                    node: Node {
                        v: V::Table(Vec::new()),
                        origin: Origin::Set(index, None),
                    },
                });
                pos = Some(entries.len() - 1);
            }
        }
        if pos.is_none() && !is_last {
            let expected = child_paths(node, &prefix);
            let here = child(&prefix, &seg.key);
            let hint = crate::did_you_mean(&here, &expected).map(|s| format!("did you mean {s}?"));
            return Err(ApplyError {
                message: format!(
                    "unknown key path {full}; {here} does not exist{}",
                    expected_list(&expected)
                ),
                hint,
            });
        }
        let V::Table(entries) = &mut node.v else {
            return Ok(());
        };
        if is_last {
            let mut v = value.take().unwrap_or(Node {
                v: V::Bool(false),
                origin: Origin::Set(index, None),
            });
            match pos {
                Some(p) => {
                    retag(&mut v, index, was_span(&entries[p].node.origin));
                    entries[p].node = v;
                }
                None => entries.push(Entry {
                    key: seg.key.clone(),
                    key_origin: Origin::Set(index, None),
                    node: v,
                }),
            }
            return Ok(());
        }
        let Some(p) = pos else { return Ok(()) };
        walked.push(Segment::named(seg.key.clone()));
        node = &mut entries[p].node;
        for (ii, &ix) in seg.indices.iter().enumerate() {
            let here = join_path(&walked);
            let len = match &node.v {
                V::Array(items) => items.len(),
                other => {
                    return Err(ApplyError {
                        message: format!(
                            "unknown key path {full}; {here} is {}, not an array",
                            other.type_name()
                        ),
                        hint: None,
                    });
                }
            };
            if ix >= len {
                return Err(ApplyError {
                    message: format!(
                        "unknown key path {full}; {here} has {len} element{}, so the index must be below {len}",
                        if len == 1 { "" } else { "s" },
                    ),
                    hint: None,
                });
            }
            let V::Array(items) = &mut node.v else {
                return Ok(());
            };
            if let Some(w) = walked.last_mut() {
                w.indices.push(ix);
            }
            if si == last && ii == seg.indices.len() - 1 {
                if let Some(mut v) = value.take() {
                    retag(&mut v, index, was_span(&items[ix].origin));
                    items[ix] = v;
                }
                return Ok(());
            }
            node = &mut items[ix];
        }
    }
    Ok(())
}

/// The origin of `node` for a message about its whole subtree: marked as
/// set by an override when any part of it was.
pub(crate) fn subtree_origin(node: &Node) -> Origin {
    fn first_set(n: &Node) -> Option<usize> {
        if let Origin::Set(i, _) = n.origin {
            return Some(i);
        }
        match &n.v {
            V::Table(t) => t.iter().find_map(|e| first_set(&e.node)),
            V::Array(a) => a.iter().find_map(first_set),
            _ => None,
        }
    }
    match (first_set(node), &node.origin) {
        (Some(i), Origin::File(span)) => Origin::Set(i, Some(span.clone())),
        _ => node.origin.clone(),
    }
}

fn was_span(o: &Origin) -> Option<Range<usize>> {
    match o {
        Origin::File(s) => Some(s.clone()),
        Origin::Set(_, w) => w.clone(),
    }
}

fn retag(n: &mut Node, index: usize, was: Option<Range<usize>>) {
    n.origin = Origin::Set(index, was);
}

pub(crate) fn expected_list(expected: &[String]) -> String {
    if expected.is_empty() {
        String::new()
    } else {
        format!("; expected one of: {}", expected.join(", "))
    }
}

/// `path.key`, quoting the key when needed.
pub(crate) fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        crate::quote_key(key)
    } else {
        format!("{path}.{}", crate::quote_key(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_patterns() {
        for (pattern, name, want) in [
            ("latch*", "latch07", true),
            ("latch*", "latch", true),
            ("latch*", "cpu07", false),
            ("*", "anything", true),
            ("*07", "latch07", true),
            ("*07", "latch17", false),
            ("cpu??", "cpu01", true),
            ("cpu??", "cpu1", false),
            ("cpu??", "cpu100", false),
            ("l*h*7", "latch07", true),
            ("l*h*7", "latch70", false),
            ("*a*a*", "banana", true),
            ("?", "", false),
            ("", "", true),
        ] {
            assert_eq!(glob_match(pattern, name), want, "{pattern} vs {name}");
        }
    }

    #[test]
    fn patterns_are_bare_keys_with_stars_or_question_marks() {
        let segs = split_path(r#"stations.latch*.spin."odd*key".x?[2]"#).unwrap();
        let flags: Vec<bool> = segs.iter().map(|s| s.pattern).collect();
        assert_eq!(flags, [false, true, false, false, true]);
        assert_eq!(segs[4].indices, [2]);
        // A pattern is shown as typed; a quoted key stays quoted.
        assert_eq!(join_path(&segs), r#"stations.latch*.spin."odd*key".x?[2]"#);
    }

    #[test]
    fn expansion_is_in_sorted_key_order() {
        let root = parse_document(
            "[stations.b2]\nkind = 1\n[stations.a1]\nkind = 1\n[stations.b1]\nkind = 1\n[stations.c]\nx = 1\n",
        )
        .unwrap();
        let paths = |p: &str| -> Vec<String> {
            let segs = split_path(p).unwrap();
            match expand(&root, &segs) {
                Ok(v) => v.iter().map(|s| join_path(s)).collect(),
                Err(e) => vec![e.message],
            }
        };
        assert_eq!(
            paths("stations.a?[0].kind"),
            ["stations.a1[0].kind"],
            "an index on a pattern applies to each match (and fails when applied)"
        );
        assert_eq!(
            paths("stations.??.kind"),
            ["stations.a1.kind", "stations.b1.kind", "stations.b2.kind"]
        );
        // Only the branches that have the table of a later pattern count.
        assert_eq!(
            paths("stations.*.k*"),
            ["stations.a1.kind", "stations.b1.kind", "stations.b2.kind"]
        );
        assert_eq!(
            paths("stations.*.x"),
            [
                "stations.a1.x",
                "stations.b1.x",
                "stations.b2.x",
                "stations.c.x"
            ]
        );
        assert_eq!(paths("*.c.x"), ["stations.c.x"]);
        assert_eq!(
            paths("stations.*.zz*"),
            [
                "unknown key path stations.*.zz*; no key matches the pattern stations.*.zz*; the keys there are stations.a1.kind, stations.b1.kind, stations.b2.kind, stations.c.x"
            ]
        );
    }
}
