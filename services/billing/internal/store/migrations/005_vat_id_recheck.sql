-- A VAT ID judged by its format alone while VIES could not answer: checked again later.
ALTER TABLE customers ADD COLUMN vat_id_format_only boolean NOT NULL DEFAULT false;
