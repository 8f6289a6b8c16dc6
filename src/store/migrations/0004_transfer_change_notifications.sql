-- Every change to a transfer notifies the API processes, which drop their cached copy of it.

CREATE FUNCTION notify_transfer_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('tr_transfer_changed', OLD.id::text);
  RETURN NULL;
END;
$$;

CREATE TRIGGER transfers_changed
  AFTER UPDATE OR DELETE ON transfers
  FOR EACH ROW EXECUTE FUNCTION notify_transfer_changed();
