//! The sites: each assertion's call site as a static, the kinds, and the
//! registry every site joins before `main`. Nothing here knows the core.

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// The kinds of assertion, as in Antithesis's SDK.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// The condition holds every time, and the site is reached at least
    /// once in a sweep.
    Always,
    /// The condition holds every time the site is reached (maybe never).
    AlwaysOrUnreachable,
    /// The condition holds at least once in a sweep.
    Sometimes,
    /// The site is reached at least once in a sweep.
    Reachable,
    /// The site is never reached.
    Unreachable,
}

/// Every kind, in the order reports list them.
const KINDS: [Kind; 5] = [
    Kind::Always,
    Kind::AlwaysOrUnreachable,
    Kind::Sometimes,
    Kind::Reachable,
    Kind::Unreachable,
];

impl Kind {
    /// The kind's name in records and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Always => "always",
            Kind::AlwaysOrUnreachable => "always-or-unreachable",
            Kind::Sometimes => "sometimes",
            Kind::Reachable => "reachable",
            Kind::Unreachable => "unreachable",
        }
    }

    /// The kind named `name`.
    pub fn parse(name: &str) -> Option<Kind> {
        KINDS.into_iter().find(|k| k.as_str() == name)
    }

    /// Whether a sweep passes only if some run satisfies it: an `always`
    /// must be reached, a `sometimes` must hold once, a `reachable` must
    /// be reached.
    pub fn needs_a_witness(self) -> bool {
        matches!(self, Kind::Always | Kind::Sometimes | Kind::Reachable)
    }

    /// Whether one evaluation with this outcome fails the run.
    pub fn fails_on(self, holds: bool) -> bool {
        match self {
            Kind::Always | Kind::AlwaysOrUnreachable => !holds,
            Kind::Unreachable => true,
            Kind::Sometimes | Kind::Reachable => false,
        }
    }

    /// Whether a run whose evaluations held `held` times and not
    /// `broken` times satisfied the property (for a run that reached it).
    pub fn satisfied_by(self, held: u64, broken: u64) -> bool {
        match self {
            Kind::Always | Kind::AlwaysOrUnreachable => broken == 0,
            Kind::Sometimes => held > 0,
            Kind::Reachable => held + broken > 0,
            Kind::Unreachable => false,
        }
    }
}

/// One assertion's call site: what the macros put in a static.
pub struct Site {
    /// Its kind.
    pub kind: Kind,
    /// The message it was given (its name in reports).
    pub message: &'static str,
    /// Where it is: `file!()`.
    pub file: &'static str,
    /// `line!()`.
    pub line: u32,
    /// `column!()`.
    pub column: u32,
    /// Its index in the registry plus one; 0 until registered.
    slot: AtomicUsize,
    /// The next site registered before it (the registry is a list).
    next: AtomicPtr<Site>,
}

/// The sites registered, newest first (a lock-free list: constructors run
/// before `main`, where nothing else is set up).
static HEAD: AtomicPtr<Site> = AtomicPtr::new(std::ptr::null_mut());
/// How many sites are registered.
static COUNT: AtomicUsize = AtomicUsize::new(0);

impl Site {
    /// A site (what the macros build, in a static).
    pub const fn new(
        kind: Kind,
        message: &'static str,
        file: &'static str,
        line: u32,
        column: u32,
    ) -> Site {
        Site {
            kind,
            message,
            file,
            line,
            column,
            slot: AtomicUsize::new(0),
            next: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Adds the site to the registry, once; its index.
    pub fn register(&'static self) -> usize {
        let slot = self.slot.load(Ordering::Acquire);
        if slot != 0 {
            return slot - 1;
        }
        let claimed = COUNT.fetch_add(1, Ordering::AcqRel) + 1;
        if let Err(taken) =
            self.slot
                .compare_exchange(0, claimed, Ordering::AcqRel, Ordering::Acquire)
        {
            // Another thread registered it first; the claimed index stays
            // unused (the counts are sized by the count, so it costs a slot).
            return taken - 1;
        }
        let me = self as *const Site as *mut Site;
        let mut head = HEAD.load(Ordering::Acquire);
        loop {
            self.next.store(head, Ordering::Relaxed);
            match HEAD.compare_exchange_weak(head, me, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return claimed - 1,
                Err(now) => head = now,
            }
        }
    }

    /// Its index in the registry, if it is registered.
    pub(super) fn index(&self) -> Option<usize> {
        self.slot.load(Ordering::Acquire).checked_sub(1)
    }

    /// `file:line:column`.
    pub fn location(&self) -> String {
        format!("{}:{}:{}", self.file, self.line, self.column)
    }
}

/// Every registered site, in order of file, line and column.
pub fn sites() -> Vec<&'static Site> {
    let mut out = Vec::new();
    let mut at = HEAD.load(Ordering::Acquire);
    // Bounded by the registry's length: each site is in the list once.
    while !at.is_null() && out.len() <= COUNT.load(Ordering::Acquire) {
        // SAFETY: only `&'static Site`s are pushed onto the list.
        let site: &'static Site = unsafe { &*at };
        out.push(site);
        at = site.next.load(Ordering::Acquire);
    }
    out.sort_by_key(|s| (s.file, s.line, s.column, s.message));
    out
}

/// A site's counts in one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reached {
    /// The site.
    pub site: &'static Site,
    /// Evaluations that held.
    pub held: u64,
    /// Evaluations that did not.
    pub broken: u64,
    /// Evaluations that held after the run's last branch point (all of
    /// them in a run that did not branch).
    pub fresh: u64,
}

impl std::fmt::Debug for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} \"{}\" at {}",
            self.kind.as_str(),
            self.message,
            self.location()
        )
    }
}

impl PartialEq for Site {
    fn eq(&self, other: &Site) -> bool {
        std::ptr::eq(self, other)
    }
}

impl Eq for Site {}

#[cfg(test)]
mod tests {
    use super::*;

    static FIRST: Site = Site::new(Kind::Sometimes, "first", "a.rs", 1, 1);
    static SECOND: Site = Site::new(Kind::Always, "second", "a.rs", 2, 1);

    #[test]
    fn a_site_registers_once_and_is_listed() {
        let a = FIRST.register();
        let b = SECOND.register();
        assert_ne!(a, b);
        assert_eq!(FIRST.register(), a);
        let listed: Vec<&str> = sites()
            .into_iter()
            .filter(|s| s.file == "a.rs")
            .map(|s| s.message)
            .collect();
        assert_eq!(listed, ["first", "second"]);
    }

    #[test]
    fn each_kind_says_what_satisfies_and_what_fails_it() {
        assert!(Kind::Always.fails_on(false) && !Kind::Always.fails_on(true));
        assert!(Kind::Unreachable.fails_on(true));
        assert!(!Kind::Sometimes.fails_on(false));
        assert!(Kind::Sometimes.satisfied_by(1, 9) && !Kind::Sometimes.satisfied_by(0, 9));
        assert!(Kind::Reachable.satisfied_by(0, 1));
        assert!(Kind::Always.needs_a_witness() && !Kind::AlwaysOrUnreachable.needs_a_witness());
        for kind in KINDS {
            assert_eq!(Kind::parse(kind.as_str()), Some(kind));
        }
    }

    #[test]
    fn an_evaluation_outside_a_run_does_nothing() {
        static OUTSIDE: Site = Site::new(Kind::Unreachable, "outside", "b.rs", 1, 1);
        OUTSIDE.observe(true, None);
    }
}
