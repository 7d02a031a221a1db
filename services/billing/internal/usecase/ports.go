package usecase

import (
	"context"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/mirror"
)

// Store is the persistence the use cases need; internal/store implements it. Lookups that
// find nothing return accounts.ErrNotFound.
type Store interface {
	// Account reads one account's record outside any transaction.
	Account(ctx context.Context, id uuid.UUID) (accounts.Account, error)
	// InTx runs fn in one transaction, committed when fn returns nil.
	InTx(ctx context.Context, fn func(tx Tx) error) error
	// Customer is the account's customer at the provider; mirror.ErrNotFound when none.
	Customer(ctx context.Context, accountID uuid.UUID) (mirror.Customer, error)
	// Subscriptions are the account's subscriptions as the mirror holds them.
	Subscriptions(ctx context.Context, accountID uuid.UUID) ([]mirror.Subscription, error)
	// Invoices are the account's invoices, newest first, each with its credit notes.
	Invoices(ctx context.Context, accountID uuid.UUID) ([]mirror.Invoice, error)
	// AccountHold is the account's hold as last announced; zero when it never had one.
	AccountHold(ctx context.Context, accountID uuid.UUID) (mirror.HoldRecord, error)
	// FormatOnlyCustomers are customers whose VAT ID awaits VIES's answer.
	FormatOnlyCustomers(ctx context.Context, limit int) ([]mirror.Customer, error)
	// ActiveHolds are the accounts whose hold is on.
	ActiveHolds(ctx context.Context) ([]mirror.ActiveHold, error)
	// TermsCandidates are the subscriptions still charging whose customer's country is
	// known, each with the VAT terms applied to it last ("" never), oldest first.
	TermsCandidates(ctx context.Context, limit int) ([]TermsCandidate, error)
	// SetAppliedTerms records the terms applied at the provider to a subscription.
	SetAppliedTerms(ctx context.Context, subscriptionID, key string) error
}

// Tx is the store inside one transaction: a plan change and the event announcing it commit
// together or not at all.
type Tx interface {
	// InsertAccount records a unless the account is recorded already; inserted tells which.
	InsertAccount(ctx context.Context, a accounts.Account) (inserted bool, err error)
	// LockAccount reads the account ref names and locks it until the transaction ends, so
	// concurrent plan changes apply one after the other. An email naming several accounts
	// is accounts.ErrAmbiguous.
	LockAccount(ctx context.Context, ref accounts.Ref) (accounts.Account, error)
	UpdateAccount(ctx context.Context, a accounts.Account) error
	// MarkTeamDeleted marks the team's record deleted (a tombstone when there is none).
	MarkTeamDeleted(ctx context.Context, id uuid.UUID, at time.Time) error
	MirrorTx
	Publisher
}

// MirrorTx writes the mirror of the provider's objects. The Put methods keep the report
// observed later: applied is false when the record holds a newer one.
type MirrorTx interface {
	// InsertCustomer records the account's customer unless one is recorded already.
	InsertCustomer(ctx context.Context, c mirror.Customer, now time.Time) (inserted bool, err error)
	Customer(ctx context.Context, accountID uuid.UUID) (mirror.Customer, error)
	CustomerByProviderID(ctx context.Context, customerID string) (mirror.Customer, error)
	UpdateCustomer(ctx context.Context, c mirror.Customer, now time.Time) error
	Subscriptions(ctx context.Context, accountID uuid.UUID) ([]mirror.Subscription, error)
	PutSubscription(ctx context.Context, s mirror.Subscription) (applied bool, err error)
	PutInvoice(ctx context.Context, inv mirror.Invoice) (applied bool, err error)
	PutCreditNote(ctx context.Context, cn mirror.CreditNote) error
	// MarkPaymentFailed records a failed payment attempt of an invoice at: the earliest one
	// recorded is when the invoice's hold began, whatever order the attempts are told in.
	MarkPaymentFailed(ctx context.Context, invoiceID string, at time.Time) error
	// HoldSince is the first failed attempt among the account's outstanding invoices; the
	// zero time when none is outstanding.
	HoldSince(ctx context.Context, accountID uuid.UUID) (time.Time, error)
	AccountHold(ctx context.Context, accountID uuid.UUID) (mirror.HoldRecord, error)
	SetAccountHold(ctx context.Context, accountID uuid.UUID, h mirror.HoldRecord, now time.Time) error
	// RecordNotice records a hold's notice as announced; first is false when it was already.
	RecordNotice(ctx context.Context, accountID uuid.UUID, since time.Time, notice string, now time.Time) (first bool, err error)
	// MarkEvent records a provider event as applied; first is false when it was already.
	MarkEvent(ctx context.Context, eventID, eventType string, now time.Time) (first bool, err error)
}

// Publisher writes an event to the outbox of the transaction it belongs to.
type Publisher interface {
	Publish(ctx context.Context, routingKey string, msg proto.Message) error
}
