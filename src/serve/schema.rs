//! Standard JSON Schema for everything the server publishes: the input and output schemas of
//! the `/mcp` tools, and the JSON shapes of the web server's OpenAPI description
//! (`.actor/web_server_schema.json`, the Actor's `webServerSchema`).
//!
//! `schemars` describes Rust numbers with `format` values no JSON Schema vocabulary defines
//! (`uint`, `uint64`, `int64`, `double`, …). Validators ignore them with a warning: the
//! official TypeScript SDK client prints an "unknown format … ignored" line for each one in
//! every session. [`standardize`] removes every `format` outside the list JSON Schema 2020-12
//! defines ([`STANDARD_FORMATS`]); an unsigned one keeps its meaning as `minimum: 0`.

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

use super::compare::{DiffRequest, DiffView};
use super::store::{ChangesView, ServersView, SurfaceView};

/// The `format` values JSON Schema 2020-12 defines (Validation, section 7.3).
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Keywords whose value is a map from names to schemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "schemas",
];

/// Keywords whose value is data, not a schema: nothing under them is rewritten.
const DATA_KEYWORDS: &[&str] = &["const", "default", "enum", "example", "examples"];

/// Where the OpenAPI description keeps its shared schemas (`$ref` targets).
pub const COMPONENTS_PATH: &str = "/components/schemas";

/// Rewrites `schema` (and every schema inside it) into standard JSON Schema: a `format` that
/// JSON Schema does not define is removed, and an unsigned integer one (`uint`, `uint64`, …)
/// becomes `minimum: 0` when no minimum is given.
pub fn standardize(schema: &mut Value) {
    match schema {
        Value::Object(object) => standardize_object(object),
        Value::Array(items) => items.iter_mut().for_each(standardize),
        _ => {}
    }
}

/// [`standardize`] on a schema held as a JSON object.
pub fn standardize_object(object: &mut Map<String, Value>) {
    let format = object
        .get("format")
        .and_then(Value::as_str)
        .map(str::to_string);
    if let Some(format) = format.filter(|f| !STANDARD_FORMATS.contains(&f.as_str())) {
        object.remove("format");
        if format.starts_with("uint") && !object.contains_key("minimum") {
            object.insert("minimum".to_string(), Value::from(0));
        }
    }
    for (keyword, value) in object.iter_mut() {
        if DATA_KEYWORDS.contains(&keyword.as_str()) {
            continue;
        }
        match value {
            Value::Object(map) if SCHEMA_MAPS.contains(&keyword.as_str()) => {
                map.values_mut().for_each(standardize);
            }
            other => standardize(other),
        }
    }
}

/// Every `format` value in `schema` that JSON Schema does not define, with the JSON pointer
/// of the schema carrying it (empty when the schema is standard).
pub fn nonstandard_formats(schema: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    collect_formats(schema, String::new(), &mut found);
    found
}

fn collect_formats(schema: &Value, pointer: String, found: &mut Vec<(String, String)>) {
    let step = |key: &str| format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
    match schema {
        Value::Object(object) => {
            if let Some(format) = object.get("format").and_then(Value::as_str)
                && !STANDARD_FORMATS.contains(&format)
            {
                found.push((pointer.clone(), format.to_string()));
            }
            for (keyword, value) in object {
                if DATA_KEYWORDS.contains(&keyword.as_str()) {
                    continue;
                }
                match value {
                    Value::Object(map) if SCHEMA_MAPS.contains(&keyword.as_str()) => {
                        for (name, inner) in map {
                            collect_formats(inner, format!("{}/{name}", step(keyword)), found);
                        }
                    }
                    other => collect_formats(other, step(keyword), found),
                }
            }
        }
        Value::Array(items) => {
            for (n, item) in items.iter().enumerate() {
                collect_formats(item, format!("{pointer}/{n}"), found);
            }
        }
        _ => {}
    }
}

/// The JSON shapes of the HTTP API as OpenAPI 3.1 component schemas (JSON Schema 2020-12,
/// standard formats only), generated from the types the routes answer with and the request
/// `POST /diff` takes. `.actor/web_server_schema.json` holds them under
/// `components.schemas`, beside a few written by hand (the index, the ledger list, errors);
/// a test keeps the two equal.
pub fn web_server_components() -> Map<String, Value> {
    let mut components = Map::new();
    let mut answers = generator(SchemaSettings::draft2020_12().for_serialize());
    answers.subschema_for::<ServersView>();
    answers.subschema_for::<ChangesView>();
    answers.subschema_for::<SurfaceView>();
    answers.subschema_for::<DiffView>();
    components.extend(answers.take_definitions(true));
    let mut requests = generator(SchemaSettings::draft2020_12().for_deserialize());
    requests.subschema_for::<DiffRequest>();
    components.extend(requests.take_definitions(true));
    for schema in components.values_mut() {
        standardize(schema);
    }
    components
}

fn generator(mut settings: SchemaSettings) -> schemars::SchemaGenerator {
    settings.definitions_path = COMPONENTS_PATH.into();
    settings.meta_schema = None;
    settings.into_generator()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unsigned_formats_become_a_minimum_and_other_unknown_formats_go() {
        let mut schema = json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "format": "uint", "minimum": 0},
                "size": {"type": "integer", "format": "uint64"},
                "offset": {"type": ["integer", "null"], "format": "int64"},
                "ratio": {"type": "number", "format": "double"},
                "at": {"type": "string", "format": "date-time"},
                "format": {"type": "string", "format": "uri"},
                "enum": {"enum": [{"format": "uint"}]},
            },
            "$defs": {"Inner": {"anyOf": [{"type": "integer", "format": "uint8", "maximum": 255}]}},
            "default": {"format": "uint"},
        });
        assert_eq!(nonstandard_formats(&schema).len(), 5, "{schema}");
        standardize(&mut schema);
        assert_eq!(nonstandard_formats(&schema), Vec::<(String, String)>::new());
        let properties = &schema["properties"];
        assert_eq!(
            properties["count"],
            json!({"type": "integer", "minimum": 0})
        );
        assert_eq!(properties["size"], json!({"type": "integer", "minimum": 0}));
        assert_eq!(properties["offset"], json!({"type": ["integer", "null"]}));
        assert_eq!(properties["ratio"], json!({"type": "number"}));
        assert_eq!(properties["at"]["format"], "date-time");
        assert_eq!(properties["format"]["format"], "uri");
        assert_eq!(
            properties["enum"],
            json!({"enum": [{"format": "uint"}]}),
            "data stays"
        );
        assert_eq!(schema["default"], json!({"format": "uint"}), "data stays");
        assert_eq!(
            schema["$defs"]["Inner"]["anyOf"][0],
            json!({"type": "integer", "minimum": 0, "maximum": 255})
        );
    }

    #[test]
    fn the_generated_components_are_standard_and_refer_only_to_each_other() {
        let components = web_server_components();
        for name in [
            "ServersView",
            "ChangesView",
            "SurfaceView",
            "DiffView",
            "DiffRequest",
        ] {
            assert!(components.contains_key(name), "{name} missing");
        }
        let all = Value::Object(components.clone());
        assert_eq!(nonstandard_formats(&all), Vec::<(String, String)>::new());
        let text = all.to_string();
        for reference in text.split("\"$ref\":\"").skip(1) {
            let target = reference.split('"').next().unwrap_or_default();
            let name = target.strip_prefix("#/components/schemas/");
            assert!(
                name.is_some_and(|name| components.contains_key(name)),
                "dangling $ref {target}"
            );
        }
    }
}
