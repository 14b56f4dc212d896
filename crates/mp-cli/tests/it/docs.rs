//! Every command line in README.md and docs/*.md works as written.
//!
//! Command lines inside fenced blocks are run, block by block, in a work directory that
//! holds the bundled fixtures and examples, a configuration served by a loopback GitHub
//! (`config/`), and the input files the documents assume (`intent.json`, `audit.jsonl`,
//! ...); `export` lines set the environment of the lines after them, except credentials:
//! every line runs with a token for that loopback GitHub. A line passes when it exits 0
//! or 1 (ran; 1 reports findings); a line ending in `&` or running a server (`mp serve`,
//! `mp dev serve-world`) passes when it is still serving after a few seconds.
//! Command lines quoted in prose (`` `mp tick --config DIR` ``) name a command that exists
//! and only options that command has, checked against its `--help`.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::rest::serve_demo;
use crate::workspace_root;

/// One command line found in a document.
#[derive(Debug, Clone)]
struct DocLine {
    /// `docs/cli.md:293`.
    place: String,
    /// The line as a shell would read it (continuations joined, comment dropped).
    text: String,
}

/// A fenced block's lines in order: mp command lines and the simple shell lines around
/// them (`mkdir`, `cp`, `export`) that they depend on.
#[derive(Debug)]
struct Block {
    place: String,
    lines: Vec<DocLine>,
}

fn documents() -> Vec<(String, String)> {
    let root = workspace_root();
    let mut paths = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ is readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|path| {
            let name = path
                .strip_prefix(&root)
                .expect("under the root")
                .display()
                .to_string();
            let text = std::fs::read_to_string(&path).expect("a readable document");
            (name, text)
        })
        .collect()
}

/// The line with a trailing `# comment` removed (a `#` after a space, outside quotes).
fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '#') if previous.is_whitespace() => return line[..i].trim_end(),
            _ => {}
        }
        previous = c;
    }
    line.trim_end()
}

/// The mp command of a shell line, if it runs one: `mp ...`, `VAR=x mp ...`, or
/// `cargo run ... -- ...` (the same binary, built by cargo).
fn mp_command(line: &str) -> Option<String> {
    if let Some(rest) = line
        .strip_prefix("cargo run ")
        .and_then(|l| l.split_once(" -- ").map(|(_, args)| args))
    {
        return Some(format!("mp {rest}"));
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| !w.contains('=') || w.starts_with('-'))?;
    (words[at] == "mp" && words.len() > at + 1).then(|| line.to_owned())
}

fn fenced_blocks(name: &str, text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut current: Option<(Block, bool)> = None;
    let mut pending: Option<(usize, String)> = None;
    for (index, raw) in text.lines().enumerate() {
        let number = index + 1;
        let trimmed = raw.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            match current.take() {
                Some((block, _)) => blocks.push(block),
                None => {
                    let shell = matches!(info.trim(), "" | "sh" | "bash" | "shell" | "console");
                    let block = Block {
                        place: format!("{name}:{number}"),
                        lines: Vec::new(),
                    };
                    current = Some((block, shell));
                }
            }
            continue;
        }
        let Some((block, true)) = current.as_mut() else {
            continue;
        };
        let line = trimmed.strip_prefix("$ ").unwrap_or(trimmed);
        let (start, mut joined) = pending.take().unwrap_or((number, String::new()));
        let line = strip_comment(line);
        if let Some(head) = line.strip_suffix('\\') {
            joined.push_str(head);
            pending = Some((start, joined));
            continue;
        }
        joined.push_str(line);
        let text = joined.trim().to_owned();
        let simple = ["mkdir ", "cp ", "export "]
            .iter()
            .any(|p| text.starts_with(p));
        if let Some(command) = mp_command(&text) {
            block.lines.push(DocLine {
                place: format!("{name}:{start}"),
                text: command,
            });
        } else if simple {
            block.lines.push(DocLine {
                place: format!("{name}:{start}"),
                text,
            });
        }
    }
    blocks.retain(|b| b.lines.iter().any(|l| mp_command(&l.text).is_some()));
    blocks
}

/// Command lines quoted in prose: single-backtick spans that start with `mp `.
fn prose_commands(name: &str, text: &str) -> Vec<DocLine> {
    // Fenced lines become empty, so a span never reaches into a block.
    let mut fence = false;
    let prose: Vec<&str> = text
        .lines()
        .map(|line| {
            if line.trim_start().starts_with("```") {
                fence = !fence;
                ""
            } else if fence {
                ""
            } else {
                line
            }
        })
        .collect();
    let prose = prose.join("\n");
    let mut found = Vec::new();
    let mut rest = prose.as_str();
    let mut offset = 0;
    while let Some(open) = rest.find('`') {
        let after = &rest[open + 1..];
        if let Some(inner) = after.strip_prefix('`') {
            // A double-backtick span: skip to its end.
            let Some(close) = inner.find("``") else {
                break;
            };
            offset += open + close + 4;
            rest = &inner[close + 2..];
            continue;
        }
        let Some(close) = after.find('`') else {
            break;
        };
        let span = &after[..close];
        // `mp 0.1.0 (commit ...)` is output, not a command.
        let command = span
            .strip_prefix("mp ")
            .is_some_and(|rest| !rest.trim_start().starts_with(|c: char| c.is_ascii_digit()));
        if command && !span.contains("\n\n") {
            let line = prose[..offset + open].matches('\n').count() + 1;
            found.push(DocLine {
                place: format!("{name}:{line}"),
                text: span.split_whitespace().collect::<Vec<_>>().join(" "),
            });
        }
        offset += open + close + 2;
        rest = &after[close + 1..];
    }
    found
}

/// What `mp PATH --help` says: the subcommands and every `--option` it names.
#[derive(Debug, Default)]
struct Help {
    subcommands: Vec<String>,
    options: Vec<String>,
}

fn help_of<'c>(path: &[String], cache: &'c mut BTreeMap<Vec<String>, Help>) -> &'c Help {
    cache.entry(path.to_vec()).or_insert_with(|| {
        let output = Command::new(assert_cmd::cargo::cargo_bin!("mp"))
            .args(path)
            .arg("--help")
            .output()
            .expect("mp --help runs");
        assert!(output.status.success(), "mp {path:?} --help failed");
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        let mut help = Help::default();
        let mut in_commands = false;
        for line in text.lines() {
            if line.starts_with("Commands:") {
                in_commands = true;
                continue;
            }
            if in_commands {
                match line.strip_prefix("  ") {
                    Some(entry) if !entry.starts_with(' ') => {
                        if let Some(word) = entry.split_whitespace().next() {
                            help.subcommands.push(word.to_owned());
                        }
                    }
                    Some(_) => {}
                    None => in_commands = false,
                }
            }
            for word in line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
                if word.starts_with("--") && word.len() > 2 {
                    help.options.push(word.to_owned());
                }
            }
        }
        help
    })
}

/// Checks a command line against the help of the command it names; returns what is wrong.
fn check_against_help(text: &str, cache: &mut BTreeMap<Vec<String>, Help>) -> Option<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "mp")?;
    let mut path: Vec<String> = Vec::new();
    for word in &words[at + 1..] {
        let help = help_of(&path, cache);
        if help.subcommands.is_empty() || word.starts_with('-') {
            break;
        }
        if help.subcommands.iter().any(|s| s == word) {
            path.push((*word).to_owned());
            continue;
        }
        // `list | fetch`, `<command>`, `new|activate`: a synopsis, not a command name.
        if !word.contains(['|', '<', '[', '{']) && *word != "..." {
            return Some(format!(
                "`mp {}` has no subcommand {word:?}",
                path.join(" ")
            ));
        }
        break;
    }
    let help = help_of(&path, cache);
    let unknown: Vec<&str> = words
        .iter()
        .map(|w| w.trim_start_matches(['[', '(']))
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| {
            w.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .next()
                .unwrap_or(w)
        })
        .filter(|option| !help.options.iter().any(|o| o == option))
        .collect();
    (!unknown.is_empty()).then(|| {
        format!(
            "`mp {}` has no option {}",
            path.join(" "),
            unknown.join(", ")
        )
    })
}

#[test]
fn every_command_line_in_the_documents_names_real_commands_and_options() {
    let mut cache = BTreeMap::new();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for (name, text) in documents() {
        let fenced = fenced_blocks(&name, &text)
            .into_iter()
            .flat_map(|b| b.lines)
            .filter(|l| mp_command(&l.text).is_some());
        for line in fenced.chain(prose_commands(&name, &text)) {
            checked += 1;
            if let Some(problem) = check_against_help(&line.text, &mut cache) {
                wrong.push(format!("{}: {}: {problem}", line.place, line.text));
            }
        }
    }
    assert!(checked > 100, "only {checked} command lines found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A free port on 127.0.0.1 (bound and released).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("an address").port()
}

/// Writes the files the documents' examples read, in a git repository of two commits.
fn prepare(dir: &Path) {
    let root = workspace_root();
    for name in ["fixtures", "examples"] {
        std::os::unix::fs::symlink(root.join(name), dir.join(name)).expect("a link");
    }
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
        std::fs::write(path, text).expect("an input file");
    };
    write(
        "intent.json",
        r#"{"intent": "Add a retrying HTTP client", "creator": "alice", "priority": "high",
            "requestedCapabilities": ["read-repo"]}"#,
    );
    write("in.json", r#"{"prompt": "add a retrying client"}"#);
    write("out.json", r#"{"patch": "retry.rs"}"#);
    write("change.diff", "diff --git a/retry.rs b/retry.rs\n");
    let message = "Add a retrying client\n\nAgent-Tool: claude-code\nAgent-Model: claude-opus-4\n\
        Agent-Session: s_retry-01\nAgent-Machine: ci-runner-1\n\
        Task-Ref: Issue#12\n";
    write("message.txt", message);
    write(".git/COMMIT_EDITMSG", message);
    std::fs::create_dir_all(dir.join("tmp")).expect("tmp/");
    // A repository with two commits, for the lines that record an execution between them.
    for args in [
        &["init", "-q"][..],
        &["commit", "-q", "--allow-empty", "-m", "base"],
        &["commit", "-q", "--allow-empty", "-m", "head"],
    ] {
        let status = Command::new("git")
            .args(["-c", "user.name=doc", "-c", "user.email=doc@example.com"])
            .args(args)
            .current_dir(dir)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    }
    let audit = Command::new(assert_cmd::cargo::cargo_bin!("mp"))
        .args(["tick", "--world", "fixtures/worlds/demo.yaml", "--dry-run"])
        .args(["--audit-log", "audit.jsonl"])
        .current_dir(dir)
        .output()
        .expect("mp tick runs");
    assert!(audit.status.success(), "the audit log for the examples");
}

/// The line as run here: placeholders of the documents made concrete.
/// A server the documents start on its default port listens on a free one here.
fn concrete(text: &str, port: u16, harness_port: &str) -> String {
    let text = if text.contains("mp serve ") && !text.contains("--listen") {
        format!("{text} --listen 127.0.0.1:{}", free_port())
    } else {
        text.to_owned()
    };
    let words: Vec<String> = text
        .split(' ')
        .map(|w| match w {
            "W" => "fixtures/worlds/demo.yaml".to_owned(),
            _ => w.to_owned(),
        })
        .collect();
    words
        .join(" ")
        .replace("path/to/config", "config")
        .replace("/etc/bash_completion.d/mp", "mp.bash")
        .replace("/tmp/", "tmp/")
        .replace("/var/cache/mp/", "")
        .replace("/var/log/mp/", "")
        .replace("0.0.0.0:8080", &format!("127.0.0.1:{port}"))
        .replace("8080", &port.to_string())
        .replace("127.0.0.1:PORT", &format!("127.0.0.1:{harness_port}"))
}

/// Waits until something listens on `port`, or `limit` passes.
fn wait_for_port(port: u16, limit: Duration) {
    let start = Instant::now();
    while start.elapsed() < limit {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

struct Background(Vec<Child>);

impl Drop for Background {
    fn drop(&mut self) {
        for child in &mut self.0 {
            stop_group(child);
        }
    }
}

/// Stops a child started in a process group of its own, with everything it started
/// (`sh -c` leaves the server it runs as its child).
fn stop_group(child: &mut Child) {
    let id = child.id();
    // Only a group the child leads: never the test's own.
    let stat = std::fs::read_to_string(format!("/proc/{id}/stat")).unwrap_or_default();
    let leads = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(2))
        .is_some_and(|group| group == id.to_string());
    if leads {
        let _ = Command::new("kill")
            .args(["-s", "TERM", "--", &format!("-{id}")])
            .status();
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Variables of the documents' `export` lines that the harness sets itself.
const CREDENTIALS: &[&str] = &[
    "MP_APP_ID",
    "MP_APP_PRIVATE_KEY",
    "MP_APP_PRIVATE_KEY_PATH",
    "MP_GITHUB_TOKEN",
    "MP_RECEIPT_KEY",
    "MP_GITHUB_TOKEN_FILE",
    "MP_RECEIPT_KEY_FILE",
    "MP_RECEIPT_KEY_PREVIOUS_FILE",
    "MP_WEBHOOK_SECRET_FILE",
];

/// Runs `command` with nothing on stdin; kills it after `limit`. Its output goes through
/// files, so a long output never blocks it.
fn run_with_limit(mut command: Command, limit: Duration) -> std::process::Output {
    let files = tempfile::tempdir().expect("a temp dir");
    let (out, err) = (files.path().join("out"), files.path().join("err"));
    let mut child = command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).expect("an output file"))
        .stderr(std::fs::File::create(&err).expect("an output file"))
        .spawn()
        .expect("sh runs");
    let start = Instant::now();
    while child.try_wait().expect("a status").is_none() && start.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(20));
    }
    stop_group(&mut child);
    let status = child.wait().expect("a status");
    std::process::Output {
        status,
        stdout: std::fs::read(out).expect("its output"),
        stderr: std::fs::read(err).expect("its output"),
    }
}

fn run_block(block: &Block) -> Vec<String> {
    let dir = tempfile::tempdir().expect("a temp dir");
    let (_served, url, _config) = serve_demo(dir.path());
    let harness_port = url.rsplit(':').next().expect("a port").to_owned();
    prepare(dir.path());
    let bin = assert_cmd::cargo::cargo_bin!("mp");
    let bin_dir = bin.parent().expect("the binary's directory");
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let port = free_port();
    let mut env: Vec<(String, String)> = vec![
        ("PATH".into(), path),
        ("MP_API_URL".into(), url.clone()),
        ("MP_GITHUB_TOKEN".into(), "any".into()),
        ("MP_WEBHOOK_SECRET".into(), "doc-secret".into()),
        ("MP_RECEIPT_KEY".into(), "doc-receipt-key".into()),
        (
            "GITHUB_STEP_SUMMARY".into(),
            dir.path().join("summary.md").display().to_string(),
        ),
    ];
    let mut background = Background(Vec::new());
    let mut failures = Vec::new();
    for line in &block.lines {
        let text = concrete(&line.text, port, &harness_port);
        if let Some(assignments) = text.strip_prefix("export ") {
            // The documents' credentials point at files of a real deployment; the
            // loopback GitHub takes the harness's token instead.
            for assignment in assignments.split_whitespace() {
                if let Some((key, value)) = assignment.split_once('=')
                    && !CREDENTIALS.contains(&key)
                {
                    env.push((key.to_owned(), value.trim_matches('"').to_owned()));
                }
            }
            continue;
        }
        let shell = |script: &str| {
            let mut command = Command::new("sh");
            command
                .arg("-c")
                .arg(script)
                .process_group(0)
                .current_dir(dir.path())
                .env_remove("MP_APP_ID")
                .envs(env.iter().map(|(k, v)| (k, v)));
            command
        };
        let command = mp_command(&text).unwrap_or_default();
        let serves = text.ends_with('&')
            || [" mp serve ", " mp dev serve-world "]
                .iter()
                .any(|server| format!(" {command}").contains(server));
        if serves {
            // Run directly, not through sh, so that stopping it stops the server.
            let words: Vec<&str> = text.trim_end_matches('&').split_whitespace().collect();
            let at = words.iter().position(|w| *w == "mp").expect("an mp line");
            let mut child = Command::new(bin)
                .args(&words[at + 1..])
                .current_dir(dir.path())
                .env_remove("MP_APP_ID")
                .envs(env.iter().map(|(k, v)| (k, v)))
                .envs(words[..at].iter().filter_map(|w| w.split_once('=')))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("mp runs");
            if text.contains(&format!("--port {port}")) {
                wait_for_port(port, Duration::from_secs(10));
            } else {
                std::thread::sleep(Duration::from_secs(2));
            }
            if let Some(status) = child.try_wait().expect("a status") {
                let output = child.wait_with_output().expect("its output");
                failures.push(format!(
                    "{}: `{}` stopped with {status}: {}",
                    line.place,
                    line.text,
                    String::from_utf8_lossy(&output.stderr).trim()
                ));
            } else {
                background.0.push(child);
            }
            continue;
        }
        let output = run_with_limit(shell(&text), Duration::from_secs(120));
        let code = output.status.code();
        if !matches!(code, Some(0 | 1)) {
            failures.push(format!(
                "{}: `{}` exited {code:?}: {}{}",
                line.place,
                line.text,
                String::from_utf8_lossy(&output.stderr).trim(),
                String::from_utf8_lossy(&output.stdout).trim()
            ));
        }
    }
    failures
}

#[test]
fn every_command_line_in_a_documents_shell_block_runs() {
    let mut ran = 0;
    let mut failures = Vec::new();
    for (name, text) in documents() {
        for block in fenced_blocks(&name, &text) {
            ran += block.lines.len();
            let found = run_block(&block);
            failures.extend(found.into_iter().map(|f| format!("[{}] {f}", block.place)));
        }
    }
    assert!(ran > 40, "only {ran} lines found in shell blocks");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_extraction_finds_commands_in_blocks_and_prose() {
    let text = "Run `mp config validate --config DIR` first.\n\n```sh\n\
        mkdir store\n$ mp tick --world W   # one tick\nmp report --audit-log a \\\n  --out site\n\
        echo done\n```\n\n```yaml\nmp: not a command\n```\n";
    let blocks = fenced_blocks("x.md", text);
    let lines: Vec<(&str, &str)> = blocks[0]
        .lines
        .iter()
        .map(|l| (l.place.as_str(), l.text.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            ("x.md:4", "mkdir store"),
            ("x.md:5", "mp tick --world W"),
            ("x.md:6", "mp report --audit-log a --out site"),
        ]
    );
    assert_eq!(blocks.len(), 1, "the yaml block holds no command");
    let prose = prose_commands("x.md", text);
    assert_eq!(prose.len(), 1);
    assert_eq!(prose[0].text, "mp config validate --config DIR");
    assert_eq!(
        strip_comment("mp explain acme/webapp#4  # why"),
        "mp explain acme/webapp#4"
    );
    let mut cache = BTreeMap::new();
    assert!(check_against_help("mp config validate --config DIR", &mut cache).is_none());
    assert!(
        check_against_help("mp tick --no-such-option", &mut cache)
            .is_some_and(|p| p.contains("--no-such-option"))
    );
    assert!(check_against_help("mp frobnicate", &mut cache).is_some());
}
