//! Integration tests of the qsim package: simulation against exact answers,
//! the scenario catalogue, and the command-line tool's behaviour.

mod cli;
mod exact;
mod names;
mod scenarios;
mod support;
