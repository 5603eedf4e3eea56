//! Phrases of other languages that published techniques use, matched in one pass.

use super::*;

/// One automaton over every foreign phrase, so that a text is searched once for all of them.
pub(super) static FOREIGN: std::sync::LazyLock<Option<aho_corasick::AhoCorasick>> =
    std::sync::LazyLock::new(|| {
        aho_corasick::AhoCorasick::new(FOREIGN_PHRASES.iter().map(|(_, phrase)| phrase)).ok()
    });

/// One automaton over the move verbs of other languages: most texts have none, and are done
/// with in one pass.
static FOREIGN_MOVE_FINDER: std::sync::LazyLock<Option<aho_corasick::AhoCorasick>> =
    std::sync::LazyLock::new(|| aho_corasick::AhoCorasick::new(FOREIGN_MOVES).ok());

pub(super) fn foreign(text: &str) -> Vec<Hit> {
    let lower = text.to_lowercase();
    let mut hits = Vec::new();
    let span_of = |at: usize, len: usize| {
        if lower.len() == text.len() {
            (at, at + len)
        } else {
            (0, text.len())
        }
    };
    let found = FOREIGN
        .as_ref()
        .into_iter()
        .flat_map(|a| a.find_iter(&lower));
    for m in found {
        let (family, phrase) = FOREIGN_PHRASES[m.pattern().as_usize()];
        let at = m.start();
        {
            let (pattern, family) = match family {
                "directive" => ("model_directive", Family::Directive),
                "concealment" => ("concealment", Family::Concealment),
                _ => ("authority_framing", Family::Authority),
            };
            if !hits.iter().any(|h: &Hit| h.pattern == pattern) {
                hits.push(Hit::strong(
                    pattern,
                    family,
                    span_of(at, phrase.len()),
                    format!("phrase \"{phrase}\""),
                ));
            }
        }
    }
    let any_move = FOREIGN_MOVE_FINDER
        .as_ref()
        .is_none_or(|finder| finder.is_match(&lower));
    if !any_move {
        return hits;
    }
    for piece in lower
        .split(['。', '!', '?', '\n', '！', '？'])
        .flat_map(|p| p.split(". "))
    {
        let piece_words = sentences(piece).into_iter().next();
        let verb = FOREIGN_MOVES.iter().find(|v| match &piece_words {
            Some(s) => foreign_word(s, piece, v),
            None => false,
        });
        let what = FOREIGN_SENSITIVE.iter().find(|v| piece.contains(*v));
        // "不要直接写进配置文件": a prohibition just before the verb forbids the move.
        let forbidden = verb.and_then(|v| piece.find(v)).is_some_and(|at| {
            let before: String = piece[..at].chars().rev().take(4).collect();
            ["要不", "别", "勿", "不", "ない"]
                .iter()
                .any(|n| before.contains(n))
        });
        let denied = forbidden || FOREIGN_DEFENSIVE.iter().any(|d| piece.contains(d));
        if let (Some(verb), Some(what)) = (verb, what)
            && !denied
        {
            let at = lower.find(piece).unwrap_or(0);
            hits.push(Hit::strong(
                "exfiltration_directive",
                Family::Exfiltration,
                span_of(at, piece.len()),
                format!("verb \"{verb}\", sensitive \"{what}\""),
            ));
            break;
        }
    }
    hits
}
