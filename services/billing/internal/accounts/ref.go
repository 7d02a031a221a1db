package accounts

import (
	"strings"

	"github.com/google/uuid"
)

// Ref names an account the way an operator does: by id or by email. Exactly one is set.
type Ref struct {
	ID    uuid.UUID
	Email string
}

// ParseRef reads an account id (a UUID) or an email address.
func ParseRef(s string) (Ref, error) {
	s = strings.TrimSpace(s)
	if id, err := uuid.Parse(s); err == nil {
		return Ref{ID: id}, nil
	}
	if at := strings.IndexByte(s, '@'); at > 0 && at < len(s)-1 {
		return Ref{Email: s}, nil
	}
	return Ref{}, ErrInvalidRef
}

func (r Ref) String() string {
	if r.Email != "" {
		return r.Email
	}
	return r.ID.String()
}

// ParseID reads an account id as identity issues them: a UUID.
func ParseID(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, ErrInvalidID
	}
	return id, nil
}
