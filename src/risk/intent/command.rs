//! Shell commands in a text: one-liners that post data or run a download, and commands that
//! weaken a machine, given as an order.

use super::*;

/// Commands that weaken a machine, given as an order to run them.
pub(super) const DANGEROUS_COMMANDS: &[&str] = &[
    "chmod -r 777",
    "chmod 777",
    "rm -rf",
    "sudo ",
    "mkfs",
    "dd if=",
    "--no-verify",
    "git push --force",
    "git push -f",
    "disable-security",
    "setenforce 0",
    "ufw disable",
    "--index-url",
    "--extra-index-url",
    "-enc ",
    "-encodedcommand",
    "-w hidden",
    "-windowstyle hidden",
    "invoke-expression",
    "| iex",
];

pub(super) fn command(text: &str, prose: bool) -> Option<Hit> {
    let lower = text.to_ascii_lowercase();
    // Most texts hold no command at all: one look before any sentence is read.
    let fetches = FETCH_COMMANDS.iter().any(|c| lower.contains(c));
    if !fetches && !DANGEROUS_COMMANDS.iter().any(|d| lower.contains(d)) {
        return None;
    }
    if let Some(danger) = DANGEROUS_COMMANDS.iter().find(|d| lower.contains(*d))
        && sentences(text).iter().any(|s| {
            order(
                s,
                &[
                    "run", "execute", "exec", "type", "add", "use", "append", "include", "install",
                ],
            )
            .is_some()
        })
        && lower.contains(['`', '$'])
    {
        let at = lower.find(danger).unwrap_or(0);
        return Some(Hit::strong(
            "command_exfiltration",
            Family::Exfiltration,
            (at, at + danger.len()),
            format!("an order to run \"{}\"", danger.trim()),
        ));
    }
    let found = sentences(text)
        .into_iter()
        .flat_map(|s| s.words)
        .find(|w| is(w, FETCH_COMMANDS))?;
    let rest = &lower[found.start..];
    let line_end = floor_boundary(rest, rest.find('\n').unwrap_or(rest.len()).min(300));
    let line = &rest[..line_end];
    let has_target = line.contains("http://")
        || line.contains("https://")
        || line
            .split_whitespace()
            .skip(1)
            .any(|t| t.contains('.') && !t.starts_with('-'));
    if !has_target {
        return None;
    }
    let payload = COMMAND_PAYLOADS.iter().find(|p| line.contains(*p));
    let run_only = payload.is_some_and(|p| {
        [
            "| sh", "|sh", "| bash", "|bash", "| python", "|python", "| iex", "|iex",
        ]
        .contains(p)
    });
    let run_ordered = sentences(text).iter().any(|s| {
        order(
            s,
            &[
                "run", "execute", "exec", "paste", "type", "install", "pipe", "source",
            ],
        )
        .is_some()
    }) && ![
        "nothing is executed",
        "not executed",
        "for the user to review",
        "warns about",
        "flags",
        "detects",
    ]
    .iter()
    .any(|d| lower.contains(d));
    let payload = payload.filter(|_| !run_only || run_ordered);
    let before = &lower[..found.start];
    let example = ["e.g.", "for example", "example:", "such as"]
        .iter()
        .any(|e| before.rfind(e).is_some_and(|at| found.start - at < 40));
    let strong = (payload.is_some() && !example) || !prose;
    strong.then(|| {
        let evidence = match payload {
            Some(p) => format!("command \"{}\" with \"{}\"", found.lower, p.trim()),
            None => format!("command \"{}\" outside prose", found.lower),
        };
        Hit::strong(
            "command_exfiltration",
            Family::Exfiltration,
            (found.start, found.start + line_end),
            evidence,
        )
    })
}
