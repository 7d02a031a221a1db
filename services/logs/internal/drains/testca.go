package drains

import (
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TestGuard is the guard with the tests' receiver allowed (LOGS_DRAIN_TEST_HOST and
// LOGS_DRAIN_TEST_CA, test-only settings); with host "" the plain guard.
func TestGuard(host, caFile string) (Guard, error) {
	if host == "" {
		return Guard{}, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return Guard{}, fmt.Errorf("LOGS_DRAIN_TEST_CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return Guard{}, errors.New("LOGS_DRAIN_TEST_CA holds no certificate")
	}
	return Guard{TestHost: host, TestCA: pool}, nil
}
