//! A stand-in for the Hugging Face Hub and its dataset viewer on loopback, for the model-hub
//! tools' tests: a real HTTP server answering the endpoints hf-hub and the Hub's web client use,
//! with bodies shaped as the public API answers them (copied in shape from
//! `huggingface.co/api/...` and `datasets-server.huggingface.co`), and keeping every request.
//!
//! - `GET /api/models?search=&pipeline_tag=&library=&sort=&direction=&limit=&expand[]=`
//! - `GET /api/datasets?search=&filter=&sort=&direction=&limit=&expand[]=`
//! - `GET /api/models/{owner}/{name}` (and `/revision/{rev}`), with `siblings` and sizes
//! - `GET /{owner}/{name}/resolve/{rev}/README.md`
//! - `GET /splits?dataset=` and `GET /rows?dataset=&config=&split=&offset=&length=`
//!
//! Repositories that fail on purpose: `cairn-test/rate-limited` (429 with `Retry-After`),
//! `cairn-test/huge-readme` (a 3 MB card), `cairn-test/not-json` (an HTML page with 200), and
//! any unknown id (404 with the Hub's `{"error": ...}`).

// A test double: its failures are the test's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::recorder::Request;

/// The running stand-in; both the Hub and the viewer are served at `url`.
pub struct HfHub {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    seen: Arc<Mutex<Vec<Request>>>,
}

impl HfHub {
    /// Starts the stand-in on a free loopback port.
    pub async fn start() -> HfHub {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let kept = seen.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let kept = kept.clone();
                tokio::spawn(async move {
                    if let Err(e) = serve(socket, kept).await {
                        eprintln!("hf_hub stand-in: {e:?}");
                    }
                });
            }
        });
        HfHub { url, seen }
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }

    /// The requests for a path (without the query) equal to `path`.
    pub fn to(&self, path: &str) -> Vec<Request> {
        self.requests()
            .into_iter()
            .filter(|r| r.path() == path)
            .collect()
    }
}

/// One answer: status, content type, extra headers, body.
struct Reply {
    status: u16,
    content_type: &'static str,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

fn json_reply(status: u16, body: &Value) -> Reply {
    Reply {
        status,
        content_type: "application/json; charset=utf-8",
        headers: Vec::new(),
        body: body.to_string().into_bytes(),
    }
}

fn not_found(what: &str) -> Reply {
    // The Hub's own words for a repository it does not have (or does not show).
    let mut r = json_reply(404, &json!({ "error": what }));
    r.headers.push(("x-error-code", "RepoNotFound".into()));
    r
}

fn models() -> Vec<Value> {
    vec![
        json!({
            "_id": "621ffdc136468d709f17b7d0", "id": "sentence-transformers/all-MiniLM-L6-v2",
            "likes": 3712, "downloads": 83_412_345_u64, "pipeline_tag": "sentence-similarity",
            "library_name": "sentence-transformers", "lastModified": "2025-03-06T13:37:44.000Z",
            "tags": ["sentence-transformers", "pytorch", "bert", "feature-extraction", "en", "license:apache-2.0"],
        }),
        json!({
            "_id": "621ffdc036468d709f174338", "id": "google-bert/bert-base-uncased",
            "likes": 2245, "downloads": 52_101_220_u64, "pipeline_tag": "fill-mask",
            "library_name": "transformers", "lastModified": "2024-02-19T11:06:12.000Z",
            "tags": ["transformers", "pytorch", "bert", "fill-mask", "en", "license:apache-2.0"],
        }),
        json!({
            "_id": "621ffdc136468d709f17ada7",
            "id": "distilbert/distilbert-base-uncased-finetuned-sst-2-english",
            "likes": 801, "downloads": 6_120_877_u64, "pipeline_tag": "text-classification",
            "library_name": "transformers", "lastModified": "2023-12-19T16:29:37.000Z",
            "tags": ["transformers", "pytorch", "distilbert", "text-classification", "en", "license:apache-2.0"],
        }),
        json!({
            "_id": "65f0a8e0c0ffee0000000001", "id": "cairn-test/bert-tiny-sentiment",
            "likes": 3, "downloads": 120, "pipeline_tag": "text-classification",
            "library_name": "transformers", "lastModified": "2025-06-01T08:00:00.000Z",
            "tags": ["transformers", "bert", "text-classification"],
        }),
    ]
}

fn datasets() -> Vec<Value> {
    vec![
        json!({
            "_id": "621ffdd236468d709f181d58", "id": "stanfordnlp/imdb", "likes": 296,
            "downloads": 131_404, "lastModified": "2024-01-04T12:05:42.000Z",
            "tags": ["task_categories:text-classification", "task_ids:sentiment-classification",
                     "language:en", "size_categories:10K<n<100K", "license:other"],
        }),
        json!({
            "_id": "621ffdd236468d709f181e3f", "id": "nyu-mll/glue", "likes": 402,
            "downloads": 226_011, "lastModified": "2024-01-30T07:41:18.000Z",
            "tags": ["task_categories:text-classification", "language:en", "license:other"],
        }),
        json!({
            "_id": "621ffdd236468d709f181f00", "id": "openslr/librispeech_asr", "likes": 144,
            "downloads": 48_213, "lastModified": "2024-08-14T10:48:03.000Z",
            "tags": ["task_categories:automatic-speech-recognition", "language:en"],
        }),
    ]
}

/// A query's fields, decoded.
fn query(target: &str) -> Vec<(String, String)> {
    let q = target.split_once('?').map_or("", |(_, q)| q);
    url::form_urlencoded::parse(q.as_bytes())
        .into_owned()
        .collect()
}

fn field<'a>(q: &'a [(String, String)], name: &str) -> Option<&'a str> {
    q.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// `/api/models` or `/api/datasets`: filtered, sorted, limited, and only the fields asked for
/// with `expand[]` (besides `_id` and `id`), as the Hub does.
fn listing(items: Vec<Value>, q: &[(String, String)]) -> Reply {
    let search = field(q, "search").unwrap_or("").to_lowercase();
    let mut items: Vec<Value> = items
        .into_iter()
        .filter(|m| m["id"].as_str().unwrap().to_lowercase().contains(&search))
        .filter(|m| field(q, "pipeline_tag").is_none_or(|t| m["pipeline_tag"] == t))
        .filter(|m| field(q, "library").is_none_or(|l| m["library_name"] == l))
        .filter(|m| {
            q.iter().filter(|(k, _)| k == "filter").all(|(_, f)| {
                m["tags"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|t| t.as_str() == Some(f))
            })
        })
        .collect();
    if let Some(key) = field(q, "sort") {
        let descending = field(q, "direction") == Some("-1");
        items.sort_by(|a, b| {
            let order = match key {
                "lastModified" => a[key].as_str().cmp(&b[key].as_str()),
                _ => a[key].as_u64().cmp(&b[key].as_u64()),
            };
            if descending { order.reverse() } else { order }
        });
    }
    // More than a page: the Hub links the next one (its lists page with a cursor).
    let mut next = None;
    if let Some(limit) = field(q, "limit").and_then(|l| l.parse::<usize>().ok())
        && items.len() > limit
    {
        items.truncate(limit);
        next = Some("<https://huggingface.co/api/models?cursor=eyIkb3IiOlt7Il9pZCI6eyIkZ3QiOiI2MjFmZmRjMDM2NDY4ZDcwOWYxNzQzMzgifX1dfQ%3D%3D&limit=2>; rel=\"next\"".to_owned());
    }
    let expand: Vec<&str> = q
        .iter()
        .filter(|(k, _)| k == "expand[]")
        .map(|(_, v)| v.as_str())
        .collect();
    if !expand.is_empty() {
        for item in &mut items {
            let obj = item.as_object_mut().unwrap();
            obj.retain(|k, _| k == "_id" || k == "id" || expand.contains(&k.as_str()));
        }
    }
    let mut reply = json_reply(200, &Value::Array(items));
    if let Some(link) = next {
        reply.headers.push(("link", link));
    }
    reply
}

fn model_info(id: &str) -> Option<Value> {
    let base = models().into_iter().find(|m| m["id"] == id)?;
    let siblings = match id {
        "google-bert/bert-base-uncased" => json!([
            { "rfilename": ".gitattributes", "size": 491 },
            { "rfilename": "README.md", "size": 10_475 },
            { "rfilename": "config.json", "size": 570 },
            { "rfilename": "model.safetensors", "size": 440_449_768,
              "lfs": { "sha256": "68d45e234eb4a928074dfd868cead0219ab85354cc53d20e772753c6bb9169d3", "size": 440_449_768, "pointerSize": 135 } },
            { "rfilename": "tokenizer.json", "size": 466_062 },
            { "rfilename": "vocab.txt", "size": 231_508 },
        ]),
        _ => json!([
            { "rfilename": ".gitattributes", "size": 1_519 },
            { "rfilename": "README.md", "size": 2_048 },
            { "rfilename": "config.json", "size": 612 },
            { "rfilename": "model.safetensors", "size": 90_868_376,
              "lfs": { "sha256": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db", "size": 90_868_376, "pointerSize": 134 } },
        ]),
    };
    let mut info = base;
    let obj = info.as_object_mut().unwrap();
    obj.insert("modelId".into(), json!(id));
    obj.insert("author".into(), json!(id.split('/').next().unwrap()));
    obj.insert(
        "sha".into(),
        json!("86b5e0934494bd15c9632b12f734a8a67f723594"),
    );
    obj.insert("private".into(), json!(false));
    obj.insert("gated".into(), json!(false));
    obj.insert("disabled".into(), json!(false));
    obj.insert("createdAt".into(), json!("2022-03-02T23:29:04.000Z"));
    obj.insert(
        "cardData".into(),
        json!({ "language": "en", "license": "apache-2.0", "datasets": ["bookcorpus", "wikipedia"] }),
    );
    obj.insert("siblings".into(), siblings);
    obj.insert("usedStorage".into(), json!(2_094_514_215_u64));
    Some(info)
}

/// The card of `id`, front matter and body, as the repositories' README.md files read.
fn readme(id: &str) -> Option<String> {
    Some(match id {
        "google-bert/bert-base-uncased" => "---\nlanguage: en\ntags:\n- exbert\nlicense: apache-2.0\ndatasets:\n- bookcorpus\n- wikipedia\n---\n\n# BERT base model (uncased)\n\nPretrained model on English language using a masked language modeling (MLM) objective.\nIt was introduced in [this paper](https://arxiv.org/abs/1810.04805).\n\n## Model description\n\nBERT is a transformers model pretrained on a large corpus of English data in a self-supervised fashion.\n".to_owned(),
        "cairn-test/bert-tiny-sentiment" => "---\nlicense: mit\nbase_model: prajjwal1/bert-tiny\ndatasets:\n- stanfordnlp/imdb\nmetrics:\n- accuracy\nlibrary_name: transformers\npipeline_tag: text-classification\n---\n\n# bert-tiny-sentiment\n\nA tiny BERT fine-tuned on IMDB reviews for sentiment.\n".to_owned(),
        "cairn-test/huge-readme" => {
            let mut s = "---\nlicense: cc-by-4.0\n---\n\n# A very long card\n\n".to_owned();
            while s.len() < 3_000_000 {
                s.push_str("This sentence pads the card so that it is far larger than any cap. ");
            }
            s
        }
        _ => return None,
    })
}

/// The viewer's `/splits` for the datasets it knows.
fn splits(dataset: &str) -> Option<Value> {
    let list = match dataset {
        "stanfordnlp/imdb" => vec![
            ("plain_text", "train"),
            ("plain_text", "test"),
            ("plain_text", "unsupervised"),
        ],
        "nyu-mll/glue" => vec![
            ("cola", "train"),
            ("cola", "validation"),
            ("cola", "test"),
            ("sst2", "train"),
            ("sst2", "validation"),
            ("sst2", "test"),
        ],
        _ => return None,
    };
    let splits: Vec<Value> = list
        .into_iter()
        .map(|(config, split)| json!({ "dataset": dataset, "config": config, "split": split }))
        .collect();
    Some(json!({ "splits": splits, "pending": [], "failed": [] }))
}

/// IMDB's first rows (shortened reviews), as `/rows` lists them.
const IMDB: &[(&str, u64)] = &[
    (
        "I rented I AM CURIOUS-YELLOW from my video store because of all the controversy that surrounded it when it was first released in 1967.",
        0,
    ),
    (
        "\"I Am Curious: Yellow\" is a risible and pretentious steaming pile. It doesn't matter what one's political views are because this film can hardly be taken seriously on any level.",
        0,
    ),
    (
        "If only to avoid making this type of film in the future. This film is interesting as an experiment but tells no cogent story.",
        0,
    ),
    (
        "This film was probably inspired by Godard's Masculin, féminin and I urge you to see that film instead.",
        0,
    ),
    (
        "Oh, brother...after hearing about this ridiculous film for umpteen years all I can think of is that old Peggy Lee song.. | \"Is that all there is??\"",
        0,
    ),
];

fn rows(q: &[(String, String)]) -> Reply {
    let (dataset, config, split) = (
        field(q, "dataset").unwrap_or(""),
        field(q, "config").unwrap_or(""),
        field(q, "split").unwrap_or(""),
    );
    let known = splits(dataset).is_some_and(|s| {
        s["splits"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["config"] == config && x["split"] == split)
    });
    if !known {
        return json_reply(404, &json!({ "error": "Not found." }));
    }
    let offset: usize = field(q, "offset").and_then(|o| o.parse().ok()).unwrap_or(0);
    let length: usize = field(q, "length")
        .and_then(|l| l.parse().ok())
        .unwrap_or(100);
    if length > 100 {
        return json_reply(
            422,
            &json!({ "error": "Parameter 'length' must not be greater than 100" }),
        );
    }
    let total = 25_000;
    let rows: Vec<Value> = (offset..(offset + length).min(total))
        .map(|i| {
            let (text, label) = IMDB[i % IMDB.len()];
            json!({ "row_idx": i, "row": { "text": text, "label": label }, "truncated_cells": [] })
        })
        .collect();
    json_reply(
        200,
        &json!({
            "features": [
                { "feature_idx": 0, "name": "text", "type": { "dtype": "string", "_type": "Value" } },
                { "feature_idx": 1, "name": "label", "type": { "names": ["neg", "pos"], "_type": "ClassLabel" } },
            ],
            "rows": rows,
            "num_rows_total": total,
            "num_rows_per_page": 100,
            "partial": false,
        }),
    )
}

/// The answer to `GET target`.
fn route(target: &str) -> Reply {
    let path = target.split('?').next().unwrap_or("");
    let q = query(target);
    let failing = |id: &str| {
        match id {
        "cairn-test/rate-limited" => Some(Reply {
            status: 429,
            content_type: "application/json; charset=utf-8",
            headers: vec![("retry-after", "30".into())],
            body: br#"{"error":"You have exceeded our rate limit. Please retry later."}"#.to_vec(),
        }),
        "cairn-test/not-json" => Some(Reply {
            status: 200,
            content_type: "text/html; charset=utf-8",
            headers: Vec::new(),
            body: b"<!doctype html><html><head><title>Sign in</title></head><body>Log in to continue</body></html>".to_vec(),
        }),
        _ => None,
    }
    };
    if path == "/api/models" {
        return listing(models(), &q);
    }
    if path == "/api/datasets" {
        return listing(datasets(), &q);
    }
    if path == "/splits" {
        let dataset = field(&q, "dataset").unwrap_or("");
        if let Some(r) = failing(dataset) {
            return r;
        }
        return match splits(dataset) {
            Some(s) => json_reply(200, &s),
            None => not_found(
                "The dataset does not exist, or is not accessible without authentication (private or gated). Please check the spelling of the dataset name or retry with authentication.",
            ),
        };
    }
    if path == "/rows" {
        return rows(&q);
    }
    if let Some(rest) = path.strip_prefix("/api/models/") {
        let id = rest.split("/revision/").next().unwrap_or(rest);
        if let Some(r) = failing(id) {
            return r;
        }
        if id == "cairn-test/huge-readme" {
            let mut info = model_info("cairn-test/bert-tiny-sentiment").unwrap();
            info["id"] = json!(id);
            return json_reply(200, &info);
        }
        return match model_info(id) {
            Some(info) => json_reply(200, &info),
            None => not_found("Repository not found"),
        };
    }
    if let Some((id, _)) = path.trim_start_matches('/').split_once("/resolve/") {
        return match readme(id) {
            Some(text) if path.ends_with("/README.md") => Reply {
                status: 200,
                content_type: "text/plain; charset=utf-8",
                headers: vec![(
                    "x-repo-commit",
                    "86b5e0934494bd15c9632b12f734a8a67f723594".into(),
                )],
                body: text.into_bytes(),
            },
            _ => not_found("Entry not found"),
        };
    }
    not_found("Sorry, we can't find the page you are looking for.")
}

/// Reads one request, answers it, closes the connection.
async fn serve(mut socket: TcpStream, seen: Arc<Mutex<Vec<Request>>>) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 1 << 20 {
            return Ok(());
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let method = first.next().unwrap_or("").to_owned();
    let target = first.next().unwrap_or("").to_owned();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let reply = if method == "GET" {
        route(&target)
    } else {
        json_reply(405, &json!({ "error": "Method not allowed" }))
    };
    seen.lock().unwrap().push(Request {
        method,
        target,
        headers,
        body: Vec::new(),
        status: reply.status,
    });
    let mut out = format!(
        "HTTP/1.1 {} Stand-in\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reply.status,
        reply.content_type,
        reply.body.len()
    );
    for (n, v) in &reply.headers {
        out.push_str(&format!("{n}: {v}\r\n"));
    }
    out.push_str("\r\n");
    socket.write_all(out.as_bytes()).await?;
    socket.write_all(&reply.body).await?;
    socket.shutdown().await
}
