//! The records a test process appends to the runner's file
//! (`SIM_SWEEP_OUT`), one line each, one `write` per line so a crash never
//! tears one.

use super::vars::OUT_VAR;
use crate::escape::{escape_field, unescape_field};
use crate::failure::FailureClass;
use crate::property::{Kind, Site};
use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// One line of a sweep's result file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// `run_test` took charge of the seeds in this process.
    Sweep,
    /// A seed is about to run.
    Begin(u64),
    /// A runtime (one run) was built with this seed.
    Start(u64),
    /// A seed passed; the hash is its last run's.
    Pass {
        /// The seed.
        seed: u64,
        /// The last run's trace hash.
        hash: String,
    },
    /// A seed failed.
    Fail {
        /// The seed.
        seed: u64,
        /// Why.
        class: FailureClass,
        /// The failure's message.
        message: String,
    },
    /// A run (one runtime or harness) ended.
    Run {
        /// The seed.
        seed: u64,
        /// The run's trace hash.
        hash: String,
        /// Trace events.
        events: u64,
        /// Virtual time at its end, in ns.
        end_ns: u64,
    },
    /// A panic on a test thread outside an in-process sweep.
    Panic {
        /// The seed of the last run on that thread (0 when none ran).
        seed: u64,
        /// The class.
        class: FailureClass,
        /// The message.
        message: String,
    },
    /// The watchdog ended the process.
    Hang {
        /// The seed that was running.
        seed: u64,
        /// What was stuck.
        message: String,
    },
    /// A branch job's run with this salt at its last point starts (the
    /// fork server, `property::fork`): the records after it are that run's.
    Branched(u64),
    /// A forked branch run with this salt ended with this wait status
    /// (written by the process that waited for it).
    BranchEnded {
        /// Its salt.
        salt: u64,
        /// `waitpid`'s status.
        status: i32,
    },
    /// A branch job's process could not fork at its point, and why: its
    /// runs replay from the start.
    Unforked(String),
    /// A property site of the binary (one per site, before the first run).
    Declare(SiteRecord),
    /// A run reached a property site (written before the run's `run`).
    Property {
        /// The run's seed.
        seed: u64,
        /// The site.
        site: SiteRecord,
        /// Evaluations that held.
        held: u64,
        /// Evaluations that did not.
        broken: u64,
        /// Evaluations that held after the run's last branch point.
        fresh: u64,
    },
}

/// A property site as records name it: the same in every process of the
/// binary, so the runner adds up what each process saw.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SiteRecord {
    /// Its kind.
    pub kind: Kind,
    /// `file:line:column`.
    pub location: String,
    /// Its message.
    pub message: String,
}

impl SiteRecord {
    /// The record of a registered site.
    pub fn of(site: &Site) -> SiteRecord {
        SiteRecord {
            kind: site.kind,
            location: site.location(),
            message: site.message.to_string(),
        }
    }

    fn fields(&self) -> String {
        format!(
            "{}\t{}\t{}",
            self.kind.as_str(),
            escape_field(&self.location),
            escape_field(&self.message)
        )
    }

    fn parse(fields: &[&str]) -> Option<SiteRecord> {
        Some(SiteRecord {
            kind: Kind::parse(fields.first()?)?,
            location: unescape_field(fields.get(1)?),
            message: unescape_field(fields.get(2)?),
        })
    }
}

impl Record {
    /// The record as one line (without the newline).
    pub fn to_line(&self) -> String {
        match self {
            Record::Sweep => "sweep".to_string(),
            Record::Begin(seed) => format!("begin\t{seed:#x}"),
            Record::Start(seed) => format!("start\t{seed:#x}"),
            Record::Pass { seed, hash } => format!("pass\t{seed:#x}\t{hash}"),
            Record::Fail {
                seed,
                class,
                message,
            } => format!(
                "fail\t{seed:#x}\t{}\t{}",
                class.as_str(),
                escape_field(message)
            ),
            Record::Run {
                seed,
                hash,
                events,
                end_ns,
            } => format!("run\t{seed:#x}\t{hash}\t{events}\t{end_ns}"),
            Record::Panic {
                seed,
                class,
                message,
            } => format!(
                "panic\t{seed:#x}\t{}\t{}",
                class.as_str(),
                escape_field(message)
            ),
            Record::Hang { seed, message } => {
                format!("hang\t{seed:#x}\t{}", escape_field(message))
            }
            Record::Branched(salt) => format!("branched\t{salt:#x}"),
            Record::Unforked(why) => format!("unforked\t{}", escape_field(why)),
            Record::BranchEnded { salt, status } => format!("branch-ended\t{salt:#x}\t{status}"),
            Record::Declare(site) => format!("declare\t{}", site.fields()),
            Record::Property {
                seed,
                site,
                held,
                broken,
                fresh,
            } => format!(
                "property\t{seed:#x}\t{held}\t{broken}\t{fresh}\t{}",
                site.fields()
            ),
        }
    }

    /// Parses a line written by [`Record::to_line`]; `None` for anything
    /// else (a line cut short by a crash).
    pub fn parse(line: &str) -> Option<Record> {
        let fields: Vec<&str> = line.split('\t').collect();
        let seed = |i: usize| -> Option<u64> { crate::config::parse_seed(fields.get(i)?).ok() };
        let class = |i: usize| FailureClass::parse(fields.get(i)?);
        let text = |i: usize| fields.get(i).map(|f| unescape_field(f));
        Some(match *fields.first()? {
            "sweep" => Record::Sweep,
            "begin" => Record::Begin(seed(1)?),
            "start" => Record::Start(seed(1)?),
            "pass" => Record::Pass {
                seed: seed(1)?,
                hash: text(2)?,
            },
            "fail" => Record::Fail {
                seed: seed(1)?,
                class: class(2)?,
                message: text(3)?,
            },
            "run" => Record::Run {
                seed: seed(1)?,
                hash: text(2)?,
                events: fields.get(3)?.parse().ok()?,
                end_ns: fields.get(4)?.parse().ok()?,
            },
            "panic" => Record::Panic {
                seed: seed(1)?,
                class: class(2)?,
                message: text(3)?,
            },
            "hang" => Record::Hang {
                seed: seed(1)?,
                message: text(2)?,
            },
            "branched" => Record::Branched(seed(1)?),
            "unforked" => Record::Unforked(text(1)?),
            "branch-ended" => Record::BranchEnded {
                salt: seed(1)?,
                status: fields.get(2)?.parse().ok()?,
            },
            "declare" => Record::Declare(SiteRecord::parse(&fields[1..])?),
            "property" => Record::Property {
                seed: seed(1)?,
                held: fields.get(2)?.parse().ok()?,
                broken: fields.get(3)?.parse().ok()?,
                fresh: fields.get(4)?.parse().ok()?,
                site: SiteRecord::parse(fields.get(5..)?)?,
            },
            _ => return None,
        })
    }
}

pub(crate) fn out_file() -> Option<&'static Mutex<std::fs::File>> {
    static OUT: OnceLock<Option<Mutex<std::fs::File>>> = OnceLock::new();
    OUT.get_or_init(|| {
        let path = crate::settings::SWEEP_OUT.path()?;
        let parent: u32 = crate::settings::SWEEP_PARENT.value()?.trim().parse().ok()?;
        // SAFETY: getppid has no preconditions.
        if unsafe { libc::getppid() } as u32 != parent {
            return None;
        }
        // Opened before any run, so the real filesystem is reached even
        // when a run's file calls are simulated.
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            Ok(file) => Some(Mutex::new(file)),
            Err(e) => {
                eprintln!(
                    "sim: cannot open {OUT_VAR}={}: {e}; sweep results are lost",
                    std::path::Path::new(&path).display()
                );
                None
            }
        }
    })
    .as_ref()
}

/// Whether this process reports to a sweep runner.
pub fn reporting() -> bool {
    out_file().is_some()
}

/// Appends `record` to the sweep's result file, if there is one. Each
/// record is one `write` of a whole line, so a crash never tears one.
pub fn write_record(record: &Record) {
    if let Some(file) = out_file() {
        let mut line = record.to_line();
        line.push('\n');
        let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
        let _ = file.write_all(line.as_bytes());
    }
}
