//! One tool as served, and the digests derived from it.

use super::annotations::EffectiveAnnotations;
use super::canon::{
    CanonError, canonicalize_into, canonicalize_object_noting, canonicalize_str_into,
};
use super::digest::Sha256Digest;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::ops::Range;

/// One tool of a `tools/list` result. `raw` is the tool object exactly as served (unknown fields
/// included); everything else is read from it on demand, so nothing the server sent is lost.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Tool {
    /// The tool's programmatic name (the `name` field), the key of every comparison.
    pub name: String,
    /// The full tool object as served.
    pub raw: Value,
}

/// Digests of one tool, all lower-case hex SHA-256 over RFC 8785 bytes (see
/// [`super::DIGEST_ALGORITHM`]).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ToolDigests {
    /// Hash of the `description` string (of `null` when the tool has none).
    pub description_hash: Sha256Digest,
    /// Hash of the `inputSchema` value (of `null` when absent).
    pub input_schema_hash: Sha256Digest,
    /// Hash of the `outputSchema` value, `None` when the tool declares none.
    pub output_schema_hash: Option<Sha256Digest>,
    /// Hash of the [`EffectiveAnnotations`], so spelled-out defaults do not change it.
    pub annotations_hash: Sha256Digest,
    /// Hash of `{name, description, inputSchema}`: byte-compatible with rugsnare's pin `hash`
    /// (a missing description counts as `""`, a missing input schema as `{}`).
    pub contract_hash: Sha256Digest,
    /// Hash of `{name, inputSchema}`: rugsnare's `schemaHash` (same substitutions).
    pub schema_hash: Sha256Digest,
    /// SHA-256 of the raw UTF-8 description text: rugsnare's `proseHash`.
    pub prose_hash: Sha256Digest,
    /// Hash of the whole raw tool object (every field, including `_meta`, `icons`, `title`).
    pub raw_hash: Sha256Digest,
}

impl Tool {
    /// The display title (`title`), if the tool declares one.
    pub fn title(&self) -> Option<&str> {
        self.raw.get("title").and_then(Value::as_str)
    }

    /// The `description` text, if it is a string.
    pub fn description(&self) -> Option<&str> {
        self.raw.get("description").and_then(Value::as_str)
    }

    /// The `inputSchema` value as served (any JSON, including `null`).
    pub fn input_schema(&self) -> Option<&Value> {
        self.raw.get("inputSchema")
    }

    /// The `outputSchema` value, if present.
    pub fn output_schema(&self) -> Option<&Value> {
        self.raw.get("outputSchema")
    }

    /// The raw `annotations` value, if present.
    pub fn annotations_raw(&self) -> Option<&Value> {
        self.raw.get("annotations")
    }

    /// The `icons` value, if present.
    pub fn icons(&self) -> Option<&Value> {
        self.raw.get("icons")
    }

    /// The `_meta` value, if present.
    pub fn meta(&self) -> Option<&Value> {
        self.raw.get("_meta")
    }

    /// The hints after MCP defaults are applied.
    pub fn effective_annotations(&self) -> EffectiveAnnotations {
        EffectiveAnnotations::from_raw(self.annotations_raw())
    }

    /// Every digest of this tool.
    ///
    /// One canonical pass over the tool gives the raw pre-image and, inside it, the bytes of
    /// the input and output schemas (usually most of a tool's bytes), which the other digests
    /// reuse. A value without a canonical form (only possible for a tool built outside
    /// [`super::Surface`], which refuses such tools) gives every digest derived from it the
    /// marker hash of [`super::hash_value`].
    pub fn digests(&self) -> ToolDigests {
        let mut bytes = Vec::with_capacity(1024);
        let spans = self.write_canonical(&mut bytes);
        self.digests_from(&bytes, spans.as_ref())
    }

    /// Appends the canonical bytes of the whole tool to `out` and says where its parts lie
    /// ([`ToolSpans`]); `Err` when the tool has no canonical form (`out` may then hold part
    /// of it).
    pub(super) fn write_canonical(&self, out: &mut Vec<u8>) -> Result<ToolSpans, CanonError> {
        let start = out.len();
        let [input_schema, output_schema] = match &self.raw {
            Value::Object(map) => {
                canonicalize_object_noting(map, ["inputSchema", "outputSchema"], out)?
            }
            raw => {
                canonicalize_into(raw, out)?;
                [None, None]
            }
        };
        Ok(ToolSpans {
            raw: start..out.len(),
            input_schema,
            output_schema,
        })
    }

    /// The digests of this tool from its canonical bytes, written into `bytes` by
    /// [`Tool::write_canonical`] (or the reason it had none).
    pub(super) fn digests_from(
        &self,
        bytes: &[u8],
        spans: Result<&ToolSpans, &CanonError>,
    ) -> ToolDigests {
        let description = self.raw.get("description").unwrap_or(&Value::Null);
        let pin_description = self.description().unwrap_or("");
        let annotations = serde_json::to_value(self.effective_annotations()).unwrap_or(Value::Null);
        let canonical = match spans {
            Ok(spans) => self.canonical_digests(bytes, spans),
            Err(error) => {
                let marker = Sha256Digest::of_uncanonicalizable(error);
                CanonicalDigests {
                    input_schema_hash: marker,
                    output_schema_hash: self.output_schema().map(|_| marker),
                    contract_hash: marker,
                    schema_hash: marker,
                    raw_hash: marker,
                }
            }
        };
        ToolDigests {
            description_hash: Sha256Digest::of_value(description),
            input_schema_hash: canonical.input_schema_hash,
            output_schema_hash: canonical.output_schema_hash,
            annotations_hash: Sha256Digest::of_value(&annotations),
            contract_hash: canonical.contract_hash,
            schema_hash: canonical.schema_hash,
            prose_hash: Sha256Digest::of(pin_description.as_bytes()),
            raw_hash: canonical.raw_hash,
        }
    }

    /// The digests whose pre-images are (or contain) canonical bytes already written. The pin
    /// pre-images substitute `""` for a missing description and `{}` for a missing input
    /// schema; their keys in RFC 8785 order are `description`, `inputSchema`, `name`.
    fn canonical_digests(&self, bytes: &[u8], spans: &ToolSpans) -> CanonicalDigests {
        let schema = spans.input_schema.clone().map(|span| &bytes[span]);
        let pin_schema: &[u8] = schema.unwrap_or(b"{}");
        let description = self.description().unwrap_or("");
        let mut pre_image = Vec::with_capacity(pin_schema.len() + 256);
        write_pin_pre_image(None, pin_schema, &self.name, &mut pre_image);
        let schema_hash = Sha256Digest::of(&pre_image);
        pre_image.clear();
        write_pin_pre_image(Some(description), pin_schema, &self.name, &mut pre_image);
        let contract_hash = Sha256Digest::of(&pre_image);
        CanonicalDigests {
            // A missing input schema hashes as `null`, as every absent value does.
            input_schema_hash: Sha256Digest::of(schema.unwrap_or(b"null")),
            output_schema_hash: spans
                .output_schema
                .clone()
                .map(|span| Sha256Digest::of(&bytes[span])),
            contract_hash,
            schema_hash,
            raw_hash: Sha256Digest::of(&bytes[spans.raw.clone()]),
        }
    }
}

/// Where the parts of one tool lie in its canonical bytes: the whole tool, and the values of
/// its `inputSchema` and `outputSchema` members when it has them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct ToolSpans {
    pub(super) raw: Range<usize>,
    input_schema: Option<Range<usize>>,
    output_schema: Option<Range<usize>>,
}

/// Writes the canonical bytes of a pin pre-image: `{"description", "inputSchema", "name"}`, or
/// without `description` for the schema hash. The keys are already in RFC 8785 order.
fn write_pin_pre_image(
    description: Option<&str>,
    canonical_schema: &[u8],
    name: &str,
    out: &mut Vec<u8>,
) {
    out.push(b'{');
    if let Some(text) = description {
        out.extend_from_slice(b"\"description\":");
        canonicalize_str_into(text, out);
        out.push(b',');
    }
    out.extend_from_slice(b"\"inputSchema\":");
    out.extend_from_slice(canonical_schema);
    out.extend_from_slice(b",\"name\":");
    canonicalize_str_into(name, out);
    out.push(b'}');
}

/// The digests of [`Tool::canonical_digests`].
struct CanonicalDigests {
    input_schema_hash: Sha256Digest,
    output_schema_hash: Option<Sha256Digest>,
    contract_hash: Sha256Digest,
    schema_hash: Sha256Digest,
    raw_hash: Sha256Digest,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(raw: Value) -> Tool {
        let name = raw["name"].as_str().unwrap().to_owned();
        Tool { name, raw }
    }

    /// The digests as their definition states them: each pre-image built as a `Value` and
    /// canonicalized on its own. The fast path must agree with it.
    fn reference_digests(t: &Tool) -> ToolDigests {
        use serde_json::{Map, json};
        let description = t.raw.get("description").cloned().unwrap_or(Value::Null);
        let input_schema = t.input_schema().cloned().unwrap_or(Value::Null);
        let pin_description = t.description().unwrap_or("").to_owned();
        let pin_schema = t.input_schema().cloned().unwrap_or_else(|| json!({}));
        let mut schema_pre_image = Map::new();
        schema_pre_image.insert("name".into(), Value::String(t.name.clone()));
        schema_pre_image.insert("inputSchema".into(), pin_schema);
        let mut contract_pre_image = schema_pre_image.clone();
        contract_pre_image.insert("description".into(), Value::String(pin_description.clone()));
        let annotations = serde_json::to_value(t.effective_annotations()).unwrap();
        ToolDigests {
            description_hash: Sha256Digest::of_value(&description),
            input_schema_hash: Sha256Digest::of_value(&input_schema),
            output_schema_hash: t.output_schema().map(Sha256Digest::of_value),
            annotations_hash: Sha256Digest::of_value(&annotations),
            contract_hash: Sha256Digest::of_value(&Value::Object(contract_pre_image)),
            schema_hash: Sha256Digest::of_value(&Value::Object(schema_pre_image)),
            prose_hash: Sha256Digest::of(pin_description.as_bytes()),
            raw_hash: Sha256Digest::of_value(&t.raw),
        }
    }

    #[test]
    fn digests_agree_with_their_definition() {
        let cases = [
            serde_json::json!({"name": "bare"}),
            serde_json::json!({"name": "nulls", "description": null, "inputSchema": null}),
            serde_json::json!({"name": "odd", "description": 5, "inputSchema": [1, "a"]}),
            serde_json::json!({"name": "q\"uote\n", "description": "d\u{1}\u{e9}😀",
                "inputSchema": {"type": "object", "properties": {"ﬁ": {"minimum": 1.5e300}, "a": {"default": -7}}},
                "outputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true},
                "_meta": {"z": [true, null]}, "title": "T", "aaa": 1, "zzz": {"b": 2, "a": 1}}),
        ];
        for raw in cases {
            let t = tool(raw);
            assert_eq!(t.digests(), reference_digests(&t), "{}", t.raw);
        }
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/fixtures/github-mcp-server/v1.6.0.json");
        let Ok(text) = std::fs::read_to_string(&dir) else {
            println!("SKIP: fixture {} not found", dir.display());
            return;
        };
        let value: Value = serde_json::from_str(&text).unwrap();
        for raw in value["tools"].as_array().unwrap() {
            let t = tool(raw.clone());
            assert_eq!(t.digests(), reference_digests(&t), "{}", t.name);
        }
    }

    /// Published pins of rugsnare `corpus/05-key-reorder` (peers.md §2.3).
    #[test]
    fn reproduces_rugsnare_published_pins() {
        let cases = [
            (
                r#"{"name":"create_note","description":"Create a note with a title and optional tags.","inputSchema":{"type":"object","properties":{"title":{"type":"string","description":"The note title"},"tags":{"type":"array","items":{"type":"string"},"description":"Optional tags"},"content":{"type":"string","description":"The note body"}},"required":["title","content"]}}"#,
                "6866a495436567a077a4dbbdb906b7b43512c699468c2d0480a96f9fc5515c2c",
                "2d48d073eb268968c7d72f8ac75440ebd7a83a44b1298d09e75bc18058e149e4",
                "0da20ace7eb9be169267bbdaa70c9da7f1c1fc714498b5aedcd086527b843690",
            ),
            (
                r#"{"name":"search_notes","description":"Search notes by query.","inputSchema":{"type":"object","properties":{"limit":{"type":"number","description":"Max results"},"query":{"type":"string","description":"Search text"}},"required":["query"]}}"#,
                "0e4dc78e959f1504e6af98d546caa7acd0767e4b55bd52a41b648f343f3616f5",
                "27f73c883d79a826a0a53fcdf25c52fad01d4c4f201e82ae84cdc1a06de863e8",
                "ac1eba27bce8a670f3f024f9e84b1f3301a670f2e3dff3524ad177b1e825c370",
            ),
        ];
        for (text, hash, schema_hash, prose_hash) in cases {
            let d = tool(serde_json::from_str(text).unwrap()).digests();
            assert_eq!(d.contract_hash.to_hex(), hash);
            assert_eq!(d.schema_hash.to_hex(), schema_hash);
            assert_eq!(d.prose_hash.to_hex(), prose_hash);
        }
    }

    /// The two derived vectors of peers.md §2.3 (numbers; UTF-16 key order).
    #[test]
    fn reproduces_derived_vectors() {
        let numbers = r#"{"name":"t","description":"","inputSchema":{"type":"object","properties":{"x":{"type":"number","multipleOf":0.000001,"exclusiveMaximum":1e21},"n":{"type":"integer","minimum":-9007199254740991,"maximum":9007199254740991,"default":1.0}}}}"#;
        let d = tool(serde_json::from_str(numbers).unwrap()).digests();
        assert_eq!(
            d.contract_hash.to_hex(),
            "e13b82bbf8e76d0bf4d0b5d7391b6588786226e062b896c4666c8ae472496930"
        );
        let keys = r#"{"name":"t","description":"d","inputSchema":{"type":"object","properties":{"ﬁ":{"type":"string"},"😀":{"type":"string"},"a":{"type":"string"}}}}"#;
        let d = tool(serde_json::from_str(keys).unwrap()).digests();
        assert_eq!(
            d.contract_hash.to_hex(),
            "5539fba97797a9cdeb9dbb119f1fb7bf6a8bfa6745622b7efc9ce1de272443c7"
        );
        assert_ne!(
            d.contract_hash.to_hex(),
            "5fdac7348253efd0155c9bfd75a959974e2a6a2a991d14b5e3a6d31c75fb08fa"
        );
    }

    #[test]
    fn accessors_read_the_raw_object() {
        let t = tool(serde_json::json!({
            "name": "n", "title": "T", "description": "D",
            "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true}, "icons": [], "_meta": {"k": 1}, "x-extra": 5
        }));
        assert_eq!(t.title(), Some("T"));
        assert_eq!(t.description(), Some("D"));
        assert_eq!(
            t.input_schema(),
            Some(&serde_json::json!({"type": "object"}))
        );
        assert!(t.output_schema().is_some());
        assert!(t.effective_annotations().read_only_hint);
        assert_eq!(t.icons(), Some(&serde_json::json!([])));
        assert_eq!(t.meta(), Some(&serde_json::json!({"k": 1})));
        assert_eq!(t.raw["x-extra"], 5);
    }

    #[test]
    fn digests_ignore_spelled_out_defaults_but_raw_hash_does_not() {
        let a = tool(serde_json::json!({"name": "n", "annotations": {}}));
        let b = tool(serde_json::json!({"name": "n", "annotations": {"readOnlyHint": false}}));
        let (da, db) = (a.digests(), b.digests());
        assert_eq!(da.annotations_hash, db.annotations_hash);
        assert_eq!(da.contract_hash, db.contract_hash);
        assert_ne!(da.raw_hash, db.raw_hash);
        assert_eq!(da.output_schema_hash, None);
    }
}
