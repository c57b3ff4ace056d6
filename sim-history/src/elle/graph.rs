//! The dependency graph between transactions, and the search for its
//! cycles by kind of edge.

use crate::value::Value;
use std::collections::VecDeque;

/// Why one transaction must come before another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dep {
    /// Write-write: the second overwrote (or appended after) the first.
    Ww,
    /// Write-read: the second read what the first wrote.
    Wr,
    /// Read-write (anti-dependency): the second overwrote what the first
    /// read.
    Rw,
    /// Real time: the first completed before the second began.
    Rt,
}

impl Dep {
    /// `ww`, `wr`, `rw`, `rt`.
    pub fn name(self) -> &'static str {
        match self {
            Dep::Ww => "ww",
            Dep::Wr => "wr",
            Dep::Rw => "rw",
            Dep::Rt => "rt",
        }
    }
}

/// One edge: `from` must precede `to`, because of `dep` on `key`; `why`
/// says so in words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The transaction that must come first (an index into the check's
    /// transactions).
    pub from: usize,
    /// The one that must come after.
    pub to: usize,
    /// The kind of dependency.
    pub dep: Dep,
    /// The key it is on (`Nil` for real time).
    pub key: Value,
    /// The dependency in words.
    pub why: String,
}

/// Why an edge is there, kept as data: the words are written only for the
/// edges of a cycle a report shows (a history of thousands of transactions
/// has tens of thousands of edges, each naming whole lists).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Why {
    /// ww, lists: `from` appended `earlier`; `to`'s `later` comes right
    /// after it.
    AppendedAfter { earlier: Value, later: Value },
    /// wr, lists: `to` read the list ending in `last`, which `from`
    /// appended.
    ReadLastAppend { last: Value },
    /// rw, lists: `from` read the list; `to` appended `next`, the element
    /// after what it read.
    AppendedNext { next: Value },
    /// ww, lists: `to` appended `value`, which no read showed, so after
    /// `last`, the last element read.
    UnseenAfter { value: Value, last: Value },
    /// rw, lists: `from` read the whole known list; `to` appended
    /// `value`, which came later.
    UnseenLater { value: Value },
    /// wr, registers: `to` read the `value` `from` wrote.
    ReadWrite { value: Value },
    /// ww, registers: `to` wrote `later` after reading `earlier`, which
    /// `from` wrote.
    WroteAfter { earlier: Value, later: Value },
    /// rw, registers: `from` read `read` (nil: before any write); `to`
    /// wrote `later`, a later version.
    OverwroteRead { read: Value, later: Value },
    /// rt: `from` completed before `to` began.
    RealTime,
}

/// An edge as the graph keeps it.
#[derive(Clone, Debug)]
pub(crate) struct RawEdge {
    pub from: usize,
    pub to: usize,
    pub dep: Dep,
    pub key: Value,
    pub why: Why,
}

/// Transactions and the edges between them.
#[derive(Default)]
pub(crate) struct Graph {
    pub edges: Vec<RawEdge>,
    /// Each node's outgoing edges (indices into `edges`).
    pub out: Vec<Vec<usize>>,
}

impl Graph {
    pub fn new(nodes: usize) -> Graph {
        Graph {
            edges: Vec::new(),
            out: vec![Vec::new(); nodes],
        }
    }

    /// Adds an edge unless it is a loop.
    pub fn add(&mut self, edge: RawEdge) {
        if edge.from == edge.to {
            return;
        }
        self.out[edge.from].push(self.edges.len());
        self.edges.push(edge);
    }

    /// The strongly connected components of two or more nodes (Tarjan's
    /// algorithm, without recursion).
    pub fn components(&self) -> Vec<Vec<usize>> {
        let n = self.out.len();
        let mut index = vec![usize::MAX; n];
        let mut low = vec![0; n];
        let mut on_stack = vec![false; n];
        let mut stack = Vec::new();
        let mut components = Vec::new();
        let mut counter = 0;
        for root in 0..n {
            if index[root] != usize::MAX {
                continue;
            }
            // (node, next outgoing edge to look at)
            let mut work = vec![(root, 0)];
            index[root] = counter;
            low[root] = counter;
            counter += 1;
            stack.push(root);
            on_stack[root] = true;
            while let Some(&mut (node, ref mut next)) = work.last_mut() {
                if let Some(&e) = self.out[node].get(*next) {
                    *next += 1;
                    let to = self.edges[e].to;
                    if index[to] == usize::MAX {
                        index[to] = counter;
                        low[to] = counter;
                        counter += 1;
                        stack.push(to);
                        on_stack[to] = true;
                        work.push((to, 0));
                    } else if on_stack[to] {
                        low[node] = low[node].min(index[to]);
                    }
                    continue;
                }
                work.pop();
                if let Some(&(parent, _)) = work.last() {
                    low[parent] = low[parent].min(low[node]);
                }
                if low[node] == index[node] {
                    let mut component = Vec::new();
                    loop {
                        let member = stack.pop().expect("on the stack");
                        on_stack[member] = false;
                        component.push(member);
                        if member == node {
                            break;
                        }
                    }
                    if component.len() > 1 {
                        component.sort_unstable();
                        components.push(component);
                    }
                }
            }
        }
        components
    }

    /// The shortest path from `from` to `to` inside `members` (a sorted
    /// component) over edges `allowed` takes, as edge indices.
    pub fn path(
        &self,
        from: usize,
        to: usize,
        members: &[usize],
        allowed: impl Fn(&RawEdge) -> bool,
    ) -> Option<Vec<usize>> {
        let mut came_by: Vec<Option<usize>> = vec![None; self.out.len()];
        let mut seen = vec![false; self.out.len()];
        let mut queue = VecDeque::from([from]);
        seen[from] = true;
        while let Some(node) = queue.pop_front() {
            if node == to {
                let mut path = Vec::new();
                let mut at = to;
                while at != from {
                    let e = came_by[at].expect("reached through an edge");
                    path.push(e);
                    at = self.edges[e].from;
                }
                path.reverse();
                return Some(path);
            }
            for &e in &self.out[node] {
                let edge = &self.edges[e];
                if seen[edge.to] || !allowed(edge) || members.binary_search(&edge.to).is_err() {
                    continue;
                }
                seen[edge.to] = true;
                came_by[edge.to] = Some(e);
                queue.push_back(edge.to);
            }
        }
        None
    }
}
