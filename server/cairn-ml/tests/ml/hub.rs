//! The Hugging Face Hub tools against the stand-in Hub and dataset viewer
//! (`cairn_test_support::hf_hub`), through a real web guard: the request each call sent (path
//! and query, the token only to the hub) and what the model reads, for answers and for the
//! failures a real hub gives (404, 429, a huge card, a page that is not JSON).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::sync::Arc;

use cairn_ml::{HubSettings, Ml, ml_tools};
use cairn_select::embed::ModelSpec;
use cairn_test_support::hf_hub::HfHub;
use cairn_test_support::tools::call;
use cairn_toolkit::ToolSet;
use cairn_vault::Secret;
use cairn_web::{CredentialRefusal, Credentials, GuardConfig, WebGuard};
use serde_json::json;

const TOKEN: &str = "hf_standInToken0123456789";

/// A vault with one secret, `hf`, bound to the loopback address.
struct Vault(HashMap<String, (String, Vec<String>)>);

impl Credentials for Vault {
    fn for_host(&self, name: &str, host: &str) -> Result<Secret, CredentialRefusal> {
        match self.0.get(name) {
            Some((value, hosts)) if hosts.iter().any(|h| h == host) => {
                Ok(Secret::new(value.clone()))
            }
            _ => Err(CredentialRefusal {
                reason: format!("secret `{name}` is not bound to {host}"),
            }),
        }
    }
}

fn guard() -> Arc<WebGuard> {
    let vault = Vault(HashMap::from([(
        "hf".to_owned(),
        (TOKEN.to_owned(), vec!["127.0.0.1".to_owned()]),
    )]));
    Arc::new(
        WebGuard::new(GuardConfig {
            allow_loopback: true,
            per_user_per_minute: 1000,
            per_host_per_minute: 1000,
            ..GuardConfig::default()
        })
        .unwrap()
        .with_credentials(Arc::new(vault)),
    )
}

fn tools(hub: &HfHub, secret: Option<&str>) -> ToolSet<Ml> {
    ml_tools(
        Ml::new(None, ModelSpec::default())
            .with_guard(Some(guard()))
            .with_hub(HubSettings {
                hub_url: hub.url.clone(),
                datasets_url: hub.url.clone(),
                secret: secret.map(str::to_owned),
            }),
    )
}

fn has(query: &[(String, String)], key: &str, value: &str) -> bool {
    query.iter().any(|(k, v)| k == key && v == value)
}

#[tokio::test]
async fn models_are_searched_by_words_and_task_most_liked_first() {
    let hub = HfHub::start().await;
    let t = tools(&hub, None);
    let seen = call(
        &t,
        "hf_search",
        json!({"query": "bert", "task": "text-classification", "sort": "likes", "limit": 5}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let sent = hub.to("/api/models");
    assert_eq!(sent.len(), 1);
    let q = sent[0].query();
    assert!(has(&q, "search", "bert"), "{q:?}");
    assert!(has(&q, "pipeline_tag", "text-classification"), "{q:?}");
    assert!(
        has(&q, "sort", "likes") && has(&q, "direction", "-1"),
        "{q:?}"
    );
    assert!(has(&q, "limit", "5"), "{q:?}");
    assert!(has(&q, "expand[]", "downloads") && has(&q, "expand[]", "lastModified"));
    // Two text-classification models match "bert": the one with 801 likes first.
    let t = &seen.text;
    let distil = t
        .find("| distilbert/distilbert-base-uncased-finetuned-sst-2-english | 6.1M | 801 | text-classification | transformers | 2023-12-19 |")
        .expect(t);
    let tiny = t
        .find("| cairn-test/bert-tiny-sentiment | 120 | 3 | text-classification | transformers | 2025-06-01 |")
        .expect(t);
    assert!(distil < tiny, "{t}");
    assert!(
        !t.contains("google-bert/bert-base-uncased"),
        "a fill-mask model: {t}"
    );
    assert!(t.contains("(2 rows)"), "{t}");
}

#[tokio::test]
async fn datasets_are_searched_by_task_category_most_downloaded_first() {
    let hub = HfHub::start().await;
    let t = tools(&hub, None);
    let seen = call(
        &t,
        "hf_search",
        json!({"kind": "dataset", "task": "text-classification"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let q = hub.to("/api/datasets")[0].query();
    assert!(
        has(&q, "filter", "task_categories:text-classification"),
        "{q:?}"
    );
    assert!(
        has(&q, "sort", "downloads") && has(&q, "limit", "20"),
        "{q:?}"
    );
    let t = &seen.text;
    let glue = t
        .find("| nyu-mll/glue | 226.0k | 402 | text-classification | 2024-01-30 |")
        .expect(t);
    let imdb = t.find("| stanfordnlp/imdb | 131.4k | 296 |").expect(t);
    assert!(glue < imdb, "{t}");
    assert!(!t.contains("librispeech"), "{t}");
}

#[tokio::test]
async fn a_page_with_a_next_link_says_more_are_left_out() {
    let hub = HfHub::start().await;
    let t = tools(&hub, None);
    let seen = call(&t, "hf_search", json!({"limit": 2})).await;
    assert!(!seen.is_error, "{}", seen.text);
    let t = &seen.text;
    // The four models by downloads: the first two, and the hub's link to the next page.
    assert!(t.contains("| sentence-transformers/all-MiniLM-L6-v2 | 83.4M | 3712 | sentence-similarity | sentence-transformers | 2025-03-06 |"), "{t}");
    assert!(
        t.contains("| google-bert/bert-base-uncased | 52.1M | 2245 |"),
        "{t}"
    );
    assert!(!t.contains("distilbert"), "{t}");
    assert!(
        t.contains("(2 rows shown; more were left out: raise `limit`"),
        "{t}"
    );
}

#[tokio::test]
async fn bad_search_arguments_are_refused_before_any_request() {
    let hub = HfHub::start().await;
    let t = tools(&hub, None);
    let seen = call(
        &t,
        "hf_search",
        json!({"kind": "dataset", "library": "transformers"}),
    )
    .await;
    assert!(
        seen.is_error && seen.text.contains("filters models only"),
        "{}",
        seen.text
    );
    let seen = call(&t, "hf_search", json!({"limit": 0})).await;
    assert!(
        seen.is_error && seen.text.contains("give 1 to 100"),
        "{}",
        seen.text
    );
    let seen = call(&t, "hf_search", json!({"kind": "space"})).await;
    assert!(seen.is_error, "{}", seen.text);
    assert!(hub.requests().is_empty());
    let seen = call(&t, "hf_search", json!({"query": "no-such-model-anywhere"})).await;
    assert!(!seen.is_error, "{}", seen.text);
    assert!(
        seen.text
            .starts_with("No models on the hub matching \"no-such-model-anywhere\""),
        "{}",
        seen.text
    );
}

#[tokio::test]
async fn a_model_card_has_its_front_matter_files_and_body() {
    let hub = HfHub::start().await;
    let t = tools(&hub, None);
    let seen = call(
        &t,
        "hf_model_card",
        json!({"model": "google-bert/bert-base-uncased"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let info = hub.to("/api/models/google-bert/bert-base-uncased");
    assert_eq!(info.len(), 1);
    assert!(has(&info[0].query(), "blobs", "true"));
    assert_eq!(
        hub.to("/google-bert/bert-base-uncased/resolve/main/README.md")
            .len(),
        1
    );
    let t = &seen.text;
    for want in [
        "Model google-bert/bert-base-uncased (revision main, commit 86b5e0934494)",
        "task: fill-mask · library: transformers · downloads (30 days): 52.1M · likes: 2245 · updated: 2024-02-19",
        "license: apache-2.0\n",
        "datasets: bookcorpus, wikipedia\n",
        "languages: en\n",
        "tags: exbert\n",
        // 491 + 10475 + 570 + 440449768 + 466062 + 231508 bytes.
        "Files (6, 441.2 MB in all):",
        "  model.safetensors  440.4 MB\n",
        "  config.json  570 B\n",
        "Card:\n\n# BERT base model (uncased)",
    ] {
        assert!(t.contains(want), "missing {want:?} in:\n{t}");
    }
    assert!(
        !t.contains("---"),
        "the front matter is summarised, not shown: {t}"
    );
}

#[tokio::test]
async fn a_fine_tuned_model_names_its_base_model_and_metrics() {
    let hub = HfHub::start().await;
    let t = tools(&hub, None);
    let seen = call(
        &t,
        "hf_model_card",
        json!({"model": "cairn-test/bert-tiny-sentiment", "revision": "v1.0"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    assert_eq!(
        hub.to("/api/models/cairn-test/bert-tiny-sentiment/revision/v1.0")
            .len(),
        1
    );
    assert_eq!(
        hub.to("/cairn-test/bert-tiny-sentiment/resolve/v1.0/README.md")
            .len(),
        1
    );
    let t = &seen.text;
    for want in [
        "license: mit\n",
        "base model: prajjwal1/bert-tiny\n",
        "datasets: stanfordnlp/imdb\n",
        "metrics: accuracy\n",
        "A tiny BERT fine-tuned on IMDB reviews",
    ] {
        assert!(t.contains(want), "missing {want:?} in:\n{t}");
    }
}

#[tokio::test]
async fn a_huge_card_is_cut_and_says_so() {
    let hub = HfHub::start().await;
    let set = tools(&hub, None);
    let seen = call(
        &set,
        "hf_model_card",
        json!({"model": "cairn-test/huge-readme", "max_chars": 2000}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let t = &seen.text;
    assert!(t.contains("license: cc-by-4.0"), "{t}");
    // The guard read its 1 MB cap of the 3 MB card, and 2000 characters of it are shown.
    assert!(t.contains("only its first 1048576 bytes were read"), "{t}");
    assert!(
        t.contains("the first 2000 shown, raise `max_chars` for more"),
        "{t}"
    );
    assert!(t.len() < 4000, "{} bytes", t.len());
    let seen = call(
        &set,
        "hf_model_card",
        json!({"model": "cairn-test/huge-readme", "max_chars": 50000}),
    )
    .await;
    assert!(
        seen.is_error && seen.text.contains("at most 40000"),
        "{}",
        seen.text
    );
}

#[tokio::test]
async fn hub_failures_are_named() {
    let hub = HfHub::start().await;
    let t = tools(&hub, None);
    let seen = call(&t, "hf_model_card", json!({"model": "nobody/nothing"})).await;
    assert!(seen.is_error);
    assert!(
        seen.text.starts_with(
            "model nobody/nothing was not found on 127.0.0.1 (HTTP 404: Repository not found)"
        ),
        "{}",
        seen.text
    );
    let seen = call(
        &t,
        "hf_model_card",
        json!({"model": "cairn-test/rate-limited"}),
    )
    .await;
    assert!(seen.is_error);
    assert!(
        seen.text
            .contains("rate limit was reached (HTTP 429; it asks to wait 30 s)"),
        "{}",
        seen.text
    );
    let seen = call(&t, "hf_model_card", json!({"model": "cairn-test/not-json"})).await;
    assert!(seen.is_error);
    assert!(
        seen.text
            .contains("the answer is not JSON (it starts \"<!doctype html>"),
        "{}",
        seen.text
    );
    let before = hub.requests().len();
    for bad in ["../../api/whoami-v2", "a/b/c", "owner/na me", ""] {
        let seen = call(&t, "hf_model_card", json!({"model": bad})).await;
        assert!(
            seen.is_error && seen.text.contains("is not a model id"),
            "{bad}: {}",
            seen.text
        );
    }
    assert_eq!(hub.requests().len(), before, "no request for a bad id");
}

#[tokio::test]
async fn the_token_goes_to_the_hub_only_and_is_never_shown() {
    let hub = HfHub::start().await;
    let t = tools(&hub, Some("hf"));
    let seen = call(
        &t,
        "hf_model_card",
        json!({"model": "google-bert/bert-base-uncased"}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let seen2 = call(
        &t,
        "hf_dataset_preview",
        json!({"dataset": "stanfordnlp/imdb", "rows": 1}),
    )
    .await;
    assert!(!seen2.is_error, "{}", seen2.text);
    let bearer = format!("Bearer {TOKEN}");
    for r in hub.requests() {
        let viewer = r.path() == "/splits" || r.path() == "/rows";
        assert_eq!(
            r.header("authorization"),
            if viewer { None } else { Some(bearer.as_str()) },
            "{}",
            r.target
        );
    }
    assert!(!seen.text.contains(TOKEN) && !seen2.text.contains(TOKEN));
}

#[tokio::test]
async fn without_the_web_guard_the_hub_tools_refuse() {
    let t = ml_tools(Ml::new(None, ModelSpec::default()));
    let seen = call(&t, "hf_search", json!({"query": "bert"})).await;
    assert!(
        seen.is_error && seen.text.contains("the web tools are off"),
        "{}",
        seen.text
    );
}

#[tokio::test]
async fn a_dataset_preview_lists_splits_and_the_first_rows() {
    let hub = HfHub::start().await;
    let t = tools(&hub, None);
    let seen = call(
        &t,
        "hf_dataset_preview",
        json!({"dataset": "stanfordnlp/imdb", "rows": 5}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let splits = hub.to("/splits");
    assert!(has(&splits[0].query(), "dataset", "stanfordnlp/imdb"));
    assert!(
        splits[0].target.contains("dataset=stanfordnlp%2Fimdb"),
        "{}",
        splits[0].target
    );
    let q = hub.to("/rows")[0].query();
    for (k, v) in [
        ("dataset", "stanfordnlp/imdb"),
        ("config", "plain_text"),
        ("split", "train"),
        ("offset", "0"),
        ("length", "5"),
    ] {
        assert!(has(&q, k, v), "{k}={v} in {q:?}");
    }
    let t = &seen.text;
    for want in [
        "Dataset stanfordnlp/imdb, configuration `plain_text`, split `train`: rows 0–4 of 25000",
        "  plain_text: train, test, unsupervised",
        "| row | text | label |",
        "| 0 | I rented I AM CURIOUS-YELLOW from my video store",
        // A pipe inside a value is escaped, so the table keeps its columns.
        "Peggy Lee song.. \\| \"Is that all there is??\" | 0 |",
        "(5 rows shown; more were left out: see the next rows with `offset` 5)",
    ] {
        assert!(t.contains(want), "missing {want:?} in:\n{t}");
    }
    let structured = seen.result.structured_content.clone().unwrap();
    assert_eq!(structured["columns"], json!(["row", "text", "label"]));
    assert_eq!(structured["rows"].as_array().unwrap().len(), 5);
}

#[tokio::test]
async fn a_named_config_and_split_are_used_and_unknown_ones_listed() {
    let hub = HfHub::start().await;
    let t = tools(&hub, None);
    let seen = call(
        &t,
        "hf_dataset_preview",
        json!({"dataset": "nyu-mll/glue", "config": "sst2", "split": "validation", "rows": 2, "offset": 24999}),
    )
    .await;
    assert!(!seen.is_error, "{}", seen.text);
    let q = hub.to("/rows")[0].query();
    assert!(
        has(&q, "config", "sst2") && has(&q, "split", "validation") && has(&q, "offset", "24999")
    );
    assert!(
        seen.text.contains("rows 24999–24999 of 25000"),
        "{}",
        seen.text
    );
    assert!(seen.text.contains("(1 row)"), "{}", seen.text);
    let seen = call(
        &t,
        "hf_dataset_preview",
        json!({"dataset": "nyu-mll/glue", "config": "mnli"}),
    )
    .await;
    assert!(seen.is_error, "{}", seen.text);
    assert!(seen.text.contains("has no configuration `mnli`; it has:\n  cola: train, validation, test\n  sst2: train, validation, test"), "{}", seen.text);
    let seen = call(
        &t,
        "hf_dataset_preview",
        json!({"dataset": "nobody/nothing"}),
    )
    .await;
    assert!(seen.is_error);
    assert!(
        seen.text
            .starts_with("dataset nobody/nothing was not found"),
        "{}",
        seen.text
    );
    assert!(
        seen.text.contains("not accessible without authentication"),
        "{}",
        seen.text
    );
    let seen = call(
        &t,
        "hf_dataset_preview",
        json!({"dataset": "stanfordnlp/imdb", "rows": 500}),
    )
    .await;
    assert!(
        seen.is_error && seen.text.contains("give 1 to 100"),
        "{}",
        seen.text
    );
}

#[tokio::test]
async fn a_hub_that_never_answers_is_left_when_the_call_is_cancelled() {
    let peer = cairn_test_support::recorder::Recorder::hanging().await;
    let t = ml_tools(
        Ml::new(None, ModelSpec::default())
            .with_guard(Some(guard()))
            .with_hub(HubSettings {
                hub_url: peer.url.clone(),
                datasets_url: peer.url.clone(),
                secret: None,
            }),
    );
    let cancel = tokio_util::sync::CancellationToken::new();
    peer.cancel_when_received(cancel.clone());
    let seen =
        cairn_test_support::tools::call_with(&t, "hf_search", json!({"query": "bert"}), cancel)
            .await;
    assert!(seen.is_error && seen.text == "cancelled", "{}", seen.text);
    assert_eq!(peer.to("/api/models").len(), 1);
}
