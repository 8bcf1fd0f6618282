//! Everything the lab shows, by who reads it: the kill matrix's reports
//! ([`matrix`]) and what a matrix means ([`analysis`]); the student's
//! screens ([`student`]); a class graded, as its instructor reads it
//! ([`class`]); a chaos run's timeline as a page ([`chaos`]).
//!
//! Every format, with its extension and its renderer, is listed in
//! [`format`](mod@format). This module holds what the audiences share:
//! the one shell of every page ([`html_page`]), what a student chose made
//! safe for a page ([`html_text`]), and how a number of steps or of tests
//! is said ([`steps_through`], [`tests_phrase`]).

pub mod analysis;
pub mod chaos;
pub mod class;
pub mod format;
pub mod html_page;
pub mod html_text;
pub mod matrix;
pub mod student;

/// The steps from the first through `last`: "step 1", "steps 1 to 4".
pub fn steps_through(last: u8) -> String {
    match last {
        1 => "step 1".into(),
        n => format!("steps 1 to {n}"),
    }
}

/// "1 test", "3 tests".
pub fn tests_phrase(count: usize) -> String {
    match count {
        1 => "1 test".into(),
        n => format!("{n} tests"),
    }
}
