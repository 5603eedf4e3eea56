//! The `authority` family: pseudo-system headers and banners in any markup, messages
//! claiming to come from the provider, and settings blocks aimed at the model.

use super::*;

pub(super) fn authority(text: &str, s: &Sentence, _: &Context) -> Option<Hit> {
    let w = &s.words;
    let mut weak: Option<Hit> = None;
    for (i, x) in w.iter().enumerate() {
        let Some(next) = w.get(i + 1) else { break };
        let Some((_, seconds)) = AUTHORITY_HEADERS
            .iter()
            .find(|(first, _)| *first == x.lower)
        else {
            continue;
        };
        if !seconds.contains(&next.lower.as_str()) {
            continue;
        }
        // "note to the assistant", "instructions for the AI": the addressee decides.
        if is(next, &["to", "for"]) {
            let addressee = w[i + 2..(i + 4).min(w.len())]
                .iter()
                .any(|a| is(a, MODEL_NAMES));
            if addressee {
                return family_hit(
                    s.span(i, (i + 3).min(w.len() - 1)),
                    format!("header \"{} {} …\" to the model", x.lower, next.lower),
                );
            }
            continue;
        }
        let original = &text[x.start..next.end];
        let shouted = original
            .chars()
            .filter(|c| c.is_alphabetic())
            .all(char::is_uppercase);
        let colon = text[next.end..].trim_start().starts_with(':');
        let framed = text[..x.start]
            .trim_end()
            .ends_with(['[', '<', '#', '*', '`', '(', '{', '|', '=', '-']);
        let strong = colon
            || framed
            || (shouted
                && is(
                    x,
                    &["system", "admin", "administrator", "developer", "override"],
                ));
        let evidence = format!("header \"{original}\"");
        let found = Hit::new(
            "authority_framing",
            Family::Authority,
            strong,
            s.span(i, i + 1),
            evidence,
        );
        if strong {
            return Some(found);
        }
        weak.get_or_insert(found);
    }
    // A claimed sender: "from the model provider's Trust & Safety team:".
    if let Some((i, j)) = s.pair(
        &["from", "by"],
        &[
            "provider",
            "provider's",
            "safety",
            "administrator",
            "administrators",
            "admin",
            "vendor",
            "platform",
            "anthropic",
            "openai",
            "operator",
            "operators",
        ],
        4,
    ) && text[w[j].end..s.end].contains(':')
        && w[i..=j].iter().any(|x| is(x, &["the", "your", "model"]))
    {
        return family_hit(s.span(i, j), "a message claiming to come from the provider");
    }
    // "For AI readers:", "Attention assistant:", "To the model:".
    for (i, x) in w.iter().enumerate() {
        if is(x, &["for", "to", "attention", "dear", "hey"])
            && (x.clause_start || i == 0)
            && let Some(k) = (i + 1..(i + 4).min(w.len())).find(|&k| is(&w[k], MODEL_NAMES))
            && let Some(end) =
                (k..(k + 2).min(w.len())).find(|&e| text[w[e].end..].starts_with(':'))
        {
            return family_hit(s.span(i, end), "a header addressed to the model");
        }
    }
    // Role markers: "system:" opening a line, a chat message object with the system role.
    if let Some(first) = w.first()
        && is(first, &["system", "assistant", "developer"])
        && text[first.end..].starts_with(':')
        && w.len() > 2
    {
        return family_hit(s.span(0, 0), format!("role marker \"{}:\"", first.lower));
    }
    let sentence = text[s.start..s.end].to_ascii_lowercase();
    let compact: String = sentence.chars().filter(|c| !c.is_whitespace()).collect();
    let role = [
        "\"role\":\"system\"",
        "\"role\":\"developer\"",
        "'role':'system'",
        "'role':'developer'",
    ];
    let role_message = role.iter().any(|r| {
        compact
            .match_indices(r)
            .any(|(at, _)| compact[at + r.len()..].starts_with([',', '}']))
    });
    let example = s.words.iter().any(|w| {
        is(
            w,
            &[
                "e.g", "example", "examples", "format", "schema", "like", "list", "array", "usual",
            ],
        )
    }) || sentence.contains("such as");
    if role_message && !example {
        return family_hit(s.whole(), "a system-role message");
    }
    // A shouted header naming an authority ("=== MESSAGE FROM THE SAFETY TEAM ===",
    // "[SISTEMA]", "AVISO DO ADMINISTRADOR:", "SYSTEM-LEVEL RULE:").
    if let Some(found) = shouted_header(text, s) {
        return Some(found);
    }
    // Shouted urgency ("URGENT:", "[CRITICAL]") is weak on its own.
    for x in w {
        let original = &text[x.start..x.end];
        if is(
            x,
            &[
                "urgent",
                "critical",
                "attention",
                "warning",
                "mandatory",
                "required",
                "override",
            ],
        ) && original.len() > 3
            && original.chars().all(|c| c.is_ascii_uppercase())
            && (text[x.end..].starts_with(':')
                || text[x.end..].starts_with(']')
                || text[x.end..].starts_with('!'))
        {
            return Some(Hit::weak(
                "authority_framing",
                Family::Authority,
                (x.start, x.end),
                format!("urgency \"{original}\""),
            ));
        }
    }
    weak
}

/// Words that claim an authority when shouted in a header, in the languages of the corpus.
pub(super) const AUTHORITY_WORDS: &[&str] = &[
    "system",
    "sistema",
    "système",
    "systeme",
    "систем",
    "admin",
    "administrator",
    "administrador",
    "administrateur",
    "override",
    "developer",
    "operator",
    "root",
    "sudo",
    "instruction",
    "directive",
    "mandatory",
    "official",
    "safety",
    "security",
    "compliance",
    "provider",
    "anthropic",
    "openai",
    "policy",
    "trusted",
    "verified",
    "authorized",
    "authorised",
    "host",
    "platform",
    "vendor",
    "priority",
];

pub(super) fn shouted_header(text: &str, s: &Sentence) -> Option<Hit> {
    let w = &s.words;
    let is_shouted = |x: &Word| {
        let original = &text[x.start..x.end];
        original.chars().filter(|c| c.is_alphabetic()).count() >= 2
            && original
                .chars()
                .filter(|c| c.is_alphabetic())
                .all(char::is_uppercase)
    };
    let mut i = 0;
    while i < w.len() {
        if !is_shouted(&w[i]) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j + 1 < w.len() && is_shouted(&w[j + 1]) {
            j += 1;
        }
        let authority = w[i..=j]
            .iter()
            .any(|x| stem(x, AUTHORITY_WORDS) || is(x, MODEL_NAMES));
        let before = text[..w[i].start]
            .trim_end_matches(|c: char| c.is_whitespace() || !c.is_ascii() && !c.is_alphanumeric());
        let after = text[w[j].end..].trim_start();
        let framed = before.ends_with(['[', '<', '=', '#', '*', '|', '【', '-'])
            || after.starts_with([']', '>', '=', '*', '】'])
            || (after.starts_with('(') && after.contains(") ---"));
        let colon = after.starts_with(':')
            || (after.starts_with('(') && after.find("):").is_some_and(|c| c < 60));
        let listed = listed_tag(text, (w[i].start, w[j].end));
        let framed = framed && !listed;
        if authority && (framed || colon) && (j > i || framed) {
            let evidence = format!("header \"{}\"", &text[w[i].start..w[j].end]);
            return family_hit((w[i].start, w[j].end), evidence);
        }
        i = j + 1;
    }
    None
}

// ---- settings addressed to the model

/// Words of a settings key that claim to reconfigure the model.
pub(super) const CONFIG_OVERRIDES: &[&str] = &[
    "override",
    "overrides",
    "supersede",
    "bypass",
    "persona",
    "jailbreak",
    "unrestricted",
    "trust",
    "dev",
    "god",
    "sudo",
    "root",
    "unlock",
    "unlocked",
    "uncensored",
    "disable",
    "ignore",
    "reveal",
    "require",
    "requires",
    "confirm",
    "confirmation",
    "approval",
];

/// A settings block aimed at the model: a fence named like a role (```` ```system ````), or a
/// key (YAML `key:`, TOML `key =` or `[table]`, XML `<key>`) that names the model or an
/// override (`supersede_system_prompt = true`, `<assistant_config>`, `policy_override: true`).
pub(super) fn config_block(text: &str) -> Option<Hit> {
    let lower = text.to_ascii_lowercase();
    for role in [
        "```system",
        "```admin",
        "```assistant",
        "```developer",
        "```instructions",
    ] {
        if let Some(at) = lower.find(role) {
            return family_hit(
                (at, at + role.len()),
                format!("a fence named \"{}\"", &role[3..]),
            );
        }
    }
    let mut offset = 0;
    for line in lower.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let tag = line.trim_start().starts_with('<');
        let trimmed = line.trim_start_matches([' ', '\t', '-', '<', '[', '/']);
        let key: &str = trimmed
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.' || c == '-'))
            .next()
            .unwrap_or("");
        let rest = &trimmed[key.len()..];
        let keyed = rest.starts_with([':', '>', ']']) || rest.trim_start().starts_with('=');
        let tag_named = tag && rest.starts_with('>');
        if !keyed || !(key.contains(['_', '.']) || tag_named) {
            continue;
        }
        let words: Vec<&str> = key.split(['_', '.', '-']).collect();
        let model = words.iter().any(|w| MODEL_NAMES.contains(w));
        let overrides = words.iter().any(|w| CONFIG_OVERRIDES.contains(w));
        let instructions = words.iter().any(|w| {
            INSTRUCTION_NOUNS.contains(w)
                || matches!(*w, "system" | "config" | "mode" | "may" | "must" | "level")
        });
        let system_tag = tag
            && words.iter().any(|w| {
                [
                    "system",
                    "système",
                    "systeme",
                    "sistema",
                    "система",
                    "admin",
                    "instructions",
                    "important",
                    "override",
                ]
                .contains(w)
            });
        let system_key = words.contains(&"system")
            && words
                .iter()
                .any(|w| INSTRUCTION_NOUNS.contains(w) || CONFIG_OVERRIDES.contains(w));
        if (model && (overrides || instructions))
            || (overrides && instructions)
            || system_tag
            || system_key
        {
            let at = start + (line.len() - trimmed.len());
            return family_hit(
                (at, at + key.len()),
                format!("a settings key \"{key}\" aimed at the model"),
            );
        }
    }
    None
}

/// A strong hit of this family's pattern (`authority_framing`).
fn family_hit(span: (usize, usize), evidence: impl Into<String>) -> Option<Hit> {
    Some(Hit::strong(
        "authority_framing",
        Family::Authority,
        span,
        evidence,
    ))
}
