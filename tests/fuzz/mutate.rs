//! Mutations of a model's TOML text and of its `--set` overrides.
//!
//! Every operation works on the text, not on a parsed model, so the mutated
//! file can be anything a user could write (including invalid TOML) and the
//! harness does not depend on qsim's internal types. Indices chosen by the
//! generator are taken modulo the number of sites, so any index is valid for
//! any model and proptest can shrink them towards 0.

use proptest::prelude::*;

/// Edge values for numbers: zero, signs, tiny and huge magnitudes, values
/// that stop being exact or overflow in 32 and 64 bits, counts that would
/// need unbounded memory, and words TOML reads as non-finite floats.
pub const EDGE_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "0.0",
    "-0.0",
    "1e-300",
    "1e300",
    "1e-9",
    "nan",
    "inf",
    "-inf",
    "2",
    "65536",
    "1000000",
    "1000000000",
    "2147483647",
    "4294967295",
    "4294967296",
    "9007199254740992",
    "18446744073709551615",
    "-9223372036854775808",
    "0.5",
];

/// Replacement values of another type than the one usually found.
pub const SWAPPED_VALUES: &[&str] = &[
    "\"text\"",
    "true",
    "[]",
    "{}",
    "[1, 2]",
    "{ n = 1 }",
    "1.5",
    "-7",
    "\"none\"",
    "\"\"",
];

/// Distributions at the edges of what is valid: zero-time steps, endless or
/// unreadable sample files, extreme parameters, unknown names.
pub const EDGE_DISTS: &[&str] = &[
    r#"{ dist = "deterministic", value = 0 }"#,
    r#"{ dist = "empirical", file = "/dev/zero" }"#,
    r#"{ dist = "empirical", file = "/dev/urandom" }"#,
    r#"{ dist = "empirical", file = "/dev/null" }"#,
    r#"{ dist = "empirical", file = "/" }"#,
    r#"{ dist = "empirical", file = "missing.csv" }"#,
    r#"{ dist = "empirical", samples = [] }"#,
    r#"{ dist = "empirical", samples = [0, 0] }"#,
    r#"{ dist = "empirical", samples = [-1, 1e300] }"#,
    r#"{ dist = "exponential", mean = 1e-300 }"#,
    r#"{ dist = "exponential", mean = 1e300 }"#,
    r#"{ dist = "exponential", rate_per_s = 1e300 }"#,
    r#"{ dist = "uniform", min = 5, max = 1 }"#,
    r#"{ dist = "uniform", min = 0, max = 0 }"#,
    r#"{ dist = "uniform", mean = 1, scv = 1e300 }"#,
    r#"{ dist = "erlang", k = 4294967295, mean = 1 }"#,
    r#"{ dist = "erlang", k = 0, mean = 1 }"#,
    r#"{ dist = "erlang", mean = 1, scv = 1e-300 }"#,
    r#"{ dist = "hyperexponential", mean = 1, scv = 1e300 }"#,
    r#"{ dist = "hyperexponential", p = 1, mean1 = 0, mean2 = 1 }"#,
    r#"{ dist = "lognormal", mu = 700, sigma = 1000 }"#,
    r#"{ dist = "lognormal", mean = 1, scv = 1e300 }"#,
    r#"{ dist = "gamma", shape = 1e-300, scale = 1 }"#,
    r#"{ dist = "gamma", mean = 1e-300, scv = 1e300 }"#,
    r#"{ dist = "nope", mean = 1 }"#,
    "{ }",
];

/// Strings put in place of a string value: empty, control and non-ASCII
/// characters, a long name, paths to endless or special files, patterns.
const GARBLED_STRINGS: &[&str] = &[
    "",
    "x",
    "\\u0000",
    "ℵ∞",
    "/dev/zero",
    "..",
    "*",
    "none",
    "fcfs",
    "ps",
];

/// Bytes written over, or inserted into, the text by a byte flip: TOML
/// punctuation, digits, and bytes that are not UTF-8.
const FLIP_BYTES: &[u8] = b"[]={}\"\n,.#-09 \xff\x00";

/// One change to a model's text.
#[derive(Debug, Clone)]
pub enum Mutation {
    /// The `site`-th number literal becomes `EDGE_NUMBERS[edge]`.
    Number { site: usize, edge: usize },
    /// The `site`-th `key = value` line is deleted.
    DeleteKey { site: usize },
    /// The `site`-th `[table]` section is written twice.
    DuplicateTable { site: usize },
    /// The value of the `site`-th `key = value` line becomes `SWAPPED_VALUES[kind]`.
    SwapType { site: usize, kind: usize },
    /// The `site`-th string literal becomes `GARBLED_STRINGS[kind]`, or a
    /// long run of letters for an index past that list.
    Garble { site: usize, kind: usize },
    /// The `site`-th distribution becomes `EDGE_DISTS[kind]`.
    Dist { site: usize, kind: usize },
    /// Every distribution becomes `EDGE_DISTS[kind]` (index 0 gives a
    /// model in which nothing takes time).
    AllDists { kind: usize },
    /// A byte is replaced (`op` 0), inserted before (`op` 1) or deleted (`op` 2).
    Byte { pos: usize, op: u8, byte: usize },
}

/// One `--set` override on an existing key of the model.
#[derive(Debug, Clone)]
pub enum SetOverride {
    /// The `site`-th numeric key path gets `EDGE_NUMBERS[edge]`.
    Number { site: usize, edge: usize },
    /// The `site`-th distribution's key path gets `EDGE_DISTS[kind]`.
    Dist { site: usize, kind: usize },
}

/// Proptest strategy for one text mutation (weights favour the changes that
/// keep the file valid TOML, which reach deeper than a syntax error).
pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        6 => (any::<usize>(), 0..EDGE_NUMBERS.len()).prop_map(|(site, edge)| Mutation::Number { site, edge }),
        2 => any::<usize>().prop_map(|site| Mutation::DeleteKey { site }),
        1 => any::<usize>().prop_map(|site| Mutation::DuplicateTable { site }),
        2 => (any::<usize>(), 0..SWAPPED_VALUES.len()).prop_map(|(site, kind)| Mutation::SwapType { site, kind }),
        2 => (any::<usize>(), 0..GARBLED_STRINGS.len() + 1).prop_map(|(site, kind)| Mutation::Garble { site, kind }),
        3 => (any::<usize>(), 0..EDGE_DISTS.len()).prop_map(|(site, kind)| Mutation::Dist { site, kind }),
        1 => (0..EDGE_DISTS.len()).prop_map(|kind| Mutation::AllDists { kind }),
        1 => (any::<usize>(), 0..3u8, 0..FLIP_BYTES.len()).prop_map(|(pos, op, byte)| Mutation::Byte { pos, op, byte }),
    ]
}

/// Proptest strategy for one `--set` override.
pub fn set_override() -> impl Strategy<Value = SetOverride> {
    prop_oneof![
        4 => (any::<usize>(), 0..EDGE_NUMBERS.len()).prop_map(|(site, edge)| SetOverride::Number { site, edge }),
        1 => (any::<usize>(), 0..EDGE_DISTS.len()).prop_map(|(site, kind)| SetOverride::Dist { site, kind }),
    ]
}

/// Applies `mutations` in order to `text`; byte flips come last because
/// they may leave text that is not UTF-8.
pub fn apply(text: &str, mutations: &[Mutation]) -> Vec<u8> {
    let mut text = text.to_string();
    let mut flips = Vec::new();
    for m in mutations {
        match *m {
            Mutation::Number { site, edge } => {
                let spans = number_spans(&text);
                replace_site(&mut text, &spans, site, EDGE_NUMBERS[edge])
            }
            Mutation::DeleteKey { site } => {
                let lines = key_lines(&text);
                if !lines.is_empty() {
                    let (start, end) = lines[site % lines.len()];
                    text.replace_range(start..end, "");
                }
            }
            Mutation::DuplicateTable { site } => {
                let sections = table_sections(&text);
                if !sections.is_empty() {
                    let (start, end) = sections[site % sections.len()];
                    let mut copy = text[start..end].to_string();
                    if !copy.ends_with('\n') {
                        copy.push('\n');
                    }
                    text.insert_str(end, &copy);
                }
            }
            Mutation::SwapType { site, kind } => {
                let values: Vec<_> = key_lines(&text)
                    .into_iter()
                    .filter_map(|(start, end)| {
                        let eq = text[start..end].find('=')? + start + 1;
                        Some((eq, end - usize::from(text[..end].ends_with('\n'))))
                    })
                    .collect();
                replace_site(
                    &mut text,
                    &values,
                    site,
                    &format!(" {}", SWAPPED_VALUES[kind]),
                );
            }
            Mutation::Garble { site, kind } => {
                let long;
                let new = match GARBLED_STRINGS.get(kind) {
                    Some(s) => *s,
                    None => {
                        long = "q".repeat(100_000);
                        &long
                    }
                };
                let inner: Vec<_> = string_spans(&text)
                    .into_iter()
                    .map(|(s, e)| (s + 1, e - 1))
                    .collect();
                replace_site(&mut text, &inner, site, new);
            }
            Mutation::Dist { site, kind } => {
                let spans = dist_spans(&text);
                replace_site(&mut text, &spans, site, EDGE_DISTS[kind])
            }
            Mutation::AllDists { kind } => {
                for &(start, end) in dist_spans(&text).iter().rev() {
                    text.replace_range(start..end, EDGE_DISTS[kind]);
                }
            }
            Mutation::Byte { pos, op, byte } => flips.push((pos, op, FLIP_BYTES[byte])),
        }
    }
    let mut bytes = text.into_bytes();
    for (pos, op, byte) in flips {
        if bytes.is_empty() {
            bytes.push(byte);
            continue;
        }
        let at = pos % bytes.len();
        match op {
            0 => bytes[at] = byte,
            1 => bytes.insert(at, byte),
            _ => {
                bytes.remove(at);
            }
        }
    }
    bytes
}

/// The `--set PATH=VALUE` arguments for `sets`, given the model's original text.
pub fn set_args(text: &str, sets: &[SetOverride]) -> Vec<String> {
    let (numbers, dists) = key_paths(text);
    sets.iter()
        .filter_map(|s| match *s {
            SetOverride::Number { site, edge } if !numbers.is_empty() => Some(format!(
                "{}={}",
                numbers[site % numbers.len()],
                EDGE_NUMBERS[edge]
            )),
            SetOverride::Dist { site, kind } if !dists.is_empty() => Some(format!(
                "{}={}",
                dists[site % dists.len()],
                EDGE_DISTS[kind]
            )),
            _ => None,
        })
        .collect()
}

/// Key paths (in `--set` syntax) of every number and every distribution
/// table in the model; empty when the text is not valid TOML.
fn key_paths(text: &str) -> (Vec<String>, Vec<String>) {
    fn walk(v: &toml::Value, path: String, numbers: &mut Vec<String>, dists: &mut Vec<String>) {
        match v {
            toml::Value::Integer(_) | toml::Value::Float(_) => numbers.push(path),
            toml::Value::Table(t) => {
                if t.contains_key("dist") {
                    dists.push(path.clone());
                }
                for (k, v) in t {
                    let key = if k
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                    {
                        k.clone()
                    } else {
                        format!("{k:?}")
                    };
                    let p = if path.is_empty() {
                        key
                    } else {
                        format!("{path}.{key}")
                    };
                    walk(v, p, numbers, dists);
                }
            }
            toml::Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    walk(v, format!("{path}[{i}]"), numbers, dists);
                }
            }
            _ => {}
        }
    }
    let (mut numbers, mut dists) = (Vec::new(), Vec::new());
    if let Ok(t) = text.parse::<toml::Table>() {
        walk(
            &toml::Value::Table(t),
            String::new(),
            &mut numbers,
            &mut dists,
        );
    }
    (numbers, dists)
}

fn replace_site(text: &mut String, spans: &[(usize, usize)], site: usize, new: &str) {
    if !spans.is_empty() {
        let (start, end) = spans[site % spans.len()];
        text.replace_range(start..end, new);
    }
}

/// Byte ranges of the text outside strings and comments, as a mask.
fn code_mask(text: &str) -> Vec<bool> {
    let b = text.as_bytes();
    let mut mask = vec![true; b.len()];
    let (mut in_str, mut in_comment) = (false, false);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if in_comment {
            mask[i] = false;
            in_comment = c != b'\n';
        } else if in_str {
            mask[i] = false;
            if c == b'\\' && i + 1 < b.len() {
                mask[i + 1] = false;
                i += 1;
            } else if c == b'"' || c == b'\n' {
                in_str = false;
            }
        } else if c == b'#' {
            mask[i] = false;
            in_comment = true;
        } else if c == b'"' {
            mask[i] = false;
            in_str = true;
        }
        i += 1;
    }
    mask
}

/// Spans of number literals (not digits inside keys such as `node1`).
fn number_spans(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mask = code_mask(text);
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'.';
    let mut spans = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = mask[i]
            && (b[i].is_ascii_digit()
                || ((b[i] == b'-' || b[i] == b'+')
                    && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
            && (i == 0 || !(word(b[i - 1]) || b[i - 1] == b'-'));
        if starts {
            let mut j = i + 1;
            while j < b.len() && mask[j] && (word(b[j]) || b[j] == b'-' || b[j] == b'+') {
                j += 1;
            }
            spans.push((i, j));
            i = j;
        } else {
            i += 1;
        }
    }
    spans
}

/// Spans of basic string literals, quotes included.
fn string_spans(text: &str) -> Vec<(usize, usize)> {
    let b = text.as_bytes();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' && b[j] != b'\n' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                if j < b.len() && b[j] == b'"' {
                    spans.push((i, j + 1));
                }
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    spans
}

/// Spans (with the newline) of lines that start with `key =`.
fn key_lines(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        let key_end = t.find('=');
        let is_key = key_end.is_some_and(|e| {
            e > 0
                && t[..e]
                    .trim_end()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.\" ".contains(c))
        });
        if is_key && !t.starts_with('#') && !t.starts_with('[') {
            spans.push((start, start + line.len()));
        }
        start += line.len();
    }
    spans
}

/// Spans of `[table]` sections: a header line and the lines up to the next.
fn table_sections(text: &str) -> Vec<(usize, usize)> {
    let mut headers = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with('[') {
            headers.push(start);
        }
        start += line.len();
    }
    let mut spans = Vec::new();
    for (i, &h) in headers.iter().enumerate() {
        spans.push((h, headers.get(i + 1).copied().unwrap_or(text.len())));
    }
    spans
}

/// Spans of inline tables whose first key is `dist`.
fn dist_spans(text: &str) -> Vec<(usize, usize)> {
    let mask = code_mask(text);
    let b = text.as_bytes();
    let mut spans = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        if c != b'{' || !mask[i] {
            continue;
        }
        if !text[i + 1..].trim_start().starts_with("dist") {
            continue;
        }
        let mut depth = 0;
        for (j, &d) in b.iter().enumerate().skip(i) {
            if !mask[j] {
                continue;
            }
            match d {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        spans.push((i, j + 1));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODEL: &str = "# rate 3\n[stations.node1]\nkind = \"queue\" # q\nservers = 2\n\
                         service = { dist = \"exponential\", mean = 0.5 }\nspeed = [-1, 2e3]\n";

    #[test]
    fn sites_skip_comments_keys_and_strings() {
        let numbers: Vec<_> = number_spans(MODEL)
            .iter()
            .map(|&(s, e)| &MODEL[s..e])
            .collect();
        assert_eq!(numbers, ["2", "0.5", "-1", "2e3"]);
        let strings: Vec<_> = string_spans(MODEL)
            .iter()
            .map(|&(s, e)| &MODEL[s..e])
            .collect();
        assert_eq!(strings, ["\"queue\"", "\"exponential\""]);
        assert_eq!(dist_spans(MODEL).len(), 1);
        assert_eq!(key_lines(MODEL).len(), 4);
        assert_eq!(table_sections(MODEL).len(), 1);
    }

    #[test]
    fn overrides_name_existing_paths() {
        let sets = [
            SetOverride::Number { site: 1, edge: 0 },
            SetOverride::Dist { site: 0, kind: 0 },
        ];
        let args = set_args(MODEL, &sets);
        assert_eq!(args[0], "stations.node1.service.mean=0");
        assert!(args[1].starts_with("stations.node1.service={ dist = \"deterministic\""));
    }
}
