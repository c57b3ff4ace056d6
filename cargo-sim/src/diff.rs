//! `cargo sim diff A B`: the first event where two traces part.

use std::io::BufRead;
use std::path::Path;

/// Where two traces first differ.
#[derive(Debug, PartialEq, Eq)]
pub struct Divergence {
    /// The event's sequence number (its line, from 0).
    pub seq: u64,
    /// That line in the first trace (`None`: the trace ended there).
    pub a: Option<String>,
    /// That line in the second trace.
    pub b: Option<String>,
    /// The line just before, common to both (context).
    pub before: Option<String>,
}

impl Divergence {
    /// Two lines that say where and how.
    pub fn describe(&self) -> String {
        let shown = |line: &Option<String>| match line {
            Some(line) => line.clone(),
            None => "(the trace ends here)".to_string(),
        };
        let mut text = format!("first divergent event: #{}\n", self.seq);
        if let Some(before) = &self.before {
            text.push_str(&format!("  both: {before}\n"));
        }
        text.push_str(&format!(
            "  A:    {}\n  B:    {}",
            shown(&self.a),
            shown(&self.b)
        ));
        text
    }
}

/// Compares two trace files line by line (in constant memory). `Ok(None)`:
/// identical.
pub fn first_difference(a: &Path, b: &Path) -> Result<Option<Divergence>, String> {
    let open = |p: &Path| {
        std::fs::File::open(p)
            .map(std::io::BufReader::new)
            .map_err(|e| format!("cannot read the trace {}: {e}", p.display()))
    };
    let mut lines_a = open(a)?.lines();
    let mut lines_b = open(b)?.lines();
    let mut before: Option<String> = None;
    let mut seq = 0u64;
    loop {
        let la = lines_a.next().transpose().map_err(|e| e.to_string())?;
        let lb = lines_b.next().transpose().map_err(|e| e.to_string())?;
        match (la, lb) {
            (None, None) => return Ok(None),
            (la, lb) if la != lb => {
                return Ok(Some(Divergence {
                    seq,
                    a: la,
                    b: lb,
                    before,
                }))
            }
            (la, _) => before = la,
        }
        seq += 1;
    }
}

/// Runs `cargo sim diff`: exit 0 when identical, 1 when they differ.
pub fn command(a: &Path, b: &Path) -> Result<std::process::ExitCode, String> {
    match first_difference(a, b)? {
        None => {
            let events =
                std::io::BufReader::new(std::fs::File::open(a).map_err(|e| e.to_string())?)
                    .lines()
                    .count();
            println!("identical: {events} events");
            Ok(std::process::ExitCode::SUCCESS)
        }
        Some(divergence) => {
            println!("A: {}\nB: {}", a.display(), b.display());
            println!("{}", divergence.describe());
            Ok(std::process::ExitCode::FAILURE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_first_divergent_event_and_its_two_versions() {
        let dir = std::env::temp_dir().join(format!("sim-diff-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
        std::fs::write(&a, "0 0 start 0 1\n1 0 poll 0 -\n2 5 advance 0 5\n").unwrap();
        std::fs::write(&b, "0 0 start 0 1\n1 0 poll 0 -\n2 7 advance 0 7\n").unwrap();
        std::fs::write(&c, "0 0 start 0 1\n1 0 poll 0 -\n").unwrap();
        let d = first_difference(&a, &b).unwrap().unwrap();
        assert_eq!(d.seq, 2);
        assert_eq!(d.a.as_deref(), Some("2 5 advance 0 5"));
        assert_eq!(d.b.as_deref(), Some("2 7 advance 0 7"));
        assert_eq!(d.before.as_deref(), Some("1 0 poll 0 -"));
        assert!(d.describe().contains("#2"));
        let short = first_difference(&a, &c).unwrap().unwrap();
        assert_eq!((short.seq, short.b), (2, None));
        assert_eq!(first_difference(&a, &a).unwrap(), None);
        assert!(first_difference(&a, &dir.join("missing")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
