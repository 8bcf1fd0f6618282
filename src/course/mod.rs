//! The course: what a student works through, beside the store and its suite:
//! the progress a student records ([`progress`]), a check of a student's
//! own implementation ([`check`]), a prediction and its
//! score ([`prediction`]), a class's progress graded ([`grade`]), and the
//! starters `lab new` writes for a student's own implementation
//! ([`starter`]).

pub mod check;
pub mod grade;
pub mod prediction;
pub mod progress;
pub mod starter;
