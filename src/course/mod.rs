//! The course: what the `lab` binary's commands for students and
//! instructors need beyond the store, the suite and the matrix, kept here
//! so the command line only parses, calls and prints.
//!
//! - [`own_mutant`]: a mutant of one's own, from its template to the checks
//!   it must pass before it runs.

pub mod own_mutant;
