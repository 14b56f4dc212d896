//! Which lines of a comment are plain text, the only place an owner command counts.
//!
//! Markdown can show a line without it being the writer's own words: inside a fenced or an
//! indented code block, a block quote, or an HTML comment (which GitHub does not even
//! show). An agent's text that ends with `/approve A`, pasted by the owner into a code
//! block or a quote to discuss it, is not the owner's vote. So a command line counts only
//! when it is none of these:
//!
//! - inside a fenced code block: from a line of three or more backticks or tildes (at most
//!   three spaces in) to the closing fence of the same character, at least as long, or to
//!   the end of the comment when it is never closed;
//! - indented code: a line starting with four spaces or a tab;
//! - a block quote: a line whose first non-blank character (at most three spaces in) is
//!   `>`;
//! - touched by an HTML comment: any line from the one holding `<!--` to the one holding
//!   its `-->`, both included, or to the end of the comment when it is never closed.
//!
//! Inline code never matches a command line, which must be the command alone. The reading
//! is deliberately stricter than a Markdown renderer where they differ (an indented line
//! that a renderer would join to the paragraph above is still left out): a line left out
//! wrongly costs the owner one more comment, a line counted wrongly could be an agent's
//! vote.

/// A fence opening or closing: the character and the run's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fence {
    marker: char,
    length: usize,
}

/// The lines of `body` that are plain text, in order.
pub fn plain_lines(body: &str) -> Vec<&str> {
    let mut plain = Vec::new();
    let mut fence: Option<Fence> = None;
    let mut in_comment = false;
    for line in body.lines() {
        if let Some(open) = fence {
            if closes(line, open) {
                fence = None;
            }
            continue;
        }
        if in_comment {
            in_comment = !line.contains("-->");
            if !in_comment {
                // The rest of the line after `-->` may open another comment.
                let after = line.rfind("-->").map_or("", |at| &line[at + 3..]);
                in_comment = opens_unclosed_comment(after);
            }
            continue;
        }
        if let Some(open) = opening_fence(line) {
            fence = Some(open);
            continue;
        }
        if line.contains("<!--") {
            in_comment = opens_unclosed_comment(line);
            continue;
        }
        if is_indented_code(line) || is_block_quote(line) {
            continue;
        }
        plain.push(line);
    }
    plain
}

/// Whether the last `<!--` of `text` has no `-->` after it.
fn opens_unclosed_comment(text: &str) -> bool {
    text.rfind("<!--")
        .is_some_and(|at| !text[at + 4..].contains("-->"))
}

/// The line's leading spaces when there are at most three (and no tab among them).
fn up_to_three_spaces(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches(' ');
    (line.len() - rest.len() <= 3 && !rest.starts_with('\t')).then_some(rest)
}

fn is_indented_code(line: &str) -> bool {
    line.starts_with('\t') || line.starts_with("    ")
}

fn is_block_quote(line: &str) -> bool {
    let rest = line.trim_start_matches([' ', '\t']);
    rest.starts_with('>')
}

/// The fence `line` opens, if it is one: three or more backticks (with no backtick in
/// the info string after them) or three or more tildes.
fn opening_fence(line: &str) -> Option<Fence> {
    let rest = up_to_three_spaces(line)?;
    let marker = rest.chars().next().filter(|c| matches!(c, '`' | '~'))?;
    let length = rest.chars().take_while(|&c| c == marker).count();
    if length < 3 {
        return None;
    }
    let info = &rest[length * marker.len_utf8()..];
    if marker == '`' && info.contains('`') {
        return None;
    }
    Some(Fence { marker, length })
}

/// Whether `line` closes `open`: the same character, at least as long, nothing after but
/// blanks.
fn closes(line: &str, open: Fence) -> bool {
    let Some(rest) = up_to_three_spaces(line) else {
        return false;
    };
    let length = rest.chars().take_while(|&c| c == open.marker).count();
    length >= open.length
        && rest[length * open.marker.len_utf8()..]
            .trim_matches([' ', '\t'])
            .is_empty()
}

#[cfg(test)]
mod tests;
