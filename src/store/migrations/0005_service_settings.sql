-- Facts about the deployment itself, such as a value sealed under its encryption key so that a
-- process started with another key is refused before it writes anything it cannot read back.
CREATE TABLE service_settings (
  key        text        PRIMARY KEY,
  value      text        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
