//! The faults a run injects: named on the command line, refused where
//! the run cannot inject them, and named again in the report.

use super::TTL;

/// The faults a run injects, each named on the command line and in the
/// report.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Faults {
    /// Workers stall past their lease, then finish with their old fence
    /// (some with the clock they read before stalling).
    pub stalls: bool,
    /// Workers are killed (SIGKILL) in the middle of a call and restarted
    /// under the same name, having forgotten everything.
    pub kills: bool,
    /// Workers are stopped between two calls (a deploy, a crash outside
    /// any call) and started again under the same name, having forgotten
    /// everything. Unlike a kill, no call is in flight, so a seed replays
    /// a restart exactly.
    pub restarts: bool,
    /// Each worker's clock is off by up to this many seconds either way
    /// (0: every clock agrees).
    pub skew: f64,
    /// The power fails once for every worker at once, in the middle of a
    /// round: each is killed, the writes no sync made durable are taken
    /// back (the shared disk model of [`crate::vfs_shim`]), and each
    /// starts again. Only for the compiled stores, which run on the shim.
    pub power: bool,
    /// The server crashes once (SIGKILL of every one of its processes) in
    /// the middle of a round, and restarts: the calls in flight are cut
    /// off, their outcomes unknown, and the workers go on. Only for
    /// workers on a server, on a cluster of the run's own.
    pub server_crash: bool,
    /// Now and then a worker's link to the server is cut in the middle of
    /// a call, and mended only once its lease has run out: the call's
    /// outcome is unknown, and the worker, which heard nothing, comes back
    /// with its old fence. Only for workers on hosts of their own.
    pub partition: bool,
}

/// The names of the faults, as `--faults` lists them.
pub const FAULT_NAMES: &str =
    "stalls, kills, restarts, skew, power, server-crash and partition (or none)";

impl Faults {
    /// The faults named in `text`, comma-separated (`none` for none); a
    /// named `skew` is of [`TTL`] seconds until [`Faults::with_skew`]
    /// says otherwise.
    ///
    /// Errors: a name that is no fault, with the names there are.
    pub fn named(text: &str) -> Result<Faults, String> {
        let mut faults = Faults {
            stalls: false,
            kills: false,
            restarts: false,
            skew: 0.0,
            power: false,
            server_crash: false,
            partition: false,
        };
        if text == "none" {
            return Ok(faults);
        }
        for name in text.split(',').map(str::trim) {
            match name {
                "stalls" => faults.stalls = true,
                "kills" => faults.kills = true,
                "restarts" => faults.restarts = true,
                "skew" => faults.skew = TTL,
                "power" => faults.power = true,
                "server-crash" => faults.server_crash = true,
                "partition" => faults.partition = true,
                other => return Err(format!("no fault {other:?}; the faults are {FAULT_NAMES}")),
            }
        }
        Ok(faults)
    }

    /// These faults, with clocks off by up to `seconds` when skew is one
    /// of them.
    pub fn with_skew(self, seconds: f64) -> Faults {
        Faults {
            skew: if self.skew > 0.0 { seconds } else { 0.0 },
            ..self
        }
    }

    /// Why these faults cannot be injected where the run is, if they
    /// cannot: on a server or on a file, with workers on hosts of their
    /// own or not, on a server the lab was given or one of its own. Said
    /// before any server is started.
    pub fn refusal(&self, place: Place) -> Option<&'static str> {
        let refused = [
            (
                self.power && place.on_server,
                "--faults power cuts the power of workers on the lab's disk model, which the \
                 store on PostgreSQL is not on; use server-crash to kill its server",
            ),
            (
                place.hosts && !place.on_server,
                "--hosts puts the workers and the server on hosts of their own, and this \
                 store keeps its jobs in a file; add --engine postgres",
            ),
            (
                place.hosts && place.server_given,
                "--hosts starts a cluster of the run's own on a host of its own, and cannot \
                 move a server it is given; leave out --dsn",
            ),
            (
                self.partition && !place.hosts,
                "--faults partition cuts a worker's link to the server, and only workers on \
                 hosts of their own have one; add --hosts (with --engine postgres)",
            ),
            (
                self.server_crash && !place.on_server,
                "--faults server-crash kills a PostgreSQL server, and this store keeps its jobs \
                 in a file; add --engine postgres, or use power or kills",
            ),
        ];
        refused
            .into_iter()
            .find(|(refused, _)| *refused)
            .map(|(_, why)| why)
    }
}

/// Where a run's store and workers are, as far as its faults care.
#[derive(Debug, Clone, Copy, Default)]
pub struct Place {
    /// The store is on a PostgreSQL server (else on a file).
    pub on_server: bool,
    /// Each worker is on a host of its own.
    pub hosts: bool,
    /// The server is one the lab was given (`--dsn`), not its own.
    pub server_given: bool,
}

impl Faults {
    /// Every fault, with a skew of one lease; power cuts only when the
    /// workers run on the lab's disk model (`on_shim`: the compiled
    /// stores).
    pub fn all(on_shim: bool) -> Faults {
        Faults {
            stalls: true,
            kills: true,
            restarts: true,
            skew: TTL,
            power: on_shim,
            server_crash: false,
            partition: false,
        }
    }

    /// No fault at all.
    pub fn none() -> Faults {
        Faults {
            stalls: false,
            kills: false,
            restarts: false,
            skew: 0.0,
            power: false,
            server_crash: false,
            partition: false,
        }
    }

    /// The faults that land when the operating system lets them, not when
    /// the seed says (a kill, a cut link, the server's crash), named for a
    /// sentence: a run with none of them replays as its seed says.
    pub fn untimed(&self) -> Vec<&'static str> {
        [
            (self.kills, "kills"),
            (self.partition, "cut links"),
            (self.server_crash, "the server's crash"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }

    /// The same faults without those that land when the operating system
    /// lets them ([`Faults::untimed`]).
    pub fn timed_only(self) -> Faults {
        Faults {
            kills: false,
            partition: false,
            server_crash: false,
            ..self
        }
    }

    /// The faults' names, as the command line gives them.
    pub fn names(&self) -> Vec<String> {
        let mut names = Vec::new();
        if self.stalls {
            names.push("stalls".to_string());
        }
        if self.kills {
            names.push("kills".to_string());
        }
        if self.restarts {
            names.push("restarts".to_string());
        }
        if self.skew > 0.0 {
            names.push(format!("skew ±{}s", self.skew));
        }
        if self.power {
            names.push("power".to_string());
        }
        if self.server_crash {
            names.push("server-crash".to_string());
        }
        if self.partition {
            names.push("partition".to_string());
        }
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each name turns on its fault alone, spaces around names are
    /// trimmed, `none` is none, and a name that is no fault is refused
    /// with every name there is.
    #[test]
    fn the_faults_are_named_one_by_one() {
        let named = |text: &str| Faults::named(text).unwrap();
        assert_eq!(named("none"), Faults::none());
        assert_eq!(
            named("stalls, kills,restarts"),
            Faults {
                stalls: true,
                kills: true,
                restarts: true,
                ..Faults::none()
            }
        );
        assert_eq!(named("skew").skew, TTL);
        assert!(named("power").power && !named("stalls").power);
        assert!(named("server-crash").server_crash);
        assert!(named("partition").partition);
        assert_eq!(
            Faults::named("stalls,storms").unwrap_err(),
            format!("no fault \"storms\"; the faults are {FAULT_NAMES}")
        );
    }

    /// Every fault's name, in the command line's order, skew with its
    /// seconds; the faults the operating system times, named for a
    /// sentence; and the faults left when those are taken out.
    #[test]
    fn the_faults_are_named_for_the_report_and_the_untimed_taken_out() {
        let every =
            Faults::named("partition,server-crash,power,skew,restarts,kills,stalls").unwrap();
        assert_eq!(
            every.names(),
            [
                "stalls",
                "kills",
                "restarts",
                "skew ±2s",
                "power",
                "server-crash",
                "partition"
            ]
        );
        assert!(Faults::none().names().is_empty());
        assert_eq!(
            every.untimed(),
            ["kills", "cut links", "the server's crash"]
        );
        assert!(Faults::named("stalls,restarts,skew,power")
            .unwrap()
            .untimed()
            .is_empty());
        assert_eq!(
            every.timed_only(),
            Faults::named("stalls,restarts,skew,power").unwrap()
        );
    }

    /// `--skew` sets how far clocks are off only when skew is named.
    #[test]
    fn the_skew_given_applies_only_to_a_named_skew() {
        assert_eq!(Faults::named("skew").unwrap().with_skew(0.5).skew, 0.5);
        assert_eq!(Faults::named("stalls").unwrap().with_skew(0.5).skew, 0.0);
        assert_eq!(Faults::named("skew").unwrap().with_skew(0.0).skew, 0.0);
    }

    /// Each fault or placement the run cannot have is refused, naming the
    /// option to change; those it can have are not.
    #[test]
    fn what_the_place_cannot_have_is_refused_with_what_to_do() {
        let file = Place::default();
        let server = Place {
            on_server: true,
            ..Place::default()
        };
        let hosts = Place {
            hosts: true,
            ..server
        };
        let refusal = |faults: &str, place: Place| Faults::named(faults).unwrap().refusal(place);
        assert_eq!(refusal("stalls,kills,restarts,skew,power", file), None);
        assert_eq!(refusal("stalls,server-crash", server), None);
        assert_eq!(refusal("partition,server-crash", hosts), None);
        let said = |faults: &str, place: Place| refusal(faults, place).unwrap_or_default();
        assert!(said("power", server).contains("use server-crash"));
        assert!(said(
            "none",
            Place {
                hosts: true,
                ..file
            }
        )
        .contains("add --engine postgres"));
        assert!(said(
            "none",
            Place {
                server_given: true,
                ..hosts
            }
        )
        .contains("leave out --dsn"));
        assert!(said("partition", server).contains("add --hosts"));
        assert!(said("server-crash", file).contains("add --engine postgres, or use power"));
    }
}
