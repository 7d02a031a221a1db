package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
)

// settings are the bootstrap's inputs, all from the environment.
type settings struct {
	AdminDB   string // DATABASE_URL: may create databases and roles
	AdminAMQP string // AMQP_URL: its host, port and virtual host are the services'
	DataDir   string
	Zone      string
	// ExtraZones are more zones run on this machine (EXTRA_ZONE_IDS, comma-separated; make
	// run ZONES=2): each one's agent gets credentials of its own in zoneagent-<zone>.env.
	ExtraZones []string
	// Broker is how broker users are made: "rabbitmqctl" (this machine), "definitions" (a
	// file the broker loads at boot, which -offline writes for compose and Kubernetes) or
	// "none" (their in-cluster run: the broker has loaded that file).
	Broker string
	// ZoneSuperDB is a superuser of the zone's managed-database cluster (by default postgres
	// over the Unix socket, as scripts/zone-postgres.sh allows root); ZonePostgresAddr is
	// where the zone agent reaches that cluster with a password.
	ZoneSuperDB      string
	ZonePostgresAddr string
	// Offline (-offline) writes every credential file and the broker's definitions without
	// reaching Postgres, the broker or the zone's cluster: compose and Kubernetes make them on
	// the operator's machine (scripts/compose-secrets.sh, scripts/k8s-secrets.sh), and each
	// workload is handed its own file.
	Offline bool
	// Credentials is where the workloads' credentials come from: "files" (DATA_DIR/secrets,
	// made or kept here) or "env" (the bootstrap of compose and Kubernetes: each one's URL is
	// in the environment as the offline run wrote it, the role is made with its password,
	// and nothing is written).
	Credentials string
	// ObjectStoreURL is where the workloads reach the S3 server; ObjectStoreAdmin* are an
	// admin account of it (the gateway's root for make run), used only here to make each
	// holder's account and bucket. Without them only the credential files are written.
	ObjectStoreURL         string
	ObjectStoreAdminAccess string
	ObjectStoreAdminSecret string
}

func loadSettings() settings {
	return settings{
		AdminDB:    env("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/tori?sslmode=disable"),
		AdminAMQP:  env("AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/"),
		DataDir:    env("DATA_DIR", "./var"),
		Zone:       env("ZONE_ID", "local"),
		ExtraZones: strings.FieldsFunc(os.Getenv("EXTRA_ZONE_IDS"), func(r rune) bool { return r == ',' || r == ' ' }),
		Broker:     env("BOOTSTRAP_BROKER", "rabbitmqctl"),
		ZoneSuperDB: env("ZONE_POSTGRES_SUPERUSER_URL",
			"postgres://postgres@/postgres?host=/var/run/postgresql&port=5433&sslmode=disable"),
		ZonePostgresAddr:       env("ZONE_POSTGRES_ADDR", "127.0.0.1:5433"),
		Credentials:            env("BOOTSTRAP_CREDENTIALS", credentialsInFiles),
		ObjectStoreURL:         env("OBJECT_STORE_URL", "http://127.0.0.1:7070"),
		ObjectStoreAdminAccess: os.Getenv("OBJECT_STORE_ADMIN_ACCESS_KEY"),
		ObjectStoreAdminSecret: os.Getenv("OBJECT_STORE_ADMIN_SECRET_KEY"),
	}
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// principal is one workload the bootstrap makes credentials for.
type principal struct {
	Name   string // variable prefix and, unless File says otherwise, file name: identity → IDENTITY_DATABASE_URL
	DB     pgstore.Service
	Broker string // bus principal
	Zone   string // a zone agent's zone
	File   string // the file name (without .env) when it is not Name: a further zone's agent
}

func (p principal) varPrefix() string { return strings.ToUpper(p.Name) }

func (p principal) fileName() string {
	if p.File != "" {
		return p.File
	}
	return p.Name
}

// principals are the control plane's services and this machine's zone.
func principals(zone string) []principal {
	var out []principal
	for _, name := range bus.Services {
		out = append(out, principal{Name: name, DB: pgstore.Service{Schema: name, Role: "tori_" + name}, Broker: name})
	}
	out = append(out, zoneAgent(zone))
	// The operator's broker user (busctl replay), with no database of its own.
	out = append(out, principal{Name: bus.PrincipalOperator, Broker: bus.PrincipalOperator})
	return out
}

// zoneAgent is zone's agent, as services/zoneagent/internal/store.Service names its schema.
func zoneAgent(zone string) principal {
	z := strings.ReplaceAll(zone, "-", "_")
	return principal{
		Name:   "zoneagent",
		DB:     pgstore.Service{Schema: "zoneagent_" + z, Role: "tori_zoneagent_" + z},
		Broker: bus.ZonePrincipal(zone),
		Zone:   zone,
	}
}

// workloads are principals(s.Zone) and the agent of each further zone, whose file is
// zoneagent-<zone>.env (its variables named as every zone agent's).
func (s settings) workloads() []principal {
	out := principals(s.Zone)
	for _, z := range s.ExtraZones {
		p := zoneAgent(z)
		p.File = "zoneagent-" + z
		out = append(out, p)
	}
	return out
}

// checkZones refuses a further zone that repeats one or is no zone id the agent accepts.
func (s settings) checkZones() error {
	seen := map[string]bool{s.Zone: true}
	for _, z := range s.ExtraZones {
		if seen[z] || !zoneID.MatchString(z) {
			return fmt.Errorf("EXTRA_ZONE_IDS: %q is a repeated zone or not a lower-case zone id", z)
		}
		seen[z] = true
	}
	return nil
}

// zoneID is what the zone agent accepts as ZONE_ID (services/zoneagent/internal/config).
var zoneID = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}$`)
