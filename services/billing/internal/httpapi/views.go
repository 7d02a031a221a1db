package httpapi

import (
	"encoding/json"
	"strings"
	"time"

	"tori.dev/contract/apitime"
	"tori.dev/contract/billinghold"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/usecase"
)

// The JSON shapes of the responses, kept apart from the domain types so that renaming a Go
// field never changes the public contract. openapi-fragment.json describes the same shapes.

type plansView struct {
	Billing termsView  `json:"billing"`
	Plans   []planView `json:"plans"`
}

type termsView struct {
	Currency     string `json:"currency"`
	TaxInclusive bool   `json:"taxInclusive"`
	Overage      string `json:"overage"`
}

type planView struct {
	Name   string     `json:"name"`
	Prices pricesView `json:"prices"`
	Limits limitsView `json:"limits"`
}

// pricesView is in whole currency units (9 for 9 €), as customers read prices.
type pricesView struct {
	Month float64 `json:"month"`
	Year  float64 `json:"year"`
}

type limitsView struct {
	Apps                   int64   `json:"apps"`
	CustomDomains          int64   `json:"customDomains"`
	ConcurrentDeploys      int64   `json:"concurrentDeploys"`
	UploadBytes            int64   `json:"uploadBytes"`
	DatabaseBytes          int64   `json:"databaseBytes"`
	DatabaseConnections    int64   `json:"databaseConnections"`
	BuildMinutes           int64   `json:"buildMinutes"`
	MinScale               int64   `json:"minScale"`
	CPU                    float64 `json:"cpu"`
	LogRetentionDays       int64   `json:"logRetentionDays"`
	ProcessTypes           int64   `json:"processTypes"`
	InstancesPerProcess    int64   `json:"instancesPerProcess"`
	InstancesTotal         int64   `json:"instancesTotal"`
	CronJobs               int64   `json:"cronJobs"`
	CronMinIntervalMinutes int64   `json:"cronMinIntervalMinutes"`
	CronTimeoutSeconds     int64   `json:"cronTimeoutSeconds"`
	InstanceMemoryBytes    int64   `json:"instanceMemoryBytes"`
	Members                int64   `json:"members"`
	AuditRetentionDays     int64   `json:"auditRetentionDays"`
	Previews               int64   `json:"previews"`
	PreviewMaxTTLHours     int64   `json:"previewMaxTtlHours"`
	Drains                 int64   `json:"drains"`
	MetricsRetentionDays   int64   `json:"metricsRetentionDays"`
}

// billingView is GET /api/billing. While paid plans are off Subscription and Hold are null,
// Invoices empty and Customer absent (the answer stays what it was before billing existed);
// once on, Customer is present, null until the account has a customer at the provider.
type billingView struct {
	Plan         string            `json:"plan"`
	Customer     *customerField    `json:"customer,omitempty"`
	Subscription *subscriptionView `json:"subscription"`
	Invoices     []invoiceView     `json:"invoices"`
	Catalog      []planView        `json:"catalog"`
	Configured   bool              `json:"configured"`
	Hold         *billinghold.View `json:"hold"`
}

// customerField is a present-but-possibly-null customer: omitempty drops a nil pointer to it
// (unconfigured), while a non-nil one with a nil View renders null.
type customerField struct{ View *customerView }

func (c customerField) MarshalJSON() ([]byte, error) { return json.Marshal(c.View) }

type customerView struct {
	Country    *string `json:"country"`
	VATID      *string `json:"vatId"`
	Business   bool    `json:"business"`
	VATIDValid bool    `json:"vatIdValid"`
}

type subscriptionView struct {
	Status             string        `json:"status"`
	Plan               string        `json:"plan"`
	Interval           string        `json:"interval"`
	CurrentPeriodStart *apitime.Time `json:"currentPeriodStart"`
	CurrentPeriodEnd   *apitime.Time `json:"currentPeriodEnd"`
	CancelAtPeriodEnd  bool          `json:"cancelAtPeriodEnd"`
}

// invoiceView's amounts are in cents, as the provider's invoices state them.
type invoiceView struct {
	ID            string           `json:"id"`
	Number        string           `json:"number"`
	Status        string           `json:"status"`
	Total         int64            `json:"total"`
	Currency      string           `json:"currency"`
	VATRate       float64          `json:"vatRate"`
	ReverseCharge bool             `json:"reverseCharge"`
	HostedURL     string           `json:"hostedUrl"`
	PDFURL        string           `json:"pdfUrl"`
	CreatedAt     apitime.Time     `json:"createdAt"`
	CreditNotes   []creditNoteView `json:"creditNotes"`
}

type creditNoteView struct {
	ID        string       `json:"id"`
	Number    string       `json:"number"`
	Total     int64        `json:"total"`
	CreatedAt apitime.Time `json:"createdAt"`
}

func toPlansView(terms catalog.Terms, plans []catalog.Plan) plansView {
	return plansView{
		Billing: termsView{Currency: terms.Currency, TaxInclusive: terms.TaxInclusive, Overage: terms.Overage},
		Plans:   toPlanViews(plans),
	}
}

func toPlanViews(plans []catalog.Plan) []planView {
	out := make([]planView, 0, len(plans))
	for _, p := range plans {
		l := p.Limits
		out = append(out, planView{
			Name:   string(p.Name),
			Prices: pricesView{Month: units(p.Prices.MonthCents), Year: units(p.Prices.YearCents)},
			Limits: limitsView{
				Apps:                   l.Apps,
				CustomDomains:          l.CustomDomains,
				ConcurrentDeploys:      l.ConcurrentDeploys,
				UploadBytes:            l.UploadBytes,
				DatabaseBytes:          l.DatabaseBytes,
				DatabaseConnections:    l.DatabaseConnections,
				BuildMinutes:           l.BuildMinutes,
				MinScale:               l.MinScale,
				CPU:                    l.CPU,
				LogRetentionDays:       l.LogRetentionDays,
				ProcessTypes:           l.ProcessTypes,
				InstancesPerProcess:    l.InstancesPerProcess,
				InstancesTotal:         l.InstancesTotal,
				CronJobs:               l.CronJobs,
				CronMinIntervalMinutes: l.CronMinIntervalMinutes,
				CronTimeoutSeconds:     l.CronTimeoutSeconds,
				InstanceMemoryBytes:    l.InstanceMemoryBytes,
				Members:                l.Members,
				AuditRetentionDays:     l.AuditRetentionDays,
				Previews:               l.Previews,
				PreviewMaxTTLHours:     l.PreviewMaxTTLHours,
				Drains:                 l.Drains,
				MetricsRetentionDays:   l.MetricsRetentionDays,
			},
		})
	}
	return out
}

func toBillingView(s usecase.State) billingView {
	v := billingView{
		Plan:       string(s.Account.Plan),
		Invoices:   []invoiceView{},
		Catalog:    toPlanViews(s.Catalog),
		Configured: s.Configured,
	}
	if !s.Configured {
		return v
	}
	v.Customer = &customerField{}
	if c := s.Customer; c != nil {
		v.Customer.View = &customerView{Country: orNull(c.Country), VATID: orNull(c.VATID), Business: c.Business, VATIDValid: c.VATIDValid}
	}
	if sub := s.Subscription; sub != nil {
		v.Subscription = &subscriptionView{
			Status: sub.Status, Plan: string(sub.Plan), Interval: string(sub.Interval),
			CurrentPeriodStart: timeOrNull(sub.CurrentPeriodStart), CurrentPeriodEnd: timeOrNull(sub.CurrentPeriodEnd),
			CancelAtPeriodEnd: sub.CancelAtPeriodEnd,
		}
	}
	if h := s.Hold; h != nil {
		held := h.View(s.Stage)
		v.Hold = &held
	}
	for _, inv := range s.Invoices {
		iv := invoiceView{
			ID: inv.ID, Number: inv.Number, Status: inv.Status, Total: inv.Total,
			Currency: strings.ToUpper(inv.Currency), VATRate: inv.VATRate, ReverseCharge: inv.ReverseCharge,
			HostedURL: inv.HostedURL, PDFURL: inv.PDFURL, CreatedAt: apitime.Time(inv.Created), CreditNotes: []creditNoteView{},
		}
		for _, cn := range inv.CreditNotes {
			iv.CreditNotes = append(iv.CreditNotes, creditNoteView{ID: cn.ID, Number: cn.Number, Total: cn.Total, CreatedAt: apitime.Time(cn.Created)})
		}
		v.Invoices = append(v.Invoices, iv)
	}
	return v
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func timeOrNull(t time.Time) *apitime.Time {
	if t.IsZero() {
		return nil
	}
	return apitime.OrNull(&t)
}

// units turns cents into whole currency units for display.
func units(cents int64) float64 { return float64(cents) / 100 }
