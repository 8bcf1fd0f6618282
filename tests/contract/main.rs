//! The contract suite under `cargo test`, against the library's store: the
//! reference, or the mutant chosen with `--features mutant-ID`. It is the
//! store's judge: `.ci/mutants` runs this binary alone on the mutants of
//! `crates/store/src/store.rs`.
//!
//! - `contract`: the suite on the path functions, and a proof that a
//!   student can pass the steps one by one, in order.
//! - `handle`: the same suite on the kept-connection handle.

mod contract;
mod handle;
