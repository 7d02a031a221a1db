-- A custom hostname's certificate as the zone's edge last reported it (zone.certificate.changed):
-- NULL status until the first report, shown as pending. cert_changed_at is the zone's clock
-- of that report; an older report arriving late changes nothing.
ALTER TABLE domains ADD COLUMN cert_status text
    CHECK (cert_status IN ('pending', 'issued', 'failed'));
ALTER TABLE domains ADD COLUMN cert_expires_at timestamptz;
ALTER TABLE domains ADD COLUMN cert_last_error text;
ALTER TABLE domains ADD COLUMN cert_changed_at timestamptz;
