package preview

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"tori.dev/contract/names"
	"tori.dev/services/deploys/internal/deploy"
)

// TTL bounds (DESIGN40 "Previews"): at least a minute; 72 hours unless asked, and never past
// the plan's previewMaxTtlHours, to which a longer ask is capped rather than refused.
const (
	MinTTLSeconds     = 60
	DefaultTTLSeconds = int64(72 * time.Hour / time.Second)
)

// Override bounds: as many and as large as the apps service's variables allow.
const (
	MaxOverrides      = 100
	MaxOverrideBytes  = 32 << 10
	MaxOverridesBytes = 256 << 10
)

// The database variables `database: none` leaves out, which no override may set back then.
var databaseVars = []string{"DATABASE_URL", "DATABASE_RESTORE_URL"}

// Input is what a preview request says besides the deploy payload; TTLSeconds nil is the
// default, Database "" is none.
type Input struct {
	Name       string
	TTLSeconds *int64
	Env        map[string]string
	Database   string
}

// Check refuses a malformed input (400 invalid_parameter naming the member) and fills its
// defaults: the database mode. The name stays "" when none was given (the new id's then).
func (in *Input) Check() error {
	if in.Name != "" && !names.ValidPreviewName(in.Name) {
		return &deploy.ParamError{Name: "name", Reason: "must match " + names.PreviewNamePattern}
	}
	if in.TTLSeconds != nil && *in.TTLSeconds < MinTTLSeconds {
		return &deploy.ParamError{Name: "ttlSeconds", Reason: fmt.Sprintf("must be an integer of at least %d", MinTTLSeconds)}
	}
	switch Database(in.Database) {
	case "":
		in.Database = string(DatabaseNone)
	case DatabaseNone, DatabaseShared:
	default:
		return &deploy.ParamError{Name: "database", Reason: "must be none or shared"}
	}
	return checkEnv(in.Env, Database(in.Database))
}

func checkEnv(env map[string]string, db Database) error {
	if len(env) > MaxOverrides {
		return &deploy.ParamError{Name: "env", Reason: fmt.Sprintf("holds more than %d variables", MaxOverrides)}
	}
	total := 0
	for k, v := range env {
		if !names.ValidEnvKey(k) {
			// The name is the customer's own and holds no secret; the value is never named.
			return &deploy.ParamError{Name: "env", Reason: fmt.Sprintf("key %q must match %s", k, names.EnvKeyPattern)}
		}
		if len(v) > MaxOverrideBytes || !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
			return &deploy.ParamError{Name: "env", Reason: fmt.Sprintf("value of %s must be UTF-8 without NUL, at most %d bytes", k, MaxOverrideBytes)}
		}
		if db == DatabaseNone && slices.Contains(databaseVars, k) {
			return &deploy.ParamError{Name: "env", Reason: fmt.Sprintf("%s cannot be set with database none", k)}
		}
		total += len(k) + len(v)
	}
	if total > MaxOverridesBytes {
		return &deploy.ParamError{Name: "env", Reason: fmt.Sprintf("is larger than %d bytes", MaxOverridesBytes)}
	}
	return nil
}

// Keys are the override names, sorted: what the API shows of them.
func (in Input) Keys() []string {
	keys := make([]string, 0, len(in.Env))
	for k := range in.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// CapTTL is the ttl a preview gets: the ask (or the default) capped by the plan's
// previewMaxTtlHours.
func CapTTL(asked *int64, maxHours int64) int64 {
	limit := maxHours * 3600
	ttl := DefaultTTLSeconds
	if asked != nil {
		ttl = *asked
	}
	if limit > 0 && ttl > limit {
		ttl = limit
	}
	return ttl
}
