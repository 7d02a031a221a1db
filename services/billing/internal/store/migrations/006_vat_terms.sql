-- The VAT terms (vat.Terms.Key) last applied at the provider to each subscription; NULL until
-- they first are. A job applies them again whenever the customer's details or the
-- subscription's plan give other terms.
ALTER TABLE subscriptions ADD COLUMN vat_terms text;
