//! Characters a reader cannot see but a model still reads: zero-width and format characters,
//! bidirectional controls, the Unicode tag block, variation selectors, terminal escapes, and
//! look-alike letters from other scripts mixed into Latin words.

/// What kind of hidden or deceptive character a text carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HiddenKind {
    /// U+200B–U+200D, U+2060–U+2064, U+FEFF, U+00AD, U+180E, U+034F, Hangul fillers.
    ZeroWidth,
    /// Embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069).
    Bidi,
    /// The tag block U+E0000–U+E007F, which can spell invisible ASCII.
    Tag,
    /// Variation selectors outside their legitimate place after an emoji.
    VariationSelector,
    /// ESC or CSI: the start of an ANSI terminal escape sequence.
    AnsiEscape,
    /// Any other C0 or C1 control character except tab, newline and carriage return.
    Control,
}

/// One hidden character and its byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hidden {
    /// The kind of character.
    pub kind: HiddenKind,
    /// Byte offset in the text.
    pub at: usize,
}

/// Every hidden character in `text` that is not in a legitimate emoji or script position.
pub fn hidden_characters(text: &str) -> Vec<Hidden> {
    let mut found = Vec::new();
    // Every hidden kind is either non-ASCII or an ASCII control character.
    if text.bytes().all(is_visible_ascii) {
        return found;
    }
    let mut prev = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        if let Some(kind) = classify(c, prev, next, &text[..at]) {
            found.push(Hidden { kind, at });
        }
        prev = Some(c);
    }
    found
}

/// Printable ASCII, tab, newline and carriage return: bytes that never hide anything.
fn is_visible_ascii(byte: u8) -> bool {
    matches!(byte, 0x20..=0x7E | b'\t' | b'\n' | b'\r')
}

/// The kind of `c` if it hides something, given its neighbours and the text `before` it.
fn classify(c: char, prev: Option<char>, next: Option<char>, before: &str) -> Option<HiddenKind> {
    let cp = c as u32;
    match cp {
        0x1B | 0x9B => Some(HiddenKind::AnsiEscape),
        0x09 | 0x0A | 0x0D => None,
        0x00..=0x1F | 0x7F..=0x9F => Some(HiddenKind::Control),
        0x200C | 0x200D if joins_non_ascii(prev, next) => None,
        0x200B..=0x200D
        | 0x2060..=0x2064
        | 0xFEFF
        | 0x00AD
        | 0x180E
        | 0x034F
        | 0x115F
        | 0x1160
        | 0x3164 => Some(HiddenKind::ZeroWidth),
        0x202A..=0x202E | 0x2066..=0x2069 => Some(HiddenKind::Bidi),
        0xE0000..=0xE007F if follows_flag_emoji(before) => None,
        0xE0000..=0xE007F => Some(HiddenKind::Tag),
        0xFE00..=0xFE0F | 0xE0100..=0xE01EF if misplaced_selector(prev) => {
            Some(HiddenKind::VariationSelector)
        }
        _ => None,
    }
}

/// ZWJ and ZWNJ are part of emoji sequences and of Indic and Arabic spelling: allowed when both
/// neighbours are non-ASCII, visible characters.
fn joins_non_ascii(prev: Option<char>, next: Option<char>) -> bool {
    let visible_non_ascii =
        |c: Option<char>| c.is_some_and(|c| !c.is_ascii() && !c.is_whitespace());
    visible_non_ascii(prev) && visible_non_ascii(next)
}

/// Subdivision flags (🏴 followed by tag letters and U+E007F) are the one legitimate use of tags.
fn follows_flag_emoji(before: &str) -> bool {
    before
        .chars()
        .rev()
        .find(|&c| !(0xE0000..=0xE007F).contains(&(c as u32)))
        == Some('\u{1F3F4}')
}

/// A selector after ASCII, after another selector, or at the start hides data; after an emoji it
/// only picks a presentation.
fn misplaced_selector(prev: Option<char>) -> bool {
    match prev {
        None => true,
        Some(p) => p.is_ascii() || is_variation_selector(p),
    }
}

fn is_variation_selector(c: char) -> bool {
    matches!(c as u32, 0xFE00..=0xFE0F | 0xE0100..=0xE01EF)
}

/// True for characters that `escape_invisible` writes as `\u{…}`.
pub fn is_invisible(c: char) -> bool {
    let cp = c as u32;
    matches!(cp,
        0x00..=0x08 | 0x0B | 0x0C | 0x0E..=0x1F | 0x7F..=0x9F
        | 0x00AD | 0x034F | 0x115F | 0x1160 | 0x180E | 0x200B..=0x200F | 0x202A..=0x202E
        | 0x2060..=0x2069 | 0x3164 | 0xFE00..=0xFE0F | 0xFEFF | 0xE0000..=0xE007F | 0xE0100..=0xE01EF)
}

/// Writes invisible and control characters as `\u{XXXX}` so an excerpt shows what is there.
pub fn escape_invisible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_invisible(c) {
            out.push_str(&format!("\\u{{{:X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// The ASCII text that tag characters in `text` spell (U+E0020–U+E007E map to ' '–'~').
pub fn decode_tags(text: &str) -> String {
    text.chars()
        .filter_map(|c| match c as u32 {
            cp @ 0xE0020..=0xE007E => char::from_u32(cp - 0xE0000),
            _ => None,
        })
        .collect()
}

/// Cyrillic and Greek letters that look like Latin ones.
const CONFUSABLES: &str = "аеорсухіјѕԁԛԝһүвкмнтАВЕКМНОРСТУХЅІЈҮҺαονρτυχεικΑΒΕΖΗΙΚΜΝΟΡΤΥΧ";

/// Words that mix ASCII letters with Cyrillic or Greek look-alikes, with their byte spans.
pub fn mixed_script_words(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    // Every look-alike is non-ASCII.
    if text.is_ascii() {
        return spans;
    }
    let mut start: Option<usize> = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        let in_word = c.is_alphanumeric() || c == '_' || c == '-';
        match (in_word, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                let word = &text[s..i];
                let has_latin = word.chars().any(|ch| ch.is_ascii_alphabetic());
                let has_confusable =
                    || !word.is_ascii() && word.chars().any(|ch| CONFUSABLES.contains(ch));
                if has_latin && has_confusable() {
                    spans.push((s, i));
                }
                start = None;
            }
            _ => {}
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<HiddenKind> {
        hidden_characters(text)
            .into_iter()
            .map(|h| h.kind)
            .collect()
    }

    #[test]
    fn classifies_hidden_characters() {
        let cases: &[(&str, &[HiddenKind])] = &[
            ("plain text\twith\nnewlines", &[]),
            ("Reads\u{200D} a file", &[HiddenKind::ZeroWidth]),
            ("zero\u{200B}width", &[HiddenKind::ZeroWidth]),
            ("\u{FEFF}bom", &[HiddenKind::ZeroWidth]),
            ("family \u{1F468}\u{200D}\u{1F469}", &[]),
            ("Hindi क्\u{200D}ष", &[]),
            ("abc\u{202E}cba", &[HiddenKind::Bidi]),
            ("x\u{2066}y\u{2069}", &[HiddenKind::Bidi, HiddenKind::Bidi]),
            ("ok\u{E0069}\u{E0067}", &[HiddenKind::Tag, HiddenKind::Tag]),
            (
                "flag \u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}",
                &[],
            ),
            ("heart \u{2764}\u{FE0F}", &[]),
            ("a\u{FE0F}", &[HiddenKind::VariationSelector]),
            (
                "\u{1F600}\u{E0100}\u{E0101}",
                &[HiddenKind::VariationSelector],
            ),
            ("red \u{1b}[31mtext", &[HiddenKind::AnsiEscape]),
            ("bell\u{7}", &[HiddenKind::Control]),
            ("del\u{7f}", &[HiddenKind::Control]),
            ("crlf\r\n~ end", &[]),
            ("\u{0}", &[HiddenKind::Control]),
        ];
        for (text, expected) in cases {
            assert_eq!(kinds(text), *expected, "text {:?}", escape_invisible(text));
        }
    }

    #[test]
    fn escapes_what_cannot_be_seen() {
        assert_eq!(
            escape_invisible("a\u{200D}b\u{1b}[0m"),
            "a\\u{200D}b\\u{1B}[0m"
        );
        assert_eq!(escape_invisible("naïve ✓"), "naïve ✓");
    }

    #[test]
    fn decodes_tag_characters_to_ascii() {
        let hidden: String = "hi you"
            .chars()
            .map(|c| char::from_u32(c as u32 + 0xE0000).unwrap())
            .collect();
        assert_eq!(decode_tags(&format!("visible{hidden}")), "hi you");
    }

    #[test]
    fn finds_latin_words_with_look_alike_letters() {
        // "pаypal" with a Cyrillic а, "Gіthub" with a Ukrainian і.
        assert_eq!(mixed_script_words("use pаypal now").len(), 1);
        assert_eq!(mixed_script_words("Gіthub").len(), 1);
        assert!(mixed_script_words("Привет мир, hello world").is_empty());
        assert!(mixed_script_words("latency in μs and π").is_empty());
        assert!(mixed_script_words("Ελληνικά").is_empty());
    }
}
