package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/ui"
)

// appStatus is what `tori status` gathers; with --json each part is the API's own answer
// (null where the app has none).
type appStatus struct {
	App      json.RawMessage `json:"app"`
	Deploy   json.RawMessage `json:"deploy"`
	Database json.RawMessage `json:"database"`
	Domains  json.RawMessage `json:"domains"`
}

func (s *state) statusCmd() *cobra.Command {
	return s.appFlag(&cobra.Command{
		Use:   "status",
		Short: "Show the app at a glance: its live deploy, URL, database and hostnames",
		Long: "One look at the app, as `fly status` and `heroku apps:info` give: kind, status and region,\n" +
			"the URL, the live deploy, the database (service apps) and the custom hostnames (static apps).",
		Example: "  tori status\n  tori status -a my-api --json",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			slug, err := s.slug()
			if err != nil {
				return err
			}
			return s.status(cmd.Context(), slug)
		},
	}, false)
}

func (s *state) status(ctx context.Context, slug string) error {
	app, rawApp, err := s.client.GetApp(ctx, slug)
	if err != nil {
		return err
	}
	out := appStatus{App: json.RawMessage(rawApp), Deploy: null, Database: null, Domains: null}
	var deploy *api.Deploy
	if app.CurrentDeployID != nil {
		d, raw, err := s.client.GetDeploy(ctx, slug, *app.CurrentDeployID)
		if err != nil {
			return err
		}
		deploy, out.Deploy = &d, json.RawMessage(raw)
	}
	var db *api.Database
	var domains []api.Domain
	if app.Kind == "service" {
		d, raw, err := s.client.Database(ctx, api.OpGetDB, slug)
		var ae *api.Error
		switch {
		case errors.As(err, &ae) && ae.Status == http.StatusNotFound: // no database
		case err != nil:
			return err
		default:
			db, out.Database = &d, json.RawMessage(raw)
		}
	} else {
		ds, raw, err := s.client.ListDomains(ctx, slug)
		if err != nil {
			return err
		}
		domains, out.Domains = ds, json.RawMessage(raw)
	}
	if s.json {
		b, err := json.Marshal(out)
		if err != nil {
			return err
		}
		return s.printJSON(b)
	}

	rows := [][2]string{
		{"App", fmt.Sprintf("%s (%s, %s) in %s (%s)", app.Slug, app.Kind, app.Status, app.Region, app.Zone)},
		{"URL", app.URL},
	}
	live := "none yet: `tori deploy`"
	if deploy != nil {
		live = deploy.ID + " " + deploy.Kind + ", " + deploy.Status + " since " + deploy.CreatedAt
		if deploy.RollbackOf != nil {
			live += " (rollback of " + *deploy.RollbackOf + ")"
		}
	}
	rows = append(rows, [2]string{"Deploy", live})
	if app.Kind == "service" {
		line := "none: `tori db create`"
		if db != nil {
			line = db.Status
			if db.Message != nil && *db.Message != "" {
				line += ": " + *db.Message
			}
		}
		rows = append(rows, [2]string{"Database", line})
	} else {
		line := "none: `tori domains add HOSTNAME`"
		if len(domains) > 0 {
			var hs []string
			for _, d := range domains {
				hs = append(hs, d.Hostname+" ("+d.Status+")")
			}
			line = strings.Join(hs, ", ")
		}
		rows = append(rows, [2]string{"Domains", line})
	}
	w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\n", s.ui.Paint(ui.Bold, r[0]+":"), r[1])
	}
	return w.Flush()
}

var null = json.RawMessage("null")
