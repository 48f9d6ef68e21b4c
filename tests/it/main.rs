//! Integration tests of the qsim package: simulation against exact answers,
//! the scenario catalogue, and the command-line tool's behaviour.

mod blocking;
mod budget_events;
mod capacity;
mod capacity_schedule;
mod charts;
mod claims;
mod cli;
pub mod clients;
mod docs;
mod edges;
mod exact;
mod examples;
mod export;
mod grammar;
mod guards;
mod library;
mod limits;
mod names;
mod overload_exact;
mod perclass;
mod pools;
mod progress;
mod recovery_goodput;
mod report;
mod routes;
mod scenarios;
mod solve;
mod support;
mod sweep_cli;
mod switching;
mod timeline;
mod transient;
mod trust;
mod verdict;
mod verdict_open;
mod whatif;
