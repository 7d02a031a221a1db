package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/bus/brokeradmin"
	"tori.dev/pkg/pgstore"
)

func bootstrap(ctx context.Context, s settings) error {
	dir := filepath.Join(s.DataDir, "secrets")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	if !s.Offline {
		if err := pgstore.EnsureDatabase(ctx, s.AdminDB); err != nil {
			return err
		}
	}
	amqpBase, err := url.Parse(s.AdminAMQP)
	if err != nil || (amqpBase.Scheme != "amqp" && amqpBase.Scheme != "amqps") {
		return errors.New("AMQP_URL must be an amqp:// URL")
	}
	var users []brokeradmin.User
	if err := s.checkZones(); err != nil {
		return err
	}
	for _, p := range s.workloads() {
		path := filepath.Join(dir, p.fileName()+".env")
		file, err := s.credentialsOf(p, path)
		if err != nil {
			return err
		}
		dbVar, amqpVar := p.varPrefix()+"_DATABASE_URL", p.varPrefix()+"_AMQP_URL"

		if p.DB.Schema == "" {
			delete(file, dbVar)
		} else if os.Getenv(dbVar) == "" {
			svc := p.DB
			svc.Password = passwordIn(file[dbVar])
			if svc.Password == "" {
				svc.Password = newPassword()
			}
			if !s.Offline {
				if err := pgstore.EnsureService(ctx, s.AdminDB, svc); err != nil {
					return fmt.Errorf("%s: %w", p.Name, err)
				}
			}
			if file[dbVar], err = pgstore.ServiceURL(s.AdminDB, svc); err != nil {
				return err
			}
		} else {
			delete(file, dbVar)
		}

		if os.Getenv(amqpVar) == "" {
			u := *amqpBase
			name := bus.UserName("", p.Broker)
			pw := passwordIn(file[amqpVar])
			if pw == "" {
				pw = newPassword()
			}
			u.User = url.UserPassword(name, pw)
			file[amqpVar] = u.String()
			users = append(users, brokeradmin.User{Name: name, Password: pw, Principal: p.Broker})
		} else {
			delete(file, amqpVar)
		}
		// A zone agent's settings are its own zone's, whichever zone is ZONE_ID.
		own := s
		if p.Zone != "" {
			own.Zone = p.Zone
		}
		if p.Name == "zoneagent" {
			if err := ensureZoneProvisioner(ctx, own, file); err != nil {
				return err
			}
			ensureTLSStorageKey(file)
		}
		if err := ensureStoreHolding(ctx, own, p, file); err != nil {
			return fmt.Errorf("%s: %w", p.fileName(), err)
		}
		if s.Credentials == credentialsInEnv {
			continue // nothing to keep: the files were made by the offline run
		}
		if err := writeEnvFile(path, file); err != nil {
			return err
		}
	}
	switch s.Broker {
	case "rabbitmqctl":
		ctl := brokeradmin.Ctl{VHost: vhost(amqpBase), TopicExchanges: []string{"tori.events"}}
		if err := ctl.Ensure(ctx, users); err != nil {
			return err
		}
	case "definitions":
		if err := writeDefinitions(filepath.Join(dir, "rabbitmq-definitions.json"), vhost(amqpBase), users); err != nil {
			return err
		}
	case "none":
	default:
		return fmt.Errorf("BOOTSTRAP_BROKER must be rabbitmqctl, definitions or none, not %q", s.Broker)
	}
	fmt.Fprintf(os.Stderr, "bootstrap: credentials of %d workloads in %s\n", len(s.workloads()), dir)
	return nil
}

// vhost is the virtual host an AMQP URL names; "/" for none.
func vhost(u *url.URL) string {
	if v := u.Path; len(v) > 1 {
		unescaped, err := url.PathUnescape(v[1:])
		if err == nil {
			return unescaped
		}
	}
	return "/"
}

func passwordIn(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}

// newPassword is 128 random bits in hex: safe in a URL and an env file without quoting.
func newPassword() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// ensureTestUsers makes the broker users every test run shares: "test.tori.<principal>"
// for each service and the zones tests run, with the password brokeradmin.TestUsersPassword keeps for this machine.
func ensureTestUsers(ctx context.Context) error {
	admin := os.Getenv("TEST_AMQP_URL")
	if admin == "" {
		admin = os.Getenv("AMQP_URL")
	}
	_, err := brokeradmin.TestUsersPassword(ctx, admin)
	return err
}
