package app

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	"tori.dev/services/identity/internal/account"
)

// Routing keys of the events identity publishes (docs/conventions.md, "Bus names").
const (
	KeyAccountCreated = "identity.account.created"
	KeyAccountUpdated = "identity.account.updated"
	KeyTokenRevoked   = "identity.token.revoked"
)

func accountCreated(a account.Account, u account.User) *identityv1.AccountCreated {
	return &identityv1.AccountCreated{
		AccountId:     a.ID,
		UserId:        u.ID,
		Email:         u.Email,
		Name:          u.Name,
		DefaultRegion: string(a.DefaultRegion),
		CreatedAt:     timestamppb.New(a.CreatedAt),
	}
}

func accountUpdated(a account.Account) *identityv1.AccountUpdated {
	return &identityv1.AccountUpdated{
		AccountId:     a.ID,
		DefaultRegion: string(a.DefaultRegion),
		UpdatedAt:     timestamppb.New(a.UpdatedAt),
	}
}

func tokenRevoked(accountID, tokenID string, at time.Time) *identityv1.TokenRevoked {
	return &identityv1.TokenRevoked{TokenId: tokenID, AccountId: accountID, RevokedAt: timestamppb.New(at)}
}
