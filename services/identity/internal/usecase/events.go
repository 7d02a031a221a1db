package usecase

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	identityv1 "tori.dev/proto/gen/tori/identity/v1"
	"tori.dev/services/identity/internal/account"
)

// The messages of the events identity publishes. A use case decides that a change causes
// one, and publishes it in the change's transaction with its key from identitybus.

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
