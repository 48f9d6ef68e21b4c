//! Station groups (`count = N`) and fixed routes with `repeat`: names,
//! overrides, located errors and size refusals.

use super::{check, load};
use qsim_kernel::{Routing, StationKind};

const GROUP: &str = r#"[workload]
type = "closed"
population = 4

[workload.routing]
source = { split = 1.0 }
gather = { sink = 1.0 }
"db[i].cpu" = { "db[i].disk" = 0.5, gather = 0.5 }
"db[i].disk" = { "db[i].cpu" = 1.0 }

[stations.split]
kind = "fork"
fan_out = 3
to = ["db[i].cpu"]
join = "gather"

[stations.gather]
kind = "join"

[stations.db]
count = 3

[stations.db.cpu]
kind = "queue"
servers = 2
service = { dist = "exponential", mean = 0.001 }

[stations.db.disk]
kind = "queue"
service = { dist = "exponential", mean = 0.004 }
"#;

fn servers(m: &qsim_model::Model) -> Vec<u32> {
    m.network
        .spec()
        .stations
        .iter()
        .filter_map(|s| match s.kind {
            StationKind::Queue { servers, .. } => Some(servers),
            _ => None,
        })
        .collect()
}

#[test]
fn a_group_is_written_out_as_named_members_with_rows_and_targets() {
    let m = load(GROUP, &[]);
    let spec = m.network.spec();
    let names: Vec<&str> = spec.stations.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "split",
            "gather",
            "db[0].cpu",
            "db[0].disk",
            "db[1].cpu",
            "db[1].disk",
            "db[2].cpu",
            "db[2].disk"
        ]
    );
    let StationKind::Fork(f) = &spec.stations[0].kind else {
        panic!("split is a fork")
    };
    assert_eq!(f.targets, [(2, 1.0), (4, 1.0), (6, 1.0)]);
    let Routing::Probabilistic { from, .. } = &spec.classes[0].routing else {
        panic!("a routing table")
    };
    // db[1].cpu's row names db[1].disk, not another member's.
    assert_eq!(
        from[4],
        [
            (qsim_kernel::Target::Station(5), 0.5),
            (qsim_kernel::Target::Station(1), 0.5)
        ]
    );
}

#[test]
fn group_and_member_overrides() {
    assert_eq!(servers(&load(GROUP, &[])), [2, 1, 2, 1, 2, 1]);
    let m = load(GROUP, &["stations.db.cpu.servers=4"]);
    assert_eq!(servers(&m), [4, 1, 4, 1, 4, 1]);
    // The member's value wins whatever the order of the overrides.
    for order in [
        [
            "stations.db[2].disk.servers=3",
            "stations.db.disk.servers=2",
        ],
        [
            "stations.db.disk.servers=2",
            "stations.db[2].disk.servers=3",
        ],
    ] {
        assert_eq!(servers(&load(GROUP, &order)), [2, 2, 2, 2, 2, 3]);
    }
    // A region over every member's disk.
    let m = load(
        &format!("{GROUP}\n[regions.disks]\nstations = [\"db[i].disk\"]\nlimit = 2\n"),
        &[],
    );
    assert_eq!(m.network.spec().regions[0].stations, [3, 5, 7]);
    // The group's size is a key like any other.
    assert_eq!(
        servers(&load(
            GROUP,
            &["stations.db.count=1", "stations.split.fan_out=1"]
        )),
        [2, 1]
    );
}

#[test]
fn problems_in_a_template_point_at_the_template_and_name_the_member() {
    let text = GROUP.replace("servers = 2", "servers = 0");
    check(
        &text,
        &[],
        &[
            "m.toml:25:11: stations.db[0].cpu.servers: expected a number of servers >= 1, found 0 (and in 2 more members of the group)",
        ],
    );
    check(
        GROUP,
        &["stations.db[3].cpu.servers=2"],
        &[
            "--set stations.db[3].cpu.servers=2: unknown key path stations.db[3]; the group has 3 members, so the index must be below 3",
        ],
    );
    check(
        GROUP,
        &["stations.db[1].cpux.servers=2"],
        &[
            "unknown key path stations.db[1].cpux; expected one of: stations.db[1].cpu, stations.db[1].disk",
        ],
    );
    check(
        GROUP,
        &["stations.db[0].cpu.servers=-1"],
        &[
            "m.toml:25:11: stations.db[0].cpu.servers: expected",
            "(set by --set stations.db[0].cpu.servers=-1)",
        ],
    );
}

#[test]
fn huge_groups_and_routes_are_refused_before_anything_is_allocated() {
    let start = std::time::Instant::now();
    check(
        &GROUP.replace("count = 3", "count = 1000000000"),
        &[],
        &["m.toml:21:9: stations.db.count: 1000000000 members of 2 stations would make"],
    );
    check(
        &GROUP.replace("count = 3", "count = 0"),
        &[],
        &["stations.db.count: expected a number of members >= 1, found 0"],
    );
    let route = r#"[workload]
rate_per_s = 1.0
route = [{ route = ["s"], repeat = 100000 }]
repeat = 1000000

[stations.s]
kind = "delay"
service = { dist = "exponential", mean = 0.001 }
"#;
    check(
        route,
        &[],
        &[
            "m.toml:3:9: workload.route: this route has 100000000000 steps with its repetitions; expected at most 16777216",
        ],
    );
    assert!(start.elapsed().as_secs_f64() < 2.0);
}

#[test]
fn repeated_routes_are_written_out_step_by_step() {
    let text = r#"[workload]
rate_per_s = 1.0
route = ["a", { route = ["b", { route = ["a"], repeat = 2 }], repeat = 2 }]
repeat = 2

[stations.a]
kind = "delay"
service = { dist = "exponential", mean = 0.001 }

[stations.b]
kind = "delay"
service = { dist = "exponential", mean = 0.001 }
"#;
    let m = load(text, &[]);
    let Routing::Sequence(seq) = &m.network.spec().classes[0].routing else {
        panic!("a fixed route")
    };
    let a_b = [0, 1, 0, 0, 1, 0, 0];
    assert_eq!(seq, &[a_b, a_b].concat());
    check(
        &text.replace("repeat = 2\n\n", "repeat = 0\n\n"),
        &[],
        &["workload.repeat: expected a number of repetitions >= 1, found 0"],
    );
    check(
        &text.replace("route = [\"a\"], repeat = 2", "route = [\"a\"]"),
        &[],
        &["workload.route[1].route[1]: missing key `repeat`"],
    );
}

#[test]
fn fork_routes_over_groups_of_different_sizes_are_refused() {
    let text = GROUP.replace(
        "to = [\"db[i].cpu\"]",
        "route = [\"db[i].cpu\", \"log[i].disk\"]",
    ) + "\n[stations.log]\ncount = 2\n\n[stations.log.disk]\nkind = \"queue\"\nservice = { dist = \"exponential\", mean = 0.004 }\n";
    check(
        &text,
        &[],
        &[
            "stations.split.route: the groups indexed with [i] have different sizes (db has 3 members, log has 2)",
        ],
    );
}
