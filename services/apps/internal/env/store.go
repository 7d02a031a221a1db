package env

import (
	"context"
	"time"
)

// Sealed is one stored variable: its name and its ciphertext, never its value.
type Sealed struct {
	Key        string
	Ciphertext []byte
	KeyID      string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// Store keeps sealed variables.
type Store interface {
	// PutVar creates or replaces a variable of a live app; created tells which. ErrAppGone
	// when the app is not live.
	PutVar(ctx context.Context, appID string, v Sealed) (created bool, err error)
	// Vars lists an app's variables sorted by name.
	Vars(ctx context.Context, appID string) ([]Sealed, error)
	// DeleteVar removes one; ErrNotSet when absent.
	DeleteVar(ctx context.Context, appID, key string) error
	// AppLive reports whether the app exists and is not deleted.
	AppLive(ctx context.Context, appID string) (bool, error)
}

// RotationStore is what re-encryption needs.
type RotationStore interface {
	// UsedKeys counts stored values by key id.
	UsedKeys(ctx context.Context) (map[string]int64, error)
	// VarsNotUnder pages through variables sealed under any key but keyID, ordered by
	// (app id, name) after the cursor.
	VarsNotUnder(ctx context.Context, keyID string, afterApp, afterKey string, limit int) ([]StoredVar, error)
	// ReplaceCiphertext swaps a variable's ciphertext if it is still old; false when the
	// variable changed or went meanwhile.
	ReplaceCiphertext(ctx context.Context, v StoredVar, ciphertext []byte, keyID string) (bool, error)
}

// StoredVar is a sealed variable with its app.
type StoredVar struct {
	AppID string
	Sealed
}
