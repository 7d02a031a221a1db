package env

import (
	"strings"
	"unicode/utf8"

	"tori.dev/contract/names"
)

// MaxKeyLength bounds a name (the contract's names.EnvKeyMaxLen).
const MaxKeyLength = names.EnvKeyMaxLen

// MaxValueBytes bounds a value (UTF-8 bytes). 32 KiB holds any certificate or key file a
// user pastes, while keeping a deploy's whole snapshot small.
const MaxValueBytes = 32 << 10

// ValidKey reports whether k is a variable name: the contract's (names.ValidEnvKey), which
// the command line and the console hold a name to as well.
func ValidKey(k string) bool { return names.ValidEnvKey(k) }

// CheckValue refuses values a process environment cannot hold (NUL) or that are too big.
func CheckValue(v string) error {
	if len(v) > MaxValueBytes || !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
		return ErrInvalidValue
	}
	return nil
}

// maskChars is the fixed tail of every masked value: its length says nothing of the value's.
const maskChars = "********"

// Mask shows the first min(3, n/4) characters of a value of n characters, then eight mask
// characters, so short values reveal nothing and long ones only enough to recognise them.
func Mask(v string) string {
	show := min(3, utf8.RuneCountInString(v)/4)
	runes := []rune(v)
	return string(runes[:show]) + maskChars
}

// AAD is the associated data binding a stored value to its app and name.
func AAD(appID, key string) []byte {
	return []byte("tori.env.v1\x00" + appID + "\x00" + key)
}

// SnapshotAAD binds a sealed snapshot to the app and deploy it was taken for.
func SnapshotAAD(appID, deployID string) []byte {
	return []byte("tori.env-snapshot.v1\x00" + appID + "\x00" + deployID)
}

// MaxVarsPerApp is how many variables one app may hold, on every plan: far more than any
// twelve-factor app sets, and a bound on what one deploy's snapshot and start carry.
const MaxVarsPerApp = 200

// MayAdd says whether an app holding count variables may add another one (replacing one it
// holds is always allowed).
func MayAdd(count int64) bool { return count < MaxVarsPerApp }
