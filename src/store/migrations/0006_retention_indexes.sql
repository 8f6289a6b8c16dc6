-- Indexes the housekeeping worker deletes by: old events with their deliveries and attempts.
CREATE INDEX events_created_idx ON events (created_at);
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id);
CREATE INDEX webhook_delivery_attempts_delivery_idx ON webhook_delivery_attempts (delivery_id);
CREATE INDEX webhook_delivery_attempts_attempted_idx ON webhook_delivery_attempts (attempted_at);
