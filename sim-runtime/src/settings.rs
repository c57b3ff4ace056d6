//! Every `SIM_*` setting, in one table.
//!
//! A setting is a [`Setting`]: its variable's name, the kind of value it
//! takes, its default and one line of doc. [`ALL`] lists them, and the
//! environment is read through them alone ([`Setting::value`] and its
//! kin), so this file is the one place a newcomer looks for what a
//! variable does and who reads it. `cargo sim test --help` and the
//! guide's table (`docs/settings.md`) are made from [`ALL`]
//! ([`help_table`], [`markdown_table`]), and a test holds the guide to it.
//!
//! A `SIM_*` variable that is no setting (a typo: `SIM_SEEDS`) would be
//! ignored without a word; [`unknown`] names each one with the setting it
//! is nearest to, and `cargo sim` and a run's launch warn of it
//! ([`warn_unknown`]).

use std::ffi::OsString;

/// The kind of value a setting takes, as its help shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A seed: decimal or `0x` hex.
    Seed,
    /// A whole number.
    Count,
    /// A whole number of seconds.
    Seconds,
    /// A whole number of nanoseconds.
    Nanoseconds,
    /// `1` turns it on.
    Flag,
    /// A file or directory.
    Path,
    /// One of a few words.
    Choice(&'static [&'static str]),
    /// A list, as the doc says.
    List,
}

impl Kind {
    /// How `--help` and the README name the kind.
    pub fn describe(self) -> String {
        match self {
            Kind::Seed => "seed".to_string(),
            Kind::Count => "count".to_string(),
            Kind::Seconds => "seconds".to_string(),
            Kind::Nanoseconds => "ns".to_string(),
            Kind::Flag => "1".to_string(),
            Kind::Path => "path".to_string(),
            Kind::Choice(words) => words.join("|"),
            Kind::List => "list".to_string(),
        }
    }
}

/// Who sets a setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Audience {
    /// The user (or a replay line the runner printed).
    User,
    /// `cargo sim`, for the processes it starts: its protocol with them.
    Runner,
}

/// One `SIM_*` variable.
#[derive(Debug)]
pub struct Setting {
    /// The variable's name.
    pub name: &'static str,
    /// The kind of value it takes.
    pub kind: Kind,
    /// What applies when it is unset (`-`: nothing).
    pub default: &'static str,
    /// One line of doc.
    pub doc: &'static str,
    /// Who sets it.
    pub audience: Audience,
}

impl Setting {
    /// Its value, when set and valid Unicode (an empty value counts as set).
    pub fn value(&self) -> Option<String> {
        std::env::var(self.name).ok()
    }

    /// Its value as `std::env::var` gives it: unset and not Unicode are
    /// told apart.
    pub fn var(&self) -> Result<String, std::env::VarError> {
        std::env::var(self.name)
    }

    /// Its value, when set and not empty (or only spaces).
    pub fn non_empty(&self) -> Option<String> {
        self.value().filter(|v| !v.trim().is_empty())
    }

    /// Its value as the OS gives it (a path need not be Unicode).
    pub fn value_os(&self) -> Option<OsString> {
        std::env::var_os(self.name)
    }

    /// Its value as the OS gives it, when set and not empty.
    pub fn path(&self) -> Option<std::path::PathBuf> {
        self.value_os()
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from)
    }

    /// Whether the variable is set at all.
    pub fn is_set(&self) -> bool {
        std::env::var_os(self.name).is_some()
    }

    /// A flag's state: `1`, `true` or `yes` turn it on.
    pub fn is_on(&self) -> bool {
        self.value()
            .is_some_and(|v| matches!(v.trim(), "1" | "true" | "yes"))
    }
}

const fn user(name: &'static str, kind: Kind, default: &'static str, doc: &'static str) -> Setting {
    Setting {
        name,
        kind,
        default,
        doc,
        audience: Audience::User,
    }
}

const fn runner(name: &'static str, kind: Kind, doc: &'static str) -> Setting {
    Setting {
        name,
        kind,
        default: "-",
        doc,
        audience: Audience::Runner,
    }
}

/// Declares each setting as a `pub const` and lists them all in [`ALL`],
/// in the order declared (the order help shows them), so no setting can be
/// declared and left out of the list.
macro_rules! settings {
    ($($(#[$doc:meta])* $name:ident = $make:ident($($arg:expr),* $(,)?);)*) => {
        $($(#[$doc])* pub const $name: Setting = $make($($arg),*);)*
        /// Every setting: the user's first, in the order help shows them.
        pub const ALL: &[&Setting] = &[$(&$name),*];
    };
}

settings! {
    /// The seed of every run.
    SEED = user("SIM_SEED", Kind::Seed, "fresh",
        "the seed of every run; unset: a fresh seed per run (cargo sim test: one for the whole run, in each replay line)");
    /// The trace file.
    TRACE = user("SIM_TRACE", Kind::Path, "-",
        "write each run's trace here; under cargo sim test, a one-seed run (a replay line) writes it, a sweep uses --trace DIR");
    /// The decision file to write.
    RECORD = user(
        "SIM_RECORD",
        Kind::Path,
        "-",
        "write each run's decision file here (its seed, settings and every choice)",
    );
    /// The decision file to replay.
    REPLAY = user(
        "SIM_REPLAY",
        Kind::Path,
        "-",
        "replay the run a decision file records: its seed, settings and choices",
    );
    /// The branch points of a branch run.
    BRANCH = user(
        "SIM_BRANCH",
        Kind::List,
        "-",
        "a branch run's points (<salt>@<n>@<file:line:column>;...): at each, every stream draws afresh; a branch run's replay line sets it",
    );
    /// Payload bytes a trace line shows.
    TRACE_BYTES = user(
        "SIM_TRACE_BYTES",
        Kind::Count,
        "32",
        "how many bytes of each message a trace line shows (not hashed)",
    );
    /// The service's `tracing` events in the trace.
    TRACE_LOGS = user(
        "SIM_TRACE_LOGS",
        Kind::Choice(&["error", "warn", "info", "debug", "trace"]),
        "-",
        "the service's tracing events at this level go into the trace file (not hashed)",
    );
    /// The virtual-time limit.
    TIME_LIMIT_S = user(
        "SIM_TIME_LIMIT_S",
        Kind::Seconds,
        "none",
        "fail a run whose virtual clock would pass this (paused tokio has no limit either)",
    );
    /// The step limit.
    STEP_LIMIT = user(
        "SIM_STEP_LIMIT",
        Kind::Count,
        "200000000",
        "fail a run after this many polls",
    );
    /// The livelock limit.
    INSTANT_STEP_LIMIT = user(
        "SIM_INSTANT_STEP_LIMIT",
        Kind::Count,
        "2000000",
        "fail a run (livelock) after this many polls with no event (a timer, a delivery) between them",
    );
    /// The cost of a poll in virtual time.
    POLL_COST_MAX_NS = user(
        "SIM_POLL_COST_MAX_NS",
        Kind::Nanoseconds,
        "0",
        "each poll takes a draw in 0..= this much virtual time, so timers fire in the middle of work (0: 0.5-2 us a poll on a clock that is not paused, none on a paused one)",
    );
    /// What `SystemTime::now()` reads at the start.
    EPOCH_UNIX_S = user(
        "SIM_EPOCH_UNIX_S",
        Kind::Seconds,
        "1735689600",
        "what SystemTime::now() reads when a run starts, since 1970 (2025-01-01)",
    );
    /// The scheduling policy.
    POLICY = user(
        "SIM_POLICY",
        Kind::Choice(&["random", "pct", "fifo"]),
        "random",
        "how the next ready task is picked (fifo: the first ready runs first, as on tokio's current_thread runtime)",
    );
    /// PCT's depth.
    PCT_DEPTH = user(
        "SIM_PCT_DEPTH",
        Kind::Count,
        "3",
        "pct: the ordering constraints aimed at (an error without SIM_POLICY=pct)",
    );
    /// PCT's horizon.
    PCT_HORIZON = user("SIM_PCT_HORIZON", Kind::Count, "10000",
        "pct: the scheduling decisions the change points spread over (measured by cargo sim test for #[tokio::test]s)");
    /// The one-host swarm.
    SWARM = user("SIM_SWARM", Kind::Flag, "-",
        "each run of a plain test draws a one-host swarm: loopback latency, segment cuts, UDP drops, disk faults, poll cost (--swarm)");
    /// Real threads.
    ALLOW_THREADS = user(
        "SIM_ALLOW_THREADS",
        Kind::Flag,
        "-",
        "let runs start real, parallel OS threads (gives up determinism)",
    );
    /// Real processes.
    ALLOW_PROCESSES = user(
        "SIM_ALLOW_PROCESSES",
        Kind::Flag,
        "-",
        "let runs start real processes (gives up determinism)",
    );
    /// The hang watchdog's budget for one poll.
    HANG_POLL_S = user(
        "SIM_HANG_POLL_S",
        Kind::Seconds,
        "5",
        "under cargo sim test: the wall seconds one poll may take before it is a hang",
    );
    /// The hang watchdog's budget for one run.
    HANG_RUN_S = user(
        "SIM_HANG_RUN_S",
        Kind::Seconds,
        "300",
        "under cargo sim test: the wall seconds one run may take before it is a hang",
    );
    /// Every run's seed and hash lines.
    VERBOSE = user(
        "SIM_VERBOSE",
        Kind::Flag,
        "-",
        "every run prints its seed, replay command and trace hash, not only a failing one (-v)",
    );
    /// Where the facade is.
    TOKIO_PATH = user(
        "SIM_TOKIO_PATH",
        Kind::Path,
        "built-in",
        "where cargo sim finds the facade (sim-tokio/ of the checkout cargo sim was built from)",
    );
    /// Harness fault units left out.
    SHRINK_SKIP = user(
        "SIM_SHRINK_SKIP",
        Kind::List,
        "-",
        "harness fault units left out, 3,7 (a shrunk run's replay line)",
    );
    /// Every link at 0 ms.
    SHRINK_FAST_LINKS = user(
        "SIM_SHRINK_FAST_LINKS",
        Kind::Flag,
        "-",
        "every harness link at 0 ms (a shrunk run's replay line)",
    );
    /// Harness fault units applied later.
    SHRINK_LATER = user(
        "SIM_SHRINK_LATER",
        Kind::List,
        "-",
        "harness fault units applied later, unit:ns,... (a shrunk run's replay line)",
    );
    /// Where a harness run lists its faults.
    SHRINK_OUT = runner(
        "SIM_SHRINK_OUT",
        Kind::Path,
        "where a harness run lists the faults it applied (--shrink)",
    );
    /// Where a run lists what each link draw was for.
    SHRINK_DRAWS_OUT = runner("SIM_SHRINK_DRAWS_OUT", Kind::Path,
        "where a run lists what each link draw was for, so a shrink names the draws a failure needs (--shrink)");
    /// A program's replay line.
    CARGO_ARGS = runner(
        "SIM_CARGO_ARGS",
        Kind::List,
        "the cargo arguments a program's replay line shows (cargo sim run)",
    );
    /// A test's replay line.
    REPLAY_PREFIX = runner(
        "SIM_REPLAY_PREFIX",
        Kind::List,
        "the command a test's replay line starts with",
    );
    /// The file a swept test process appends its records to.
    SWEEP_OUT = runner(
        "SIM_SWEEP_OUT",
        Kind::Path,
        "the file a swept test process appends its records to",
    );
    /// A branch job's other salts (the fork server).
    BRANCH_FORK = runner(
        "SIM_BRANCH_FORK",
        Kind::List,
        "a branch job's other salts for its plan's last point, comma-separated hex: the process forks there, one child per salt",
    );
    /// Where a branch job's process looks before each fork.
    BRANCH_STOP = runner(
        "SIM_BRANCH_STOP",
        Kind::Path,
        "a file that, once it exists, tells a branch job's process to fork no more children",
    );
    /// A sweep's seeds.
    SWEEP_SEEDS = runner(
        "SIM_SWEEP_SEEDS",
        Kind::List,
        "the seeds a test process runs, comma-separated, in hex",
    );
    /// Every seed, not only up to the first failure.
    SWEEP_KEEP_GOING = runner(
        "SIM_SWEEP_KEEP_GOING",
        Kind::Flag,
        "run every seed, not only up to the first failure (--keep-going)",
    );
    /// Where every run of a sweep writes its trace.
    SWEEP_TRACE_DIR = runner(
        "SIM_SWEEP_TRACE_DIR",
        Kind::Path,
        "a directory where every run of a sweep writes its trace",
    );
    /// Traces named by test and seed.
    SWEEP_TRACE_NAMED = runner(
        "SIM_SWEEP_TRACE_NAMED",
        Kind::Flag,
        "traces in SIM_SWEEP_TRACE_DIR are named <test>-<seed>.trace (--trace)",
    );
    /// The runner's process id.
    SWEEP_PARENT = runner(
        "SIM_SWEEP_PARENT",
        Kind::Count,
        "the runner's process id: only its own children report",
    );
    /// The policy portfolio.
    SWEEP_PORTFOLIO = runner(
        "SIM_SWEEP_PORTFOLIO",
        Kind::Flag,
        "each seed's policy comes from the portfolio (a sweep of many seeds)",
    );
    /// The file a swarm's measuring run appends its end times to.
    SWARM_MEASURE = runner(
        "SIM_SWARM_MEASURE",
        Kind::Path,
        "the file a swarm's measuring run appends its end times to",
    );
}

/// The setting of this name.
pub fn find(name: &str) -> Option<&'static Setting> {
    ALL.iter().copied().find(|s| s.name == name)
}

/// The table `cargo sim test --help` prints: each setting's name, value
/// and default on a line, its doc on the next; the user's, then the
/// runner's own.
pub fn help_table() -> String {
    let mut out = String::new();
    for audience in [Audience::User, Audience::Runner] {
        if audience == Audience::Runner {
            out.push_str("  set by cargo sim for the processes it starts:\n");
        }
        for setting in ALL.iter().filter(|s| s.audience == audience) {
            let default = match setting.default {
                "-" => String::new(),
                d => format!("  (default: {d})"),
            };
            out.push_str(&format!(
                "    {}=<{}>{default}\n            {}\n",
                setting.name,
                setting.kind.describe(),
                setting.doc
            ));
        }
    }
    out
}

/// The guide's table of settings (`docs/settings.md`), in Markdown.
pub fn markdown_table() -> String {
    let mut out =
        String::from("| variable | value | default | meaning |\n| --- | --- | --- | --- |\n");
    for setting in ALL.iter().filter(|s| s.audience == Audience::User) {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            setting.name,
            setting.kind.describe().replace('|', "\\|"),
            setting.default,
            setting.doc
        ));
    }
    out.push_str("\nSet by `cargo sim` for the processes it starts, not by you: ");
    let names: Vec<String> = ALL
        .iter()
        .filter(|s| s.audience == Audience::Runner)
        .map(|s| format!("`{}`", s.name))
        .collect();
    out.push_str(&names.join(", "));
    out.push_str(".\n");
    out
}

/// Each `SIM_*` variable of `names` that is no setting, with the setting
/// whose name is nearest (when one is near enough to be a typo of it).
pub fn unknown<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> Vec<(String, Option<&'static str>)> {
    let mut out: Vec<(String, Option<&'static str>)> = names
        .into_iter()
        .filter(|n| n.starts_with("SIM_") && find(n).is_none())
        .map(|n| (n.to_string(), nearest(n)))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Prints a warning for each `SIM_*` variable of this process's
/// environment that is no setting ([`unknown`]), naming the nearest.
pub fn warn_unknown() {
    let names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .collect();
    for (name, near) in unknown(names.iter().map(String::as_str)) {
        match near {
            Some(near) => eprintln!("sim: warning: {name} is not a setting; did you mean {near}?"),
            None => eprintln!(
                "sim: warning: {name} is not a setting and is ignored (`cargo sim test --help` \
                 lists them)"
            ),
        }
    }
}

/// The setting nearest `name` by edit distance, if within a third of its
/// length (at least 2 edits: `SIM_SEEDS` finds `SIM_SEED`).
fn nearest(name: &str) -> Option<&'static str> {
    let bound = (name.len() / 3).max(2);
    ALL.iter()
        .map(|s| (edit_distance(name, s.name), s.name))
        .filter(|(d, _)| *d <= bound)
        .min()
        .map(|(_, n)| n)
}

/// Levenshtein distance (names are short: O(a * b) is nothing).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb))
                .min(above + 1)
                .min(row[j] + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_all_sim_variables() {
        let mut names: Vec<&str> = ALL.iter().map(|s| s.name).collect();
        assert!(names.iter().all(|n| n.starts_with("SIM_")));
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        assert_eq!(before, names.len(), "a setting is listed twice");
    }

    #[test]
    fn a_typo_names_the_setting_it_is_nearest() {
        // Typos of real names: one letter more, one less, one changed.
        let more = format!("{}S", SEED.name);
        let less = SEED.name.replace("EE", "E");
        let changed = TRACE.name.replace("CE", "SE");
        let far = format!("{}_WHOLLY_UNLIKE_ANY_OTHER", SEED.name);
        let found = unknown([
            more.as_str(),
            less.as_str(),
            changed.as_str(),
            far.as_str(),
            SEED.name,
            "PATH",
        ]);
        let mut expected = vec![
            (more, Some(SEED.name)),
            (less, Some(SEED.name)),
            (changed, Some(TRACE.name)),
            (far, None),
        ];
        expected.sort();
        assert_eq!(found, expected);
    }

    #[test]
    fn edit_distance_counts_insertions_deletions_and_swaps() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("SIM_SEED", "SIM_SEED"), 0);
    }

    #[test]
    fn help_lists_every_setting_once() {
        let help = help_table();
        for setting in ALL {
            assert_eq!(
                help.matches(&format!(" {}=<", setting.name)).count(),
                1,
                "{}",
                setting.name
            );
        }
    }
}
