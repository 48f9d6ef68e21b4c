//! The programs in examples/ run under `cargo test`: each asserts its own
//! results in its `main` (against exact answers where they exist), so an
//! example that drifts from the library fails the suite, not only CI's
//! separate run of the examples.

#[path = "../../examples/embed_network.rs"]
mod embed_network;
#[path = "../../examples/sla_concurrency.rs"]
mod sla_concurrency;
#[path = "../../examples/whatif_capacity.rs"]
mod whatif_capacity;
#[path = "../../examples/whatif_network.rs"]
mod whatif_network;

#[test]
fn example_embed_network() {
    embed_network::main().expect("examples/embed_network.rs");
}

#[test]
fn example_sla_concurrency() {
    sla_concurrency::main().expect("examples/sla_concurrency.rs");
}

#[test]
fn example_whatif_capacity() {
    whatif_capacity::main().expect("examples/whatif_capacity.rs");
}

#[test]
fn example_whatif_network() {
    whatif_network::main().expect("examples/whatif_network.rs");
}
