//! `qsim schema`: a JSON Schema (draft 2020-12) of the model format, for
//! editors that complete and check TOML against a schema (taplo, Even Better
//! TOML: `#:schema ../docs/qsim-model.schema.json` on a model's first line).
//!
//! Generated from the format's declaration in `qsim_model::format` (the
//! same key lists the reader checks): every table, and one `if`/`then` per
//! station kind so that an editor names the key a kind does not take. It
//! checks shapes (keys, types, enumerations, simple bounds); `qsim check`
//! stays the authority on meaning (names that must exist, probabilities
//! that sum to 1, ...). CI validates every model in models/ against it with
//! an independent validator.

use anyhow::Result;
use clap::Args;
use qsim_model::format::{self, Bound, Key, KindDescriptor, Shape, TableShape};
use serde_json::{Map, Value, json};
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `qsim schema`.
#[derive(Args, Debug)]
pub struct SchemaArgs {}

/// Prints the schema.
pub fn schema(_args: &SchemaArgs) -> Result<ExitCode> {
    let mut text = serde_json::to_string_pretty(&model_schema())?;
    text.push('\n');
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// A bound as a JSON number: whole numbers print without a fraction.
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// The schema of one value shape.
fn shape(s: &Shape) -> Value {
    match *s {
        Shape::Count(min) => json!({"type": "integer", "minimum": min}),
        Shape::Integer => json!({"type": "integer"}),
        Shape::Number(lo, hi) => {
            let mut v = json!({"type": "number"});
            match lo {
                Bound::None => {}
                Bound::Inclusive(x) => v["minimum"] = number(x),
                Bound::Exclusive(x) => v["exclusiveMinimum"] = number(x),
            }
            match hi {
                Bound::None => {}
                Bound::Inclusive(x) => v["maximum"] = number(x),
                Bound::Exclusive(x) => v["exclusiveMaximum"] = number(x),
            }
            v
        }
        Shape::Boolean => json!({"type": "boolean"}),
        Shape::Text => json!({"type": "string"}),
        Shape::Words(words) => json!({"enum": words}),
        Shape::Names => json!({"type": "array", "items": {"type": "string"}}),
        Shape::ArrayOf(item, min) => {
            let mut v = json!({"type": "array", "items": shape(item)});
            if min > 0 {
                v["minItems"] = json!(min);
            }
            v
        }
        Shape::MapOf(value) => json!({"type": "object", "additionalProperties": shape(value)}),
        Shape::OneOf(shapes) => json!({"oneOf": shapes.iter().map(shape).collect::<Vec<_>>()}),
        Shape::Table(t) => table(t.keys.iter(), t.required),
        Shape::Def(name) => json!({"$ref": format!("#/$defs/{name}")}),
    }
}

/// The schema of a key, with its doc (and default) as the description.
fn property(k: &Key) -> Value {
    let mut v = shape(&k.shape);
    let doc = match k.default {
        Some(d) => format!("{} (default {d})", k.doc),
        None => k.doc.to_string(),
    };
    if let Value::Object(m) = &mut v {
        m.insert("description".into(), doc.into());
    }
    v
}

/// A closed table: only the keys listed, `required` among them.
fn table<'k>(keys: impl Iterator<Item = &'k Key>, required: &[&str]) -> Value {
    let props: Map<String, Value> = keys.map(|k| (k.name.to_string(), property(k))).collect();
    let mut t = json!({"type": "object", "properties": props, "additionalProperties": false});
    if !required.is_empty() {
        t["required"] = json!(required);
    }
    t
}

fn closed(t: &TableShape) -> Value {
    table(t.keys.iter(), t.required)
}

/// A station: every key of every kind (so an editor completes them), and
/// per kind an `if kind = K then only K's keys`, so that a key the kind
/// does not take is named as such.
fn station() -> Value {
    let kinds = qsim_model::station_kinds();
    let mut props = Map::new();
    for k in format::STATION_COMMON
        .iter()
        .chain(kinds.iter().flat_map(|d| d.keys))
    {
        if props.contains_key(k.name) {
            continue;
        }
        let mut v = property(k);
        if k.name == "kind" {
            v["enum"] = json!(qsim_model::station_kind_names());
        } else {
            let users: Vec<&str> = kinds
                .iter()
                .filter(|d| d.keys.iter().any(|o| o.name == k.name))
                .map(|d| d.name)
                .collect();
            if !users.is_empty() {
                let doc = v["description"].as_str().unwrap_or_default().to_string();
                v["description"] = json!(format!("{doc} ({})", users.join(", ")));
            }
        }
        props.insert(k.name.into(), v);
    }
    let rules: Vec<Value> = kinds.iter().map(|d| kind_rule(d)).collect();
    json!({
        "type": "object",
        "properties": props,
        "required": ["kind"],
        "additionalProperties": false,
        "allOf": rules,
    })
}

/// `if kind = K then` only the keys of K.
fn kind_rule(d: &KindDescriptor) -> Value {
    let allowed: Map<String, Value> = d
        .key_names()
        .into_iter()
        .map(|k| (k.to_string(), json!(true)))
        .collect();
    json!({
        "if": {"properties": {"kind": {"const": d.name}}, "required": ["kind"]},
        "then": {
            "description": format!("a {} station: {}", d.name, d.doc),
            "properties": allowed,
            "additionalProperties": false,
        },
    })
}

/// The schema of a model file.
pub fn model_schema() -> Value {
    let group = json!({
        "type": "object",
        "description": "a station group: count members, each a copy of the member stations",
        "properties": closed(&format::GROUP)["properties"].clone(),
        "required": format::GROUP.required,
        "additionalProperties": {"$ref": "#/$defs/station"},
    });
    let mut out = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format::SCHEMA_ID,
        "title": "qsim model",
        "description": "A qsim queueing-network model (TOML); see docs/model-format.md. `qsim check` validates meaning as well as shape.",
        "not": {"required": ["workload", "classes"]},
        "$defs": {
            "distribution": closed(&format::DISTRIBUTION),
            "speed": closed(&format::SPEED),
            "routing": shape(&format::ROUTING),
            "station": station(),
            "route": shape(&format::ROUTE),
            "group": group,
            // A table with `count` is a group (as the reader decides), so
            // a wrong key is reported against the one schema that applies.
            "station_or_group": {
                "if": {"type": "object", "required": ["count"]},
                "then": {"$ref": "#/$defs/group"},
                "else": {"$ref": "#/$defs/station"},
            },
        },
    });
    let root = closed(&format::TOP);
    let root = root.as_object().expect("an object").clone();
    out.as_object_mut().expect("an object").extend(root);
    out
}
