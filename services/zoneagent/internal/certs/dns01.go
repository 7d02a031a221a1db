package certs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/mholt/acmez/v3/acme"
)

// DNS01HookEnvPrefix names the agent's variables a DNS-01 hook sees (beside PATH and HOME):
// the operator passes the DNS provider's credentials as ZONE_TLS_DNS01_*, and the hook sees
// none of the agent's own secrets.
const DNS01HookEnvPrefix = "ZONE_TLS_DNS01_"

// hookTimeout bounds one run of the hook.
const hookTimeout = 2 * time.Minute

// DNS01Hook answers ACME's DNS-01 challenge through a command the operator provides
// (ZONE_TLS_DNS01_HOOK), run as
//
//	HOOK present <record name> <value>   # publish TXT <value> at <record name>
//	HOOK cleanup <record name> <value>   # remove it
//
// where the record name is absolute (`_acme-challenge.apps.example.com.`). present returns
// once the record is published where the CA will look (the hook knows its DNS provider's
// zone and propagation; certmagic's libdns path would look the zone up by SOA itself). A
// non-zero exit fails the attempt; certmagic retries with its backoff.
type DNS01Hook struct{ Command string }

// Present publishes the challenge's TXT record.
func (h DNS01Hook) Present(ctx context.Context, c acme.Challenge) error {
	return h.run(ctx, "present", c)
}

// CleanUp removes it.
func (h DNS01Hook) CleanUp(ctx context.Context, c acme.Challenge) error {
	return h.run(ctx, "cleanup", c)
}

func (h DNS01Hook) run(ctx context.Context, action string, c acme.Challenge) error {
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	name := c.DNS01TXTRecordName()
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	cmd := exec.CommandContext(ctx, h.Command, action, name, c.DNS01KeyAuthorization())
	cmd.Env = hookEnv(os.Environ())
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 300 {
			msg = msg[:300]
		}
		return fmt.Errorf("DNS-01 hook %s %s: %w: %s", action, name, err, msg)
	}
	return nil
}

func hookEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, DNS01HookEnvPrefix) {
			out = append(out, kv)
		}
	}
	return out
}

// wildcardCovers reports whether the wildcard (`*.apps.example.com`) covers name: exactly one
// label under its base.
func wildcardCovers(wildcard, name string) bool {
	base, ok := strings.CutPrefix(wildcard, "*.")
	if !ok || wildcard == "" {
		return false
	}
	label, ok := strings.CutSuffix(strings.ToLower(name), "."+base)
	return ok && label != "" && !strings.Contains(label, ".")
}
