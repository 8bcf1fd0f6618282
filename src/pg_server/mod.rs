//! A PostgreSQL server for the lab: the one it is given (`--dsn`, or
//! `LEASE_LAB_PG`), or a throwaway [`Cluster`] it starts and removes; and
//! the store on it, the reference's or a mutant's ([`ServerStore`]), as
//! the suite and the lab's runs see it ([`OnServer`]).

mod cluster;
pub mod hosts;
pub mod leftovers;
mod on_server;

pub use cluster::Cluster;
pub use hosts::{Hosts, HostsError};
pub use on_server::OnServer;

/// The store on PostgreSQL compiled into the lab, as its crate makes it:
/// the operations of the reference's or a mutant's ([`ServerStore`]), the
/// reference's ([`REFERENCE`]), and an operation on the reference's
/// connection ([`call`]).
pub use lease_lab_store::variants::{call, ServerStore, POSTGRES_REFERENCE as REFERENCE};

use std::path::Path;
use std::time::Duration;

/// The environment variable that names the server to use.
pub const DSN_VARIABLE: &str = "LEASE_LAB_PG";

/// How often a new cluster is tried until it accepts a connection.
const TRY_EVERY: Duration = Duration::from_millis(50);

/// How many times it is tried: for 30 s in all.
const TRIES: u32 = 600;

/// Why no server could be had.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// PostgreSQL's programs are not installed.
    #[error(
        "PostgreSQL is not installed: `{program}` was found neither on the PATH nor in \
         /usr/lib/postgresql/*/bin; install the server (on Debian or Ubuntu: \
         `apt-get install postgresql`), or give the lab a server with --dsn URL or {DSN_VARIABLE}"
    )]
    NotInstalled {
        /// The program looked for.
        program: &'static str,
    },
    /// A step of making the cluster failed.
    #[error("the throwaway PostgreSQL cluster could not be made: {step} failed: {detail}")]
    Step {
        /// The step: `initdb`, `starting postgres`, ...
        step: &'static str,
        /// What went wrong, with the program's own words.
        detail: String,
    },
}

/// The server the lab runs on: one it was given, or a throwaway cluster it
/// started, which runs while this lives.
#[derive(Debug)]
pub struct Server {
    dsn: String,
    cluster: Option<Cluster>,
}

impl Server {
    /// The server at `dsn`, which the lab neither starts nor stops.
    pub fn given(dsn: &str) -> Server {
        Server {
            dsn: dsn.to_string(),
            cluster: None,
        }
    }

    /// No server of the store's own: each run puts its database on a
    /// cluster of the run's own ([`OnServer::adopt`]), as a run whose
    /// server and workers are on hosts of their own does, so that no
    /// cluster is started for nothing. A call on a database that was not
    /// adopted fails: there is no server to connect to.
    pub fn of_each_run() -> Server {
        Server {
            dsn: String::new(),
            cluster: None,
        }
    }

    /// The server a command runs on: the one `dsn` or the environment
    /// gives ([`given`]), checked to accept a connection, else a throwaway
    /// cluster started now under the temporary folder.
    ///
    /// Errors: the server given does not answer, or no cluster could be
    /// started (PostgreSQL is not installed, say: the message names the
    /// package); in words.
    pub fn given_or_throwaway(dsn: Option<&str>) -> Result<Server, String> {
        match given(dsn) {
            Some(dsn) => {
                let server = Server::given(&dsn);
                server.reachable().map_err(|error| error.to_string())?;
                Ok(server)
            }
            None => Server::throwaway(&std::env::temp_dir()).map_err(|error| error.to_string()),
        }
    }

    /// A throwaway cluster, started in a new folder under `scratch`.
    ///
    /// Errors: as for [`Cluster::start`].
    pub fn throwaway(scratch: &Path) -> Result<Server, ServerError> {
        let cluster = Cluster::start(scratch)?;
        Ok(Server {
            dsn: cluster.dsn().to_string(),
            cluster: Some(cluster),
        })
    }

    /// How to connect to it.
    pub fn dsn(&self) -> &str {
        &self.dsn
    }

    /// Checks that it accepts a connection, so that a run on a server that
    /// is not there fails once, at once, rather than in every test.
    ///
    /// Errors: [`StoreError::Server`](crate::error::StoreError::Server),
    /// as [`Postgres::connect`](crate::store_postgres::Postgres::connect)
    /// says it.
    pub fn reachable(&self) -> crate::error::Result<()> {
        crate::store_postgres::Postgres::connect(&self.dsn).map(drop)
    }

    /// Whether it is a throwaway cluster the lab started (and removes
    /// whole when this is dropped).
    pub fn is_throwaway(&self) -> bool {
        self.cluster.is_some()
    }

    /// What the lab says of it when a run begins: the connection string
    /// without its password, or the throwaway cluster's folder (on two
    /// lines, within 80 columns).
    pub fn describe(&self) -> String {
        if self.dsn.is_empty() {
            return "the store on PostgreSQL runs on a cluster of the run's own, on a host\n     \
                    of its own, removed when the run ends"
                .into();
        }
        match &self.cluster {
            Some(cluster) => format!(
                "the store on PostgreSQL runs on a throwaway cluster, removed when the\n     run ends: {}",
                cluster.folder().display()
            ),
            None => format!(
                "the store on PostgreSQL runs on the server {}",
                crate::error::without_password(&self.dsn)
            ),
        }
    }
}

/// The server to use: `dsn` when given, else the environment's
/// [`DSN_VARIABLE`], else `None` (then the lab starts a [`Cluster`]).
pub fn given(dsn: Option<&str>) -> Option<String> {
    dsn.map(str::to_string).or_else(|| {
        std::env::var(DSN_VARIABLE)
            .ok()
            .filter(|dsn| !dsn.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server to use: the one given, else the environment's, else none.
    #[test]
    fn the_server_given_comes_before_the_environment_s() {
        assert_eq!(given(Some("host=/a")).as_deref(), Some("host=/a"));
    }
}
