use std::fmt;
use std::sync::Mutex as StdMutex;
use std::task::{Poll, Waker};

/// Lets `n` tasks wait for each other: each `wait` returns once all `n` have
/// called it, and exactly one of them is told it is the leader.
pub struct Barrier {
    /// Auto traits as tokio's (see `crate::util::NoUnwindSafety`).
    _unwind: crate::util::NoUnwindSafety,
    n: usize,
    state: StdMutex<BarrierState>,
}

struct BarrierState {
    arrived: usize,
    generation: usize,
    wakers: Vec<Waker>,
}

impl fmt::Debug for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Barrier").field("n", &self.n).finish()
    }
}

/// What [`Barrier::wait`] returns.
#[derive(Debug, Clone)]
pub struct BarrierWaitResult(bool);

impl BarrierWaitResult {
    /// Whether this task was the leader (the last to arrive).
    pub fn is_leader(&self) -> bool {
        self.0
    }
}

impl Barrier {
    /// A barrier for `n` tasks (0 counts as 1, as in tokio).
    pub fn new(mut n: usize) -> Barrier {
        if n == 0 {
            n = 1;
        }
        Barrier {
            _unwind: std::marker::PhantomData,
            n,
            state: StdMutex::new(BarrierState {
                arrived: 0,
                generation: 0,
                wakers: Vec::new(),
            }),
        }
    }

    /// Arrives and waits for the others. The last to arrive is the leader
    /// and releases everyone; the barrier is then ready for the next round.
    pub async fn wait(&self) -> BarrierWaitResult {
        let generation = {
            let mut st = super::lock(&self.state);
            st.arrived += 1;
            if st.arrived == self.n {
                st.arrived = 0;
                st.generation += 1;
                let wakers = std::mem::take(&mut st.wakers);
                drop(st);
                for w in wakers {
                    w.wake();
                }
                return BarrierWaitResult(true);
            }
            st.generation
        };
        std::future::poll_fn(|cx| {
            let mut st = super::lock(&self.state);
            if st.generation != generation {
                Poll::Ready(BarrierWaitResult(false))
            } else {
                st.wakers.push(cx.waker().clone());
                crate::util::note_wait("Barrier::wait", sim_runtime::WaitDetail::None, None);
                Poll::Pending
            }
        })
        .await
    }
}
