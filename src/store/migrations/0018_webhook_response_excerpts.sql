-- What a receiver answered, as the delivery log shows it: the start of its response body (at most
-- 500 characters), so an integrator can see why an endpoint refused a delivery. NULL when no
-- response came or for attempts logged before this column existed.
ALTER TABLE webhook_delivery_attempts ADD COLUMN response_excerpt text;
