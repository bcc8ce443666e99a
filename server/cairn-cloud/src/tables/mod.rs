//! Tables and documents: DynamoDB, Azure Table Storage and Firestore through one interface
//! (list, get, query, put).
