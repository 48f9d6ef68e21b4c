//! The scenario catalogue of DESIGN.md: each model in models/ against its target.
