//! The model format as data: every table's keys (name, shape, default, a
//! one-line doc) and one [`KindDescriptor`] per station kind. The reader
//! checks keys against these lists, `qsim schema` generates the JSON Schema
//! from them, and a test keeps the key tables of docs/model-format.md equal
//! to them, so a key is declared once.
//!
//! Adding a key to a kind is one [`Key`] entry in that kind's descriptor
//! (`build/stations/<kind>.rs`) plus the line of its reader that reads it;
//! adding a key to another table is one entry in `tables.rs`.

mod tables;

pub use tables::{
    CAPACITY_STEP, CLASS, CLIENT, DISTRIBUTION, FAMILIES, GROUP, REGION, ROUTE, ROUTE_PART,
    ROUTING, ROUTING_POLICY, SCHEDULE_STEP, SIMULATION, SPEED, SPEED_POINT, STATION_COMMON, TOP,
    USL, WORKLOAD,
};

/// The URL that names the model schema (`$id`). It stays the same while
/// the format stays compatible, so a model copied out of the repository
/// that names it still validates; a breaking change of the format gives it
/// a new version.
pub const SCHEMA_ID: &str = "https://example.invalid/qsim/schema/model-v1.json";

/// A bound of a number range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// No bound on this side.
    None,
    /// The value itself is allowed.
    Inclusive(f64),
    /// The value itself is not allowed.
    Exclusive(f64),
}

/// The shape of a key's value: what the schema checks and the docs' type.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    /// A whole number >= the bound.
    Count(u64),
    /// Any whole number.
    Integer,
    /// A number within bounds.
    Number(Bound, Bound),
    /// `true` or `false`.
    Boolean,
    /// Any string (a name).
    Text,
    /// One of these words.
    Words(&'static [&'static str]),
    /// An array of names.
    Names,
    /// An array of this shape with at least this many items.
    ArrayOf(&'static Shape, usize),
    /// A table of NAME = this shape.
    MapOf(&'static Shape),
    /// Any one of these shapes.
    OneOf(&'static [Shape]),
    /// A closed table of keys.
    Table(&'static TableShape),
    /// A shape defined once by name (`$defs`): `distribution`, `speed`,
    /// `route`, `routing`, `station`, `group`, and `station_or_group` (a
    /// table with `count` is a group, any other a station).
    Def(&'static str),
}

/// A closed table: only these keys, the `required` ones among them.
#[derive(Debug)]
pub struct TableShape {
    /// The keys, in the order messages list them.
    pub keys: &'static [Key],
    /// Keys that must be present.
    pub required: &'static [&'static str],
}

impl TableShape {
    /// The key names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.keys.iter().map(|k| k.name).collect()
    }
}

/// One key of a table.
#[derive(Debug)]
pub struct Key {
    /// The key as written in TOML.
    pub name: &'static str,
    /// The shape of its value.
    pub shape: Shape,
    /// Its default as the docs write it, `None` when it has none (absent
    /// means off, or the key is required).
    pub default: Option<&'static str>,
    /// What it means, one line.
    pub doc: &'static str,
}

/// Shorthand for a key in a `const` table.
pub(crate) const fn key(
    name: &'static str,
    shape: Shape,
    default: Option<&'static str>,
    doc: &'static str,
) -> Key {
    Key {
        name,
        shape,
        default,
        doc,
    }
}

/// Which of the common service keys a kind takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServiceKeys {
    /// `service`, `service_by_class`, `speed`.
    Service,
    /// As [`ServiceKeys::Service`], with `rtt` as another name of `service`.
    ServiceOrRtt,
    /// None: the kind takes no time of its own (fork, join).
    None,
}

/// What a station kind supports, as the docs and `qsim schema` describe it.
/// The kernel decides each of these in one exhaustive `match` on
/// `StationKind`; a test checks that these flags agree with it.
#[derive(Clone, Copy, Debug)]
pub struct Supports {
    /// `capacity` and `when_full`.
    pub capacity: bool,
    /// A `speed` curve (contention-dependent rate).
    pub speed_curve: bool,
    /// What `qsim whatif --speedup f` does to it (`StationSpec::sped_up`).
    pub speedup: &'static str,
    /// Exact answers from qsim-theory (product form, exact MVA) when every
    /// station of the model has them.
    pub exact_theory: bool,
    /// What it costs in the run budget (`budget.rs`), one line.
    pub budget: &'static str,
    /// Per-station tails (`station_tails`: percentiles, P(wait > 0), P(n >= k)).
    pub tails: bool,
    /// Overload keys (`patience`, balking, shedding).
    pub overload: bool,
}

/// One station kind: everything the layers above the kernel need to know.
/// The list of kinds is `qsim_model::station_kinds()` (registered, with
/// each kind's reader, in `build/stations/mod.rs`).
pub struct KindDescriptor {
    /// The `kind = "..."` word.
    pub name: &'static str,
    /// What the kind models, one line.
    pub doc: &'static str,
    /// The common service keys it takes.
    pub service: ServiceKeys,
    /// Its own keys, in the order messages list them.
    pub keys: &'static [Key],
    /// What it supports.
    pub supports: Supports,
    /// The station metrics only this kind reports (names from
    /// `qsim_kernel::names`), beyond every station's throughput,
    /// utilization, mean jobs, response and wait times.
    pub metrics: &'static [&'static str],
}

impl KindDescriptor {
    /// The common keys this kind takes, `kind` first.
    pub fn common_keys(&self) -> Vec<&'static Key> {
        STATION_COMMON
            .iter()
            .filter(|k| match (k.name, self.service) {
                ("kind", _) => true,
                (_, ServiceKeys::None) => false,
                ("rtt", s) => s == ServiceKeys::ServiceOrRtt,
                _ => true,
            })
            .collect()
    }

    /// Every key this kind accepts (common ones first), in the order
    /// messages list them.
    pub fn key_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&str> = self.common_keys().iter().map(|k| k.name).collect();
        names.extend(self.keys.iter().map(|k| k.name));
        names
    }

    /// Whether it takes a service time.
    pub fn takes_service(&self) -> bool {
        self.service != ServiceKeys::None
    }
}

#[cfg(test)]
mod tests;
