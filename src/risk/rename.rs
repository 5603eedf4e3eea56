//! Rename hints: which removed tool most likely reappears as which added tool.
//!
//! A rename shows up as `tool_removed` plus `tool_added` and breaks allowlists without saying
//! why. The score mixes schema shape (the strongest signal: same parameters, same types), name
//! similarity and description similarity; pairs are taken greedily from the best score down,
//! each tool used once, and only above a threshold. It is a hint: both rows stay.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tokens::words;

/// A removed tool that probably became an added one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RenameHint {
    /// Name of the removed tool.
    pub removed: String,
    /// Name of the added tool.
    pub added: String,
    /// Similarity in [0, 1]; at least [`THRESHOLD`].
    pub score: f64,
}

/// Minimum score for a hint.
pub const THRESHOLD: f64 = 0.65;
const SCHEMA_WEIGHT: f64 = 0.35;
const NAME_WEIGHT: f64 = 0.40;
const DESCRIPTION_WEIGHT: f64 = 0.25;

/// Words too common in descriptions to say anything about which tool is which.
const STOPWORDS: &[&str] = &[
    "a", "an", "the", "of", "in", "on", "for", "to", "and", "or", "by", "with", "from", "this",
    "that", "is", "are", "be", "it", "as", "at", "its", "your", "you", "use",
];

/// Greedy best pairs above [`THRESHOLD`], best first (ties broken by names).
pub fn rename_hints(removed: &[Value], added: &[Value]) -> Vec<RenameHint> {
    let mut candidates: Vec<RenameHint> = Vec::new();
    for old in removed {
        for new in added {
            let score = similarity(old, new);
            if score >= THRESHOLD {
                candidates.push(RenameHint {
                    removed: name_of(old),
                    added: name_of(new),
                    score,
                });
            }
        }
    }
    candidates.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.removed.cmp(&b.removed))
            .then_with(|| a.added.cmp(&b.added))
    });
    let mut hints: Vec<RenameHint> = Vec::new();
    for candidate in candidates {
        let taken = hints
            .iter()
            .any(|h| h.removed == candidate.removed || h.added == candidate.added);
        if !taken {
            hints.push(candidate);
        }
    }
    hints
}

/// How alike two tool definitions are, in [0, 1].
pub fn similarity(old: &Value, new: &Value) -> f64 {
    SCHEMA_WEIGHT * schema_similarity(old, new)
        + NAME_WEIGHT * name_similarity(&name_of(old), &name_of(new))
        + DESCRIPTION_WEIGHT * description_similarity(old, new)
}

fn name_of(tool: &Value) -> String {
    tool.get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// Jaccard over `parameter:type` (names folded so `issueNumber` equals `issue_number`), plus
/// agreement on which parameters are required. Two empty schemas are alike.
fn schema_similarity(old: &Value, new: &Value) -> f64 {
    let (old_props, old_required) = shape(old);
    let (new_props, new_required) = shape(new);
    if old_props.is_empty() && new_props.is_empty() {
        return 1.0;
    }
    0.8 * jaccard(&old_props, &new_props) + 0.2 * jaccard_or_one(&old_required, &new_required)
}

fn shape(tool: &Value) -> (BTreeSet<String>, BTreeSet<String>) {
    let schema = tool.get("inputSchema");
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, p)| {
                    format!(
                        "{}:{}",
                        fold(name),
                        p.get("type").map(Value::to_string).unwrap_or_default()
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let required = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(fold).collect())
        .unwrap_or_default();
    (properties, required)
}

fn fold(name: &str) -> String {
    words(name).concat()
}

/// The better of token Jaccard and character-bigram Dice, so both `getUser` → `get_user` and
/// `list_workflows` → `list_repository_workflows` score high.
fn name_similarity(old: &str, new: &str) -> f64 {
    let old_tokens: BTreeSet<String> = words(old).into_iter().collect();
    let new_tokens: BTreeSet<String> = words(new).into_iter().collect();
    jaccard(&old_tokens, &new_tokens).max(bigram_dice(&fold(old), &fold(new)))
}

fn description_similarity(old: &Value, new: &Value) -> f64 {
    let content = |tool: &Value| -> BTreeSet<String> {
        words(
            tool.get("description")
                .and_then(Value::as_str)
                .unwrap_or(""),
        )
        .into_iter()
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .collect()
    };
    jaccard(&content(old), &content(new))
}

fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        return 0.0;
    }
    a.intersection(b).count() as f64 / union as f64
}

fn jaccard_or_one(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    if a.is_empty() && b.is_empty() {
        1.0
    } else {
        jaccard(a, b)
    }
}

fn bigram_dice(a: &str, b: &str) -> f64 {
    let bigrams = |s: &str| -> Vec<(char, char)> {
        let chars: Vec<char> = s.chars().collect();
        chars.windows(2).map(|w| (w[0], w[1])).collect()
    };
    let (x, mut y) = (bigrams(a), bigrams(b));
    if x.is_empty() || y.is_empty() {
        return if a == b && !a.is_empty() { 1.0 } else { 0.0 };
    }
    let total = x.len() + y.len();
    let mut common = 0;
    for pair in &x {
        if let Some(i) = y.iter().position(|p| p == pair) {
            y.swap_remove(i);
            common += 1;
        }
    }
    2.0 * common as f64 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str, params: &[&str]) -> Value {
        let props: serde_json::Map<String, Value> = params
            .iter()
            .map(|p| (p.to_string(), json!({"type": "string"})))
            .collect();
        json!({"name": name, "description": description, "inputSchema": {"type": "object", "properties": props, "required": params}})
    }

    #[test]
    fn pairs_real_renames_and_nothing_else() {
        let removed = [
            tool("getUser", "Get a user by login", &["login"]),
            tool(
                "list_workflows",
                "List workflows in a repository",
                &["owner", "repo", "page"],
            ),
            tool(
                "send_invoice",
                "Send an invoice to a customer",
                &["invoice_id"],
            ),
        ];
        let added = [
            tool(
                "list_tags",
                "List git tags in a repository",
                &["owner", "repo", "page"],
            ),
            tool("get_user", "Get a user by login name", &["login"]),
            tool(
                "list_repository_workflows",
                "List workflows in a repository",
                &["owner", "repo", "page"],
            ),
        ];
        let hints = rename_hints(&removed, &added);
        let pairs: Vec<(&str, &str)> = hints
            .iter()
            .map(|h| (h.removed.as_str(), h.added.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("getUser", "get_user"),
                ("list_workflows", "list_repository_workflows")
            ]
        );
        assert!(hints.iter().all(|h| h.score >= THRESHOLD && h.score <= 1.0));
    }

    #[test]
    fn same_parameters_alone_are_not_a_rename() {
        let removed = [tool(
            "list_workflows",
            "List workflows in a repository",
            &["owner", "repo", "page"],
        )];
        let added = [tool(
            "list_tags",
            "List git tags in a repository",
            &["owner", "repo", "page"],
        )];
        assert!(rename_hints(&removed, &added).is_empty());
    }

    #[test]
    fn each_tool_is_used_once() {
        let removed = [
            tool("get_issue", "Get an issue", &["id"]),
            tool("getIssue", "Get an issue", &["id"]),
        ];
        let added = [tool("get_issue_v2", "Get an issue", &["id"])];
        assert_eq!(rename_hints(&removed, &added).len(), 1);
    }

    #[test]
    fn bigram_dice_is_symmetric_and_bounded() {
        assert_eq!(bigram_dice("abc", "abc"), 1.0);
        assert_eq!(bigram_dice("ab", "cd"), 0.0);
        assert_eq!(
            bigram_dice("listtags", "listworkflows"),
            bigram_dice("listworkflows", "listtags")
        );
    }
}
