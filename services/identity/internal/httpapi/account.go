package httpapi

import (
	"bytes"
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/callerid"
	"tori.dev/services/identity/internal/usecase"
)

// accountJSON is the contract's Account: nothing but id, email and name in user; plan and
// region on the account.
type accountJSON struct {
	User          userJSON   `json:"user"`
	Plan          string     `json:"plan"`
	DefaultRegion string     `json:"defaultRegion"`
	Limits        limitsJSON `json:"limits"`
}

type limitsJSON struct {
	MaxCustomDomains       int64        `json:"maxCustomDomains"`
	Database               databaseJSON `json:"database"`
	ProcessTypes           int64        `json:"processTypes"`
	InstancesPerProcess    int64        `json:"instancesPerProcess"`
	InstancesTotal         int64        `json:"instancesTotal"`
	CronJobs               int64        `json:"cronJobs"`
	CronMinIntervalMinutes int64        `json:"cronMinIntervalMinutes"`
	CronTimeoutSeconds     int64        `json:"cronTimeoutSeconds"`
	InstanceMemoryBytes    int64        `json:"instanceMemoryBytes"`
}

type databaseJSON struct {
	ConnectionLimit int64 `json:"connectionLimit"`
	MaxBytes        int64 `json:"maxBytes"`
}

func accountBody(v usecase.AccountView) accountJSON {
	pl := v.Plan.Limits.Processes
	return accountJSON{
		User:          userJSON{v.User.ID, v.User.Email, v.User.Name},
		Plan:          v.Plan.Name,
		DefaultRegion: string(v.Account.DefaultRegion),
		Limits: limitsJSON{
			MaxCustomDomains: v.Plan.Limits.MaxCustomDomains,
			Database: databaseJSON{
				ConnectionLimit: v.Plan.Limits.DatabaseConnections,
				MaxBytes:        v.Plan.Limits.DatabaseBytes,
			},
			ProcessTypes:           pl.ProcessTypes,
			InstancesPerProcess:    pl.InstancesPerProcess,
			InstancesTotal:         pl.InstancesTotal,
			CronJobs:               pl.CronJobs,
			CronMinIntervalMinutes: pl.CronMinIntervalMinutes,
			CronTimeoutSeconds:     pl.CronTimeoutSeconds,
			InstanceMemoryBytes:    pl.InstanceMemoryBytes,
		},
	}
}

func (h handlers) getAccount(c *fiber.Ctx) error {
	v, err := h.svc.GetAccount(c.UserContext(), callerid.From(c))
	if err != nil {
		return err
	}
	return c.JSON(accountBody(v))
}

// patchAccount writes only defaultRegion. Other fields are ignored, and a body whose
// defaultRegion is missing, not a string or not a region (or a JSON value that is not an
// object, or no body) leaves the account unchanged; only a body that is not JSON is refused.
func (h handlers) patchAccount(c *fiber.Ctx) error {
	body := bytes.TrimSpace(c.Body())
	if len(body) > 0 && !json.Valid(body) {
		return errInvalidBody
	}
	var fields map[string]json.RawMessage
	_ = json.Unmarshal(body, &fields) // not an object: no fields
	var region string
	if raw, ok := fields["defaultRegion"]; ok {
		_ = json.Unmarshal(raw, &region) // not a string: no region
	}
	v, err := h.svc.UpdateRegion(c.UserContext(), callerid.From(c), region)
	if err != nil {
		return err
	}
	return c.JSON(accountBody(v))
}
