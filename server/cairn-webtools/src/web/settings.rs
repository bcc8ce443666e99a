//! The web tools' settings from the user's config: the search provider `web_search` asks
//! (`[web.search]`).

/// A web search API `web_search` can call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchProvider {
    /// A SearXNG instance's JSON API; `url` is the instance.
    Searxng,
    /// The Brave Search API; the key goes in `X-Subscription-Token`.
    Brave,
    /// Tavily; the key goes as a bearer token.
    Tavily,
}

impl SearchProvider {
    pub(crate) fn label(self) -> &'static str {
        match self {
            SearchProvider::Searxng => "SearXNG",
            SearchProvider::Brave => "Brave Search",
            SearchProvider::Tavily => "Tavily",
        }
    }

    pub(crate) fn config_name(self) -> &'static str {
        match self {
            SearchProvider::Searxng => "searxng",
            SearchProvider::Brave => "brave",
            SearchProvider::Tavily => "tavily",
        }
    }
}

/// `[web.search]` as the tool uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchSettings {
    pub provider: SearchProvider,
    /// The SearXNG instance, or an endpoint replacing Brave's or Tavily's public one.
    pub url: Option<String>,
    /// The vault secret holding the API key.
    pub secret: Option<String>,
}
