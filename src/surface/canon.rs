//! RFC 8785 (JSON Canonicalization Scheme) serialization of a `serde_json::Value`.
//!
//! The output depends only on the JSON data model, never on how the `Value` was built: object
//! keys are sorted here by UTF-16 code units (so `serde_json`'s `preserve_order` feature and the
//! insertion order do not matter), and numbers are printed the way ECMAScript prints an IEEE 754
//! double (so `1.0`, `1` and `1e0` all become `1`).

use serde_json::{Map, Number, Value};
use std::cmp::Ordering;
use std::ops::Range;

/// How many nested arrays/objects a value may have before canonicalization refuses it.
///
/// `serde_json` parses at most 128 levels, so real input never comes close; the limit exists so
/// that a programmatically built value cannot overflow the stack of the recursive writer.
pub const MAX_DEPTH: usize = 512;

/// Largest integer that an IEEE 754 double holds exactly (2^53 - 1).
const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// Why a value has no canonical form.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CanonError {
    /// The value nests deeper than [`MAX_DEPTH`].
    #[error("JSON value nests deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// A number could not be written as an ECMAScript number (it is not finite).
    #[error("JSON number {0} has no RFC 8785 form")]
    BadNumber(String),
}

/// Returns the RFC 8785 canonical UTF-8 bytes of `v`.
pub fn canonicalize(v: &Value) -> Result<Vec<u8>, CanonError> {
    let mut out = Vec::with_capacity(256);
    write_value(v, &mut out, 0)?;
    Ok(out)
}

/// Appends the RFC 8785 canonical UTF-8 bytes of `v` to `out` (lets callers build one buffer
/// from several values without copying them into a new `Value`). On error `out` may hold a
/// partial value.
pub fn canonicalize_into(v: &Value, out: &mut Vec<u8>) -> Result<(), CanonError> {
    write_value(v, out, 0)
}

/// Appends the canonical bytes of the object `map` and returns where the value of each member
/// named in `keys` lies in `out` (`None` for a member the object lacks). The bytes of a member
/// are its own canonical form, so a caller can hash a member and the whole object from one
/// pass over it.
pub fn canonicalize_object_noting<const N: usize>(
    map: &Map<String, Value>,
    keys: [&str; N],
    out: &mut Vec<u8>,
) -> Result<[Option<Range<usize>>; N], CanonError> {
    let mut spans = [const { None }; N];
    write_object_with(map, out, 0, |name, value, out| {
        let start = out.len();
        write_value(value, out, 1)?;
        if let Some(at) = keys.iter().position(|key| *key == name) {
            spans[at] = Some(start..out.len());
        }
        Ok(())
    })?;
    Ok(spans)
}

/// Appends the canonical bytes of `v` standing `depth` containers deep inside a value being
/// written (so the nesting limit counts the levels around it).
pub fn canonicalize_at(v: &Value, out: &mut Vec<u8>, depth: usize) -> Result<(), CanonError> {
    write_value(v, out, depth)
}

/// Appends the canonical bytes of the object `map` (at the top), writing each member's value
/// through `write_member` (which writes it at depth 1, e.g. with [`canonicalize_at`]): lets a
/// caller replace or trim a member without copying the object to change it.
pub fn canonicalize_object_by(
    map: &Map<String, Value>,
    out: &mut Vec<u8>,
    write_member: impl FnMut(&str, &Value, &mut Vec<u8>) -> Result<(), CanonError>,
) -> Result<(), CanonError> {
    write_object_with(map, out, 0, write_member)
}

/// Appends the canonical bytes of the object `map`, standing `depth` containers deep, as if
/// it had only the members whose names `keep` accepts.
pub fn canonicalize_object_keeping(
    map: &Map<String, Value>,
    out: &mut Vec<u8>,
    depth: usize,
    keep: impl Fn(&str) -> bool,
) -> Result<(), CanonError> {
    write_object_keeping(map, out, depth, keep, |_, value, out| {
        write_value(value, out, depth + 1)
    })
}

/// Appends the canonical form of the JSON string `s` (quotes included).
pub fn canonicalize_str_into(s: &str, out: &mut Vec<u8>) {
    write_string(s, out);
}

/// Returns the canonical form of `v` as a `String` (convenience for tests and display).
pub fn canonical_string(v: &Value) -> Result<String, CanonError> {
    let bytes = canonicalize(v)?;
    // The writer emits only valid UTF-8 (it copies `str` data and ASCII escapes).
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Returns the nesting depth of `v` (a scalar is 0, `[]` is 1), or `TooDeep` past [`MAX_DEPTH`].
///
/// Walks with an explicit stack so arbitrarily deep input is refused without recursion.
pub fn check_depth(v: &Value) -> Result<usize, CanonError> {
    let mut deepest = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(v, 0)];
    while let Some((value, depth)) = stack.pop() {
        let level = depth + 1;
        match value {
            Value::Array(items) if !items.is_empty() => {
                stack.extend(items.iter().map(|child| (child, level)))
            }
            Value::Object(map) if !map.is_empty() => {
                stack.extend(map.values().map(|child| (child, level)))
            }
            Value::Array(_) | Value::Object(_) => {}
            _ => continue,
        }
        if level > MAX_DEPTH {
            return Err(CanonError::TooDeep);
        }
        deepest = deepest.max(level);
    }
    Ok(deepest)
}

/// Orders two strings by their UTF-16 code units, as RFC 8785 §3.2.3 requires.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Writes `v`, which stands `depth` containers deep; refuses to go past [`MAX_DEPTH`] (the same
/// levels [`check_depth`] counts), so the recursion is bounded whatever the input.
fn write_value(v: &Value, out: &mut Vec<u8>, depth: usize) -> Result<(), CanonError> {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(n, out)?,
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            let level = entered(depth)?;
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(item, out, level)?;
            }
            out.push(b']');
        }
        Value::Object(map) => write_object_with(map, out, depth, |_, value, out| {
            write_value(value, out, depth + 1)
        })?,
    }
    Ok(())
}

/// The level of a container (empty or not, as in [`check_depth`]) entered at `depth`, or
/// `TooDeep` past [`MAX_DEPTH`].
fn entered(depth: usize) -> Result<usize, CanonError> {
    let level = depth + 1;
    if level > MAX_DEPTH {
        return Err(CanonError::TooDeep);
    }
    Ok(level)
}

/// Writes `map`'s members in RFC 8785 key order, each value through `write_member`.
/// Writes the object `map` standing `depth` containers deep, each member's value through
/// `write_member` (which writes it one level deeper).
fn write_object_with(
    map: &Map<String, Value>,
    out: &mut Vec<u8>,
    depth: usize,
    write_member: impl FnMut(&str, &Value, &mut Vec<u8>) -> Result<(), CanonError>,
) -> Result<(), CanonError> {
    write_object_keeping(map, out, depth, |_| true, write_member)
}

/// [`write_object_with`] over the members whose names `keep` accepts.
fn write_object_keeping(
    map: &Map<String, Value>,
    out: &mut Vec<u8>,
    depth: usize,
    keep: impl Fn(&str) -> bool,
    mut write_member: impl FnMut(&str, &Value, &mut Vec<u8>) -> Result<(), CanonError>,
) -> Result<(), CanonError> {
    entered(depth)?;
    let mut entries: Vec<(&String, &Value)> = map.iter().filter(|(key, _)| keep(key)).collect();
    entries.sort_by(|a, b| cmp_utf16(a.0, b.0));
    out.push(b'{');
    for (i, (key, value)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(key, out);
        out.push(b':');
        write_member(key, value, out)?;
    }
    out.push(b'}');
    Ok(())
}

/// Writes a number as ECMAScript `Number.prototype.toString` would print the same double.
fn write_number(n: &Number, out: &mut Vec<u8>) -> Result<(), CanonError> {
    if let Some(u) = n.as_u64().filter(|u| *u <= MAX_SAFE_INTEGER) {
        write_integer(u, false, out);
        return Ok(());
    }
    if let Some(i) = n.as_i64().filter(|i| i.unsigned_abs() <= MAX_SAFE_INTEGER) {
        write_integer(i.unsigned_abs(), i < 0, out);
        return Ok(());
    }
    // Everything else is a double in the JSON data model of RFC 8785 (large integers lose
    // precision exactly as they would in JavaScript). The verified ECMAScript formatter of
    // `serde_json_canonicalizer` prints it.
    let double = n
        .as_f64()
        .filter(|f| f.is_finite())
        .ok_or_else(|| CanonError::BadNumber(n.to_string()))?;
    let text = serde_json_canonicalizer::to_vec(&double)
        .map_err(|_| CanonError::BadNumber(n.to_string()))?;
    out.extend_from_slice(&text);
    Ok(())
}

/// Writes a safe integer in decimal without allocating.
fn write_integer(magnitude: u64, negative: bool, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = magnitude;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if negative {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[at..]);
}

/// Writes a JSON string with the minimal escaping of RFC 8785 §3.2.2.2.
fn write_string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: Option<&[u8]> = match b {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            0x08 => Some(b"\\b"),
            0x09 => Some(b"\\t"),
            0x0a => Some(b"\\n"),
            0x0c => Some(b"\\f"),
            0x0d => Some(b"\\r"),
            0x00..=0x1f => None,
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        match escape {
            Some(seq) => out.extend_from_slice(seq),
            None => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn canon_text(text: &str) -> String {
        let v: Value = serde_json::from_str(text).unwrap();
        canonical_string(&v).unwrap()
    }

    #[test]
    fn objects_written_by_parts_equal_the_objects_changed_first() {
        // (object, its canonical form without chain.head and chain.signature, and with
        // member "a" replaced by 7)
        let cases = [
            (
                json!({"b": 1, "chain": {"seq": 2, "head": "x", "signature": "y"}, "a": [1]}),
                r#"{"a":7,"b":1,"chain":{"seq":2}}"#,
            ),
            (
                json!({"chain": {"head": "x"}, "a": null}),
                r#"{"a":7,"chain":{}}"#,
            ),
            (
                json!({"chain": "head", "head": 1}),
                r#"{"chain":"head","head":1}"#,
            ),
            (json!({"x": {"head": 1}}), r#"{"x":{"head":1}}"#),
            (
                json!({"chain": {"z": {"head": 1}, "é": 0}}),
                r#"{"chain":{"z":{"head":1},"é":0}}"#,
            ),
        ];
        for (value, expected) in cases {
            let Value::Object(map) = &value else {
                unreachable!()
            };
            let mut out = Vec::new();
            canonicalize_object_by(map, &mut out, |name, value, out| match (name, value) {
                ("chain", Value::Object(chain)) => {
                    canonicalize_object_keeping(chain, out, 1, |k| k != "head" && k != "signature")
                }
                ("a", _) => canonicalize_at(&json!(7), out, 1),
                _ => canonicalize_at(value, out, 1),
            })
            .unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), expected, "{value}");
        }
        // The nesting limit counts the levels around a member written by parts: the top
        // object and "chain" are two of them.
        for (arrays, fits) in [(MAX_DEPTH - 2, true), (MAX_DEPTH - 1, false)] {
            let mut deep = json!(1);
            for _ in 0..arrays {
                deep = json!([deep]);
            }
            let Value::Object(map) = json!({"chain": {"x": deep}}) else {
                unreachable!()
            };
            let whole = canonicalize(&Value::Object(map.clone()));
            let mut out = Vec::new();
            let by_parts = canonicalize_object_by(&map, &mut out, |_, value, out| match value {
                Value::Object(chain) => canonicalize_object_keeping(chain, out, 1, |_| true),
                _ => canonicalize_at(value, out, 1),
            });
            assert_eq!(by_parts.is_ok(), fits, "{arrays} arrays");
            assert_eq!(by_parts.map(|_| out), whole, "{arrays} arrays");
        }
    }

    #[test]
    fn numbers_follow_ecmascript_formatting() {
        let cases = [
            ("1.0", "1"),
            ("-0", "0"),
            ("-0.0", "0"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("1E+30", "1e+30"),
            ("1e-7", "1e-7"),
            ("0.000001", "0.000001"),
            ("12e1", "120"),
            ("9007199254740991", "9007199254740991"),
            ("-9007199254740991", "-9007199254740991"),
            ("9007199254740993", "9007199254740992"),
            ("18446744073709551615", "18446744073709552000"),
            ("-9223372036854775808", "-9223372036854776000"),
            ("245010723912258.12", "245010723912258.12"),
            ("0.1", "0.1"),
            ("5e-324", "5e-324"),
        ];
        for (input, expected) in cases {
            assert_eq!(canon_text(input), expected, "input {input}");
        }
    }

    #[test]
    fn strings_use_minimal_escaping() {
        let cases = [
            (json!("a\"b\\c"), r#""a\"b\\c""#),
            (json!("\u{8}\t\n\u{c}\r"), r#""\b\t\n\f\r""#),
            (json!("\u{1}\u{1f}"), r#""\u0001\u001f""#),
            (json!("/\u{7f}\u{2028}é😀"), "\"/\u{7f}\u{2028}é😀\""),
        ];
        for (value, expected) in cases {
            assert_eq!(canonical_string(&value).unwrap(), expected);
        }
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // U+1F600 is a surrogate pair (0xD83D...) and sorts before U+FB01 in UTF-16,
        // although its code point and UTF-8 bytes are larger.
        let v = json!({"ﬁ": 1, "😀": 2, "a": 3, "€": 4, "10": 5, "2": 6});
        assert_eq!(
            canonical_string(&v).unwrap(),
            r#"{"10":5,"2":6,"a":3,"€":4,"😀":2,"ﬁ":1}"#
        );
    }

    #[test]
    fn no_whitespace_and_nested_sorting() {
        let v = canon_text(r#"{ "b" : [ 1.50, { "z": null, "y": true } ], "a" : {} }"#);
        assert_eq!(v, r#"{"a":{},"b":[1.5,{"y":true,"z":null}]}"#);
    }

    #[test]
    fn rfc_8785_section_3_2_2_example() {
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        let expected = r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#;
        assert_eq!(canon_text(input), expected);
    }

    #[test]
    fn depth_is_measured_and_bounded() {
        assert_eq!(check_depth(&json!(1)).unwrap(), 0);
        assert_eq!(check_depth(&json!([[], {"a": [1]}])).unwrap(), 3);
        let mut v = json!(0);
        for _ in 0..MAX_DEPTH {
            v = json!([v]);
        }
        assert_eq!(check_depth(&v).unwrap(), MAX_DEPTH);
        assert!(canonicalize(&v).is_ok());
        let v = json!({ "k": v });
        assert_eq!(canonicalize(&v), Err(CanonError::TooDeep));
    }

    #[test]
    fn noted_members_are_their_own_canonical_bytes() {
        let v = json!({"z": {"b": 1.0, "a": "x"}, "m": [1, {"k": null}], "a": true});
        let Value::Object(map) = &v else {
            unreachable!()
        };
        let mut out = b"prefix".to_vec();
        let spans = canonicalize_object_noting(map, ["m", "missing", "z"], &mut out).unwrap();
        assert_eq!(&out[6..], canonicalize(&v).unwrap().as_slice());
        let member = |i: usize| spans[i].clone().map(|span| out[span].to_vec());
        assert_eq!(member(0), Some(canonicalize(&v["m"]).unwrap()));
        assert_eq!(member(1), None);
        assert_eq!(member(2), Some(canonicalize(&v["z"]).unwrap()));
        // The depth limit holds inside members as everywhere else.
        let mut deep = json!(0);
        for _ in 0..MAX_DEPTH {
            deep = json!([deep]);
        }
        let Value::Object(map) = json!({ "k": deep }) else {
            unreachable!()
        };
        assert_eq!(
            canonicalize_object_noting(&map, ["k"], &mut Vec::new()),
            Err(CanonError::TooDeep)
        );
    }

    #[test]
    fn hundred_thousand_levels_error_without_stack_overflow() {
        let mut v = Value::Null;
        for _ in 0..100_000 {
            v = Value::Array(vec![v]);
        }
        assert_eq!(canonicalize(&v), Err(CanonError::TooDeep));
        // serde_json drops values recursively; take the chain apart iteratively instead.
        let mut current = v;
        while let Value::Array(mut items) = current {
            current = items.pop().unwrap_or(Value::Null);
        }
    }

    #[test]
    fn independent_of_insertion_order_and_number_spelling() {
        // Build the same object twice with different insertion orders (with `preserve_order`
        // on, serde_json would keep these orders; canonical bytes must not care).
        let mut first = Map::new();
        first.insert("zeta".into(), json!(1));
        first.insert("alpha".into(), json!([1.5, "x"]));
        first.insert("ﬁ".into(), json!(null));
        let mut second = Map::new();
        second.insert("ﬁ".into(), json!(null));
        second.insert("alpha".into(), json!([1.5, "x"]));
        second.insert("zeta".into(), json!(1));
        let (a, b) = (Value::Object(first), Value::Object(second));
        assert_eq!(canonicalize(&a).unwrap(), canonicalize(&b).unwrap());
        // Numbers parsed from different spellings (as `arbitrary_precision` would keep them as
        // text) still canonicalize to one form.
        let spellings = [
            r#"{"n":1}"#,
            r#"{"n":1.0}"#,
            r#"{"n":1e0}"#,
            r#"{"n":10E-1}"#,
            r#"{"n":0.1e1}"#,
        ];
        for text in spellings {
            assert_eq!(canon_text(text), r#"{"n":1}"#, "{text}");
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn arb_json() -> impl Strategy<Value = Value> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(|i| json!(i)),
                any::<u64>().prop_map(|u| json!(u)),
                any::<f64>()
                    .prop_filter("finite", |f| f.is_finite())
                    .prop_map(|f| json!(f)),
                "\\PC{0,8}".prop_map(Value::String),
                "[\\x00-\\x1f\"\\\\a-z]{0,6}".prop_map(Value::String),
            ];
            leaf.prop_recursive(4, 48, 6, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                    prop::collection::vec(("\\PC{0,6}", inner), 0..6)
                        .prop_map(|entries| Value::Object(entries.into_iter().collect())),
                ]
            })
        }

        /// Rebuilds every object of `v` with its keys inserted in the order `seed` picks.
        fn shuffled(v: &Value, seed: u64) -> Value {
            match v {
                Value::Array(items) => {
                    Value::Array(items.iter().map(|i| shuffled(i, seed)).collect())
                }
                Value::Object(map) => {
                    let mut entries: Vec<_> = map.iter().collect();
                    entries.sort_by_key(|(k, _)| {
                        let mut h = seed;
                        for b in k.bytes() {
                            h = h.wrapping_mul(31).wrapping_add(u64::from(b));
                        }
                        h
                    });
                    Value::Object(
                        entries
                            .into_iter()
                            .map(|(k, v)| (k.clone(), shuffled(v, seed)))
                            .collect(),
                    )
                }
                other => other.clone(),
            }
        }

        proptest! {
            #[test]
            fn key_shuffling_does_not_change_bytes(v in arb_json(), seed in any::<u64>()) {
                prop_assert_eq!(canonicalize(&v).unwrap(), canonicalize(&shuffled(&v, seed)).unwrap());
            }

            #[test]
            fn matches_the_reference_canonicalizer(v in arb_json()) {
                let reference = serde_json_canonicalizer::to_vec(&v).unwrap();
                prop_assert_eq!(canonicalize(&v).unwrap(), reference);
            }

            #[test]
            fn canonical_bytes_reparse_to_a_fixed_point(v in arb_json()) {
                let bytes = canonicalize(&v).unwrap();
                let reparsed: Value = serde_json::from_slice(&bytes).unwrap();
                prop_assert_eq!(canonicalize(&reparsed).unwrap(), bytes);
            }
        }
    }
}
