package main

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/lifecycle"
	"tori.dev/pkg/service"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/certs"
	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/store"
	"tori.dev/services/zoneagent/internal/usecase"
)

// certificateStates ties the edge's certificates to the zone's record: whose a hostname is
// (the routing table names the app, app_accounts its account: the per-account order bound),
// and each custom hostname's certificate state published through the outbox
// (zone.app.certificate_changed), for the apps service to keep on the domain record.
type certificateStates struct {
	zone  string
	edge  *edge.Edge
	store *store.Store
	log   *slog.Logger
}

func (c *certificateStates) owner(ctx context.Context, host string) (certs.Owner, bool) {
	appID, custom, ok := c.edge.Owner(host)
	if !ok {
		return certs.Owner{}, false
	}
	account, err := c.store.AccountOf(ctx, appID)
	if err != nil {
		c.log.WarnContext(ctx, "certificate owner", "host", host, "err", err.Error())
	}
	return certs.Owner{AppID: appID, AccountID: account, Custom: custom}, true
}

var certStatuses = map[string]zonev1.CertificateStatus{
	certs.StatusPending: zonev1.CertificateStatus_CERTIFICATE_STATUS_PENDING,
	certs.StatusIssued:  zonev1.CertificateStatus_CERTIFICATE_STATUS_ISSUED,
	certs.StatusFailed:  zonev1.CertificateStatus_CERTIFICATE_STATUS_FAILED,
}

func (c *certificateStates) publish(ctx context.Context, host string, o certs.Owner, s certs.State, at time.Time) {
	msg := &zonev1.CertificateChanged{AppId: o.AppID, Hostname: host, Zone: c.zone, Status: certStatuses[s.Status],
		LastError: s.LastError, At: timestamppb.New(at)}
	if !s.ExpiresAt.IsZero() {
		msg.ExpiresAt = timestamppb.New(s.ExpiresAt)
	}
	// certmagic's context may be a handshake's, ended by the time this commits.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := c.store.InTx(ctx, func(tx usecase.Tx) error { return tx.Publish(ctx, zonebus.KeyCertificateChanged, msg) })
	if err != nil {
		c.log.WarnContext(ctx, "certificate state not published", "host", host, "status", s.Status, "err", err.Error())
		return
	}
	c.log.InfoContext(ctx, "certificate state", "host", host, "app_id", o.AppID, "status", s.Status, "last_error", s.LastError)
}

// keepAllEvery is how often the hostnames are listed for certificates when none changed.
const keepAllEvery = time.Minute

// keepCustomHostnames orders the active custom hostnames' certificates ahead of any
// handshake, so their state reaches the owner (and a failure is retried with backoff)
// without a visitor having to ask first.
func keepCustomHostnames(p *service.Process, edges *edgeServers, table *edge.Table) {
	if edges.certs == nil {
		return
	}
	// Listing every hostname costs O(hostnames): it is done when the table's hostnames
	// changed, and now and then anyway (a certificate whose order failed to start is kept
	// again then).
	var seen uint64
	var listed time.Time
	p.Every(lifecycle.Job{Name: "custom hostname certificates", Every: 2 * time.Second, Run: func(context.Context) (int64, error) {
		if v := table.HostsVersion(); v != seen || time.Since(listed) >= keepAllEvery {
			seen, listed = v, time.Now()
			edges.certs.Keep(table.Hosts())
		}
		return 0, nil
	}})
}
