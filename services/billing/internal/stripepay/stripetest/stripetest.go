// Package stripetest builds signed Stripe webhook deliveries for tests: stripe-mock sends no
// webhooks, so tests write the events Stripe would send, in the API version billing is pinned
// to, and sign them as Stripe does.
package stripetest

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"
)

// Event is a webhook delivery's body: an event of type about object, created at created.
func Event(id, eventType string, created time.Time, object map[string]any) []byte {
	b, err := json.Marshal(map[string]any{
		"id": id, "object": "event", "type": eventType, "created": created.Unix(),
		"api_version": stripe.APIVersion, "livemode": false, "pending_webhooks": 1,
		"data": map[string]any{"object": object},
	})
	if err != nil {
		panic(err)
	}
	return b
}

// Sign is the Stripe-Signature header for payload, signed now with secret.
func Sign(payload []byte, secret string) string {
	return SignAt(payload, secret, time.Now())
}

// SignAt is the Stripe-Signature header for payload, signed at t with secret.
func SignAt(payload []byte, secret string, t time.Time) string {
	return webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: payload, Secret: secret, Timestamp: t}).Header
}

// EventID is a fresh event id.
func EventID() string { return "evt_" + uuid.NewString() }

// Subscription is a subscription object of account on priceID.
func Subscription(id, customer string, account uuid.UUID, priceID, status string, cancelAtPeriodEnd bool, start, end time.Time) map[string]any {
	return map[string]any{
		"id": id, "object": "subscription", "customer": customer, "status": status,
		"cancel_at_period_end": cancelAtPeriodEnd, "created": start.Unix(),
		"metadata": map[string]any{"account_id": account.String()},
		"items": map[string]any{"object": "list", "data": []any{map[string]any{
			"id": "si_" + id, "object": "subscription_item",
			"price":                map[string]any{"id": priceID, "object": "price"},
			"current_period_start": start.Unix(), "current_period_end": end.Unix(),
		}}},
	}
}

// Invoice is an invoice object of account's subscription, total in cents with tax of it.
func Invoice(id, customer, subscription string, account uuid.UUID, number, status string, total, tax int64, created time.Time) map[string]any {
	return map[string]any{
		"id": id, "object": "invoice", "customer": customer, "number": number, "status": status,
		"total": total, "currency": "eur", "created": created.Unix(),
		"hosted_invoice_url": fmt.Sprintf("https://invoice.stripe.test/%s", id),
		"invoice_pdf":        fmt.Sprintf("https://invoice.stripe.test/%s.pdf", id),
		"total_taxes":        []any{map[string]any{"amount": tax, "taxable_amount": total - tax}},
		"parent": map[string]any{"type": "subscription_details", "subscription_details": map[string]any{
			"metadata": map[string]any{"account_id": account.String()}, "subscription": subscription,
		}},
	}
}

// CreditNote is a credit note object against an invoice.
func CreditNote(id, invoice, customer, number string, total int64, created time.Time) map[string]any {
	return map[string]any{
		"id": id, "object": "credit_note", "invoice": invoice, "customer": customer,
		"number": number, "total": total, "created": created.Unix(),
	}
}
