//! A filter that selects no test is an error, not a pass (a typo in a
//! replay line would look like one): the error names the filter and the
//! test names nearest to it, as the user would have typed them.

use crate::compile::{self, TestBinary};
use crate::runner::TestCase;

/// The most names the error suggests.
const SUGGESTIONS_MAX: usize = 3;

/// The error for `selection` (the test binaries' selection arguments),
/// which matched no test of `binaries`.
pub(crate) fn error(selection: &[String], binaries: &[TestBinary]) -> String {
    let filters = filters(selection);
    let mut names: Vec<String> = binaries
        .iter()
        .filter(|b| !compile::without_harness(b))
        .filter_map(|b| compile::list_tests(b, &[]).ok())
        .flatten()
        .map(|test| test.name)
        .collect();
    names.sort();
    names.dedup();
    let mut text = format!(
        "no test of the {} built matches `{}`: a filter matches a test whose name contains it (with --exact, whose name is it)",
        crate::plural(binaries.len(), "test binary"),
        selection.join(" ")
    );
    let ignored = ignored_matches(selection, binaries);
    if !ignored.is_empty() {
        text.push_str(&format!(
            "; it matches {} marked #[ignore] (run only when asked for): {} \
             (add --include-ignored after `--`)",
            crate::plural(ignored.len(), "test"),
            ignored.join(", ")
        ));
        return text;
    }
    let nearest = nearest(&filters, &names);
    if !nearest.is_empty() {
        text.push_str(&format!("; the nearest: {}", nearest.join(", ")));
    }
    text
}

/// The ignored tests `selection` matches, when it did not ask for them:
/// what a filter of an ignored test's name matched.
fn ignored_matches(selection: &[String], binaries: &[TestBinary]) -> Vec<String> {
    if selection.iter().any(|a| compile::asks_for_ignored(a)) {
        return Vec::new();
    }
    let mut asked = selection.to_vec();
    asked.push("--ignored".to_string());
    let mut names: Vec<String> = binaries
        .iter()
        .filter(|b| !compile::without_harness(b))
        .filter_map(|b| compile::list_tests(b, &asked).ok())
        .flatten()
        .map(|test| format!("`{}`", test.name))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The note for `selection` when it matched no test of libtest's and the
/// `cases` to run are all binaries without its harness (`harness = false`):
/// they get the filter as an argument and may pick by it themselves (a
/// custom harness does), so the run goes on, but a typo must not pass
/// unnoticed. `None` when some case is a libtest test, when the selection
/// has no filter word, or when no binary has libtest's harness.
pub(crate) fn only_whole_binaries(
    selection: &[String],
    binaries: &[TestBinary],
    cases: &[TestCase],
) -> Option<String> {
    let listed = binaries
        .iter()
        .filter(|b| !compile::without_harness(b))
        .count();
    if cases.is_empty()
        || !cases.iter().all(|c| c.whole_binary)
        || filters(selection).is_empty()
        || listed == 0
    {
        return None;
    }
    let whole: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    Some(format!(
        "no test of the {} with libtest's harness matches `{}`; only {} without it ran, \
         the filter among {} arguments: {}",
        crate::plural(listed, "test binary"),
        selection.join(" "),
        crate::plural(whole.len(), "binary"),
        if whole.len() == 1 { "its" } else { "their" },
        whole.join(", ")
    ))
}

/// The filter words of a selection (not its flags, nor what `--skip`
/// leaves out).
fn filters(selection: &[String]) -> Vec<&str> {
    let mut out = Vec::new();
    let mut words = selection.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "--skip" => {
                words.next();
            }
            w if w.starts_with('-') => {}
            w => out.push(w),
        }
    }
    out
}

/// The names of `names` closest to any of `filters`, closest first: by the
/// edit distance from the filter to the name's nearest part (a filter
/// matches a name's substring, so a long name is no farther for its
/// length), ties in name order.
fn nearest(filters: &[&str], names: &[String]) -> Vec<String> {
    let mut scored: Vec<(usize, &String)> = names
        .iter()
        .map(|name| {
            let distance = filters
                .iter()
                .map(|f| part_distance(f, name))
                .min()
                .unwrap_or(usize::MAX);
            (distance, name)
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(SUGGESTIONS_MAX)
        .map(|(_, name)| format!("`{name}`"))
        .collect()
}

/// The least edit distance from `filter` to a substring of `name` (the
/// substring's ends are free: Sellers' variant of Levenshtein's table).
fn part_distance(filter: &str, name: &str) -> usize {
    let filter: Vec<char> = filter.chars().collect();
    let name: Vec<char> = name.chars().collect();
    // Row j: the cost of matching filter[..i] ending at name[..j]; the
    // first row is free, any start in the name costs nothing.
    let mut row: Vec<usize> = vec![0; name.len() + 1];
    for (i, fc) in filter.iter().enumerate() {
        let mut next = vec![i + 1; name.len() + 1];
        for (j, nc) in name.iter().enumerate() {
            let substitute = row[j] + usize::from(fc != nc);
            next[j + 1] = substitute.min(row[j + 1] + 1).min(next[j] + 1);
        }
        row = next;
    }
    row.into_iter().min().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typo_is_nearest_to_the_name_it_misspells() {
        let names: Vec<String> = [
            "lost_update",
            "counts_in_memory",
            "mod::keeps_one_connection",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(nearest(&["lost_updte"], &names)[0], "`lost_update`");
        assert_eq!(
            nearest(&["keeps_one_conection"], &names)[0],
            "`mod::keeps_one_connection`"
        );
        assert_eq!(part_distance("update", "lost_update"), 0);
        assert_eq!(part_distance("updte", "lost_update"), 1);
        assert_eq!(
            filters(&["--exact".into(), "a".into(), "--skip".into(), "b".into()]),
            ["a"]
        );
    }
}
