//! The AWS service tools against moto: each test makes its own resources (unique names) through
//! the services' own APIs, signed by the guard like the tools' requests, then calls the tools
//! as the model does and checks what the user would read, and what the refusals leave in place.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use base64::Engine;
use cairn_test_support::tools::call;
use cairn_web::Method;
use serde_json::{Value, json};

use common::{approve, aws_json, aws_send as send, setup, unique};

/// An AWS query-protocol call, its XML answer (the call must succeed).
async fn query(service: &str, version: &str, action: &str, params: &[(&str, &str)]) -> String {
    let mut all = vec![("Action", action), ("Version", version)];
    all.extend_from_slice(params);
    common::aws_form(service, &all).await
}

/// The text of the first element `name` in an XML answer.
fn xml_first(text: &str, name: &str) -> String {
    let doc = roxmltree::Document::parse(text).unwrap();
    doc.descendants()
        .find(|n| n.tag_name().name() == name)
        .and_then(|n| n.text())
        .unwrap_or_default()
        .to_owned()
}

const EC2: &str = "2016-11-15";

async fn instance_state(id: &str) -> String {
    let answer = query("ec2", EC2, "DescribeInstances", &[("InstanceId.1", id)]).await;
    let doc = roxmltree::Document::parse(&answer).unwrap();
    doc.descendants()
        .find(|n| n.tag_name().name() == "instanceState")
        .and_then(|s| s.children().find(|c| c.tag_name().name() == "name"))
        .and_then(|n| n.text())
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn ec2_lists_instances_and_stopping_asks_first_naming_them() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path());
    let name = unique("cairn-web");
    let answer = query(
        "ec2",
        EC2,
        "RunInstances",
        &[
            ("ImageId", "ami-12c6146b"),
            ("InstanceType", "t3.micro"),
            ("MinCount", "1"),
            ("MaxCount", "1"),
            ("TagSpecification.1.ResourceType", "instance"),
            ("TagSpecification.1.Tag.1.Key", "Name"),
            ("TagSpecification.1.Tag.1.Value", &name),
        ],
    )
    .await;
    let id = xml_first(&answer, "instanceId");
    assert!(id.starts_with("i-"), "{answer}");

    let r = call(
        &s.tools,
        "ec2_instances",
        json!({ "tag": format!("Name={name}") }),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text
            .contains(&format!("| {id} | {name} | t3.micro | running | us-east-1")),
        "{}",
        r.text
    );
    assert!(r.text.contains("(1 row)"), "{}", r.text);

    // A tag key alone matches any value.
    let r = call(
        &s.tools,
        "ec2_instances",
        json!({ "tag": "Name", "instance_ids": [id] }),
    )
    .await;
    assert!(
        r.text.contains(&format!("| {id} | {name} |")) && r.text.contains("(1 row)"),
        "{}",
        r.text
    );
    let r = call(
        &s.tools,
        "ec2_instances",
        json!({ "tag": "Owner", "instance_ids": [id] }),
    )
    .await;
    assert!(!r.is_error && r.text.contains("(0 rows)"), "{}", r.text);

    // Stopping asks, naming the instance; nothing changes until the user says yes.
    let args = json!({ "action": "stop", "instance_ids": [id] });
    let r = call(&s.tools, "ec2_start_stop", args.clone()).await;
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text.contains("refused for now") && r.text.contains(&id) && r.text.contains(&name),
        "{}",
        r.text
    );
    let asked = cairn_agent::tools::protected_of(&r.result);
    assert!(asked[0].path.contains(&id), "{asked:?}");
    assert_eq!(instance_state(&id).await, "running");

    approve(&s.approvals, &r.result);
    let r = call(&s.tools, "ec2_start_stop", args).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text
            .contains(&format!("{id} \"{name}\": running -> stopping")),
        "{}",
        r.text
    );
    assert_eq!(instance_state(&id).await, "stopped");

    let r = call(
        &s.tools,
        "ec2_instances",
        json!({ "state": "stopped", "instance_ids": [id] }),
    )
    .await;
    assert!(
        r.text
            .contains(&format!("| {id} | {name} | t3.micro | stopped |")),
        "{}",
        r.text
    );

    // Starting is a plain write: no strict question.
    let r = call(
        &s.tools,
        "ec2_start_stop",
        json!({ "action": "start", "instance_ids": [id] }),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.contains("stopped -> pending"), "{}", r.text);
    assert_eq!(instance_state(&id).await, "running");
}

#[tokio::test]
async fn ec2_refuses_bad_ids_and_states_and_says_what_an_unknown_instance_is() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path());
    let r = call(
        &s.tools,
        "ec2_start_stop",
        json!({ "action": "stop", "instance_ids": ["i-0abc; rm -rf /"] }),
    )
    .await;
    assert!(
        r.is_error && r.text.contains("is not an instance id"),
        "{}",
        r.text
    );
    let r = call(&s.tools, "ec2_instances", json!({ "state": "asleep" })).await;
    assert!(
        r.is_error
            && r.text
                .contains("`state`: \"asleep\" is not one of pending, running"),
        "{}",
        r.text
    );
    let r = call(
        &s.tools,
        "ec2_start_stop",
        json!({ "action": "start", "instance_ids": ["i-00000000deadbeef0"] }),
    )
    .await;
    assert!(r.is_error, "{}", r.text);
    assert!(r.text.contains("InvalidInstanceID.NotFound"), "{}", r.text);
    // An account of another kind, or none by that name, is said plainly.
    let r = call(&s.tools, "ec2_instances", json!({ "account": "s3" })).await;
    assert!(
        r.is_error && r.text.contains("account `s3` is s3; this tool needs aws"),
        "{}",
        r.text
    );
    let r = call(&s.tools, "route53_records", json!({ "account": "prod" })).await;
    assert!(
        r.is_error
            && r.text
                .contains("no cloud account `prod`; configured: aws, azure, gcp, s3"),
        "{}",
        r.text
    );
    let ids: Vec<String> = (0..21).map(|i| format!("i-{i:017x}")).collect();
    let r = call(
        &s.tools,
        "ec2_start_stop",
        json!({ "action": "start", "instance_ids": ids }),
    )
    .await;
    assert!(r.is_error && r.text.contains("at most 20"), "{}", r.text);
}

const IAM: &str = "2010-05-08";

#[tokio::test]
async fn iam_lists_users_roles_and_a_users_policies() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path());
    let path = format!("/{}/", unique("cairn"));
    let user = unique("ada");
    let role = unique("deployer");
    query(
        "iam",
        IAM,
        "CreateUser",
        &[("UserName", &user), ("Path", &path)],
    )
    .await;
    let trust = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;
    query(
        "iam",
        IAM,
        "CreateRole",
        &[
            ("RoleName", &role),
            ("Path", &path),
            ("AssumeRolePolicyDocument", trust),
            ("Description", "deploys the app"),
        ],
    )
    .await;
    let doc = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}"#;
    let policy_name = unique("read-objects");
    let created = query(
        "iam",
        IAM,
        "CreatePolicy",
        &[("PolicyName", &policy_name), ("PolicyDocument", doc)],
    )
    .await;
    let arn = xml_first(&created, "Arn");
    query(
        "iam",
        IAM,
        "AttachUserPolicy",
        &[("UserName", &user), ("PolicyArn", &arn)],
    )
    .await;
    query(
        "iam",
        IAM,
        "PutUserPolicy",
        &[
            ("UserName", &user),
            ("PolicyName", "inline-notes"),
            ("PolicyDocument", doc),
        ],
    )
    .await;

    let r = call(
        &s.tools,
        "iam_list",
        json!({ "what": "users", "path_prefix": path }),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text
            .contains(&format!("| {user} | {path} | arn:aws:iam::")),
        "{}",
        r.text
    );
    assert!(r.text.contains("(1 row)"), "{}", r.text);
    let r = call(
        &s.tools,
        "iam_list",
        json!({ "what": "roles", "path_prefix": path }),
    )
    .await;
    assert!(
        r.text.contains(&role) && r.text.contains("deploys the app"),
        "{}",
        r.text
    );

    let r = call(
        &s.tools,
        "iam_list",
        json!({ "what": "policies", "user": user }),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text
            .contains(&format!("| {policy_name} | managed | {arn} |")),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("| inline-notes | inline | - |"),
        "{}",
        r.text
    );

    let r = call(
        &s.tools,
        "iam_list",
        json!({ "what": "policies", "user": unique("nobody") }),
    )
    .await;
    assert!(r.is_error && r.text.contains("no IAM user"), "{}", r.text);
    let r = call(&s.tools, "iam_list", json!({ "what": "policies" })).await;
    assert!(
        r.is_error && r.text.contains("exactly one of `user` or `role`"),
        "{}",
        r.text
    );
}

const LOGS: &str = "Logs_20140328";

#[tokio::test]
async fn logs_show_groups_and_the_newest_matching_events() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path());
    let group = format!("/cairn/{}", unique("app"));
    aws_json(
        "logs",
        &format!("{LOGS}.CreateLogGroup"),
        json!({ "logGroupName": group }),
    )
    .await;
    aws_json(
        "logs",
        &format!("{LOGS}.PutRetentionPolicy"),
        json!({ "logGroupName": group, "retentionInDays": 7 }),
    )
    .await;
    aws_json(
        "logs",
        &format!("{LOGS}.CreateLogStream"),
        json!({ "logGroupName": group, "logStreamName": "web-1" }),
    )
    .await;
    let now = chrono::Utc::now().timestamp_millis();
    let events: Vec<Value> = (0..6)
        .map(|i| {
            let level = if i % 2 == 0 { "ERROR" } else { "INFO" };
            json!({ "timestamp": now - 60_000 * (6 - i), "message": format!("{level} request {i}") })
        })
        .collect();
    aws_json(
        "logs",
        &format!("{LOGS}.PutLogEvents"),
        json!({ "logGroupName": group, "logStreamName": "web-1", "logEvents": events }),
    )
    .await;

    let r = call(&s.tools, "logs_groups", json!({ "prefix": group })).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.contains(&format!("| {group} |")) && r.text.contains("| 7 days |"),
        "{}",
        r.text
    );

    let r = call(
        &s.tools,
        "logs_events",
        json!({ "group": group, "pattern": "ERROR", "start": "1h" }),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    assert!(r.text.contains("3 matching event(s)"), "{}", r.text);
    for i in [0, 2, 4] {
        assert!(
            r.text.contains(&format!("| web-1 | ERROR request {i} |")),
            "{}",
            r.text
        );
    }
    assert!(!r.text.contains("INFO"), "{}", r.text);

    // The newest two of all six, oldest first.
    let r = call(&s.tools, "logs_events", json!({ "group": group, "max": 2 })).await;
    assert!(
        r.text.contains("6 matching event(s), the newest 2 shown"),
        "{}",
        r.text
    );
    let (a, b) = (
        r.text.find("INFO request 5").unwrap(),
        r.text.find("ERROR request 4").unwrap(),
    );
    assert!(b < a && !r.text.contains("request 3"), "{}", r.text);

    let r = call(
        &s.tools,
        "logs_events",
        json!({ "group": format!("/cairn/{}", unique("missing")) }),
    )
    .await;
    assert!(
        r.is_error && r.text.contains("no log group") && r.text.contains("logs_groups"),
        "{}",
        r.text
    );
    let r = call(
        &s.tools,
        "logs_events",
        json!({ "group": group, "start": "yesterday-ish" }),
    )
    .await;
    assert!(r.is_error && r.text.contains("is not a time"), "{}", r.text);
}

#[tokio::test]
async fn cloudwatch_metrics_shows_datapoints_of_a_metric() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path());
    let namespace = unique("Cairn/Test");
    let at = (chrono::Utc::now() - chrono::Duration::minutes(10))
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    for value in ["10", "30"] {
        query(
            "monitoring",
            "2010-08-01",
            "PutMetricData",
            &[
                ("Namespace", &namespace),
                ("MetricData.member.1.MetricName", "Latency"),
                ("MetricData.member.1.Value", value),
                ("MetricData.member.1.Unit", "Milliseconds"),
                ("MetricData.member.1.Timestamp", &at),
                ("MetricData.member.1.Dimensions.member.1.Name", "Service"),
                ("MetricData.member.1.Dimensions.member.1.Value", "api"),
            ],
        )
        .await;
    }
    let r = call(
        &s.tools,
        "cloudwatch_metrics",
        json!({
            "namespace": namespace, "metric": "Latency", "dimensions": { "Service": "api" },
            "start": "1h", "period": 3600, "statistics": ["Sum", "Maximum", "SampleCount"]
        }),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text
            .contains("| time (UTC) | Sum | Maximum | SampleCount | unit |"),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("| 40 | 30 | 2 | Milliseconds |"),
        "{}",
        r.text
    );

    let r = call(
        &s.tools,
        "cloudwatch_metrics",
        json!({ "namespace": namespace, "metric": "Latency", "start": "30d", "period": 60 }),
    )
    .await;
    assert!(
        r.is_error && r.text.contains("at most 1440") && r.text.contains("`period` 1860"),
        "{}",
        r.text
    );
    let r = call(
        &s.tools,
        "cloudwatch_metrics",
        json!({ "namespace": namespace, "metric": "Latency", "statistics": ["p99"] }),
    )
    .await;
    assert!(
        r.is_error && r.text.contains("\"p99\" is not one of"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn lambda_lists_and_invokes_a_function() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path());
    let role = unique("lambda-role");
    let created = query(
        "iam",
        IAM,
        "CreateRole",
        &[("RoleName", &role), ("AssumeRolePolicyDocument", "{}")],
    )
    .await;
    let role_arn = xml_first(&created, "Arn");
    let function = unique("cairn-fn");
    let zip = base64::engine::general_purpose::STANDARD.encode(b"PK code of the test function");
    let body = json!({
        "FunctionName": function, "Runtime": "python3.12", "Role": role_arn, "Handler": "app.handler",
        "Code": { "ZipFile": zip }, "MemorySize": 256, "Timeout": 15,
    });
    let (status, text) = send(
        Method::POST,
        "lambda",
        "/2015-03-31/functions",
        Some((serde_json::to_vec(&body).unwrap(), "application/json")),
        &[],
    )
    .await;
    assert!(status < 300, "{status} {text}");

    let r = call(&s.tools, "lambda_functions", json!({})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.contains(&format!(
            "| {function} | python3.12 | app.handler | 256 MB | 15 s | "
        )),
        "{}",
        r.text
    );

    // Without Docker, moto's function returns the event it was given.
    let r = call(
        &s.tools,
        "lambda_invoke",
        json!({ "function": function, "payload": { "hello": "cairn", "n": 3 } }),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.contains(&format!(
            "invoked {function} (python3.12, Active) in aws: status 200"
        )),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("the function returned without error"),
        "{}",
        r.text
    );
    assert!(r.text.contains("\"hello\": \"cairn\""), "{}", r.text);

    let r = call(
        &s.tools,
        "lambda_invoke",
        json!({ "function": unique("no-such-fn") }),
    )
    .await;
    assert!(
        r.is_error && r.text.contains("no Lambda function") && r.text.contains("lambda_functions"),
        "{}",
        r.text
    );
    let big = "x".repeat(300 * 1024);
    let r = call(
        &s.tools,
        "lambda_invoke",
        json!({ "function": function, "payload": { "big": big } }),
    )
    .await;
    assert!(
        r.is_error && r.text.contains("at most 262144 are sent"),
        "{}",
        r.text
    );
}

const CFN: &str = "2010-05-15";

#[tokio::test]
async fn cloudformation_shows_stacks_outputs_hidden_noecho_parameters_and_events() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path());
    let stack = unique("cairn-stack");
    let queue = unique("cairn-cfn-queue");
    let template = json!({
        "Description": "the test stack",
        "Parameters": { "Env": { "Type": "String" }, "DbPassword": { "Type": "String", "NoEcho": true } },
        "Resources": { "Jobs": { "Type": "AWS::SQS::Queue", "Properties": { "QueueName": queue } } },
        "Outputs": { "JobsUrl": { "Value": { "Ref": "Jobs" }, "Description": "where jobs go" } }
    })
    .to_string();
    query(
        "cloudformation",
        CFN,
        "CreateStack",
        &[
            ("StackName", &stack),
            ("TemplateBody", &template),
            ("Parameters.member.1.ParameterKey", "Env"),
            ("Parameters.member.1.ParameterValue", "prod"),
            ("Parameters.member.2.ParameterKey", "DbPassword"),
            ("Parameters.member.2.ParameterValue", "hunter2-cairn"),
        ],
    )
    .await;

    let r = call(&s.tools, "cloudformation_stacks", json!({})).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.contains(&format!("| {stack} | CREATE_COMPLETE |")),
        "{}",
        r.text
    );

    let r = call(&s.tools, "cloudformation_stacks", json!({ "stack": stack })).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.contains(&format!(
            "stack {stack} in aws (us-east-1): CREATE_COMPLETE"
        )),
        "{}",
        r.text
    );
    assert!(r.text.contains("description: the test stack"), "{}", r.text);
    assert!(
        r.text.contains(&format!(
            "| JobsUrl | https://sqs.us-east-1.amazonaws.com/123456789012/{queue} | where jobs go |"
        )),
        "{}",
        r.text
    );
    assert!(r.text.contains("| Env | prod |"), "{}", r.text);
    assert!(r.text.contains("| DbPassword | *** |"), "{}", r.text);
    assert!(!r.text.contains("hunter2"), "{}", r.text);

    let r = call(&s.tools, "cloudformation_events", json!({ "stack": stack })).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.contains("0 failure(s)") && !r.text.contains("failures first"),
        "{}",
        r.text
    );
    assert!(
        r.text.contains(&format!(
            "| {stack} | AWS::CloudFormation::Stack | CREATE_COMPLETE |"
        )),
        "{}",
        r.text
    );
    assert!(
        r.text.contains("| CREATE_IN_PROGRESS | User Initiated |"),
        "{}",
        r.text
    );

    let missing = unique("no-stack");
    for tool in ["cloudformation_stacks", "cloudformation_events"] {
        let r = call(&s.tools, tool, json!({ "stack": missing })).await;
        assert!(r.is_error, "{}", r.text);
        assert!(
            r.text.contains(&format!("no stack \"{missing}\" in aws")),
            "{tool}: {}",
            r.text
        );
    }
}

#[tokio::test]
async fn route53_lists_zones_and_a_zones_records_by_name_or_id() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path());
    let domain = format!("{}.example.com", unique("cairn"));
    let create = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><CreateHostedZoneRequest xmlns="https://route53.amazonaws.com/doc/2013-04-01/"><Name>{domain}</Name><CallerReference>{}</CallerReference><HostedZoneConfig><Comment>cairn test zone</Comment></HostedZoneConfig></CreateHostedZoneRequest>"#,
        unique("ref")
    );
    let (status, text) = send(
        Method::POST,
        "route53",
        "/2013-04-01/hostedzone",
        Some((create.into_bytes(), "text/xml")),
        &[],
    )
    .await;
    assert!(status < 300, "{status} {text}");
    let id = xml_first(&text, "Id")
        .trim_start_matches("/hostedzone/")
        .to_owned();
    let change = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><ChangeResourceRecordSetsRequest xmlns="https://route53.amazonaws.com/doc/2013-04-01/"><ChangeBatch><Changes><Change><Action>CREATE</Action><ResourceRecordSet><Name>www.{domain}</Name><Type>A</Type><TTL>300</TTL><ResourceRecords><ResourceRecord><Value>192.0.2.10</Value></ResourceRecord><ResourceRecord><Value>192.0.2.11</Value></ResourceRecord></ResourceRecords></ResourceRecordSet></Change></Changes></ChangeBatch></ChangeResourceRecordSetsRequest>"#
    );
    let (status, text) = send(
        Method::POST,
        "route53",
        &format!("/2013-04-01/hostedzone/{id}/rrset"),
        Some((change.into_bytes(), "text/xml")),
        &[],
    )
    .await;
    assert!(status < 300, "{status} {text}");

    let r = call(&s.tools, "route53_records", json!({ "max": 200 })).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.contains(&format!("| {id} | {domain}. | public |"))
            && r.text.contains("cairn test zone"),
        "{}",
        r.text
    );

    for zone in [domain.clone(), id.clone()] {
        let r = call(&s.tools, "route53_records", json!({ "zone": zone })).await;
        assert!(!r.is_error, "{}", r.text);
        assert!(
            r.text.contains(&format!(
                "| www.{domain}. | A | 300 | 192.0.2.10, 192.0.2.11 |"
            )),
            "{}",
            r.text
        );
        assert!(
            r.text.contains(&format!("| {domain}. | NS |")),
            "{}",
            r.text
        );
    }

    let r = call(
        &s.tools,
        "route53_records",
        json!({ "zone": format!("{}.example.org", unique("nowhere")) }),
    )
    .await;
    assert!(
        r.is_error && r.text.contains("no hosted zone named"),
        "{}",
        r.text
    );
    let r = call(&s.tools, "route53_records", json!({ "zone": "Z/../../x" })).await;
    assert!(
        r.is_error
            && r.text
                .contains("neither a hosted zone id nor a domain name"),
        "{}",
        r.text
    );
}

const ECS: &str = "AmazonEC2ContainerServiceV20141113";

#[tokio::test]
async fn ecs_lists_clusters_and_a_clusters_services() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path());
    let cluster = unique("cairn-cluster");
    let family = unique("web");
    let service = unique("web-svc");
    aws_json(
        "ecs",
        &format!("{ECS}.CreateCluster"),
        json!({ "clusterName": cluster }),
    )
    .await;
    aws_json(
        "ecs",
        &format!("{ECS}.RegisterTaskDefinition"),
        json!({ "family": family, "containerDefinitions": [{ "name": "web", "image": "nginx:1.27", "memory": 128 }] }),
    )
    .await;
    aws_json(
        "ecs",
        &format!("{ECS}.CreateService"),
        json!({ "cluster": cluster, "serviceName": service, "taskDefinition": family, "desiredCount": 2 }),
    )
    .await;

    let r = call(&s.tools, "ecs_services", json!({ "max": 100 })).await;
    assert!(!r.is_error, "{}", r.text);
    // (moto counts neither the service nor its tasks in the cluster's numbers.)
    assert!(
        r.text.contains(&format!("| {cluster} | ACTIVE |")),
        "{}",
        r.text
    );

    let r = call(&s.tools, "ecs_services", json!({ "cluster": cluster })).await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.contains(&format!("| {service} | ACTIVE | 2 |")),
        "{}",
        r.text
    );
    assert!(r.text.contains(&format!("| {family}:1 |")), "{}", r.text);

    let r = call(
        &s.tools,
        "ecs_services",
        json!({ "cluster": unique("no-cluster") }),
    )
    .await;
    assert!(
        r.is_error && r.text.contains("no ECS cluster"),
        "{}",
        r.text
    );
}

/// The AWS tools, by name.
const AWS_TOOLS: &[&str] = &[
    "ec2_instances",
    "ec2_start_stop",
    "iam_list",
    "logs_groups",
    "logs_events",
    "cloudwatch_metrics",
    "lambda_functions",
    "lambda_invoke",
    "cloudformation_stacks",
    "cloudformation_events",
    "route53_records",
    "ecs_services",
];

/// What the catalog test checks of every tool, for these (no emulator needed: bad arguments
/// are refused before any request): each field described, unknown fields refused, and a
/// wrong or missing argument named.
#[tokio::test]
async fn the_aws_tools_describe_every_field_and_name_a_bad_argument() {
    let (cloud, _) = cairn_cloud::Cloud::new(
        &Default::default(),
        None,
        None,
        cairn_workspace::ExactApprovals::new(),
    );
    let tools = cairn_cloud::cloud_tools(cloud);
    for name in AWS_TOOLS {
        let entry = cairn_cloud::CLOUD_TOOLS
            .iter()
            .find(|e| e.name() == *name)
            .unwrap_or_else(|| panic!("{name} is not in CLOUD_TOOLS"));
        let info = entry.info();
        assert_eq!(info.category, "cloud", "{name}");
        assert!(
            !info
                .tool
                .description
                .as_deref()
                .unwrap_or_default()
                .is_empty()
        );
        let schema = Value::Object((*info.tool.input_schema).clone());
        assert_eq!(schema["additionalProperties"], false, "{name}");
        let properties = schema["properties"].as_object().unwrap();
        for (field, p) in properties {
            assert!(
                p["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{name}.{field}"
            );
        }
        let valid_of = |p: &Value| match p["type"].as_str() {
            Some("string") => p["enum"].get(0).cloned().unwrap_or(json!("x")),
            Some("integer") => json!(1),
            Some("array") => json!([]),
            _ => json!({}),
        };
        let required: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let base: serde_json::Map<String, Value> = required
            .iter()
            .map(|r| ((*r).to_owned(), valid_of(&properties[*r])))
            .collect();
        let mut cases = Vec::new();
        let mut unknown = base.clone();
        unknown.insert("zz_not_a_field".into(), json!(1));
        cases.push((unknown, "zz_not_a_field".to_owned()));
        if let Some(first) = required.first() {
            let mut missing = base.clone();
            missing.remove(*first);
            cases.push((missing, (*first).to_owned()));
        }
        if let Some((field, _)) = properties.iter().find(|(_, p)| p["type"] == "string") {
            let mut wrong = base.clone();
            wrong.insert(field.clone(), json!(12345));
            cases.push((wrong, field.clone()));
        }
        for (args, field) in cases {
            let r = call(&tools, name, Value::Object(args.clone())).await;
            assert!(r.is_error, "{name} {args:?}: {}", r.text);
            assert!(
                r.text.starts_with("invalid argument") && r.text.contains(&field),
                "{name} {args:?}: {}",
                r.text
            );
        }
    }
}

/// The token a listing's note says to pass as `argument` for the next page.
fn token_in(text: &str, argument: &str) -> String {
    let start = text
        .find(&format!("`{argument}: \""))
        .unwrap_or_else(|| panic!("no `{argument}` in: {text}"))
        + argument.len()
        + 4;
    text[start..][..text[start..].find('"').unwrap()].to_owned()
}

#[tokio::test]
async fn listings_are_capped_with_a_note_and_go_on_from_the_token_given() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path());
    let prefix = format!("/cairn/{}/", unique("paged"));
    for n in ["a", "b", "c"] {
        aws_json(
            "logs",
            &format!("{LOGS}.CreateLogGroup"),
            json!({ "logGroupName": format!("{prefix}{n}") }),
        )
        .await;
    }
    let r = call(
        &s.tools,
        "logs_groups",
        json!({ "prefix": prefix, "max": 2 }),
    )
    .await;
    assert!(!r.is_error, "{}", r.text);
    assert!(
        r.text.contains(&format!("| {prefix}a |")) && r.text.contains(&format!("| {prefix}b |")),
        "{}",
        r.text
    );
    assert!(!r.text.contains(&format!("| {prefix}c |")), "{}", r.text);
    assert!(
        r.text.contains("2 rows shown; more were left out"),
        "{}",
        r.text
    );
    let token = token_in(&r.text, "next_token");
    let r = call(
        &s.tools,
        "logs_groups",
        json!({ "prefix": prefix, "max": 2, "next_token": token }),
    )
    .await;
    assert!(
        r.text.contains(&format!("| {prefix}c |")) && r.text.contains("(1 row)"),
        "{}",
        r.text
    );

    let path = format!("/{}/", unique("paged"));
    let names: Vec<String> = (0..3).map(|i| format!("{}-{i}", unique("r"))).collect();
    for n in &names {
        query(
            "iam",
            IAM,
            "CreateUser",
            &[("UserName", n), ("Path", &path)],
        )
        .await;
        query(
            "iam",
            IAM,
            "CreateRole",
            &[
                ("RoleName", n),
                ("Path", &path),
                ("AssumeRolePolicyDocument", "{}"),
            ],
        )
        .await;
    }
    // Roles page on the service (`marker`).
    let r = call(
        &s.tools,
        "iam_list",
        json!({ "what": "roles", "path_prefix": path, "max": 2 }),
    )
    .await;
    assert!(
        r.text.contains("2 rows shown; more were left out"),
        "{}",
        r.text
    );
    let marker = token_in(&r.text, "marker");
    let second = call(
        &s.tools,
        "iam_list",
        json!({ "what": "roles", "path_prefix": path, "max": 2, "marker": marker }),
    )
    .await;
    assert!(second.text.contains("(1 row)"), "{}", second.text);
    for n in &names {
        assert!(
            r.text.contains(n.as_str()) ^ second.text.contains(n.as_str()),
            "{n}: {}\n{}",
            r.text,
            second.text
        );
    }
    // moto ignores the page size for users: the tool still shows no more than asked.
    let users = call(
        &s.tools,
        "iam_list",
        json!({ "what": "users", "path_prefix": path, "max": 2 }),
    )
    .await;
    assert!(
        users.text.contains("2 rows shown; more were left out"),
        "{}",
        users.text
    );
    assert!(
        users.text.contains("more were left out: raise `max`"),
        "{}",
        users.text
    );
    assert!(!r.text.contains(common::AWS_SECRET) && !second.text.contains(common::AWS_SECRET));
}

#[tokio::test]
async fn an_endpoint_that_does_not_answer_or_is_not_allowed_is_a_clear_error() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens on a port just freed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut accounts = common::accounts();
    accounts.get_mut("aws").unwrap().endpoint = Some(format!("http://127.0.0.1:{port}"));
    let s = common::setup_with(dir.path(), &accounts, common::guard(common::secrets()));
    let r = call(&s.tools, "ec2_instances", json!({})).await;
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text.contains(&format!("127.0.0.1:{port}"))
            && r.text.contains("the service did not answer"),
        "{}",
        r.text
    );
    assert!(!r.text.contains(common::AWS_SECRET), "{}", r.text);

    // The guard as users have it (no loopback): refused before anything leaves.
    let strict = std::sync::Arc::new(
        cairn_web::WebGuard::new(cairn_web::GuardConfig::default())
            .unwrap()
            .with_credentials(std::sync::Arc::new(common::secrets())),
    );
    let s = common::setup_with(dir.path(), &common::accounts(), strict);
    let group = format!("/cairn/{}", unique("never"));
    let r = call(&s.tools, "logs_groups", json!({ "prefix": group })).await;
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text.contains("refused 127.0.0.1") && r.text.contains("loopback"),
        "{}",
        r.text
    );
    assert!(!r.text.contains("did not answer"), "{}", r.text);
}

#[tokio::test]
async fn a_cancelled_run_stops_the_call() {
    if !common::emulators() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path());
    let cancel = tokio_util::sync::CancellationToken::new();
    cancel.cancel();
    let r = cairn_test_support::tools::call_with(
        &s.tools,
        "logs_events",
        json!({ "group": "/cairn/any" }),
        cancel,
    )
    .await;
    assert!(r.is_error && r.text.contains("cancelled"), "{}", r.text);
}
