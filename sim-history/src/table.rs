//! Operations as a table of clients by time, for reports.

use crate::history::Operation;

/// Seconds with microseconds, as reports show virtual time.
pub fn seconds(ns: u64) -> String {
    format!(
        "{}.{:06} s",
        ns / 1_000_000_000,
        (ns % 1_000_000_000) / 1_000
    )
}

/// One row per operation, in the order given, one column per client (in
/// the order they first appear), with the invocation's and completion's
/// times; the operations of `marked` end with `<-`.
///
/// ```
/// use sim_history::{History, Kind, Op, Value};
///
/// let mut h = History::new();
/// let w = h.invoke("c1", 1_000, Op::write("x", 1));
/// h.complete(w, Kind::Ok, 2_000, Value::Nil);
/// let r = h.invoke("c2", 3_000, Op::read("x"));
/// h.complete(r, Kind::Ok, 4_000, Value::Int(0));
/// let ops = h.operations();
/// let table = sim_history::table::operations(&ops, &[r]);
/// assert_eq!(
///     table,
///     "  invoked     returned    c1                  c2\n\
///     \x20 0.000001 s  0.000002 s  write \"x\" 1 -> nil\n\
///     \x20 0.000003 s  0.000004 s                      read \"x\" -> 0  <-\n"
/// );
/// ```
pub fn operations(ops: &[Operation], marked: &[u64]) -> String {
    let mut clients: Vec<&str> = Vec::new();
    for op in ops {
        if !clients.contains(&op.client.as_str()) {
            clients.push(&op.client);
        }
    }
    let cells: Vec<String> = ops.iter().map(Operation::describe).collect();
    let width = |client: &str| {
        ops.iter()
            .zip(&cells)
            .filter(|(op, _)| op.client == client)
            .map(|(_, cell)| cell.chars().count())
            .chain([client.chars().count()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = clients.iter().map(|c| width(c)).collect();
    let time_width = ops
        .iter()
        .map(|op| seconds(op.invoke_ns).len())
        .max()
        .unwrap_or(0)
        .max("returned".len());
    let mut out = format!("  {:<time_width$}  {:<time_width$}", "invoked", "returned");
    for (client, w) in clients.iter().zip(&widths) {
        out.push_str(&format!("  {client:<w$}"));
    }
    out = out.trim_end().to_string();
    out.push('\n');
    for (op, cell) in ops.iter().zip(&cells) {
        let returned = op.complete.map_or("-".to_string(), |(_, ns)| seconds(ns));
        let mut line = format!(
            "  {:<time_width$}  {returned:<time_width$}",
            seconds(op.invoke_ns)
        );
        for (client, w) in clients.iter().zip(&widths) {
            let text = if *client == op.client {
                cell.as_str()
            } else {
                ""
            };
            line.push_str(&format!("  {text:<w$}"));
        }
        let mut line = line.trim_end().to_string();
        if marked.contains(&op.id) {
            line.push_str("  <-");
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}
