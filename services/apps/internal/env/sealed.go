package env

import "time"

// Sealed is one stored variable: its name and its ciphertext, never its value.
type Sealed struct {
	Key        string
	Ciphertext []byte
	KeyID      string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// StoredVar is a sealed variable with its app.
type StoredVar struct {
	AppID string
	Sealed
}

// Masked is a variable as the API shows it.
type Masked struct {
	Key   string
	Value string
}
