// Package stripepay is the payment-provider port (usecase.Provider) on Stripe, through the official
// stripe-go. In tests it talks to stripe-mock (STRIPE_API_URL); nothing here keeps state.
package stripepay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/stripe/stripe-go/v85"

	"tori.dev/services/billing/internal/usecase"
)

// Config is how the adapter reaches Stripe.
type Config struct {
	SecretKey string
	// APIURL points the client at another server, such as stripe-mock; "" is Stripe itself.
	APIURL string
	// HTTPClient defaults to one with a 30-second timeout.
	HTTPClient *http.Client
}

// Client is usecase.Provider on Stripe.
type Client struct {
	sc *stripe.Client
	// made remembers the tax rates and coupons ApplyTerms found or made, by their name.
	made sync.Map
}

var _ usecase.Provider = (*Client)(nil)

// listCap bounds how many objects one listing reads: enough for years of monthly invoices,
// and a stop should a server keep answering has_more.
const listCap = 500

// New builds the adapter. The SDK's own logger is silenced: its messages can carry request
// details, and the service logs the errors it returns instead.
func New(cfg Config) *Client {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	bc := &stripe.BackendConfig{
		HTTPClient:        hc,
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
		MaxNetworkRetries: stripe.Int64(2),
	}
	if cfg.APIURL != "" {
		bc.URL = stripe.String(cfg.APIURL)
	}
	backends := &stripe.Backends{
		API:         stripe.GetBackendWithConfig(stripe.APIBackend, bc),
		Connect:     stripe.GetBackendWithConfig(stripe.ConnectBackend, bc),
		Uploads:     stripe.GetBackendWithConfig(stripe.UploadsBackend, bc),
		MeterEvents: stripe.GetBackendWithConfig(stripe.MeterEventsBackend, bc),
	}
	return &Client{sc: stripe.NewClient(cfg.SecretKey, stripe.WithBackends(backends))}
}

// metadata names the team an object is for: team_id, and account_id as well for a personal
// team, as its objects carried before teams (and older ones still do).
func metadata(team uuid.UUID, personal bool) map[string]string {
	md := map[string]string{"team_id": team.String()}
	if personal {
		md["account_id"] = team.String()
	}
	return md
}

// CreateCustomer creates the team's customer with its metadata.
func (c *Client) CreateCustomer(ctx context.Context, in usecase.NewCustomer) (string, error) {
	cus, err := c.sc.V1Customers.Create(ctx, &stripe.CustomerCreateParams{
		Email:    stripe.String(in.Email),
		Metadata: metadata(in.AccountID, in.Personal),
	})
	if err != nil {
		return "", wrap("create customer", err)
	}
	return cus.ID, nil
}

// CreateCheckoutSession creates a subscription checkout that collects the billing address
// and a VAT ID, which decide the VAT (see internal/vat).
func (c *Client) CreateCheckoutSession(ctx context.Context, in usecase.NewCheckout) (string, error) {
	s, err := c.sc.V1CheckoutSessions.Create(ctx, &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String("subscription"),
		Customer:          stripe.String(in.CustomerID),
		ClientReferenceID: stripe.String(in.AccountID.String()),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{
			{Price: stripe.String(in.PriceID), Quantity: stripe.Int64(1)},
		},
		SubscriptionData: &stripe.CheckoutSessionCreateSubscriptionDataParams{
			Metadata: metadata(in.AccountID, in.Personal),
		},
		Metadata:                 metadata(in.AccountID, in.Personal),
		BillingAddressCollection: stripe.String("required"),
		TaxIDCollection:          &stripe.CheckoutSessionCreateTaxIDCollectionParams{Enabled: stripe.Bool(true)},
		CustomerUpdate: &stripe.CheckoutSessionCreateCustomerUpdateParams{
			Address: stripe.String("auto"),
			Name:    stripe.String("auto"),
		},
		SuccessURL: stripe.String(in.SuccessURL),
		CancelURL:  stripe.String(in.CancelURL),
	})
	if err != nil {
		return "", wrap("create checkout session", err)
	}
	return s.URL, nil
}

// CancelSubscription ends the subscription now, without proration.
func (c *Client) CancelSubscription(ctx context.Context, subscriptionID string) error {
	if _, err := c.sc.V1Subscriptions.Cancel(ctx, subscriptionID, &stripe.SubscriptionCancelParams{}); err != nil {
		return wrap("cancel subscription", err)
	}
	return nil
}

// CreatePortalSession opens the billing portal for the customer.
func (c *Client) CreatePortalSession(ctx context.Context, customerID, returnURL string) (string, error) {
	s, err := c.sc.V1BillingPortalSessions.Create(ctx, &stripe.BillingPortalSessionCreateParams{
		Customer:  stripe.String(customerID),
		ReturnURL: stripe.String(returnURL),
	})
	if err != nil {
		return "", wrap("create portal session", err)
	}
	return s.URL, nil
}

// Customer reads the customer with its tax ids.
func (c *Client) Customer(ctx context.Context, customerID string) (usecase.Customer, error) {
	p := &stripe.CustomerRetrieveParams{}
	p.AddExpand("tax_ids")
	cus, err := c.sc.V1Customers.Retrieve(ctx, customerID, p)
	if err != nil {
		return usecase.Customer{}, wrap("read customer", err)
	}
	return customerFrom(cus), nil
}

// Subscriptions lists the customer's subscriptions in every status.
func (c *Client) Subscriptions(ctx context.Context, customerID string) ([]usecase.Subscription, error) {
	p := &stripe.SubscriptionListParams{Customer: stripe.String(customerID), Status: stripe.String("all")}
	var out []usecase.Subscription
	for s, err := range c.sc.V1Subscriptions.List(ctx, p).All(ctx) {
		if err != nil {
			return nil, wrap("list subscriptions", err)
		}
		out = append(out, SubscriptionFrom(s))
		if len(out) == listCap {
			break
		}
	}
	return out, nil
}

// Invoices lists the customer's invoices, newest first.
func (c *Client) Invoices(ctx context.Context, customerID string) ([]usecase.Invoice, error) {
	p := &stripe.InvoiceListParams{Customer: stripe.String(customerID)}
	var out []usecase.Invoice
	for inv, err := range c.sc.V1Invoices.List(ctx, p).All(ctx) {
		if err != nil {
			return nil, wrap("list invoices", err)
		}
		out = append(out, InvoiceFrom(inv))
		if len(out) == listCap {
			break
		}
	}
	return out, nil
}

// CreditNotes lists the credit notes against an invoice.
func (c *Client) CreditNotes(ctx context.Context, invoiceID string) ([]usecase.CreditNote, error) {
	p := &stripe.CreditNoteListParams{Invoice: stripe.String(invoiceID)}
	var out []usecase.CreditNote
	for cn, err := range c.sc.V1CreditNotes.List(ctx, p).All(ctx) {
		if err != nil {
			return nil, wrap("list credit notes", err)
		}
		out = append(out, CreditNoteFrom(cn))
		if len(out) == listCap {
			break
		}
	}
	return out, nil
}

func customerFrom(cus *stripe.Customer) usecase.Customer {
	out := usecase.Customer{ID: cus.ID, AccountID: accountOf(cus.Metadata)}
	if cus.Address != nil {
		out.Country = cus.Address.Country
	}
	if cus.TaxIDs != nil {
		for _, t := range cus.TaxIDs.Data {
			if t != nil && t.Type == stripe.TaxIDTypeEUVAT {
				out.VATID = t.Value
				break
			}
		}
	}
	// A customer who gives a VAT ID buys as a business; one may also be marked so by an
	// operator (metadata.business) before having a VAT ID, as a new Czech firm might.
	out.Business = out.VATID != "" || cus.Metadata["business"] == "true"
	return out
}

// SubscriptionFrom is a provider subscription in the port's terms (also used for the
// objects inside webhook events).
func SubscriptionFrom(s *stripe.Subscription) usecase.Subscription {
	out := usecase.Subscription{
		ID:                s.ID,
		AccountID:         accountOf(s.Metadata),
		Status:            string(s.Status),
		CancelAtPeriodEnd: s.CancelAtPeriodEnd,
		Created:           unix(s.Created),
	}
	if s.Customer != nil {
		out.CustomerID = s.Customer.ID
	}
	// Since the 2025 API versions the period lives on the item; a Tori subscription has one.
	if s.Items != nil && len(s.Items.Data) > 0 && s.Items.Data[0] != nil {
		it := s.Items.Data[0]
		if it.Price != nil {
			out.PriceID = it.Price.ID
		}
		out.CurrentPeriodStart = unix(it.CurrentPeriodStart)
		out.CurrentPeriodEnd = unix(it.CurrentPeriodEnd)
	}
	return out
}

// InvoiceFrom is a provider invoice in the port's terms.
func InvoiceFrom(inv *stripe.Invoice) usecase.Invoice {
	out := usecase.Invoice{
		ID:        inv.ID,
		Number:    inv.Number,
		Status:    string(inv.Status),
		Total:     inv.Total,
		Currency:  string(inv.Currency),
		HostedURL: inv.HostedInvoiceURL,
		PDFURL:    inv.InvoicePDF,
		Created:   unix(inv.Created),
	}
	if inv.Customer != nil {
		out.CustomerID = inv.Customer.ID
	}
	for _, t := range inv.TotalTaxes {
		if t != nil {
			out.TotalTax += t.Amount
		}
	}
	if inv.Parent != nil && inv.Parent.SubscriptionDetails != nil {
		d := inv.Parent.SubscriptionDetails
		out.AccountID = accountOf(d.Metadata)
		if d.Subscription != nil {
			out.SubscriptionID = d.Subscription.ID
		}
	}
	if out.AccountID == uuid.Nil {
		out.AccountID = accountOf(inv.Metadata)
	}
	return out
}

// CreditNoteFrom is a provider credit note in the port's terms.
func CreditNoteFrom(cn *stripe.CreditNote) usecase.CreditNote {
	out := usecase.CreditNote{ID: cn.ID, Number: cn.Number, Total: cn.Total, Created: unix(cn.Created)}
	if cn.Invoice != nil {
		out.InvoiceID = cn.Invoice.ID
	}
	if cn.Customer != nil {
		out.CustomerID = cn.Customer.ID
	}
	return out
}

// accountOf reads the team an object is for: metadata.team_id, else (an object made before
// teams, always a personal team's) metadata.account_id; anything but a UUID is none.
func accountOf(md map[string]string) uuid.UUID {
	v := md["team_id"]
	if v == "" {
		v = md["account_id"]
	}
	id, err := uuid.Parse(v)
	if err != nil {
		return uuid.Nil
	}
	return id
}

func unix(sec int64) time.Time {
	if sec == 0 {
		return time.Time{}
	}
	return time.Unix(sec, 0).UTC()
}

// wrap keeps Stripe's error type and code but never the request or the key.
func wrap(op string, err error) error {
	var se *stripe.Error
	if errors.As(err, &se) {
		if se.HTTPStatusCode == http.StatusNotFound {
			return fmt.Errorf("stripe: %s: %w", op, usecase.ErrProviderNotFound)
		}
		return fmt.Errorf("stripe: %s: %s %s (status %d)", op, se.Type, se.Code, se.HTTPStatusCode)
	}
	return fmt.Errorf("stripe: %s: %w", op, err)
}
