//! Routing policies: a routing row that chooses among its stations by the
//! state of the network (round robin, join the shortest queue, power of d
//! choices) instead of by a random draw. The row's probabilities are then
//! the stations' weights. Policies are attached to a checked network by
//! [`Network::with_policies`](super::Network::with_policies); rows without
//! one stay Markov.

use super::{
    Check, ClassId, Field, Network, NetworkError, Routing, Scope, StationId, Target, View,
};

/// How a routing row picks one of its stations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoutingPolicy {
    /// In turn, each station as often as its weight says (smooth weighted
    /// round robin: with equal weights, a plain cycle over the row in the
    /// order given). The turn is kept per class and row.
    RoundRobin,
    /// The station with the fewest jobs present (queued and in service)
    /// per unit of weight; ties broken at random.
    ShortestQueue,
    /// `d` distinct stations of the row sampled at random (in proportion
    /// to their weights, without replacement), then the one of them with
    /// the fewest jobs present; ties broken at random.
    PowerOfD {
        /// Stations sampled, at least 2 and at most the row's stations.
        d: u32,
    },
}

impl RoutingPolicy {
    /// The model format's name of the policy.
    pub fn name(self) -> &'static str {
        match self {
            RoutingPolicy::RoundRobin => "round_robin",
            RoutingPolicy::ShortestQueue => "shortest_queue",
            RoutingPolicy::PowerOfD { .. } => "power_of_d",
        }
    }

    /// Whether the choice depends on the jobs present at the row's
    /// stations (so the stations' visit ratios are not known in advance,
    /// only their sum).
    pub fn reads_queues(self) -> bool {
        match self {
            RoutingPolicy::RoundRobin => false,
            RoutingPolicy::ShortestQueue | RoutingPolicy::PowerOfD { .. } => true,
        }
    }
}

/// A policy on one routing row of one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowPolicy {
    /// The class.
    pub class: ClassId,
    /// The row: `None` for the class's `source` row, `Some(s)` for the
    /// row taken on leaving station `s`.
    pub row: Option<StationId>,
    /// How the row picks.
    pub policy: RoutingPolicy,
}

/// The rules of row policies on `network`: a class with a routing table,
/// a row it has, at most one policy per row, a row of stations only (no
/// `sink`, no class switching) and `d` within the row.
pub(super) fn check(network: &Network, policies: &[RowPolicy]) -> Vec<NetworkError> {
    let spec = network.spec();
    let view = View::of(spec);
    let mut c = Check::new(&view, Scope::Network);
    for (i, p) in policies.iter().enumerate() {
        let Some(class) = spec.classes.get(p.class) else {
            c.error(
                &[Field::Key("routing_policy")],
                format!("no class with index {}", p.class),
            );
            continue;
        };
        c.scope = Scope::Class(p.class);
        let at = [Field::Key("routing_policy"), Field::From(p.row)];
        if policies[..i]
            .iter()
            .any(|q| q.class == p.class && q.row == p.row)
        {
            c.error(&at, "a row takes one policy; found a second");
            continue;
        }
        let Routing::Probabilistic { entry, from } = &class.routing else {
            c.error(
                &at,
                "a fixed route has no choice to make; a policy needs a routing table",
            );
            continue;
        };
        let row = match p.row {
            None => Some(entry),
            Some(s) => from.get(s).filter(|r| !r.is_empty()),
        };
        let Some(row) = row else {
            c.error(&at, "the class's routing has no such row");
            continue;
        };
        check_row(&mut c, &at, p.policy, row);
    }
    c.out
}

fn check_row(c: &mut Check<'_>, at: &[Field], policy: RoutingPolicy, row: &[(Target, f64)]) {
    let mut ok = true;
    for &(t, _) in row {
        let why = match t {
            Target::Station(_) => continue,
            Target::Exit => "`sink` is not a station with a queue to compare",
            Target::Switch { .. } => "a switching branch changes the job's class",
        };
        ok = false;
        c.error(
            at,
            format!(
                "a {} row chooses among stations, and {why}; move that branch to a row without a policy",
                policy.name()
            ),
        );
    }
    if let RoutingPolicy::PowerOfD { d } = policy {
        let stations = row.iter().filter(|b| b.1 > 0.0).count();
        if ok && (d < 2 || d as usize > stations) {
            let mut at = at.to_vec();
            at.push(Field::Key("d"));
            c.error(
                &at,
                format!(
                    "expected d between 2 and the row's {stations} stations of positive weight, found {d}"
                ),
            );
        }
    }
}

impl Network {
    /// The stations of each row whose policy reads the queues
    /// ([`RoutingPolicy::reads_queues`]), one list per such row: such a
    /// row moves its jobs toward the stations with room, so it overloads
    /// only when it overloads them together.
    pub fn pooled_rows(&self) -> Vec<Vec<StationId>> {
        let spec = self.spec();
        self.policies()
            .iter()
            .filter(|p| p.policy.reads_queues())
            .filter_map(|p| {
                let Routing::Probabilistic { entry, from } = &spec.classes.get(p.class)?.routing
                else {
                    return None;
                };
                let row = match p.row {
                    None => entry,
                    Some(s) => from.get(s)?,
                };
                Some(
                    row.iter()
                        .filter_map(|&(t, w)| t.station().filter(|_| w > 0.0))
                        .collect(),
                )
            })
            .collect()
    }
}
