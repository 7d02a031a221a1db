// Package providerfake is a FAKE payment provider: an in-memory usecase.Provider for the unit
// tests of the use cases, where no provider runs. It passes the same contract tests as the
// Stripe adapter (internal/providercontract) and lets a test put subscriptions, invoices and
// credit notes where sync will read them.
package providerfake

import (
	"context"
	"fmt"
	"sync"

	"tori.dev/services/billing/internal/usecase"
	"tori.dev/services/billing/internal/vat"
)

// Provider is the fake. The zero value is not usable; call New.
type Provider struct {
	mu            sync.Mutex
	next          int
	customers     map[string]usecase.Customer
	subscriptions map[string][]usecase.Subscription
	invoices      map[string][]usecase.Invoice
	creditNotes   map[string][]usecase.CreditNote
	// Checkouts records every checkout session created, in order.
	Checkouts []usecase.NewCheckout
	// Customers records what every customer was created with, in order.
	Customers []usecase.NewCustomer
	// Canceled records every subscription CancelSubscription ended, in order.
	Canceled []string
	terms    map[string]vat.Terms // applied last, by subscription id
}

var _ usecase.Provider = (*Provider)(nil)

// New is an empty fake provider.
func New() *Provider {
	return &Provider{
		customers:     map[string]usecase.Customer{},
		subscriptions: map[string][]usecase.Subscription{},
		invoices:      map[string][]usecase.Invoice{},
		creditNotes:   map[string][]usecase.CreditNote{},
		terms:         map[string]vat.Terms{},
	}
}

func (p *Provider) id(prefix string) string {
	p.next++
	return fmt.Sprintf("%s_fake%06d", prefix, p.next)
}

func (p *Provider) CreateCustomer(_ context.Context, in usecase.NewCustomer) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	id := p.id("cus")
	p.customers[id] = usecase.Customer{ID: id, AccountID: in.AccountID}
	p.Customers = append(p.Customers, in)
	return id, nil
}

func (p *Provider) CreateCheckoutSession(_ context.Context, in usecase.NewCheckout) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.customers[in.CustomerID]; !ok {
		return "", fmt.Errorf("fake provider: create checkout session: %w", usecase.ErrProviderNotFound)
	}
	p.Checkouts = append(p.Checkouts, in)
	return "https://checkout.fake-provider.invalid/" + p.id("cs"), nil
}

func (p *Provider) CancelSubscription(_ context.Context, subscriptionID string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, list := range p.subscriptions {
		for i := range list {
			if list[i].ID == subscriptionID {
				list[i].Status = "canceled"
				p.Canceled = append(p.Canceled, subscriptionID)
				return nil
			}
		}
	}
	return fmt.Errorf("fake provider: cancel subscription: %w", usecase.ErrProviderNotFound)
}

func (p *Provider) CreatePortalSession(_ context.Context, customerID, _ string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.customers[customerID]; !ok {
		return "", fmt.Errorf("fake provider: create portal session: %w", usecase.ErrProviderNotFound)
	}
	return "https://portal.fake-provider.invalid/" + p.id("bps"), nil
}

func (p *Provider) Customer(_ context.Context, customerID string) (usecase.Customer, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.customers[customerID]
	if !ok {
		return usecase.Customer{}, fmt.Errorf("fake provider: read customer: %w", usecase.ErrProviderNotFound)
	}
	return c, nil
}

func (p *Provider) Subscriptions(_ context.Context, customerID string) ([]usecase.Subscription, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]usecase.Subscription(nil), p.subscriptions[customerID]...), nil
}

func (p *Provider) Invoices(_ context.Context, customerID string) ([]usecase.Invoice, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]usecase.Invoice(nil), p.invoices[customerID]...), nil
}

func (p *Provider) CreditNotes(_ context.Context, invoiceID string) ([]usecase.CreditNote, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]usecase.CreditNote(nil), p.creditNotes[invoiceID]...), nil
}

func (p *Provider) ApplyTerms(_ context.Context, sub usecase.TermsTarget, terms vat.Terms) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.customers[sub.CustomerID]; !ok {
		return fmt.Errorf("fake provider: apply terms: %w", usecase.ErrProviderNotFound)
	}
	p.terms[sub.SubscriptionID] = terms
	return nil
}

// AppliedTerms is what ApplyTerms recorded last for a subscription.
func (p *Provider) AppliedTerms(subscriptionID string) (vat.Terms, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, ok := p.terms[subscriptionID]
	return t, ok
}

// SetCustomer replaces a customer's billing details, as a checkout that collected an address
// and a VAT ID would.
func (p *Provider) SetCustomer(c usecase.Customer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.customers[c.ID] = c
}

// PutSubscription adds or replaces (by id) a subscription of its customer.
func (p *Provider) PutSubscription(s usecase.Subscription) {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.subscriptions[s.CustomerID]
	for i := range list {
		if list[i].ID == s.ID {
			list[i] = s
			return
		}
	}
	p.subscriptions[s.CustomerID] = append(list, s)
}

// PutInvoice adds or replaces (by id) an invoice of its customer.
func (p *Provider) PutInvoice(inv usecase.Invoice) {
	p.mu.Lock()
	defer p.mu.Unlock()
	list := p.invoices[inv.CustomerID]
	for i := range list {
		if list[i].ID == inv.ID {
			list[i] = inv
			return
		}
	}
	p.invoices[inv.CustomerID] = append([]usecase.Invoice{inv}, list...)
}

// PutCreditNote adds a credit note against its invoice.
func (p *Provider) PutCreditNote(cn usecase.CreditNote) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.creditNotes[cn.InvoiceID] = append(p.creditNotes[cn.InvoiceID], cn)
}
