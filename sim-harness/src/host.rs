//! Hosts' lives: each host's factory (its `main`), its main task, and its
//! restart. A fault (`Fault::Restart`), the nemesis, the liveness phase and
//! a rollout all restart hosts through here.

use sim_net::{with_net, HostId, Network};
use sim_runtime::TaskMeta;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::panic::Location;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;
use std::time::Duration;

pub(crate) type BoxFuture = Pin<Box<dyn Future<Output = ()>>>;
pub(crate) type Factory = Rc<dyn Fn() -> BoxFuture>;

/// The signal a graceful stop sends (a rollout's, the nemesis's).
pub(crate) const SIGTERM: i32 = 15;

/// Factories of the hosts, so restarts can run them again.
#[derive(Default)]
struct Factories(RefCell<BTreeMap<u32, (Factory, &'static Location<'static>)>>);

fn factories() -> Rc<Factories> {
    sim_runtime::context::with_current(|core| core.extension(Factories::default))
        .expect("inside a simulation")
}

fn start_host(host: HostId) {
    let entry = factories().0.borrow().get(&host.0).cloned();
    let Some((factory, location)) = entry else {
        return;
    };
    let name = with_net(|net| net.host_name(host));
    let main = HostMain {
        name: name.clone(),
        future: factory(),
    };
    sim_runtime::context::with_current(|core| {
        let meta = TaskMeta {
            name: Some(name.into_boxed_str()),
            location,
            kind: "host",
        };
        core.spawn_on_node(Box::pin(main), meta, host.0);
    });
}

/// A host's main task, as a process's `main`: when it returns, the host
/// exits (its connections close, its other tasks go, it stays down until a
/// restart); when it panics, the run fails (a panic in a task it spawned
/// stays in that task, as in tokio).
struct HostMain {
    name: String,
    future: BoxFuture,
}

impl Future for HostMain {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            this.future.as_mut().poll(cx)
        }));
        match polled {
            Ok(Poll::Ready(())) => {
                // Right after this poll: the exit drops the host's tasks.
                let name = this.name.clone();
                with_net(|net| {
                    net.after(
                        Duration::ZERO,
                        "host-exit",
                        Box::new(move || {
                            with_net(|net| {
                                if let Some(id) = net.host_id(&name) {
                                    net.exit(id);
                                }
                            })
                        }),
                    )
                });
                Poll::Ready(())
            }
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => {
                let text = sim_runtime::sweep::payload_text(&*payload);
                sim_runtime::context::with_current(|core| {
                    core.fail_run(
                        sim_runtime::sweep::FailureClass::Panic,
                        format!(
                            "sim: host {:?}'s main task panicked at virtual time {:?} (seed \
                             {:#x}): {text}",
                            this.name,
                            Duration::from_nanos(core.now_ns()),
                            core.config().seed
                        ),
                    )
                });
                Poll::Ready(())
            }
        }
    }
}

/// Replaces `host`'s factory: its next start runs `factory` (a new
/// version, in a rollout).
pub(crate) fn set_factory(host: HostId, factory: Factory) {
    if let Some(entry) = factories().0.borrow_mut().get_mut(&host.0) {
        entry.0 = factory;
    }
}

pub(crate) fn restart(net: &Rc<Network>, host: HostId) {
    if net.is_alive(host) {
        // A restart of a running host is a crash and a start.
        net.crash(host);
    }
    net.revive(host);
    start_host(host);
}

/// Registers `host`'s factory (where `Sim::host` was called is its spawn
/// site); the host starts with [`restart`] or [`start`].
pub(crate) fn register(host: HostId, factory: Factory, location: &'static Location<'static>) {
    factories()
        .0
        .borrow_mut()
        .insert(host.0, (factory, location));
}

/// Starts `host`'s main task from its factory.
pub(crate) fn start(host: HostId) {
    start_host(host);
}

/// The host named `name`.
///
/// # Panics
/// When the simulation has no such host.
#[track_caller]
pub(crate) fn named(net: &Network, name: &str) -> HostId {
    net.host_id(name).unwrap_or_else(|| {
        panic!("sim: no host named {name:?} in this simulation; register it with Sim::host")
    })
}
