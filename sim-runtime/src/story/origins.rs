//! Where each task came from (its `Builder` name or its spawn site, and
//! its kind), by task id: a report names any task, however long ago it
//! ended.
//!
//! A spawn records its task here without the story's lock and in four
//! bytes: a run has a handful of distinct origins (one per spawn site), so
//! each is kept once and a task keeps its origin's number. A copy of the
//! origin and a lock per spawn were 14% of the cost of spawning and
//! joining 100,000 tasks. The hang watchdog reads the numbers from its own
//! thread, so they are atomics (a store costs what a plain one does).

use crate::task::TaskMeta;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, DefaultHasher};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

/// Task ids in the first chunk of the table by id; each next chunk holds
/// twice as many, so a short run (a sweep's seed) makes one small chunk
/// and a long one few large ones.
const FIRST_CHUNK_IDS: usize = 1 << 10;
/// Chunks: the most tasks whose origins are kept is
/// `FIRST_CHUNK_IDS * (2^CHUNKS - 1)`, about 16M (a run of more names the
/// rest by id alone).
const CHUNKS: usize = 14;

/// `len` atomics of 0, from zeroed memory: no loop over them (a debug
/// build, as tests run, would pay one per id in every run).
fn zeroed(len: usize) -> Box<[AtomicU32]> {
    // `vec![0; n]` asks the allocator for zeroed memory.
    let raw = Box::into_raw(vec![0u32; len].into_boxed_slice()) as *mut [AtomicU32];
    // SAFETY: `AtomicU32` has the size, alignment and bit validity of a
    // `u32` (as its docs guarantee), so the allocation holds `len` atomics
    // of 0, and the box frees it with the layout it was made with.
    unsafe { Box::from_raw(raw) }
}

/// The chunk of task id `index` and its place in it.
fn chunk_of(index: usize) -> (usize, usize) {
    let chunk = (index / FIRST_CHUNK_IDS + 1).ilog2() as usize;
    let first = FIRST_CHUNK_IDS * ((1 << chunk) - 1);
    (chunk, index - first)
}

/// A task as a report names it.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Origin {
    name: Option<Box<str>>,
    kind: &'static str,
    /// The spawn site, compared as one (each call site is one static).
    site: SiteRef,
}

/// A spawn site, equal and hashed by address.
#[derive(Clone, Copy)]
struct SiteRef(&'static std::panic::Location<'static>);

impl PartialEq for SiteRef {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl Eq for SiteRef {}

impl std::hash::Hash for SiteRef {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::ptr::hash(self.0, state);
    }
}

/// The distinct origins and, by task id, which one each task has.
pub(crate) struct Origins {
    interned: Mutex<Interned>,
    /// By task id, its origin's number plus one (0: not known), in
    /// [`CHUNKS`] chunks of growing size (see [`chunk_of`]).
    by_id: Box<[OnceLock<Box<[AtomicU32]>>]>,
}

impl Default for Origins {
    fn default() -> Origins {
        Origins {
            interned: Mutex::default(),
            by_id: (0..CHUNKS).map(|_| OnceLock::new()).collect(),
        }
    }
}

#[derive(Default)]
struct Interned {
    list: Vec<Origin>,
    /// Only looked up, never walked: its order shows nowhere. Its hasher
    /// has fixed keys: std's default draws its keys from `getrandom`, which
    /// a simulation answers from the seed's stream (a draw the run's own
    /// code did not make would move every later one).
    numbers: HashMap<Origin, u32, BuildHasherDefault<DefaultHasher>>,
}

/// The last unnamed origin a core recorded, kept by the core: spawns in a
/// loop share their site, and the next finds its number without a lock.
#[derive(Clone, Copy, Default)]
pub(crate) struct LastOrigin(Option<(SiteRef, &'static str, u32)>);

impl Origins {
    /// Records that task `id` comes from `meta`.
    pub(crate) fn record(&self, id: u64, meta: &TaskMeta, last: &mut LastOrigin) {
        let site = SiteRef(meta.location);
        let number = match last.0 {
            Some((s, kind, number)) if meta.name.is_none() && s == site && kind == meta.kind => {
                number
            }
            _ => {
                let number = self.intern(Origin {
                    name: meta.name.clone(),
                    kind: meta.kind,
                    site,
                });
                if meta.name.is_none() {
                    *last = LastOrigin(Some((site, meta.kind, number)));
                }
                number
            }
        };
        if let Some(entry) = self.entry(id, true) {
            entry.store(number + 1, Ordering::Relaxed);
        }
    }

    /// The number of `origin`, given one if it is new.
    fn intern(&self, origin: Origin) -> u32 {
        let mut interned = self
            .interned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(&number) = interned.numbers.get(&origin) {
            return number;
        }
        let number = u32::try_from(interned.list.len()).expect("fewer than 4G spawn sites");
        interned.list.push(origin.clone());
        interned.numbers.insert(origin, number);
        number
    }

    /// Task `id`'s entry; its chunk is made when `make` (a spawn) asks.
    fn entry(&self, id: u64, make: bool) -> Option<&AtomicU32> {
        let (chunk, at) = chunk_of(usize::try_from(id).ok()?);
        let ids = FIRST_CHUNK_IDS << chunk;
        let cell = self.by_id.get(chunk)?;
        let chunk = if make {
            cell.get_or_init(|| zeroed(ids))
        } else {
            cell.get()?
        };
        Some(&chunk[at])
    }

    /// Task `id`'s name, kind and spawn site; `None` for an unknown id.
    pub(crate) fn meta(&self, id: u64) -> Option<TaskMeta> {
        let number = self
            .entry(id, false)?
            .load(Ordering::Relaxed)
            .checked_sub(1)?;
        let interned = self
            .interned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let origin = interned.list.get(number as usize)?;
        Some(TaskMeta {
            name: origin.name.clone(),
            location: origin.site.0,
            kind: origin.kind,
        })
    }

    /// Task `id` as a user finds it: its `Builder` name, or where it was
    /// spawned (`src/client.rs:40`); `None` for an unknown id.
    pub(crate) fn task_name(&self, id: u64) -> Option<String> {
        let meta = self.meta(id)?;
        let site = format!("{}:{}", meta.location.file(), meta.location.line());
        Some(match (&meta.name, meta.kind) {
            (Some(name), _) => format!("{name} at {site}"),
            (None, "task") => site,
            (None, kind) => format!("{kind} {site}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn meta(name: Option<&str>, kind: &'static str) -> TaskMeta {
        TaskMeta {
            name: name.map(Into::into),
            location: std::panic::Location::caller(),
            kind,
        }
    }

    #[test]
    fn each_task_keeps_its_own_origin_and_equal_origins_are_kept_once() {
        let origins = Origins::default();
        let mut last = LastOrigin::default();
        let plain = meta(None, "task");
        let named = meta(Some("worker"), "task");
        let local = meta(None, "local");
        for id in 1..=1000 {
            let meta = match id % 3 {
                0 => &plain,
                1 => &named,
                _ => &local,
            };
            origins.record(id, meta, &mut last);
        }
        let site = |m: &TaskMeta| format!("{}:{}", m.location.file(), m.location.line());
        assert_eq!(origins.task_name(999), Some(site(&plain)));
        assert_eq!(
            origins.task_name(1000),
            Some(format!("worker at {}", site(&named)))
        );
        assert_eq!(
            origins.task_name(998),
            Some(format!("local {}", site(&local)))
        );
        assert_eq!(origins.interned.lock().unwrap().list.len(), 3);
        // Never spawned, and past the table: unknown.
        assert_eq!(origins.task_name(1001), None);
        let past = (FIRST_CHUNK_IDS * ((1 << CHUNKS) - 1)) as u64;
        assert_eq!(origins.task_name(past), None);
        origins.record(past, &plain, &mut last);
        assert_eq!(origins.task_name(past), None);
        // The last id kept is the last place of the last chunk.
        let last_place = (FIRST_CHUNK_IDS << (CHUNKS - 1)) - 1;
        assert_eq!(chunk_of(past as usize - 1), (CHUNKS - 1, last_place));
    }

    /// Each id has a place of its own: the chunks follow one another with
    /// no gap and no overlap.
    #[test]
    fn the_chunks_tile_the_ids() {
        let mut expected = (0, 0);
        for index in 0..FIRST_CHUNK_IDS * ((1 << 6) - 1) {
            assert_eq!(chunk_of(index), expected, "id {index}");
            expected.1 += 1;
            if expected.1 == FIRST_CHUNK_IDS << expected.0 {
                expected = (expected.0 + 1, 0);
            }
        }
    }
}
