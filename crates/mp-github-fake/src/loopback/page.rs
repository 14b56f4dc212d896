//! Pagination as GitHub does it: `per_page` (default 30, at most 100) and `page` query
//! parameters, and a `Link` header with absolute URLs when there is more than one page.

use axum::http::Uri;
use serde_json::Value;

/// The default page size.
const DEFAULT_PER_PAGE: usize = 30;
/// The largest page size GitHub serves.
const MAX_PER_PAGE: usize = 100;

/// One page of a listing and its `Link` header value, if any.
pub(super) struct Page {
    /// The items of the requested page.
    pub(super) items: Vec<Value>,
    /// `<url>; rel="next", ...`, absent when everything fits on one page.
    pub(super) link: Option<String>,
}

/// The query parameter `name` of `uri`, undecoded.
fn param<'u>(uri: &'u Uri, name: &str) -> Option<&'u str> {
    uri.query()?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// The page of `items` that `uri` asks for; links are built on `base` (the server's
/// `http://host:port`).
pub(super) fn paginate(items: Vec<Value>, uri: &Uri, base: &str) -> Page {
    let (range, link) = window(items.len(), uri, base);
    let items = items
        .into_iter()
        .skip(range.start)
        .take(range.len())
        .collect();
    Page { items, link }
}

/// Which of `len` items the page `uri` asks for holds, and its `Link` header value: what a
/// listing needs to render only the items of that page.
pub(super) fn window(
    len: usize,
    uri: &Uri,
    base: &str,
) -> (std::ops::Range<usize>, Option<String>) {
    let per_page = param(uri, "per_page")
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .map_or(DEFAULT_PER_PAGE, |n| n.min(MAX_PER_PAGE));
    let page = param(uri, "page")
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(1);
    let last = len.div_ceil(per_page).max(1);
    let start = (page - 1).saturating_mul(per_page).min(len);
    let range = start..start.saturating_add(per_page).min(len);
    if last == 1 && page == 1 {
        return (range, None);
    }
    let url = |n: usize| page_url(uri, base, n);
    let mut links = Vec::new();
    if page > 1 {
        links.push(format!("<{}>; rel=\"prev\"", url((page - 1).min(last))));
    }
    if page < last {
        links.push(format!("<{}>; rel=\"next\"", url(page + 1)));
        links.push(format!("<{}>; rel=\"last\"", url(last)));
    }
    if page > 1 {
        links.push(format!("<{}>; rel=\"first\"", url(1)));
    }
    (range, Some(links.join(", ")))
}

/// The absolute URL of `uri` with its `page` parameter set to `page`.
fn page_url(uri: &Uri, base: &str, page: usize) -> String {
    let mut pairs: Vec<&str> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty() && !pair.starts_with("page="))
        .collect();
    let page_pair = format!("page={page}");
    pairs.push(&page_pair);
    format!("{base}{}?{}", uri.path(), pairs.join("&"))
}
