//! select!, join!, try_join!, pin!.

use std::time::Duration;
use tokio::sync::oneshot;
use tokio::time::{sleep, Instant};

#[tokio::test(start_paused = true)]
async fn select_takes_the_first_to_complete() {
    let start = Instant::now();
    let out = tokio::select! {
        _ = sleep(Duration::from_secs(5)) => "slow",
        _ = sleep(Duration::from_secs(1)) => "fast",
    };
    assert_eq!(out, "fast");
    assert_eq!(start.elapsed(), Duration::from_secs(1));
}

#[tokio::test]
async fn select_biased_polls_in_order() {
    for _ in 0..20 {
        let out = tokio::select! {
            biased;
            v = async { 1 } => v,
            v = async { 2 } => v,
        };
        assert_eq!(out, 1);
    }
}

#[tokio::test]
async fn select_skips_branches_whose_pattern_fails() {
    let (tx, rx) = oneshot::channel::<u32>();
    drop(tx);
    let out = tokio::select! {
        Ok(v) = rx => v,
        v = async { 9 } => v,
    };
    assert_eq!(out, 9);
}

#[tokio::test]
async fn select_precondition_and_else() {
    let enabled = false;
    let out = tokio::select! {
        v = async { 1 }, if enabled => v,
        else => 0,
    };
    assert_eq!(out, 0);

    let mut count = 0;
    let out = tokio::select! {
        v = async { 5 }, if count == 0 => { count += v; count }
        else => -1,
    };
    assert_eq!(out, 5);
}

#[tokio::test]
#[should_panic(expected = "all branches are disabled and there is no else branch")]
async fn select_with_everything_disabled_panics() {
    let (tx, rx) = oneshot::channel::<u32>();
    drop(tx);
    tokio::select! {
        Ok(v) = rx => { let _ = v; }
    }
}

#[tokio::test]
async fn select_in_a_loop_with_mutable_borrows() {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(4);
    for i in 0..3 {
        tx.send(i).await.unwrap();
    }
    drop(tx);
    let mut total = 0;
    loop {
        tokio::select! {
            Some(v) = rx.recv() => total += v,
            else => break,
        }
    }
    assert_eq!(total, 3);
}

#[tokio::test]
async fn join_runs_concurrently_and_returns_all() {
    let (a, b, c) = tokio::join!(async { 1 }, async { "two" }, async { 3.0 });
    assert_eq!((a, b, c), (1, "two", 3.0));
    #[allow(clippy::unit_cmp)]
    {
        assert_eq!(tokio::join!(), ());
    }
}

#[tokio::test(start_paused = true)]
async fn join_waits_for_the_slowest() {
    let start = Instant::now();
    tokio::join!(sleep(Duration::from_secs(1)), sleep(Duration::from_secs(3)));
    assert_eq!(start.elapsed(), Duration::from_secs(3));
}

#[tokio::test(start_paused = true)]
async fn try_join_returns_the_first_error() {
    let ok: Result<(u8, u8), &str> = tokio::try_join!(async { Ok(1) }, async { Ok(2) });
    assert_eq!(ok, Ok((1, 2)));
    let start = Instant::now();
    let err: Result<((), u8), &str> = tokio::try_join!(
        async {
            sleep(Duration::from_secs(1)).await;
            Err("late failure")
        },
        async {
            sleep(Duration::from_secs(100)).await;
            Ok(2)
        }
    );
    assert_eq!(err, Err("late failure"));
    assert_eq!(start.elapsed(), Duration::from_secs(1));
}

#[tokio::test]
async fn pin_pins_on_the_stack() {
    let fut = async { 4 };
    tokio::pin!(fut);
    assert_eq!((&mut fut).await, 4);
    tokio::pin! {
        let a = async { 1 };
        let b = async { 2 };
    }
    assert_eq!(a.await + b.await, 3);
}

#[tokio::test]
async fn select_with_only_an_else_branch_runs_it() {
    let out = tokio::select! {
        else => 7,
    };
    assert_eq!(out, 7);
}

#[tokio::test]
async fn select_binds_by_ref_mut_in_a_branch_pattern() {
    let out = tokio::select! {
        ref mut v = async { vec![1u8] } => {
            v.push(2);
            v.len()
        }
    };
    assert_eq!(out, 2);
}

#[tokio::test]
async fn select_extends_the_lifetime_of_a_borrowed_temporary() {
    // `&mut <temporary>` in a branch: the temporary lives as long as the
    // select! (temporary lifetime extension, as in a `let`).
    let out = tokio::select! {
        n = &mut Box::pin(async { 3 }) => n,
        _ = &mut Box::pin(sleep(Duration::from_secs(1))) => 0,
    };
    assert_eq!(out, 3);
}

#[tokio::test]
async fn select_infers_the_type_of_a_disabled_branch() {
    // `f`'s output is never named: a disabled branch must not need it.
    let f = std::future::poll_fn(|_| panic!("a disabled branch is never polled"));
    let (tx, rx) = oneshot::channel::<()>();
    tx.send(()).unwrap();
    tokio::select! {
        _ = f, if false => unreachable!(),
        _ = rx => (),
    }
}
