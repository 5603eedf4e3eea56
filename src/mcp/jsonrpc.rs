//! JSON-RPC 2.0 messages as MCP uses them: building requests and notifications, and reading
//! whatever a server sends back (a response, a notification or a server-to-client request).

use serde_json::{Value, json};

/// The error object of a JSON-RPC error response.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcErrorObject {
    /// The numeric error code (for example -32601, or -32022 for an unsupported version).
    pub code: i64,
    /// The human-readable message, empty when the server sent none.
    pub message: String,
    /// The optional `data` member.
    pub data: Option<Value>,
}

/// One message a server sent, classified by its shape.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A response: `id` plus `result` or `error`. The id keeps its JSON type (`1` is not `"1"`).
    Response {
        /// The id as sent by the server (may be `null` on transport-level errors).
        id: Value,
        /// The result, or the error object.
        outcome: Result<Value, RpcErrorObject>,
    },
    /// A request from the server to the client (it has an id and a method).
    Request {
        /// Its id.
        id: Value,
        /// Its method.
        method: String,
    },
    /// A notification (a method without an id).
    Notification {
        /// Its method.
        method: String,
    },
}

/// Serializes a request with an integer id. `params` is omitted when `None`.
pub fn request(id: i64, method: &str, params: Option<Value>) -> Vec<u8> {
    let mut message = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if let (Some(params), Some(object)) = (params, message.as_object_mut()) {
        object.insert("params".to_string(), params);
    }
    message.to_string().into_bytes()
}

/// Serializes a notification without params.
pub fn notification(method: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "method": method})
        .to_string()
        .into_bytes()
}

/// Classifies one JSON value as a message, or `None` when it is not a JSON-RPC message. Takes
/// the value so a response's `result` (a whole tool list) moves into the message uncopied.
pub fn classify(value: Value) -> Option<Message> {
    let Value::Object(mut object) = value else {
        return None;
    };
    let id = object.remove("id");
    if let Some(method) = object.get("method").and_then(Value::as_str) {
        return Some(match id {
            Some(id) if !id.is_null() => Message::Request {
                id,
                method: method.to_string(),
            },
            _ => Message::Notification {
                method: method.to_string(),
            },
        });
    }
    let id = id.unwrap_or(Value::Null);
    if let Some(error) = object.get("error") {
        return Some(Message::Response {
            id,
            outcome: Err(error_object(error)),
        });
    }
    object.remove("result").map(|result| Message::Response {
        id,
        outcome: Ok(result),
    })
}

fn error_object(error: &Value) -> RpcErrorObject {
    RpcErrorObject {
        code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
        message: error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        data: error.get("data").cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_requests_and_notifications() {
        let body: Value = serde_json::from_slice(&request(3, "tools/list", None)).unwrap();
        assert_eq!(body, json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}));
        let body: Value =
            serde_json::from_slice(&request(4, "tools/list", Some(json!({"cursor":"c"})))).unwrap();
        assert_eq!(body["params"]["cursor"], "c");
        let body: Value =
            serde_json::from_slice(&notification("notifications/initialized")).unwrap();
        assert_eq!(
            body,
            json!({"jsonrpc":"2.0","method":"notifications/initialized"})
        );
    }

    #[test]
    fn classifies_each_shape() {
        let table = vec![
            (
                json!({"jsonrpc":"2.0","id":1,"result":{"tools":[]}}),
                Some(Message::Response {
                    id: json!(1),
                    outcome: Ok(json!({"tools":[]})),
                }),
            ),
            (
                json!({"jsonrpc":"2.0","id":"1","result":{}}),
                Some(Message::Response {
                    id: json!("1"),
                    outcome: Ok(json!({})),
                }),
            ),
            (
                json!({"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad"}}),
                Some(Message::Response {
                    id: Value::Null,
                    outcome: Err(RpcErrorObject {
                        code: -32000,
                        message: "Bad".into(),
                        data: None,
                    }),
                }),
            ),
            (
                json!({"jsonrpc":"2.0","error":{"code":-32022,"data":{"supported":["x"]}}}),
                Some(Message::Response {
                    id: Value::Null,
                    outcome: Err(RpcErrorObject {
                        code: -32022,
                        message: String::new(),
                        data: Some(json!({"supported":["x"]})),
                    }),
                }),
            ),
            (
                json!({"jsonrpc":"2.0","method":"notifications/progress","params":{}}),
                Some(Message::Notification {
                    method: "notifications/progress".into(),
                }),
            ),
            (
                json!({"jsonrpc":"2.0","id":9,"method":"roots/list"}),
                Some(Message::Request {
                    id: json!(9),
                    method: "roots/list".into(),
                }),
            ),
            (json!({"hello":"world"}), None),
            (json!([1, 2]), None),
        ];
        for (input, expected) in table {
            assert_eq!(classify(input.clone()), expected, "input {input}");
        }
    }
}
