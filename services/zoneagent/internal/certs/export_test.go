package certs

import (
	"github.com/caddyserver/certmagic"
	"github.com/prometheus/client_golang/prometheus"
)

// SetIssuerForTest replaces m's issuer (a counting wrapper).
func SetIssuerForTest(m *Manager, iss certmagic.Issuer) { m.cfg.Issuers = []certmagic.Issuer{iss} }

// OrdersForTest is the orders counter for kind and result.
func OrdersForTest(kind, result string) prometheus.Counter {
	return ordersTotal.WithLabelValues(kind, result)
}

// WildcardCoversForTest is wildcardCovers.
var WildcardCoversForTest = wildcardCovers
