//! Nearest-name suggestions ("did you mean `servers`?") for a misspelt field, value, ledger
//! or server name: one small pure rule used by every message that refuses a name.
//!
//! Names are compared by edit distance (insertions, deletions, substitutions and swaps of two
//! neighbouring characters, ignoring ASCII case). A name is suggested only when it is close
//! enough to be a likely typo: at most a third of the longer name's characters differ (at
//! least one may). Ties go to the candidate listed first.

/// The edit distance between `a` and `b`: the fewest insertions, deletions, substitutions and
/// swaps of two neighbouring characters that turn one into the other, ignoring ASCII case.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    // Three rows of the optimal-string-alignment table: two back, one back, current.
    let mut before_previous = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before_previous[j - 2] + 1);
            }
            current[j] = best;
        }
        std::mem::swap(&mut before_previous, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The candidate `typed` most likely meant, if one is close enough to be a typo (see the
/// module documentation). A candidate equal to `typed` is never suggested.
pub fn nearest<'a, I>(typed: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let typed_len = typed.chars().count();
    candidates
        .into_iter()
        .filter(|candidate| *candidate != typed)
        .filter_map(|candidate| {
            let distance = edit_distance(typed, candidate);
            let longer = typed_len.max(candidate.chars().count());
            (distance <= (longer / 3).max(1)).then_some((distance, candidate))
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// `did you mean `name`?` for the nearest candidate, or `None` when none is close enough.
pub fn did_you_mean<'a, I>(typed: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = &'a str>,
{
    nearest(typed, candidates).map(|name| format!("did you mean `{name}`?"))
}

/// What a message refusing the unknown name `typed` adds: `did you mean `name`?` for the
/// nearest of `known` when one is close enough, else `allowed: ` and every known name.
pub fn hint(typed: &str, known: &[&str]) -> String {
    did_you_mean(typed, known.iter().copied())
        .unwrap_or_else(|| format!("allowed: {}", known.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_each_kind_of_edit() {
        let table = [
            ("", "", 0),
            ("servers", "servers", 0),
            ("server", "servers", 1),
            ("serverz", "servers", 1),
            ("srevers", "servers", 1),
            ("SERVERS", "servers", 0),
            ("tool_add", "tool_added", 2),
            ("abc", "", 3),
            ("", "abc", 3),
            ("kitten", "sitting", 3),
            ("ledger", "ledgre", 1),
        ];
        for (a, b, distance) in table {
            assert_eq!(edit_distance(a, b), distance, "{a:?} / {b:?}");
            assert_eq!(edit_distance(b, a), distance, "{b:?} / {a:?}");
        }
    }

    #[test]
    fn nearest_suggests_only_likely_typos() {
        let fields = ["servers", "ledger_name", "alert_on", "notify", "fail_on"];
        let classes = ["tool_added", "tool_removed", "server_version_changed"];
        let table: [(&str, &[&str], Option<&str>); 9] = [
            ("server", &fields, Some("servers")),
            // 5 edits from `ledger_name` (11 characters, a third is 3): too far.
            ("ledger", &fields, None),
            ("alertOn", &fields, Some("alert_on")),
            ("fail-on", &fields, Some("fail_on")),
            ("tool_add", &classes, Some("tool_added")),
            ("tool_remove", &classes, Some("tool_removed")),
            ("colour", &fields, None),
            ("servers", &fields, None),
            ("x", &fields, None),
        ];
        for (typed, candidates, expected) in table {
            assert_eq!(
                nearest(typed, candidates.iter().copied()),
                expected,
                "{typed}"
            );
        }
    }

    #[test]
    fn ties_go_to_the_first_candidate_and_the_hint_quotes_it() {
        assert_eq!(nearest("ab", ["ac", "ad"]), Some("ac"));
        assert_eq!(
            did_you_mean("server", ["servers"]).as_deref(),
            Some("did you mean `servers`?")
        );
        assert_eq!(did_you_mean("zzz", ["servers"]), None);
        assert_eq!(did_you_mean("x", std::iter::empty()), None);
        assert_eq!(
            hint("sever", &["servers", "notify"]),
            "did you mean `servers`?"
        );
        assert_eq!(
            hint("colour", &["servers", "notify"]),
            "allowed: servers, notify"
        );
    }
}
