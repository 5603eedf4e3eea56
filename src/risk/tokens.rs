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

/// Splits `text` into lowercase word tokens: runs of letters and digits, cut again at camel-case
/// boundaries (`getHTTPResponse` → `get`, `http`, `response`). Contractions such as `don't` become
/// `do`, `not`, so negated phrases match whichever way they are spelled.
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    for (start, run) in alphanumeric_runs(text) {
        split_camel(run, start, &mut tokens);
    }
    expand_contractions(text, tokens)
}

/// The lowercase words of `text`, without spans.
pub fn words(text: &str) -> Vec<String> {
    tokenize(text).into_iter().map(|t| t.word).collect()
}

fn alphanumeric_runs(text: &str) -> Vec<(usize, &str)> {
    let mut runs = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                runs.push((s, &text[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        runs.push((s, &text[s..]));
    }
    runs
}

/// Cuts one alphanumeric run at `aB` and at `ABc` (the last capital starts the new word).
fn split_camel(run: &str, offset: usize, out: &mut Vec<Token>) {
    let chars: Vec<(usize, char)> = run.char_indices().collect();
    let mut piece_start = 0;
    for k in 1..chars.len() {
        let prev = chars[k - 1].1;
        let cur = chars[k].1;
        let next_is_lower = chars.get(k + 1).is_some_and(|(_, n)| n.is_lowercase());
        let lower_to_upper = (prev.is_lowercase() || prev.is_ascii_digit()) && cur.is_uppercase();
        let acronym_end = prev.is_uppercase() && cur.is_uppercase() && next_is_lower;
        if lower_to_upper || acronym_end {
            push_token(run, piece_start, chars[k].0, offset, out);
            piece_start = chars[k].0;
        }
    }
    push_token(run, piece_start, run.len(), offset, out);
}

fn push_token(run: &str, from: usize, to: usize, offset: usize, out: &mut Vec<Token>) {
    if from < to {
        out.push(Token {
            word: run[from..to].to_lowercase(),
            start: offset + from,
            end: offset + to,
        });
    }
}

/// `don't` arrives as `don` + `t`; turn such pairs into the auxiliary plus `not`.
fn expand_contractions(text: &str, tokens: Vec<Token>) -> Vec<Token> {
    let mut out: Vec<Token> = Vec::with_capacity(tokens.len());
    let mut iter = tokens.into_iter().peekable();
    while let Some(token) = iter.next() {
        let joined_by_apostrophe = iter.peek().is_some_and(|next| {
            next.word == "t" && matches!(&text[token.end..next.start], "'" | "\u{2019}")
        });
        let auxiliary = match token.word.as_str() {
            "don" => Some("do"),
            "doesn" => Some("does"),
            "didn" => Some("did"),
            "shouldn" => Some("should"),
            "mustn" => Some("must"),
            "won" => Some("will"),
            "isn" => Some("is"),
            "aren" => Some("are"),
            _ => None,
        };
        match (auxiliary, joined_by_apostrophe) {
            (Some(aux), true) => {
                let Some(t) = iter.next() else { break };
                out.push(Token {
                    word: aux.to_string(),
                    start: token.start,
                    end: token.end,
                });
                out.push(Token {
                    word: "not".to_string(),
                    start: t.start,
                    end: t.end,
                });
            }
            _ => out.push(token),
        }
    }
    out
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
}
