//! `lab __worker`: runs suite tests against one variant and reports each
//! as a JSON line (the lab's own, to isolate variants).

use super::exit::{CliError, Outcome};
use lease_lab::runner::{self, WorkerArgs};

/// The body of `lab __worker`.
pub fn worker(args: &WorkerArgs) -> Outcome {
    let mut stdout = std::io::stdout().lock();
    runner::serve(args, &mut stdout).map_err(CliError::from)
}
