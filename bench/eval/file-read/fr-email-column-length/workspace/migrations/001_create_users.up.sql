CREATE TABLE users (
    id           BIGSERIAL PRIMARY KEY,
    email        VARCHAR(120) NOT NULL UNIQUE,
    display_name VARCHAR(80),
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
