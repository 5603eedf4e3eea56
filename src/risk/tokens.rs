//! Word tokens with their byte spans, aware of snake, camel, kebab and dotted spelling.
//!
//! Both identifiers (`deleteRepo`, `delete_repo`, `repo-delete`) and prose go through the same
//! splitter, so a rule written as a list of lowercase words matches every spelling of a name and
//! never matches inside a longer word (`undelete` is one token, not `delete`).

/// One lowercase word and where it sits in the original text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The word, lowercased.
    pub word: String,
    /// Byte offset of the first character in the original text.
    pub start: usize,
    /// Byte offset just past the last character in the original text.
    pub end: usize,
}

/// The tokens of one text without a `String` per word: the lowercase words sit side by side in
/// one buffer. Both buffers are kept when the value is refilled with the next text, so scanning
/// many texts allocates almost nothing.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    /// Every word, lowercased, one after the other.
    words: String,
    spans: Vec<Span>,
}

/// Where one token's word sits in the word buffer, and where the token sits in the text.
#[derive(Debug, Clone, Copy)]
struct Span {
    word_start: usize,
    word_end: usize,
    start: usize,
    end: usize,
}

impl Tokens {
    /// The tokens of `text` (see [`tokenize`] for the rules).
    pub fn of(text: &str) -> Tokens {
        let mut tokens = Tokens::default();
        tokens.fill(text);
        tokens
    }

    /// Replaces the tokens with those of `text`, reusing the buffers. One pass over the
    /// characters: a run of letters and digits is cut again at `aB` and at `ABc` (the last
    /// capital starts the new word).
    pub fn fill(&mut self, text: &str) {
        self.words.clear();
        self.spans.clear();
        if text.is_ascii() {
            // The same characters at the same offsets, without decoding UTF-8.
            self.split(text, text.bytes().map(char::from).enumerate());
        } else {
            self.split(text, text.char_indices());
        }
    }

    /// Pushes the tokens of `text`, whose characters and their byte offsets are `chars`.
    fn split(&mut self, text: &str, chars: impl Iterator<Item = (usize, char)>) {
        // Inside a run: where the current piece starts, and the character before this one.
        let mut piece: Option<(usize, char)> = None;
        let mut chars = chars.peekable();
        while let Some((at, c)) = chars.next() {
            if !c.is_alphanumeric() {
                if let Some((start, _)) = piece.take() {
                    self.push(text, start, at);
                }
                continue;
            }
            let Some((start, prev)) = piece else {
                piece = Some((at, c));
                continue;
            };
            // Both cuts come before a capital: `aB` (also `1B`) and `ABc`.
            let cut = c.is_uppercase()
                && ((prev.is_lowercase() || prev.is_ascii_digit())
                    || (prev.is_uppercase()
                        && chars
                            .peek()
                            .is_some_and(|&(_, n)| n.is_alphanumeric() && n.is_lowercase())));
            if cut {
                self.push(text, start, at);
                piece = Some((at, c));
            } else {
                piece = Some((start, c));
            }
        }
        if let Some((start, _)) = piece {
            self.push(text, start, text.len());
        }
    }

    /// How many tokens there are.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// True when the text had no word at all.
    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// The lowercase word of token `index`.
    pub fn word(&self, index: usize) -> &str {
        let span = self.spans[index];
        &self.words[span.word_start..span.word_end]
    }

    /// Byte offset in the text of the first character of token `index`.
    pub fn start(&self, index: usize) -> usize {
        self.spans[index].start
    }

    /// Byte offset in the text just past the last character of token `index`.
    pub fn end(&self, index: usize) -> usize {
        self.spans[index].end
    }

    /// Every word in order.
    pub fn words(&self) -> impl Iterator<Item = &str> + Clone {
        (0..self.len()).map(|index| self.word(index))
    }

    /// Pushes `text[start..end]` lowercased, then turns `don` + `'` + `t` into `do` + `not`.
    fn push(&mut self, text: &str, start: usize, end: usize) {
        if start >= end {
            return;
        }
        let piece = &text[start..end];
        let word_start = self.words.len();
        if piece.is_ascii() {
            self.words.push_str(piece);
            self.words[word_start..].make_ascii_lowercase();
        } else {
            // Full Unicode lowercasing of the piece alone (final sigma depends on the piece).
            self.words.push_str(&piece.to_lowercase());
        }
        self.spans.push(Span {
            word_start,
            word_end: self.words.len(),
            start,
            end,
        });
        self.expand_contraction(text);
    }

    /// `don't` arrives as `don` + `t`; when the last two tokens are such a pair joined by an
    /// apostrophe, their words become the auxiliary and `not` (spans unchanged).
    fn expand_contraction(&mut self, text: &str) {
        let [.., before, last] = self.spans[..] else {
            return;
        };
        if &self.words[last.word_start..last.word_end] != "t"
            || !matches!(&text[before.end..last.start], "'" | "\u{2019}")
        {
            return;
        }
        let Some(auxiliary) = auxiliary_of(&self.words[before.word_start..before.word_end]) else {
            return;
        };
        self.words.truncate(before.word_start);
        self.words.push_str(auxiliary);
        let auxiliary_end = self.words.len();
        self.words.push_str("not");
        let count = self.spans.len();
        self.spans[count - 2].word_end = auxiliary_end;
        self.spans[count - 1].word_start = auxiliary_end;
        self.spans[count - 1].word_end = self.words.len();
    }
}

/// The auxiliary a contraction stem stands for (`don` → `do`, `won` → `will`).
fn auxiliary_of(stem: &str) -> Option<&'static str> {
    match stem {
        "don" => Some("do"),
        "doesn" => Some("does"),
        "didn" => Some("did"),
        "shouldn" => Some("should"),
        "mustn" => Some("must"),
        "won" => Some("will"),
        "isn" => Some("is"),
        "aren" => Some("are"),
        _ => None,
    }
}

/// Splits `text` into lowercase word tokens: runs of letters and digits, cut again at camel-case
/// boundaries (`getHTTPResponse` → `get`, `http`, `response`). Contractions such as `don't` become
/// `do`, `not`, so negated phrases match whichever way they are spelled.
pub fn tokenize(text: &str) -> Vec<Token> {
    let tokens = Tokens::of(text);
    (0..tokens.len())
        .map(|index| Token {
            word: tokens.word(index).to_string(),
            start: tokens.start(index),
            end: tokens.end(index),
        })
        .collect()
}

/// The lowercase words of `text`, without spans.
pub fn words(text: &str) -> Vec<String> {
    Tokens::of(text).words().map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_every_identifier_spelling_the_same_way() {
        let cases: &[(&str, &[&str])] = &[
            ("deleteRepo", &["delete", "repo"]),
            ("delete_repo", &["delete", "repo"]),
            ("repo-delete", &["repo", "delete"]),
            ("DeleteRepo", &["delete", "repo"]),
            ("getHTTPResponse", &["get", "http", "response"]),
            ("s3Upload", &["s3", "upload"]),
            ("undelete_history", &["undelete", "history"]),
            ("files.read", &["files", "read"]),
            ("API_KEY", &["api", "key"]),
            ("id_ed25519", &["id", "ed25519"]),
            ("", &[]),
        ];
        for (input, expected) in cases {
            assert_eq!(words(input), *expected, "input {input:?}");
        }
    }

    #[test]
    fn spans_point_back_into_the_text() {
        let text = "Read ~/.ssh/id_rsa now";
        for token in tokenize(text) {
            assert_eq!(text[token.start..token.end].to_lowercase(), token.word);
        }
    }

    #[test]
    fn contractions_become_not() {
        assert_eq!(words("Don't tell"), ["do", "not", "tell"]);
        assert_eq!(words("doesn\u{2019}t matter"), ["does", "not", "matter"]);
        assert_eq!(words("don t"), ["don", "t"]);
    }

    #[test]
    fn non_ascii_letters_stay_in_words() {
        assert_eq!(words("Größe prüfen"), ["größe", "prüfen"]);
    }

    #[test]
    fn each_piece_is_lowercased_on_its_own() {
        // A final sigma is final within its piece, whatever follows in the text.
        assert_eq!(words("ΟΔΟΣ'Α"), ["οδος", "α"]);
        assert_eq!(words("ΟΔΟΣΑ"), ["οδοσα"]);
        // Lowercasing may change the length; spans stay those of the text.
        let text = "İSTANBUL";
        let tokens = tokenize(text);
        assert_eq!(tokens.len(), 1);
        assert_eq!((tokens[0].start, tokens[0].end), (0, text.len()));
        assert_eq!(tokens[0].word, "i\u{307}stanbul");
    }

    #[test]
    fn refilling_replaces_every_token() {
        let mut tokens = Tokens::of("Don't send the CREDENTIALS file");
        tokens.fill("getUser");
        assert_eq!(tokens.words().collect::<Vec<_>>(), ["get", "user"]);
        assert_eq!((tokens.start(1), tokens.end(1)), (3, 7));
        tokens.fill(" -- ");
        assert!(tokens.is_empty());
    }

    /// The splitting rules written the plain way: collect runs, cut each run, lowercase each
    /// piece, then join contractions. The buffered tokenizer must agree with it on any text.
    fn reference(text: &str) -> Vec<(String, usize, usize)> {
        let chars: Vec<(usize, char)> = text.char_indices().collect();
        let mut pieces: Vec<(usize, usize)> = Vec::new();
        let mut k = 0;
        while k < chars.len() {
            if !chars[k].1.is_alphanumeric() {
                k += 1;
                continue;
            }
            let run_start = k;
            while k < chars.len() && chars[k].1.is_alphanumeric() {
                k += 1;
            }
            let run = &chars[run_start..k];
            let mut piece_start = run[0].0;
            for i in 1..run.len() {
                let (prev, cur) = (run[i - 1].1, run[i].1);
                let next_is_lower = run.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
                let lower_to_upper =
                    (prev.is_lowercase() || prev.is_ascii_digit()) && cur.is_uppercase();
                let acronym_end = prev.is_uppercase() && cur.is_uppercase() && next_is_lower;
                if lower_to_upper || acronym_end {
                    pieces.push((piece_start, run[i].0));
                    piece_start = run[i].0;
                }
            }
            let run_end = chars.get(k).map_or(text.len(), |(at, _)| *at);
            pieces.push((piece_start, run_end));
        }
        let mut out: Vec<(String, usize, usize)> = pieces
            .into_iter()
            .map(|(a, b)| (text[a..b].to_lowercase(), a, b))
            .collect();
        let mut i = 0;
        while i + 1 < out.len() {
            let apostrophe = matches!(&text[out[i].2..out[i + 1].1], "'" | "\u{2019}");
            if out[i + 1].0 == "t"
                && apostrophe
                && let Some(auxiliary) = auxiliary_of(&out[i].0)
            {
                out[i].0 = auxiliary.to_string();
                out[i + 1].0 = "not".to_string();
                i += 1;
            }
            i += 1;
        }
        out
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        /// Texts made of word pieces, camel humps, apostrophes and non-ASCII letters.
        fn arb_text() -> impl Strategy<Value = String> {
            let piece = prop_oneof![
                "[a-zA-Z0-9]{1,6}",
                Just("don".to_string()),
                Just("WON".to_string()),
                Just("t".to_string()),
                Just("'".to_string()),
                Just("\u{2019}".to_string()),
                Just(" ".to_string()),
                Just("_".to_string()),
                Just("ΟΔΟΣ".to_string()),
                Just("İ".to_string()),
                Just("ǅ".to_string()),
                Just("²".to_string()),
                "\\PC{1,3}",
            ];
            prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
        }

        proptest! {
            #[test]
            fn agrees_with_the_plain_definition(text in arb_text()) {
                let got: Vec<(String, usize, usize)> = tokenize(&text)
                    .into_iter()
                    .map(|t| (t.word, t.start, t.end))
                    .collect();
                prop_assert_eq!(got, reference(&text));
            }
        }
    }
}
