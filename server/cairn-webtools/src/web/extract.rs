//! Reading pages and documents: HTML to Markdown, paging, links, metadata, robots.txt,
//! sitemaps and feeds. Pure functions over text already fetched through the guard.

use std::collections::HashSet;

use url::Url;

/// The most URLs a sitemap read returns.
pub(crate) const MAX_SITEMAP_URLS: usize = 500;
/// The most items a feed read returns.
pub(crate) const MAX_FEED_ITEMS: usize = 50;

/// Converts HTML to Markdown (scripts, styles and the like dropped).
pub fn html_to_markdown(html: &str) -> String {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(vec![
            "script", "style", "noscript", "template", "iframe", "svg", "head",
        ])
        .build();
    converter.convert(html).unwrap_or_else(|_| html.to_owned())
}

/// The characters `start..start+max` of `content`, and where the next part starts if any is left.
pub fn page(content: &str, start: usize, max: usize) -> (&str, Option<usize>) {
    let mut indices = content.char_indices().map(|(i, _)| i).skip(start);
    let Some(from) = indices.next() else {
        return ("", None);
    };
    let mut indices = content[from..]
        .char_indices()
        .map(|(i, _)| from + i)
        .skip(max);
    match indices.next() {
        Some(to) => (&content[from..to], Some(start + max)),
        None => (&content[from..], None),
    }
}

pub(super) fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The page's links as absolute http(s) URLs (fragment dropped), with their text, first
/// occurrence kept.
pub fn extract_links(html: &str, base: &Url, same_host_only: bool) -> Vec<(String, String)> {
    let doc = scraper::Html::parse_document(html);
    let base = base_url(&doc, base);
    let Ok(sel) = scraper::Selector::parse("a[href], area[href]") else {
        return Vec::new();
    };
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for el in doc.select(&sel) {
        let Some(href) = el.value().attr("href") else {
            continue;
        };
        let Ok(mut url) = base.join(href.trim()) else {
            continue;
        };
        if !matches!(url.scheme(), "http" | "https") {
            continue;
        }
        if same_host_only && url.host_str() != base.host_str() {
            continue;
        }
        url.set_fragment(None);
        let key = url.to_string();
        if seen.insert(key.clone()) {
            let mut label = collapse(&el.text().collect::<String>());
            if label.is_empty() {
                label = el.value().attr("title").map(collapse).unwrap_or_default();
            }
            out.push((key, label));
        }
    }
    out
}

pub(super) fn base_url(doc: &scraper::Html, fallback: &Url) -> Url {
    scraper::Selector::parse("base[href]")
        .ok()
        .and_then(|s| doc.select(&s).next())
        .and_then(|b| b.value().attr("href"))
        .and_then(|h| fallback.join(h).ok())
        .unwrap_or_else(|| fallback.clone())
}

/// Title, description, canonical, OpenGraph and Twitter tags, and language, as (name, value).
pub fn extract_metadata(html: &str, page: &Url) -> Vec<(String, String)> {
    let doc = scraper::Html::parse_document(html);
    let mut out = Vec::new();
    let select = |css: &str| scraper::Selector::parse(css).ok();
    if let Some(s) = select("title")
        && let Some(t) = doc.select(&s).next()
    {
        out.push(("title".into(), collapse(&t.text().collect::<String>())));
    }
    if let Some(s) = select("html[lang]")
        && let Some(l) = doc.select(&s).next().and_then(|e| e.value().attr("lang"))
    {
        out.push(("lang".into(), l.trim().to_owned()));
    }
    if let Some(s) = select("link[rel][href]") {
        for l in doc.select(&s) {
            let rel = l.value().attr("rel").unwrap_or("").to_ascii_lowercase();
            if rel.split_whitespace().any(|r| r == "canonical")
                && let Some(h) = l.value().attr("href")
            {
                let abs = base_url(&doc, page)
                    .join(h.trim())
                    .map_or_else(|_| h.to_owned(), |u| u.to_string());
                out.push(("canonical".into(), abs));
            }
        }
    }
    if let Some(s) = select("meta[content]") {
        for m in doc.select(&s) {
            let key = m
                .value()
                .attr("property")
                .or_else(|| m.value().attr("name"))
                .unwrap_or("")
                .to_ascii_lowercase();
            let content = collapse(m.value().attr("content").unwrap_or(""));
            if key == "description" || key.starts_with("og:") || key.starts_with("twitter:") {
                out.push((key, content));
            }
        }
    }
    out
}

/// Whether `path` may be crawled by user-agent `*` under `robots` (the `*` group; the longest
/// matching Allow or Disallow wins, Allow on a tie; `*` and a final `$` are understood).
pub fn robots_allowed(robots: &str, path: &str) -> bool {
    let mut rules: Vec<(bool, String)> = Vec::new();
    let mut in_star = false;
    let mut agents_open = false;
    for line in robots.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim().to_ascii_lowercase();
        let value = value.trim();
        match key.as_str() {
            "user-agent" => {
                if !agents_open {
                    in_star = false;
                    agents_open = true;
                }
                if value == "*" {
                    in_star = true;
                }
            }
            "allow" | "disallow" => {
                agents_open = false;
                if in_star && !value.is_empty() {
                    rules.push((key == "allow", value.to_owned()));
                }
            }
            _ => {}
        }
    }
    let mut best: Option<(usize, bool)> = None;
    for (allow, pattern) in &rules {
        if robots_match(pattern, path) {
            let len = pattern.len();
            best = match best {
                Some((l, a)) if l > len || (l == len && a) => Some((l, a)),
                _ => Some((len, *allow)),
            };
        }
    }
    best.is_none_or(|(_, allow)| allow)
}

fn robots_match(pattern: &str, path: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    fn go(p: &[u8], s: &[u8], anchored: bool) -> bool {
        match p.split_first() {
            None => !anchored || s.is_empty(),
            Some((b'*', rest)) => (0..=s.len()).any(|i| go(rest, &s[i..], anchored)),
            Some((c, rest)) => s.first() == Some(c) && go(rest, &s[1..], anchored),
        }
    }
    go(pattern.as_bytes(), path.as_bytes(), anchored)
}

fn xml_error(e: roxmltree::Error) -> String {
    format!("not well-formed XML: {e}")
}

/// A sitemap's kind (`urlset` or `sitemap index`), its `loc`s (at most 500), and whether more
/// were left out.
pub fn parse_sitemap(xml: &str) -> Result<(&'static str, Vec<String>, bool), String> {
    let doc = roxmltree::Document::parse(xml).map_err(xml_error)?;
    let root = doc.root_element();
    let (kind, entry) = match root.tag_name().name() {
        "urlset" => ("urlset", "url"),
        "sitemapindex" => ("sitemap index (child sitemaps)", "sitemap"),
        other => return Err(format!("not a sitemap: the root element is <{other}>")),
    };
    let locs: Vec<String> = root
        .children()
        .filter(|n| n.tag_name().name() == entry)
        .filter_map(|n| n.children().find(|c| c.tag_name().name() == "loc"))
        .filter_map(|l| l.text().map(|t| t.trim().to_owned()))
        .filter(|t| !t.is_empty())
        .collect();
    let more = locs.len() > MAX_SITEMAP_URLS;
    Ok((
        kind,
        locs.into_iter().take(MAX_SITEMAP_URLS).collect(),
        more,
    ))
}

/// One feed item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedItem {
    pub title: String,
    pub link: String,
    pub date: String,
}

/// An RSS (0.9x, 1.0, 2.0) or Atom feed's title and items (at most 50), and whether more were
/// left out.
pub fn parse_feed(xml: &str) -> Result<(String, Vec<FeedItem>, bool), String> {
    let doc = roxmltree::Document::parse(xml).map_err(xml_error)?;
    let root = doc.root_element();
    let atom = match root.tag_name().name() {
        "feed" => true,
        "rss" | "RDF" => false,
        other => {
            return Err(format!(
                "not an RSS or Atom feed: the root element is <{other}>"
            ));
        }
    };
    let child_text = |n: roxmltree::Node, name: &str| {
        n.children()
            .find(|c| c.tag_name().name() == name)
            .map(|c| {
                collapse(
                    &c.descendants()
                        .filter(|d| d.is_text())
                        .filter_map(|d| d.text())
                        .collect::<String>(),
                )
            })
            .unwrap_or_default()
    };
    let title_holder = if atom {
        Some(root)
    } else {
        root.descendants()
            .find(|n| n.tag_name().name() == "channel")
    };
    let title = title_holder
        .map(|n| child_text(n, "title"))
        .unwrap_or_default();
    let entry = if atom { "entry" } else { "item" };
    let mut items = Vec::new();
    for n in root.descendants().filter(|n| n.tag_name().name() == entry) {
        let link = if atom {
            n.children()
                .filter(|c| c.tag_name().name() == "link")
                .find(|c| c.attribute("rel").is_none_or(|r| r == "alternate"))
                .and_then(|c| c.attribute("href"))
                .unwrap_or("")
                .to_owned()
        } else {
            child_text(n, "link")
        };
        let date = ["pubDate", "updated", "published", "date"]
            .iter()
            .map(|d| child_text(n, d))
            .find(|d| !d.is_empty())
            .unwrap_or_default();
        items.push(FeedItem {
            title: child_text(n, "title"),
            link,
            date,
        });
    }
    let more = items.len() > MAX_FEED_ITEMS;
    items.truncate(MAX_FEED_ITEMS);
    Ok((title, items, more))
}

#[cfg(test)]
mod tests {
    use super::*;

    trait Must<T> {
        fn must(self) -> T;
    }

    impl<T, E: std::fmt::Display> Must<T> for Result<T, E> {
        fn must(self) -> T {
            match self {
                Ok(v) => v,
                Err(e) => panic!("{e}"),
            }
        }
    }

    #[test]
    fn html_becomes_markdown_without_scripts() {
        let md = html_to_markdown(
            "<html><head><title>T</title><script>evil()</script></head><body><h1>Hello</h1><p>A <a href=\"/x\">link</a>.</p></body></html>",
        );
        assert!(md.contains("# Hello"), "{md}");
        assert!(md.contains("[link](/x)"), "{md}");
        assert!(!md.contains("evil"), "{md}");
    }

    #[test]
    fn paging_counts_characters_and_names_the_next_start() {
        let s = "héllo wörld";
        assert_eq!(page(s, 0, 5), ("héllo", Some(5)));
        assert_eq!(page(s, 5, 100), (" wörld", None));
        assert_eq!(page(s, 6, 5), ("wörld", None));
        assert_eq!(page(s, 50, 5), ("", None));
    }

    #[test]
    fn links_are_resolved_deduplicated_and_filtered() {
        let base = Url::parse("https://example.com/dir/page.html").must();
        let html = r#"<a href="other.html">Other
            page</a><a href="/root#frag">Root</a><a href="/root">again</a>
            <a href="https://elsewhere.test/x">Far</a><a href="mailto:a@b.c">mail</a>
            <a href="javascript:void(0)">js</a>"#;
        let links = extract_links(html, &base, false);
        assert_eq!(
            links,
            vec![
                (
                    "https://example.com/dir/other.html".to_owned(),
                    "Other page".to_owned()
                ),
                ("https://example.com/root".to_owned(), "Root".to_owned()),
                ("https://elsewhere.test/x".to_owned(), "Far".to_owned()),
            ]
        );
        assert_eq!(extract_links(html, &base, true).len(), 2);
        let with_base = r#"<base href="https://cdn.test/sub/"><a href="f">F</a>"#;
        assert_eq!(
            extract_links(with_base, &base, false)[0].0,
            "https://cdn.test/sub/f"
        );
    }

    #[test]
    fn metadata_is_collected() {
        let base = Url::parse("https://example.com/a/").must();
        let html = r#"<html lang="en"><head><title> My  page </title>
            <meta name="description" content="About it">
            <link rel="canonical" href="/canon">
            <meta property="og:title" content="OG title">
            <meta name="twitter:card" content="summary"></head></html>"#;
        let m = extract_metadata(html, &base);
        let get = |k: &str| m.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str());
        assert_eq!(get("title"), Some("My page"));
        assert_eq!(get("lang"), Some("en"));
        assert_eq!(get("description"), Some("About it"));
        assert_eq!(get("canonical"), Some("https://example.com/canon"));
        assert_eq!(get("og:title"), Some("OG title"));
        assert_eq!(get("twitter:card"), Some("summary"));
    }

    #[test]
    fn robots_longest_match_wins() {
        let robots = "User-agent: googlebot\nDisallow: /\n\nUser-agent: other\nUser-agent: *\nDisallow: /private\nAllow: /private/open\nDisallow: /*.pdf$\nDisallow:\n";
        assert!(robots_allowed(robots, "/"));
        assert!(robots_allowed(robots, "/public/x"));
        assert!(!robots_allowed(robots, "/private/x"));
        assert!(robots_allowed(robots, "/private/open/y"));
        assert!(!robots_allowed(robots, "/docs/a.pdf"));
        assert!(robots_allowed(robots, "/docs/a.pdf?x"));
        assert!(robots_allowed("", "/anything"));
        assert!(!robots_allowed("User-agent: *\nDisallow: /\n", "/a"));
        assert!(robots_allowed("User-agent: bot\nDisallow: /\n", "/a"));
    }

    #[test]
    fn sitemaps_and_indexes_parse() {
        let set = r#"<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
            <url><loc> https://example.com/a </loc></url><url><loc>https://example.com/b</loc></url></urlset>"#;
        let (kind, urls, more) = parse_sitemap(set).must();
        assert_eq!(kind, "urlset");
        assert_eq!(urls, vec!["https://example.com/a", "https://example.com/b"]);
        assert!(!more);
        let index = r#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://example.com/s1.xml</loc></sitemap></sitemapindex>"#;
        let (kind, urls, _) = parse_sitemap(index).must();
        assert!(kind.starts_with("sitemap index"));
        assert_eq!(urls, vec!["https://example.com/s1.xml"]);
        let many: String = (0..600)
            .map(|i| format!("<url><loc>https://e.test/{i}</loc></url>"))
            .collect();
        let (_, urls, more) = parse_sitemap(&format!("<urlset>{many}</urlset>")).must();
        assert_eq!(urls.len(), 500);
        assert!(more);
        assert!(parse_sitemap("<html/>").is_err());
        assert!(parse_sitemap("<urlset>").is_err());
    }

    #[test]
    fn rss_and_atom_feeds_parse() {
        let rss = r#"<rss version="2.0"><channel><title>News</title>
            <item><title>One</title><link>https://e.test/1</link><pubDate>Mon, 01 Jan 2024 00:00:00 GMT</pubDate></item>
            <item><title>Two</title><link>https://e.test/2</link></item></channel></rss>"#;
        let (title, items, more) = parse_feed(rss).must();
        assert_eq!(title, "News");
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].link, "https://e.test/1");
        assert_eq!(items[0].date, "Mon, 01 Jan 2024 00:00:00 GMT");
        assert!(!more);
        let atom = r#"<feed xmlns="http://www.w3.org/2005/Atom"><title>Blog</title>
            <entry><title>Post</title><link rel="self" href="https://e.test/self"/><link href="https://e.test/post"/><updated>2024-01-02T00:00:00Z</updated></entry></feed>"#;
        let (title, items, _) = parse_feed(atom).must();
        assert_eq!(title, "Blog");
        assert_eq!(
            items,
            vec![FeedItem {
                title: "Post".into(),
                link: "https://e.test/post".into(),
                date: "2024-01-02T00:00:00Z".into()
            }]
        );
        assert!(parse_feed("<html/>").is_err());
    }
}
