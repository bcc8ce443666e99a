-- Allow the full local-part@domain length some SSO providers send.
ALTER TABLE users ALTER COLUMN email TYPE VARCHAR(320);
