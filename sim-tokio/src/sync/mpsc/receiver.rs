//! What the two receivers share: receiving, closing, and dropping what is
//! queued when the receiver goes.

use super::bounded::Receiver;
use super::error::TryRecvError;
use super::unbounded::UnboundedReceiver;
use std::fmt;
use std::task::{Context, Poll};
macro_rules! receiver_methods {
    ($ty:ident) => {
        impl<T> $ty<T> {
            /// Receives the next value; `None` once the channel is closed
            /// (or every sender gone) and empty. Cancel-safe.
            pub async fn recv(&mut self) -> Option<T> {
                std::future::poll_fn(|cx| self.chan.poll_recv(cx)).await
            }

            /// Waits for at least one value, then moves up to `limit` into
            /// `buffer`; returns how many (0 only when `limit` is 0 or the
            /// channel is done). Cancel-safe.
            pub async fn recv_many(&mut self, buffer: &mut Vec<T>, limit: usize) -> usize {
                std::future::poll_fn(|cx| self.chan.poll_recv_many(cx, buffer, limit)).await
            }

            /// Takes a queued value without waiting.
            ///
            /// # Errors
            /// `Empty`, or `Disconnected` when nothing will ever come.
            pub fn try_recv(&mut self) -> Result<T, TryRecvError> {
                self.chan.try_recv()
            }

            /// Receives from outside an async context.
            ///
            /// # Panics
            /// Inside a runtime.
            #[track_caller]
            pub fn blocking_recv(&mut self) -> Option<T> {
                crate::util::block_outside_runtime(self.recv())
            }

            /// As [`Self::recv_many`], from outside an async context.
            ///
            /// # Panics
            /// Inside a runtime.
            #[track_caller]
            pub fn blocking_recv_many(&mut self, buffer: &mut Vec<T>, limit: usize) -> usize {
                crate::util::block_outside_runtime(self.recv_many(buffer, limit))
            }

            /// Closes the channel: sends fail from now on; what is queued
            /// (and what holders of permits send) can still be received.
            pub fn close(&mut self) {
                self.chan.close();
            }

            /// Whether the channel is closed, or every sender is gone.
            pub fn is_closed(&self) -> bool {
                let st = self.chan.lock();
                st.rx_closed || st.senders == 0
            }

            /// Whether nothing is queued.
            pub fn is_empty(&self) -> bool {
                self.chan.lock().queue.is_empty()
            }

            /// How many values are queued.
            pub fn len(&self) -> usize {
                self.chan.lock().queue.len()
            }

            /// Polls for the next value.
            pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
                self.chan.poll_recv(cx)
            }

            /// Polls for up to `limit` values.
            pub fn poll_recv_many(
                &mut self,
                cx: &mut Context<'_>,
                buffer: &mut Vec<T>,
                limit: usize,
            ) -> Poll<usize> {
                self.chan.poll_recv_many(cx, buffer, limit)
            }

            /// How many senders are alive.
            pub fn sender_strong_count(&self) -> usize {
                self.chan.lock().senders
            }

            /// How many weak senders are alive.
            pub fn sender_weak_count(&self) -> usize {
                self.chan.lock().weak_senders
            }
        }

        impl<T> Drop for $ty<T> {
            fn drop(&mut self) {
                self.chan.close();
                // Queued values are dropped now, as the receiver will never
                // take them; their slots go back to the semaphore.
                // So does the receiver's waker: the senders keep the channel,
                // not the task that last waited on it.
                let (queued, waker): (Vec<T>, Option<std::task::Waker>) = {
                    let mut st = self.chan.lock();
                    (st.queue.drain(..).collect(), st.rx_waker.take())
                };
                drop(waker);
                drop(queued);
            }
        }

        impl<T> fmt::Debug for $ty<T> {
            fn fmt(&self, fmt: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt.debug_struct(stringify!($ty)).finish_non_exhaustive()
            }
        }

        impl<T> Unpin for $ty<T> {}
    };
}

receiver_methods!(Receiver);
receiver_methods!(UnboundedReceiver);
