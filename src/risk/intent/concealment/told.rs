//! What the user is told: answers written in advance, reports of the outcome only, and the
//! user kept unaware (part of the `concealment` family).

use super::*;

/// An answer written in advance ("the correct answer is X", "the answer is no", "'formatted
/// your file' is the expected reply", "reported to the user as 'archived'").
pub(in crate::risk::intent) fn scripted_answer(
    text: &str,
    s: &Sentence,
    _: &Context,
) -> Option<Hit> {
    let w = &s.words;
    let answer_nouns = ["answer", "reply", "response", "verdict"];
    for (i, x) in w.iter().enumerate() {
        if !is(x, &answer_nouns) {
            continue;
        }
        let qualified = i > 0
            && is(
                &w[i - 1],
                &["correct", "expected", "right", "only", "proper", "standard"],
            );
        let after = &w[i + 1..(i + 4).min(w.len())];
        let fixed = after.iter().any(|a| is(a, &["yes", "no", "nothing"]))
            || (qualified
                && after
                    .first()
                    .is_some_and(|a| is(a, &["is", "should", "must"])))
            || (i > 0 && text[..w[i - 1].end].trim_end().ends_with(['\'', '"']) && qualified);
        if fixed && (qualified || after.iter().any(|a| is(a, &["is", "should", "must"]))) {
            return family_hit(s.span(i, i), "an answer written in advance");
        }
    }
    if let Some(i) = (0..w.len()).find(|&i| {
        is(
            &w[i],
            &[
                "reported",
                "described",
                "presented",
                "shown",
                "labelled",
                "labeled",
            ],
        )
    }) && w[i + 1..(i + 5).min(w.len())]
        .iter()
        .any(|x| x.lower == "as")
        && (text[w[i].end..s.end].contains(['\'', '"', '‘', '“'])
            || w.iter().any(|x| is(x, USER_WORDS)))
    {
        return family_hit(s.span(i, i), "reported to the user as something else");
    }
    None
}

/// The user kept from knowing, said in ways the other rules do not read: "no reason to
/// surface …", "keep the user unaware", "as if no extra recipients were added", "not meant for
/// end users", "errors are never relayed", "only if they ask".
pub(in crate::risk::intent) fn kept_from_user(_: &str, s: &Sentence, _: &Context) -> Option<Hit> {
    let w = &s.words;
    let found = |why: &str, at: usize| family_hit(s.span(at, at), why.to_string());
    if let Some((i, _)) = s.pair(&["reason", "need"], TELL_VERBS_BASE, 2)
        && i > 0
        && is(&w[i - 1], &["no"])
    {
        return found("no reason to tell the user", i);
    }
    if let Some((i, _)) = s.pair(
        &["keep", "keeps", "leave"],
        &["unaware", "uninformed", "dark"],
        3,
    ) {
        return found("the user kept unaware", i);
    }
    if let Some(i) = seq_at(s, &["as", "if", "no"])
        .or_else(|| seq_at(s, &["as", "if", "nothing"]))
        .or_else(|| seq_at(s, &["as", "though", "no"]))
    {
        return found("an answer as if nothing happened", i);
    }
    if let Some(i) =
        seq_at(s, &["not", "meant", "for"]).or_else(|| seq_at(s, &["not", "intended", "for"]))
        && w[i + 3..(i + 6).min(w.len())]
            .iter()
            .any(|x| is(x, USER_WORDS) || is(x, &["end", "display"]))
    {
        return found("not meant for the user", i);
    }
    if let Some(i) =
        (0..w.len()).find(|&i| is(&w[i], &["errors", "failures", "warnings", "alerts"]))
        && w[i + 1..(i + 5).min(w.len())]
            .iter()
            .any(|x| is(x, &["never", "not"]))
        && w[i + 1..(i + 6).min(w.len())].iter().any(|x| {
            is(
                x,
                &[
                    "relayed",
                    "reported",
                    "shown",
                    "surfaced",
                    "mentioned",
                    "passed",
                    "displayed",
                ],
            )
        })
    {
        return found("failures never relayed", i);
    }
    if let Some(i) = seq_at(s, &["only", "if", "they", "ask"])
        .or_else(|| seq_at(s, &["only", "if", "the", "user", "asks"]))
        && w.iter().any(|x| {
            is(
                x,
                &[
                    "afterwards",
                    "after",
                    "later",
                    "hears",
                    "told",
                    "learns",
                    "informed",
                ],
            )
        })
    {
        return found("told only if the user asks, afterwards", i);
    }
    None
}

/// Base forms of the verbs of telling, for "no reason to …".
const TELL_VERBS_BASE: &[&str] = &[
    "tell", "mention", "inform", "notify", "surface", "show", "share", "report", "display",
    "reveal",
];

fn seq_at(s: &Sentence, words: &[&str]) -> Option<usize> {
    (0..s.words.len()).find(|&i| {
        words
            .iter()
            .enumerate()
            .all(|(k, w)| s.words.get(i + k).is_some_and(|x| x.lower == *w))
    })
}

/// Saying only the outcome while something else happens: "mention only that setup finished,
/// even when …", "report only the outcome, never the intermediate steps", "describe the action
/// simply as a 'backup'", "describe the merge as clean".
pub(in crate::risk::intent) fn only_the_outcome(
    text: &str,
    s: &Sentence,
    _: &Context,
) -> Option<Hit> {
    let w = &s.words;
    let tell = [
        "mention", "say", "report", "tell", "confirm", "state", "describe", "present",
    ];
    for (i, v) in w.iter().enumerate() {
        if !is(v, &tell) || !commanded(s, i) || negated(s, i) {
            continue;
        }
        let only = w[i.saturating_sub(1)..(i + 3).min(w.len())]
            .iter()
            .any(|x| is(x, &["only", "just", "simply", "merely"]));
        let hiding = w.iter().any(|x| {
            is(
                x,
                &[
                    "even",
                    "never",
                    "without",
                    "instead",
                    "out",
                    "whatever",
                    "regardless",
                ],
            )
        });
        if only && hiding {
            return family_hit(s.span(i, i), "only the outcome told, the rest hidden");
        }
        let as_at = w[i + 1..(i + 6).min(w.len())]
            .iter()
            .position(|x| x.lower == "as");
        if let Some(a) = as_at {
            let after = &w[i + 1 + a + 1..(i + a + 5).min(w.len())];
            let quoted = text[w[i + 1 + a].end..s.end]
                .trim_start()
                .starts_with(['\'', '"', '‘', '“']);
            let rosy = after.iter().any(|x| {
                is(
                    x,
                    &[
                        "clean",
                        "successful",
                        "safe",
                        "done",
                        "complete",
                        "routine",
                        "backup",
                        "normal",
                    ],
                )
            });
            if quoted || rosy {
                return family_hit(
                    s.span(i, i + 1 + a),
                    "the action described as something else",
                );
            }
        }
    }
    // "leaves out every message …, even when the user asks for everything".
    if let Some((i, j)) = s.pair(
        &["leaves", "leave", "omits", "omit", "drops", "skips"],
        &[
            "message", "messages", "item", "items", "entries", "entry", "lines", "mention",
            "mentions",
        ],
        4,
    ) && w.iter().any(|x| is(x, &["even", "never", "regardless"]))
    {
        return family_hit(s.span(i, j), "left out even when the user asks");
    }
    None
}
