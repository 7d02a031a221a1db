package usecase

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/domains"
)

// Converters from the domain's records to the events other services read.

func appCreated(a apps.App) *appsv1.AppCreated {
	return &appsv1.AppCreated{
		AppId: a.ID, AccountId: a.AccountID, Slug: a.Slug, Kind: a.Kind,
		Region: a.Region, Zone: a.Zone, CreatedAt: timestamppb.New(a.CreatedAt),
	}
}

func appDeleted(a apps.App, at time.Time) *appsv1.AppDeleted {
	return &appsv1.AppDeleted{AppId: a.ID, AccountId: a.AccountID, Slug: a.Slug, DeletedAt: timestamppb.New(at)}
}

func domainActivated(a domains.Activation, at time.Time) *appsv1.DomainActivated {
	return &appsv1.DomainActivated{AppId: a.AppID, AccountId: a.AccountID, Slug: a.Slug, Hostname: a.Hostname, ActivatedAt: timestamppb.New(at)}
}

func domainRemoved(a apps.App, hostname string, at time.Time) *appsv1.DomainRemoved {
	return &appsv1.DomainRemoved{AppId: a.ID, AccountId: a.AccountID, Slug: a.Slug, Hostname: hostname, RemovedAt: timestamppb.New(at)}
}

func domainDeactivated(a domains.Activation, at time.Time) *appsv1.DomainDeactivated {
	return &appsv1.DomainDeactivated{AppId: a.AppID, AccountId: a.AccountID, Slug: a.Slug, Hostname: a.Hostname, DeactivatedAt: timestamppb.New(at)}
}

func domainVerificationFailing(a domains.Activation, v domains.Verification, since, deactivateAt time.Time) *appsv1.DomainVerificationFailing {
	return &appsv1.DomainVerificationFailing{
		AppId: a.AppID, AccountId: a.AccountID, Slug: a.Slug, Hostname: a.Hostname,
		RecordName: v.Name, RecordValue: v.Value,
		MissingSince: timestamppb.New(since), DeactivateAt: timestamppb.New(deactivateAt),
	}
}
