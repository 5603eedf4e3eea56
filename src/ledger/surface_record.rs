//! Content-addressed surface records: the full tool definitions of one readable surface,
//! written once under a key derived from their content and read back for a later diff.

use std::io::{Read, Write};

use flate2::Compression;
use flate2::read::GzDecoder;
use flate2::write::GzEncoder;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Entry, LEDGER_FORMAT, SURFACE_KEY_PREFIX};
use crate::platform::{MAX_RECORD_BYTES, Record};
use crate::surface::{
    Declared, DeclaredItem, DeclaredKind, ListSummary, ServerIdentity, Summaries, Surface,
    hash_value,
};

/// Version of the surface records this build writes: 3 is 2 with the prompts, resources and
/// resource templates (absent when the server declares none); a record of an earlier version
/// does not know them, so a comparison with one reports none of their changes. 2 is the JSON
/// of [`StoredSurface`],
/// gzip-compressed when it is over 256 KiB (a 500-tool surface of tens of megabytes fits the
/// 9 MiB a record may hold), as it is otherwise. Version 1 records (plain JSON) are still read. The record key does not
/// depend on this: it addresses the content, not its encoding.
pub const SURFACE_FORMAT: u32 = 3;
/// The first record version that holds prompts, resources and resource templates.
const DECLARED_FORMAT: u32 = 3;
/// The most bytes a stored surface may inflate to: above the largest surface a probe can read
/// (5 pages of at most 5 MB each); a damaged or hostile record beyond it is refused instead of
/// exhausting memory.
const MAX_SURFACE_JSON_BYTES: u64 = 32 * 1024 * 1024;
/// The most JSON values (every number, string, array, object, ...) a stored surface may hold.
/// Parsed, each costs some 50 bytes whatever its text, so this keeps the tree of a record of
/// tiny values (`[0,0,0,…]`) within about 100 MB; real tool lists, mostly text, hold far fewer.
const MAX_SURFACE_VALUES: usize = 2_000_000;
/// What large surface records are stored as.
const SURFACE_CONTENT_TYPE: &str = "application/gzip";
/// Surface JSON up to this size is stored as it is: compressing it would cost more CPU on a
/// first run (about 10 % of it) than its bytes cost to store, and it is far below the 9 MiB a
/// record may hold. Larger surfaces are gzip-compressed.
const PLAIN_SURFACE_MAX_BYTES: usize = 256 * 1024;
/// The full definitions of one readable surface, stored content-addressed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredSurface {
    /// Record format version (1 or [`SURFACE_FORMAT`]).
    pub format: u32,
    /// Server identity at the time.
    pub identity: ServerIdentity,
    /// The tool objects as served.
    pub tools: Vec<Value>,
    /// The prompt objects as served.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<Value>,
    /// The resource objects as served (a summarized list keeps only `resource_list`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Value>,
    /// The resource template objects as served.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_templates: Vec<Value>,
    /// The summary of a resource list too large to itemize.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_list: Option<ListSummary>,
    /// The summary of a prompt list too long to itemize.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_list: Option<ListSummary>,
    /// The summary of a resource template list too long to itemize.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_template_list: Option<ListSummary>,
    /// Kinds declared but not read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<DeclaredKind>,
}

/// A surface as [`StoredSurface`] serializes it, borrowing the items instead of copying them.
#[derive(Serialize)]
struct StoredSurfaceView<'a> {
    format: u32,
    identity: &'a ServerIdentity,
    tools: Vec<&'a Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    prompts: Vec<&'a Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    resources: Vec<&'a Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    resource_templates: Vec<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_list: Option<&'a ListSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_list: Option<&'a ListSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resource_template_list: Option<&'a ListSummary>,
    #[serde(skip_serializing_if = "<[DeclaredKind]>::is_empty")]
    unread: &'a [DeclaredKind],
}

impl<'a> StoredSurfaceView<'a> {
    /// The view of everything a surface record keeps of `surface`.
    fn of(surface: &'a Surface) -> Self {
        StoredSurfaceView {
            format: SURFACE_FORMAT,
            identity: &surface.identity,
            tools: surface.tools.iter().map(|t| &t.raw).collect(),
            prompts: raws(&surface.declared.prompts),
            resources: raws(&surface.declared.resources),
            resource_templates: raws(&surface.declared.resource_templates),
            resource_list: surface.declared.resource_list.as_ref(),
            prompt_list: surface.declared.prompt_list.as_ref(),
            resource_template_list: surface.declared.resource_template_list.as_ref(),
            unread: &surface.declared.unread,
        }
    }
}

/// `bytes` gzip-compressed at `level`. Surface records use the fast level: on real tool lists
/// it costs a third of the CPU of the default level for records about a third larger
/// (`docs/performance.md`); a record over the platform limit is compressed again at the best.
fn gzip(bytes: &[u8], level: Compression) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(bytes.len() / 3), level);
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}

/// A JSON record of `json`, as it is when small, gzip-compressed above 256 KiB (surface
/// records and value packs, [`super::values`]).
pub(super) fn gzip_if_large(json: Vec<u8>) -> Record {
    if json.len() <= PLAIN_SURFACE_MAX_BYTES {
        return Record::json(json);
    }
    let mut bytes = gzip(&json, Compression::fast());
    if bytes.len() > MAX_RECORD_BYTES {
        // A huge record: the best compression may still fit where the fast one does not.
        bytes = gzip(&json, Compression::best());
    }
    Record {
        bytes,
        content_type: SURFACE_CONTENT_TYPE.to_string(),
    }
}

/// The JSON of a record written by [`gzip_if_large`], inflated when compressed, refused past
/// 32 MiB.
pub(super) fn inflate(bytes: &[u8]) -> Result<Vec<u8>, String> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(bytes.to_vec());
    }
    let mut json = Vec::new();
    GzDecoder::new(bytes)
        .take(MAX_SURFACE_JSON_BYTES + 1)
        .read_to_end(&mut json)
        .map_err(|e| format!("it is not valid gzip ({e})"))?;
    if json.len() as u64 > MAX_SURFACE_JSON_BYTES {
        return Err(format!(
            "it inflates to more than {MAX_SURFACE_JSON_BYTES} bytes"
        ));
    }
    Ok(json)
}

impl StoredSurface {
    /// The record that stores `surface`: its JSON ([`SURFACE_FORMAT`]), gzip-compressed when
    /// large; read back with [`StoredSurface::from_bytes`].
    pub fn record_of(surface: &Surface) -> Record {
        let view = StoredSurfaceView::of(surface);
        // The JSON is built first and compressed in one call: serializing straight into the
        // encoder hands it thousands of tiny writes, each a compressor call (4x slower).
        // serde_json cannot fail on a Value tree.
        let json = serde_json::to_vec(&view).unwrap_or_default();
        gzip_if_large(json)
    }

    /// The stored surface of `surface` as a JSON tree, every field the record keeps: what
    /// [`super::past`] undoes and rebuilds, whatever fields a surface record gains.
    pub fn value_of(surface: &Surface) -> Value {
        serde_json::to_value(StoredSurfaceView::of(surface)).unwrap_or(Value::Null)
    }

    /// The surface a JSON tree made by [`StoredSurface::value_of`] stores.
    pub fn surface_of_value(value: Value) -> Result<Surface, String> {
        let stored: StoredSurface = serde_json::from_value(value)
            .map_err(|e| format!("it is not a stored surface ({e})"))?;
        stored.into_surface()
    }

    /// Reads a surface record of either version, gzip-compressed or plain JSON.
    pub fn from_bytes(bytes: &[u8]) -> Result<StoredSurface, String> {
        let json = inflate(bytes)?;
        let values = value_count(&json);
        if values > MAX_SURFACE_VALUES {
            return Err(format!(
                "it holds {values} JSON values, more than the {MAX_SURFACE_VALUES} a stored \
                 surface may"
            ));
        }
        let stored: StoredSurface = serde_json::from_slice(&json)
            .map_err(|e| format!("it is not a stored surface ({e})"))?;
        if !(1..=SURFACE_FORMAT).contains(&stored.format) {
            return Err(format!(
                "its format is {}, this build reads formats 1 to {SURFACE_FORMAT}",
                stored.format
            ));
        }
        Ok(stored)
    }

    /// The key of the stored surface with this identity and tool digest, without building it:
    /// the digest already stands for the tools, so only the identity is hashed again.
    pub fn key_for(identity: &ServerIdentity, tool_digest: &str) -> String {
        let content = serde_json::json!({
            "format": LEDGER_FORMAT,
            "identity": identity,
            "tool_digest": tool_digest,
        });
        let digest = hash_value(&content);
        format!("{SURFACE_KEY_PREFIX}{}", &digest[..40.min(digest.len())])
    }

    /// Rebuilds the surface model.
    pub fn to_surface(&self) -> Result<Surface, String> {
        self.clone().into_surface()
    }

    /// Rebuilds the surface model, consuming the record (no copy of the tools).
    pub fn into_surface(self) -> Result<Surface, String> {
        let mut declared = Declared::from_stored(
            self.prompts,
            self.resources,
            self.resource_templates,
            Summaries {
                prompts: self.prompt_list,
                resources: self.resource_list,
                resource_templates: self.resource_template_list,
            },
            self.unread,
        );
        declared.not_recorded = self.format < DECLARED_FORMAT;
        Surface::from_tools(self.identity, self.tools)
            .map(|surface| surface.with_declared(declared))
            .map_err(|e| e.to_string())
    }
}

fn raws(items: &[DeclaredItem]) -> Vec<&Value> {
    items.iter().map(|i| &i.raw).collect()
}

/// Checks a stored surface against the entry that names it: its tools must give the entry's
/// `tool_digest`, and its identity and digest the entry's `surface_key`. The entry is covered
/// by the chain's head, so a surface record replaced in the store fails here.
pub fn check_surface(entry: &Entry, surface: &Surface) -> Result<(), String> {
    let digest = surface.tool_digest();
    if entry.tool_digest.as_deref() != Some(digest.as_str()) {
        return Err(format!(
            "its tools digest to {digest}, the entry names {}",
            entry.tool_digest.as_deref().unwrap_or("no digest")
        ));
    }
    let key = StoredSurface::key_for(&surface.identity, &digest);
    if entry.surface_key.as_deref() != Some(key.as_str()) {
        return Err(format!(
            "its identity and tools address it as {key}, the entry names {}",
            entry.surface_key.as_deref().unwrap_or("no record")
        ));
    }
    Ok(())
}

/// How many JSON values `json` holds, counted from its separators outside strings (an upper
/// bound of one per `,` and `:` plus one): cheap, and it needs no parse.
fn value_count(json: &[u8]) -> usize {
    let (mut count, mut in_string, mut escaped) = (1, false, false);
    for &byte in json {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else {
            match byte {
                b'"' => in_string = true,
                b',' | b':' => count += 1,
                _ => {}
            }
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::tests::surface;
    use serde_json::json;

    #[test]
    fn surface_keys_are_content_addressed() {
        let a = surface(json!([{"name": "a", "inputSchema": {"type": "object"}}]));
        let b = surface(json!([{"name": "b", "inputSchema": {"type": "object"}}]));
        let key = |s: &Surface| StoredSurface::key_for(&s.identity, &s.tool_digest());
        let key_a = key(&a);
        assert_eq!(key_a, key(&a.clone()));
        assert_ne!(key_a, key(&b));
        assert!(crate::input::is_valid_record_key(&key_a), "{key_a}");
        let record = StoredSurface::record_of(&a);
        let stored = StoredSurface::from_bytes(&record.bytes).unwrap();
        assert_eq!(stored.format, SURFACE_FORMAT);
        let back = stored.to_surface().unwrap();
        assert_eq!(back, a);
        assert_eq!(key(&back), key_a);
    }

    #[test]
    fn prompts_resources_and_templates_round_trip_and_a_tools_only_record_has_none() {
        use crate::surface::{Declared, ListRead};
        let tools_only = surface(json!([{"name": "a"}]));
        let record = StoredSurface::record_of(&tools_only);
        let text = String::from_utf8(record.bytes.clone()).unwrap();
        assert!(
            !text.contains("prompts") && !text.contains("resource"),
            "{text}"
        );
        let read = |items: Value| {
            Some(ListRead {
                items: items.as_array().cloned().unwrap(),
                truncated: false,
            })
        };
        let (declared, _) = Declared::from_reads(
            read(json!([{"name": "p", "arguments": [{"name": "x", "required": true}]}])),
            None,
            read(json!([{"name": "t", "uriTemplate": "x://{id}"}])),
        );
        let full = tools_only.clone().with_declared(declared);
        let back = StoredSurface::from_bytes(&StoredSurface::record_of(&full).bytes)
            .unwrap()
            .into_surface()
            .unwrap();
        assert_eq!(back, full);
        assert_eq!(back.tool_digest(), full.tool_digest());
        let files = |n: usize| -> Value {
            (0..n)
                .map(|i| json!({"uri": format!("f://{i}"), "name": format!("file {i}")}))
                .collect()
        };
        // (files, bytes at most): a summary with a digest per item up to the bound, beyond it
        // only the count and sample.
        let bound = crate::surface::declared::DIGESTED_ITEMS_MAX;
        for (n, at_most) in [(500, 500 * 32), (bound + 1, 1024)] {
            let (large, _) = Declared::from_reads(None, read(files(n)), None);
            let summarized = tools_only.clone().with_declared(large);
            let record = StoredSurface::record_of(&summarized);
            assert!(record.bytes.len() <= at_most, "{n}: {}", record.bytes.len());
            let stored = StoredSurface::from_bytes(&record.bytes).unwrap();
            let digests = stored.resource_list.as_ref().map(|l| l.digests.is_some());
            assert_eq!(digests, Some(n <= bound), "{n}");
            let back = stored.into_surface().unwrap();
            assert_eq!(back, summarized);
            assert_eq!(back.tool_digest(), summarized.tool_digest());
        }
    }

    /// A record written before summaries kept item digests reads back, digests to what its
    /// ledger entry names, and compared with the same list read now reports no change.
    #[test]
    fn a_summary_stored_without_item_digests_loads_without_a_change() {
        use crate::surface::{Declared, ListRead};
        let docs: Vec<Value> = (0..127)
            .map(|i| json!({"uri": format!("doc://{i:03}"), "name": format!("doc {i}")}))
            .collect();
        let (declared, _) = Declared::from_reads(
            None,
            Some(ListRead {
                items: docs,
                truncated: false,
            }),
            None,
        );
        let now = surface(json!([{"name": "a"}])).with_declared(declared);
        let mut old_json = StoredSurface::value_of(&now);
        let list = old_json["resource_list"].as_object_mut().unwrap();
        assert!(list.remove("digests").is_some(), "this build writes them");
        // The digest the previous version computed: the tools' hash and the list's count.
        let tools = surface(json!([{"name": "a"}])).tool_digest();
        let old_digest = hash_value(&json!({
            "tools": tools,
            "resourceList": {"total": 127, "complete": true},
            "unread": ["prompts", "resourceTemplates"],
        }));
        let old_bytes = serde_json::to_vec(&old_json).unwrap();
        let old = StoredSurface::from_bytes(&old_bytes)
            .unwrap()
            .into_surface()
            .unwrap();
        assert_eq!(old.declared.resource_list.as_ref().unwrap().digests, None);
        assert_eq!(
            old.tool_digest(),
            old_digest,
            "the entry's digest still matches"
        );
        assert_ne!(
            old.tool_digest(),
            now.tool_digest(),
            "the digests move once"
        );
        assert!(
            crate::diff::compare(&old, &now).is_empty(),
            "no spurious change"
        );
    }

    #[test]
    fn small_surface_records_are_plain_json() {
        let small = surface(json!([{"name": "a", "inputSchema": {"type": "object"}}]));
        let record = StoredSurface::record_of(&small);
        assert!(record.content_type.starts_with("application/json"));
        let stored: Value = serde_json::from_slice(&record.bytes).unwrap();
        assert_eq!(stored["format"], SURFACE_FORMAT);
        let back = StoredSurface::from_bytes(&record.bytes).unwrap();
        assert_eq!(back.to_surface().unwrap(), small);
    }

    #[test]
    fn surface_records_are_compressed_and_old_plain_records_still_read() {
        // A large, repetitive surface (as real tool lists are) shrinks well below its JSON.
        let tools: Vec<Value> = (0..500)
            .map(|i| {
                json!({
                    "name": format!("tool_{i}"),
                    "description": "Lists the issues of a repository, filtered by state and label. ".repeat(20),
                    "inputSchema": {"type": "object", "properties": {"owner": {"type": "string"}, "repo": {"type": "string"}}},
                })
            })
            .collect();
        let big = surface(Value::Array(tools.clone()));
        let record = StoredSurface::record_of(&big);
        let plain =
            serde_json::to_vec(&json!({"format": 1, "identity": big.identity, "tools": tools}))
                .unwrap();
        assert!(
            record.bytes.len() * 20 < plain.len(),
            "{} vs {}",
            record.bytes.len(),
            plain.len()
        );
        assert_eq!(
            StoredSurface::from_bytes(&record.bytes)
                .unwrap()
                .to_surface()
                .unwrap(),
            big
        );
        // A version 1 record (plain JSON) reads back the same.
        let old = StoredSurface::from_bytes(&plain).unwrap();
        assert_eq!(old.format, 1);
        let mut unknowing = big.clone();
        unknowing.declared.not_recorded = true;
        assert_eq!(old.to_surface().unwrap(), unknowing, "it knows no prompts");
        // Damaged, future and bomb-like records are refused with a reason.
        let mut cut = record.bytes.clone();
        cut.truncate(cut.len() / 2);
        let future =
            serde_json::to_vec(&json!({"format": 4, "identity": {}, "tools": []})).unwrap();
        for (bytes, expected) in [
            (cut, "not valid gzip"),
            (future, "format is 4"),
            (b"{oops".to_vec(), "not a stored surface"),
        ] {
            let error = StoredSurface::from_bytes(&bytes).unwrap_err();
            assert!(error.contains(expected), "{error}");
        }
    }

    #[test]
    fn values_are_counted_outside_strings_and_dense_records_refused() {
        let cases: [(&[u8], usize); 4] = [
            (b"[]", 1),
            (br#"{"a":[1,2,3]}"#, 4),
            (br#"{"a":"x,y:z"}"#, 2),
            (br#"{"a":"q\",:","b":1}"#, 4),
        ];
        for (json, expected) in cases {
            assert_eq!(
                value_count(json),
                expected,
                "{}",
                String::from_utf8_lossy(json)
            );
        }
        let zeros = "0,".repeat(MAX_SURFACE_VALUES);
        let dense =
            format!(r#"{{"format":2,"identity":{{}},"tools":[{{"name":"a","x":[{zeros}0]}}]}}"#);
        let error = StoredSurface::from_bytes(dense.as_bytes()).unwrap_err();
        assert!(error.contains("JSON values"), "{error}");
    }
}
