//! Markdown scanning shared by the sources formats: lines, `---` frontmatter, ATX
//! headings, fenced blocks inside one `## ` section, and the top-level `- ` items of a
//! YAML block list (each with its first line and the id as written).

use std::path::Path;

use super::diagnostics::{FileProblem, codes};

/// The lines of `text` without line endings (`\r\n` included).
pub(crate) fn split_lines(text: &str) -> Vec<&str> {
    text.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect()
}

/// Frontmatter content lines (1-based number, text) and the index of the first body line.
pub(crate) type Frontmatter<'a> = Option<(Vec<(u64, &'a str)>, usize)>;

/// Frontmatter delimited by `---` lines starting at the first line: its content lines
/// (with 1-based numbers) and the index of the first body line. `None` when absent.
pub(crate) fn frontmatter<'a>(
    file: &Path,
    lines: &[&'a str],
) -> Result<Frontmatter<'a>, Vec<FileProblem>> {
    if lines.first().map(|l| l.trim_end()) != Some("---") {
        return Ok(None);
    }
    for (index, line) in lines.iter().enumerate().skip(1) {
        if line.trim_end() == "---" {
            let content = (1..index).map(|i| (i as u64 + 1, lines[i])).collect();
            return Ok(Some((content, index + 1)));
        }
    }
    Err(vec![FileProblem::new(
        file,
        Some(1),
        codes::FRONTMATTER_INVALID,
        "the frontmatter opened on line 1 is never closed with `---`".to_owned(),
    )])
}

/// Index of the first body line after any frontmatter (which is checked to be closed).
pub(super) fn skip_frontmatter(file: &Path, lines: &[&str]) -> Result<usize, Vec<FileProblem>> {
    Ok(frontmatter(file, lines)?.map_or(0, |(_, start)| start))
}

pub(crate) fn join_lines(lines: &[(u64, &str)]) -> String {
    let mut text = String::new();
    for (_, line) in lines {
        text.push_str(line);
        text.push('\n');
    }
    text
}

/// One `- ...` item of a fence: the line it starts on, its text (a one-item YAML list) and
/// its id as written, when a line `id: x` can be seen.
#[derive(Debug)]
pub(super) struct Item {
    pub(super) line: u64,
    pub(super) text: String,
    pub(super) id_hint: Option<String>,
}

/// A fence opener: the fence character, its length and the info string.
fn fence_open(line: &str) -> Option<(char, usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let count = rest.chars().take_while(|c| *c == ch).count();
    (count >= 3).then(|| (ch, count, rest[count..].trim()))
}

fn fence_closes(line: &str, ch: char, count: usize) -> bool {
    let trimmed = line.trim();
    trimmed.chars().take_while(|c| *c == ch).count() >= count && trimmed.chars().all(|c| c == ch)
}

/// The level and title of an ATX heading.
pub(super) fn heading(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_start();
    let level = trimmed.chars().take_while(|c| *c == '#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &trimmed[level..];
    (rest.is_empty() || rest.starts_with(' '))
        .then(|| (level, rest.trim().trim_end_matches('#').trim()))
}

/// The items of every yaml fence inside the `## <section>` section (up to the next heading
/// of level 1 or 2). Fences elsewhere in the file are examples and are not read.
pub(super) fn section_items(
    file: &Path,
    lines: &[&str],
    body_start: usize,
    section: &str,
) -> Result<Vec<Item>, Vec<FileProblem>> {
    let mut in_section = false;
    let mut seen_section = false;
    let mut fences: Vec<Vec<(u64, &str)>> = Vec::new();
    let mut index = body_start;
    let mut problems = Vec::new();
    while index < lines.len() {
        let line = lines[index];
        if let Some((ch, count, info)) = fence_open(line) {
            let is_yaml = ch == '`'
                && matches!(
                    info.split_whitespace()
                        .next()
                        .map(str::to_ascii_lowercase)
                        .as_deref(),
                    Some("yaml" | "yml")
                );
            let open_line = index as u64 + 1;
            let mut content = Vec::new();
            let mut closed = false;
            index += 1;
            while index < lines.len() {
                if fence_closes(lines[index], ch, count) {
                    closed = true;
                    break;
                }
                content.push((index as u64 + 1, lines[index]));
                index += 1;
            }
            if in_section && is_yaml {
                if closed {
                    fences.push(content);
                } else {
                    problems.push(FileProblem::new(
                        file,
                        Some(open_line),
                        codes::FENCE_UNCLOSED,
                        "the yaml fence opened here is never closed".to_owned(),
                    ));
                }
            }
            index += 1;
            continue;
        }
        if let Some((level, title)) = heading(line)
            && level <= 2
        {
            in_section = level == 2 && title.eq_ignore_ascii_case(section);
            seen_section |= in_section;
        }
        index += 1;
    }
    if !seen_section {
        problems.push(FileProblem::new(
            file,
            None,
            codes::SECTION_MISSING,
            format!("no `## {section}` section"),
        ));
    }
    let mut items = Vec::new();
    for fence in &fences {
        match split_items(file, fence) {
            Ok(mut found) => items.append(&mut found),
            Err(mut found) => problems.append(&mut found),
        }
    }
    if problems.is_empty() {
        Ok(items)
    } else {
        Err(problems)
    }
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank_or_comment(line: &str) -> bool {
    let trimmed = line.trim();
    trimmed.is_empty() || trimmed.starts_with('#')
}

/// Splits a fence into its top-level `- ` items.
pub(super) fn split_items(
    file: &Path,
    fence: &[(u64, &str)],
) -> Result<Vec<Item>, Vec<FileProblem>> {
    let Some((first_line, first)) = fence.iter().find(|(_, l)| !is_blank_or_comment(l)) else {
        return Ok(Vec::new());
    };
    let base = indentation(first);
    let is_item = |line: &str| {
        indentation(line) == base && {
            let rest = line.trim_start_matches(' ');
            rest == "-" || rest.starts_with("- ")
        }
    };
    if !is_item(first) {
        return Err(vec![FileProblem::new(
            file,
            Some(*first_line),
            codes::FENCE_NOT_LIST,
            "a sources fence must hold a block list of `- id: ...` entries".to_owned(),
        )]);
    }
    let mut items: Vec<(u64, Vec<&str>)> = Vec::new();
    for (number, line) in fence {
        if is_item(line) {
            items.push((*number, vec![line]));
        } else if let Some((_, current)) = items.last_mut() {
            if !is_blank_or_comment(line) && indentation(line) <= base {
                return Err(vec![FileProblem::new(
                    file,
                    Some(*number),
                    codes::FENCE_NOT_LIST,
                    "a line outside any `- ` list item".to_owned(),
                )]);
            }
            current.push(line);
        }
    }
    Ok(items
        .into_iter()
        .map(|(line, body)| Item {
            line,
            id_hint: id_hint(&body, base),
            text: body.iter().map(|l| format!("{l}\n")).collect(),
        })
        .collect())
}

/// The id as written in an item, read without YAML so that a broken entry can be named.
fn id_hint(body: &[&str], base: usize) -> Option<String> {
    for (index, line) in body.iter().enumerate() {
        let mut rest = line.trim_start_matches(' ');
        if index == 0 {
            rest = rest.strip_prefix('-')?.trim_start();
        } else if indentation(line) > base + 2 {
            continue;
        }
        if let Some(value) = rest.strip_prefix("id:") {
            let value = value.split(" #").next().unwrap_or_default().trim();
            let value = value.trim_matches(|c| c == '"' || c == '\'');
            return (!value.is_empty()).then(|| value.to_owned());
        }
    }
    None
}
