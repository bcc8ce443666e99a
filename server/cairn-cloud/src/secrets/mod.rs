//! The accounts (which are configured, who the AWS keys are), SSM parameters, and secrets a
//! cloud API returns, which go to the vault, never to the model.
