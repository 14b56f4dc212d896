//! The `Link` response header: finding the `rel="next"` page.

/// The URL of the `rel="next"` entry of a `Link` header value, if any.
///
/// The value is a comma-separated list of `<url>; param; param` entries; `rel` may hold
/// several space-separated relation types and may be quoted or not.
pub(crate) fn next_url(header: &str) -> Option<&str> {
    let mut rest = header;
    loop {
        let open = rest.find('<')?;
        let close = open + rest[open..].find('>')?;
        let url = &rest[open + 1..close];
        let after = &rest[close + 1..];
        // The parameters run to the next entry, which starts with `<` after a comma.
        let end = after.find('<').unwrap_or(after.len());
        let params = &after[..end];
        if params.split(';').any(is_rel_next) {
            return Some(url.trim());
        }
        rest = &after[end..];
    }
}

fn is_rel_next(param: &str) -> bool {
    let Some((name, value)) = param.split_once('=') else {
        return false;
    };
    if !name.trim().eq_ignore_ascii_case("rel") {
        return false;
    }
    let value = value.trim().trim_end_matches(',').trim();
    let value = value.trim_matches('"');
    value
        .split_ascii_whitespace()
        .any(|rel| rel.eq_ignore_ascii_case("next"))
}
