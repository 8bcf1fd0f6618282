//! The eight exercises: their titles and texts.

/// The worksheet's title of each step.
pub const STEP_TITLES: [&str; 8] = [
    "Create the lease state table",
    "Register only the first job",
    "Read the current state",
    "Take an expired lease atomically",
    "Only the current generation renews the lease",
    "Reject a stale completion",
    "Only the current worker returns the lease",
    "There is one winner among concurrent claims",
];

/// The title of step `step` (1 to 8), or an empty string for another number.
pub fn step_title(step: u8) -> &'static str {
    usize::from(step)
        .checked_sub(1)
        .and_then(|index| STEP_TITLES.get(index))
        .copied()
        .unwrap_or("")
}
