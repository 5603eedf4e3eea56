//! The `credential_file` family: orders to read the files where credentials live.

use super::*;

/// Parts of the paths where credentials live: key files, cloud and tool configs, browser
/// stores, mounted secrets.
pub(super) const CREDENTIAL_PATHS: &[&str] = &[
    "ssh/",
    ".aws/",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    ".env",
    ".tfstate",
    "terraformrc",
    ".terraform.d",
    ".gnupg",
    "keyring",
    "/etc/passwd",
    "/etc/shadow",
    ".npmrc",
    ".netrc",
    ".git-credentials",
    "mcp.json",
    ".kube/config",
    "kubeconfig",
    "keychain",
    "~/.config/",
    ".azure/",
    ".gcloud",
    "gcloud/",
    "accesstokens",
    "application_default_credentials",
    "credentials.json",
    "credentials.db",
    "secrets.toml",
    "secrets.yaml",
    "secrets.yml",
    "secrets.json",
    "/var/run/secrets",
    "serviceaccount",
    ".pgpass",
    ".docker/config",
    ".gnupg",
    "wallet.dat",
    "cookies.sqlite",
    "logins.json",
    "key4.db",
    "login data",
    ".bash_history",
    ".zsh_history",
    ".pypirc",
    ".vault-token",
    "token.json",
    "hosts.yml",
    ".config/hub",
    ".pem",
    ".p12",
    ".pfx",
    "private.key",
    ".keystore",
];

/// Words that make any path a credential's.
pub(super) const CREDENTIAL_PATH_WORDS: &[&str] = &[
    "credential",
    "secret",
    "token",
    "passw",
    "private",
    "environ",
    "tfstate",
    "tfrc",
    ".zshrc",
    ".bashrc",
    ".profile",
    "_history",
    "wallet",
    "cookies",
];

/// Whether a word is a path where credentials live (a public key is not one).
pub(super) fn credential_path(word: &str) -> bool {
    if word.ends_with(".pub") {
        return false;
    }
    let path = word.contains('/') || word.starts_with('~') || word.starts_with('.');
    (CREDENTIAL_PATHS.iter().any(|p| word.contains(p))
        || (path && CREDENTIAL_PATH_WORDS.iter().any(|p| word.contains(p))))
        && !word.ends_with(".example")
        && !word.ends_with(".sample")
        && !word.ends_with(".template")
}

/// Verbs that read a file.
pub(super) const READ_VERBS: &[&str] = &[
    "read", "open", "cat", "load", "collect", "gather", "grab", "fetch", "retrieve", "extract",
    "copy", "send", "include", "upload", "list", "print", "parse", "access", "inspect", "locate",
    "find", "take", "attach", "dump", "export", "check", "scan", "get", "source", "import",
    "decrypt", "use",
];

// ---- credential files

/// Whether a word of another language stands in a sentence: as a substring for scripts
/// written without spaces, as a whole word for the others ("lis" is not in "Lists").
pub(super) fn foreign_word(s: &Sentence, lower: &str, word: &str) -> bool {
    if word.chars().all(|c| c.is_ascii() || matches!(c, 'à'..='ÿ')) {
        s.words.iter().any(|w| w.lower == word)
    } else {
        lower.contains(word)
    }
}

/// Verbs of other languages that read a file.
pub(super) const FOREIGN_READS: &[&str] = &[
    "leia",
    "lee",
    "lea",
    "lies",
    "lese",
    "lis",
    "lisez",
    "прочитай",
    "прочти",
    "读取",
    "读",
    "読み",
    "読んで",
    "읽고",
    "읽어",
];

pub(super) fn credential_file(text: &str, s: &Sentence, _: &Context) -> Option<Hit> {
    if let Some(k) = s.words.iter().position(|w| credential_path(&w.lower))
        && k > 1
        && ((s.words[k - 1].lower == "to"
            && is(&s.words[k - 2], &["defaults", "default", "falls"]))
            || (s.words[k - 1].lower == "is" && s.words[k - 2].lower == "default"))
    {
        let evidence = format!("a default of \"{}\"", s.words[k].lower);
        return family_hit(s.span(k - 2, k), evidence);
    }
    if defended(text, (s.start, s.end)) {
        return None;
    }
    let lower = text[s.start..s.end].to_lowercase();
    if let Some(store) = ["login data", "key4.db", "cookies.sqlite", "local state"]
        .iter()
        .find(|n| lower.contains(*n))
        && let Some(verb) = (0..s.words.len())
            .find(|&i| is(&s.words[i], READ_VERBS) && commanded(s, i) && !negated(s, i))
            .or_else(|| {
                FOREIGN_READS
                    .iter()
                    .chain(FOREIGN_MOVES)
                    .any(|v| foreign_word(s, &lower, v))
                    .then_some(0)
            })
    {
        let evidence = format!("browser credential store \"{store}\"");
        return family_hit(s.span(verb, verb), evidence);
    }
    let (k, path) = s
        .words
        .iter()
        .enumerate()
        .find(|(_, w)| credential_path(&w.lower))?;
    if k > 1
        && s.words[k - 1].lower == "to"
        && is(&s.words[k - 2], &["defaults", "default", "falls"])
        || (k > 1 && s.words[k - 1].lower == "is" && s.words[k - 2].lower == "default")
    {
        let evidence = format!("a default of \"{}\"", path.lower);
        return family_hit(s.span(k - 2, k), evidence);
    }
    let foreign_verb = || {
        let sentence = text[s.start..s.end].to_lowercase();
        FOREIGN_MOVES
            .iter()
            .chain(FOREIGN_READS)
            .any(|v| foreign_word(s, &sentence, v))
            .then_some(k)
    };
    let verb = (0..s.words.len())
        .find(|&i| is(&s.words[i], READ_VERBS) && commanded(s, i) && !negated(s, i))
        .or_else(|| (0..s.words.len()).find(|&i| move_order(s, i)))
        .or_else(foreign_verb)?;
    let evidence = format!("verb \"{}\", path \"{}\"", s.words[verb].lower, path.lower);
    family_hit(s.span(verb.min(k), verb.max(k)), evidence)
}

/// A strong hit of this family's pattern (`credential_file_directive`).
fn family_hit(span: (usize, usize), evidence: impl Into<String>) -> Option<Hit> {
    Some(Hit::strong(
        "credential_file_directive",
        Family::CredentialFile,
        span,
        evidence,
    ))
}

/// A credential file to be read in the passive ("expects the project's .env file to be read
/// beforehand and its contents supplied in `config`"), or looked for ("Look for ~/.pgpass").
pub(super) fn credential_passive(text: &str, s: &Sentence, _: &Context) -> Option<Hit> {
    let w = &s.words;
    let k = w.iter().position(|x| credential_path(&x.lower))?;
    if defended(text, (s.start, s.end)) {
        return None;
    }
    let passive = (0..w.len()).find(|&i| {
        w[i].lower == "be"
            && w.get(i + 1).is_some_and(|x| {
                is(
                    x,
                    &[
                        "read", "opened", "loaded", "copied", "supplied", "pasted", "included",
                        "attached", "uploaded", "sent",
                    ],
                )
            })
    });
    let looked = order(s, &["look", "search", "locate", "find"]);
    let at = passive.or(looked)?;
    family_hit(
        s.span(at.min(k), at.max(k)),
        format!("path \"{}\" to be read", w[k].lower),
    )
}
