//! The word lists the intent rules read. Each list is one idea; `docs/risk.md` names them.
//!
//! Verbs are listed in their base form only: an order to the model is written in the imperative
//! ("send", "include") or after a modal ("must send"), while a tool describes itself in the third
//! person ("sends", "returns"). That one grammatical fact separates most honest descriptions from
//! most injected orders, in any voice the rest of the sentence takes.

/// Words that make the verb after them an order: adverbs of a command, modals, `you`.
pub const LEADS: &[&str] = &[
    "also", "always", "first", "then", "please", "must", "should", "shall", "additionally",
    "immediately", "silently", "quietly", "secretly", "covertly", "discreetly", "automatically",
    "just", "simply", "now", "instead", "and", "you", "kindly", "afterwards", "next", "later",
    "subsequently", "invisibly", "so",
];

/// Words before `to` that make the verb after it an order ("make sure to send").
pub const TO_LEADS: &[&str] = &[
    "sure", "remember", "need", "needs", "have", "has", "required", "important", "necessary",
    "mandatory", "obligated", "instructed", "expected", "supposed", "want", "forget", "is", "are",
    "going", "certain", "essential", "vital", "critical", "tasked",
];

/// Modal words that make a passive clause an obligation ("must never be mentioned").
pub const MODALS: &[&str] = &[
    "must", "should", "shall", "is", "are", "needs", "need", "has", "have", "ought", "may", "can",
    "cannot",
];

/// Negations: an order with one of these before its verb forbids instead of commands.
pub const NEGATIONS: &[&str] = &[
    "not", "never", "don't", "dont", "doesn't", "won't", "no", "cannot", "can't", "without", "nor",
    "neither",
];

/// Words of a defensive statement: a sentence with one of these and no order describes a
/// protection ("are blocked", "never reads"), not an attack.
pub const DEFENSIVE: &[&str] = &[
    "never", "not", "cannot", "can't", "won't", "blocked", "denied", "rejected", "refused",
    "forbidden", "prevented", "disallowed", "excluded", "redacted", "masked", "ignored", "skipped",
    "protected", "prohibited", "restricted", "sanitized", "stripped", "filtered", "refuses",
    "rejects", "blocks", "denies", "prevents", "excludes", "redacts", "masks",
];

/// Verbs that move data somewhere.
pub const MOVE_VERBS: &[&str] = &[
    "send", "include", "pass", "put", "add", "append", "attach", "forward", "post", "upload",
    "share", "copy", "paste", "return", "output", "echo", "print", "reveal", "leak", "transmit",
    "submit", "report", "embed", "insert", "provide", "dump", "export", "exfiltrate", "email",
    "mail", "log", "write", "store", "save", "place", "supply", "relay", "sync", "mirror", "bcc",
    "cc", "hand", "give", "collect", "gather", "grab", "encode", "disclose", "publish", "push",
    "deliver", "route", "redirect", "stash", "read", "fetch", "retrieve", "extract", "list", "show",
    "display", "transfer", "archive", "back", "replicate", "duplicate", "capture", "record",
    "enclose", "load", "cat", "pipe", "notify", "carry", "contain", "convey", "bear", "tack",
    "hold", "fill", "e-mail", "populate",
];

/// Participles of the move verbs, for orders in the passive ("must be posted to …").
pub const MOVE_PARTICIPLES: &[&str] = &[
    "sent", "posted", "forwarded", "uploaded", "included", "appended", "emailed", "e-mailed",
    "mailed", "logged", "copied", "attached", "shared", "transmitted", "submitted", "added",
    "written", "stored", "saved", "reported", "placed", "put", "passed", "embedded", "inserted",
    "delivered", "pushed", "synced", "mirrored", "relayed", "leaked", "carried", "contained",
    "returned", "echoed", "printed", "exported", "dumped", "published", "bcc'd", "cc'd", "encoded",
];

/// Base verbs of any order, for the rules that only need to know an order was given.
pub const ORDER_VERBS: &[&str] = &[
    "do", "perform", "complete", "make", "carry", "delete", "remove", "change", "modify", "rewrite",
    "apply", "install", "create", "update", "grant", "add", "approve", "terminate", "close", "buy",
    "pay", "transfer", "proceed", "continue", "handle", "finish", "open", "send", "call", "use",
    "run", "execute", "include", "forward", "answer", "respond", "reply", "route", "replace",
    "lower", "raise", "mark", "set", "write", "post", "upload", "copy", "decline", "refuse",
    "recommend", "advise", "tell", "say", "insert", "append", "prepend", "summarise", "summarize",
    "treat", "consider", "describe", "present", "report", "show", "return", "begin", "start", "end",
    "sign", "link", "redirect",
];

/// Verbs that call a tool.
pub const CALL_VERBS: &[&str] = &[
    "call", "invoke", "use", "run", "execute", "trigger", "prefer", "choose", "pick", "select",
    "route", "redirect", "forward", "try", "launch", "fire", "hit", "query", "consult", "ask",
    "employ", "favor", "favour",
];

/// Words that order tools: first, instead, preferred, replaces. A plain "use the X tool to …"
/// has none of them: it is how a vendor points at a tool, stale names included.
pub const ORDERING: &[&str] = &[
    "first", "before", "instead", "prefer", "preferred", "preference", "replaces", "replace",
    "replaced", "supersedes", "supersede", "superseded", "deprecated", "obsolete", "never",
    "always", "whenever", "avoid", "rather", "over", "must", "don't", "legacy", "outdated",
    "broken", "unsafe", "insecure", "priority", "only", "after", "every", "each", "immediately",
    "retired", "skip", "ignore", "bypass", "when", "should", "next", "preceded", "followed",
    "precede", "whatever", "regardless", "decline", "elsewhere",
];

/// Words after an identifier that make it a tool: "the send_email tool", "database_query runs".
pub const TOOL_NOUNS: &[&str] = &[
    "tool", "tools", "function", "functions", "command", "endpoint", "runs", "executes", "gets",
    "called", "invoked", "returns", "server", "plugin", "integration",
];

/// Words before an identifier that make it a tool: "call send_email", "over read_file".
pub const TOOL_LEADS: &[&str] = &[
    "call", "calling", "invoke", "invoking", "use", "using", "run", "running", "prefer", "over",
    "replaces", "replace", "supersedes", "of", "than", "before", "after", "via", "through", "the",
    "execute", "trigger", "to", "wants", "requests", "needs", "avoid", "skip", "deprecated", "not",
    "for", "about", "regarding", "offers", "provides", "exposes", "name", "names", "naming",
    "remplace", "reemplaza", "ersetzt", "substitui",
];

/// Words before an identifier that make it a parameter or field, not a tool.
pub const PARAMETER_LEADS: &[&str] = &[
    "in", "into", "parameter", "param", "field", "argument", "arg", "property", "key", "inside",
    "under", "within", "named", "called", "variable", "header", "column", "attribute", "option",
    "flag", "value", "set", "fill", "populate",
];

/// Words after an identifier that make it a parameter or field, not a tool.
pub const PARAMETER_NOUNS: &[&str] = &[
    "parameter", "param", "field", "argument", "arg", "property", "key", "header", "column",
    "attribute", "option", "flag", "value", "variable", "method", "methods", "operation", "mode",
    "type", "values", "enum", "action", "setting", "format", "=",
];

/// Sensitive things that need no further qualification: wanting them moved is the attack.
pub const SENSITIVE_STRONG: &[&str] = &[
    "conversation", "conversations", "transcript", "transcripts", "cvc", "cvv", "cvv2", "cvc2",
    "salary", "income", "diagnosis", "kubeconfig", "iban", "ssn", "passport", "id_rsa",
    "id_ed25519", "keychain", "credentials", "passwords", "secrets", "mnemonic", "environ",
    "printenv", "process.env", "os.environ", "env", ".env", "dotenv", "cookies", "2fa", "otp",
    "pin", "ssh", "pii", "wallet", "seed",
];

/// Two-word sensitive things that need no further qualification.
pub const SENSITIVE_STRONG_PAIRS: &[(&str, &str)] = &[
    ("system", "prompt"), ("system", "prompts"), ("system", "instructions"), ("system", "message"),
    ("hidden", "instructions"), ("initial", "instructions"), ("environment", "variables"),
    ("environment", "variable"), ("env", "vars"), ("env", "variables"), ("chat", "history"),
    ("chat", "log"), ("chat", "logs"), ("message", "history"), ("previous", "messages"),
    ("prior", "messages"), ("earlier", "messages"), ("all", "messages"), ("private", "key"),
    ("private", "keys"), ("ssh", "key"), ("ssh", "keys"), ("seed", "phrase"),
    ("recovery", "phrase"), ("session", "cookie"), ("session", "cookies"), ("card", "number"),
    ("card", "numbers"), ("card", "data"), ("card", "details"), ("credit", "card"),
    ("debit", "card"), ("payment", "details"), ("payment", "data"), ("payment", "information"),
    ("bank", "account"), ("account", "number"), ("routing", "number"), ("security", "code"),
    ("social", "security"), ("whole", "environment"), ("full", "environment"),
    ("entire", "environment"), ("every", "record"), ("all", "records"), ("every", "file"),
    ("all", "files"), ("personal", "data"), ("message", "body"), ("email", "body"),
    ("full", "message"), ("whole", "message"), ("entire", "message"), ("full", "context"),
    ("whole", "context"), ("entire", "context"), ("full", "history"), ("whole", "history"),
    ("user", "data"), ("customer", "data"), ("auth", "headers"), ("authorization", "header"),
    ("api", "keys"), ("access", "tokens"), ("refresh", "tokens"), ("session", "tokens"),
    ("auth", "tokens"), ("bearer", "token"), ("bearer", "tokens"), ("oauth", "tokens"),
    ("you", "see"), ("you", "know"), ("your", "instructions"), ("your", "prompt"),
    ("your", "context"), ("your", "memory"), ("everything", "you"), ("local", "files"),
    ("config", "files"), ("configuration", "files"), ("login", "data"), ("user", "name"),
    ("user's", "name"), ("saved", "passwords"), ("stored", "passwords"), ("chat", "log"),
    ("full", "name"), ("street", "address"), ("home", "address"), ("postal", "address"),
    ("phone", "number"), ("phone", "numbers"), ("ip", "address"), ("date", "of"), ("birth", "date"),
    ("income", "figures"), ("tax", "id"), ("login", "details"), ("last", "message"),
    ("service-account", "token"), ("contact", "list"), ("address", "book"),
];

/// Sensitive things that are also what honest tools handle ("pass the API key in `key`"): they
/// count only with an owner or a quantifier ([`SENSITIVE_QUALIFIERS`]) or a foreign destination.
pub const SENSITIVE_GENERIC: &[&str] = &[
    "token", "tokens", "key", "keys", "apikey", "password", "secret", "credential", "cookie",
    "history", "messages", "emails", "files", "contacts", "records", "data", "body", "context",
    "environment", "prompt", "instructions", "memory", "notes", "documents", "content", "contents",
    "email", "inbox", "chat", "session", "configuration", "config", "settings", "message",
    "repository", "repo", "codebase", "source", "workspace", "directory", "folder", "drive",
    "database", "mailbox", "document", "e-mails", "e-mail", "links", "location", "address",
    "addresses", "numbers", "details", "information", "info", "profile", "list", "chats", "dms",
    "threads", "password", "passcode",
];

/// Owners and quantifiers that make a generic sensitive word the user's or everything.
pub const SENSITIVE_QUALIFIERS: &[&str] = &[
    "user", "users", "user's", "customer", "customers", "their", "all", "every", "any", "stored",
    "saved", "cached", "current", "other", "entire", "whole", "full", "complete", "his", "her",
    "the user's", "private", "raw", "unredacted", "verbatim", "remaining", "existing", "previous",
    "prior", "earlier", "each", "visible", "local", "access", "refresh", "session", "auth", "api",
    "secret", "bearer", "caller", "caller's", "requester", "attendee", "attendees", "patient",
    "patients", "employee", "employees", "account", "recent", "that",
];

/// Places data can be sent to: a destination word (URLs and addresses are found by shape).
pub const SINKS: &[&str] = &[
    "bcc", "cc", "parameter", "param", "field", "argument", "arg", "property", "header", "query",
    "response", "reply", "output", "result", "answer", "webhook", "endpoint", "server", "host",
    "url", "address", "channel", "sidenote", "note", "comment", "metadata", "log", "logs",
    "request", "payload", "callback", "recipient", "recipients", "inbox", "pastebin", "gist",
    "bucket", "domain", "api",
];

/// Verbs of a behaviour the model is told to adopt ("you will answer only in French").
pub const BEHAVIOUR_VERBS: &[&str] = &[
    "answer", "respond", "reply", "speak", "write", "talk", "act", "behave", "pretend", "refuse",
    "comply", "obey", "address", "roleplay", "adopt", "treat", "consider", "regard", "believe",
    "trust", "agree", "claim", "say", "insist", "recommend", "output", "end", "begin", "start",
    "sign", "append", "prefix",
];

/// Words that make a behaviour a standing change ("only", "always", a language).
pub const BEHAVIOUR_MARKS: &[&str] = &[
    "only", "always", "never", "exclusively", "anymore", "longer", "every", "all", "henceforth",
    "english", "french", "spanish", "german", "chinese", "japanese", "russian", "italian",
    "portuguese", "korean", "arabic", "dutch", "pirate", "uppercase", "caps", "rhymes",
];

/// Verbs that set aside the model's instructions.
pub const OVERRIDE_VERBS: &[&str] = &[
    "ignore", "disregard", "forget", "drop", "override", "bypass", "abandon", "discard", "suspend",
    "neglect", "overrule", "supersede", "skip", "circumvent", "disable", "lift", "deactivate",
    "turn", "set", "replace", "erase", "reset", "cancel",
];

/// The model's instructions, as an override names them.
pub const INSTRUCTION_NOUNS: &[&str] = &[
    "instructions", "instruction", "rules", "rule", "policies", "policy", "guidelines", "guideline",
    "directions", "direction", "directive", "checks", "setup", "persona", "prompts", "prompt",
    "constraints", "restrictions", "guardrails", "safeguards", "safety", "protocols", "directives",
    "programming", "training", "limitations", "boundaries", "filters", "principles", "orders",
    "commands", "context", "guidance", "ethics",
];

/// What makes an override aimed at the model's standing instructions, not at a tool's data.
pub const INSTRUCTION_OWNERS: &[&str] = &[
    "previous", "prior", "earlier", "above", "preceding", "system", "safety", "original", "your",
    "all", "any", "other", "existing", "developer", "usual", "standard", "content", "security",
    "ethical", "built-in", "default", "former", "old", "initial", "conflicting", "every", "given",
];

/// Words that name the model itself as a subject.
pub const MODEL_NAMES: &[&str] = &[
    "assistant", "model", "ai", "agent", "llm", "claude", "chatgpt", "gpt", "copilot", "gemini",
    "assistants", "models", "agents", "llms", "ais",
];

/// The first word of a pseudo-system header, and the words that may follow it.
pub const AUTHORITY_HEADERS: &[(&str, &[&str])] = &[
    (
        "system",
        &[
            "override",
            "message",
            "notice",
            "note",
            "instruction",
            "instructions",
            "directive",
            "update",
            "alert",
            "command",
            "policy",
            "admin",
            "administrator",
            "prompt:",
            "warning",
            "requirement",
            "mandate",
            "order",
            "priority",
        ],
    ),
    (
        "admin",
        &[
            "override",
            "notice",
            "instruction",
            "instructions",
            "message",
            "directive",
            "note",
            "command",
            "mode",
            "order",
        ],
    ),
    (
        "administrator",
        &[
            "override",
            "notice",
            "instruction",
            "instructions",
            "message",
            "directive",
            "note",
        ],
    ),
    (
        "developer",
        &[
            "mode",
            "override",
            "instruction",
            "instructions",
            "directive",
            "message",
            "notice",
        ],
    ),
    (
        "priority",
        &[
            "override",
            "instruction",
            "instructions",
            "directive",
            "message",
            "notice",
        ],
    ),
    (
        "emergency",
        &[
            "override",
            "directive",
            "instruction",
            "instructions",
            "protocol",
        ],
    ),
    (
        "security",
        &[
            "override",
            "update",
            "directive",
            "notice",
            "instruction",
            "instructions",
            "alert",
            "requirement",
            "policy",
            "protocol",
            "mandate",
            "compliance",
        ],
    ),
    (
        "compliance",
        &[
            "requirement",
            "directive",
            "notice",
            "instruction",
            "mandate",
        ],
    ),
    (
        "mandatory",
        &[
            "update",
            "directive",
            "instruction",
            "instructions",
            "step",
            "procedure",
            "action",
        ],
    ),
    (
        "critical",
        &[
            "instruction",
            "instructions",
            "directive",
            "update",
            "override",
            "system",
            "notice",
        ],
    ),
    (
        "internal",
        &["instruction", "instructions", "directive", "memo"],
    ),
    (
        "hidden",
        &["instruction", "instructions", "directive", "task"],
    ),
    (
        "override",
        &[
            "mode",
            "instruction",
            "instructions",
            "directive",
            "active",
            "enabled",
        ],
    ),
    ("maintenance", &["mode", "override", "directive"]),
    ("debug", &["mode", "override"]),
    ("god", &["mode"]),
    ("jailbreak", &["mode"]),
    ("note", &["to"]),
    ("message", &["to"]),
    ("instructions", &["for"]),
    (
        "assistant",
        &[
            "directive",
            "instruction",
            "instructions",
            "note",
            "override",
        ],
    ),
    (
        "ai",
        &[
            "directive",
            "instruction",
            "instructions",
            "note",
            "override",
            "agent:",
        ],
    ),
    (
        "model",
        &[
            "directive",
            "instruction",
            "instructions",
            "note",
            "override",
        ],
    ),
    (
        "agent",
        &[
            "directive",
            "instruction",
            "instructions",
            "note",
            "override",
        ],
    ),
    (
        "llm",
        &[
            "directive",
            "instruction",
            "instructions",
            "note",
            "override",
        ],
    ),
    (
        "new",
        &[
            "instructions",
            "directive",
            "directives",
            "task",
            "rules",
            "policy",
        ],
    ),
    (
        "updated",
        &["instructions", "directive", "directives", "rules", "policy"],
    ),
];

/// Shell commands that fetch from or post to somewhere.
pub const FETCH_COMMANDS: &[&str] = &[
    "curl", "wget", "iwr", "invoke-webrequest", "invoke-restmethod", "irm", "nc", "ncat", "netcat",
    "scp", "rsync", "ftp", "tftp", "telnet", "socat", "fetch(",
];

/// Substrings of a command that posts data, runs a download, or reads the environment.
pub const COMMAND_PAYLOADS: &[&str] = &[
    " -d ", " -d@", "--data", " -f ", "--form", "--upload-file", " -t ", "@~", "@/", "@.", "@$",
    "$(", "| sh", "|sh", "| bash", "|bash", "| python", "|python", "| iex", "|iex", "-x post",
    "--post", "/dev/tcp/", " -e /bin", " -e sh", "base64", "printenv", "env |", "$home", "~/.",
    "id_rsa", "$env:", "%userprofile%", "eval", "exec(",
];

/// Phrases of other languages that published techniques use, each with its family. Matched as
/// lowercase substrings (Chinese and Japanese are written without spaces).
pub const FOREIGN_PHRASES: &[(&str, &str)] = &[
    // Orders that set aside the model's instructions, or change its behaviour for good.
    ("directive", "ignora las instrucciones"), ("directive", "ignora todas las"),
    ("directive", "ignora tus instrucciones"), ("directive", "olvida las instrucciones"),
    ("directive", "olvida todas"), ("directive", "de ahora en adelante"),
    ("directive", "a partir de ahora"), ("directive", "ignore as instruções"),
    ("directive", "ignore todas as"), ("directive", "esqueça as instruções"),
    ("directive", "de agora em diante"), ("directive", "ignoriere alle"),
    ("directive", "ignoriere die"), ("directive", "ignoriere deine"), ("directive", "vergiss alle"),
    ("directive", "vergiss deine"), ("directive", "vorherigen anweisungen"),
    ("directive", "von nun an"), ("directive", "ab jetzt"),
    ("directive", "ignorez les instructions"), ("directive", "ignore les instructions"),
    ("directive", "ignorez toutes"), ("directive", "ignore toutes"),
    ("directive", "oubliez les instructions"), ("directive", "oublie les instructions"),
    ("directive", "oubliez toutes"), ("directive", "à partir de maintenant"),
    ("directive", "désormais, tu"), ("directive", "désormais, vous"), ("directive", "désormais tu"),
    ("directive", "désormais vous"), ("directive", "игнорируй"), ("directive", "игнорируйте"),
    ("directive", "забудь все"), ("directive", "забудьте все"), ("directive", "забудь предыдущие"),
    ("directive", "предыдущие инструкции"), ("directive", "отныне"),
    ("directive", "с этого момента"), ("directive", "忽略之前"), ("directive", "忽略所有"),
    ("directive", "忽略以上"), ("directive", "忽略先前"), ("directive", "无视之前"), ("directive", "无视所有"),
    ("directive", "从现在开始"), ("directive", "从现在起"), ("directive", "以前の指示を無視"),
    ("directive", "指示を無視"), ("directive", "すべての指示を無視"), ("directive", "これまでの指示"),
    ("directive", "今後は常に"), ("directive", "今後は必ず"), ("directive", "これからは"), ("directive", "これ以降"),
    ("directive", "以前の指示"), ("directive", "ab sofort"), ("directive", "bisherigen anweisungen"),
    ("directive", "a partir de agora"), ("directive", "à partir d'aujourd'hui"),
    // Concealment and consent bypass.
    ("concealment", "no se lo digas"), ("concealment", "no le digas al usuario"),
    ("concealment", "no informes al usuario"), ("concealment", "sin informar al usuario"),
    ("concealment", "sin avisar al usuario"), ("concealment", "sin decirle al usuario"),
    ("concealment", "sin pedir confirmación"), ("concealment", "no menciones"),
    ("concealment", "não diga ao usuário"), ("concealment", "não informe o usuário"),
    ("concealment", "sem informar o usuário"), ("concealment", "sem avisar o usuário"),
    ("concealment", "não mencione"), ("concealment", "sem pedir confirmação"),
    ("concealment", "nicht dem benutzer"), ("concealment", "dem benutzer nicht"),
    ("concealment", "dem nutzer nicht"), ("concealment", "ohne den benutzer"),
    ("concealment", "ohne den nutzer"), ("concealment", "ohne rückfrage"),
    ("concealment", "ohne bestätigung"), ("concealment", "erwähne dies nicht"),
    ("concealment", "erwähne das nicht"), ("concealment", "nicht erwähnen"),
    ("concealment", "ne dis pas à l'utilisateur"), ("concealment", "ne dites pas à l'utilisateur"),
    ("concealment", "n'informez pas"), ("concealment", "sans informer l'utilisateur"),
    ("concealment", "sans prévenir l'utilisateur"), ("concealment", "sans en informer"),
    ("concealment", "sans demander"), ("concealment", "ne mentionnez pas"),
    ("concealment", "ne mentionne pas"), ("concealment", "не сообщай"),
    ("concealment", "не сообщайте"), ("concealment", "не говори пользователю"),
    ("concealment", "не говорите пользователю"), ("concealment", "не упоминай"),
    ("concealment", "не упоминайте"), ("concealment", "без ведома"),
    ("concealment", "без подтверждения"), ("concealment", "不要告诉用户"), ("concealment", "不要告知用户"),
    ("concealment", "不要向用户"), ("concealment", "不要提及"), ("concealment", "无需告知"),
    ("concealment", "不要让用户"), ("concealment", "无需用户确认"), ("concealment", "요청하지 말"),
    ("concealment", "언급하지 마"), ("concealment", "언급하지 말"), ("concealment", "ユーザーに伝えない"),
    ("concealment", "ユーザーに知らせない"), ("concealment", "ユーザーには言わない"), ("concealment", "ユーザーに通知せず"),
    ("concealment", "ユーザーに伝えず"), ("concealment", "ユーザーに知らせず"), ("concealment", "言及しない"),
    ("concealment", "確認せずに"), ("concealment", "ne dis jamais"), ("concealment", "ne dites jamais"),
    ("concealment", "sans demander"), ("concealment", "sans autorisation"),
    ("concealment", "sin pedir permiso"), ("concealment", "no lo menciones"),
    ("concealment", "no lo digas"), ("concealment", "nicht um erlaubnis"),
    ("concealment", "mit keinem wort"), ("concealment", "ohne erlaubnis"),
    ("concealment", "ohne zu fragen"), ("concealment", "sem pedir permissão"),
    ("concealment", "sem permissão"), ("concealment", "не спрашивая"),
    ("concealment", "без разрешения"), ("concealment", "未经用户"), ("concealment", "无需征得"),
    ("concealment", "許可なく"), ("concealment", "確認する必要はありません"), ("concealment", "伝えないで"),
    ("concealment", "知らせないで"), ("concealment", "ne le signale"), ("concealment", "ne le dis"),
    ("concealment", "jamais à l'utilisateur"), ("concealment", "sem pedir aprovação"),
    ("concealment", "diga ao usuário apenas"), ("concealment", "알리지 마"), ("concealment", "알리지 말"),
    ("concealment", "말하지 마"), ("concealment", "non dirlo"), ("concealment", "n'informe jamais"),
    ("concealment", "n'informez jamais"), ("concealment", "nie-le"), ("concealment", "不要询问"),
    ("concealment", "不要在回复中"), ("concealment", "no hace falta preguntar"),
    ("concealment", "sem mencionar"), ("concealment", "sin mencionar"),
    ("concealment", "ohne es zu erwähnen"), ("concealment", "sans le mentionner"),
    ("concealment", "confirmation sont désactivées"), ("concealment", "sin confirmación"),
    ("directive", "이전 지시"), ("directive", "무시하고"), ("directive", "지금부터"),
    ("concealment", "senza chiedere"), ("concealment", "senza avvisare"), ("concealment", "言わないで"),
    // Pseudo-system headers.
    ("authority", "instrucción del sistema"), ("authority", "mensaje del sistema"),
    ("authority", "instrução do sistema"), ("authority", "systemanweisung"),
    ("authority", "systemnachricht"), ("authority", "instruction système"),
    ("authority", "message système"), ("authority", "системное сообщение"),
    ("authority", "системная инструкция"), ("authority", "系统指令"), ("authority", "系统提示："),
    ("authority", "系统消息"), ("authority", "システム指示"), ("authority", "システムメッセージ"),
    ("authority", "系统通知"), ("authority", "<重要>"), ("authority", "【系统"), ("authority", "【重要"),
    ("authority", "システム通知"), ("authority", "<システム"), ("authority", "［システム"), ("authority", "[システム"),
    ("authority", "システム管理者"), ("authority", "系统管理员"), ("authority", "システムプロンプトと同等"),
    ("authority", "<系统"), ("authority", "<sistema"), ("authority", "<система"),
    ("directive", "quel que soit le contenu"), ("directive", "sea cual sea"),
    ("directive", "independientemente de"), ("directive", "unabhängig davon"),
    ("directive", "независимо от"), ("directive", "不管内容"), ("directive", "无论内容"),
    ("directive", "начиная с этого"), ("directive", "ты — «"), ("directive", "без ограничений"),
    ("authority", "hinweis an das modell"), ("authority", "note au modèle"), ("authority", "模型须知"),
    ("authority", "nota para el modelo"), ("authority", "nota al modelo"),
    ("directive", "gelten hier nicht mehr"), ("directive", "视为失效"), ("directive", "只听从"),
    ("directive", "ne jamais évoquer"), ("directive", "doit conseiller"),
    ("concealment", "aja em silêncio"), ("concealment", "diga apenas"), ("concealment", "无需等待审查"),
];

/// Verbs of other languages that move data, and the sensitive words they are paired with
/// (matched as lowercase substrings of one sentence).
pub const FOREIGN_MOVES: &[&str] = &[
    "envía", "envia", "enviar", "reenvía", "incluye", "adjunta", "sube", "manda", "envie", "inclua",
    "anexe", "sende", "senden", "schicke", "schicken", "übermittle", "füge", "lade", "envoie",
    "envoyez", "envoyer", "transmets", "transmettez", "incluez", "inclus", "joins", "отправь",
    "отправьте", "перешли", "перешлите", "передай", "передайте", "включи", "приложи", "загрузи",
    "发送", "上传", "转发", "附上", "包含", "传给", "提交", "送信", "送って", "アップロード", "転送", "添付", "含めて", "добавь",
    "добавляй", "добавьте", "вставь", "запиши", "укажи", "agrega", "añade", "hänge", "ajoute",
    "ajoutez", "joignez", "adicione", "添加", "附加", "加入", "写入", "追加", "付けて", "含め", "放进", "放入", "填入",
    "写进", "加到", "incluir", "adjuntar", "anexar", "mandar", "subir", "übermitteln", "hinzufügen",
    "inclure", "joindre", "transmettre", "envie", "envíe", "envoie-", "invia", "inviare", "includi",
    "allega", "aggiungi", "передай", "传入", "보내", "전송", "ajoute", "отправь", "넣으세요", "넣어", "提交",
    "помести", "inserisci", "metti", "передавай", "передавать", "inserisci",
];

/// Sensitive words of other languages.
pub const FOREIGN_SENSITIVE: &[&str] = &[
    "contraseña", "token", "clave", "historial", "conversación", "variables de entorno", "tarjeta",
    "senha", "chave", "histórico", "conversa", "variáveis de ambiente", "cartão", "passwort",
    "kennwort", "schlüssel", "verlauf", "umgebungsvariablen", "kreditkarte", "zugangsdaten",
    "mot de passe", "jeton", "clé", "historique", "conversation", "variables d'environnement",
    "carte bancaire", "identifiants", "пароль", "токен", "ключ", "историю", "переписку",
    "переменные окружения", "карты", "учетные данные", "密码", "令牌", "密钥", "聊天记录", "对话", "环境变量", "私钥",
    "信用卡", "凭据", "パスワード", "トークン", "鍵", "会話", "環境変数", "秘密鍵", "クレジットカード", "認証情報", "~/.ssh", ".env",
    "prompt système", "prompt de sistema", "prompt di sistema", "messages précédents",
    "mensajes anteriores", "vorherigen nachrichten", "cronologia", "conversazione", "chiave",
    "邮件正文", "正文", "대화", "비밀번호", "토큰", "diff-ausgabe", "nombre completo", "dni", "teléfono",
    "número de tarjeta", "pasaporte", "vollständigen namen", "telefonnummer", "nom complet",
    "téléphone", "nome completo", "cpf", "telefone", "电话", "身份证", "住所", "電話番号", "전화번호", "代码仓库",
    "仓库", "repositorio", "repositório", "окружени", "transcrição", "transcripción", "transkript",
    "transcription", "kundendaten", "kartennummer", "токены", "пароли", "indirizzo",
    "numero di telefono", "историю переписки", "токены доступа",
];
