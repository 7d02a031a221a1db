package stripepay_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stripe/stripe-go/v85"

	"tori.dev/pkg/testinfra"
	"tori.dev/services/billing/internal/stripepay"
	"tori.dev/services/billing/internal/usecase"
)

// capture keeps the form of every request it passes on to stripe-mock.
type capture struct {
	mu    sync.Mutex
	forms []url.Values
}

func (c *capture) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		form, _ := url.ParseQuery(string(b))
		c.mu.Lock()
		c.forms = append(c.forms, form)
		c.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (c *capture) last() url.Values {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.forms[len(c.forms)-1]
}

// What Stripe is sent names the team (metadata team_id, client_reference_id), and for a
// personal team the account too, as before teams; what it reports is read back by team_id,
// else by account_id.
func TestProviderObjectsNameTheTeam(t *testing.T) {
	rec := &capture{}
	c := stripepay.New(stripepay.Config{SecretKey: "sk_test_tori", APIURL: testinfra.StripeMock(t), HTTPClient: &http.Client{Transport: rec}})
	ctx := t.Context()
	team := uuid.Must(uuid.NewV7())
	for _, personal := range []bool{false, true} {
		if _, err := c.CreateCustomer(ctx, usecase.NewCustomer{AccountID: team, Personal: personal, Email: "ada@example.com"}); err != nil {
			t.Fatal(err)
		}
		f := rec.last()
		if f.Get("metadata[team_id]") != team.String() || f.Has("metadata[account_id]") != personal ||
			(personal && f.Get("metadata[account_id]") != team.String()) {
			t.Fatalf("customer (personal %v) sent %v", personal, f)
		}
		if _, err := c.CreateCheckoutSession(ctx, usecase.NewCheckout{AccountID: team, Personal: personal, CustomerID: "cus_tori",
			PriceID: "price_songbird_month", SuccessURL: "http://console.test/billing", CancelURL: "http://console.test/billing"}); err != nil {
			t.Fatal(err)
		}
		f = rec.last()
		if f.Get("client_reference_id") != team.String() || f.Get("metadata[team_id]") != team.String() ||
			f.Get("subscription_data[metadata][team_id]") != team.String() ||
			f.Has("subscription_data[metadata][account_id]") != personal || f.Has("metadata[account_id]") != personal {
			t.Fatalf("checkout (personal %v) sent %v", personal, f)
		}
	}

	other := uuid.Must(uuid.NewV7())
	for _, tc := range []struct {
		md   map[string]string
		want uuid.UUID
	}{
		{map[string]string{"team_id": team.String()}, team},
		{map[string]string{"team_id": team.String(), "account_id": other.String()}, team},
		{map[string]string{"account_id": other.String()}, other}, // made before teams
		{map[string]string{"team_id": "nope"}, uuid.Nil},
	} {
		if got := stripepay.SubscriptionFrom(&stripe.Subscription{ID: "sub_1", Metadata: tc.md}).AccountID; got != tc.want {
			t.Fatalf("metadata %v read as %s, want %s", tc.md, got, tc.want)
		}
	}
}
