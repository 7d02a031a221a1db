package certs

import "github.com/caddyserver/certmagic"

// SetIssuerForTest replaces m's issuer (a counting wrapper).
func SetIssuerForTest(m *Manager, iss certmagic.Issuer) { m.cfg.Issuers = []certmagic.Issuer{iss} }
