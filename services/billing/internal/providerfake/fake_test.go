package providerfake_test

import (
	"testing"

	"tori.dev/services/billing/internal/providercontract"
	"tori.dev/services/billing/internal/providerfake"
)

func TestFakeKeepsTheProviderContract(t *testing.T) {
	providercontract.Run(t, providerfake.New())
}
