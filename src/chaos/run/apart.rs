//! Workers on hosts of their own, driven one call at a time: the same
//! processes, hosts and cluster as a chaos run's on hosts, for a story
//! told call by call (`lab demo --engine postgres --partition`), whose
//! links are cut and mended when the story says.

use super::place::Place;
use super::{RunError, Workers};
use crate::external::ExternalStore;
use crate::job_store::JobStore;
use crate::pg_server::Hosts;
use std::path::Path;
use std::sync::Arc;

/// Worker processes, each in a network namespace of its own, on a cluster
/// in another, until dropped: then the processes end, the cluster stops
/// and is removed, and the namespaces and their links go.
pub struct Apart {
    // (Dropped in this order: the workers' processes, then the place,
    // which stops the cluster, then the hosts, then the folder.)
    stores: Vec<Arc<ExternalStore>>,
    place: Place,
    hosts: Arc<Hosts>,
    _dir: tempfile::TempDir,
}

impl Apart {
    /// `count` workers of `workers` (on a server, see [`Workers::on_hosts`]),
    /// each on a host of its own, the server on another, on a cluster of
    /// its own in a new folder under `scratch`. Each worker's process starts
    /// with its first call.
    ///
    /// Errors: the workers are not on a server, the folder could not be
    /// made, or the hosts or the cluster could not be (not root, no `ip`,
    /// no PostgreSQL: the error says which).
    pub fn start(workers: &Workers, count: usize, scratch: &Path) -> Result<Apart, RunError> {
        let Some(server) = &workers.server else {
            return Err(RunError::HostsNeedAServer);
        };
        let dir = tempfile::Builder::new()
            .prefix("lease-lab-apart-")
            .tempdir_in(scratch)
            .map_err(|source| RunError::Folder {
                scratch: scratch.to_path_buf(),
                source,
            })?;
        let place = Place::new(Some(server), false, Some(count), dir.path())?;
        let hosts = Arc::clone(place.hosts().ok_or(RunError::HostsNeedAServer)?);
        let stores = (0..count)
            .map(|index| workers.open(&place, false, index))
            .collect();
        Ok(Apart {
            stores,
            place,
            hosts,
            _dir: dir,
        })
    }

    /// Worker `index`'s store: its calls are made by its process, from its
    /// host.
    pub fn store(&self, index: usize) -> &dyn JobStore {
        self.stores[index].as_ref()
    }

    /// The path every worker's calls name: their one table on the server.
    pub fn db(&self) -> &Path {
        self.place.db()
    }

    /// The hosts, whose links [`Hosts::cut`] and [`Hosts::mend`] take down
    /// and bring back.
    pub fn hosts(&self) -> &Hosts {
        &self.hosts
    }
}
