//! The slow tests (about 20 s): the store under many processes and crashes
//! (`faults`), raced by a Python client on the same file (`interop`), given
//! bad input of every kind (`bad_input`), and the kill matrix's verdicts
//! run after run (`stability`, ignored by default).
//!
//! None of them judges cargo-mutants' mutants: `.ci/mutants` runs the
//! `contract` and `lab` binaries, never this one, so that no mutant waits
//! for these.

#[path = "../common/mod.rs"]
mod common;

mod bad_input;
mod faults;
mod interop;
mod postgres;
mod stability;
