//! `web_images`: the images of a page, with alt text and size.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use super::args::UrlArgs;
use super::content::{MAX_IMAGES, extract_images};
use super::report::header_lines;
use super::{WebTools, answer};

/// The `web_images` tool.
pub struct WebImages;

impl Tool for WebImages {
    type Host = WebTools;
    type Args = UrlArgs;
    const NAME: &'static str = "web_images";
    const TITLE: &'static str = "Page images";
    const DESCRIPTION: &'static str = "List the images of a web page: absolute URL, alt text, and width and height when the page gives them; deduplicated, at most 200 (inline data: images are counted, not listed).";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &UrlArgs) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: UrlArgs, cx: CallContext) -> CallToolResult {
        answer(&cx, images(web, args)).await
    }
}

async fn images(web: &WebTools, args: UrlArgs) -> Result<String, String> {
    let (r, html) = web.get_html(&args.url).await?;
    let (images, inline) = extract_images(&html, &r.final_url);
    let mut out = header_lines(&r);
    out.push_str(&format!("{} images", images.len()));
    if inline > 0 {
        out.push_str(&format!(" ({inline} inline data: images not listed)"));
    }
    out.push('\n');
    for img in images.iter().take(MAX_IMAGES) {
        out.push_str(&format!("- {}", img.src));
        match (&img.width, &img.height) {
            (Some(w), Some(h)) => out.push_str(&format!(" ({w}×{h})")),
            (Some(w), None) => out.push_str(&format!(" (width {w})")),
            (None, Some(h)) => out.push_str(&format!(" (height {h})")),
            (None, None) => {}
        }
        if !img.alt.is_empty() {
            out.push_str(&format!("\n  alt: {}", img.alt));
        }
        out.push('\n');
    }
    if images.len() > MAX_IMAGES {
        out.push_str(&format!("(capped at {MAX_IMAGES} images)\n"));
    }
    Ok(out)
}
