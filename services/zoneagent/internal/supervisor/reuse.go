package supervisor

import (
	"context"
	"os"
	"os/exec"
	"syscall"

	"tori.dev/services/zoneagent/internal/revision"
)

// reuseTree prepares a promoted preview's revision (StartRevision.built_from_deploy_id)
// from the tree the zone built for the preview, when the app's folder still holds it: the
// tree is copied (`cp -a`, run as the app's own uid with the fixed host environment, so the
// copy reaches nothing the app could not) and the build is skipped; the release Job still
// runs, with this revision's environment. False when there is nothing to reuse or the copy
// failed: the caller then unpacks and builds from the artifact as for any revision.
func (s *SourceRuntime) reuseTree(ctx context.Context, rev revision.Revision, dir string) bool {
	from := rev.BuiltFromDeployID
	if from == "" || from == rev.DeployID || !revision.ValidID(from) {
		return false
	}
	src := s.Identities.Tree(rev.AppID, from)
	if fi, err := os.Lstat(src); err != nil || !fi.IsDir() {
		return false
	}
	cred := s.Sandbox.Credential(rev.AppID)
	if cred == nil {
		return false
	}
	if err := os.RemoveAll(dir); err != nil { // a half-done earlier attempt
		return false
	}
	cmd := exec.CommandContext(ctx, "cp", "-a", "-T", "--", src, dir)
	cmd.Env, cmd.Dir = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C"}, "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: cred.Uid, Gid: cred.Gid, Groups: []uint32{}}}
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		logOr(s.Log).WarnContext(ctx, "built-from tree not reused; building from the artifact", "deploy", rev.DeployID, "from", from, "err", err.Error(), "output", string(out))
		return false
	}
	if err := s.Identities.Own(rev.AppID, dir); err != nil {
		os.RemoveAll(dir)
		return false
	}
	s.Output.system(rev.AppID, rev.DeployID, "Reused the built tree of deploy "+from+": no build")
	return true
}
