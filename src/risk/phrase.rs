//! A small phrase matcher over word tokens.
//!
//! Rules are written as readable strings: space-separated slots, `|` between alternative words,
//! a trailing `*` for a prefix, and `~N` to allow up to N arbitrary words before the next slot.
//! `"do not tell|mention ~2 user|users"` matches "Do not tell the user" and "don't mention it to
//! users". Matching works on whole tokens, so it never fires inside a longer word.

use super::tokens::Token;

/// A tokenized text with its distinct words sorted, so that a rule with a word the text lacks
/// is dismissed with a few binary searches instead of a scan (most rules, for most texts).
pub struct Words<'a> {
    tokens: &'a [Token],
    sorted: Vec<&'a str>,
}

impl<'a> Words<'a> {
    /// Indexes the words of `tokens`.
    pub fn new(tokens: &'a [Token]) -> Self {
        let mut sorted: Vec<&str> = tokens.iter().map(|t| t.word.as_str()).collect();
        sorted.sort_unstable();
        sorted.dedup();
        Words { tokens, sorted }
    }

    fn has(&self, alternative: &Alternative) -> bool {
        match alternative {
            Alternative::Exact(word) => self.sorted.binary_search(&word.as_str()).is_ok(),
            Alternative::Prefix(prefix) => {
                // Words starting with the prefix sort right at or after it.
                let at = self.sorted.partition_point(|w| *w < prefix.as_str());
                self.sorted
                    .get(at)
                    .is_some_and(|w| w.starts_with(prefix.as_str()))
            }
        }
    }
}

/// One compiled phrase rule.
#[derive(Debug, Clone)]
pub struct Phrase {
    slots: Vec<Slot>,
    /// The slot with the fewest exact-word alternatives: checked first against a text's words.
    anchor: usize,
}

#[derive(Debug, Clone)]
struct Slot {
    /// How many arbitrary words may come between the previous slot and this one.
    gap: usize,
    alternatives: Vec<Alternative>,
}

#[derive(Debug, Clone)]
enum Alternative {
    Exact(String),
    Prefix(String),
}

impl Alternative {
    fn matches(&self, word: &str) -> bool {
        match self {
            Alternative::Exact(w) => w == word,
            Alternative::Prefix(p) => word.starts_with(p.as_str()),
        }
    }
}

impl Phrase {
    /// Compiles a rule written in the notation described in the module docs.
    pub fn new(rule: &str) -> Phrase {
        let mut slots = Vec::new();
        let mut gap = 0;
        for part in rule.split_whitespace() {
            if let Some(n) = part.strip_prefix('~') {
                gap = n.parse().unwrap_or(0);
                continue;
            }
            let alternatives = part
                .split('|')
                .map(|alt| match alt.strip_suffix('*') {
                    Some(prefix) => Alternative::Prefix(prefix.to_lowercase()),
                    None => Alternative::Exact(alt.to_lowercase()),
                })
                .collect();
            slots.push(Slot { gap, alternatives });
            gap = 0;
        }
        let anchor = slots
            .iter()
            .enumerate()
            .filter(|(_, slot)| {
                slot.alternatives
                    .iter()
                    .all(|a| matches!(a, Alternative::Exact(_)))
            })
            .min_by_key(|(_, slot)| slot.alternatives.len())
            .map_or(0, |(index, _)| index);
        Phrase { slots, anchor }
    }

    /// The first match in an indexed text, as the index of its first and last token. Every slot
    /// needs one of its words somewhere in the text; that is checked first, starting with the
    /// anchor slot, which rejects most texts with one or two lookups.
    pub fn find_in(&self, words: &Words<'_>) -> Option<(usize, usize)> {
        let slot_present = |slot: &Slot| slot.alternatives.iter().any(|a| words.has(a));
        let anchor_present = self.slots.get(self.anchor).is_none_or(slot_present);
        if anchor_present && self.slots.iter().all(slot_present) {
            self.find(words.tokens)
        } else {
            None
        }
    }

    /// The first match in `tokens`, as the index of its first and last token.
    pub fn find(&self, tokens: &[Token]) -> Option<(usize, usize)> {
        let first = self.slots.first()?;
        (0..tokens.len())
            .filter(|&i| slot_matches(first, &tokens[i]))
            .find_map(|i| self.match_rest(tokens, 1, i).map(|end| (i, end)))
    }

    /// Tries to match slots `slot..` after the token at `prev`; returns the last matched index.
    fn match_rest(&self, tokens: &[Token], slot: usize, prev: usize) -> Option<usize> {
        let Some(current) = self.slots.get(slot) else {
            return Some(prev);
        };
        let from = prev + 1;
        let to = (from + current.gap).min(tokens.len().saturating_sub(1));
        (from..=to)
            .filter(|&j| j < tokens.len() && slot_matches(current, &tokens[j]))
            .find_map(|j| self.match_rest(tokens, slot + 1, j))
    }
}

fn slot_matches(slot: &Slot, token: &Token) -> bool {
    slot.alternatives.iter().any(|a| a.matches(&token.word))
}

#[cfg(test)]
mod tests {
    use super::super::tokens::tokenize;
    use super::*;

    fn hit(rule: &str, text: &str) -> bool {
        let tokens = tokenize(text);
        let found = Phrase::new(rule).find(&tokens);
        assert_eq!(
            Phrase::new(rule).find_in(&Words::new(&tokens)),
            found,
            "the indexed search agrees with the scan"
        );
        found.is_some()
    }

    #[test]
    fn matches_by_whole_words_with_gaps() {
        let cases = [
            (
                "do not tell|mention ~2 user|users",
                "Do not tell the user.",
                true,
            ),
            (
                "do not tell|mention ~1 user|users",
                "don't mention it to users",
                false,
            ),
            (
                "do not tell|mention ~2 user|users",
                "don't mention it to users",
                true,
            ),
            (
                "do not tell ~2 user",
                "Do not tell anyone else about the user",
                false,
            ),
            ("credential*", "Use the credentials file", true),
            ("delete", "undelete a file", false),
            ("before ~2 using ~3 tool", "Before using this tool", true),
            ("before ~2 using ~3 tool", "tool using before", false),
        ];
        for (rule, text, expected) in cases {
            assert_eq!(hit(rule, text), expected, "{rule:?} on {text:?}");
        }
    }

    #[test]
    fn backtracks_over_an_early_partial_match() {
        // The first "ignore" does not lead to a match; the second one does.
        assert!(hit(
            "ignore ~2 previous instructions",
            "ignore case. Ignore all previous instructions"
        ));
    }

    #[test]
    fn reports_the_span_of_the_match() {
        let tokens = tokenize("please do not tell the user now");
        let (a, b) = Phrase::new("do not tell ~2 user").find(&tokens).unwrap();
        assert_eq!(
            (tokens[a].word.as_str(), tokens[b].word.as_str()),
            ("do", "user")
        );
    }
}
