//! `mp report`: the tick records `mp tick --audit-log` appends, the page built from real
//! ticks, rendered by headless Chromium (DOM dump and screenshot), and the exit codes.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use predicates::prelude::*;
use serde_json::Value;

use crate::{mp, workspace_root};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(60);

/// The colours page.js paints the marks in, with the fewest pixels each must cover in the
/// screenshot (a legend swatch is 144 pixels: bars must cover far more).
const CHART_COLOURS: [(&str, [u8; 3], usize); 5] = [
    ("quadrant A bars and merged bars", [0x2e, 0x7d, 0x32], 5000),
    ("quadrant B bars", [0x15, 0x65, 0xc0], 1000),
    ("quadrant D bars and blocked bars", [0xc6, 0x28, 0x28], 5000),
    ("inbox bars", [0x6a, 0x1b, 0x9a], 1000),
    ("api call points", [0xef, 0x6c, 0x00], 200),
];

fn world(name: &str) -> PathBuf {
    workspace_root().join("fixtures/worlds").join(name)
}

/// Runs `mp tick` over `world` at `now` (the world's own instant when `None`), appending
/// to `log`.
fn tick(world: &Path, now: Option<&str>, log: &Path, extra: &[&str]) {
    let mut command = mp();
    command.args(["tick", "--world"]).arg(world);
    if let Some(now) = now {
        command.args(["--now", now]);
    }
    command.arg("--audit-log").arg(log).args(extra);
    command.assert().success();
}

fn lines(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .expect("audit log")
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// The marks a chart should hold, derived from the audit log itself: classification
/// records per (tick, quadrant), non-zero merged/blocked totals per repository, the last
/// tick's inbox items, and one point per tick record.
struct Expected {
    quadrant_bars: usize,
    repo_bars: usize,
    inbox_bars: usize,
    api_points: usize,
}

fn expected(records: &[Value]) -> Expected {
    let classified: BTreeSet<(String, String)> = records
        .iter()
        .filter(|r| r.get("record").is_none())
        .map(|r| (r["ts"].to_string(), r["quadrant"].to_string()))
        .collect();
    let ticks: Vec<&Value> = records.iter().filter(|r| r["record"] == "tick").collect();
    let mut totals: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for repo in ticks
        .iter()
        .flat_map(|t| t["repos"].as_array().into_iter().flatten())
    {
        let entry = totals.entry(repo["repo"].to_string()).or_default();
        entry.0 += repo["merged"].as_u64().expect("merged");
        entry.1 += repo["blocked"].as_u64().expect("blocked");
    }
    let repo_bars = totals
        .values()
        .map(|(m, b)| usize::from(*m > 0) + usize::from(*b > 0))
        .sum();
    let last = ticks.last().expect("a tick record");
    Expected {
        quadrant_bars: classified.len(),
        repo_bars,
        inbox_bars: last["inbox"].as_array().expect("inbox").len(),
        api_points: ticks.len(),
    }
}

/// Runs Chromium headless on `page` (its `#fragment` when given) with `args`, killing it
/// after [`CHROMIUM_TIMEOUT`]; returns its standard output.
fn chromium(page: &Path, fragment: Option<&str>, profile: &Path, args: &[String]) -> Vec<u8> {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: install Debian's `chromium` package \
         (apt-get install -y --no-install-recommends chromium); `cargo xtask test` installs it"
    );
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-quic",
            "--no-first-run",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,2000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!(
            "file://{}{}",
            page.display(),
            fragment.map(|f| format!("#{f}")).unwrap_or_default()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starting chromium");
    let mut stdout = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for chromium") {
            break status;
        }
        if started.elapsed() > CHROMIUM_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {CHROMIUM_TIMEOUT:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "chromium exited with {status}");
    reader.join().expect("stdout reader")
}

/// The `<svg id="ID" ...>...</svg>` element of the DOM dump.
fn svg<'a>(dom: &'a str, id: &str) -> &'a str {
    let start = dom
        .find(&format!("<svg id=\"{id}\""))
        .unwrap_or_else(|| panic!("no chart {id} in the rendered DOM"));
    let end = dom[start..].find("</svg>").expect("closed svg") + start;
    &dom[start..end]
}

/// Decodes an 8-bit RGB or RGBA, non-interlaced PNG into its width, height and RGB pixels.
fn decode_png(bytes: &[u8]) -> (usize, usize, Vec<[u8; 3]>) {
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG signature");
    let (mut width, mut height, mut channels) = (0, 0, 0);
    let mut data = Vec::new();
    let mut at = 8;
    while at + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at..at + 4].try_into().expect("4 bytes")) as usize;
        let kind = &bytes[at + 4..at + 8];
        let body = &bytes[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(body[0..4].try_into().expect("4 bytes")) as usize;
                height = u32::from_be_bytes(body[4..8].try_into().expect("4 bytes")) as usize;
                assert_eq!((body[8], body[12]), (8, 0), "8-bit, non-interlaced");
                channels = match body[9] {
                    2 => 3,
                    6 => 4,
                    other => panic!("PNG colour type {other} not handled"),
                };
            }
            b"IDAT" => data.extend_from_slice(body),
            _ => {}
        }
        at += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(data.as_slice())
        .read_to_end(&mut raw)
        .expect("zlib data");
    let stride = width * channels;
    assert_eq!(raw.len(), height * (stride + 1), "decoded size");
    let mut previous = vec![0u8; stride];
    let mut pixels = Vec::with_capacity(width * height);
    for row in raw.chunks(stride + 1) {
        let mut line = row[1..].to_vec();
        for i in 0..stride {
            let a = if i >= channels { line[i - channels] } else { 0 };
            let b = previous[i];
            let c = if i >= channels {
                previous[i - channels]
            } else {
                0
            };
            let predictor = match row[0] {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => paeth(a, b, c),
                other => panic!("PNG filter {other}"),
            };
            line[i] = line[i].wrapping_add(predictor);
        }
        pixels.extend(line.chunks(channels).map(|p| [p[0], p[1], p[2]]));
        previous = line;
    }
    (width, height, pixels)
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

fn near(pixel: [u8; 3], colour: [u8; 3]) -> bool {
    pixel.iter().zip(colour).all(|(p, c)| p.abs_diff(c) <= 4)
}

#[test]
fn the_report_of_real_ticks_renders_its_charts_in_headless_chromium() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    tick(&world("drift.yaml"), None, &log, &["--adapter", "rest"]);
    for now in [
        "2026-12-01T12:00:00Z",
        "2026-12-01T18:30:00Z",
        "2026-12-02T12:00:00Z",
    ] {
        tick(&world("demo.yaml"), Some(now), &log, &[]);
    }
    tick(
        &world("demo.yaml"),
        Some("2026-12-03T00:00:00Z"),
        &log,
        &["--dry-run"],
    );
    let records = lines(&log);
    let want = expected(&records);
    assert_eq!(want.api_points, 5, "one tick record per tick");
    let marks = (want.quadrant_bars, want.repo_bars, want.inbox_bars);
    // The dry run plans what the tick would do: the owner's approval of acme/infra#8 is
    // applied and the pull request merged, so it leaves the inbox.
    assert_eq!(
        marks,
        (12, 3, 1),
        "quadrant bars, repository bars, inbox bars"
    );
    // One torn line, as a killed writer could leave: skipped, counted and shown.
    let mut text = std::fs::read_to_string(&log).expect("log");
    text.push_str("{\"ts\":\"2026-12-03T01:00:00Z\",\"record\":\"ti\n");
    std::fs::write(&log, text).expect("log");

    let out = dir.path().join("site");
    let assert = mp()
        .args([
            "report",
            "--format",
            "json",
            "--title",
            "acme <ticks>",
            "--audit-log",
        ])
        .arg(&log)
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stderr(predicate::str::contains("1 malformed line(s) skipped"));
    let doc: Value = serde_json::from_slice(&assert.get_output().stdout).expect("json");
    assert_eq!(doc["ticks"].as_array().map(Vec::len), Some(5));
    assert_eq!(doc["malformed_lines"], 1);
    // The PR routed at the first demo tick is still waiting at the last one: 36 hours.
    assert_eq!(doc["inbox"][0]["pr"], "acme/infra#7");
    assert_eq!(doc["inbox"][0]["age_hours"], 36.0);
    // acme/infra#8, approved by the owner, merged in the dry run as in a real tick.
    assert_eq!(
        doc["inbox"].as_array().map(Vec::len),
        Some(1),
        "{}",
        doc["inbox"]
    );
    let page = out.join("index.html");
    let html = std::fs::read_to_string(&page).expect("index.html");
    assert!(html.contains("<title>acme &lt;ticks&gt;</title>"), "{html}");
    for remote in ["http://", "https://", "<link", " src=", "url(", "@import"] {
        assert!(
            !html.contains(remote),
            "the page must not load anything: {remote}"
        );
    }

    let dom = chromium(
        &page,
        None,
        &dir.path().join("profile-dom"),
        &["--dump-dom".into()],
    );
    let dom = String::from_utf8(dom).expect("utf-8 DOM");
    assert!(
        dom.contains("data-charts=\"drawn\""),
        "the script did not run:\n{dom}"
    );
    for (id, marks, mark) in [
        ("chart-quadrants", want.quadrant_bars, "<rect"),
        ("chart-repos", want.repo_bars, "<rect"),
        ("chart-inbox", want.inbox_bars, "<rect"),
        ("chart-api", want.api_points, "<circle"),
    ] {
        let chart = svg(&dom, id);
        assert_eq!(chart.matches(mark).count(), marks, "{id}:\n{chart}");
        assert!(
            chart.contains(&format!("data-drawn=\"{marks}\"")),
            "{id}:\n{chart}"
        );
    }
    let torn = format!("line {}: not JSON", records.len() + 1);
    assert!(dom.contains(&torn), "the torn line is listed:\n{dom}");

    let shot = dir.path().join("shot.png");
    chromium(
        &page,
        None,
        &dir.path().join("profile-shot"),
        &[format!("--screenshot={}", shot.display())],
    );
    let bytes = std::fs::read(&shot).expect("the screenshot exists");
    let (width, height, pixels) = decode_png(&bytes);
    assert_eq!((width, height), (1280, 2000));
    let background = pixels[0];
    let painted = pixels.iter().filter(|p| **p != background).count();
    assert!(
        painted * 100 / pixels.len() >= 3,
        "a mostly blank page: {painted} of {} pixels painted",
        pixels.len()
    );
    for (name, colour, least) in CHART_COLOURS {
        let count = pixels.iter().filter(|p| near(**p, colour)).count();
        assert!(
            count >= least,
            "{name}: {count} pixels of {colour:?} in the screenshot, fewer than {least}"
        );
    }

    agents_page_agrees_with_mp_agents(&log, &page, &dom, dir.path());
}

/// The colours agents.js paints the Agents page's marks in, with the fewest pixels each
/// must cover in its screenshot.
const AGENT_COLOURS: [(&str, [u8; 3], usize); 5] = [
    ("merged bars", [0x2e, 0x7d, 0x32], 1000),
    ("open bars", [0x64, 0xb5, 0xf6], 1000),
    (
        "approval-to-merge dots and their swatch",
        [0x00, 0x83, 0x8f],
        180,
    ),
    ("c4_base_is_main blocks", [0x39, 0x49, 0xab], 1000),
    ("c1_ready_to_merge blocks", [0x5e, 0x35, 0xb1], 500),
];

/// The attributes of every `<TAG ...>` start tag of `html` that has the attribute `has`.
fn tags(html: &str, tag: &str, has: &str) -> Vec<BTreeMap<String, String>> {
    let mut found = Vec::new();
    for (at, _) in html.match_indices(&format!("<{tag} ")) {
        let end = html[at..].find('>').expect("a closed tag") + at;
        let mut rest = &html[at + tag.len() + 2..end];
        let mut attributes = BTreeMap::new();
        while let Some(eq) = rest.find("=\"") {
            let name = rest[..eq].trim().to_owned();
            let value_end = rest[eq + 2..].find('"').expect("a closed value") + eq + 2;
            attributes.insert(name, rest[eq + 2..value_end].replace("&amp;", "&"));
            rest = &rest[value_end + 1..];
        }
        if attributes.contains_key(has) {
            found.push(attributes);
        }
    }
    found
}

/// A number attribute: `None` when empty (the figure is null).
fn number(attributes: &BTreeMap<String, String>, name: &str) -> Option<f64> {
    let text = attributes.get(name).unwrap_or_else(|| panic!("no {name}"));
    (!text.is_empty()).then(|| text.parse().expect("a number"))
}

/// The Agents page, as Chromium renders it, shows the figures `mp agents --format json`
/// prints over the same log: in its table and in each chart's marks; its screenshot shows
/// the charts and not the overview.
fn agents_page_agrees_with_mp_agents(log: &Path, page: &Path, dom: &str, dir: &Path) {
    let assert = mp()
        .args(["agents", "--format", "json", "--audit-log"])
        .arg(log)
        .assert()
        .success();
    let cli: Value = serde_json::from_slice(&assert.get_output().stdout).expect("json");
    let agents = cli["agents"].as_array().expect("agents");
    // The world has what the page must show: two agents, merges, blocks, waits.
    assert!(agents.len() >= 2, "{cli}");
    assert!(
        agents.iter().all(|a| a["merged"].as_u64() > Some(0)),
        "{cli}"
    );
    assert!(
        agents
            .iter()
            .all(|a| a["blocks"].as_object().is_some_and(|b| !b.is_empty())),
        "{cli}"
    );
    let figure = |a: &Value, name: &str| a[name].as_f64();
    assert!(
        dom.contains("data-agents-charts=\"drawn\""),
        "the agents script did not run:\n{dom}"
    );

    // The table.
    let rows = tags(dom, "tr", "data-agent");
    assert_eq!(rows.len(), agents.len(), "{rows:?}");
    for (row, agent) in rows.iter().zip(agents) {
        assert_eq!(row["data-agent"], agent["agent"].as_str().expect("a name"));
        for (attribute, want) in [
            ("data-prs", figure(agent, "prs")),
            ("data-merged", figure(agent, "merged")),
            ("data-closed", figure(agent, "closed")),
            ("data-open", figure(agent, "open")),
            ("data-merge-rate", figure(agent, "merge_rate")),
            ("data-waits", agent["approval_to_merge"]["count"].as_f64()),
            (
                "data-median-s",
                agent["approval_to_merge"]["median_s"].as_f64(),
            ),
            ("data-p90-s", agent["approval_to_merge"]["p90_s"].as_f64()),
            ("data-ci-runs", figure(agent, "ci_runs")),
            (
                "data-ci-runs-per-merged",
                figure(agent, "ci_runs_per_merged"),
            ),
            ("data-incidents", figure(agent, "incidents")),
            ("data-reverts", figure(agent, "reverts")),
        ] {
            assert_eq!(number(row, attribute), want, "{attribute} of {row:?}");
        }
    }
    let start = dom
        .find("<table id=\"agents-table\"")
        .expect("the agents table");
    let table = &dom[start..dom[start..].find("</table>").expect("closed") + start];
    for (agent, cells) in agents
        .iter()
        .zip(table.split("<tr class=\"agent\"").skip(1))
    {
        let shown: BTreeMap<String, (f64, f64)> = tags(cells, "span", "data-code")
            .iter()
            .map(|b| {
                let value = number(b, "data-value").expect("a value");
                (
                    b["data-code"].clone(),
                    (value, number(b, "data-prs").expect("prs")),
                )
            })
            .collect();
        let want: BTreeMap<String, (f64, f64)> = agent["blocks"]
            .as_object()
            .expect("blocks")
            .iter()
            .map(|(code, ticks)| {
                let prs = agent["blocked_prs"][code].as_f64().expect("prs");
                (code.clone(), (ticks.as_f64().expect("ticks"), prs))
            })
            .collect();
        assert_eq!(shown, want, "blocks of {}", agent["agent"]);
    }

    // The charts: every mark names its agent and figure.
    let find = |name: &str| {
        agents
            .iter()
            .find(|a| a["agent"] == name)
            .unwrap_or_else(|| panic!("a mark for {name}, an agent mp agents does not list"))
    };
    let bars = tags(svg(dom, "chart-agents-multiples"), "rect", "data-figure");
    assert_eq!(bars.len(), 3 * agents.len(), "{bars:?}");
    for bar in &bars {
        let agent = find(&bar["data-agent"]);
        assert_eq!(
            number(bar, "data-value"),
            figure(agent, &bar["data-figure"]),
            "{bar:?}"
        );
    }
    let waits = svg(dom, "chart-agents-wait");
    let dots = tags(waits, "circle", "data-wait-s");
    let merges: u64 = agents
        .iter()
        .map(|a| a["approval_to_merge"]["count"].as_u64().expect("count"))
        .sum();
    assert_eq!(dots.len() as u64, merges, "{dots:?}");
    assert!(
        waits.contains(&format!("data-drawn=\"{merges}\"")),
        "{waits}"
    );
    let marks = tags(waits, "line", "data-figure");
    assert_eq!(
        marks.len(),
        2 * agents
            .iter()
            .filter(|a| a["approval_to_merge"]["count"].as_u64() > Some(0))
            .count()
    );
    for mark in &marks {
        let agent = find(&mark["data-agent"]);
        let want = agent["approval_to_merge"][&mark["data-figure"]].as_f64();
        assert_eq!(number(mark, "data-value"), want, "{mark:?}");
    }
    for agent in agents {
        let name = agent["agent"].as_str().expect("a name");
        let mut at: Vec<f64> = dots
            .iter()
            .filter(|d| d["data-agent"] == name)
            .map(|d| number(d, "data-wait-s").expect("seconds"))
            .collect();
        at.sort_by(f64::total_cmp);
        assert_eq!(
            at.len() as u64,
            agent["approval_to_merge"]["count"].as_u64().expect("count")
        );
        // The median by nearest rank, as mp agents computes it.
        if let Some(median) = at.get(at.len().div_ceil(2).saturating_sub(1)) {
            assert_eq!(
                Some(*median),
                agent["approval_to_merge"]["median_s"].as_f64()
            );
        }
    }
    let segments = tags(svg(dom, "chart-agents-blocks"), "rect", "data-code");
    let mut stacked: BTreeMap<(String, String), f64> = BTreeMap::new();
    for segment in &segments {
        let value = number(segment, "data-value").expect("a value");
        stacked.insert(
            (segment["data-agent"].clone(), segment["data-code"].clone()),
            value,
        );
    }
    let want: BTreeMap<(String, String), f64> = agents
        .iter()
        .flat_map(|a| {
            a["blocks"]
                .as_object()
                .expect("blocks")
                .iter()
                .map(|(code, ticks)| {
                    let name = a["agent"].as_str().expect("a name").to_owned();
                    ((name, code.clone()), ticks.as_f64().expect("ticks"))
                })
        })
        .collect();
    assert_eq!(stacked, want);
    assert_eq!(segments.len(), want.len());

    // The Agents page seen: its charts painted, the overview's hidden.
    let shot = dir.join("agents.png");
    chromium(
        page,
        Some("agents"),
        &dir.join("profile-agents"),
        &[format!("--screenshot={}", shot.display())],
    );
    let (width, height, pixels) = decode_png(&std::fs::read(&shot).expect("the screenshot"));
    assert_eq!((width, height), (1280, 2000));
    for (name, colour, least) in AGENT_COLOURS {
        let count = pixels.iter().filter(|p| near(**p, colour)).count();
        assert!(
            count >= least,
            "{name}: {count} pixels of {colour:?} in the Agents screenshot, fewer than {least}"
        );
    }
    let quadrant_b = pixels
        .iter()
        .filter(|p| near(**p, [0x15, 0x65, 0xc0]))
        .count();
    assert_eq!(
        quadrant_b, 0,
        "the overview's quadrant B bars show on the Agents page"
    );
}

#[test]
fn every_tick_with_an_audit_log_ends_with_one_tick_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    tick(&world("demo.yaml"), None, &log, &[]);
    let records = lines(&log);
    let last = records.last().expect("records");
    assert_eq!(records.iter().filter(|r| r["record"] == "tick").count(), 1);
    assert_eq!(last["record"], "tick");
    assert_eq!(last["ts"], "2026-11-29T12:00:00Z");
    assert_eq!(
        last["quadrants"],
        serde_json::json!({"A": 4, "B": 1, "C": 0, "D": 2})
    );
    assert_eq!(last["metrics"]["merged"], 2);
    let webapp = &last["repos"][1];
    assert_eq!(
        (
            &webapp["repo"],
            &webapp["merged"],
            &webapp["blocked"],
            &webapp["race_rebased"]
        ),
        (
            &Value::from("acme/webapp"),
            &Value::from(1),
            &Value::from(3),
            &Value::from(1)
        )
    );
    assert_eq!(webapp["incidents"], 2);
    assert_eq!(
        last["inbox"],
        serde_json::json!([{"pr": "acme/infra#7", "issue": null, "state": "routed"}])
    );
    // 93 calls of work (the supervisor's activity and compare reads, the activity of
    // bot-state, the head branches' activity read once per repository where two or more
    // pull requests need it (decisions/0070), and twice the timeline of the pending inbox
    // question, read by the poll and by the pull-request path), the tick lease (one read,
    // two writes), each of the three repositories' default branch, and 9 GraphQL label
    // queries: GitHub's record of each approval label on a pull request and of the inbox's
    // `decision:pending-owner` (decisions/0048).
    assert_eq!(last["api_calls"], 108);
    assert_eq!(last["http"], Value::Null);
}

#[test]
fn an_empty_log_renders_a_page_saying_there_is_no_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("empty.jsonl");
    std::fs::write(&log, "").expect("write");
    mp().args(["report", "--audit-log"])
        .arg(&log)
        .arg("--out")
        .arg(dir.path().join("site"))
        .assert()
        .success()
        .stdout(predicate::str::contains("0 tick(s)"));
    let html = std::fs::read_to_string(dir.path().join("site/index.html")).expect("page");
    assert!(html.contains("No data"), "{html}");
}

#[test]
fn an_unreadable_log_exits_2_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    mp().args(["report", "--audit-log"])
        .arg(dir.path().join("missing.jsonl"))
        .arg("--out")
        .arg(dir.path().join("site"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing.jsonl"));
    assert!(!dir.path().join("site").exists());
}
