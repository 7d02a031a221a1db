// Package config is a fixture: the shapes configdoc reads from the services' config structs.
package config

// Config is the root, the struct no other struct here holds.
type Config struct {
	// Addr is where the service listens.
	Addr string `env:"DEMO_ADDR, default=127.0.0.1:9000"`
	// Origins are the allowed origins, a default with commas.
	Origins []string `env:"DEMO_ORIGINS, default=a,b,c"`
	// Key is the signing key.
	Key string `env:"DEMO_KEY, required" secret:"true"`
	// DatabaseURL is the service's role.
	DatabaseURL string `env:"DEMO_DATABASE_URL"`
	// The sandbox's tools.
	Bwrap string `env:"DEMO_BWRAP, default=bwrap"`
	Pasta string `env:"DEMO_PASTA, default=pasta"`

	Lonely string `env:"DEMO_LONELY"`
	// First and Second are a pair.
	First  string `env:"DEMO_FIRST"`
	Second string `env:"DEMO_SECOND"`
	// SMTP is smtp://host:port, kept as written.
	SMTP string `env:"DEMO_SMTP"`
	// Token is for Vault.
	Token   string `env:"DEMO_TOKEN"`
	Unnamed string `env:"DEMO_UNNAMED"`
	Skipped string `env:"-"`
	// Cap, for tests only, lowers the cap.
	Cap int64 `env:"DEMO_CAP, default=0"`

	Nested
}

// Nested is a struct of the same package, shown as a group of its own.
type Nested struct {
	// Size: bytes.
	Size int64 `env:"DEMO_SIZE, default=0"`
}

func (c Config) validate() []string {
	return []string{"DEMO_DATABASE_URL is required (bootstrap writes it)", "DEMO_TOKEN is required when DEMO_ADDR is set; or else"}
}
