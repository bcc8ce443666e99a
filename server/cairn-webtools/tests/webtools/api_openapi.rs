//! OpenAPI through the API tools: a petstore spec (OpenAPI 3 JSON in the workspace, OpenAPI 3
//! and Swagger 2 YAML served over loopback) is listed, `openapi_call` builds the URL, headers
//! and body the spec describes and checks required parameters, and specs the user configured
//! become one tool per operation with a schema generated from the spec.

use crate::api_support;

use std::sync::Arc;

use api_support::{Server, TestVault, api, fails, json_answer, ok, tools};
use cairn_agent::tools::{Effect, ToolHost};
use cairn_webtools::api::{ApiAuth, AuthScheme, ConfiguredOperations, OpenApiSource, api_tools};
use cairn_workspace::{AccessRules, ExactApprovals, Workspace};
use serde_json::{Value, json};

const LONG_ID: &str = "listAllTheVaccinationRecordsOfOnePetIncludingBoostersAndTheirDatesPlease";

fn petstore_json(server: &str) -> String {
    json!({
        "openapi": "3.0.3",
        "info": {"title": "Petstore", "version": "1"},
        "servers": [{"url": format!("{server}/v1")}],
        "paths": {
            "/pets": {
                "get": {
                    "operationId": "listPets",
                    "summary": "List pets",
                    "parameters": [
                        {"name": "limit", "in": "query", "description": "How many.", "schema": {"type": "integer"}},
                        {"$ref": "#/components/parameters/TraceId"}
                    ],
                    "responses": {"200": {"description": "ok"}}
                },
                "post": {
                    "operationId": "createPet",
                    "summary": "Create a pet",
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewPet"}}}},
                    "responses": {"201": {"description": "created"}}
                }
            },
            "/pets/{petId}": {
                "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "string"}}],
                "get": {"operationId": "showPetById", "summary": "Info for a specific pet"},
                "delete": {"operationId": "deletePet", "summary": "Delete a pet"}
            },
            "/pets/{petId}/vaccinations": {
                "get": {
                    "operationId": LONG_ID,
                    "parameters": [{"name": "petId", "in": "path", "required": true, "schema": {"type": "string"}}]
                }
            }
        },
        "components": {
            "parameters": {"TraceId": {"name": "X-Trace-Id", "in": "header", "schema": {"type": "string"}}},
            "schemas": {"NewPet": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "tag": {"type": "string"}}}}
        }
    })
    .to_string()
}

/// OpenAPI 3 in YAML: a relative server (resolved against where the spec came from) and
/// integer response keys, which YAML allows and JSON does not.
const PETSTORE_YAML: &str = r#"
openapi: 3.0.0
info:
  title: Petstore YAML
  version: "1"
servers:
  - url: /api
paths:
  /pets/{petId}:
    get:
      operationId: getPet
      summary: Get one pet
      parameters:
        - name: petId
          in: path
          required: true
          schema:
            type: integer
        - name: fields
          in: query
          schema:
            type: array
            items:
              type: string
      responses:
        200:
          description: ok
"#;

fn swagger_yaml(host: &str) -> String {
    format!(
        r#"
swagger: "2.0"
info: {{title: Old store, version: "1"}}
host: "{host}"
basePath: /v2
schemes: [http]
paths:
  /pet:
    post:
      operationId: addPet
      parameters:
        - in: body
          name: body
          required: true
          schema:
            type: object
            properties:
              name: {{type: string}}
  /pet/{{petId}}:
    post:
      operationId: updatePetWithForm
      consumes: [application/x-www-form-urlencoded]
      parameters:
        - {{name: petId, in: path, required: true, type: integer}}
        - {{name: name, in: formData, type: string}}
"#
    )
}

struct Fixture {
    server: Server,
    _dir: tempfile::TempDir,
    workspace: Arc<Workspace>,
}

/// A server that answers JSON echoing nothing, serves the YAML specs, and a workspace holding
/// the JSON spec (servers on `localhost`, where the test secret is bound).
async fn fixture() -> Fixture {
    let server = Server::start(|r, base| match r.path() {
        "/specs/petstore.yaml" => (200, vec![], PETSTORE_YAML.to_owned()),
        "/specs/swagger.yaml" => (
            200,
            vec![],
            swagger_yaml(base.trim_start_matches("http://")),
        ),
        _ => json_answer(r#"{"ok":true}"#),
    })
    .await;
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("tempdir: {e}"),
    };
    let spec = petstore_json(&format!("http://localhost:{}", server.addr.port()));
    if let Err(e) = std::fs::write(dir.path().join("petstore.json"), spec) {
        panic!("write: {e}");
    }
    let workspace = match Workspace::new(vec![dir.path().to_path_buf()]) {
        Ok(w) => Arc::new(w),
        Err(e) => panic!("workspace: {e}"),
    };
    Fixture {
        server,
        _dir: dir,
        workspace,
    }
}

fn vault() -> TestVault {
    TestVault::default().with("petstore", "pk_SECRET", &["localhost"])
}

#[tokio::test(flavor = "multi_thread")]
async fn operations_are_listed_from_workspace_json_and_served_yaml() {
    let f = fixture().await;
    let t = api_tools(api(vault()).with_workspace(f.workspace.clone()));
    let out = ok(&t, "openapi_operations", json!({"spec": "petstore.json"})).await;
    assert!(
        out.starts_with("OpenAPI 3.0.3 \"Petstore\": 5 operations"),
        "{out}"
    );
    assert!(out.contains("listPets GET /pets — List pets"), "{out}");
    assert!(out.contains("    limit (query, integer)"), "{out}");
    assert!(out.contains("    X-Trace-Id (header, string)"), "{out}");
    assert!(out.contains("createPet POST /pets — Create a pet"), "{out}");
    assert!(
        out.contains("    body (application/json, required)"),
        "{out}"
    );
    assert!(out.contains("deletePet DELETE /pets/{petId}"), "{out}");
    assert!(out.contains("    petId (path, required, string)"), "{out}");
    let filtered = ok(
        &t,
        "openapi_operations",
        json!({"spec": "petstore.json", "filter": "delete"}),
    )
    .await;
    assert!(filtered.contains("(1 matching)"), "{filtered}");
    let yaml = ok(
        &t,
        "openapi_operations",
        json!({"spec": f.server.url("/specs/petstore.yaml")}),
    )
    .await;
    assert!(
        yaml.starts_with("OpenAPI 3.0.0 \"Petstore YAML\": 1 operations"),
        "{yaml}"
    );
    assert!(
        yaml.contains(&format!("Servers: {}", f.server.url("/api"))),
        "{yaml}"
    );
    assert!(
        yaml.contains("getPet GET /pets/{petId} — Get one pet"),
        "{yaml}"
    );
    let swagger = ok(
        &t,
        "openapi_operations",
        json!({"spec": f.server.url("/specs/swagger.yaml")}),
    )
    .await;
    assert!(
        swagger.starts_with("Swagger 2.0 \"Old store\": 2 operations"),
        "{swagger}"
    );
    assert!(
        swagger.contains(&format!("Servers: {}", f.server.url("/v2"))),
        "{swagger}"
    );
    assert!(swagger.contains("    name (formData, string)"), "{swagger}");
}

#[tokio::test(flavor = "multi_thread")]
async fn spec_loading_errors_are_readable() {
    let f = fixture().await;
    let t = api_tools(api(vault()).with_workspace(f.workspace.clone()));
    let missing = fails(&t, "openapi_operations", json!({"spec": "nope.yaml"})).await;
    assert!(missing.contains("nope.yaml"), "{missing}");
    let outside = fails(&t, "openapi_operations", json!({"spec": "/etc/passwd"})).await;
    assert!(!outside.contains("root:"), "{outside}");
    let not_spec = fails(
        &t,
        "openapi_operations",
        json!({"spec": f.server.url("/other")}),
    )
    .await;
    assert!(
        not_spec.contains("not an OpenAPI 3.x or Swagger 2.0 spec"),
        "{not_spec}"
    );
    let no_ws = tools(vault());
    let no_root = fails(
        &no_ws,
        "openapi_operations",
        json!({"spec": "petstore.json"}),
    )
    .await;
    assert!(no_root.contains("no workspace"), "{no_root}");
}

#[tokio::test(flavor = "multi_thread")]
async fn openapi_call_builds_the_url_headers_and_body_from_the_spec() {
    let f = fixture().await;
    let t = api_tools(api(vault()).with_workspace(f.workspace.clone()));
    let call = |id: &str, params: Value, body: Option<Value>| {
        let mut args = json!({"spec": "petstore.json", "operation_id": id, "params": params});
        if let Some(b) = body {
            args["body"] = b;
        }
        args
    };
    ok(
        &t,
        "openapi_call",
        call("showPetById", json!({"petId": "a b/c"}), None),
    )
    .await;
    ok(
        &t,
        "openapi_call",
        call("listPets", json!({"limit": 5, "X-Trace-Id": "t-9"}), None),
    )
    .await;
    let created = ok(
        &t,
        "openapi_call",
        call("createPet", json!({}), Some(json!({"name": "Rex"}))),
    )
    .await;
    assert!(created.contains("\"ok\": true"), "{created}");
    let seen = f.server.requests();
    assert_eq!(seen[0].method, "GET");
    assert_eq!(seen[0].target, "/v1/pets/a%20b%2Fc");
    assert_eq!(seen[1].target, "/v1/pets?limit=5");
    assert_eq!(seen[1].header("x-trace-id"), Some("t-9"));
    assert_eq!(seen[2].method, "POST");
    assert_eq!(seen[2].target, "/v1/pets");
    assert_eq!(seen[2].body, r#"{"name":"Rex"}"#);
    assert_eq!(seen[2].header("content-type"), Some("application/json"));
    // base_url replaces the spec's servers.
    let other = Server::start(|_, _| json_answer("{}")).await;
    ok(
        &t,
        "openapi_call",
        json!({"spec": "petstore.json", "operation_id": "deletePet", "params": {"petId": "7"}, "base_url": other.url("/v9")}),
    )
    .await;
    assert_eq!(other.requests()[0].method, "DELETE");
    assert_eq!(other.requests()[0].target, "/v9/pets/7");
    // Checked before anything is sent.
    let before = f.server.requests().len();
    let missing = fails(&t, "openapi_call", call("showPetById", json!({}), None)).await;
    assert!(
        missing.contains("needs the parameter(s) petId"),
        "{missing}"
    );
    let no_body = fails(&t, "openapi_call", call("createPet", json!({}), None)).await;
    assert!(no_body.contains("needs a request body"), "{no_body}");
    let unknown = fails(
        &t,
        "openapi_call",
        call("listPets", json!({"limt": 1}), None),
    )
    .await;
    assert!(
        unknown.contains("no parameter limt") && unknown.contains("limit, X-Trace-Id"),
        "{unknown}"
    );
    let no_op = fails(&t, "openapi_call", call("feedPet", json!({}), None)).await;
    assert!(
        no_op.contains("no operation \"feedPet\"") && no_op.contains("listPets"),
        "{no_op}"
    );
    assert_eq!(f.server.requests().len(), before);
}

#[tokio::test(flavor = "multi_thread")]
async fn swagger_2_body_and_form_parameters_are_sent() {
    let f = fixture().await;
    let t = tools(vault());
    let spec = f.server.url("/specs/swagger.yaml");
    ok(
        &t,
        "openapi_call",
        json!({"spec": spec, "operation_id": "addPet", "body": {"name": "Tom"}}),
    )
    .await;
    ok(
        &t,
        "openapi_call",
        json!({"spec": spec, "operation_id": "updatePetWithForm", "params": {"petId": 3, "name": "Tom Cat"}}),
    )
    .await;
    let seen: Vec<_> = f
        .server
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST")
        .collect();
    assert_eq!(seen[0].target, "/v2/pet");
    assert_eq!(seen[0].body, r#"{"name":"Tom"}"#);
    assert_eq!(seen[1].target, "/v2/pet/3");
    assert_eq!(seen[1].body, "name=Tom%20Cat");
    assert_eq!(
        seen[1].header("content-type"),
        Some("application/x-www-form-urlencoded")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn configured_specs_become_tools_with_generated_schemas() {
    let f = fixture().await;
    let auth = ApiAuth {
        secret: "petstore".into(),
        scheme: AuthScheme::Header,
        name: Some("X-Api-Key".into()),
    };
    let sources = [
        OpenApiSource {
            name: "pets".into(),
            spec: "petstore.json".into(),
            base_url: None,
            auth: Some(auth),
        },
        OpenApiSource {
            name: "broken".into(),
            spec: "missing.yaml".into(),
            base_url: None,
            auth: None,
        },
        OpenApiSource {
            name: "yaml store".into(),
            spec: f.server.url("/specs/petstore.yaml"),
            base_url: None,
            auth: None,
        },
    ];
    let t: ConfiguredOperations =
        ConfiguredOperations::load(api(vault()).with_workspace(f.workspace.clone()), &sources)
            .await;
    assert_eq!(t.problems().len(), 1, "{:?}", t.problems());
    assert!(t.problems()[0].contains("broken"), "{:?}", t.problems());
    let listed = t.list();
    let names: Vec<String> = listed.iter().map(|i| i.tool.name.to_string()).collect();
    for expected in [
        "pets_listPets",
        "pets_createPet",
        "pets_showPetById",
        "pets_deletePet",
        "yaml_store_getPet",
    ] {
        assert!(names.iter().any(|n| n == expected), "{expected}: {names:?}");
    }
    assert!(names.iter().all(|n| n.len() <= 64), "{names:?}");
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("pets_listAllTheVaccination") && n.len() == 64),
        "{names:?}"
    );
    let info = |name: &str| {
        listed
            .iter()
            .find(|i| i.tool.name == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} not listed"))
    };
    let show = info("pets_showPetById");
    assert_eq!(show.effect, Effect::Network);
    assert_eq!(show.category, "api");
    let schema = Value::Object((*show.tool.input_schema).clone());
    assert_eq!(schema["properties"]["petId"]["type"], "string");
    assert_eq!(schema["required"], json!(["petId"]));
    assert_eq!(schema["additionalProperties"], false);
    assert!(
        show.tool
            .description
            .as_deref()
            .unwrap_or("")
            .contains("GET /pets/{petId}")
    );
    let create = Value::Object((*info("pets_createPet").tool.input_schema).clone());
    assert_eq!(
        create["properties"]["body"]["properties"]["name"]["type"],
        "string"
    );
    assert_eq!(create["properties"]["body"]["required"], json!(["name"]));
    assert_eq!(create["required"], json!(["body"]));
    let list = Value::Object((*info("pets_listPets").tool.input_schema).clone());
    assert_eq!(list["properties"]["limit"]["type"], "integer");
    assert!(
        list["properties"]["limit"]["description"]
            .as_str()
            .unwrap_or("")
            .contains("How many.")
    );
    let annotations = |name: &str| info(name).tool.annotations.unwrap_or_default();
    assert_eq!(annotations("pets_listPets").read_only_hint, Some(true));
    assert_eq!(annotations("pets_deletePet").destructive_hint, Some(true));
    assert_eq!(annotations("pets_createPet").read_only_hint, Some(false));
    let yaml_schema = Value::Object((*info("yaml_store_getPet").tool.input_schema).clone());
    assert_eq!(yaml_schema["properties"]["fields"]["type"], "array");

    // Calling one: the configured secret goes where the config says, to its bound host.
    let out = ok(
        &t,
        "pets_createPet",
        json!({"body": {"name": "Rex", "tag": "dog"}}),
    )
    .await;
    assert!(out.contains("\"ok\": true"), "{out}");
    assert!(!out.contains("pk_SECRET"), "{out}");
    let r = f.server.requests().into_iter().last().unwrap_or_default();
    assert_eq!((r.method.as_str(), r.target.as_str()), ("POST", "/v1/pets"));
    assert_eq!(r.header("x-api-key"), Some("pk_SECRET"));
    assert_eq!(r.body, r#"{"name":"Rex","tag":"dog"}"#);
    let missing = fails(&t, "pets_showPetById", json!({})).await;
    assert!(missing.contains("petId"), "{missing}");
    // Long answers page like every API tool: the schema offers start_index and max_length.
    assert_eq!(list["properties"]["max_length"]["type"], "integer");
    let paged = ok(
        &t,
        "pets_listPets",
        json!({"limit": 1, "start_index": 2, "max_length": 6}),
    )
    .await;
    // The answer pretty-printed is `{\n  "ok": true\n}`: characters 2 to 8 are `  "ok"`.
    assert!(
        paged.ends_with("\n  \"ok\"\n\n[body truncated; call again with start_index=8]"),
        "{paged}"
    );
    let last = f.server.requests().into_iter().last().unwrap_or_default();
    assert_eq!(last.target, "/v1/pets?limit=1");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_configured_spec_whose_secret_is_not_bound_to_its_server_sends_nothing() {
    let f = fixture().await;
    let elsewhere = TestVault::default().with("petstore", "pk_SECRET", &["api.example.com"]);
    let sources = [OpenApiSource {
        name: "pets".into(),
        spec: "petstore.json".into(),
        base_url: None,
        auth: Some(ApiAuth {
            secret: "petstore".into(),
            scheme: AuthScheme::Bearer,
            name: None,
        }),
    }];
    let t =
        ConfiguredOperations::load(api(elsewhere).with_workspace(f.workspace.clone()), &sources)
            .await;
    assert!(t.problems().is_empty(), "{:?}", t.problems());
    let refused = fails(&t, "pets_listPets", json!({})).await;
    assert!(
        refused.contains("petstore") && !refused.contains("pk_SECRET"),
        "{refused}"
    );
    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    assert!(f.server.requests().is_empty(), "{:?}", f.server.requests());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spec_path_the_user_protects_is_refused_before_it_is_read_and_named_for_approval() {
    let f = fixture().await;
    if let Err(e) = std::fs::write(
        f._dir.path().join(".env"),
        "openapi: 3.0.0\nTOKEN: s3cret\n",
    ) {
        panic!("write: {e}");
    }
    // The default rules: read everything, the deny list (secrets such as `.env`) protected.
    let protecting = match Workspace::new(vec![f._dir.path().to_path_buf()]) {
        Ok(w) => w.with_access(
            |_| AccessRules::new("tester", None, None),
            ExactApprovals::new(),
        ),
        Err(e) => panic!("workspace: {e}"),
    };
    let t = api_tools(api(vault()).with_workspace(Arc::new(protecting)));
    for tool in ["openapi_operations", "openapi_call"] {
        let mut args = serde_json::Map::new();
        args.insert("spec".into(), json!(".env"));
        args.insert("operation_id".into(), json!("x"));
        if tool == "openapi_operations" {
            args.remove("operation_id");
        }
        let result = t.call(tool, args, api_support::context()).await;
        assert_eq!(result.is_error, Some(true), "{tool}: {result:?}");
        let protected = cairn_agent::tools::protected_of(&result);
        assert_eq!(protected.len(), 1, "{tool}: {result:?}");
        assert_eq!(protected[0].path, ".env", "{tool}");
        assert_eq!(protected[0].operation, "read", "{tool}");
        assert!(!format!("{result:?}").contains("s3cret"), "{tool}");
    }
    // A spec URL declares no workspace path: nothing is refused on its account.
    let listed = ok(
        &t,
        "openapi_operations",
        json!({"spec": f.server.url("/specs/petstore.yaml")}),
    )
    .await;
    assert!(listed.contains("getPet"), "{listed}");
}
