//! Sentences and words as the intent rules read them.
//!
//! The phrase matcher of [`super::super::phrase`] splits identifiers into words (`send_email` is
//! `send`, `email`), which is right for capability words and wrong for intent: a directive to call
//! `send_email` names a tool, and the rules must see the name whole. So this module has its own
//! small reader: a text is cut into sentences (`.`, `!`, `?` before a space or the end, a line
//! break, a code fence), each sentence into words that keep `_`, `-`, `.`, `@`, `/`, `:` and `~`
//! inside them (identifiers, URLs, e-mail addresses and paths stay one word), and each word
//! remembers whether it was quoted in backticks and whether a clause starts with it (after `,`,
//! `;`, `:`, `(`, a dash or a quote).

/// One word of a sentence, lowercased, with its byte span in the original text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word, lowercased, with surrounding punctuation removed.
    pub lower: String,
    /// Byte offset of the word in the original text.
    pub start: usize,
    /// Byte offset just past the word.
    pub end: usize,
    /// The word was written inside backticks (`` `export_all` ``).
    pub quoted: bool,
    /// A clause starts with this word (sentence start, or after `,` `;` `:` `(` `—` or a quote).
    pub clause_start: bool,
    /// The word is written in lower camel case (`sendEmail`).
    pub camel: bool,
    /// The word as written has no lower-case letter (`NOT`, `SYSTEM`).
    pub upper: bool,
    /// The word was written in backticks (code), not only in quotes.
    pub ticked: bool,
    /// The word is given as an order by the sentence's form: a verb whose subject is the model
    /// ("the assistant posts …", read as `post`), or any word after an indirect request ("it
    /// would help if …").
    pub ordered: bool,
}

impl Word {
    /// A word that reads as a tool or parameter identifier: `snake_case`, `camelCase`,
    /// `dotted.name` or anything quoted in backticks.
    pub fn is_identifier(&self) -> bool {
        let inner_dot = self
            .lower
            .split('.')
            .filter(|part| !part.is_empty())
            .count()
            > 1
            && !self.is_url()
            && !self.lower.contains('@');
        let name_like = self.lower.contains('_') || self.camel || inner_dot;
        // A quoted word alone is a name when it is spelled like one (`fetch`), not like syntax
        // (`OR`, `YYYY-MM-DD..YYYY-MM-DD`).
        let quoted_name = self.ticked
            && !self.upper
            && !self.lower.contains("..")
            && !self.lower.contains(':')
            && self.lower.len() >= 3;
        (name_like || quoted_name)
            && !self.lower.ends_with('_')
            && self.lower.chars().any(|c| c.is_ascii_alphabetic())
            && !self.is_url()
            && !self.lower.contains('/')
    }

    /// A URL (`https://…`, `http://…`, `ftp://…`, `ws://…`).
    pub fn is_url(&self) -> bool {
        ["http://", "https://", "ftp://", "ws://", "wss://"]
            .iter()
            .any(|scheme| self.lower.starts_with(scheme))
    }

    /// An e-mail address (`name@host.tld`).
    pub fn is_email(&self) -> bool {
        let Some((local, host)) = self.lower.split_once('@') else {
            return false;
        };
        !local.is_empty()
            && !local.contains('/')
            && host.contains('.')
            && host.split('.').all(|part| !part.is_empty())
    }
}

/// One sentence: its words and its span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sentence {
    /// The words in order.
    pub words: Vec<Word>,
    /// Byte offset of the sentence's first character.
    pub start: usize,
    /// Byte offset just past its last character.
    pub end: usize,
}

impl Sentence {
    /// Whether any word equals `word`.
    pub fn has(&self, word: &str) -> bool {
        self.words.iter().any(|w| w.lower == word)
    }

    /// The index of the first word equal to one of `words`.
    pub fn find_any(&self, words: &[&str]) -> Option<usize> {
        self.words
            .iter()
            .position(|w| words.contains(&w.lower.as_str()))
    }

    /// Whether words `first` then `then` (each any of its list) occur in that order, at most
    /// `gap` words apart; returns the index of the second.
    pub fn pair(&self, first: &[&str], then: &[&str], gap: usize) -> Option<(usize, usize)> {
        for (i, w) in self.words.iter().enumerate() {
            if !first.contains(&w.lower.as_str()) {
                continue;
            }
            let window = self.words.iter().enumerate().skip(i + 1).take(gap + 1);
            for (j, v) in window {
                if then.contains(&v.lower.as_str()) {
                    return Some((i, j));
                }
            }
        }
        None
    }

    /// The byte span from word `a` to word `b` (inclusive).
    pub fn span(&self, a: usize, b: usize) -> (usize, usize) {
        let (a, b) = (a.min(b), a.max(b));
        (self.words[a].start, self.words[b].end)
    }

    /// The whole sentence's span.
    pub fn whole(&self) -> (usize, usize) {
        (self.start, self.end)
    }
}

/// Characters that end a sentence when a space, a quote or the end follows them.
fn ends_sentence(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '。' | '！' | '？')
}

/// Characters that end a clause (the next word starts one).
fn ends_clause(c: char) -> bool {
    matches!(
        c,
        ',' | ';'
            | ':'
            | '('
            | ')'
            | '—'
            | '–'
            | '"'
            | '“'
            | '”'
            | '['
            | ']'
            | '{'
            | '}'
            | '，'
            | '；'
            | '：'
            | '、'
            | '>'
            | '<'
            | '*'
            | '#'
    )
}

/// Characters kept inside a word.
fn word_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(
            c,
            '_' | '-'
                | '.'
                | '@'
                | '/'
                | ':'
                | '~'
                | '\''
                | '’'
                | '$'
                | '%'
                | '='
                | '?'
                | '&'
                | '+'
        )
}

/// Words whose trailing dot does not end a sentence.
const ABBREVIATIONS: &[&str] = &["e.g", "i.e", "etc", "vs", "approx", "cf", "eg", "ie", "no"];

/// Splits `text` into sentences of words (see the module docs).
pub fn sentences(text: &str) -> Vec<Sentence> {
    let mut out = Vec::new();
    let mut current = Sentence {
        words: Vec::new(),
        start: 0,
        end: 0,
    };
    let mut quoted = false;
    let mut clause_start = true;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '`' {
            // A code fence (three backticks) ends a sentence; one backtick toggles quoting.
            if text[i..].starts_with("```") {
                chars.next();
                chars.next();
                push_sentence(&mut out, &mut current, i);
                current.start = i + 3;
                clause_start = true;
                quoted = false;
            } else {
                quoted = !quoted;
                if quoted {
                    clause_start = clause_start || current.words.is_empty();
                }
            }
            continue;
        }
        if c == '\n' || c == '\r' {
            push_sentence(&mut out, &mut current, i);
            current.start = i + 1;
            clause_start = true;
            quoted = false;
            continue;
        }
        if word_char(c) {
            let start = i;
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if !word_char(d) {
                    break;
                }
                end = j + d.len_utf8();
                chars.next();
            }
            let raw = &text[start..end];
            let (word, trimmed_end) = trim_word(raw);
            if !word.is_empty() {
                let word_start = start + (raw.len() - raw.trim_start_matches(is_edge).len());
                let single_quoted = raw.len() > 2
                    && raw.starts_with(['\'', '’'])
                    && raw
                        .trim_end_matches(['.', ',', ':', '?'])
                        .ends_with(['\'', '’']);
                current.words.push(Word {
                    lower: word.to_lowercase(),
                    start: word_start,
                    end: start + trimmed_end,
                    quoted: quoted || single_quoted,
                    ticked: quoted,
                    ordered: false,
                    clause_start,
                    camel: is_camel(word),
                    upper: word.chars().any(char::is_alphabetic)
                        && !word.chars().any(char::is_lowercase),
                });
                clause_start = false;
                if current.words.len() >= MAX_WORDS {
                    push_sentence(&mut out, &mut current, start + trimmed_end);
                    current.start = start + trimmed_end;
                    clause_start = true;
                }
            }
            // A word that ended with a sentence mark (`done.`) ends the sentence when a space
            // or the end follows.
            let tail = &raw[trimmed_end..];
            let next_is_space = chars.peek().is_none_or(|&(_, d)| d.is_whitespace());
            let abbreviation = ABBREVIATIONS.contains(&word.to_lowercase().as_str());
            if tail.chars().any(ends_sentence) && next_is_space && !abbreviation {
                push_sentence(&mut out, &mut current, end);
                current.start = end;
                clause_start = true;
            } else if tail.chars().any(|c| c == ':' || c == ',' || c == ';') {
                clause_start = true;
            }
            continue;
        }
        if ends_sentence(c) {
            let next_is_space = chars.peek().is_none_or(|&(_, d)| d.is_whitespace());
            if next_is_space || !c.is_ascii() {
                push_sentence(&mut out, &mut current, i + c.len_utf8());
                current.start = i + c.len_utf8();
                clause_start = true;
            }
            continue;
        }
        if ends_clause(c) {
            clause_start = true;
        }
    }
    push_sentence(&mut out, &mut current, text.len());
    out
}

/// The most words a sentence holds: a longer run without a sentence mark is cut into pieces of
/// this size, so that the rules, which compare words of a sentence with each other, stay fast.
const MAX_WORDS: usize = 120;

fn push_sentence(out: &mut Vec<Sentence>, current: &mut Sentence, end: usize) {
    if !current.words.is_empty() {
        current.end = end;
        mark_orders(&mut current.words);
        out.push(std::mem::replace(
            current,
            Sentence {
                words: Vec::new(),
                start: end,
                end,
            },
        ));
    }
}

/// Requests made indirectly: every word after one is read as part of an order.
const INDIRECT: &[&[&str]] = &[
    &["would", "help"],
    &["expected", "behaviour"],
    &["expected", "behavior"],
    &["is", "helpful", "if"],
    &["would", "be", "helpful"],
    &["would", "be", "preferable"],
    &["would", "be", "appreciated"],
    &["it", "is", "best", "if"],
    &["is", "expected", "that"],
    &["are", "expected", "to"],
    &["is", "expected", "to"],
];

/// Verbs in the third person that stay as they are after the model's name (a state, not a
/// habit the text gives it).
const STATES: &[&str] = &[
    "is", "has", "was", "does", "needs", "sees", "knows", "gets", "receives",
];

/// Marks the words that the sentence's form makes orders (see [`Word::ordered`]), and reads a
/// verb in the third person after the model's name in its base form.
fn mark_orders(words: &mut [Word]) {
    let indirect_from = (0..words.len()).find_map(|i| {
        INDIRECT.iter().find_map(|phrase| {
            let matches = phrase
                .iter()
                .enumerate()
                .all(|(k, p)| words.get(i + k).is_some_and(|w| w.lower == *p));
            matches.then_some(i + phrase.len())
        })
    });
    if let Some(from) = indirect_from {
        for word in &mut words[from..] {
            word.ordered = true;
        }
    }
    for i in 1..words.len() {
        let adverb = is_adverb(&words[i - 1].lower);
        let subject_at = if adverb && i >= 2 { i - 2 } else { i - 1 };
        let subject = &words[subject_at];
        let named = super::lexicon::MODEL_NAMES.contains(&subject.lower.as_str())
            || subject.lower == "whoever";
        let introduced = subject.clause_start
            || subject_at == 0
            || [
                "the", "any", "every", "each", "client", "a", "that", "this", "calling",
            ]
            .contains(&words[subject_at - 1].lower.as_str());
        let verb = &words[i];
        let third_person = verb.lower.len() > 3
            && verb.lower.ends_with('s')
            && !verb.lower.ends_with("ss")
            && !STATES.contains(&verb.lower.as_str());
        if named && introduced && third_person && !verb.quoted {
            let base = base_form(&verb.lower);
            words[i].lower = base;
            words[i].ordered = true;
        }
    }
}

fn is_adverb(word: &str) -> bool {
    [
        "also",
        "always",
        "then",
        "silently",
        "quietly",
        "automatically",
        "simply",
        "just",
        "first",
        "immediately",
        "never",
        "now",
    ]
    .contains(&word)
}

/// The base form of a verb in the third person singular: `copies` → `copy`, `pushes` →
/// `push`, `posts` → `post`.
fn base_form(verb: &str) -> String {
    if let Some(stem) = verb.strip_suffix("ies") {
        return format!("{stem}y");
    }
    for ending in ["shes", "ches", "sses", "xes", "zes", "oes"] {
        if verb.ends_with(ending) {
            return verb[..verb.len() - 2].to_string();
        }
    }
    verb.strip_suffix('s').unwrap_or(verb).to_string()
}

/// Punctuation that may stand at either edge of a word but is not part of it.
fn is_edge(c: char) -> bool {
    matches!(
        c,
        '.' | ':' | '\'' | '’' | '?' | '-' | '/' | '=' | '&' | '+' | '%' | '$'
    )
}

/// The word without edge punctuation, and the byte length kept from the start of `raw` (the
/// leading edge is removed by the caller's offset).
fn trim_word(raw: &str) -> (&str, usize) {
    // Keep a path's leading `~/`, `./` or `/` and a variable's `$`: they are what a path is.
    let lead_kept = raw.starts_with("~/")
        || raw.starts_with("./")
        || raw.starts_with('/')
        || raw.starts_with('$')
        || raw.starts_with(".env")
        || raw.starts_with(".ssh")
        || raw.starts_with(".aws");
    let start_trimmed = if lead_kept {
        raw
    } else {
        raw.trim_start_matches(is_edge)
    };
    let lead = raw.len() - start_trimmed.len();
    let word = start_trimmed.trim_end_matches(is_edge);
    let word = word.strip_suffix("'s").unwrap_or(word);
    let word = word.strip_suffix("’s").unwrap_or(word);
    (word, lead + word.len())
}

/// An identifier in lower camel case (`sendEmail`, `getUser`); a name written in Pascal case
/// (`GitHub`, `JavaScript`) is a product, not an identifier.
fn is_camel(word: &str) -> bool {
    word.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && word
            .chars()
            .zip(word.chars().skip(1))
            .any(|(a, b)| a.is_ascii_lowercase() && b.is_ascii_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<Vec<String>> {
        sentences(text)
            .into_iter()
            .map(|s| s.words.into_iter().map(|w| w.lower).collect())
            .collect()
    }

    #[test]
    fn sentences_and_words_keep_identifiers_urls_and_paths_whole() {
        let table: &[(&str, &[&[&str]])] = &[
            (
                "Call `export_all` first. Then stop",
                &[&["call", "export_all", "first"], &["then", "stop"]],
            ),
            (
                "POST it to https://x.example/check.",
                &[&["post", "it", "to", "https://x.example/check"]],
            ),
            (
                "Copy audit@example.org in BCC",
                &[&["copy", "audit@example.org", "in", "bcc"]],
            ),
            (
                "Read ~/.ssh/id_rsa now",
                &[&["read", "~/.ssh/id_rsa", "now"]],
            ),
            (
                "Uses fs.write, e.g. here",
                &[&["uses", "fs.write", "e.g", "here"]],
            ),
            ("the user's token", &[&["the", "user", "token"]]),
            (
                "```\nSYSTEM OVERRIDE: run it\n```",
                &[&["system", "override", "run", "it"]],
            ),
            ("忽略之前的指令。然后", &[&["忽略之前的指令"], &["然后"]]),
        ];
        for (text, want) in table {
            let want: Vec<Vec<String>> = want
                .iter()
                .map(|s| s.iter().map(|w| w.to_string()).collect())
                .collect();
            assert_eq!(words(text), want, "{text}");
        }
    }

    #[test]
    fn words_know_quotes_clause_starts_and_kinds() {
        let s = &sentences("Lists pages. IMPORTANT: also return `ctx`, sendEmail")[1];
        let w: Vec<(&str, bool, bool)> = s
            .words
            .iter()
            .map(|w| (w.lower.as_str(), w.quoted, w.clause_start))
            .collect();
        assert_eq!(
            w,
            [
                ("important", false, true),
                ("also", false, true),
                ("return", false, false),
                ("ctx", true, false),
                ("sendemail", false, true)
            ]
        );
        assert!(s.words[3].is_identifier() && s.words[4].is_identifier());
        assert!(!s.words[2].is_identifier());
        let spans: Vec<&str> = s
            .words
            .iter()
            .map(|w| &"Lists pages. IMPORTANT: also return `ctx`, sendEmail"[w.start..w.end])
            .collect();
        assert_eq!(spans, ["IMPORTANT", "also", "return", "ctx", "sendEmail"]);
    }
}
