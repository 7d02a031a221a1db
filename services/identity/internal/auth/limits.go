package auth

import (
	"errors"
	"fmt"
	"time"
)

// Caps that keep one account or one address from costing everyone else: a leaked session
// minting tokens without end, or a sign-in form used to flood someone's mailbox.
const (
	// MaxAPITokens is how many active API tokens one account may hold.
	MaxAPITokens = 100
	// MagicLinksPerWindow sign-in mails go to one address per MagicLinkWindow; requests past
	// it are answered as usual and send nothing.
	MagicLinksPerWindow = 5
	MagicLinkWindow     = 15 * time.Minute
)

// ErrTokenLimit: the account holds MaxAPITokens active tokens already; see TokenLimitError.
var ErrTokenLimit = errors.New("auth: api token limit reached")

// TokenLimitError is ErrTokenLimit with what the answer names: the cap and the account's plan.
type TokenLimitError struct {
	Limit int
	Plan  string
}

func (e *TokenLimitError) Error() string {
	return fmt.Sprintf("auth: %d api tokens is the limit", e.Limit)
}

// Is makes errors.Is(err, ErrTokenLimit) true.
func (e *TokenLimitError) Is(target error) bool { return target == ErrTokenLimit }

// MayMintToken says whether an account holding active tokens may mint one more.
func MayMintToken(active int) bool { return active < MaxAPITokens }

// MayMailMagicLink says whether an address sent sentInWindow sign-in mails during the last
// MagicLinkWindow may be sent one more.
func MayMailMagicLink(sentInWindow int) bool { return sentInWindow < MagicLinksPerWindow }
