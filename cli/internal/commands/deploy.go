package commands

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"tori.dev/cli/internal/api"
	"tori.dev/cli/internal/bundle"
	"tori.dev/cli/internal/follow"
	"tori.dev/cli/internal/ui"
)

func (s *state) deployCmd() *cobra.Command {
	var image, release string
	var processes []string
	var forceRestart, detach, dryRun, clearCache bool
	var pf PreviewFlags
	c := &cobra.Command{
		Use:   "deploy [DIR]",
		Short: "Deploy a folder (static files, or a service's source) or an image",
		Long: "A static app gets DIR's files as one upload; a service app gets DIR as a .tar.gz, or --image.\n" +
			"A service's build and start come from its tori.json, else from what the zone detects\n" +
			"(package.json, requirements.txt or app.py, go.mod, a Procfile's web: line). Its process\n" +
			"types come from tori.json's processes, else a Procfile's lines, else --process (images).\n" +
			"tori then shows the deploy's steps and its build and release output\n" +
			"until it is live (exit 0), failed or cancelled (exit 1). --detach returns once accepted.\n\n" +
			"A folder is sent the way git sees it: .gitignore, .dockerignore and .toriignore are\n" +
			"honoured; .git, .env* and a static site's node_modules and dotfiles (but .well-known) are\n" +
			"left out; a symbolic link out of the folder is refused. --dry-run lists what would be sent.\n\n" +
			"--preview NAME sends the same payload as a preview instead, which never touches the live app:\n" +
			"its own URL, one web instance, the app's variables with --env over them, no database unless\n" +
			"--database shared; gone after --ttl (default 72h, capped by the plan). The same NAME again\n" +
			"replaces it at the same URL. tori then follows it until it serves (its URL) or fails.",
		Example: "  tori deploy ./public --app my-site\n  tori deploy . --release \"python3 migrate.py\"\n  tori deploy . --clear-cache\n" +
			"  tori deploy --image ghcr.io/acme/web@sha256:<digest> --app my-api\n" +
			"  tori deploy --image ghcr.io/acme/web@sha256:<digest> --process web='./server' --process worker='./worker'\n  tori deploy --detach\n" +
			"  tori deploy ./public --dry-run\n  tori deploy . --preview pr-12 --ttl 48h --env FEATURE_X=on",
		Args:    cobra.MaximumNArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			if forceRestart && image == "" {
				return usagef("--force-restart goes with --image")
			}
			if clearCache && image != "" {
				return usagef("--clear-cache goes with a service's source: an --image deploy builds nothing")
			}
			if len(processes) > 0 && image == "" {
				return usagef("--process goes with --image: a source deploy declares its processes in tori.json or a Procfile")
			}
			procs, err := ParseProcesses(processes)
			if err != nil {
				return usageError{err}
			}
			preview, err := ParsePreviewFlags(pf)
			if err != nil {
				return usageError{err}
			}
			if preview != nil && forceRestart {
				return usagef("--force-restart does not go with --preview: every preview deploy is a new revision")
			}
			slug, err := s.slug(dir)
			if err != nil {
				return err
			}
			if dryRun {
				if image != "" {
					return usagef("--dry-run lists a folder's files; an --image deploy sends none")
				}
				return s.dryRun(ctx, slug, dir)
			}
			if preview != nil {
				var p api.Preview
				var raw api.Raw
				if image != "" {
					p, raw, err = s.client.PreviewImage(ctx, slug, preview.ImageRequest(api.ImageDeployRequest{Image: image, Release: release, Processes: procs}))
				} else {
					p, raw, err = uploadFolder(s, ctx, slug, dir, bundle.SourceOptions{Release: release, ClearCache: clearCache, Fields: PreviewFields(*preview)}, s.client.PreviewUpload)
				}
				if err != nil {
					return err
				}
				return s.afterPreview(ctx, slug, p, raw, detach)
			}
			var d api.Deploy
			var raw api.Raw
			if image != "" {
				d, raw, err = s.client.DeployImage(ctx, slug, api.ImageDeployRequest{Image: image, Release: release, ForceRestart: forceRestart, Processes: procs})
			} else {
				d, raw, err = s.upload(ctx, slug, dir, bundle.SourceOptions{Release: release, ClearCache: clearCache})
			}
			if err != nil {
				return err
			}
			return s.afterCreate(ctx, slug, d, raw, detach)
		},
	}
	s.appFlag(c, false)
	f := c.Flags()
	f.StringVar(&image, "image", "", "deploy this image (registry/repo@sha256:…) instead of a folder")
	f.StringVar(&release, "release", "", "release command, run before traffic moves (wins over tori.json's)")
	f.BoolVar(&forceRestart, "force-restart", false, "with --image: a new revision even when nothing changed")
	f.StringArrayVar(&processes, "process", nil, "with --image: a process type NAME=COMMAND, repeatable (none: one web from the image's entrypoint)")
	f.BoolVar(&clearCache, "clear-cache", false, "service source: build from an empty cache (npm, pip and Go caches are otherwise kept between the app's builds)")
	f.BoolVar(&detach, "detach", false, "return once the deploy is accepted")
	f.StringVar(&pf.Name, "preview", "", "deploy as the preview NAME (lowercase letters, digits and -, at most 20) rather than live")
	f.StringVar(&pf.TTL, "ttl", "", "with --preview: how long it lives (30m, 48h, 7d; default 72h, capped by the plan)")
	f.StringArrayVar(&pf.Env, "env", nil, "with --preview: a variable KEY=VALUE over the app's, repeatable")
	f.StringVar(&pf.Database, "database", "", "with --preview: none (the default: no DATABASE_URL) or shared (the app's database)")
	f.BoolVar(&dryRun, "dry-run", false, "list the files a deploy of the folder would send (stdout) and what it leaves out (stderr); send nothing")
	return c
}

// upload sends dir as a deploy, as the app's kind wants it.
func (s *state) upload(ctx context.Context, slug, dir string, opts bundle.SourceOptions) (api.Deploy, api.Raw, error) {
	return uploadFolder(s, ctx, slug, dir, opts, s.client.Upload)
}

// uploadFolder sends dir as the app's kind wants it (a static site's files or a service's
// .tar.gz, then opts' parts) through send, with a progress bar on a terminal.
func uploadFolder[T any](s *state, ctx context.Context, slug, dir string, opts bundle.SourceOptions,
	send func(context.Context, string, *api.Upload) (T, api.Raw, error)) (T, api.Raw, error) {
	var zero T
	_, kind, sel, err := s.selectFolder(ctx, slug, dir)
	if err != nil {
		return zero, nil, err
	}
	var up *api.Upload
	var label string
	if kind == bundle.ServiceSource {
		var cleanup func()
		up, _, cleanup, err = bundle.Source(dir, sel, opts)
		if err != nil {
			return zero, nil, err
		}
		defer cleanup()
		label = "Uploading source"
	} else {
		if opts.Release != "" {
			return zero, nil, usagef("--release is for service apps")
		}
		if opts.ClearCache {
			return zero, nil, usagef("--clear-cache is for service apps: a static site is uploaded built")
		}
		up, err = bundle.Static(dir, sel, opts.Fields...)
		if err != nil {
			return zero, nil, err
		}
		label = fmt.Sprintf("Uploading %d files", len(sel.Files))
	}
	if note := leftOutNote(sel); note != "" && !s.json {
		fmt.Fprintln(s.env.Stderr, note)
	}
	var bar *ui.Progress
	if !s.json {
		bar = s.ui.NewProgress(label, up.Length)
		open := up.Open
		up.Open = func() (io.ReadCloser, error) {
			r, err := open()
			if err != nil {
				return nil, err
			}
			return bar.Reader(r), nil
		}
	}
	v, raw, err := send(ctx, slug, up)
	if bar != nil && err == nil {
		bar.Done()
	} else if bar != nil && s.ui.Bars {
		fmt.Fprintln(s.env.Stderr)
	}
	return v, raw, err
}

// afterCreate prints a new deploy and, unless detached, follows it to its end.
func (s *state) afterCreate(ctx context.Context, slug string, d api.Deploy, raw api.Raw, detach bool) error {
	if detach {
		if s.json {
			return s.printJSON(raw)
		}
		s.ui.Printf("Deploy %s accepted (%s). Follow it with `tori deploys show %s --app %s`.\n", d.ID, d.Status, d.ID, slug)
		return nil
	}
	if !s.json {
		fmt.Fprintf(s.env.Stderr, "Deploy %s %s\n", d.ID, s.statusWord(d.Status))
	}
	final, finalRaw, err := s.watch(ctx, slug, d, raw)
	if err != nil {
		return err
	}
	if s.json {
		if err := s.printJSON(finalRaw); err != nil {
			return err
		}
	}
	switch final.Status {
	case "live", "superseded":
		if !s.json {
			app, _, err := s.client.GetApp(ctx, slug)
			if err == nil {
				s.ui.Printf("%s %s\n", s.ui.Paint(ui.Green, "Live:"), app.URL)
			} else {
				s.ui.Println("Live.")
			}
		}
		return nil
	case "cancelled":
		if s.json {
			return errQuiet
		}
		return fmt.Errorf("deploy %s was cancelled", final.ID)
	default:
		reason := "failed"
		if final.Error != nil {
			reason = "failed: " + *final.Error
		}
		if s.json {
			return errQuiet
		}
		return fmt.Errorf("deploy %s %s", final.ID, reason)
	}
}

func (s *state) statusWord(status string) string {
	switch status {
	case "live", "ready":
		return s.ui.PaintErr(ui.Green, status)
	case "failed", "cancelled":
		return s.ui.PaintErr(ui.Red, status)
	}
	return s.ui.PaintErr(ui.Yellow, status)
}

var streamColour = map[string]string{"build": ui.Blue, "release": ui.Cyan, "stderr": ui.Red, "system": ui.Dim}

// printLine writes one log line: stamp, stream, message; the stream coloured on a terminal.
func (s *state) printLine(e api.LogEntry, stamps bool) {
	stream := fmt.Sprintf("%-7s", e.Stream)
	if c, ok := streamColour[e.Stream]; ok {
		stream = s.ui.Paint(c, stream)
	}
	// The instance that wrote it, as Heroku's web.1: only lines of a process carry one.
	if e.Process != nil && *e.Process != "" {
		stream += " " + s.ui.Paint(ui.Dim, *e.Process)
	}
	if stamps {
		fmt.Fprintf(s.env.Stdout, "%s %s %s\n", s.ui.Paint(ui.Dim, e.Timestamp), stream, e.Message)
		return
	}
	fmt.Fprintf(s.env.Stdout, "%s %s\n", stream, e.Message)
}

// watch follows the deploy's build and release lines on the live log stream and asks for the
// deploy's status once a poll interval, until it ends; the lines that arrive shortly after
// the end (the zone ships them in batches) are still shown.
func (s *state) watch(ctx context.Context, slug string, d api.Deploy, raw api.Raw) (api.Deploy, api.Raw, error) {
	return watchUntil(s, ctx, slug, watched[api.Deploy]{
		what: "Deploy " + d.ID, deployID: d.ID, createdAt: d.CreatedAt,
		poll:     func(ctx context.Context) (api.Deploy, api.Raw, error) { return s.client.GetDeploy(ctx, slug, d.ID) },
		status:   func(d api.Deploy) string { return d.Status },
		terminal: api.Deploy.Terminal,
		stopped:  fmt.Sprintf("the deploy goes on: `tori deploys show %s --app %s`", d.ID, slug),
	}, d, raw)
}

// watched is what watchUntil follows: a deploy, or a preview's revision.
type watched[T any] struct {
	what                string // "Deploy <id>", "Preview <name>": the status lines' subject
	deployID, createdAt string // whose build and release lines to show, and from when
	poll                func(context.Context) (T, api.Raw, error)
	status              func(T) string
	terminal            func(T) bool
	stopped             string // said on Ctrl-C: what goes on and where to see it
}

// watchUntil shows w's build and release lines from the live stream and polls its status once
// a poll interval until terminal; lines arriving up to 2 s after the end are still shown.
func watchUntil[T any](s *state, ctx context.Context, slug string, w watched[T], v T, raw api.Raw) (T, api.Raw, error) {
	since := time.Now().Add(-time.Minute)
	if t, err := time.Parse(time.RFC3339Nano, w.createdAt); err == nil {
		since = t.Add(-follow.Overlap)
	}
	keep := func(e api.LogEntry) bool {
		return e.DeployID != nil && *e.DeployID == w.deployID && (e.Stream == "build" || e.Stream == "release")
	}
	lines := make(chan api.LogEntry, 256)
	streamDone := make(chan error, 1)
	sctx, stopStream := context.WithCancel(ctx)
	defer stopStream()
	if !s.json {
		go func() { streamDone <- s.followLines(sctx, slug, "", since, lines, nil) }()
	}
	show := func(e api.LogEntry) {
		if keep(e) {
			s.printLine(e, false)
		}
	}
	drain := func() {
		for {
			select {
			case e := <-lines:
				show(e)
			default:
				return
			}
		}
	}
	tick := time.NewTicker(s.pollEvery())
	defer tick.Stop()
	last := w.status(v)
	var endedAt time.Time
	if w.terminal(v) {
		if s.json {
			return v, raw, nil
		}
		endedAt = time.Now()
	}
	for {
		select {
		case e := <-lines:
			show(e)
			continue
		case err := <-streamDone:
			streamDone = nil
			if err != nil && ctx.Err() == nil && !errors.Is(err, follow.ErrStreamEnded) {
				// Output is a courtesy; the status is what decides.
				fmt.Fprintf(s.env.Stderr, "(logs unavailable: %v)\n", err)
			}
			continue
		case <-ctx.Done():
			drain()
			if errors.Is(ctx.Err(), context.Canceled) {
				fmt.Fprintf(s.env.Stderr, "\nStopped watching; %s.\n", w.stopped)
			}
			return v, raw, ctx.Err()
		case <-tick.C:
		}
		if !endedAt.IsZero() {
			if time.Since(endedAt) >= 2*time.Second {
				stopStream()
				drain()
				return v, raw, nil
			}
			continue
		}
		nv, nraw, err := w.poll(ctx)
		if err != nil {
			return v, raw, err
		}
		v, raw = nv, nraw
		if st := w.status(v); st != last && !s.json {
			drain()
			fmt.Fprintf(s.env.Stderr, "%s %s\n", w.what, s.statusWord(st))
		}
		last = w.status(v)
		if w.terminal(v) {
			if s.json {
				return v, raw, nil
			}
			endedAt = time.Now()
		}
	}
}

func (s *state) deploysCmd() *cobra.Command {
	c := &cobra.Command{
		Use:     "deploys",
		Short:   "List, show, cancel and roll back deploys",
		Example: "  tori deploys list\n  tori deploys rollback 7d3c…",
	}
	s.appFlag(c, true)
	var limit int
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the app's deploys, newest first",
		Example: "  tori deploys list --app my-site --limit 10",
		Args:    cobra.NoArgs,
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) ([]api.Deploy, api.Raw, error) {
				return s.client.ListDeploys(ctx, slug, limit)
			}, func(ds []api.Deploy) error {
				w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, s.ui.Paint(ui.Bold, "ID\tKIND\tSTATUS\tCREATED\tNOTE"))
				for _, d := range ds {
					note := ""
					if d.Error != nil {
						note = *d.Error
					}
					if d.RollbackOf != nil {
						note = "rollback of " + *d.RollbackOf
					}
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", d.ID, d.Kind, d.Status, d.CreatedAt, note)
				}
				return w.Flush()
			})
		},
	}
	list.Flags().IntVar(&limit, "limit", 20, "how many (1–200)")
	var detach bool
	rollback := &cobra.Command{
		Use:     "rollback ID",
		Short:   "Deploy a once-live deploy's artifact and environment again, and follow it",
		Example: "  tori deploys rollback 7d3c… --app my-api\n  tori deploys rollback 7d3c… --detach",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			slug, err := s.slug()
			if err != nil {
				return err
			}
			d, raw, err := s.client.Rollback(cmd.Context(), slug, args[0])
			if err != nil {
				return err
			}
			return s.afterCreate(cmd.Context(), slug, d, raw, detach)
		},
	}
	rollback.Flags().BoolVar(&detach, "detach", false, "return once the rollback is accepted")
	c.AddCommand(list, &cobra.Command{
		Use:     "show ID",
		Short:   "Show one deploy",
		Example: "  tori deploys show 7d3c… --app my-site",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) (api.Deploy, api.Raw, error) {
				return s.client.GetDeploy(ctx, slug, args[0])
			}, func(d api.Deploy) error {
				s.printDeploy(d)
				return nil
			})
		},
	}, &cobra.Command{
		Use:     "cancel ID",
		Short:   "Cancel a deploy that is building or releasing",
		Example: "  tori deploys cancel 7d3c… --app my-api",
		Args:    cobra.ExactArgs(1),
		PreRunE: s.signedIn,
		RunE: func(cmd *cobra.Command, args []string) error {
			return aboutApp(s, cmd, func(ctx context.Context, slug string) (api.Deploy, api.Raw, error) {
				return s.client.CancelDeploy(ctx, slug, args[0])
			}, func(d api.Deploy) error {
				s.ui.Printf("Deploy %s %s.\n", d.ID, d.Status)
				return nil
			})
		},
	}, rollback)
	return c
}

func (s *state) printDeploy(d api.Deploy) {
	w := tabwriter.NewWriter(s.env.Stdout, 0, 4, 2, ' ', 0)
	opt := func(p *string) string {
		if p == nil {
			return "-"
		}
		return *p
	}
	rows := [][2]string{{"ID", d.ID}, {"Kind", d.Kind}, {"Status", d.Status}, {"Error", opt(d.Error)},
		{"Image", opt(d.Image)}, {"Rollback of", opt(d.RollbackOf)}, {"Created", d.CreatedAt}, {"Finished", opt(d.FinishedAt)}}
	if len(d.Release) > 0 {
		rows = append(rows, [2]string{"Release", fmt.Sprint(d.Release)})
	}
	for _, kv := range rows {
		fmt.Fprintf(w, "%s\t%s\n", s.ui.Paint(ui.Bold, kv[0]+":"), kv[1])
	}
	w.Flush()
}
