package usecase

import (
	"context"

	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/upload"
)

// framework decides d's framework from what its upload showed of a root package.json
// (decisions.md: static until a package.json depends on vite, next, astro or @sveltejs/kit).
// A package.json that cannot be read never fails the deploy: the files are what is served
// (static) or built (source), and the build reports its own problems; the deploy is static
// and the reason goes to the log, without the file's content.
func (s *Service) framework(ctx context.Context, d *deploy.Deploy, pkg upload.PackageJSON) deploy.Framework {
	if pkg.Problem != "" {
		s.log.InfoContext(ctx, "package.json not read; the deploy's framework is static",
			"deploy_id", d.ID, "app_id", d.AppID, "reason", pkg.Problem)
		return deploy.FrameworkStatic
	}
	if !pkg.Found {
		return deploy.FrameworkStatic
	}
	fw, err := deploy.DetectFramework(pkg.Data)
	if err != nil {
		s.log.InfoContext(ctx, "package.json ignored; the deploy's framework is static",
			"deploy_id", d.ID, "app_id", d.AppID, "reason", err.Error())
	}
	return fw
}
