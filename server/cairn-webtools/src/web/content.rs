//! Reading one part of a page, for `web_readable` (the article's text), `web_tables`,
//! `web_find`, `web_outline` and `web_images`: pure functions over HTML already fetched through
//! the guard.

use std::collections::{HashMap, HashSet};

use scraper::{ElementRef, Html, Selector};
use url::Url;

use super::extract::{base_url, collapse};
use super::html_to_markdown;

/// Tags that are page furniture, not content, and never part of the readable text.
const NOT_CONTENT: [&str; 14] = [
    "nav", "header", "footer", "aside", "script", "style", "noscript", "template", "iframe", "svg",
    "form", "button", "head", "dialog",
];
/// Tables listed when no `table` is named, and rows shown of each.
pub(super) const MAX_TABLES_LISTED: usize = 10;
pub(super) const ROWS_WHEN_LISTED: usize = 20;
/// Rows shown of one table asked for by number.
pub(super) const MAX_TABLE_ROWS: usize = 200;
const MAX_TABLE_COLUMNS: usize = 30;
const MAX_CELL_CHARS: usize = 200;
/// Characters of Markdown after which no more rows or tables are added.
pub(super) const MAX_TABLE_OUTPUT: usize = 40_000;
/// Characters kept of a heading or an alt text.
const MAX_LABEL_CHARS: usize = 200;
pub(super) const DEFAULT_FIND_CONTEXT: usize = 80;
pub(super) const MAX_FIND_CONTEXT: usize = 500;
pub(super) const DEFAULT_FIND_MATCHES: usize = 20;
pub(super) const MAX_FIND_MATCHES: usize = 100;
pub(super) const MAX_HEADINGS: usize = 300;
pub(super) const MAX_IMAGES: usize = 200;

/// The readable part of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Article {
    /// The page's `<title>`.
    pub title: Option<String>,
    /// Which element was kept (`<article>`, `<main>`, the largest text block, `<body>`).
    pub source: String,
    pub markdown: String,
}

fn selector(css: &str) -> Option<Selector> {
    Selector::parse(css).ok()
}

fn text_len(el: ElementRef) -> usize {
    el.text().map(|t| t.trim().len()).sum()
}

fn inside_furniture(el: ElementRef) -> bool {
    el.ancestors()
        .filter_map(ElementRef::wrap)
        .any(|a| NOT_CONTENT.contains(&a.value().name()))
}

/// The main text of an article page: the `<article>` with the most text, else `<main>` (or
/// `role=main`), else the element whose paragraphs hold the most text, else `<body>`; with
/// navigation, headers, footers, asides, forms and scripts dropped, as Markdown.
pub fn readable_markdown(html: &str) -> Article {
    let doc = Html::parse_document(html);
    let title = selector("title")
        .and_then(|s| {
            doc.select(&s)
                .next()
                .map(|t| collapse(&t.text().collect::<String>()))
        })
        .filter(|t| !t.is_empty());
    let largest =
        |css: &str| selector(css).and_then(|s| doc.select(&s).max_by_key(|e| text_len(*e)));
    let chosen = largest("article")
        .map(|e| (e, "the page's <article>"))
        .or_else(|| largest("main, [role=main]").map(|e| (e, "the page's <main>")))
        .or_else(|| densest_block(&doc).map(|e| (e, "the largest block of text")))
        .or_else(|| largest("body").map(|e| (e, "the page's <body>")));
    let (html_part, source) = match chosen {
        Some((el, source)) => (el.html(), source),
        None => (html.to_owned(), "the whole page"),
    };
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(NOT_CONTENT.to_vec())
        .build();
    let markdown = converter
        .convert(&html_part)
        .unwrap_or_else(|_| html_to_markdown(&html_part));
    Article {
        title,
        source: source.to_owned(),
        markdown: markdown.trim().to_owned(),
    }
}

/// The element whose own paragraphs (`p`, `pre`, `blockquote` children) hold the most text,
/// outside page furniture; `None` when the page has less than a short paragraph of them.
fn densest_block(doc: &Html) -> Option<ElementRef<'_>> {
    let paragraphs = selector("p, pre, blockquote")?;
    let mut score = HashMap::new();
    for p in doc.select(&paragraphs) {
        if inside_furniture(p) {
            continue;
        }
        if let Some(parent) = p.parent().and_then(ElementRef::wrap) {
            *score.entry(parent.id()).or_insert(0usize) += text_len(p);
        }
    }
    let (id, best) = score.into_iter().max_by_key(|(_, s)| *s)?;
    if best < 100 {
        return None;
    }
    doc.tree.get(id).and_then(ElementRef::wrap)
}

/// One HTML table: its caption and its rows of cell texts (a `colspan` repeats the cell).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HtmlTable {
    pub caption: String,
    pub rows: Vec<Vec<String>>,
}

/// The tables of a page in document order; rows of a nested table belong to that table only.
pub fn extract_tables(html: &str) -> Vec<HtmlTable> {
    let doc = Html::parse_document(html);
    let (Some(tables), Some(rows), Some(caption)) =
        (selector("table"), selector("tr"), selector("caption"))
    else {
        return Vec::new();
    };
    let owner = |el: ElementRef| {
        el.ancestors()
            .filter_map(ElementRef::wrap)
            .find(|a| a.value().name() == "table")
            .map(|a| a.id())
    };
    doc.select(&tables)
        .map(|table| {
            let caption = table
                .select(&caption)
                .find(|c| owner(*c) == Some(table.id()))
                .map(|c| collapse(&c.text().collect::<String>()))
                .unwrap_or_default();
            let rows = table
                .select(&rows)
                .filter(|tr| owner(*tr) == Some(table.id()))
                .map(|tr| {
                    let mut cells = Vec::new();
                    for cell in tr.child_elements() {
                        if !matches!(cell.value().name(), "td" | "th") {
                            continue;
                        }
                        let text = cell_text(cell);
                        let span = cell
                            .value()
                            .attr("colspan")
                            .and_then(|s| s.trim().parse::<usize>().ok())
                            .unwrap_or(1)
                            .clamp(1, MAX_TABLE_COLUMNS);
                        for _ in 0..span {
                            cells.push(text.clone());
                        }
                    }
                    cells.truncate(MAX_TABLE_COLUMNS);
                    cells
                })
                .filter(|cells| !cells.is_empty())
                .collect();
            HtmlTable { caption, rows }
        })
        .collect()
}

fn cell_text(cell: ElementRef) -> String {
    cut(
        &collapse(&cell.text().collect::<String>()).replace('|', "\\|"),
        MAX_CELL_CHARS,
    )
}

/// `text`, cut to `max` characters with `…` when it was longer.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or(text)),
        None => text.to_owned(),
    }
}

/// Table `n` as a Markdown table (its first row as the header), at most `max_rows` rows.
pub(super) fn render_table(n: usize, t: &HtmlTable, max_rows: usize, listing: bool) -> String {
    let columns = t.rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = format!("\n## Table {n}");
    if !t.caption.is_empty() {
        out.push_str(&format!(": {}", t.caption));
    }
    out.push_str(&format!(" ({} rows × {columns} columns)\n\n", t.rows.len()));
    if columns == 0 {
        out.push_str("(empty)\n");
        return out;
    }
    let line = |cells: &[String]| {
        let mut l = String::from("|");
        for i in 0..columns {
            l.push(' ');
            l.push_str(cells.get(i).map_or("", String::as_str));
            l.push_str(" |");
        }
        l.push('\n');
        l
    };
    let mut shown = 0;
    for (i, row) in t.rows.iter().take(max_rows).enumerate() {
        // Wide tables of long cells stop early rather than flood the model's context.
        if out.len() > MAX_TABLE_OUTPUT {
            break;
        }
        out.push_str(&line(row));
        shown += 1;
        if i == 0 {
            out.push_str(&format!("|{}\n", " --- |".repeat(columns)));
        }
    }
    if t.rows.len() > shown {
        let more = t.rows.len() - shown;
        if listing {
            out.push_str(&format!(
                "\n({more} more rows; call again with table: {n} to see up to {MAX_TABLE_ROWS})\n"
            ));
        } else {
            out.push_str(&format!("\n({more} more rows not shown)\n"));
        }
    }
    out
}

/// One occurrence found by [`find_text`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextMatch {
    /// The character position of the match in the text.
    pub position: usize,
    pub before: String,
    pub matched: String,
    pub after: String,
}

fn fold(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

/// Case-insensitive occurrences of `needle` in `text` (at most `max`, non-overlapping), each
/// with `context` characters either side (line breaks shown as spaces), and how many there are.
pub fn find_text(text: &str, needle: &str, context: usize, max: usize) -> (Vec<TextMatch>, usize) {
    let chars: Vec<char> = text.chars().collect();
    let folded: Vec<char> = chars.iter().map(|c| fold(*c)).collect();
    let pattern: Vec<char> = needle.chars().map(fold).collect();
    let mut found = Vec::new();
    let mut total = 0;
    if pattern.is_empty() || pattern.len() > chars.len() {
        return (found, 0);
    }
    let flat = |s: &[char]| -> String {
        s.iter()
            .map(|c| if c.is_whitespace() { ' ' } else { *c })
            .collect()
    };
    let mut i = 0;
    while i + pattern.len() <= folded.len() {
        if folded[i..i + pattern.len()] == pattern[..] {
            total += 1;
            if found.len() < max {
                let end = i + pattern.len();
                found.push(TextMatch {
                    position: i,
                    before: flat(&chars[i.saturating_sub(context)..i]),
                    matched: flat(&chars[i..end]),
                    after: flat(&chars[end..(end + context).min(chars.len())]),
                });
            }
            i += pattern.len();
        } else {
            i += 1;
        }
    }
    (found, total)
}

/// One heading of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// 1 to 6.
    pub level: usize,
    pub text: String,
    /// The anchor: the heading's `id`, or that of an `<a id>` / `<a name>` inside it.
    pub id: Option<String>,
}

/// The headings of a page in document order.
pub fn extract_outline(html: &str) -> Vec<Heading> {
    let doc = Html::parse_document(html);
    let (Some(headings), Some(anchors)) = (
        selector("h1, h2, h3, h4, h5, h6"),
        selector("a[id], a[name]"),
    ) else {
        return Vec::new();
    };
    doc.select(&headings)
        .map(|h| {
            let level = h
                .value()
                .name()
                .strip_prefix('h')
                .and_then(|n| n.parse().ok())
                .unwrap_or(1);
            let own = h.value().attr("id").map(str::trim);
            let inner = || {
                h.select(&anchors).next().and_then(|a| {
                    a.value()
                        .attr("id")
                        .or_else(|| a.value().attr("name"))
                        .map(str::trim)
                })
            };
            Heading {
                level,
                text: cut(&collapse(&h.text().collect::<String>()), MAX_LABEL_CHARS),
                id: own
                    .or_else(inner)
                    .filter(|id| !id.is_empty())
                    .map(str::to_owned),
            }
        })
        .collect()
}

/// One image of a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageImage {
    /// Absolute URL.
    pub src: String,
    pub alt: String,
    pub width: Option<String>,
    pub height: Option<String>,
}

/// The page's `<img>` images (from `src`, else `data-src`, else the first `srcset` candidate)
/// as absolute http(s) URLs, first occurrence kept; and how many were inline `data:` images.
pub fn extract_images(html: &str, page_url: &Url) -> (Vec<PageImage>, usize) {
    let doc = Html::parse_document(html);
    let base = base_url(&doc, page_url);
    let Some(imgs) = selector("img") else {
        return (Vec::new(), 0);
    };
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut inline = 0;
    for img in doc.select(&imgs) {
        let attr = |name: &str| {
            img.value()
                .attr(name)
                .map(str::trim)
                .filter(|v| !v.is_empty())
        };
        let first_candidate = attr("srcset")
            .and_then(|s| s.split(',').next())
            .and_then(|c| c.split_whitespace().next());
        let Some(src) = attr("src").or_else(|| attr("data-src")).or(first_candidate) else {
            continue;
        };
        if src.starts_with("data:") {
            inline += 1;
            continue;
        }
        let Ok(url) = base.join(src) else {
            continue;
        };
        if !matches!(url.scheme(), "http" | "https") || !seen.insert(url.to_string()) {
            continue;
        }
        out.push(PageImage {
            src: url.to_string(),
            alt: attr("alt")
                .map(|a| cut(&collapse(a), MAX_LABEL_CHARS))
                .unwrap_or_default(),
            width: attr("width").map(str::to_owned),
            height: attr("height").map(str::to_owned),
        });
    }
    (out, inline)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_keeps_the_article_and_drops_the_furniture() {
        let html = r#"<html><head><title>Stones</title></head><body>
            <nav><a href="/">Home</a> Menu entry</nav><header>Site banner</header>
            <article><h1>Cairns</h1><p>A cairn is a pile of stones.</p>
              <aside>Related: buy stones</aside><script>track()</script></article>
            <footer>Copyright</footer></body></html>"#;
        let a = readable_markdown(html);
        assert_eq!(a.title.as_deref(), Some("Stones"));
        assert_eq!(a.source, "the page's <article>");
        assert!(a.markdown.contains("# Cairns"), "{}", a.markdown);
        assert!(a.markdown.contains("pile of stones"), "{}", a.markdown);
        for gone in [
            "Menu entry",
            "Site banner",
            "buy stones",
            "track",
            "Copyright",
        ] {
            assert!(!a.markdown.contains(gone), "{gone}: {}", a.markdown);
        }
    }

    #[test]
    fn readable_falls_back_to_the_densest_block() {
        let long = "Stones are stacked by walkers to mark the trail. ".repeat(5);
        let html = format!(
            "<body><div class=side><p>short</p></div><div id=content><p>{long}</p><p>{long}</p></div><footer><p>{long}{long}{long}</p></footer></body>"
        );
        let a = readable_markdown(&html);
        assert_eq!(a.source, "the largest block of text");
        assert!(!a.markdown.contains("short"), "{}", a.markdown);
        assert!(a.markdown.contains("stacked by walkers"), "{}", a.markdown);
        let tiny = readable_markdown("<body><p>hi</p></body>");
        assert_eq!(tiny.source, "the page's <body>");
    }

    #[test]
    fn tables_become_markdown_with_nested_tables_apart() {
        let html = r#"<table><caption>Peaks</caption><tr><th>Name</th><th>Height</th></tr>
            <tr><td>Ben | Nevis</td><td>1345</td></tr>
            <tr><td colspan=2><table><tr><td>inner</td></tr></table></td></tr></table>"#;
        let tables = extract_tables(html);
        assert_eq!(tables.len(), 2);
        assert_eq!(tables[0].caption, "Peaks");
        assert_eq!(tables[0].rows.len(), 3);
        assert_eq!(tables[1].rows, vec![vec!["inner".to_owned()]]);
        let md = render_table(1, &tables[0], 2, true);
        assert!(
            md.contains("## Table 1: Peaks (3 rows × 2 columns)"),
            "{md}"
        );
        assert!(
            md.contains("| Name | Height |\n| --- | --- |\n| Ben \\| Nevis | 1345 |"),
            "{md}"
        );
        assert!(md.contains("1 more rows; call again with table: 1"), "{md}");
    }

    #[test]
    fn big_tables_stop_at_the_output_cap() {
        let cell = "x".repeat(300);
        let row = format!("<tr>{}</tr>", format!("<td>{cell}</td>").repeat(30));
        let html = format!("<table>{}</table>", row.repeat(150));
        let tables = extract_tables(&html);
        let md = render_table(1, &tables[0], MAX_TABLE_ROWS, false);
        assert!(md.len() < MAX_TABLE_OUTPUT + 10_000, "{}", md.len());
        assert!(
            md.contains("more rows not shown"),
            "{}",
            &md[md.len() - 100..]
        );
        assert!(md.contains(&format!("{}…", "x".repeat(200))));
    }

    #[test]
    fn find_is_case_insensitive_with_context() {
        let (found, total) = find_text("One cairn, two Cairns,\nthree CAIRNS.", "cairn", 4, 2);
        assert_eq!(total, 3);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].position, 4);
        assert_eq!(
            (
                found[1].before.as_str(),
                found[1].matched.as_str(),
                found[1].after.as_str()
            ),
            ("two ", "Cairn", "s, t")
        );
        assert_eq!(find_text("abc", "abcd", 3, 5).1, 0);
        let (found, _) = find_text("Ärger ärger", "ÄRGER", 0, 5);
        assert_eq!(
            found.iter().map(|m| m.position).collect::<Vec<_>>(),
            vec![0, 6]
        );
    }

    #[test]
    fn outline_lists_levels_and_anchors() {
        let html = r#"<h1>Guide</h1><h2 id="install">Install</h2><h3><a name="linux"></a>On Linux</h3><h2>Use</h2>"#;
        let outline = extract_outline(html);
        let got: Vec<(usize, &str, Option<&str>)> = outline
            .iter()
            .map(|h| (h.level, h.text.as_str(), h.id.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, "Guide", None),
                (2, "Install", Some("install")),
                (3, "On Linux", Some("linux")),
                (2, "Use", None)
            ]
        );
    }

    #[test]
    fn images_are_absolute_and_deduplicated() {
        let base = Url::parse("https://e.test/a/page.html").unwrap_or_else(|e| panic!("{e}"));
        let html = r#"<img src="x.png" alt=" A  cairn " width="10" height="20">
            <img src="/a/x.png"><img data-src="lazy.jpg"><img srcset="s1.png 1x, s2.png 2x">
            <img src="data:image/png;base64,AAAA"><img src="javascript:x"><img alt="no src">"#;
        let (images, inline) = extract_images(html, &base);
        let srcs: Vec<&str> = images.iter().map(|i| i.src.as_str()).collect();
        assert_eq!(
            srcs,
            vec![
                "https://e.test/a/x.png",
                "https://e.test/a/lazy.jpg",
                "https://e.test/a/s1.png"
            ]
        );
        assert_eq!(inline, 1);
        assert_eq!(images[0].alt, "A cairn");
        assert_eq!(images[0].width.as_deref(), Some("10"));
        assert_eq!(images[0].height.as_deref(), Some("20"));
    }
}
