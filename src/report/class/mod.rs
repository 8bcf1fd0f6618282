//! A class, as its instructor reads it: the grade, a row per student for
//! the terminal and as CSV, the class per exercise and the misconceptions
//! ([`grade`]), and the class page ([`class_page`]); a check as
//! Gradescope's autograder ([`gradescope`]) and PrairieLearn's external
//! grader ([`prairielearn`]) read it; and what a student chose made safe
//! in a CSV file ([`safe_csv`]) and in a Markdown table
//! ([`markdown_cell`]).

pub mod class_page;
pub mod grade;
pub mod gradescope;
pub mod markdown_cell;
pub mod prairielearn;
pub mod safe_csv;
