-- Operator sessions' MACs are now keyed by a key derived from ENCRYPTION_KEY, over a hash of the
-- admin token (src/http/console/operator/session.ts): a database reader can no longer test
-- guesses of the admin token against them. Sessions opened before carry a MAC of the old kind and
-- end here; the operator signs in again.
DELETE FROM console_sessions WHERE kind = 'operator';

-- Console forms whose answer shows a secret once (an API key issued, a webhook endpoint's signing
-- secret at registration or rotation) carry a one-time token made for the session. The first POST
-- with it records the token's nonce here and acts; a repeated POST (a reload of the answer, a
-- double submit) finds it and acts no more. Nothing of the secret is kept, and the rows go with
-- their session.
CREATE TABLE console_form_uses (
  session_token_hash bytea       NOT NULL REFERENCES console_sessions (token_hash) ON DELETE CASCADE,
  nonce              bytea       NOT NULL,
  used_at            timestamptz NOT NULL,
  PRIMARY KEY (session_token_hash, nonce)
);
