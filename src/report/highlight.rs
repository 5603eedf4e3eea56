//! Marking what differs between two texts, for the before/after sides of a rendered change:
//! by characters for one-line texts, by lines (longest common subsequence) otherwise. Pure.

/// Line-diff tables larger than this (old lines × new lines) fall back to marking the whole
/// differing middle, so a huge schema cannot make rendering slow.
const MAX_LCS_CELLS: usize = 1_000_000;

/// One run of text on one side of a value comparison.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The text.
    pub text: String,
    /// Whether this text differs from the other side.
    pub changed: bool,
}

fn push_segment(out: &mut Vec<Segment>, text: &str, changed: bool) {
    if text.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(last) if last.changed == changed => last.text.push_str(text),
        _ => out.push(Segment {
            text: text.to_string(),
            changed,
        }),
    }
}

/// Splits two texts into segments that mark what differs: by characters for one-line texts,
/// by lines (longest common subsequence) otherwise.
pub fn highlight(old: &str, new: &str) -> (Vec<Segment>, Vec<Segment>) {
    if !old.contains('\n') && !new.contains('\n') {
        return highlight_chars(old, new);
    }
    highlight_lines(old, new)
}

/// Lengths of the common prefix and of the common suffix after it.
fn common_ends<T: PartialEq>(a: &[T], b: &[T]) -> (usize, usize) {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (prefix, suffix)
}

fn highlight_chars(old: &str, new: &str) -> (Vec<Segment>, Vec<Segment>) {
    let (a, b): (Vec<char>, Vec<char>) = (old.chars().collect(), new.chars().collect());
    let (prefix, suffix) = common_ends(&a, &b);
    let side = |chars: &[char]| {
        let text = |range: &[char]| range.iter().collect::<String>();
        let mut out = Vec::new();
        push_segment(&mut out, &text(&chars[..prefix]), false);
        push_segment(&mut out, &text(&chars[prefix..chars.len() - suffix]), true);
        push_segment(&mut out, &text(&chars[chars.len() - suffix..]), false);
        out
    };
    (side(&a), side(&b))
}

fn highlight_lines(old: &str, new: &str) -> (Vec<Segment>, Vec<Segment>) {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let (prefix, suffix) = common_ends(&a, &b);
    let (mid_a, mid_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let (keep_a, keep_b) = common_lines(mid_a, mid_b);
    let side = |lines: &[&str], mid_keep: &[bool]| {
        let mut out = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let in_mid = i >= prefix && i < lines.len() - suffix;
            let changed = in_mid && !mid_keep[i - prefix];
            push_segment(&mut out, line, changed);
        }
        out
    };
    (side(&a, &keep_a), side(&b, &keep_b))
}

/// Which lines of `a` and `b` belong to a longest common subsequence.
fn common_lines(a: &[&str], b: &[&str]) -> (Vec<bool>, Vec<bool>) {
    let (mut keep_a, mut keep_b) = (vec![false; a.len()], vec![false; b.len()]);
    if a.is_empty() || b.is_empty() || a.len() * b.len() > MAX_LCS_CELLS {
        return (keep_a, keep_b);
    }
    let width = b.len() + 1;
    let mut table = vec![0u32; (a.len() + 1) * width];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            table[i * width + j] = if a[i] == b[j] {
                table[(i + 1) * width + j + 1] + 1
            } else {
                table[(i + 1) * width + j].max(table[i * width + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] == b[j] {
            keep_a[i] = true;
            keep_b[j] = true;
            i += 1;
            j += 1;
        } else if table[(i + 1) * width + j] >= table[i * width + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    (keep_a, keep_b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(text: &str, changed: bool) -> Segment {
        Segment {
            text: text.to_string(),
            changed,
        }
    }

    #[test]
    fn one_line_texts_highlight_the_differing_middle() {
        let table = [
            (
                "abcXdef",
                "abcYYdef",
                vec![seg("abc", false), seg("X", true), seg("def", false)],
                vec![seg("abc", false), seg("YY", true), seg("def", false)],
            ),
            (
                "same",
                "same",
                vec![seg("same", false)],
                vec![seg("same", false)],
            ),
            ("", "new", vec![], vec![seg("new", true)]),
            (
                "aa",
                "aaa",
                vec![seg("aa", false)],
                vec![seg("aa", false), seg("a", true)],
            ),
            (
                "héllo",
                "hallo",
                vec![seg("h", false), seg("é", true), seg("llo", false)],
                vec![seg("h", false), seg("a", true), seg("llo", false)],
            ),
        ];
        for (old, new, expected_old, expected_new) in table {
            let (a, b) = highlight(old, new);
            assert_eq!(a, expected_old, "{old:?} -> {new:?}");
            assert_eq!(b, expected_new, "{old:?} -> {new:?}");
        }
    }

    #[test]
    fn multi_line_texts_highlight_whole_lines() {
        let old = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}";
        let new = "{\n  \"a\": 1,\n  \"b\": 5,\n  \"c\": 3,\n  \"d\": 4\n}";
        let (a, b) = highlight(old, new);
        assert_eq!(
            a,
            vec![
                seg("{\n  \"a\": 1,\n", false),
                seg("  \"b\": 2,\n  \"c\": 3\n", true),
                seg("}", false)
            ]
        );
        assert_eq!(
            b,
            vec![
                seg("{\n  \"a\": 1,\n", false),
                seg("  \"b\": 5,\n  \"c\": 3,\n  \"d\": 4\n", true),
                seg("}", false)
            ]
        );
        let (a, b) = highlight("x\ny\nz\n", "x\nq\ny\nz\n");
        assert_eq!(a, vec![seg("x\ny\nz\n", false)]);
        assert_eq!(
            b,
            vec![seg("x\n", false), seg("q\n", true), seg("y\nz\n", false)]
        );
    }
}
