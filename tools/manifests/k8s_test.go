package manifests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

const k8sDir = "../../deployments/k8s"

// object is one decoded manifest and where it came from.
type object struct {
	where string // file:document
	kind  string
	obj   any
}

// newObject is the typed value a document of apiVersion and kind decodes into.
func newObject(apiVersion, kind string) (any, bool) {
	switch apiVersion + " " + kind {
	case "v1 Namespace":
		return &corev1.Namespace{}, true
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}, true
	case "v1 Service":
		return &corev1.Service{}, true
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}, true
	case "batch/v1 Job":
		return &batchv1.Job{}, true
	case "policy/v1 PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}, true
	case "networking.k8s.io/v1 NetworkPolicy":
		return &networkingv1.NetworkPolicy{}, true
	case "networking.k8s.io/v1 Ingress":
		return &networkingv1.Ingress{}, true
	}
	return nil, false
}

// decodeAll strict-decodes every document of every file kustomization.yaml lists.
func decodeAll(t *testing.T) []object {
	t.Helper()
	var kust struct {
		Resources []string `json:"resources"`
	}
	b, err := os.ReadFile(filepath.Join(k8sDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &kust); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(k8sDir, "*.yaml"))
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" && !slices.Contains(kust.Resources, base) {
			t.Errorf("%s is not among kustomization.yaml's resources", base)
		}
	}
	var out []object
	for _, name := range kust.Resources {
		b, err := os.ReadFile(filepath.Join(k8sDir, name))
		if err != nil {
			t.Fatalf("kustomization.yaml lists %s: %v", name, err)
		}
		for i, doc := range bytes.Split(b, []byte("\n---\n")) {
			where := fmt.Sprintf("%s#%d", name, i+1)
			var head metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			obj, ok := newObject(head.APIVersion, head.Kind)
			if !ok {
				t.Errorf("%s: %s %s is not a kind this check knows", where, head.APIVersion, head.Kind)
				continue
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				t.Errorf("%s (%s): %v", where, head.Kind, err)
				continue
			}
			out = append(out, object{where: where, kind: head.Kind, obj: obj})
		}
	}
	return out
}

func TestManifestsStrictDecode(t *testing.T) {
	objs := decodeAll(t)
	if len(objs) < 20 {
		t.Fatalf("only %d objects decoded", len(objs))
	}
}

// A field the API does not have fails the decode: the check is not a formality.
func TestStrictDecodeRefusesUnknownFields(t *testing.T) {
	doc := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replica: 2\n")
	if err := yaml.UnmarshalStrict(doc, &appsv1.Deployment{}); err == nil {
		t.Fatal("a misspelt field decoded")
	}
}

// podsOf are the pod templates of the workloads, by where they are.
func podsOf(objs []object) map[string]corev1.PodTemplateSpec {
	out := map[string]corev1.PodTemplateSpec{}
	for _, o := range objs {
		switch w := o.obj.(type) {
		case *appsv1.Deployment:
			out[o.where+" "+w.Name] = w.Spec.Template
		case *batchv1.Job:
			out[o.where+" "+w.Name] = w.Spec.Template
		}
	}
	return out
}

// Every control-plane pod meets the restricted Pod Security profile, with a pinned image.
func TestWorkloadsAreRestricted(t *testing.T) {
	objs := decodeAll(t)
	for where, tpl := range podsOf(objs) {
		spec, psc := tpl.Spec, tpl.Spec.SecurityContext
		if spec.HostNetwork || spec.HostPID || spec.HostIPC {
			t.Errorf("%s: shares a host namespace", where)
		}
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
			t.Errorf("%s: pod does not require a non-root user", where)
		}
		if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: pod has no RuntimeDefault seccomp profile", where)
		}
		if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
			t.Errorf("%s: mounts a service-account token it has no use for", where)
		}
		for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
			at := where + " container " + c.Name
			sc := c.SecurityContext
			switch {
			case sc == nil:
				t.Errorf("%s: no securityContext", at)
				continue
			case sc.Privileged != nil && *sc.Privileged:
				t.Errorf("%s: privileged", at)
			case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
				t.Errorf("%s: allows privilege escalation", at)
			case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
				t.Errorf("%s: writable root file system", at)
			case sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0:
				t.Errorf("%s: does not drop every capability", at)
			}
			image, tag, ok := strings.Cut(c.Image[strings.LastIndex(c.Image, "/")+1:], ":")
			if !strings.Contains(c.Image, "@sha256:") && (!ok || tag == "" || tag == "latest" || !strings.ContainsAny(tag, "0123456789")) {
				t.Errorf("%s: image %s (%s) is not pinned to a version", at, c.Image, image)
			}
		}
	}
	for _, o := range objs {
		if ns, ok := o.obj.(*corev1.Namespace); ok && ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
			t.Errorf("%s: namespace %s does not enforce the restricted profile", o.where, ns.Name)
		}
	}
}

// Every HTTP service is taken out of rotation by /readyz and restarted only by /healthz.
func TestProbes(t *testing.T) {
	for _, o := range decodeAll(t) {
		d, ok := o.obj.(*appsv1.Deployment)
		if !ok {
			continue
		}
		for _, c := range d.Spec.Template.Spec.Containers {
			r, l := c.ReadinessProbe, c.LivenessProbe
			if r == nil {
				t.Errorf("%s: %s has no readiness probe", o.where, c.Name)
				continue
			}
			if r.HTTPGet == nil {
				continue // not an HTTP process (Redis answers its own ping)
			}
			if r.HTTPGet.Path != "/readyz" {
				t.Errorf("%s: %s's readiness probe asks %s, want /readyz", o.where, c.Name, r.HTTPGet.Path)
			}
			if l == nil || l.HTTPGet == nil || l.HTTPGet.Path != "/healthz" {
				t.Errorf("%s: %s's liveness probe is not /healthz", o.where, c.Name)
			}
		}
	}
}

// selects reports whether a label selector picks pods labelled l.
func selects(t *testing.T, sel *metav1.LabelSelector, l map[string]string) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatal(err)
	}
	return s.Matches(labels.Set(l))
}

// Every replicated Deployment keeps a replica through a drain, and every pod is behind a
// default-deny NetworkPolicy with at least one policy of its own letting the flows it serves in.
func TestDisruptionBudgetsAndNetworkPolicies(t *testing.T) {
	objs := decodeAll(t)
	var pdbs []*policyv1.PodDisruptionBudget
	var nps []*networkingv1.NetworkPolicy
	for _, o := range objs {
		switch v := o.obj.(type) {
		case *policyv1.PodDisruptionBudget:
			pdbs = append(pdbs, v)
		case *networkingv1.NetworkPolicy:
			nps = append(nps, v)
		}
	}
	denyAll := false
	for _, np := range nps {
		if len(np.Spec.PodSelector.MatchLabels) == 0 && len(np.Spec.PodSelector.MatchExpressions) == 0 &&
			len(np.Spec.Ingress) == 0 && len(np.Spec.Egress) == 0 &&
			slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) && slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
			denyAll = true
		}
	}
	if !denyAll {
		t.Error("no default-deny NetworkPolicy (empty selector, no rules, Ingress and Egress)")
	}
	for _, o := range objs {
		d, ok := o.obj.(*appsv1.Deployment)
		if !ok {
			continue
		}
		podLabels := d.Spec.Template.Labels
		if d.Spec.Replicas != nil && *d.Spec.Replicas > 1 {
			covered := false
			for _, p := range pdbs {
				covered = covered || selects(t, p.Spec.Selector, podLabels)
			}
			if !covered {
				t.Errorf("%s: Deployment %s has no PodDisruptionBudget", o.where, d.Name)
			}
		}
		ingress := false
		for _, np := range nps {
			if len(np.Spec.Ingress) > 0 && selects(t, &np.Spec.PodSelector, podLabels) {
				ingress = true
			}
		}
		if !ingress {
			t.Errorf("%s: nothing may reach Deployment %s (no ingress NetworkPolicy selects it)", o.where, d.Name)
		}
	}
}

// The gateway, and only the gateway, is behind the Ingress.
func TestIngressReachesOnlyTheGateway(t *testing.T) {
	found := false
	for _, o := range decodeAll(t) {
		in, ok := o.obj.(*networkingv1.Ingress)
		if !ok {
			continue
		}
		found = true
		for _, r := range in.Spec.Rules {
			for _, p := range r.HTTP.Paths {
				if p.Backend.Service == nil || p.Backend.Service.Name != "gateway" {
					t.Errorf("%s: Ingress %s routes to %+v", o.where, in.Name, p.Backend)
				}
			}
		}
	}
	if !found {
		t.Error("no Ingress for the gateway")
	}
}
