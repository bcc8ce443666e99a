//! AWS services over their APIs: EC2, IAM (read-only), CloudWatch Logs and metrics, Lambda,
//! CloudFormation, Route 53 and ECS.
