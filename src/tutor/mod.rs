//! The tutor: the commands a student works through at the console. Each one
//! changes the student's records through the course's [`crate::course::session`]
//! and shows [`crate::report`]'s screens as it goes, so it sits above both: the
//! course keeps the rules and the records, the report draws them, and neither
//! needs the other's console.
//!
//! - [`step`]: the step-through of `lab step N`, and the console it asks at;
//! - [`study`]: the changes at the console beyond the steps: the student's
//!   name, reset, the closing reflection;
//! - [`watch`]: `lab watch`'s rounds, a check on every save.

pub mod step;
pub mod study;
pub mod watch;
