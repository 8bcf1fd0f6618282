//! The course: what the `lab` binary's commands for students and
//! instructors need beyond the store, the suite and the matrix, kept here
//! so that the command line only parses, calls and prints.
//!
//! - [`progress`]: what a student records, and its file;
//! - [`session`]: the progress for one command, loaded and saved once,
//!   with a method for every change a command makes to it;
//! - [`chosen`]: which implementation a command runs, the one rule;
//! - [`prediction`]: a prediction of the tests that catch a mutant, and
//!   its score;
//! - [`check`]: a check of a student's own implementation, step by step,
//!   and how it is recorded;
//! - [`grade`]: a class's progress files graded, per student and per
//!   exercise, with the misconceptions;
//! - [`class_check`]: every student's own implementation checked;
//! - [`demo`]: the stories `lab demo` plays on a real database;
//! - [`starter`]: the starters `lab new` writes;
//! - [`own_mutant`]: a mutant of one's own, from its template to the checks
//!   it must pass before it runs.

pub mod check;
pub mod chosen;
pub mod class_check;
pub mod confined;
pub mod demo;
pub mod grade;
pub mod own_mutant;
pub mod prediction;
pub mod progress;
pub mod session;
pub mod starter;
pub mod submission;
