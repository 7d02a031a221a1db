// Package sizecap is the zone's database size rule (decisions.md, "Managed database"): a
// database over its plan's cap (maxBytes) is made read-only, and writable again once under
// 90 % of it; underneath, its files live on a filesystem of 110 % of the cap, the hard
// ceiling past which no write lands. The size check (internal/usecase) and the ceilings
// (internal/managed) ask this package; nothing else decides a cap, a flip or a ceiling.
package sizecap

import "fmt"

// Action is what the size check does with one database.
type Action int

const (
	Keep     Action = iota // as it is
	ReadOnly               // over the cap: writes refused
	Writable               // read-only and under 90 % of the cap: writes allowed again
)

// WritablePercent is the share of the cap a read-only database must fall under to be
// writable again: a database at its cap does not flip on every check.
const WritablePercent = 90

// Decide is the rule: over the cap, read-only; read-only and under WritablePercent of it,
// writable again; in between, as it is.
func Decide(size, capBytes int64, readOnly bool) Action {
	switch {
	case !readOnly && size > capBytes:
		return ReadOnly
	case readOnly && size*100 < capBytes*WritablePercent:
		return Writable
	}
	return Keep
}

// Cap is a database's cap: the plan's maxBytes, lowered to override when that is set (the
// tests' ZONE_DATABASE_MAX_BYTES_OVERRIDE; 0 leaves the plan's).
func Cap(maxBytes, override int64) int64 {
	if override > 0 && override < maxBytes {
		return override
	}
	return maxBytes
}

// CeilingPercent is how far past its cap a database may grow, at most.
const CeilingPercent = 110

// MinCeilingBytes is the smallest filesystem made: an empty database is 7.5 MB, and ext4
// needs its journal; only the tests' override asks for less (every plan's cap is far above it).
const MinCeilingBytes = 32 << 20

// Ceiling is the size of the filesystem the files of a database with a cap of capBytes
// live on: CeilingPercent of it, in whole 4 KiB blocks, at least MinCeilingBytes.
func Ceiling(capBytes int64) int64 {
	n := capBytes / 100 * CeilingPercent
	n -= n % 4096
	return max(n, MinCeilingBytes)
}

// OverCapMessage is what the owner is told when the database turns read-only.
func OverCapMessage(size, capBytes int64) string {
	return fmt.Sprintf("The database uses %s, over its cap of %s: writes are refused until it is under 90 %% of the cap (in one transaction: BEGIN; SET TRANSACTION READ WRITE; TRUNCATE …; COMMIT).", megabytes(size), megabytes(capBytes))
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
