package stripepay

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"tori.dev/services/billing/internal/usecase"
)

// Tolerance is how old a delivery's signed timestamp may be.
const Tolerance = 5 * time.Minute

// Events verifies Stripe's webhook deliveries with the endpoint's signing secret.
type Events struct {
	Secret string
}

var _ usecase.Events = Events{}

// Verify checks the Stripe-Signature header over the raw body (within Tolerance) and reads
// the event's object. Events from an endpoint on another API version of the same family are
// accepted: the fields billing reads are the same.
func (e Events) Verify(payload []byte, signature string) (usecase.Event, error) {
	ev, err := webhook.ConstructEventWithOptions(payload, signature, e.Secret, webhook.ConstructEventOptions{
		Tolerance:                Tolerance,
		IgnoreAPIVersionMismatch: true,
	})
	if err != nil {
		return usecase.Event{}, fmt.Errorf("%w: %v", usecase.ErrInvalidSignature, err)
	}
	out := usecase.Event{ID: ev.ID, Type: string(ev.Type), Created: unix(ev.Created)}
	if ev.Data == nil {
		return out, nil
	}
	raw := ev.Data.Raw
	switch object, _ := ev.Data.Object["object"].(string); object {
	case "subscription":
		var s stripe.Subscription
		if err := json.Unmarshal(raw, &s); err != nil {
			return usecase.Event{}, fmt.Errorf("stripe: read %s: %w", ev.Type, err)
		}
		sub := SubscriptionFrom(&s)
		out.Subscription = &sub
	case "invoice":
		var inv stripe.Invoice
		if err := json.Unmarshal(raw, &inv); err != nil {
			return usecase.Event{}, fmt.Errorf("stripe: read %s: %w", ev.Type, err)
		}
		i := InvoiceFrom(&inv)
		out.Invoice = &i
	case "credit_note":
		var cn stripe.CreditNote
		if err := json.Unmarshal(raw, &cn); err != nil {
			return usecase.Event{}, fmt.Errorf("stripe: read %s: %w", ev.Type, err)
		}
		c := CreditNoteFrom(&cn)
		out.CreditNote = &c
	case "customer":
		// An event's customer comes without its tax ids: billing reads the customer again.
		var cus stripe.Customer
		if err := json.Unmarshal(raw, &cus); err != nil {
			return usecase.Event{}, fmt.Errorf("stripe: read %s: %w", ev.Type, err)
		}
		out.Customer = &usecase.Customer{ID: cus.ID, AccountID: accountOf(cus.Metadata)}
	case "tax_id":
		var t stripe.TaxID
		if err := json.Unmarshal(raw, &t); err != nil {
			return usecase.Event{}, fmt.Errorf("stripe: read %s: %w", ev.Type, err)
		}
		if t.Customer != nil {
			out.Customer = &usecase.Customer{ID: t.Customer.ID}
		}
	}
	return out, nil
}
