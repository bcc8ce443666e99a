//! AWS services over their APIs: EC2, IAM (read-only), CloudWatch Logs and metrics, Lambda,
//! CloudFormation, Route 53 and ECS.
//!
//! What the tools share lives here: the account (an `aws` one), the query protocol's numbered
//! parameters, reading its XML answers child by child, times the model gives ("1h", RFC 3339),
//! and the capped table every listing ends in.

mod client;
mod cloudformation_events;
mod cloudformation_stacks;
mod cloudwatch_metrics;
mod ec2_instances;
mod ec2_start_stop;
mod ecs_services;
mod iam_list;
mod lambda_functions;
mod lambda_invoke;
mod logs_events;
mod logs_groups;
mod route53_records;

pub(crate) use cloudformation_events::CloudformationEvents;
pub(crate) use cloudformation_stacks::CloudformationStacks;
pub(crate) use cloudwatch_metrics::CloudwatchMetrics;
pub(crate) use ec2_instances::Ec2Instances;
pub(crate) use ec2_start_stop::Ec2StartStop;
pub(crate) use ecs_services::EcsServices;
pub(crate) use iam_list::IamList;
pub(crate) use lambda_functions::LambdaFunctions;
pub(crate) use lambda_invoke::LambdaInvoke;
pub(crate) use logs_events::LogsEvents;
pub(crate) use logs_groups::LogsGroups;
pub(crate) use route53_records::Route53Records;
