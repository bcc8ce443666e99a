CREATE TABLE orgs (
    id            BIGSERIAL PRIMARY KEY,
    name          VARCHAR(200) NOT NULL,
    billing_email VARCHAR(500)
);
ALTER TABLE users ADD COLUMN org_id BIGINT REFERENCES orgs(id);
