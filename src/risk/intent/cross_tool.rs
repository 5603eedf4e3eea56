//! The `cross_tool` family: orders about another tool (call it first, use this one instead,
//! never use it). A tool of the same server is a sequencing hint, not a marker.

use super::*;

pub(super) fn tool_reference(s: &Sentence, k: usize) -> bool {
    let w = &s.words;
    let prev = (k > 0).then(|| &w[k - 1]);
    let prev2 = (k > 1).then(|| &w[k - 2]);
    let next = w.get(k + 1);
    if next.is_some_and(|n| is(n, PARAMETER_NOUNS))
        || prev.is_some_and(|p| is(p, PARAMETER_LEADS))
        || (prev.is_some_and(|p| p.lower == "the") && prev2.is_some_and(|p| is(p, PARAMETER_LEADS)))
    {
        return false;
    }
    next.is_some_and(|n| is(n, TOOL_NOUNS))
        || prev.is_some_and(|p| is(p, TOOL_LEADS) && p.lower != "the")
        || (prev.is_some_and(|p| p.lower == "the") && prev2.is_some_and(|p| is(p, TOOL_LEADS)))
}

/// Ordering words of other languages, matched as lowercase substrings of the sentence.
pub(super) const FOREIGN_ORDERING: &[&str] = &[
    "必须",
    "先调用",
    "之前",
    "之后",
    "nach jedem",
    "vor jedem",
    "après chaque",
    "avant chaque",
    "lorsque",
    "cuando",
    "quando",
    "когда",
    "wenn",
    "dopo ogni",
    "prima di",
    "ではなく",
    "代わりに",
    "必ず",
    "而不是",
    "代替",
    "总是",
    "始终",
    "en lugar de",
    "en vez de",
    "siempre",
    "statt",
    "immer",
    "au lieu de",
    "toujours",
    "вместо",
    "всегда",
    "em vez de",
    "sempre",
    "primero",
    "zuerst",
    "d'abord",
    "en premier",
    "primeiro",
    "сначала",
    "首先",
    "まず",
    "niemals",
    "jamais",
    "nunca",
    "никогда",
    "remplace",
    "reemplaza",
    "ersetzt",
    "substitui",
    "заменяет",
    "替代",
];

/// Tool nouns of other languages, at the start of the word after a name.
pub(super) const FOREIGN_TOOL_NOUNS: &[&str] = &[
    "ツール",
    "工具",
    "herramienta",
    "outil",
    "werkzeug",
    "инструмент",
    "ferramenta",
];

pub(super) fn cross_tool(text: &str, s: &Sentence, context: &Context) -> Option<Hit> {
    let sentence = text[s.start..s.end].to_lowercase();
    let other_servers = seq(s, &["other", "servers"])
        .or_else(|| seq(s, &["another", "server"]))
        .or_else(|| seq(s, &["other", "server"]));
    let ordered = s.words.iter().any(|w| {
        !w.quoted
            && (is(w, ORDERING)
                || stem(
                    w,
                    &[
                        "avoid", "retire", "deprecat", "replac", "supersed", "redirect", "rout",
                    ],
                ))
    }) || FOREIGN_ORDERING.iter().any(|o| sentence.contains(o))
        || seq(s, &["not", "to", "be"]).is_some()
        || [
            "available",
            "present",
            "installed",
            "connected",
            "loaded",
            "used",
        ]
        .iter()
        .any(|a| seq(s, &["is", a]).is_some())
        || other_servers.is_some();
    if !ordered {
        return None;
    }
    // "to be called immediately after every other tool call": a tool that puts itself in
    // every other tool's path.
    if let Some(i) = seq(s, &["every", "other", "tool"])
        .or_else(|| seq(s, &["each", "other", "tool"]))
        .or_else(|| seq(s, &["any", "other", "tool"]))
        && s.words.iter().any(|x| {
            is(
                x,
                &[
                    "output",
                    "outputs",
                    "arguments",
                    "result",
                    "results",
                    "data",
                    "response",
                    "input",
                ],
            )
        })
        && seq(s, &["this", "server"]).is_none()
    {
        return family_hit(s.span(i, i + 2), "placed around every other tool");
    }
    // "all tools of the X server must forward …", "other tools should send …".
    for (k, w) in s.words.iter().enumerate() {
        if is(w, &["all", "other", "every", "any", "another"])
            && s.words
                .get(k + 1)
                .is_some_and(|n| is(n, &["tool", "tools", "server", "servers"]))
            && (k + 2..s.words.len()).any(|i| {
                is(&s.words[i], MOVE_VERBS) && (commanded(s, i) || s.words[i - 1].lower == "must")
            })
        {
            return family_hit(s.whole(), "orders every other tool");
        }
    }
    for (k, w) in s.words.iter().enumerate() {
        let foreign_noun = |n: &Word| {
            FOREIGN_TOOL_NOUNS.iter().any(|t| n.lower.contains(t))
                || is(
                    n,
                    &[
                        "remplace",
                        "reemplaza",
                        "ersetzt",
                        "substitui",
                        "заменяет",
                        "aufruf",
                        "von",
                    ],
                )
        };
        let foreign_tool = s.words.get(k + 1).is_some_and(foreign_noun)
            || (k > 0 && foreign_noun(&s.words[k - 1]))
            || (other_servers.is_some()
                && w.is_identifier()
                && !w.quoted
                && k > 0
                && !is(&s.words[k - 1], PARAMETER_LEADS));
        let plain_tool = !w.is_identifier()
            && s.words
                .get(k + 1)
                .is_some_and(|n| is(n, &["tool", "tools"]))
            && k > 1
            && s.words[k - 1].lower == "the"
            && is(
                &s.words[k - 2],
                &["of", "than", "over", "replaces", "instead", "avoid"],
            );
        let used = k > 0
            && is(
                &s.words[k - 1],
                &["whenever", "when", "if", "once", "after", "before"],
            )
            && s.words.get(k + 1).is_some_and(|n| {
                is(n, &["is", "gets", "was"])
                    && s.words.get(k + 2).is_some_and(|m| {
                        is(
                            m,
                            &[
                                "used",
                                "called",
                                "invoked",
                                "run",
                                "executed",
                                "available",
                                "triggered",
                                "connected",
                                "requested",
                            ],
                        )
                    })
                    || (n.lower.ends_with('s')
                        && n.lower.len() > 3
                        && !is(n, &["is", "has", "was"]))
            });
        let named_tool = k > 1
            && is(&s.words[k - 1], &["named", "called"])
            && is(&s.words[k - 2], &["tool", "function", "command"]);
        let on_server = w.is_identifier()
            && s.words[k + 1..(k + 5).min(s.words.len())]
                .iter()
                .any(|x| is(x, &["server", "server's"]))
            && !s.words[k + 1..(k + 5).min(s.words.len())]
                .iter()
                .any(|x| x.lower == "this");
        let plain_tool = plain_tool
            || (!w.is_identifier()
                && s.words
                    .get(k + 1)
                    .is_some_and(|n| is(n, &["tool", "tools"]))
                && k > 1
                && s.words[k - 1].lower == "the"
                && is(
                    &s.words[k - 2],
                    &["run", "call", "use", "invoke", "execute"],
                )
                && s.words
                    .iter()
                    .any(|x| is(x, &["first", "before", "whenever", "never", "always"])));
        let code_value = w.ticked && s.words.get(k + 1).is_some_and(|n| n.ticked)
            || (s.words.get(k + 1).is_some_and(|n| n.lower == "from")
                && s.words[k + 1..].iter().any(|x| {
                    is(
                        x,
                        &[
                            "response", "result", "results", "output", "page", "previous",
                        ],
                    )
                })
                && !s.words[k + 1..(k + 5).min(s.words.len())]
                    .iter()
                    .any(|x| is(x, &["server", "server's", "servers"])));
        let templated = text[..w.start].ends_with(['{', '$', '#'])
            || text[..w.start].trim_end().ends_with("{{");
        if w.upper || code_value || templated || w.lower.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let foreign_tool = foreign_tool
            || (w.ticked
                && !text[s.start..s.end].is_ascii()
                && FOREIGN_ORDERING.iter().any(|o| sentence.contains(o)));
        if !((w.is_identifier() && (tool_reference(s, k) || named_tool || on_server || used))
            || (w.is_identifier() && foreign_tool)
            || plain_tool)
        {
            continue;
        }
        let name = w.lower.trim_matches('`');
        let elsewhere = s.words.windows(2).any(|p| {
            is(
                &p[0],
                &[
                    "official", "other", "another", "original", "real", "built-in", "native",
                    "default",
                ],
            ) && is(&p[1], &["server", "servers", "client"])
        });
        match context.is_own(name).map(|own| own && !elsewhere) {
            Some(true) => continue,
            known => {
                let strong = known.is_some();
                let evidence = if strong {
                    format!("names tool \"{name}\", which this server does not have")
                } else {
                    format!("names tool \"{name}\"")
                };
                return Some(Hit::new(
                    "cross_tool_directive",
                    Family::CrossTool,
                    strong,
                    s.whole(),
                    evidence,
                ));
            }
        }
    }
    None
}

/// A tool named as another server's ("the filesystem server's read_file", "the GitHub
/// server's push_files", "the browser's navigate tool") in a sentence that orders tools, or any
/// other tool of a kind put under this one's rules ("any other mail tool … reuses this field").
pub(super) fn foreign_server_tool(text: &str, s: &Sentence, context: &Context) -> Option<Hit> {
    let w = &s.words;
    for (k, x) in w.iter().enumerate() {
        let possessed = k > 0
            && text[..x.start].trim_end().ends_with("'s")
            && is(
                &w[k - 1],
                &["server", "browser", "client", "app", "extension", "plugin"],
            );
        let plain_named = w.get(k + 1).is_some_and(|n| is(n, &["tool", "tools"]))
            && !is(
                x,
                &[
                    "current", "other", "own", "same", "new", "existing", "default", "main",
                    "standard",
                ],
            );
        let named_tool = !x.upper && (x.is_identifier() || plain_named);
        if possessed && named_tool && context.is_own(&x.lower) != Some(true) {
            let ordering = w.iter().any(|y| {
                is(y, ORDERING) || y.ordered || stem(y, &["replac", "deprecat", "avoid", "stop"])
            });
            if ordering {
                let evidence = format!("names \"{}\" of another {}", x.lower, w[k - 1].lower);
                return family_hit(s.span(k - 1, k), evidence);
            }
        }
    }
    for (k, x) in w.iter().enumerate() {
        if is(x, &["any", "every", "all", "each"])
            && seq(s, &["this", "server"]).is_none()
            && w.get(k + 1).is_some_and(|n| n.lower == "other")
            && w[k + 2..(k + 5).min(w.len())]
                .iter()
                .any(|t| is(t, &["tool", "tools"]))
            && w[k + 3..].iter().any(|v| {
                v.ordered
                    || is(
                        v,
                        &["reuses", "uses", "sends", "calls", "gets", "must", "should"],
                    )
            })
        {
            return family_hit(s.span(k, k + 2), "orders every other tool of a kind");
        }
    }
    None
}

/// A strong hit of this family's pattern (`cross_tool_directive`).
fn family_hit(span: (usize, usize), evidence: impl Into<String>) -> Option<Hit> {
    Some(Hit::strong(
        "cross_tool_directive",
        Family::CrossTool,
        span,
        evidence,
    ))
}
