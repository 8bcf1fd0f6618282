//! Judging a concurrent history of store calls against the worksheet's
//! contract: the pure logic under `lab chaos`, with no SQLite in it.
//!
//! Many workers call one database at once; each call is recorded with the
//! interval of real time it took ([`history`]). The contract, read as a
//! sequential specification of one job ([`model`]), says what each call may
//! answer in each state. A history is correct when it is *linearizable*:
//! every call can be given one instant inside its interval at which it took
//! effect, and the calls, run through the model in the order of those
//! instants, give exactly the recorded answers ([`linearize`]).
//!
//! Every operation but `init_db` names one job, and jobs share no state, so
//! the history is checked job by job (linearizability is local: the whole is
//! linearizable exactly when each job's part is).

pub mod history;
pub mod linearize;
pub mod model;

#[cfg(test)]
mod testing;

pub use history::{error_may_have_taken_effect, Call, Returned};
pub use linearize::{check, check_job, Malformation, Placement, Verdict, Witness};
pub use model::{check_arguments, job_of, Expected, JobModel, Refusal, Row};
