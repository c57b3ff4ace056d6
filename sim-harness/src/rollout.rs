//! A rollout: the replicas behind a route are replaced one at a time by a
//! new version, as a deployment does. For each replica in turn: it leaves
//! the route (new connections go to the others), gets SIGTERM, is crashed
//! if it still runs after the grace period, starts again from the new
//! factory (its disk stays: version skew on the same data), and rejoins
//! the route once its readiness check passes. A replica that is not ready
//! in time fails the run with class `liveness`.
//!
//! Progress is published for checkers and properties: host `rollout`, key
//! the route's name, value `"1/3"`, ..., `"done"`.
//!
//! ```
//! use std::time::Duration;
//! use tokio::sim::rollout::{Ready, Rollout};
//! use tokio::sim::{Fault, Sim};
//!
//! async fn server(version: u32) {
//!     let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await.unwrap();
//!     tokio::sim::publish("version", version);
//!     loop {
//!         drop(listener.accept().await.unwrap());
//!     }
//! }
//!
//! let mut sim = Sim::new();
//! sim.host("api-1", || server(1));
//! sim.host("api-2", || server(1));
//! sim.at(Duration::ZERO, Fault::route("api", &["api-1", "api-2"]));
//! sim.at(
//!     Duration::from_secs(10),
//!     Fault::Rollout(Rollout::new("api", || server(2)).ready(Ready::Listening(8080))),
//! );
//! sim.client("operator", async {
//!     tokio::time::sleep(Duration::from_secs(60)).await;
//! });
//! sim.eventually("the rollout finishes", Duration::from_secs(30), |obs| {
//!     obs.get("rollout", "api") == Some("done") && obs.all("version") == [("api-1", "2"), ("api-2", "2")]
//! });
//! sim.run();
//! ```

use crate::host::{BoxFuture, Factory};
use crate::observe::Observations;
use sim_net::{with_net, HostId};
use std::fmt;
use std::future::Future;
use std::rc::Rc;
use std::time::Duration;

/// A readiness check: the observations and the host's name.
pub type ReadyFn = Rc<dyn Fn(&Observations<'_>, &str) -> bool>;

/// When a restarted replica may take traffic again.
#[derive(Clone)]
pub enum Ready {
    /// It has a TCP listener on this port.
    Listening(u16),
    /// The predicate holds, given the observations and the host's name.
    When(ReadyFn),
}

impl fmt::Debug for Ready {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ready::Listening(port) => write!(f, "Listening({port})"),
            Ready::When(_) => write!(f, "When(..)"),
        }
    }
}

/// A rollout of a new version over the hosts behind a route (see the
/// module docs). Applied as `Fault::Rollout`.
#[derive(Clone)]
pub struct Rollout {
    pub(crate) route: String,
    pub(crate) factory: Factory,
    pub(crate) grace: Duration,
    pub(crate) ready: Ready,
    pub(crate) ready_within: Duration,
}

/// How often readiness is looked at, in virtual time.
const READY_POLL: Duration = Duration::from_millis(10);

impl Rollout {
    /// Replaces each host behind route `route` by one that `factory`
    /// starts. Defaults: 5 s of grace after SIGTERM, ready as soon as it
    /// restarts (set a real check with [`Rollout::ready`]), ready within
    /// 30 s.
    pub fn new<F, Fut>(route: &str, factory: F) -> Rollout
    where
        F: Fn() -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        Rollout {
            route: route.to_string(),
            factory: Rc::new(move || Box::pin(factory()) as BoxFuture),
            grace: Duration::from_secs(5),
            ready: Ready::When(Rc::new(|_, _| true)),
            ready_within: Duration::from_secs(30),
        }
    }

    /// How long a replica has to exit after SIGTERM before it is crashed.
    pub fn grace(mut self, grace: Duration) -> Rollout {
        self.grace = grace;
        self
    }

    /// The readiness check of a restarted replica.
    pub fn ready(mut self, ready: Ready) -> Rollout {
        self.ready = ready;
        self
    }

    /// How long a restarted replica has to become ready.
    pub fn ready_within(mut self, bound: Duration) -> Rollout {
        self.ready_within = bound;
        self
    }
}

impl fmt::Debug for Rollout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rollout")
            .field("route", &self.route)
            .field("grace", &self.grace)
            .field("ready", &self.ready)
            .field("ready_within", &self.ready_within)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Rollout {
    fn eq(&self, other: &Rollout) -> bool {
        self.route == other.route && Rc::ptr_eq(&self.factory, &other.factory)
    }
}

/// Starts the rollout now.
///
/// # Panics
/// When `route` is no route (or has no host).
pub(crate) fn start(rollout: &Rollout) {
    let hosts = with_net(|net| net.route_hosts(&rollout.route));
    assert!(
        !hosts.is_empty(),
        "sim: Fault::Rollout: {:?} is no route; set one first with Fault::Route",
        rollout.route
    );
    step(Rc::new(rollout.clone()), Rc::new(hosts), 0);
}

fn progress(rollout: &Rollout, value: &str) {
    crate::observe::record("rollout", &rollout.route, value);
}

/// Replaces host `index` of `hosts`, then goes on with the next.
fn step(rollout: Rc<Rollout>, hosts: Rc<Vec<HostId>>, index: usize) {
    let Some(&host) = hosts.get(index) else {
        with_net(|net| net.note(&format!("rollout {}: done", rollout.route)));
        progress(&rollout, "done");
        return;
    };
    with_net(|net| {
        let name = net.host_name(host);
        net.note(&format!(
            "rollout {}: replace {name} ({}/{})",
            rollout.route,
            index + 1,
            hosts.len()
        ));
        let others: Vec<HostId> = net
            .route_hosts(&rollout.route)
            .into_iter()
            .filter(|&h| h != host)
            .collect();
        net.set_route(&rollout.route, &others);
        net.signal(host, crate::host::SIGTERM);
    });
    progress(&rollout, &format!("{}/{}", index + 1, hosts.len()));
    let grace = rollout.grace;
    with_net(|net| {
        net.after(
            grace,
            "rollout",
            Box::new(move || {
                with_net(|net| {
                    if net.is_alive(host) {
                        net.crash(host);
                    }
                    crate::host::set_factory(host, rollout.factory.clone());
                    crate::host::restart(net, host);
                });
                let deadline = crate::observe::now() + rollout.ready_within;
                wait_ready(rollout, hosts, index, deadline);
            }),
        )
    });
}

fn is_ready(rollout: &Rollout, host: HostId) -> bool {
    match &rollout.ready {
        Ready::Listening(port) => with_net(|net| net.tcp_is_listening(host, *port)),
        Ready::When(check) => {
            let name = with_net(|net| net.host_name(host));
            crate::observe::with_observations(|obs| check(obs, &name)).unwrap_or(false)
        }
    }
}

fn wait_ready(rollout: Rc<Rollout>, hosts: Rc<Vec<HostId>>, index: usize, deadline: Duration) {
    let host = hosts[index];
    if is_ready(&rollout, host) {
        with_net(|net| {
            // Back behind the route, in its old place among the others.
            let mut behind = net.route_hosts(&rollout.route);
            behind.push(host);
            behind.sort_by_key(|h| hosts.iter().position(|x| x == h).unwrap_or(usize::MAX));
            behind.dedup();
            net.set_route(&rollout.route, &behind);
        });
        step(rollout, hosts, index + 1);
        return;
    }
    if crate::observe::now() >= deadline {
        let name = with_net(|net| net.host_name(host));
        sim_runtime::context::with_current(|core| {
            core.fail_run(
                sim_runtime::sweep::FailureClass::Liveness,
                format!(
                    "sim: liveness: the rollout of {:?} stalled: {name} was not ready ({:?}) \
                     within {:?} of its restart (seed {:#x})",
                    rollout.route,
                    rollout.ready,
                    rollout.ready_within,
                    core.config().seed
                ),
            )
        });
        return;
    }
    with_net(|net| {
        net.after(
            READY_POLL,
            "rollout",
            Box::new(move || wait_ready(rollout, hosts, index, deadline)),
        )
    });
}
