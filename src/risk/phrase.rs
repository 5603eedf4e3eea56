//! A small phrase matcher over word tokens.
//!
//! Rules are written as readable strings: space-separated slots, `|` between alternative words,
//! a trailing `*` for a prefix, and `~N` to allow up to N arbitrary words before the next slot.
//! `"do not tell|mention ~2 user|users"` matches "Do not tell the user" and "don't mention it to
//! users". Matching works on whole tokens, so it never fires inside a longer word.
//!
//! Rules are compiled together into a [`PhraseBook`]: every distinct alternative of every rule
//! gets a number, each slot becomes the set of numbers it accepts, and a text is indexed once
//! (which alternatives each token satisfies) for all rules. A rule with a slot that no token of
//! the text satisfies is then dismissed with a few bit operations, which is the fate of most rules
//! for most texts.

use std::collections::HashMap;

use super::tokens::Tokens;
use super::wordhash::WordMap;

/// Phrase rules compiled over one shared vocabulary of alternatives.
#[derive(Debug, Clone)]
pub struct PhraseBook {
    /// Exact-word alternatives and their numbers.
    exact: WordMap<String, usize>,
    /// Prefix alternatives and their numbers, grouped by first byte so that a word is only
    /// compared with the prefixes that start like it; group [`EMPTY_PREFIX`] holds `*` alone.
    prefixes: Vec<Vec<(String, usize)>>,
    /// `u64` blocks in one set of alternatives.
    blocks: usize,
    phrases: Vec<Phrase>,
}

/// One compiled rule: its slots in order.
#[derive(Debug, Clone)]
struct Phrase {
    slots: Vec<Slot>,
}

#[derive(Debug, Clone)]
struct Slot {
    /// How many arbitrary words may come between the previous slot and this one.
    gap: usize,
    /// The alternatives this slot accepts, as a bit set over the book's numbering.
    accepts: Vec<u64>,
}

/// One alternative of a slot as written in a rule.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Alternative {
    Exact(String),
    Prefix(String),
}

/// The prefix group of the empty prefix (after the 256 byte values).
const EMPTY_PREFIX: usize = 256;

/// A rule as written: slots of alternatives with their gaps.
type ParsedRule = Vec<(usize, Vec<Alternative>)>;

impl PhraseBook {
    /// Compiles `rules`, written in the notation described in the module docs. Phrase `i` of
    /// the book is `rules[i]`.
    pub fn new(rules: &[&str]) -> PhraseBook {
        let parsed: Vec<ParsedRule> = rules.iter().map(|rule| parse(rule)).collect();
        let mut numbers: HashMap<Alternative, usize> = HashMap::new();
        for (_, alternatives) in parsed.iter().flatten() {
            for alternative in alternatives {
                let next = numbers.len();
                numbers.entry(alternative.clone()).or_insert(next);
            }
        }
        let blocks = numbers.len().div_ceil(64);
        let phrases = parsed
            .iter()
            .map(|rule| Phrase {
                slots: rule
                    .iter()
                    .map(|(gap, alternatives)| {
                        let mut accepts = vec![0; blocks];
                        for alternative in alternatives {
                            if let Some(&number) = numbers.get(alternative) {
                                set_bit(&mut accepts, number);
                            }
                        }
                        Slot { gap: *gap, accepts }
                    })
                    .collect(),
            })
            .collect();
        let mut exact = WordMap::default();
        let mut prefixes = vec![Vec::new(); EMPTY_PREFIX + 1];
        for (alternative, number) in numbers {
            match alternative {
                Alternative::Exact(word) => {
                    exact.insert(word, number);
                }
                Alternative::Prefix(prefix) => {
                    prefixes[first_byte_group(&prefix)].push((prefix, number))
                }
            }
        }
        PhraseBook {
            exact,
            prefixes,
            blocks,
            phrases,
        }
    }

    /// How many phrases the book holds.
    pub fn len(&self) -> usize {
        self.phrases.len()
    }

    /// True for a book without phrases.
    pub fn is_empty(&self) -> bool {
        self.phrases.is_empty()
    }

    /// Records in `index` which alternatives each token of `tokens` satisfies.
    pub fn index(&self, tokens: &Tokens, index: &mut TextIndex) {
        index.tokens = tokens.len();
        index.blocks = self.blocks;
        index.rows.clear();
        index.rows.resize(tokens.len() * self.blocks, 0);
        index.present.clear();
        index.present.resize(self.blocks, 0);
        for (position, word) in tokens.words().enumerate() {
            let row = &mut index.rows[position * self.blocks..(position + 1) * self.blocks];
            if let Some(&number) = self.exact.get(word) {
                set_bit(row, number);
            }
            let same_start = &self.prefixes[first_byte_group(word)];
            for (prefix, number) in same_start.iter().chain(&self.prefixes[EMPTY_PREFIX]) {
                if word.starts_with(prefix.as_str()) {
                    set_bit(row, *number);
                }
            }
            for (present, bits) in index.present.iter_mut().zip(row.iter()) {
                *present |= bits;
            }
        }
    }

    /// The first match of phrase `phrase` in the indexed text, as the index of its first and
    /// last token. Every slot needs one of its alternatives somewhere in the text; that is
    /// checked first.
    pub fn find(&self, phrase: usize, index: &TextIndex) -> Option<(usize, usize)> {
        let phrase = self.phrases.get(phrase)?;
        let every_slot_present = phrase
            .slots
            .iter()
            .all(|slot| intersects(&slot.accepts, &index.present));
        if every_slot_present {
            phrase.scan(index)
        } else {
            None
        }
    }

    /// [`find`](Self::find) without the presence check: tries every start token.
    pub fn scan(&self, phrase: usize, index: &TextIndex) -> Option<(usize, usize)> {
        self.phrases.get(phrase)?.scan(index)
    }
}

/// Which alternatives of a [`PhraseBook`] each token of one text satisfies, and which occur
/// anywhere in it. Kept from text to text to reuse its buffers.
#[derive(Debug, Clone, Default)]
pub struct TextIndex {
    /// How many tokens the text has.
    tokens: usize,
    blocks: usize,
    /// One bit set per token, `blocks` words each.
    rows: Vec<u64>,
    /// The union of all rows.
    present: Vec<u64>,
}

impl TextIndex {
    fn len(&self) -> usize {
        self.tokens
    }

    fn token_matches(&self, position: usize, slot: &Slot) -> bool {
        let row = &self.rows[position * self.blocks..(position + 1) * self.blocks];
        intersects(row, &slot.accepts)
    }
}

impl Phrase {
    /// The first match, as the index of its first and last token.
    fn scan(&self, index: &TextIndex) -> Option<(usize, usize)> {
        let first = self.slots.first()?;
        (0..index.len())
            .filter(|&i| index.token_matches(i, first))
            .find_map(|i| self.match_rest(index, 1, i).map(|end| (i, end)))
    }

    /// Tries to match slots `slot..` after the token at `prev`; returns the last matched index.
    fn match_rest(&self, index: &TextIndex, slot: usize, prev: usize) -> Option<usize> {
        let Some(current) = self.slots.get(slot) else {
            return Some(prev);
        };
        let len = index.len();
        let from = prev + 1;
        let to = (from + current.gap).min(len.saturating_sub(1));
        (from..=to)
            .filter(|&j| j < len && index.token_matches(j, current))
            .find_map(|j| self.match_rest(index, slot + 1, j))
    }
}

/// Splits a rule into slots; `~N` sets the gap before the next slot.
fn parse(rule: &str) -> ParsedRule {
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
        slots.push((gap, alternatives));
        gap = 0;
    }
    slots
}

/// The prefix group of a prefix or word: its first byte, or [`EMPTY_PREFIX`].
fn first_byte_group(text: &str) -> usize {
    text.as_bytes()
        .first()
        .map_or(EMPTY_PREFIX, |&byte| usize::from(byte))
}

fn set_bit(set: &mut [u64], number: usize) {
    set[number / 64] |= 1 << (number % 64);
}

fn intersects(a: &[u64], b: &[u64]) -> bool {
    a.iter().zip(b).any(|(x, y)| x & y != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(rule: &str, text: &str) -> bool {
        let book = PhraseBook::new(&[rule]);
        let mut index = TextIndex::default();
        book.index(&Tokens::of(text), &mut index);
        let found = book.scan(0, &index);
        assert_eq!(
            book.find(0, &index),
            found,
            "the presence check agrees with the scan"
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
            ("send *", "send it", true),
            ("send *", "send", false),
            ("secret*", "the secret", true),
            ("secret* key", "secrets key", true),
            ("Send|POST ~1 data", "post the data", true),
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
        let tokens = Tokens::of("please do not tell the user now");
        let book = PhraseBook::new(&["do not tell ~2 user"]);
        let mut index = TextIndex::default();
        book.index(&tokens, &mut index);
        let (a, b) = book.find(0, &index).unwrap();
        assert_eq!((tokens.word(a), tokens.word(b)), ("do", "user"));
    }

    #[test]
    fn phrases_of_one_book_share_words_and_stay_apart() {
        let book = PhraseBook::new(&["send ~2 secret*", "secret key", "never send"]);
        let tokens = Tokens::of("Never send the secrets");
        let mut index = TextIndex::default();
        book.index(&tokens, &mut index);
        let found: Vec<Option<(usize, usize)>> =
            (0..book.len()).map(|p| book.find(p, &index)).collect();
        assert_eq!(found, [Some((1, 3)), None, Some((0, 1))]);
        assert_eq!(book.find(book.len(), &index), None, "no such phrase");
    }
}
