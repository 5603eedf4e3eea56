//! Containment of two `pattern`s, for the simple forms it can prove: an optional `^`, a
//! sequence of atoms (a literal, an escape such as `\d`, a character class, `.`), each with an
//! optional quantifier, and an optional `$`. No groups, alternation, backreferences or
//! lookarounds: anything else stays `unknown`.
//!
//! Two patterns with the same anchors and the same quantifier at every position accept more
//! (or fewer) strings when every character set of one contains the set at the same position of
//! the other. Widening is proven by that containment alone; narrowing is graded breaking only
//! with a witness: a string the old pattern matches and the new one does not (checked with a
//! small matcher for these forms, under ECMA-262 search semantics).

use super::Effect;

/// Highest Unicode scalar value.
const MAX_CHAR: u32 = 0x10FFFF;

/// A set of characters as sorted, disjoint, inclusive ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CharSet(Vec<(u32, u32)>);

impl CharSet {
    fn new(mut ranges: Vec<(u32, u32)>) -> CharSet {
        ranges.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::new();
        for (lo, hi) in ranges {
            match merged.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        CharSet(merged)
    }

    fn complement(&self) -> CharSet {
        let mut out = Vec::new();
        let mut next = 0u32;
        for &(lo, hi) in &self.0 {
            if lo > next {
                out.push((next, lo - 1));
            }
            next = hi.saturating_add(1);
        }
        if next <= MAX_CHAR {
            out.push((next, MAX_CHAR));
        }
        CharSet(out)
    }

    fn contains(&self, c: u32) -> bool {
        self.0.iter().any(|&(lo, hi)| lo <= c && c <= hi)
    }

    /// Whether every character of `self` is in `other`.
    fn subset_of(&self, other: &CharSet) -> bool {
        self.0
            .iter()
            .all(|&(lo, hi)| other.0.iter().any(|&(a, b)| a <= lo && hi <= b))
    }

    /// A character of `self` that is not in `other`, if any.
    fn first_outside(&self, other: &CharSet) -> Option<u32> {
        let rest = CharSet::new(
            self.0
                .iter()
                .flat_map(|&r| CharSet(vec![r]).minus(other).0)
                .collect(),
        );
        rest.0
            .iter()
            .flat_map(|&(lo, hi)| lo..=hi)
            .find(|c| char::from_u32(*c).is_some())
    }

    fn minus(&self, other: &CharSet) -> CharSet {
        let not_other = other.complement();
        let mut out = Vec::new();
        for &(a, b) in &self.0 {
            for &(c, d) in &not_other.0 {
                let (lo, hi) = (a.max(c), b.min(d));
                if lo <= hi {
                    out.push((lo, hi));
                }
            }
        }
        CharSet::new(out)
    }

    fn any_char(&self) -> Option<u32> {
        self.0
            .iter()
            .flat_map(|&(lo, hi)| lo..=hi)
            .find(|c| char::from_u32(*c).is_some())
    }
}

fn digit() -> CharSet {
    CharSet::new(vec![(0x30, 0x39)])
}

fn word() -> CharSet {
    CharSet::new(vec![(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)])
}

/// ECMA-262 `\s`: white space and line terminators.
fn space() -> CharSet {
    CharSet::new(vec![
        (0x09, 0x0D),
        (0x20, 0x20),
        (0xA0, 0xA0),
        (0x1680, 0x1680),
        (0x2000, 0x200A),
        (0x2028, 0x2029),
        (0x202F, 0x202F),
        (0x205F, 0x205F),
        (0x3000, 0x3000),
        (0xFEFF, 0xFEFF),
    ])
}

/// `.`: any character but a line terminator.
fn dot() -> CharSet {
    CharSet::new(vec![(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)]).complement()
}

/// One atom and how often it repeats (`max: None` = unbounded).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Token {
    set: CharSet,
    min: u32,
    max: Option<u32>,
}

/// A pattern of the simple form.
#[derive(Debug, PartialEq, Eq)]
struct Simple {
    start: bool,
    end: bool,
    tokens: Vec<Token>,
}

/// Parses `pattern` if it has the simple form.
fn parse(pattern: &str) -> Option<Simple> {
    let mut chars: Vec<char> = pattern.chars().collect();
    let start = chars.first() == Some(&'^');
    if start {
        chars.remove(0);
    }
    let end = chars.last() == Some(&'$') && !ends_escaped(&chars);
    if end {
        chars.pop();
    }
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let (set, next) = atom(&chars, i)?;
        let (min, max, after) = quantifier(&chars, next)?;
        tokens.push(Token { set, min, max });
        i = after;
    }
    Some(Simple { start, end, tokens })
}

/// Whether the last character is escaped by an odd run of backslashes.
fn ends_escaped(chars: &[char]) -> bool {
    let before = &chars[..chars.len().saturating_sub(1)];
    before.iter().rev().take_while(|c| **c == '\\').count() % 2 == 1
}

fn atom(chars: &[char], i: usize) -> Option<(CharSet, usize)> {
    match chars[i] {
        '[' => class(chars, i + 1),
        '\\' => {
            let (set, next) = escape(chars, i + 1, false)?;
            Some((set, next))
        }
        '.' => Some((dot(), i + 1)),
        '(' | ')' | '|' | '*' | '+' | '?' | '{' | '}' | '^' | '$' | ']' => None,
        c => Some((single(c), i + 1)),
    }
}

fn single(c: char) -> CharSet {
    CharSet(vec![(c as u32, c as u32)])
}

/// An escape after `\` at `i`; `in_class` reads `\b` as backspace.
fn escape(chars: &[char], i: usize, in_class: bool) -> Option<(CharSet, usize)> {
    let c = *chars.get(i)?;
    let set = match c {
        'd' => digit(),
        'D' => digit().complement(),
        'w' => word(),
        'W' => word().complement(),
        's' => space(),
        'S' => space().complement(),
        'n' => single('\n'),
        'r' => single('\r'),
        't' => single('\t'),
        'f' => single('\u{c}'),
        'v' => single('\u{b}'),
        'b' if in_class => single('\u{8}'),
        'u' | 'x' => {
            let len = if c == 'u' { 4 } else { 2 };
            let hex: String = chars.get(i + 1..i + 1 + len)?.iter().collect();
            let code = u32::from_str_radix(&hex, 16).ok()?;
            return Some((CharSet(vec![(code, code)]), i + 1 + len));
        }
        c if c.is_ascii_punctuation() => single(c),
        _ => return None,
    };
    Some((set, i + 1))
}

/// A character class whose body starts at `i` (after `[`).
fn class(chars: &[char], mut i: usize) -> Option<(CharSet, usize)> {
    let negated = chars.get(i) == Some(&'^');
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && !first {
            break;
        }
        first = false;
        let (lo, next) = class_atom(chars, i)?;
        i = next;
        if chars.get(i) == Some(&'-') && chars.get(i + 1).is_some_and(|c| *c != ']') {
            let (hi, after) = class_atom(chars, i + 1)?;
            let (Some(a), Some(b)) = (lo.single(), hi.single()) else {
                return None;
            };
            if a > b {
                return None;
            }
            ranges.push((a, b));
            i = after;
        } else {
            ranges.extend(lo.0);
        }
    }
    let set = CharSet::new(ranges);
    Some((if negated { set.complement() } else { set }, i + 1))
}

impl CharSet {
    fn single(&self) -> Option<u32> {
        match self.0.as_slice() {
            [(a, b)] if a == b => Some(*a),
            _ => None,
        }
    }
}

fn class_atom(chars: &[char], i: usize) -> Option<(CharSet, usize)> {
    match chars[i] {
        '\\' => escape(chars, i + 1, true),
        '[' => None,
        c => Some((single(c), i + 1)),
    }
}

/// The quantifier at `i`, if any: `(min, max, next index)`. A lazy `?` is accepted (it does not
/// change which strings match).
fn quantifier(chars: &[char], i: usize) -> Option<(u32, Option<u32>, usize)> {
    let (min, max, mut next) = match chars.get(i) {
        Some('*') => (0, None, i + 1),
        Some('+') => (1, None, i + 1),
        Some('?') => (0, Some(1), i + 1),
        Some('{') => {
            let close = i + chars[i..].iter().position(|c| *c == '}')?;
            let body: String = chars[i + 1..close].iter().collect();
            let (min, max) = match body.split_once(',') {
                None => {
                    let n = body.parse().ok()?;
                    (n, Some(n))
                }
                Some((a, "")) => (a.parse().ok()?, None),
                Some((a, b)) => (a.parse().ok()?, Some(b.parse().ok()?)),
            };
            (min, max, close + 1)
        }
        _ => return Some((1, Some(1), i)),
    };
    if chars.get(next) == Some(&'?') {
        next += 1;
    }
    if matches!(chars.get(next), Some('*' | '+' | '?' | '{')) || max.is_some_and(|m| m < min) {
        return None;
    }
    Some((min, max, next))
}

/// Matcher steps allowed for one question (a hostile pattern must not take unbounded time).
const MAX_STEPS: u32 = 200_000;

/// Whether `p` matches `text` somewhere (ECMA-262 `test`: unanchored unless `^`/`$`);
/// `None` when the step budget ran out.
fn matches(p: &Simple, text: &[u32]) -> Option<bool> {
    let starts: Vec<usize> = if p.start {
        vec![0]
    } else {
        (0..=text.len()).collect()
    };
    let mut steps = 0;
    for s in starts {
        if match_at(p, 0, text, s, &mut steps) {
            return Some(true);
        }
    }
    (steps <= MAX_STEPS).then_some(false)
}

fn match_at(p: &Simple, t: usize, text: &[u32], pos: usize, steps: &mut u32) -> bool {
    *steps += 1;
    if *steps > MAX_STEPS {
        return false;
    }
    let Some(token) = p.tokens.get(t) else {
        return !p.end || pos == text.len();
    };
    let mut count = 0u32;
    let mut at = pos;
    loop {
        if count >= token.min && match_at(p, t + 1, text, at, steps) {
            return true;
        }
        if token.max.is_some_and(|m| count >= m)
            || at >= text.len()
            || !token.set.contains(text[at])
        {
            return false;
        }
        count += 1;
        at += 1;
    }
}

/// The effect of changing `old` to `new` for the strings a caller may send, when provable.
pub(super) fn compare(old: &str, new: &str) -> Option<Effect> {
    const MAX_LEN: usize = 512;
    if old.len() > MAX_LEN || new.len() > MAX_LEN {
        return None;
    }
    let (o, n) = (parse(old)?, parse(new)?);
    if o.start != n.start || o.end != n.end || o.tokens.len() != n.tokens.len() {
        return None;
    }
    let same_shape = o
        .tokens
        .iter()
        .zip(&n.tokens)
        .all(|(a, b)| a.min == b.min && a.max == b.max);
    if !same_shape {
        return None;
    }
    let widened = o
        .tokens
        .iter()
        .zip(&n.tokens)
        .all(|(a, b)| a.set.subset_of(&b.set));
    let narrowed = o
        .tokens
        .iter()
        .zip(&n.tokens)
        .all(|(a, b)| b.set.subset_of(&a.set));
    match (widened, narrowed) {
        (true, true) => Some(Effect::Notation),
        (true, false) => Some(Effect::Loosens),
        (false, true) => narrowing_witness(&o, &n).then_some(Effect::Tightens),
        (false, false) => None,
    }
}

/// Whether a string the old pattern matches and the new one does not can be built: each atom
/// at its least count (at least once where the sets differ), using a character only the old
/// set holds at the first narrowed position.
fn narrowing_witness(o: &Simple, n: &Simple) -> bool {
    const MAX_TEXT: usize = 4096;
    let mut text = Vec::new();
    let mut used_outside = false;
    for (a, b) in o.tokens.iter().zip(&n.tokens) {
        let outside = (!used_outside)
            .then(|| a.set.first_outside(&b.set))
            .flatten();
        let (c, count) = match outside {
            Some(c) => {
                used_outside = true;
                (Some(c), a.min.max(1))
            }
            None => (a.set.any_char(), a.min),
        };
        if count > 0 {
            let Some(c) = c else { return false };
            if text.len() + count as usize > MAX_TEXT {
                return false;
            }
            text.extend(std::iter::repeat_n(c, count as usize));
        }
    }
    used_outside && matches(o, &text) == Some(true) && matches(n, &text) == Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_table() {
        use Effect::*;
        let cases: [(&str, &str, Option<Effect>); 18] = [
            (
                r"^[A-Z][A-Z0-9]+-\d+$",
                r"^[A-Z][A-Z0-9_]+-\d+$",
                Some(Loosens),
            ),
            (
                r"^[A-Z][A-Z0-9_]+-\d+$",
                r"^[A-Z][A-Z0-9]+-\d+$",
                Some(Tightens),
            ),
            (r"^\d{4}-\d{2}$", r"^[0-9]{4}-[0-9]{2}$", Some(Notation)),
            (r"^[a-z]+$", r"^\w+$", Some(Loosens)),
            (r"^[a-z]+$", r"^.+$", Some(Loosens)),
            (r"^[^,]+$", r"^[^,;]+$", Some(Tightens)),
            (r"^a", r"^b", None),
            (r"^[a-f]+$", r"^[d-z]+$", None),
            (r"^[a-z]+$", r"^[a-z]*$", None),
            (r"^[a-z]+$", r"[a-z]+$", None),
            (r"^(a|b)$", r"^(a|b|c)$", None),
            (r"^[a-z]+\b", r"^[a-z0-9]+\b", None),
            (r"^[a-z]+$", r"^[a-z0-9]+$", Some(Loosens)),
            (r"^\p{L}+$", r"^\p{L}+$", None),
            (r"^[\-.]$", r"^[\-._]$", Some(Loosens)),
            (r"^x\$$", r"^[xy]\$$", Some(Loosens)),
            (r"[ab]", r"[a]", Some(Tightens)),
            // narrowed, but the unanchored new pattern still finds a match in the witness
            // (`a` then no more letters): no proof of breaking, and indeed none is lost.
            (r"a[ab]*", r"a[a]*", None),
        ];
        for (old, new, expected) in cases {
            assert_eq!(compare(old, new), expected, "{old} → {new}");
        }
    }

    #[test]
    fn the_matcher_follows_search_semantics() {
        let cases = [
            (r"^[A-Z][A-Z0-9]+-\d+$", "ABC-12", true),
            (r"^[A-Z][A-Z0-9]+-\d+$", "AB_C-12", false),
            (r"[0-9]{2}", "a12b", true),
            (r"^a{2,3}$", "aaaa", false),
            (r"^a{2,3}$", "aaa", true),
            (r"b$", "ab", true),
        ];
        for (pattern, text, expected) in cases {
            let p = parse(pattern).unwrap();
            let t: Vec<u32> = text.chars().map(|c| c as u32).collect();
            assert_eq!(matches(&p, &t), Some(expected), "{pattern} on {text}");
        }
    }

    #[test]
    fn hostile_patterns_end_quickly_and_unproven() {
        // Huge counts: no witness is built.
        assert_eq!(compare("^[ab]{4000000000}$", "^[a]{4000000000}$"), None);
        // Many stars backtrack: the step budget stops the matcher, so nothing is proven.
        let old = format!("{}c", "[ab]*".repeat(60));
        let new = format!("{}c", "[a]*".repeat(60));
        let started = std::time::Instant::now();
        let _ = compare(&old, &new);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }
}
