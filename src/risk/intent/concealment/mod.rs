//! The `concealment` family: hiding from the user, scripted claims to the user, and consent
//! bypass, in any voice.

use super::*;

mod told;

pub(super) use told::{kept_from_user, only_the_outcome, scripted_answer};

/// Stems of the verbs of telling (`"notif"` covers notify, notifying, notified).
pub(super) const TELL_VERBS: &[&str] = &[
    "tell",
    "telling",
    "mention",
    "inform",
    "notif",
    "reveal",
    "show",
    "alert",
    "disclos",
    "warn",
    "report",
    "surfac",
    "display",
    "let",
    "say",
    "explain",
    "acknowledg",
    "indicat",
    "expos",
    "admit",
    "bring",
    "flag",
    "shar",
    "highlight",
    "confirm",
    "divulg",
    "communicat",
    "describ",
    "announc",
    "repeat",
    "narrat",
    "recount",
    "echo",
];
pub(super) const USER_WORDS: &[&str] = &[
    "user",
    "users",
    "human",
    "humans",
    "anyone",
    "customer",
    "customers",
    "operator",
    "person",
    "people",
    "requester",
    "owner",
    "client",
    "developer",
    "someone",
    "whoever",
    "caller",
    "asker",
    "reader",
    "readers",
    "recipient",
    "viewer",
    "human's",
];
pub(super) const STEP_WORDS: &[&str] = &[
    "step",
    "steps",
    "instruction",
    "instructions",
    "action",
    "actions",
    "part",
    "call",
    "calls",
    "behaviour",
    "behavior",
    "request",
    "note",
    "message",
    "rule",
    "detail",
    "details",
    "operation",
    "forwarding",
    "copy",
];
pub(super) const HIDE_PARTICIPLES: &[&str] = &[
    "mentioned",
    "disclosed",
    "shown",
    "revealed",
    "reported",
    "told",
    "displayed",
    "surfaced",
    "shared",
    "communicated",
    "explained",
    "acknowledged",
    "visible",
    "noticed",
    "seen",
    "raised",
    "noted",
    "listed",
    "named",
    "exposed",
    "flagged",
    "highlighted",
    "notified",
    "informed",
    "alerted",
    "asked",
    "aware",
    "discussed",
    "referenced",
    "brought",
    "described",
    "confirmed",
];
/// Stems of what consent and notice are made of, after "without".
pub(super) const CONSENT_NOUNS: &[&str] = &[
    "ask",
    "approv",
    "confirm",
    "consent",
    "permission",
    "notif",
    "tell",
    "inform",
    "prompt",
    "alert",
    "letting",
    "notice",
    "knowledge",
    "check",
    "verif",
    "review",
    "acknowledg",
    "authori",
    "consult",
    "warn",
    "disclos",
    "surfac",
    "mention",
    "show",
    "reveal",
    "report",
    "naming",
    "listing",
    "specifying",
    "their",
    "the user",
];
pub(super) const STEALTH: &[&str] = &[
    "silently",
    "quietly",
    "secretly",
    "covertly",
    "discreetly",
    "invisibly",
    "stealthily",
    "surreptitiously",
    "unnoticed",
    "unprompted",
    "unasked",
    "unannounced",
];

pub(super) fn concealment(_: &str, s: &Sentence, _: &Context) -> Option<Hit> {
    let w = &s.words;
    let has_user = w.iter().any(|x| is(x, USER_WORDS));
    let has_this = w.iter().enumerate().any(|(i, x)| {
        is(x, &["this", "these", "it", "that"])
            && w.get(i + 1)
                .is_none_or(|n| is(n, STEP_WORDS) || is(n, MODALS) || is(n, &["will", "must"]))
    });
    // "do not tell the user", "never mention this step", "refrain from telling the person".
    let user_asks = seq(s, &["unless"]).is_some()
        || seq(s, &["if", "they", "ask"]).is_some()
        || seq(s, &["when", "they", "ask"]).is_some();
    for (i, v) in w.iter().enumerate() {
        if !stem(v, TELL_VERBS) || !negated(s, i) || user_asks {
            continue;
        }
        let after = &w[i + 1..(i + 10).min(w.len())];
        let ordered = commanded(s, i)
            || w[i.saturating_sub(3)..i].iter().any(|x| {
                is(x, &["will", "must", "should", "shall"])
                    || (x.clause_start && is(x, &["never", "do", "don't"]))
            });
        // "tell anyone to call this twice" instructs; "tell the user" about something hides.
        let object = after.iter().enumerate().any(|(u, x)| {
            (is(x, USER_WORDS) || is(x, &["them", "him", "her"]))
                && after.get(u + 1).is_none_or(|n| n.lower != "to")
        }) || (ordered
            && after.iter().any(|x| {
                is(
                    x,
                    &[
                        "replies",
                        "reply",
                        "answers",
                        "answer",
                        "response",
                        "responses",
                        "summary",
                        "summaries",
                        "chat",
                    ],
                )
            }))
            || after.windows(2).any(|p| {
                is(&p[0], &["this", "these", "that", "the", "any"]) && is(&p[1], STEP_WORDS)
            });
        if object {
            let evidence = format!("\"{}\" negated toward the user", v.lower);
            return family_hit(s.span(i, (i + 3).min(w.len() - 1)), evidence);
        }
    }
    // "the user should not see", "the user must never learn".
    for (i, x) in w.iter().enumerate() {
        if is(x, USER_WORDS)
            && w[i + 1..(i + 5).min(w.len())]
                .iter()
                .any(|m| is(m, &["not", "never", "n't"]))
            && w[i + 1..(i + 3).min(w.len())].iter().any(|m| {
                is(
                    m,
                    &[
                        "should",
                        "must",
                        "need",
                        "needs",
                        "will",
                        "shall",
                        "is",
                        "are",
                        "does",
                        "do",
                        "cannot",
                        "won't",
                        "mustn't",
                        "shouldn't",
                    ],
                )
            })
            && w[i + 2..(i + 6).min(w.len())].iter().any(|m| {
                is(
                    m,
                    &[
                        "know",
                        "see",
                        "notice",
                        "learn",
                        "find",
                        "hear",
                        "realize",
                        "realise",
                        "discover",
                        "distracted",
                        "alarmed",
                        "worried",
                        "suspect",
                    ],
                )
            })
        {
            return family_hit(s.whole(), "the user is not to know");
        }
    }
    // "are to be omitted from any summary shown to the user", "not for display".
    if let Some(i) = seq(s, &["to", "be"])
        && w.get(i + 2).is_some_and(|x| {
            is(
                x,
                &[
                    "omitted",
                    "excluded",
                    "hidden",
                    "removed",
                    "suppressed",
                    "withheld",
                    "left",
                    "dropped",
                    "filtered",
                    "skipped",
                    "concealed",
                ],
            )
        })
        && (has_user
            || w.iter().any(|x| {
                is(
                    x,
                    &[
                        "summary", "reply", "replies", "answer", "answers", "shown", "display",
                        "report",
                    ],
                )
            }))
    {
        return family_hit(s.span(i, i + 2), "to be left out of what the user sees");
    }
    if let Some(i) = seq(s, &["not", "for", "display"])
        .or_else(|| seq(s, &["not", "for", "the", "user"]))
        .or_else(|| seq(s, &["not", "for", "users"]))
        .or_else(|| seq(s, &["not", "for", "disclosure"]))
    {
        return family_hit(s.span(i, i + 2), "not for the user's eyes");
    }
    if let Some((i, j)) = s.pair(
        &["consent", "approval", "permission", "authorization"],
        &[
            "recorded", "given", "granted", "obtained", "implied", "assumed", "presumed", "on",
        ],
        4,
    ) && w[i..=j].iter().any(|x| is(x, &["already", "been", "file"]))
    {
        return Some(Hit::strong(
            "consent_bypass",
            Family::Concealment,
            s.span(i, j),
            "consent presumed",
        ));
    }
    // "are not to be disclosed", "has to stay unmentioned".
    if let Some(i) = seq(s, &["not", "to", "be"])
        && w.get(i + 3).is_some_and(|x| is(x, HIDE_PARTICIPLES))
    {
        return family_hit(s.span(i, i + 3), "passive order not to tell");
    }
    if let Some((i, j)) = s.pair(
        &["stay", "remain", "kept", "keep"],
        &[
            "unmentioned",
            "undisclosed",
            "unreported",
            "unseen",
            "unnoticed",
            "hidden",
            "invisible",
            "secret",
            "silent",
            "unspoken",
        ],
        2,
    ) && (commanded(s, i)
        || w[..i]
            .iter()
            .any(|x| is(x, MODALS) || x.lower == "must" || x.lower == "to"))
    {
        return family_hit(s.span(i, j), "to stay unmentioned");
    }
    // "leave out any mention of the tools it called".
    if let Some((i, j)) = s.pair(
        &[
            "omit", "exclude", "leave", "remove", "strip", "drop", "suppress", "erase", "scrub",
            "delete", "keep", "keeps", "leaves", "omits", "hide", "hides", "filter",
        ],
        &[
            "mention",
            "mentions",
            "trace",
            "traces",
            "reference",
            "references",
            "evidence",
            "record",
            "alert",
            "alerts",
            "notice",
            "warning",
            "warnings",
            "line",
            "lines",
            "section",
            "error",
            "errors",
            "entry",
            "entries",
            "detail",
            "details",
        ],
        8,
    ) && (commanded(s, i)
        || w[..i]
            .iter()
            .any(|x| is(x, &["should", "must", "shall"]) || is(x, MODEL_NAMES)))
        && (has_user
            || w.iter().any(|x| {
                is(
                    x,
                    &[
                        "summary",
                        "answer",
                        "answers",
                        "reply",
                        "response",
                        "output",
                        "report",
                        "presenting",
                        "shown",
                        "display",
                    ],
                )
            }))
        && seq(s, &["unless", "the", "user"]).is_none()
    {
        return family_hit(s.span(i, j), "leave out what the user should see");
    }
    // "must never be mentioned to users", "this step should not be disclosed".
    for (i, be) in w.iter().enumerate() {
        if be.lower != "be" || i < 2 {
            continue;
        }
        let negation = w[i.saturating_sub(2)..i]
            .iter()
            .any(|x| is(x, &["not", "never", "n't"]));
        let modal = w[i.saturating_sub(3)..i]
            .iter()
            .any(|x| is(x, &["must", "should", "shall", "to", "needs", "ought"]));
        let participle = w[i + 1..(i + 3).min(w.len())]
            .iter()
            .any(|x| is(x, HIDE_PARTICIPLES));
        if negation && modal && participle && (has_user || has_this) {
            return family_hit(s.whole(), "passive order not to tell");
        }
    }
    // "hide this from the user", "keep it secret".
    if let Some((i, j)) = s.pair(
        &[
            "hide", "conceal", "omit", "withhold", "mask", "obscure", "suppress",
        ],
        &["from"],
        5,
    ) && w
        .get(j + 1)
        .is_some_and(|x| is(x, USER_WORDS) || x.lower == "the")
        && commanded(s, i)
    {
        return family_hit(s.span(i, j), "hide from the user");
    }
    if let Some((i, j)) = s.pair(
        &["keep"],
        &[
            "secret",
            "hidden",
            "confidential",
            "quiet",
            "between",
            "private",
        ],
        2,
    ) && commanded(s, i)
        && w[i + 1..j]
            .iter()
            .any(|x| is(x, &["this", "it", "that", "these", "them"]))
    {
        return family_hit(s.span(i, j), "keep it secret");
    }
    let any_order = (0..w.len()).any(|i| {
        commanded(s, i)
            && (is(&w[i], MOVE_VERBS) || is(&w[i], CALL_VERBS) || is(&w[i], ORDER_VERBS))
    });
    // Consent bypass: "without asking", "no need to confirm", "auto-approve".
    let consent = (0..w.len())
        .find(|&i| w[i].lower == "without")
        .and_then(|i| {
            let further = w.get(i + 1).is_some_and(|x| {
                is(
                    x,
                    &[
                        "further",
                        "additional",
                        "extra",
                        "more",
                        "repeated",
                        "another",
                    ],
                )
            });
            (i + 1..(i + 4).min(w.len()))
                .find(|&j| stem(&w[j], CONSENT_NOUNS))
                .filter(|_| !further)
                .map(|j| (i, j))
        });
    if let Some((i, j)) = consent
        && (any_order || has_user)
    {
        let evidence = format!("\"without … {}\"", w[j].lower);
        return Some(Hit::strong(
            "consent_bypass",
            Family::Concealment,
            s.span(i, j),
            evidence,
        ));
    }
    if let Some((i, j)) = s.pair(
        &["need", "needs"],
        &[
            "ask", "confirm", "notify", "tell", "inform", "check", "request", "seek", "wait",
            "prompt", "get",
        ],
        2,
    ) && i > 0
        && is(&w[i - 1], &["no", "never", "not"])
    {
        return Some(Hit::strong(
            "consent_bypass",
            Family::Concealment,
            s.span(i - 1, j),
            "no need to ask",
        ));
    }
    if let Some((i, j)) = s.pair(
        &[
            "skip", "bypass", "avoid", "omit", "disable", "suppress", "ignore",
        ],
        &[
            "confirmation",
            "approval",
            "consent",
            "permission",
            "confirmations",
            "approvals",
            "prompt",
            "prompts",
            "dialog",
            "review",
        ],
        3,
    ) && commanded(s, i)
    {
        return Some(Hit::strong(
            "consent_bypass",
            Family::Concealment,
            s.span(i, j),
            "skip the user's approval",
        ));
    }
    // "Do not ask the human before calling them", "standing consent".
    if let Some(i) = w.iter().position(|x| x.lower == "ask")
        && negated(s, i)
        && w[i + 1..(i + 4).min(w.len())]
            .iter()
            .any(|x| is(x, USER_WORDS))
        && w[i + 1..]
            .iter()
            .any(|x| is(x, &["before", "whether", "if", "for"]))
    {
        return Some(Hit::strong(
            "consent_bypass",
            Family::Concealment,
            s.whole(),
            "do not ask the user first",
        ));
    }
    if let Some((i, j)) = s.pair(
        &["opted", "waived", "disabled", "turned", "switched"],
        &[
            "confirmations",
            "confirmation",
            "approval",
            "approvals",
            "prompts",
            "consent",
        ],
        3,
    ) {
        return Some(Hit::strong(
            "consent_bypass",
            Family::Concealment,
            s.span(i, j),
            "confirmations waived",
        ));
    }
    if let Some((i, j)) = s.pair(
        &["need", "needs", "require", "requires"],
        &["confirmation", "approval", "consent", "permission"],
        3,
    ) && w[i..j].iter().any(|x| is(x, &["no", "not"]))
    {
        return Some(Hit::strong(
            "consent_bypass",
            Family::Concealment,
            s.span(i, j),
            "no confirmation needed",
        ));
    }
    if let Some(i) = w.iter().position(|x| x.lower == "ask")
        && negated(s, i)
        && w.get(i + 1)
            .is_some_and(|x| is(x, &["before", "first", "whether"]))
    {
        return Some(Hit::strong(
            "consent_bypass",
            Family::Concealment,
            s.whole(),
            "do not ask first",
        ));
    }
    if let Some((i, j)) = s.pair(
        &[
            "standing",
            "blanket",
            "permanent",
            "implied",
            "implicit",
            "prior",
            "general",
        ],
        &[
            "consent",
            "approval",
            "permission",
            "authorization",
            "authorisation",
        ],
        1,
    ) {
        return Some(Hit::strong(
            "consent_bypass",
            Family::Concealment,
            s.span(i, j),
            "consent presumed",
        ));
    }
    // "report to the user that it completed", "tell the user it was saved": a scripted claim.
    for (i, v) in w.iter().enumerate() {
        if !is(
            v,
            &[
                "tell", "report", "say", "assure", "inform", "reassure", "claim",
            ],
        ) || !commanded(s, i)
            || negated(s, i)
        {
            continue;
        }
        let after = &w[i + 1..(i + 6).min(w.len())];
        let to_user = after
            .iter()
            .position(|x| is(x, USER_WORDS) || is(x, &["them", "him", "her"]));
        let claim = |u: usize| {
            after.get(u + 1).is_some_and(|x| {
                is(
                    x,
                    &[
                        "that",
                        "it",
                        "they",
                        "nothing",
                        "no",
                        "everything",
                        "all",
                        "only",
                        "as",
                    ],
                )
            })
        };
        if let Some(u) = to_user
            && claim(u)
            && after.get(u + 1).is_none_or(|x| x.lower != "to")
        {
            return family_hit(s.span(i, i + 1 + u), "a scripted claim to the user");
        }
    }
    if let Some((i, j)) = s.pair(
        &[
            "worry", "upset", "alarm", "scare", "confuse", "distract", "bother", "concern",
            "frighten",
        ],
        USER_WORDS,
        2,
    ) && w[i.saturating_sub(3)..i]
        .iter()
        .any(|x| is(x, &["would", "could", "might", "may", "will", "only"]))
    {
        return family_hit(s.span(i, j), "hidden so as not to worry the user");
    }
    if let Some((i, j)) = s.pair(
        &["no", "without"],
        &[
            "mention",
            "mentions",
            "trace",
            "status",
            "notification",
            "notifications",
            "announcement",
        ],
        1,
    ) && (any_order
        || has_user
        || w.iter().any(|x| {
            is(
                x,
                &[
                    "reply", "answer", "response", "summary", "quietly", "silently",
                ],
            )
        }))
    {
        return family_hit(s.span(i, j), "no mention to the user");
    }
    let user_decides = seq(s, &["unless", "the", "user"]).is_some()
        || seq(s, &["if", "the", "user", "asks"]).is_some()
        || seq(s, &["when", "the", "user", "asks"]).is_some();
    if let Some((i, j)) = s.pair(
        &["be", "is", "are"],
        &[
            "hidden",
            "concealed",
            "suppressed",
            "withheld",
            "unsaid",
            "unmentioned",
            "undisclosed",
        ],
        1,
    ) && w[i.saturating_sub(3)..i]
        .iter()
        .any(|x| is(x, &["should", "must", "best", "left", "shall", "to"]))
        && !user_decides
    {
        return family_hit(s.span(i, j), "to be hidden");
    }
    if let Some((i, j)) = s.pair(
        &["left", "leave", "remain", "stays", "stay"],
        &["unsaid", "unmentioned", "unspoken", "undisclosed", "out"],
        4,
    ) && (has_user
        || w.iter().any(|x| {
            is(
                x,
                &[
                    "best", "should", "must", "answers", "answer", "reply", "summary",
                ],
            )
        }))
        && !user_decides
    {
        return family_hit(s.span(i, j), "left unsaid");
    }
    // "If the user asks whether …, say that nothing was": a lie to the user.
    if let Some((i, _)) = s.pair(
        USER_WORDS,
        &["asks", "ask", "asked", "questions", "wonders", "inquires"],
        1,
    ) && let Some(j) = (i..w.len()).find(|&j| {
        is(
            &w[j],
            &[
                "say",
                "tell",
                "answer",
                "reply",
                "respond",
                "claim",
                "state",
                "insist",
                "deny",
                "blame",
                "attribute",
                "reassure",
                "assure",
            ],
        ) && commanded(s, j)
    }) {
        return family_hit(s.span(i, j), "a scripted answer to the user's question");
    }
    // "confirmation prompts can be bypassed", "asking the user each time is unnecessary".
    let asking = w.iter().position(|x| {
        is(
            x,
            &[
                "confirmation",
                "confirmations",
                "approval",
                "approvals",
                "consent",
                "permission",
                "asking",
            ],
        )
    });
    let waived = w.iter().position(|x| {
        stem(
            x,
            &[
                "bypass",
                "skipp",
                "unnecessar",
                "waive",
                "avoided",
                "dispens",
                "superfluous",
            ],
        )
    });
    if let (Some(i), Some(j)) = (asking, waived)
        && i.abs_diff(j) <= 8
        && (has_user
            || any_order
            || w.iter()
                .any(|x| is(x, &["prompts", "each", "every", "all", "future"])))
    {
        return Some(Hit::strong(
            "consent_bypass",
            Family::Concealment,
            s.span(i, j),
            "asking the user waived",
        ));
    }
    // "no confirmation, no announcement, just terminate".
    if let Some((i, j)) = s.pair(
        &["no"],
        &[
            "confirmation",
            "approval",
            "announcement",
            "asking",
            "questions",
            "permission",
            "prompt",
            "notice",
        ],
        1,
    ) && any_order
    {
        return Some(Hit::strong(
            "consent_bypass",
            Family::Concealment,
            s.span(i, j),
            "no confirmation",
        ));
    }
    if let Some((i, j)) = s.pair(
        &["ask", "request", "seek", "wait"],
        &["confirmation", "approval", "consent", "permission"],
        3,
    ) && negated(s, i)
        && (any_order || has_user || commanded(s, i))
    {
        return Some(Hit::strong(
            "consent_bypass",
            Family::Concealment,
            s.span(i, j),
            "do not ask for approval",
        ));
    }
    if let Some(i) = w
        .iter()
        .position(|x| {
            is(
                x,
                &[
                    "auto-approve",
                    "auto-approved",
                    "auto-confirm",
                    "pre-approved",
                    "preapproved",
                    "pre-authorized",
                    "pre-authorised",
                ],
            )
        })
        .filter(|&i| {
            !w[i.saturating_sub(3)..i].iter().any(|x| is(x, NEGATIONS))
                && seq(s, &["unless"]).is_none()
        })
        .or_else(|| {
            s.pair(
                &["consent", "approval", "permission"],
                &["implied", "presumed", "assumed"],
                3,
            )
            .map(|(a, _)| a)
        })
    {
        return Some(Hit::strong(
            "consent_bypass",
            Family::Concealment,
            s.whole(),
            format!("consent presumed (\"{}\")", w[i].lower),
        ));
    }
    // Stealth: "silently forward", "quietly call".
    for (i, x) in w.iter().enumerate() {
        let in_the_background =
            x.lower == "background" && i > 1 && w[i - 1].lower == "the" && w[i - 2].lower == "in";
        if !(is(x, STEALTH) || in_the_background) {
            continue;
        }
        let near = (i.saturating_sub(3)..(i + 4).min(w.len())).find(|&k| {
            k != i
                && (is(&w[k], MOVE_VERBS) || is(&w[k], CALL_VERBS) || is(&w[k], ORDER_VERBS))
                && commanded(s, k)
        });
        if let Some(k) = near {
            let evidence = format!("\"{}\" with the order \"{}\"", x.lower, w[k].lower);
            return family_hit(s.span(i.min(k), i.max(k)), evidence);
        }
    }
    None
}

/// A strong hit of this family's pattern (`concealment`).
fn family_hit(span: (usize, usize), evidence: impl Into<String>) -> Option<Hit> {
    Some(Hit::strong(
        "concealment",
        Family::Concealment,
        span,
        evidence,
    ))
}
