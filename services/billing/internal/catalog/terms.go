package catalog

// Terms are the conditions every listed price is quoted under.
type Terms struct {
	// Currency is the ISO 4217 code of every price.
	Currency string
	// TaxInclusive is true because listed prices include VAT for consumers. (A business in
	// another EU member state with a valid VAT ID is charged without VAT, by reverse charge; a
	// Czech business pays Czech VAT regardless: that is decided per invoice once paid plans
	// are enabled, and does not change the listed price.)
	TaxInclusive bool
	// Overage is "none": nothing is metered, an account at a limit is held there.
	Overage string
}

// BillingTerms are the terms of the whole catalog.
func BillingTerms() Terms {
	return Terms{Currency: "EUR", TaxInclusive: true, Overage: "none"}
}
