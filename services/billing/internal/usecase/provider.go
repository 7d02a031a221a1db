package usecase

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/vat"
)

// Provider is the payment provider as billing uses it: it creates the customer, the hosted
// checkout and the billing portal, and is read back from by sync. What Tori knows about
// subscriptions, invoices and credit notes is its own mirror (internal/store), fed by the
// provider's events and by sync; the provider is never asked to answer a rule such as "is
// this account subscribed already". internal/stripepay is the Stripe adapter;
// internal/providerfake the fake used where no provider runs; both pass
// internal/providercontract.
type Provider interface {
	// CreateCustomer creates the team's customer, carrying metadata.team_id (and, for a
	// personal team, metadata.account_id, as before teams).
	CreateCustomer(ctx context.Context, in NewCustomer) (customerID string, err error)
	// CreateCheckoutSession creates a hosted checkout session for one subscription and
	// returns its URL. The session carries client_reference_id (the team's id) and the same
	// metadata as the customer, on itself and on subscription_data.
	CreateCheckoutSession(ctx context.Context, in NewCheckout) (url string, err error)
	// CancelSubscription ends a subscription now (a deleted team pays for nothing more).
	// ErrProviderNotFound when the provider has no such subscription.
	CancelSubscription(ctx context.Context, subscriptionID string) error
	// CreatePortalSession opens the billing portal for a customer and returns its URL.
	CreatePortalSession(ctx context.Context, customerID, returnURL string) (url string, err error)
	// Customer reads a customer's billing details.
	Customer(ctx context.Context, customerID string) (Customer, error)
	// Subscriptions lists the customer's subscriptions, whatever their status.
	Subscriptions(ctx context.Context, customerID string) ([]Subscription, error)
	// Invoices lists the customer's invoices, newest first.
	Invoices(ctx context.Context, customerID string) ([]Invoice, error)
	// CreditNotes lists the credit notes issued against an invoice.
	CreditNotes(ctx context.Context, invoiceID string) ([]CreditNote, error)
	// ApplyTerms makes the provider charge a subscription as the VAT rules say: the terms'
	// rate included in the price on its invoices (none when 0), its customer marked for
	// reverse charge or not, and under reverse charge DiscountCents (in currency) taken off
	// each invoice. Applying the same terms again changes nothing.
	ApplyTerms(ctx context.Context, sub TermsTarget, terms vat.Terms) error
}

// TermsTarget is the subscription the terms apply to.
type TermsTarget struct {
	SubscriptionID string
	CustomerID     string
	Currency       string // ISO 4217, lower case ("eur")
}

// ErrProviderNotFound means the provider has no object with that id.
var ErrProviderNotFound = errors.New("billing: no such object at the payment provider")

// NewCustomer is what a customer is created with. AccountID is the paying team's id (a
// personal team's is its account's); Personal says whether it is a personal team.
type NewCustomer struct {
	AccountID uuid.UUID
	Personal  bool
	Email     string
}

// NewCheckout is what a checkout session is created with; AccountID and Personal as in
// NewCustomer.
type NewCheckout struct {
	AccountID  uuid.UUID
	Personal   bool
	CustomerID string
	PriceID    string
	SuccessURL string
	CancelURL  string
}

// Customer is a customer's billing details: where they are and whether they buy as a
// business, which decide the VAT they pay.
type Customer struct {
	ID        string
	AccountID uuid.UUID // the team's, from metadata.team_id (else account_id); uuid.Nil when absent
	Country   string    // ISO 3166-1 alpha-2, "" when unknown
	VATID     string    // "" when none
	Business  bool
}

// Subscription is a subscription as the provider reports it.
type Subscription struct {
	ID                 string
	CustomerID         string
	AccountID          uuid.UUID // the team's, from metadata.team_id (else account_id); uuid.Nil when absent
	PriceID            string
	Status             string // the provider's status: active, trialing, past_due, unpaid, canceled, ...
	CurrentPeriodStart time.Time
	CurrentPeriodEnd   time.Time
	CancelAtPeriodEnd  bool
	Created            time.Time
}

// Invoice is an invoice as the provider reports it. Amounts are in cents.
type Invoice struct {
	ID             string
	CustomerID     string
	SubscriptionID string
	AccountID      uuid.UUID // the team's, from the subscription details' metadata (team_id, else account_id); uuid.Nil when absent
	Number         string    // the provider's sequential number; "" while a draft
	Status         string    // draft, open, paid, uncollectible, void
	Total          int64
	TotalTax       int64
	Currency       string
	HostedURL      string
	PDFURL         string
	Created        time.Time
}

// CreditNote is a refund against an invoice. Amounts are in cents.
type CreditNote struct {
	ID         string
	InvoiceID  string
	CustomerID string
	Number     string
	Total      int64
	Created    time.Time
}

// PlanPrice is one plan at one interval.
type PlanPrice struct {
	Plan     catalog.Name
	Interval catalog.Interval
}

// Prices maps each paid plan and interval to the provider's price id, both ways.
type Prices map[PlanPrice]string

// ID is the provider's price for plan at interval; ok is false when none is configured.
func (p Prices) ID(plan catalog.Name, interval catalog.Interval) (string, bool) {
	id, ok := p[PlanPrice{plan, interval}]
	return id, ok && id != ""
}

// Lookup is the plan and interval a provider price stands for.
func (p Prices) Lookup(priceID string) (PlanPrice, bool) {
	for k, v := range p {
		if v == priceID && v != "" {
			return k, true
		}
	}
	return PlanPrice{}, false
}

// Events verifies and reads the provider's webhook deliveries.
type Events interface {
	// Verify checks payload's signature (the provider's signature header) and reads the
	// event; ErrInvalidSignature when it does not hold.
	Verify(payload []byte, signature string) (Event, error)
}

// ErrInvalidSignature means a webhook delivery's signature does not match its body, is too
// old, or is missing.
var ErrInvalidSignature = errors.New("billing: webhook signature does not verify")

// Event is one provider event, with the object it is about in the port's terms (at most one
// of the object fields is set; none for an event type billing does not follow).
type Event struct {
	ID           string
	Type         string
	Created      time.Time
	Subscription *Subscription
	Invoice      *Invoice
	CreditNote   *CreditNote
	Customer     *Customer
}
