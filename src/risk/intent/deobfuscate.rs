//! Text written to dodge filters, read as plain text: letter-spacing closed up, digits that
//! stand for letters read as letters.

/// The text with letter-spacing (`d i s r e g a r d`, `P-l-e-a-s-e`) closed up and digits
/// that stand for letters (`t3ll th3 us3r`) read as letters, when it has either; `None` for
/// ordinary text.
pub(super) fn deobfuscated(text: &str) -> Option<String> {
    let mut changed = false;
    let mut out = String::with_capacity(text.len());
    for token in text.split(' ') {
        let leet = token.chars().any(|c| c.is_ascii_digit())
            && token.chars().any(|c| c.is_ascii_alphabetic())
            && token.chars().filter(|c| c.is_ascii_digit()).count() <= token.len() / 2
            && !token.contains(['.', ':', '/', '-', '_']);
        if leet {
            changed = true;
            out.extend(token.chars().map(|c| match c {
                '0' => 'o',
                '1' => 'i',
                '3' => 'e',
                '4' => 'a',
                '5' => 's',
                '7' => 't',
                _ => c,
            }));
        } else {
            out.push_str(token);
        }
        out.push(' ');
    }
    // Letter-spacing: runs of single characters separated by one space or a hyphen.
    let spaced_letters = |t: &str| {
        let parts: Vec<&str> = t.split(['-']).collect();
        parts.len() >= 4 && parts.iter().all(|p| p.chars().count() == 1)
    };
    // Runs of four or more one-letter tokens close up into one word; an empty token (two
    // spaces) ends a run.
    let tokens: Vec<&str> = out.split(' ').collect();
    let single = |t: &str| {
        !t.is_empty()
            && t.chars().filter(|c| c.is_alphanumeric()).count() <= 1
            && t.chars().count() <= 2
    };
    let mut joined = String::with_capacity(out.len());
    let mut k = 0;
    while k < tokens.len() {
        let run = tokens[k..].iter().take_while(|t| single(t)).count();
        if run >= 4 {
            changed = true;
            for t in &tokens[k..k + run] {
                joined.push_str(t);
            }
            joined.push(' ');
            k += run;
            continue;
        }
        let t = tokens[k];
        if spaced_letters(t) {
            changed = true;
            joined.push_str(&t.replace('-', ""));
        } else {
            joined.push_str(t);
        }
        joined.push(' ');
        k += 1;
    }
    changed.then_some(joined)
}
