//! The student's screens: an exercise's step-through ([`step`]), the
//! check of their own implementation ([`check`]), the overview, hints
//! and progress ([`progress`]), what `lab new` says it wrote
//! ([`starter`]) and the demo's stories ([`demo`]).

pub mod check;
pub mod demo;
pub mod progress;
pub mod starter;
pub mod step;
