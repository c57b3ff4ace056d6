//! The futures `join!`, `try_join!` and `select!` make are no larger than
//! tokio's: the sizes below are real tokio's (the plain build checks them
//! against it), and the simulation build holds the facade to them. A
//! service with deep async stacks pays for every byte in each task.
#![cfg(target_pointer_width = "64")]

use std::future::ready;
use std::mem::size_of_val;

#[test]
fn join_futures_are_as_small_as_tokios() {
    let one = async { tokio::join!(ready(1u32)) };
    let two = async { tokio::join!(ready(1u32), ready(2u64)) };
    let three = async { tokio::join!(ready(1u8), ready(2u16), ready(3u32)) };
    assert_eq!(
        [size_of_val(&one), size_of_val(&two), size_of_val(&three)],
        [32, 64, 48]
    );
    let biased = async { tokio::join!(biased; ready(1u32), ready(2u64)) };
    assert_eq!(size_of_val(&biased), 56);
}

#[test]
fn try_join_futures_are_as_small_as_tokios() {
    let one = async { tokio::try_join!(ready(Ok::<u32, ()>(1))) };
    let two = async { tokio::try_join!(ready(Ok::<u32, ()>(1)), ready(Ok::<u64, ()>(2))) };
    assert_eq!([size_of_val(&one), size_of_val(&two)], [32, 64]);
    let biased =
        async { tokio::try_join!(biased; ready(Ok::<u32, ()>(1)), ready(Ok::<u64, ()>(2))) };
    assert_eq!(size_of_val(&biased), 56);
}

#[test]
fn select_futures_are_as_small_as_tokios() {
    let one = async {
        tokio::select! {
            n = ready(1u32) => n,
        }
    };
    let three = async {
        tokio::select! {
            n = ready(1u32) => n,
            n = ready(2u32), if false => n,
            else => 0,
        }
    };
    let biased = async {
        tokio::select! {
            biased;
            n = ready(1u64) => n,
            n = ready(2u64) => n,
        }
    };
    assert_eq!(
        [size_of_val(&one), size_of_val(&three), size_of_val(&biased)],
        [32, 40, 56]
    );
}
