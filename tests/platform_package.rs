//! The Actor package: `Dockerfile`, `.dockerignore`, `.actor/actor.json`, `.actor/output_schema.json`.
//!
//! The Dockerfile is parsed and checked here: it builds with the same command as CI and its
//! runtime stage runs the binary as a non-root user. `.ci/image` builds and runs the real image
//! where a container engine exists.

// Helpers of these tests may panic: that is how a test fails.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The release build command CI runs; the image must build the same way.
const CI_BUILD_COMMAND: &str = "cargo build --release --locked";

/// The binary the image runs.
const BINARY: &str = "mcp-surface-ledger";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: impl AsRef<Path>) -> String {
    let path = root().join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One Dockerfile instruction: keyword in upper case and its arguments.
#[derive(Debug, Clone, PartialEq)]
struct Instruction {
    keyword: String,
    args: String,
}

/// Splits a Dockerfile into instructions, joining `\` continuations and dropping comments.
fn parse_dockerfile(text: &str) -> Vec<Instruction> {
    let mut instructions = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && pending.is_empty()) {
            continue;
        }
        if let Some(head) = trimmed.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(trimmed);
        let full = std::mem::take(&mut pending);
        let (keyword, args) = full.split_once(char::is_whitespace).unwrap_or((&full, ""));
        instructions.push(Instruction {
            keyword: keyword.to_ascii_uppercase(),
            args: args.split_whitespace().collect::<Vec<_>>().join(" "),
        });
    }
    instructions
}

/// The instructions grouped by build stage (each stage starts with `FROM`).
fn stages(instructions: &[Instruction]) -> Vec<Vec<Instruction>> {
    let mut stages: Vec<Vec<Instruction>> = Vec::new();
    for instruction in instructions {
        if instruction.keyword == "FROM" {
            stages.push(Vec::new());
        }
        if let Some(stage) = stages.last_mut() {
            stage.push(instruction.clone());
        }
    }
    stages
}

/// The Debian release in an image tag such as `rust:1.95-slim-trixie` or `debian:trixie-slim`.
fn debian_release(image: &str) -> Option<&'static str> {
    ["bookworm", "trixie", "forky"]
        .into_iter()
        .find(|release| image.contains(release))
}

#[test]
fn the_parser_sees_stages_continuations_and_comments() {
    let text = "# c\nFROM a AS b\nRUN one \\\n    two\n\nFROM c\nUSER 1\n";
    let parsed = parse_dockerfile(text);
    assert_eq!(parsed.len(), 4);
    assert_eq!(parsed[1].args, "one two");
    let grouped = stages(&parsed);
    assert_eq!(grouped.len(), 2);
    assert_eq!(grouped[1][1].keyword, "USER");
}

#[test]
fn dockerfile_builds_like_ci_and_runs_as_a_non_root_user() {
    let instructions = parse_dockerfile(&read("Dockerfile"));
    let stages = stages(&instructions);
    assert!(stages.len() >= 2, "a multi-stage build is expected");
    let builder = &stages[0];
    let runtime = stages.last().unwrap();

    // Builder: Rust image, builds with the CI command.
    let builder_image = builder[0].args.split_whitespace().next().unwrap();
    assert!(builder_image.starts_with("rust:"), "{builder_image}");
    let builds: Vec<&Instruction> = builder
        .iter()
        .filter(|i| i.keyword == "RUN" && i.args.contains("cargo build"))
        .collect();
    assert_eq!(builds.len(), 1, "one release build in the builder stage");
    assert_eq!(builds[0].args, CI_BUILD_COMMAND);

    // The builder pins its Debian release. The runtime is either `scratch` holding the
    // libraries ldd names, copied from the builder (so the glibc is the builder's by
    // construction), or a slim image of the same release.
    let runtime_image = runtime[0].args.split_whitespace().next().unwrap();
    let release = debian_release(builder_image);
    assert!(
        release.is_some(),
        "the builder must name its Debian release: {builder_image}"
    );
    if runtime_image == "scratch" {
        let collects_libraries = builder.iter().any(|i| {
            i.keyword == "RUN" && i.args.contains(&format!("ldd target/release/{BINARY}"))
        });
        assert!(
            collects_libraries,
            "a scratch runtime needs the builder's libraries"
        );
        let copies_libraries = runtime
            .iter()
            .any(|i| i.keyword == "COPY" && i.args.starts_with("--from=builder /runtime/"));
        assert!(
            copies_libraries,
            "the scratch runtime copies the collected libraries"
        );
    } else {
        assert!(runtime_image.contains("slim"), "{runtime_image}");
        assert_eq!(
            release,
            debian_release(runtime_image),
            "builder and runtime releases differ"
        );
    }

    // Runtime: last USER is not root, and the command is the binary.
    let user = runtime
        .iter()
        .rev()
        .find(|i| i.keyword == "USER")
        .map(|i| i.args.split(':').next().unwrap_or("").to_string())
        .expect("the runtime stage sets USER");
    assert!(
        !matches!(user.as_str(), "" | "root" | "0"),
        "runtime user {user:?}"
    );
    let copies_binary = runtime.iter().any(|i| {
        i.keyword == "COPY"
            && i.args.starts_with("--from=")
            && i.args.contains(&format!("target/release/{BINARY}"))
    });
    assert!(copies_binary, "the runtime stage copies the release binary");
    let cmd = runtime
        .iter()
        .rev()
        .find(|i| i.keyword == "CMD")
        .expect("the runtime stage has a CMD");
    let argv: Vec<String> = serde_json::from_str(&cmd.args).expect("CMD in exec form");
    assert!(
        argv[0].ends_with(&format!("/{BINARY}")) || argv[0] == BINARY,
        "{argv:?}"
    );
}

#[test]
fn ci_uses_the_same_build_command() {
    let cargo_toml = read("Cargo.toml");
    assert!(cargo_toml.contains(&format!("name = \"{BINARY}\"")));
    let ci = root().join(".ci/run");
    match std::fs::read_to_string(&ci) {
        Ok(script) => assert!(
            script.contains(CI_BUILD_COMMAND),
            ".ci/run does not run `{CI_BUILD_COMMAND}`"
        ),
        Err(_) => eprintln!("SKIP: .ci/run not present, only the Dockerfile side is checked"),
    }
}

#[test]
fn dockerignore_keeps_local_state_out_and_sources_in() {
    let ignored: Vec<String> = read(".dockerignore")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    for must in ["target", ".git", "storage"] {
        assert!(
            ignored.iter().any(|l| l == must),
            "{must} should be ignored"
        );
    }
    for keep in ["src", "Cargo.toml", "Cargo.lock", "tests", "README.md"] {
        assert!(
            !ignored.iter().any(|l| l == keep),
            "{keep} must reach the build"
        );
    }
}

fn json_file(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn actor_json_is_complete_and_its_paths_resolve() {
    let actor_dir = root().join(".actor");
    let actor = json_file(&actor_dir.join("actor.json"));
    assert_eq!(actor["actorSpecification"], 1);
    assert_eq!(actor["name"], BINARY);
    assert!(actor["title"].as_str().is_some_and(|t| !t.is_empty()));
    let version = actor["version"].as_str().unwrap();
    let parts: Vec<&str> = version.split('.').collect();
    assert!(
        (2..=3).contains(&parts.len()) && parts.iter().all(|p| p.parse::<u32>().is_ok()),
        "version {version}"
    );
    assert_eq!(actor["input"], "../input_schema.json");
    assert_eq!(actor["storages"]["dataset"], "../dataset_schema.json");

    // Files owned by this package must exist; the schemas and README are checked when present.
    for key in ["dockerfile", "output", "webServerSchema"] {
        let path = actor_dir.join(actor[key].as_str().unwrap());
        assert!(path.is_file(), "{key}: {} missing", path.display());
    }
    let elsewhere = [
        actor["input"].as_str().unwrap(),
        actor["storages"]["dataset"].as_str().unwrap(),
    ];
    for relative in elsewhere {
        let path = actor_dir.join(relative);
        if path.is_file() {
            json_file(&path);
        } else {
            eprintln!("SKIP: {relative} not present yet");
        }
    }
    assert!(actor["readme"].as_str().is_some());
}

#[test]
fn output_schema_links_the_dataset_and_the_output_record() {
    let schema = json_file(&root().join(".actor/output_schema.json"));
    assert_eq!(schema["actorOutputSchemaVersion"], 1);
    assert!(schema["title"].as_str().is_some());
    let properties = schema["properties"].as_object().unwrap();
    let templates: Vec<&str> = properties
        .values()
        .map(|p| {
            assert_eq!(p["type"], "string");
            assert!(p["title"].as_str().is_some());
            p["template"].as_str().unwrap()
        })
        .collect();
    assert!(templates.contains(&"{{links.apiDefaultDatasetUrl}}/items"));
    assert!(templates.contains(&"{{links.apiDefaultKeyValueStoreUrl}}/records/OUTPUT"));
}

/// Copies a file or a folder (recursively) from the project into `dest`, keeping its path.
fn copy_into(dest: &Path, relative: &str) {
    let from = root().join(relative);
    let to = dest.join(relative);
    if from.is_dir() {
        std::fs::create_dir_all(&to).unwrap();
        for entry in std::fs::read_dir(&from).unwrap() {
            let name = entry.unwrap().file_name();
            copy_into(dest, &format!("{relative}/{}", name.to_string_lossy()));
        }
    } else {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap();
    }
}

/// The dependency layer works: with only the files the builder copies before `cargo fetch`,
/// cargo can read the manifest (a declared bench or binary whose file is missing would fail the
/// image build at that step), and `Cargo.lock` is among them (the fetch is `--locked`).
///
/// The check must not lean on this machine's cargo cache: it runs cargo with an empty
/// `CARGO_HOME` on a copy of the manifest without its dependency tables, so the only thing cargo
/// can stumble on is a target whose file the layer lacks. A control run on the same layer minus
/// the declared targets' folders shows the check can fail.
#[test]
fn the_dependency_layer_has_every_file_cargo_needs() {
    let instructions = parse_dockerfile(&read("Dockerfile"));
    let builder = &stages(&instructions)[0];
    let fetch_at = builder
        .iter()
        .position(|i| i.keyword == "RUN" && i.args.starts_with("cargo fetch"))
        .expect("the builder fetches dependencies in their own layer");
    let sources: Vec<&str> = builder[..fetch_at]
        .iter()
        .filter(|i| i.keyword == "COPY")
        .flat_map(|copy| {
            let mut parts: Vec<&str> = copy.args.split_whitespace().collect();
            parts.pop(); // the destination, relative to WORKDIR
            parts
        })
        .collect();
    assert!(
        sources.contains(&"Cargo.lock"),
        "the fetch layer must copy Cargo.lock: {sources:?}"
    );

    let layer = tempfile::tempdir().unwrap();
    for source in &sources {
        copy_into(layer.path(), source);
    }
    if let Err(stderr) = read_manifest_targets(layer.path()) {
        panic!("cargo cannot read the manifest with the layer's files alone:\n{stderr}");
    }

    let control = tempfile::tempdir().unwrap();
    for source in sources
        .iter()
        .filter(|s| ["Cargo.toml", "Cargo.lock"].contains(s))
    {
        copy_into(control.path(), source);
    }
    let stderr = read_manifest_targets(control.path())
        .expect_err("without the target folders the same check must fail");
    assert!(stderr.contains("can't find"), "{stderr}");
}

/// Runs `cargo fetch --offline` in `dir` on its manifest stripped of dependency tables, with an
/// empty `CARGO_HOME`: it succeeds exactly when every declared target's file is present.
fn read_manifest_targets(dir: &Path) -> Result<(), String> {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), without_dependency_tables(&manifest)).unwrap();
    let _ = std::fs::remove_file(dir.join("Cargo.lock"));
    let home = tempfile::tempdir().unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = std::process::Command::new(cargo)
        .args(["fetch", "--offline"])
        .current_dir(dir)
        .env("CARGO_HOME", home.path())
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .expect("run cargo fetch");
    if output.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

/// The manifest without `[dependencies]`, `[dev-dependencies]`, `[build-dependencies]` and
/// `[target.…]` tables: what is left declares the package and its targets only.
fn without_dependency_tables(manifest: &str) -> String {
    let mut skipping = false;
    let mut kept = String::new();
    for line in manifest.lines() {
        let header = line.trim();
        if header.starts_with('[') {
            let name = header.trim_matches(|c| c == '[' || c == ']');
            skipping = name.ends_with("dependencies") || name.starts_with("target.");
        }
        if !skipping {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

/// The binary runs on jemalloc with the settings of `.cargo/config.toml` built in (two arenas,
/// freed pages given back at once), on a plain `cargo build` with no environment set: the
/// figures of docs/performance.md ("The allocator") depend on them. jemalloc prints the
/// options it runs with when asked through its environment variable.
#[cfg(all(target_os = "linux", not(target_env = "musl")))]
#[test]
fn the_binary_runs_on_jemalloc_with_the_configured_settings() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-surface-ledger"))
        .arg("--version")
        .env("_RJEM_MALLOC_CONF", "stats_print:true")
        .output()
        .expect("run the binary");
    assert!(output.status.success(), "{output:?}");
    let stats = String::from_utf8_lossy(&output.stderr);
    assert!(
        stats.contains("jemalloc statistics"),
        "jemalloc printed no statistics: is it the allocator?\n{stats}"
    );
    let config = read(".cargo/config.toml");
    assert!(
        config.contains(
            "JEMALLOC_SYS_WITH_MALLOC_CONF = \"narenas:2,dirty_decay_ms:0,muzzy_decay_ms:0\""
        ),
        "the settings this test checks are not the configured ones"
    );
    for option in [
        "opt.narenas: 2",
        "opt.dirty_decay_ms: 0",
        "opt.muzzy_decay_ms: 0",
    ] {
        assert!(
            stats.contains(option),
            "{option} is not in effect:\n{stats}"
        );
    }
}
