-- Transfers are read from the database on every request; nothing listens for their changes.

DROP TRIGGER transfers_changed ON transfers;
DROP FUNCTION notify_transfer_changed();
