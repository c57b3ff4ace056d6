//! The search for a linearization of one partition's operations: Wing &
//! Gong's backtracking, as Lowe improved it (every call and return in
//! one linked list, an operation lifted out of it when linearized), with
//! the states already ruled out remembered, as porcupine does.
//!
//! Operations whose result is unknown (`info`) never returned: each may
//! take effect at any point after its invocation, or never. Trying them
//! at every point would multiply the search by every subset of them, so
//! they are tried only where the operations that did return are stuck,
//! and a configuration that has used a superset of the unknown operations
//! another one used, in the same state with the same operations
//! linearized, is never explored (it can do no more than the other).

use super::bits::Bits;
use super::model::Model;
use crate::hash::{fx_hash, mix, FxBuild};
use crate::op::Op;
use crate::value::Value;
use std::collections::HashMap;

/// One operation of the partition, as the search sees it.
pub(crate) struct Input<'a> {
    pub op: &'a Op,
    /// Its result; `None` when unknown (`info`).
    pub output: Option<&'a Value>,
    /// The history index of its invocation.
    pub call: u64,
    /// The history index of its completion; `None` when it never returned.
    pub ret: Option<u64>,
}

/// What the search found.
pub(crate) enum Found {
    /// An order the model accepts.
    Linearizable,
    /// No order; `refused` holds the states (in words) in which the model
    /// refused the probed operation.
    Illegal { refused: Vec<String> },
    /// The budget ran out first.
    OutOfBudget,
}

/// The most states kept for the report of a refused operation.
const REFUSED_MAX: usize = 4;

/// No node: the end of the list.
const NIL: u32 = u32::MAX;

/// A call or return in the list.
#[derive(Clone, Copy)]
struct Node {
    /// The operation's index among the returned ones.
    op: u32,
    is_call: bool,
}

/// A configuration ruled out (or being explored): the returned operations
/// linearized, the state, and each set of unknown operations used with
/// them.
struct Seen<S> {
    done: Bits,
    state: S,
    used: Vec<Bits>,
}

/// Where a configuration goes on after a child fails.
enum Phase<S> {
    /// Trying the candidates from the configuration itself, at `cursor`.
    Direct { cursor: u32 },
    /// Trying them from the states the unknown operations lead to.
    Closure {
        configs: Vec<(S, Bits)>,
        config: usize,
        cursor: u32,
    },
}

impl<S> Phase<S> {
    fn cursor(&self) -> u32 {
        match self {
            Phase::Direct { cursor } | Phase::Closure { cursor, .. } => *cursor,
        }
    }

    fn set_cursor(&mut self, to: u32) {
        match self {
            Phase::Direct { cursor } | Phase::Closure { cursor, .. } => *cursor = to,
        }
    }
}

/// Where the search stands: the configuration, the way down to it and
/// the phase of its candidates.
struct Position<S> {
    state: S,
    used: Bits,
    stack: Vec<Frame<S>>,
    phase: Phase<S>,
}

/// A configuration on the way down: what to restore when its child fails.
struct Frame<S> {
    /// The returned operation linearized to reach the child.
    op: u32,
    state: S,
    used: Bits,
    phase: Phase<S>,
}

struct Search<'a, M: Model> {
    model: &'a M,
    /// The operations that returned, in the order of their invocations.
    ok: Vec<&'a Input<'a>>,
    ok_input: Vec<usize>,
    /// The unknown ones, in the order of their invocations.
    info: Vec<&'a Input<'a>>,
    /// Whether each unknown one is blind ([`Model::blind`]).
    blind: Vec<bool>,
    /// For each unknown one, the last one before it that is the same
    /// operation: the two are interchangeable, and the earlier one can
    /// take effect wherever the later one can, so the later one is tried
    /// only once the earlier one is used.
    same_before: Vec<Option<usize>>,
    nodes: Vec<Node>,
    /// The history index of each node.
    node_at: Vec<u64>,
    next: Vec<u32>,
    prev: Vec<u32>,
    /// Each returned operation's call and return nodes.
    call_node: Vec<u32>,
    ret_node: Vec<u32>,
    /// The sentinel before the first node.
    head: u32,
    done: Bits,
    /// The incremental hash of `done`.
    done_hash: u64,
    seen: HashMap<u64, Vec<Seen<M::State>>, FxBuild>,
    steps: &'a mut u64,
    steps_max: u64,
    probe: Option<u32>,
    refused: Vec<String>,
}

/// Searches for a linearization of `inputs`. `steps` counts the model's
/// steps (shared by the partitions of one check); past `steps_max` the
/// search gives up. With `probe`, the report of an illegal history names
/// the states that refused its culprit.
pub(crate) fn search<M: Model>(
    model: &M,
    inputs: &[Input<'_>],
    steps: &mut u64,
    steps_max: u64,
    probe: Option<usize>,
) -> Found {
    let mut search = Search::new(model, inputs, steps, steps_max);
    search.probe = probe.and_then(|p| {
        search
            .ok_input
            .iter()
            .position(|&i| i == p)
            .map(|i| i as u32)
    });
    search.run()
}

impl<'a, M: Model> Search<'a, M> {
    fn new(model: &'a M, inputs: &'a [Input<'a>], steps: &'a mut u64, steps_max: u64) -> Self {
        let mut ok_input: Vec<usize> = (0..inputs.len())
            .filter(|&i| inputs[i].ret.is_some())
            .collect();
        ok_input.sort_by_key(|&i| inputs[i].call);
        let ok: Vec<&Input<'_>> = ok_input.iter().map(|&i| &inputs[i]).collect();
        let mut info: Vec<&Input<'_>> = inputs.iter().filter(|i| i.ret.is_none()).collect();
        info.sort_by_key(|i| i.call);
        // Every call and return, in history order.
        let mut order: Vec<(u64, Node)> = Vec::with_capacity(2 * ok.len());
        for (n, input) in ok.iter().enumerate() {
            order.push((
                input.call,
                Node {
                    op: n as u32,
                    is_call: true,
                },
            ));
            let ret = input.ret.expect("returned");
            assert!(
                ret > input.call,
                "sim-history: a completion before its invocation"
            );
            order.push((
                ret,
                Node {
                    op: n as u32,
                    is_call: false,
                },
            ));
        }
        order.sort_by_key(|(at, _)| *at);
        let count = order.len();
        let head = count as u32;
        let mut next = vec![NIL; count + 1];
        let mut prev = vec![NIL; count + 1];
        let mut call_node = vec![0; ok.len()];
        let mut ret_node = vec![0; ok.len()];
        let mut last = head;
        for (i, (_, node)) in order.iter().enumerate() {
            next[last as usize] = i as u32;
            prev[i] = last;
            last = i as u32;
            if node.is_call {
                call_node[node.op as usize] = i as u32;
            } else {
                ret_node[node.op as usize] = i as u32;
            }
        }
        let mut last_of: HashMap<&Op, usize, FxBuild> = HashMap::default();
        let same_before = info
            .iter()
            .enumerate()
            .map(|(i, input)| last_of.insert(input.op, i))
            .collect();
        Search {
            model,
            same_before,
            blind: info.iter().map(|input| model.blind(input.op)).collect(),
            done: Bits::new(ok.len()),
            ok_input,
            info,
            nodes: order.iter().map(|(_, n)| *n).collect(),
            node_at: order.iter().map(|(at, _)| *at).collect(),
            ok,
            next,
            prev,
            call_node,
            ret_node,
            head,
            done_hash: 0,
            seen: HashMap::default(),
            steps,
            steps_max,
            probe: None,
            refused: Vec::new(),
        }
    }

    fn unlink(&mut self, x: u32) {
        let (p, n) = (self.prev[x as usize], self.next[x as usize]);
        self.next[p as usize] = n;
        if n != NIL {
            self.prev[n as usize] = p;
        }
    }

    fn relink(&mut self, x: u32) {
        let (p, n) = (self.prev[x as usize], self.next[x as usize]);
        self.next[p as usize] = x;
        if n != NIL {
            self.prev[n as usize] = x;
        }
    }

    /// Takes a linearized operation's call and return out of the list.
    fn lift(&mut self, op: u32) {
        self.unlink(self.call_node[op as usize]);
        self.unlink(self.ret_node[op as usize]);
        self.done.set(op as usize);
        self.done_hash ^= mix(u64::from(op));
    }

    /// Puts them back, in the reverse order.
    fn unlift(&mut self, op: u32) {
        self.relink(self.ret_node[op as usize]);
        self.relink(self.call_node[op as usize]);
        self.done.clear(op as usize);
        self.done_hash ^= mix(u64::from(op));
    }

    /// One step of the model, counted against the budget.
    fn step(&mut self, state: &M::State, input: &Input<'_>) -> Option<M::State> {
        *self.steps += 1;
        self.model.step(state, input.op, input.output)
    }

    /// Remembers the configuration (`done` with `op` added, `state`,
    /// `used`); false when it, or one that used a subset of `used` in the
    /// same state, was seen.
    fn visit(&mut self, op: Option<u32>, state: &M::State, used: &Bits) -> bool {
        let hash = self.done_hash ^ op.map_or(0, |op| mix(u64::from(op))) ^ fx_hash(state);
        if let Some(op) = op {
            self.done.set(op as usize);
        }
        let bucket = self.seen.entry(hash).or_default();
        let entry = bucket
            .iter_mut()
            .find(|seen| seen.done == self.done && &seen.state == state);
        let fresh = match entry {
            Some(seen) if seen.used.iter().any(|u| u.is_subset(used)) => false,
            Some(seen) => {
                seen.used.push(used.clone());
                true
            }
            None => {
                bucket.push(Seen {
                    done: self.done.clone(),
                    state: state.clone(),
                    used: vec![used.clone()],
                });
                true
            }
        };
        if let Some(op) = op {
            self.done.clear(op as usize);
        }
        fresh
    }

    fn run(&mut self) -> Found {
        let mut at = Position {
            state: self.model.init(),
            used: Bits::new(self.info.len()),
            stack: Vec::new(),
            phase: Phase::Direct {
                cursor: self.next[self.head as usize],
            },
        };
        loop {
            if self.next[self.head as usize] == NIL {
                return Found::Linearizable;
            }
            if *self.steps > self.steps_max {
                return Found::OutOfBudget;
            }
            let cursor = at.phase.cursor();
            if cursor != NIL && self.nodes[cursor as usize].is_call {
                self.try_candidate(&mut at, cursor);
            } else if let Some(found) = self.candidates_spent(&mut at, cursor) {
                return found;
            }
        }
    }

    /// Tries to linearize the operation whose call is at `cursor` from the
    /// configuration the phase is at: down into it if the model accepts it
    /// and the configuration is new, else on to the next candidate.
    fn try_candidate(&mut self, at: &mut Position<M::State>, cursor: u32) {
        let op = self.nodes[cursor as usize].op;
        let input = self.ok[op as usize];
        let (from, from_used) = match &at.phase {
            Phase::Direct { .. } => (&at.state, &at.used),
            Phase::Closure {
                configs, config, ..
            } => (&configs[*config].0, &configs[*config].1),
        };
        let child = match self.step(from, input) {
            Some(next) if self.visit(Some(op), &next, from_used) => Some((next, from_used.clone())),
            Some(_) => None,
            None => {
                self.note_refused(op, from);
                None
            }
        };
        let Some((next_state, next_used)) = child else {
            at.phase.set_cursor(self.next[cursor as usize]);
            return;
        };
        let parent_phase = std::mem::replace(&mut at.phase, Phase::Direct { cursor: NIL });
        at.stack.push(Frame {
            op,
            state: std::mem::replace(&mut at.state, next_state),
            used: std::mem::replace(&mut at.used, next_used),
            phase: parent_phase,
        });
        self.lift(op);
        at.phase = Phase::Direct {
            cursor: self.next[self.head as usize],
        };
    }

    /// The phase has tried every candidate (its cursor reached a return):
    /// on to the states the unknown operations lead to, to the next of
    /// them, or back up. `Some` when the search is over.
    fn candidates_spent(&mut self, at: &mut Position<M::State>, cursor: u32) -> Option<Found> {
        match std::mem::replace(&mut at.phase, Phase::Direct { cursor: NIL }) {
            Phase::Direct { .. } => {
                let configs = self.closure(&at.state, &at.used, self.node_at[cursor as usize]);
                // With no state to go on from, no candidate: back up next.
                let cursor = if configs.is_empty() {
                    NIL
                } else {
                    self.next[self.head as usize]
                };
                at.phase = Phase::Closure {
                    configs,
                    config: 0,
                    cursor,
                };
                None
            }
            Phase::Closure {
                configs, config, ..
            } if config + 1 < configs.len() => {
                at.phase = Phase::Closure {
                    configs,
                    config: config + 1,
                    cursor: self.next[self.head as usize],
                };
                None
            }
            Phase::Closure { .. } => self.back_up(at),
        }
    }

    /// Nothing works from this configuration: back to its parent, which
    /// goes on after the candidate that led here. `Some` at the root: no
    /// order exists.
    fn back_up(&mut self, at: &mut Position<M::State>) -> Option<Found> {
        let Some(frame) = at.stack.pop() else {
            return Some(Found::Illegal {
                refused: std::mem::take(&mut self.refused),
            });
        };
        self.unlift(frame.op);
        at.state = frame.state;
        at.used = frame.used;
        at.phase = frame.phase;
        let after = self.call_node[frame.op as usize];
        at.phase.set_cursor(self.next[after as usize]);
        None
    }

    fn note_refused(&mut self, op: u32, state: &M::State) {
        if self.probe == Some(op) && self.refused.len() < REFUSED_MAX {
            let words = self.model.describe_state(state);
            if !self.refused.contains(&words) {
                self.refused.push(words);
            }
        }
    }

    /// The configurations reachable from (`state`, `used`) through unknown
    /// operations invoked before `bound`, breadth first, each only if no
    /// configuration in the same state used a subset of its operations.
    fn closure(&mut self, state: &M::State, used: &Bits, bound: u64) -> Vec<(M::State, Bits)> {
        let available = self.info.partition_point(|input| input.call < bound);
        let mut found: Vec<(M::State, Bits)> = Vec::new();
        if available == 0 {
            return found;
        }
        let mut frontier: Vec<(M::State, Bits)> = vec![(state.clone(), used.clone())];
        let mut first_level = true;
        while !frontier.is_empty() {
            let mut next_frontier = Vec::new();
            for (from, from_used) in &frontier {
                for i in 0..available {
                    if *self.steps > self.steps_max {
                        return found;
                    }
                    // A blind operation after another leads where it led
                    // from the start, with one operation more used.
                    if from_used.contains(i)
                        || (!first_level && self.blind[i])
                        || self.same_before[i].is_some_and(|j| !from_used.contains(j))
                    {
                        continue;
                    }
                    let input = self.info[i];
                    let Some(to) = self.step(from, input) else {
                        continue;
                    };
                    let mut to_used = from_used.clone();
                    to_used.set(i);
                    // Dominated by the configuration it started from, or
                    // (through the table of those seen, which holds every
                    // configuration found here) by another.
                    let dominated = &to == state && used.is_subset(&to_used);
                    if dominated || !self.visit(None, &to, &to_used) {
                        continue;
                    }
                    found.push((to.clone(), to_used.clone()));
                    next_frontier.push((to, to_used));
                }
            }
            frontier = next_frontier;
            first_level = false;
        }
        found
    }
}
