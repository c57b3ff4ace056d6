/// Pins values on the stack: `pin!(a, b)` shadows each with a
/// `Pin<&mut _>`; `pin! { let x = expr; }` binds and pins.
#[macro_export]
macro_rules! pin {
    ($($x:ident),* $(,)?) => { $(
        // The value moves into the pinned place, so the original can never
        // be reached again (`core::pin::pin!`: no unsafe code here).
        #[allow(unused_mut)]
        let mut $x = ::core::pin::pin!($x);
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
