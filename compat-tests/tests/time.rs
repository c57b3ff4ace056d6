//! tokio::time, with the clock paused so both builds are exact.

use std::time::Duration;
use tokio::time::{self, Instant, MissedTickBehavior};

#[tokio::test(start_paused = true)]
async fn sleep_advances_exactly_the_duration() {
    let start = Instant::now();
    time::sleep(Duration::from_secs(10)).await;
    assert_eq!(start.elapsed(), Duration::from_secs(10));
    time::sleep_until(start + Duration::from_secs(25)).await;
    assert_eq!(Instant::now() - start, Duration::from_secs(25));
}

#[tokio::test(start_paused = true)]
async fn sub_millisecond_sleeps_round_up_to_the_next_millisecond() {
    let start = Instant::now();
    time::sleep(Duration::from_micros(1500)).await;
    assert_eq!(start.elapsed(), Duration::from_millis(2));
}

#[tokio::test(start_paused = true)]
async fn sleep_reports_its_deadline_and_can_be_reset() {
    let start = Instant::now();
    let sleep = time::sleep(Duration::from_secs(5));
    tokio::pin!(sleep);
    assert_eq!(sleep.deadline(), start + Duration::from_secs(5));
    assert!(!sleep.is_elapsed());
    sleep.as_mut().reset(start + Duration::from_secs(2));
    (&mut sleep).await;
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    assert!(sleep.is_elapsed());
}

#[tokio::test(start_paused = true)]
async fn reset_wakes_a_waiting_task_at_the_new_deadline() {
    let start = Instant::now();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let sleeper = tokio::spawn(async move {
        let sleep = time::sleep(Duration::from_secs(100));
        tokio::pin!(sleep);
        tokio::select! {
            _ = &mut sleep => {}
            _ = rx => {}
        }
        // Now shorten the sleep that is already registered and wait again.
        sleep
            .as_mut()
            .reset(Instant::now() + Duration::from_secs(1));
        sleep.await;
        Instant::now()
    });
    time::sleep(Duration::from_secs(3)).await;
    tx.send(()).unwrap();
    let woke = sleeper.await.unwrap();
    assert_eq!(woke - start, Duration::from_secs(4));
}

#[tokio::test(start_paused = true)]
async fn instant_arithmetic() {
    let a = Instant::now();
    let b = a + Duration::from_millis(1500);
    assert_eq!(b.duration_since(a), Duration::from_millis(1500));
    assert_eq!(a.saturating_duration_since(b), Duration::ZERO);
    assert_eq!(a.checked_duration_since(b), None);
    assert_eq!(b.checked_sub(Duration::from_millis(1500)), Some(a));
    assert_eq!(b - a, Duration::from_millis(1500));
    let mut c = a;
    c += Duration::from_secs(1);
    c -= Duration::from_millis(500);
    assert_eq!(c - a, Duration::from_millis(500));
    let std: std::time::Instant = b.into_std();
    assert_eq!(Instant::from_std(std), b);
    assert!(a.checked_add(Duration::from_secs(1)).is_some());
}

#[tokio::test(start_paused = true)]
async fn timeout_elapses_in_virtual_time() {
    let start = Instant::now();
    let result = time::timeout(Duration::from_secs(30), std::future::pending::<()>()).await;
    let err = result.unwrap_err();
    assert_eq!(err.to_string(), "deadline has elapsed");
    assert_eq!(start.elapsed(), Duration::from_secs(30));
    let io: std::io::Error = err.into();
    assert_eq!(io.kind(), std::io::ErrorKind::TimedOut);
}

#[tokio::test(start_paused = true)]
async fn timeout_passes_a_ready_value_through() {
    let value = time::timeout(Duration::from_secs(1), async { 5 }).await;
    assert_eq!(value, Ok(5));
    let deadline = Instant::now() + Duration::from_secs(2);
    let late = time::timeout_at(deadline, time::sleep(Duration::from_secs(3))).await;
    assert!(late.is_err());
    let mut t = time::timeout(Duration::from_secs(1), async { 7 });
    let _ = t.get_ref();
    let _ = t.get_mut();
    assert_eq!(t.into_inner().await, 7);
}

#[tokio::test(start_paused = true)]
async fn interval_ticks_every_period_starting_now() {
    let start = Instant::now();
    let mut interval = time::interval(Duration::from_secs(2));
    assert_eq!(interval.period(), Duration::from_secs(2));
    assert_eq!(interval.missed_tick_behavior(), MissedTickBehavior::Burst);
    let mut ticks = Vec::new();
    for _ in 0..4 {
        ticks.push(interval.tick().await - start);
    }
    assert_eq!(ticks, [0, 2, 4, 6].map(Duration::from_secs).to_vec());
}

#[tokio::test(start_paused = true)]
async fn interval_at_starts_at_the_given_instant() {
    let start = Instant::now();
    let mut interval = time::interval_at(start + Duration::from_secs(5), Duration::from_secs(1));
    assert_eq!(interval.tick().await - start, Duration::from_secs(5));
    assert_eq!(interval.tick().await - start, Duration::from_secs(6));
}

async fn ticks_after_a_stall(behavior: MissedTickBehavior) -> Vec<Duration> {
    let start = Instant::now();
    let mut interval = time::interval(Duration::from_millis(100));
    interval.set_missed_tick_behavior(behavior);
    interval.tick().await;
    // Miss a few ticks.
    time::sleep(Duration::from_millis(350)).await;
    let mut out = Vec::new();
    for _ in 0..3 {
        interval.tick().await;
        out.push(Instant::now() - start);
    }
    out
}

#[tokio::test(start_paused = true)]
async fn missed_ticks_burst_delay_or_skip() {
    let ms = Duration::from_millis;
    assert_eq!(
        ticks_after_a_stall(MissedTickBehavior::Burst).await,
        vec![ms(350), ms(350), ms(350)]
    );
    assert_eq!(
        ticks_after_a_stall(MissedTickBehavior::Delay).await,
        vec![ms(350), ms(450), ms(550)]
    );
    assert_eq!(
        ticks_after_a_stall(MissedTickBehavior::Skip).await,
        vec![ms(350), ms(400), ms(500)]
    );
}

#[tokio::test(start_paused = true)]
async fn interval_resets() {
    let start = Instant::now();
    let mut interval = time::interval(Duration::from_secs(10));
    interval.tick().await;
    interval.reset_after(Duration::from_secs(3));
    assert_eq!(interval.tick().await - start, Duration::from_secs(3));
    interval.reset_immediately();
    assert_eq!(interval.tick().await - start, Duration::from_secs(3));
    interval.reset();
    assert_eq!(interval.tick().await - start, Duration::from_secs(13));
    interval.reset_at(start + Duration::from_secs(20));
    assert_eq!(interval.tick().await - start, Duration::from_secs(20));
}

#[test]
#[should_panic(expected = "`period` must be non-zero.")]
fn interval_of_zero_panics() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        time::interval(Duration::ZERO);
    });
}

#[tokio::test(start_paused = true)]
async fn advance_moves_the_paused_clock_and_fires_timers() {
    let start = Instant::now();
    let sleeper = tokio::spawn(time::sleep(Duration::from_secs(5)));
    time::advance(Duration::from_secs(7)).await;
    assert_eq!(start.elapsed(), Duration::from_secs(7));
    sleeper.await.unwrap();
    assert_eq!(start.elapsed(), Duration::from_secs(7));
}

#[tokio::test(start_paused = true)]
async fn resume_then_pause_again() {
    time::resume();
    time::pause();
    let start = Instant::now();
    time::sleep(Duration::from_millis(10)).await;
    // Real time passed between resume and pause, so the clock may sit
    // between millisecond ticks: the sleep ends on the next tick.
    let elapsed = start.elapsed();
    assert!(elapsed >= Duration::from_millis(10), "{elapsed:?}");
    assert!(elapsed <= Duration::from_millis(11), "{elapsed:?}");
}

#[tokio::test(start_paused = true)]
#[should_panic(expected = "time is already frozen")]
async fn pausing_twice_panics() {
    time::pause();
}

#[tokio::test]
#[should_panic(expected = "time is not frozen")]
async fn advance_without_pause_panics() {
    time::advance(Duration::from_secs(1)).await;
}

#[tokio::test(start_paused = true)]
async fn timers_with_equal_deadlines_all_fire() {
    let start = Instant::now();
    let handles: Vec<_> = (0..10)
        .map(|_| tokio::spawn(time::sleep(Duration::from_secs(1))))
        .collect();
    for h in handles {
        h.await.unwrap();
    }
    assert_eq!(start.elapsed(), Duration::from_secs(1));
}

#[test]
fn timer_errors_describe_themselves() {
    use tokio::time::error::Error;
    assert!(Error::shutdown().is_shutdown());
    assert!(Error::at_capacity().is_at_capacity());
    assert!(Error::invalid().is_invalid());
    assert!(!Error::invalid().is_shutdown());
}

#[tokio::test(start_paused = true)]
async fn a_sleep_of_years_is_no_failure() {
    // Paused time has no limit: two years pass at once.
    let start = Instant::now();
    let years = Duration::from_secs(2 * 365 * 24 * 3600);
    time::sleep(years).await;
    assert_eq!(start.elapsed(), years);
}

/// Counts its wakes.
struct Wakes(std::sync::atomic::AtomicUsize);

impl std::task::Wake for Wakes {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn resetting_a_sleep_to_the_past_wakes_its_task_inside_reset() {
    let wakes = std::sync::Arc::new(Wakes(std::sync::atomic::AtomicUsize::new(0)));
    let waker = std::task::Waker::from(wakes.clone());
    let mut cx = std::task::Context::from_waker(&waker);
    let mut sleep = std::pin::pin!(time::sleep(Duration::from_secs(10)));
    assert!(std::future::Future::poll(sleep.as_mut(), &mut cx).is_pending());
    sleep.as_mut().reset(Instant::now());
    assert_eq!(wakes.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(std::future::Future::poll(sleep.as_mut(), &mut cx).is_ready());
}

/// On a clock that is not paused, time passes while tasks are busy: a
/// task that spins on `yield_now` until a timer fires sees it fire (in the
/// simulator, busy polls cost virtual time, as real ones cost real time).
#[tokio::test]
async fn a_busy_task_does_not_stop_the_clock_for_a_timer() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let fired = Arc::new(AtomicBool::new(false));
    let flag = fired.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        flag.store(true, Ordering::SeqCst);
    });
    let start = tokio::time::Instant::now();
    // Bounded: the timer fires within 10 ms of (virtual or real) time.
    while !fired.load(Ordering::SeqCst) {
        tokio::task::yield_now().await;
    }
    assert!(start.elapsed() >= Duration::from_millis(10));
}

/// The same for a std thread's sleep beside the spinning task.
#[tokio::test]
async fn a_busy_task_does_not_stop_the_clock_for_a_threads_sleep() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let done = Arc::new(AtomicBool::new(false));
    let flag = done.clone();
    let thread = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(10));
        flag.store(true, Ordering::SeqCst);
    });
    // Bounded: the thread wakes after 10 ms.
    while !done.load(Ordering::SeqCst) {
        tokio::task::yield_now().await;
    }
    thread.join().unwrap();
}

/// A paused clock does not move while a blocking task runs, even past a
/// timeout shorter than the task's sleep: that sleep is the system's time.
#[tokio::test(start_paused = true)]
async fn a_paused_clock_waits_for_a_blocking_task() {
    let start = tokio::time::Instant::now();
    tokio::time::timeout(
        Duration::from_millis(1),
        tokio::task::spawn_blocking(|| std::thread::sleep(Duration::from_millis(50))),
    )
    .await
    .expect("the timeout does not fire while the blocking task runs")
    .unwrap();
    assert!(start.elapsed() < Duration::from_millis(1));
}
