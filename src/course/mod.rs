//! The course: what a student works through, beside the store and its suite:
//! the stories `lab demo` plays on a real database ([`demo`]) and the
//! starters `lab new` writes for a student's own implementation
//! ([`starter`]).

pub mod demo;
pub mod starter;
