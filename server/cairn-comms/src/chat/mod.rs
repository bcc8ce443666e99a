//! Matrix (the client-server API) and Slack (the Web API), through the web guard with the token as a vault secret.
