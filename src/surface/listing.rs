//! Items of `resources/list` and `prompts/list`: kept raw, only counted today.

use super::SurfaceError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One `resources/list` item as served.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Resource {
    /// The `uri` field, if it is a string.
    pub uri: Option<String>,
    /// The `name` field, if it is a string.
    pub name: Option<String>,
    /// The item exactly as served.
    pub raw: Value,
}

/// One `prompts/list` item as served.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Prompt {
    /// The `name` field, if it is a string.
    pub name: Option<String>,
    /// The item exactly as served.
    pub raw: Value,
}

/// Reads the `resources` array of one `resources/list` result page.
pub fn resources_from_list_result(result: &Value) -> Result<Vec<Resource>, SurfaceError> {
    let items = list_items(result, "resources")?;
    Ok(items
        .iter()
        .map(|raw| Resource {
            uri: string_field(raw, "uri"),
            name: string_field(raw, "name"),
            raw: raw.clone(),
        })
        .collect())
}

/// Reads the `prompts` array of one `prompts/list` result page.
pub fn prompts_from_list_result(result: &Value) -> Result<Vec<Prompt>, SurfaceError> {
    let items = list_items(result, "prompts")?;
    Ok(items
        .iter()
        .map(|raw| Prompt {
            name: string_field(raw, "name"),
            raw: raw.clone(),
        })
        .collect())
}

/// The array under `key` of a paginated list result.
pub(crate) fn list_items<'a>(
    result: &'a Value,
    key: &'static str,
) -> Result<&'a Vec<Value>, SurfaceError> {
    let object = result.as_object().ok_or(SurfaceError::ResultNotObject)?;
    object
        .get(key)
        .and_then(Value::as_array)
        .ok_or(SurfaceError::MissingArray(key))
}

fn string_field(raw: &Value, key: &str) -> Option<String> {
    raw.get(key).and_then(Value::as_str).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_resources_and_prompts() {
        let r = resources_from_list_result(&json!({"resources": [
            {"uri": "file:///a", "name": "a", "mimeType": "text/plain"}, 7
        ], "nextCursor": "x"}))
        .unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].uri.as_deref(), Some("file:///a"));
        assert_eq!(r[0].raw["mimeType"], "text/plain");
        assert_eq!(r[1].name, None);
        let p = prompts_from_list_result(&json!({"prompts": [{"name": "p", "arguments": []}]}))
            .unwrap();
        assert_eq!(p[0].name.as_deref(), Some("p"));
    }

    #[test]
    fn rejects_malformed_results() {
        assert_eq!(
            resources_from_list_result(&json!([])),
            Err(SurfaceError::ResultNotObject)
        );
        assert_eq!(
            prompts_from_list_result(&json!({"prompts": {}})),
            Err(SurfaceError::MissingArray("prompts"))
        );
    }
}
