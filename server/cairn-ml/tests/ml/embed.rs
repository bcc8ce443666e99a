//! The embedding tools as the model calls them: on the real local embedder (all-MiniLM-L6-v2,
//! gated by `CAIRN_MODEL_TESTS`) with small data whose answer a person sees at once, and their
//! refusals (too many texts, a binary file, a protected path, a missing column, a damaged
//! classifier), which come before any model is loaded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use cairn_ml::{Ml, ml_tools};
use cairn_select::embed::ModelSpec;
use cairn_test_support::tools::{Seen, call};
use cairn_workspace::{AccessRules, ExactApprovals, Workspace};
use serde_json::{Value, json};

fn workspace(dir: &Path) -> Arc<Workspace> {
    // The user's rules as the binary applies them: `.env` and other secrets are protected.
    Arc::new(
        Workspace::new(vec![dir.to_path_buf()])
            .unwrap()
            .with_access(
                |_| AccessRules::new("ada@example.com", None, None),
                ExactApprovals::new(),
            ),
    )
}

/// The tools over `dir` with the configured model.
fn tools(dir: &Path) -> cairn_toolkit::ToolSet<Ml> {
    ml_tools(Ml::new(Some(workspace(dir)), ModelSpec::default()))
}

/// The tools with a model that does not exist: a refusal must come before any loading.
fn modelless(dir: &Path) -> cairn_toolkit::ToolSet<Ml> {
    let spec = ModelSpec {
        repo: "cairn-tests/no-such-model".into(),
        revision: "none".into(),
    };
    ml_tools(Ml::new(Some(workspace(dir)), spec))
}

fn model_tests() -> bool {
    cairn_test_support::gate(
        "CAIRN_MODEL_TESTS",
        "with the embedding model in the hf cache (HF_HUB_OFFLINE=1)",
    )
}

fn ok(seen: &Seen) {
    assert!(!seen.is_error, "{}", seen.text);
}

fn refused(seen: &Seen, words: &str) {
    assert!(seen.is_error, "expected a refusal, got: {}", seen.text);
    assert!(seen.text.contains(words), "{words:?} not in: {}", seen.text);
}

/// The table row of `seen` that contains `needle`.
fn row<'a>(seen: &'a Seen, needle: &str) -> &'a str {
    seen.text
        .lines()
        .find(|l| l.starts_with('|') && l.contains(needle))
        .unwrap_or_else(|| panic!("no row with {needle:?} in: {}", seen.text))
}

#[tokio::test]
async fn paraphrases_rank_above_unrelated_sentences() {
    if !model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = tools(dir.path());
    let seen = call(
        &t,
        "text_similarity",
        json!({
            "query": "How do I reset my password?",
            "texts": [
                "The train to Lyon leaves at nine.",
                "I forgot my password and need to change it.",
                "Add two eggs and whisk the batter.",
            ],
        }),
    )
    .await;
    ok(&seen);
    assert!(
        row(&seen, "forgot my password").starts_with("| 1 |"),
        "{}",
        seen.text
    );
    assert!(
        row(&seen, "forgot my password").ends_with("| #2 |"),
        "{}",
        seen.text
    );

    let score = |seen: &Seen| -> f32 {
        let s = seen.text.strip_prefix("cosine similarity: ").unwrap();
        s.split_whitespace().next().unwrap().parse().unwrap()
    };
    let close = call(
        &t,
        "text_similarity",
        json!({"query": "The cat sleeps on the sofa.", "texts": ["A cat is asleep on the couch."]}),
    )
    .await;
    let far = call(
        &t,
        "text_similarity",
        json!({"query": "The cat sleeps on the sofa.", "texts": ["Quarterly revenue grew by eight percent."]}),
    )
    .await;
    ok(&close);
    ok(&far);
    assert!(score(&close) > 0.6, "{}", close.text);
    assert!(score(&far) < 0.2, "{}", far.text);
}

const COOKING: [&str; 6] = [
    "Whisk the eggs with sugar until pale.",
    "Bake the bread at 220 degrees for forty minutes.",
    "Chop the onions and fry them in olive oil.",
    "Season the soup with salt and pepper.",
    "Knead the dough and let it rise overnight.",
    "Roast the chicken with garlic and rosemary.",
];

const FOOTBALL: [&str; 6] = [
    "The goalkeeper saved a penalty in the last minute.",
    "The referee showed a red card to the defender.",
    "He scored a hat-trick in the second half.",
    "The match ended in a goalless draw.",
    "The striker ran onto the pitch to cheers from the fans.",
    "The team won the league after the final match.",
];

/// The sections of a clustering result, one per cluster.
fn clusters(seen: &Seen) -> Vec<String> {
    seen.text
        .split("\nCluster ")
        .skip(1)
        .map(str::to_owned)
        .collect()
}

fn assert_topics_apart(seen: &Seen) {
    let found = clusters(seen);
    assert_eq!(found.len(), 2, "{}", seen.text);
    for topic in [COOKING, FOOTBALL] {
        let home = found.iter().find(|c| c.contains(topic[0])).unwrap();
        for s in topic {
            assert!(
                home.contains(s),
                "{s:?} not with {:?}: {}",
                topic[0],
                seen.text
            );
        }
    }
}

#[tokio::test]
async fn two_obvious_topics_cluster_apart_by_kmeans_agglomerative_and_chosen_k() {
    if !model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Interleaved, so order does not give the answer away.
    let lines: Vec<&str> = COOKING
        .iter()
        .zip(FOOTBALL)
        .flat_map(|(a, b)| [*a, b])
        .collect();
    std::fs::write(dir.path().join("notes.txt"), lines.join("\n\n")).unwrap();
    let t = tools(dir.path());

    let auto = call(&t, "cluster_texts", json!({"path": "notes.txt"})).await;
    ok(&auto);
    assert!(
        auto.text
            .starts_with("12 texts in 2 clusters (k-means, k chosen by silhouette"),
        "{}",
        auto.text
    );
    assert_topics_apart(&auto);
    // Lines are named by their line in the file (blank lines between them).
    assert!(
        auto.text.contains(&format!("{} (line 1)", COOKING[0])),
        "{}",
        auto.text
    );
    assert!(
        auto.text.contains(&format!("{} (line 3)", FOOTBALL[0])),
        "{}",
        auto.text
    );

    let agglomerative = call(
        &t,
        "cluster_texts",
        json!({"texts": lines, "k": 2, "method": "agglomerative"}),
    )
    .await;
    ok(&agglomerative);
    assert!(
        agglomerative
            .text
            .contains("agglomerative, average linkage, k given"),
        "{}",
        agglomerative.text
    );
    assert_topics_apart(&agglomerative);
}

#[tokio::test]
async fn a_near_duplicate_pair_is_found_and_a_distinct_one_is_not() {
    if !model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tickets.csv"),
        "id,title\n\
         1,The login page shows a blank screen after I enter my password\n\
         2,Invoice PDF is missing the VAT number\n\
         3,After entering my password the login page is just a blank screen\n\
         4,INVOICE pdf is missing   the VAT number\n\
         5,Please add a dark mode to the settings page\n\
         6,Export to CSV drops the last column\n",
    )
    .unwrap();
    let t = tools(dir.path());
    let seen = call(
        &t,
        "find_near_duplicates",
        json!({"path": "tickets.csv", "column": "title", "threshold": 0.8}),
    )
    .await;
    ok(&seen);
    // The exact pair (case and spacing aside) comes first, then the paraphrase.
    let exact = seen.text.find("Exact duplicates (1 groups").unwrap();
    let near = seen.text.find("Near duplicates (1 pairs").unwrap();
    assert!(exact < near, "{}", seen.text);
    assert!(
        seen.text
            .contains("Invoice PDF is missing the VAT number\" at row 2, row 4"),
        "{}",
        seen.text
    );
    let pair = row(&seen, "blank screen");
    assert!(
        pair.contains("| row 1 |") && pair.contains("| row 3 |"),
        "{}",
        seen.text
    );
    assert!(!seen.text.contains("dark mode"), "{}", seen.text);
    assert!(!seen.text.contains("Export to CSV"), "{}", seen.text);
}

#[tokio::test]
async fn obvious_sentences_get_their_zero_shot_labels() {
    if !model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = tools(dir.path());
    let seen = call(
        &t,
        "classify_zero_shot",
        json!({
            "labels": ["sports", "cooking", "finance"],
            "texts": [
                "The striker scored twice in the cup final.",
                "Simmer the onions in butter until golden.",
                "The central bank raised interest rates again.",
            ],
            "top": 1,
        }),
    )
    .await;
    ok(&seen);
    assert!(row(&seen, "striker").contains("| sports "), "{}", seen.text);
    assert!(row(&seen, "onions").contains("| cooking "), "{}", seen.text);
    assert!(
        row(&seen, "central bank").contains("| finance "),
        "{}",
        seen.text
    );
    assert!(
        seen.text
            .contains("Best label counts: sports 1, cooking 1, finance 1"),
        "{}",
        seen.text
    );
}

/// Twenty rows about football and twenty about baking.
fn labelled_csv() -> String {
    let sports = [
        "The goalkeeper saved a penalty in the last minute",
        "Our team won the league after a tense final match",
        "The referee showed a red card to the defender",
        "He scored a hat-trick in the second half",
        "The coach changed tactics at half time",
        "Fans cheered as the striker ran onto the pitch",
        "The match ended in a goalless draw",
        "She was transferred to a bigger club for a record fee",
        "The midfielder passed the ball through the defence",
        "They trained hard before the championship game",
        "The winger crossed the ball and the captain headed it in",
        "The stadium was full for the derby",
        "An injury kept the forward out for three matches",
        "The team climbed to second place in the table",
        "The umpire called the player offside",
        "The players celebrated the victory with their supporters",
        "The tournament final goes to extra time",
        "He missed the open goal from two yards",
        "The club signed a new goalkeeper this season",
        "The team lost the away game on penalties",
    ];
    let baking = [
        "Preheat the oven to 180 degrees before baking the cake",
        "Cream the butter and sugar until fluffy",
        "Fold the flour gently into the batter",
        "Let the bread dough rise for two hours",
        "Brush the pastry with beaten egg before baking",
        "Sift the flour with baking powder and a pinch of salt",
        "Bake the cookies until the edges turn golden",
        "Knead the dough until it is smooth and elastic",
        "Melt the chocolate slowly over simmering water",
        "Grease the tin and line it with baking paper",
        "Add the eggs one at a time and beat well",
        "Cool the sponge on a wire rack before icing it",
        "Roll out the pastry and cut it into circles",
        "Sprinkle cinnamon sugar over the buns",
        "Whisk the egg whites to stiff peaks for the meringue",
        "The muffins need twenty minutes in a hot oven",
        "Spread the jam between the two layers of cake",
        "Proof the yeast in warm milk with a little sugar",
        "Pipe the cream onto the cooled cupcakes",
        "Dust the loaf with flour and score the top",
    ];
    let mut csv = String::from("text,topic\n");
    for (s, b) in sports.iter().zip(baking) {
        csv.push_str(&format!("{s},sport\n\"{b}\",baking\n"));
    }
    csv
}

#[tokio::test]
async fn a_classifier_trained_on_two_obvious_topics_scores_high_and_classifies_new_texts() {
    if !model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("labelled.csv"), labelled_csv()).unwrap();
    let t = tools(dir.path());
    for method in ["logistic", "centroid"] {
        let save = format!("models/{method}.json");
        let trained = call(
            &t,
            "train_text_classifier",
            json!({
                "path": "labelled.csv",
                "text_column": "text",
                "label_column": "topic",
                "method": method,
                "save_to": save,
            }),
        )
        .await;
        ok(&trained);
        assert!(
            trained
                .text
                .contains("on 40 rows of labelled.csv (2 labels: sport, baking)"),
            "{}",
            trained.text
        );
        // 20% of each label's 20 rows: 4 + 4 held out, all right.
        assert!(
            trained.text.contains("Held-out accuracy: 8/8 = 100.0%"),
            "{}",
            trained.text
        );
        assert!(
            trained
                .text
                .contains("Right per label: sport 4/4, baking 4/4."),
            "{}",
            trained.text
        );
        assert!(
            trained.text.contains("No held-out row was confused."),
            "{}",
            trained.text
        );

        let saved: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join(&save)).unwrap())
                .unwrap();
        assert_eq!(saved["format"], "cairn-text-classifier");
        assert_eq!(saved["labels"], json!(["sport", "baking"]));
        assert_eq!(saved["dim"], 384);
        assert_eq!(saved["weights"][0].as_array().unwrap().len(), 384);

        let applied = call(
            &t,
            "classify_texts",
            json!({
                "model": save,
                "texts": [
                    "The defender scored an own goal in the derby.",
                    "Beat the butter into the flour and bake for an hour.",
                    "The fans booed the referee after the penalty.",
                ],
            }),
        )
        .await;
        ok(&applied);
        assert!(
            row(&applied, "own goal").contains("| sport |"),
            "{}",
            applied.text
        );
        assert!(
            row(&applied, "butter into the flour").contains("| baking |"),
            "{}",
            applied.text
        );
        assert!(
            row(&applied, "booed").contains("| sport |"),
            "{}",
            applied.text
        );
        assert!(
            applied.text.contains("Counts: sport 2, baking 1"),
            "{}",
            applied.text
        );
    }
    // New rows from a JSONL file's field; a line without it is skipped and said.
    std::fs::write(
        dir.path().join("new.jsonl"),
        "{\"body\": \"Roll the pastry thin and bake it blind\"}\n\
         {\"other\": 1}\n\
         {\"body\": \"The keeper was sent off for handball\"}\n",
    )
    .unwrap();
    let applied = call(
        &t,
        "classify_texts",
        json!({"model": "models/logistic.json", "path": "new.jsonl", "column": "body"}),
    )
    .await;
    ok(&applied);
    assert!(
        row(&applied, "| line 1 |").contains("| baking |"),
        "{}",
        applied.text
    );
    assert!(
        row(&applied, "| line 3 |").contains("| sport |"),
        "{}",
        applied.text
    );
    assert!(
        applied
            .text
            .contains("(1 lines without the field were skipped)"),
        "{}",
        applied.text
    );
}

#[tokio::test]
async fn a_cancelled_call_stops_with_cancelled() {
    if !model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = tools(dir.path());
    let cancel = tokio_util::sync::CancellationToken::new();
    cancel.cancel();
    let seen = cairn_test_support::tools::call_with(
        &t,
        "cluster_texts",
        json!({"texts": COOKING}),
        cancel,
    )
    .await;
    refused(&seen, "cancelled");
}

#[tokio::test]
async fn refusals_come_before_the_model_is_loaded() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".env"), "API_KEY=hunter2\n").unwrap();
    std::fs::write(dir.path().join("blob.txt"), b"abc\0def\n").unwrap();
    std::fs::write(dir.path().join("rows.csv"), "id,body\n1,hello\n").unwrap();
    std::fs::write(
        dir.path().join("model.json"),
        "{\"format\": \"something else\"}",
    )
    .unwrap();
    let t = modelless(dir.path());

    let many: Vec<String> = (0..2001).map(|i| format!("text {i}")).collect();
    let seen = call(&t, "cluster_texts", json!({"texts": many})).await;
    refused(&seen, "2001 texts is too many: at most 2000 per call");

    let seen = call(&t, "find_near_duplicates", json!({"path": "blob.txt"})).await;
    refused(&seen, "blob.txt");
    assert!(seen.text.contains("binary"), "{}", seen.text);

    let seen = call(
        &t,
        "classify_zero_shot",
        json!({"labels": ["a", "b"], "path": ".env"}),
    )
    .await;
    refused(&seen, ".env");
    assert!(!seen.text.contains("hunter2"), "{}", seen.text);

    let seen = call(
        &t,
        "cluster_texts",
        json!({"path": "rows.csv", "column": "text"}),
    )
    .await;
    refused(
        &seen,
        "rows.csv has no column `text`; its columns are: id, body",
    );

    let seen = call(
        &t,
        "train_text_classifier",
        json!({"path": "rows.csv", "text_column": "body", "label_column": "label", "save_to": "m.json"}),
    )
    .await;
    refused(&seen, "rows.csv has no column `label`");
    assert!(!dir.path().join("m.json").exists());

    let seen = call(
        &t,
        "train_text_classifier",
        json!({"path": "rows.csv", "text_column": "body", "label_column": "id", "save_to": ".env"}),
    )
    .await;
    refused(&seen, ".env");
    assert_eq!(
        std::fs::read_to_string(dir.path().join(".env")).unwrap(),
        "API_KEY=hunter2\n"
    );

    let seen = call(
        &t,
        "classify_texts",
        json!({"model": "model.json", "texts": ["x"]}),
    )
    .await;
    refused(
        &seen,
        "model.json is not a classifier saved by train_text_classifier",
    );

    let seen = call(&t, "text_similarity", json!({"query": "a", "texts": []})).await;
    refused(&seen, "`texts` is empty");

    let seen = call(
        &t,
        "cluster_texts",
        json!({"texts": ["a", "b"], "path": "rows.csv"}),
    )
    .await;
    refused(&seen, "either `texts` or `path`, not both");

    let seen = call(
        &t,
        "classify_zero_shot",
        json!({"labels": ["only"], "texts": ["x"]}),
    )
    .await;
    refused(&seen, "give from 2 to 50 labels");
}

#[tokio::test]
async fn a_file_over_the_size_cap_is_read_bounded_to_whole_lines_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    // 200 lines of 20 bytes; the cap of 610 bytes holds 30 of them and half of the next.
    let text: String = (0..200).map(|i| format!("line number {i:07}\n")).collect();
    std::fs::write(dir.path().join("big.txt"), &text).unwrap();
    let spec = ModelSpec {
        repo: "cairn-tests/no-such-model".into(),
        revision: "none".into(),
    };
    let ws = Workspace::new(vec![dir.path().to_path_buf()])
        .unwrap()
        .with_max_file_size(610);
    let t = ml_tools(Ml::new(Some(Arc::new(ws)), spec));
    // k above the lines read: refused after reading, before any model, naming the count.
    let seen = call(&t, "cluster_texts", json!({"path": "big.txt", "k": 31})).await;
    refused(&seen, "30 texts are too few to cluster: give at least 31");
}

#[tokio::test]
async fn a_missing_model_is_an_error_that_says_how_to_get_it() {
    // Offline (as the gate's runs are), a model not in the cache fails at once, without the Hub.
    if !model_tests() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = modelless(dir.path());
    let seen = call(&t, "text_similarity", json!({"query": "a", "texts": ["b"]})).await;
    refused(&seen, "the embedding model is not available");
}

#[test]
fn the_embedding_tools_schemas_describe_every_field_and_keep_enums_plain() {
    let names = [
        "text_similarity",
        "cluster_texts",
        "find_near_duplicates",
        "classify_zero_shot",
        "train_text_classifier",
        "classify_texts",
    ];
    for name in names {
        let entry = cairn_ml::ML_TOOLS
            .iter()
            .find(|e| e.name() == name)
            .unwrap_or_else(|| panic!("{name} is not in ML_TOOLS"));
        let info = entry.info();
        assert_eq!(info.category, "ai", "{name}");
        let schema = Value::Object((*info.tool.input_schema).clone());
        assert_eq!(schema["additionalProperties"], false, "{name}");
        for (field, p) in schema["properties"].as_object().unwrap() {
            assert!(
                p["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{name}.{field}: {p:#}"
            );
            if let Some(values) = p.get("enum") {
                assert!(
                    values.as_array().unwrap().iter().all(Value::is_string),
                    "{name}.{field}: {p:#}"
                );
            }
        }
    }
    let cluster = cairn_ml::ML_TOOLS
        .iter()
        .find(|e| e.name() == "cluster_texts")
        .unwrap();
    let schema = Value::Object((*cluster.info().tool.input_schema).clone());
    assert_eq!(
        schema["properties"]["method"]["enum"],
        json!(["kmeans", "agglomerative"]),
        "{schema:#}"
    );
    let train = cairn_ml::ML_TOOLS
        .iter()
        .find(|e| e.name() == "train_text_classifier")
        .unwrap();
    assert!(train.info().agent_only);
}
