/// Pins values on the stack: `pin!(a, b)` shadows each with a
/// `Pin<&mut _>`; `pin! { let x = expr; }` binds and pins.
#[macro_export]
macro_rules! pin {
    ($($x:ident),* $(,)?) => { $(
        // Move the value so the original can never be reached again, then
        // pin the only remaining binding.
        let mut $x = $x;
        #[allow(unused_mut)]
        let mut $x = unsafe {
            ::core::pin::Pin::new_unchecked(&mut $x)
        };
    )* };
    ($(
            let $x:ident = $init:expr;
    )*) => {
        $(
            let $x = $init;
            $crate::pin!($x);
        )*
    };
}
