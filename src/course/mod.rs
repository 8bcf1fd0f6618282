//! The course: what a student works through, beside the store and its suite:
//! the starters `lab new` writes for a student's own implementation
//! ([`starter`]).

pub mod starter;
