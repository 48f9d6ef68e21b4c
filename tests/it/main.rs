//! Integration tests of the qsim package: simulation against exact answers,
//! the scenario catalogue, and the command-line tool's behaviour.

mod blocking;
mod capacity;
mod charts;
mod claims;
mod cli;
mod docs;
mod edges;
mod exact;
mod export;
mod grammar;
mod guards;
mod names;
mod perclass;
mod report;
mod routes;
mod scenarios;
mod solve;
mod support;
mod sweep_cli;
mod switching;
mod timeline;
mod trust;
mod whatif;
