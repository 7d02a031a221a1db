package stripepay

import (
	"context"
	"errors"
	"fmt"

	"github.com/stripe/stripe-go/v85"

	"tori.dev/services/billing/internal/usecase"
	"tori.dev/services/billing/internal/vat"
)

// termsKey is the metadata naming the tax rates and coupons this adapter makes, so it finds
// them again instead of making another each time.
const termsKey = "tori_vat"

// ApplyTerms implements usecase.Provider: the customer is tax-exempt "reverse" under reverse
// charge ("none" otherwise), the subscription's default tax rate is an inclusive rate of the
// customer's country (or none), and under reverse charge a coupon takes the Czech VAT off each
// invoice. Prorations are off: the terms apply from the next invoice.
func (c *Client) ApplyTerms(ctx context.Context, sub usecase.TermsTarget, terms vat.Terms) error {
	exempt := stripe.String(string(stripe.CustomerTaxExemptNone))
	if terms.Kind == vat.ReverseCharge {
		exempt = stripe.String(string(stripe.CustomerTaxExemptReverse))
	}
	if _, err := c.sc.V1Customers.Update(ctx, sub.CustomerID, &stripe.CustomerUpdateParams{TaxExempt: exempt}); err != nil {
		return wrap("update customer tax status", err)
	}
	p := &stripe.SubscriptionUpdateParams{ProrationBehavior: stripe.String("none")}
	p.AddMetadata(termsKey, terms.Key())
	if terms.RateBasis > 0 {
		id, err := c.taxRate(ctx, terms.Country, terms.RateBasis)
		if err != nil {
			return err
		}
		p.DefaultTaxRates = []*string{stripe.String(id)}
	} else {
		p.AddUnsetField(stripe.SubscriptionUpdateParamsUnsetFieldDefaultTaxRates)
	}
	if terms.DiscountCents > 0 {
		id, err := c.coupon(ctx, terms.DiscountCents, sub.Currency)
		if err != nil {
			return err
		}
		p.Discounts = []*stripe.SubscriptionUpdateDiscountParams{{Coupon: stripe.String(id)}}
	} else {
		p.AddUnsetField(stripe.SubscriptionUpdateParamsUnsetFieldDiscounts)
	}
	if _, err := c.sc.V1Subscriptions.Update(ctx, sub.SubscriptionID, p); err != nil {
		return wrap("apply VAT terms", err)
	}
	return nil
}

// taxRate is the id of an active inclusive VAT rate of basis points for country: one this
// adapter made before (found by its metadata), else a new one.
func (c *Client) taxRate(ctx context.Context, country string, basis int64) (string, error) {
	name := fmt.Sprintf("rate/%s/%d", country, basis)
	if id, ok := c.made.Load(name); ok {
		return id.(string), nil
	}
	list := &stripe.TaxRateListParams{Active: stripe.Bool(true), Inclusive: stripe.Bool(true)}
	for r, err := range c.sc.V1TaxRates.List(ctx, list).All(ctx) {
		if err != nil {
			return "", wrap("list tax rates", err)
		}
		if r.Metadata[termsKey] == name {
			c.made.Store(name, r.ID)
			return r.ID, nil
		}
	}
	r, err := c.sc.V1TaxRates.Create(ctx, &stripe.TaxRateCreateParams{
		DisplayName:  stripe.String("VAT"),
		Percentage:   stripe.Float64(float64(basis) / 100),
		Inclusive:    stripe.Bool(true),
		Country:      stripe.String(country),
		Jurisdiction: stripe.String(country),
		TaxType:      stripe.String(string(stripe.TaxRateTaxTypeVAT)),
		Metadata:     map[string]string{termsKey: name},
	})
	if err != nil {
		return "", wrap("create tax rate", err)
	}
	c.made.Store(name, r.ID)
	return r.ID, nil
}

// coupon is the id of the forever coupon taking cents of currency off each invoice: its id
// is its name, so making it twice finds the first.
func (c *Client) coupon(ctx context.Context, cents int64, currency string) (string, error) {
	id := fmt.Sprintf("tori-reverse-charge-%d-%s", cents, currency)
	if got, ok := c.made.Load(id); ok {
		return got.(string), nil
	}
	cp, err := c.sc.V1Coupons.Create(ctx, &stripe.CouponCreateParams{
		ID:        stripe.String(id),
		Name:      stripe.String("Reverse charge: VAT to be accounted for by the recipient"),
		AmountOff: stripe.Int64(cents),
		Currency:  stripe.String(currency),
		Duration:  stripe.String(string(stripe.CouponDurationForever)),
		Metadata:  map[string]string{termsKey: id},
	})
	var se *stripe.Error
	switch {
	case errors.As(err, &se) && se.Code == stripe.ErrorCodeResourceAlreadyExists:
		c.made.Store(id, id)
		return id, nil
	case err != nil:
		return "", wrap("create coupon", err)
	}
	c.made.Store(id, cp.ID)
	return cp.ID, nil
}
